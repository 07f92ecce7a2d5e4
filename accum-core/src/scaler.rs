//! Dynamic loss scaling (`accum::run::loss-scale`): a state machine any framework can use,
//! with PyTorch `GradScaler` semantics.
//!
//! The scale is constant during a group: multiply each microbatch's loss by
//! [`LossScaler::scale`] before its backward pass. After the group's last
//! contribution, unscale the full gradient (multiply by
//! [`LossScaler::inv_scale`]; [`LossScaler::unscale`] does it for a slice
//! and reports non-finite values) and check it. A non-finite gradient skips
//! the parameter change — an attempt, not an update. Then call
//! [`LossScaler::update`] once per attempt: after a non-finite attempt the
//! scale is multiplied by `backoff_factor`; after `growth_interval` clean
//! attempts in a row by `growth_factor`.
//!
//! As in PyTorch, the scale is held in f32: `update` computes the product in
//! f64 and stores it as f32, growth that would overflow f32 is not applied
//! (the streak still restarts), and the inverse scale is the f64 reciprocal
//! rounded to f32 (`torch/amp/grad_scaler.py`: `GradScaler.update`,
//! `GradScaler.unscale_`; the CPU kernel `_amp_update_scale_cpu_kernel` in
//! `aten/src/ATen/native/cpu/AmpGradScalerKernels.cpp`). A disabled scaler
//! keeps the scale at 1 and ignores updates.
//!
//! ```
//! use accum_core::scaler::{LossScaler, ScaleChange};
//! use accum_core::settings::LossScaleSettings;
//!
//! let mut scaler = LossScaler::dynamic(&LossScaleSettings { growth_interval: 2, ..Default::default() });
//! assert_eq!(scaler.scale(), 65536.0);
//! let mut grad = [65536.0_f32, f32::INFINITY];
//! assert!(!scaler.unscale(&mut grad)); // not finite: skip the optimizer step
//! assert_eq!(scaler.update(false), ScaleChange::BackedOff);
//! assert_eq!(scaler.scale(), 32768.0);
//! scaler.update(true);
//! assert_eq!(scaler.update(true), ScaleChange::Grew);
//! assert_eq!(scaler.scale(), 65536.0);
//! ```

use serde::{Deserialize, Serialize};

use crate::settings::{LossScaleSettings, PrecisionMode};

/// The largest finite fp16 value; a scaled gradient above it overflows.
#[cfg(feature = "engine")]
pub(crate) const FP16_MAX: f32 = 65504.0;

/// The loss scaler.
#[derive(Clone, Debug, PartialEq)]
pub struct LossScaler {
    enabled: bool,
    scale: f32,
    growth_factor: f64,
    backoff_factor: f64,
    growth_interval: u64,
    /// Clean attempts in a row since the last change (PyTorch's `_growth_tracker`).
    tracker: u64,
}

