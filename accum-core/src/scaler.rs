//! Dynamic loss scaling (SPEC R7), PyTorch `GradScaler` semantics.
//!
//! The scale is constant during a group. After the group's attempt: a
//! non-finite (or, for simulated fp16, out-of-range) gradient skips the
//! parameter change and multiplies the scale by `backoff_factor`; after
//! `growth_interval` clean updates in a row it is multiplied by
//! `growth_factor`. Modes without loss scaling keep the scale at 1.

use crate::settings::{LossScaleSettings, PrecisionMode};

/// The largest finite fp16 value; a scaled gradient above it overflows.
pub const FP16_MAX: f32 = 65504.0;

/// The loss scaler.
#[derive(Clone, Debug, PartialEq)]
pub struct LossScaler {
    enabled: bool,
    scale: f64,
    growth_factor: f64,
    backoff_factor: f64,
    growth_interval: u64,
    clean: u64,
}

/// What the scaler did after an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleChange {
    /// Unchanged.
    Kept,
    /// Grown after `growth_interval` clean updates.
    Grew,
    /// Backed off after a non-finite attempt.
    BackedOff,
}

impl LossScaler {
    /// A scaler for `mode`: dynamic for fp16, fixed at 1 otherwise.
    pub fn new(mode: PrecisionMode, settings: &LossScaleSettings) -> LossScaler {
        let enabled = mode.uses_loss_scaling();
        LossScaler {
            enabled,
            scale: if enabled { settings.init } else { 1.0 },
            growth_factor: settings.growth_factor,
            backoff_factor: settings.backoff_factor,
            growth_interval: settings.growth_interval.max(1),
            clean: 0,
        }
    }

    /// Whether the scale is dynamic.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The current scale (constant during a group).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Updates the scale after an attempt: `finite` is false when the attempt
    /// was skipped for non-finite gradients.
    pub fn update(&mut self, finite: bool) -> ScaleChange {
        if !self.enabled {
            return ScaleChange::Kept;
        }
        if !finite {
            self.scale *= self.backoff_factor;
            self.clean = 0;
            return ScaleChange::BackedOff;
        }
        self.clean += 1;
        if self.clean >= self.growth_interval {
            self.clean = 0;
            let grown = self.scale * self.growth_factor;
            // f32 compute: never grow past what f32 can hold.
            if grown.is_finite() && grown < f64::from(f32::MAX) {
                self.scale = grown;
                return ScaleChange::Grew;
            }
        }
        ScaleChange::Kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r7_backoff_and_growth() {
        let settings = LossScaleSettings {
            init: 1024.0,
            growth_factor: 2.0,
            backoff_factor: 0.5,
            growth_interval: 3,
        };
        let mut s = LossScaler::new(PrecisionMode::Fp16, &settings);
        assert_eq!(s.scale(), 1024.0);
        assert_eq!(s.update(false), ScaleChange::BackedOff);
        assert_eq!(s.scale(), 512.0);
        assert_eq!(s.update(true), ScaleChange::Kept);
        assert_eq!(s.update(true), ScaleChange::Kept);
        assert_eq!(s.update(true), ScaleChange::Grew);
        assert_eq!(s.scale(), 1024.0);
        // An overflow resets the clean streak.
        s.update(true);
        s.update(true);
        s.update(false);
        assert_eq!(s.scale(), 512.0);
        s.update(true);
        s.update(true);
        assert_eq!(s.scale(), 512.0);
    }

    #[test]
    fn fp32_and_bf16_do_not_scale() {
        for mode in [PrecisionMode::Fp32, PrecisionMode::Bf16] {
            let mut s = LossScaler::new(mode, &LossScaleSettings::default());
            assert!(!s.enabled());
            assert_eq!(s.scale(), 1.0);
            assert_eq!(s.update(false), ScaleChange::Kept);
            assert_eq!(s.scale(), 1.0);
        }
    }
}