/// Where a [`LossScaler`] stands, to save with a checkpoint and give back
/// to [`LossScaler::restore`]: the scale and the clean streak (PyTorch's
/// `GradScaler.state_dict` holds the same two, `scale` and
/// `_growth_tracker`, beside its settings; `torch/amp/grad_scaler.py`).
/// The settings (factors and interval) are the caller's, as they are the
/// scaler's constructor's.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScalerState {
    /// The scale (an f32 value, written as f64 so that any reader keeps it exactly).
    pub scale: f64,
    /// Clean attempts in a row since the scale last changed.
    pub growth_tracker: u64,
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
        if mode.uses_loss_scaling() {
            LossScaler::dynamic(settings)
        } else {
            LossScaler::disabled()
        }
    }

    /// A dynamic scaler starting at `settings.init`. A `growth_interval` of
    /// 0 is taken as 1.
    pub fn dynamic(settings: &LossScaleSettings) -> LossScaler {
        LossScaler {
            enabled: true,
            scale: settings.init as f32,
            growth_factor: settings.growth_factor,
            backoff_factor: settings.backoff_factor,
            growth_interval: settings.growth_interval.max(1),
            tracker: 0,
        }
    }

    /// A scaler that keeps the scale at 1 (fp32, bf16).
    pub fn disabled() -> LossScaler {
        LossScaler {
            enabled: false,
            ..LossScaler::dynamic(&LossScaleSettings {
                init: 1.0,
                ..LossScaleSettings::default()
            })
        }
    }

    /// Whether the scale is dynamic.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The current scale (constant during a group); 1 when disabled.
    pub fn scale(&self) -> f64 {
        f64::from(self.scale)
    }

    /// `1 / scale`, computed in f64 and rounded to f32, as PyTorch's
    /// `unscale_` does.
    pub fn inv_scale(&self) -> f32 {
        (1.0 / f64::from(self.scale)) as f32
    }

    /// Clean attempts in a row since the scale last changed.
    pub fn growth_tracker(&self) -> u64 {
        self.tracker
    }

    /// Sets the scale by hand (PyTorch's `update(new_scale)`); the clean
    /// streak is kept. Ignored when disabled.
    pub fn set_scale(&mut self, scale: f64) {
        if self.enabled {
            self.scale = scale as f32;
        }
    }

    /// Where the scaler stands: its scale and clean streak, for a
    /// checkpoint.
    pub fn state(&self) -> ScalerState {
        ScalerState {
            scale: f64::from(self.scale),
            growth_tracker: self.tracker,
        }
    }

    /// Sets the scale and the clean streak back to `state`, as a resumed
    /// run continues the saved one: without the streak, a run resumed
    /// `k` clean attempts after the last change grows its scale `k`
    /// attempts later than the uninterrupted run. A disabled scaler keeps
    /// its scale of 1, as [`set_scale`](Self::set_scale) does.
    pub fn restore(&mut self, state: ScalerState) {
        if self.enabled {
            self.scale = state.scale as f32;
            self.tracker = state.growth_tracker;
        }
    }

    /// Unscales `grads` in place (`× inv_scale`, skipped when it is 1) and
    /// returns whether every value was finite before unscaling. Call it on
    /// the full gradient, after the group's reduction (`accum::run::group`, `accum::run::loss-scale`).
    pub fn unscale(&self, grads: &mut [f32]) -> bool {
        let inv = self.inv_scale();
        let mut finite = true;
        for g in grads {
            finite &= g.is_finite();
            if inv != 1.0 {
                *g *= inv;
            }
        }
        finite
    }

    /// Updates the scale after an attempt: `finite` is false when the attempt
    /// was skipped for non-finite gradients. Once per attempt, after the
    /// optimizer step (or its skip).
    pub fn update(&mut self, finite: bool) -> ScaleChange {
        if !self.enabled {
            return ScaleChange::Kept;
        }
        if !finite {
            self.scale = (f64::from(self.scale) * self.backoff_factor) as f32;
            self.tracker = 0;
            return ScaleChange::BackedOff;
        }
        // The tracker counts this clean attempt before the comparison.
        let successful = self.tracker + 1;
        if successful < self.growth_interval {
            self.tracker = successful;
            return ScaleChange::Kept;
        }
        self.tracker = 0;
        let grown = (f64::from(self.scale) * self.growth_factor) as f32;
        // Never grow past f32's range to infinity.
        if grown.is_finite() {
            self.scale = grown;
            ScaleChange::Grew
        } else {
            ScaleChange::Kept
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(init: f64, growth_interval: u64) -> LossScaleSettings {
        LossScaleSettings {
            init,
            growth_factor: 2.0,
            backoff_factor: 0.5,
            growth_interval,
        }
    }

    /// Replays a sequence of attempts (true = finite) and records the scale
    /// and tracker after each.
    fn replay(scaler: &mut LossScaler, attempts: &[bool]) -> Vec<(f64, u64)> {
        attempts
            .iter()
            .map(|&finite| {
                scaler.update(finite);
                (scaler.scale(), scaler.growth_tracker())
            })
            .collect()
    }

    #[test]
    fn backoff_and_growth() {
        let mut s = LossScaler::new(PrecisionMode::Fp16, &settings(1024.0, 3));
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
    fn sequences_follow_the_growth_tracker() {
        let mut s = LossScaler::dynamic(&settings(8.0, 2));
        let got = replay(
            &mut s,
            &[true, true, true, false, false, true, true, true, true],
        );
        assert_eq!(
            got,
            [
                (8.0, 1),
                (16.0, 0),
                (16.0, 1),
                (8.0, 0),
                (4.0, 0),
                (4.0, 1),
                (8.0, 0),
                (8.0, 1),
                (16.0, 0),
            ]
        );
        // An interval of 1 grows after every clean attempt.
        let mut s = LossScaler::dynamic(&settings(1.0, 1));
        assert_eq!(
            replay(&mut s, &[true, true, false, true]),
            [(2.0, 0), (4.0, 0), (2.0, 0), (4.0, 0)]
        );
    }

    #[test]
    fn the_scale_is_f32_and_never_grows_to_infinity() {
        // 65536 × 1.1 rounds to the nearest f32, as PyTorch's float tensor does.
        let mut s = LossScaler::dynamic(&LossScaleSettings {
            growth_factor: 1.1,
            growth_interval: 1,
            ..LossScaleSettings::default()
        });
        s.update(true);
        assert_eq!(s.scale(), f64::from((65536.0_f64 * 1.1) as f32));
        assert_ne!(s.scale(), 65536.0 * 1.1);
        // At the top of f32's range the growth is not applied, but the
        // streak restarts.
        let mut s = LossScaler::dynamic(&settings(f64::from(f32::MAX) / 1.5, 2));
        let top = s.scale();
        assert_eq!(s.update(true), ScaleChange::Kept);
        assert_eq!(s.update(true), ScaleChange::Kept);
        assert_eq!((s.scale(), s.growth_tracker()), (top, 0));
    }

    #[test]
    fn unscale_reports_non_finite_values_and_divides_by_the_scale() {
        let s = LossScaler::dynamic(&settings(4.0, 10));
        assert_eq!(s.inv_scale(), 0.25);
        let mut g = [4.0, -8.0, 2.0];
        assert!(s.unscale(&mut g));
        assert_eq!(g, [1.0, -2.0, 0.5]);
        let mut g = [4.0, f32::NAN];
        assert!(!s.unscale(&mut g));
        assert_eq!(g[0], 1.0);
        // The reciprocal of 3 in f64, rounded once to f32.
        let s = LossScaler::dynamic(&settings(3.0, 10));
        assert_eq!(s.inv_scale(), (1.0_f64 / 3.0) as f32);
    }

    #[test]
    fn set_scale_keeps_the_streak() {
        let mut s = LossScaler::dynamic(&settings(8.0, 3));
        s.update(true);
        s.set_scale(100.0);
        assert_eq!((s.scale(), s.growth_tracker()), (100.0, 1));
        s.update(true);
        assert_eq!(s.update(true), ScaleChange::Grew);
        assert_eq!(s.scale(), 200.0);
    }

    #[test]
    fn a_restored_scaler_keeps_the_scale_and_the_streak() {
        let mut s = LossScaler::dynamic(&LossScaleSettings {
            growth_factor: 1.1,
            ..settings(1024.0, 3)
        });
        s.update(true);
        s.update(true);
        s.update(true);
        s.update(true);
        let state = s.state();
        let text = serde_json::to_string(&state).expect("a state serializes");
        let mut back = LossScaler::dynamic(&settings(1024.0, 3));
        back.restore(serde_json::from_str(&text).expect("a state reads back"));
        assert_eq!(back.scale(), s.scale(), "the f32 scale, exactly");
        assert_eq!(back.growth_tracker(), 1);
        // The streak carries over: one more clean attempt each and both grow
        // on the same one.
        assert_eq!(back.update(true), s.update(true));
        assert_eq!(back.update(true), ScaleChange::Grew);
        assert_eq!(s.update(true), ScaleChange::Grew);
        // A disabled scaler stays at 1.
        let mut off = LossScaler::disabled();
        off.restore(state);
        assert_eq!((off.scale(), off.growth_tracker()), (1.0, 0));
    }

    #[test]
    fn fp32_and_bf16_do_not_scale() {
        for mode in [PrecisionMode::Fp32, PrecisionMode::Bf16] {
            let mut s = LossScaler::new(mode, &LossScaleSettings::default());
            assert!(!s.enabled());
            assert_eq!(s.scale(), 1.0);
            assert_eq!(s.update(false), ScaleChange::Kept);
            s.set_scale(8.0);
            assert_eq!(s.scale(), 1.0);
            let mut g = [3.0, f32::INFINITY];
            assert!(!s.unscale(&mut g), "a disabled scaler still checks");
            assert_eq!(g[0], 3.0);
        }
    }
}
