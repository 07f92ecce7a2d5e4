//! [`EngineConfig`]: the engine-facing sections of a training config in one
//! value, and their semantic validation (ranges, `min_len ≤ max_len`, …),
//! which reports every invalid setting with its key path at once.

use std::fmt;

use super::{
    DataSection, LogSection, LossSection, ModelSection, OptimizerSection, PrecisionSection,
    ScheduleSection,
};

/// The most positions (examples × max_len) the built-in data may hold.
pub const MAX_DATA_POSITIONS: u64 = 100_000_000;

/// The most parameters the reference model may have.
pub const MAX_MODEL_PARAMS: u64 = 100_000_000;

/// The engine-facing sections of a training config. The composed
/// `TrainingConfig` provides these plus the plan.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineConfig {
    /// `[loss]`.
    pub loss: LossSection,
    /// `[precision]`.
    pub precision: PrecisionSection,
    /// `[optimizer]`.
    pub optimizer: OptimizerSection,
    /// `[schedule]`.
    pub schedule: ScheduleSection,
    /// `[data]`.
    pub data: DataSection,
    /// `[model]`.
    pub model: ModelSection,
    /// `[log]`.
    pub log: LogSection,
}

/// One invalid setting: its key path and what is wrong, with the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingError {
    /// Dotted key path, e.g. `"data.min_len"`.
    pub key: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.key, self.message)
    }
}

impl EngineConfig {
    /// Limits of the built-in synthetic data and reference model, checked
    /// when an engine is built on them (not by [`validate`](Self::validate):
    /// a config that describes a real campaign is valid even when it is too
    /// large to run here).
    pub fn builtin_limits(&self) -> Vec<SettingError> {
        let mut errors = Vec::new();
        let d = &self.data;
        let positions = d.examples.saturating_mul(d.max_len);
        if positions > MAX_DATA_POSITIONS {
            errors.push(SettingError {
                key: "data.examples",
                message:
                format!(
                    "{} examples × max_len {} = {positions} positions is over the built-in data's limit of {MAX_DATA_POSITIONS}; \
                     use fewer examples or a shorter max_len (a campaign-sized config is a plan to check with `accum validate` and `accum sheet`)",
                    d.examples, d.max_len
                ),
            });
        }
        let (v, h, f) = (d.vocab, self.model.hidden, self.model.ffn);
        let params = v
            .saturating_mul(h)
            .saturating_add(h.saturating_mul(f))
            .saturating_add(f.saturating_mul(v))
            .saturating_add(f)
            .saturating_add(v);
        if params > MAX_MODEL_PARAMS {
            errors.push(SettingError {
                key: "model.hidden",
                message:
                format!(
                    "vocab {v} × hidden {h} and ffn {f} make {params} parameters, over the reference model's limit of \
                     {MAX_MODEL_PARAMS}; use smaller dimensions"
                ),
            });
        }
        errors
    }

    /// Every semantic problem of the sections, not just the first.
    pub fn validate(&self) -> Vec<SettingError> {
        let mut errors = Vec::new();
        let mut bad = |key: &'static str, message: String| {
            errors.push(SettingError { key, message });
        };
        let d = &self.data;
        if d.examples == 0 {
            bad(
                "data.examples",
                "is 0; the data needs at least one example".into(),
            );
        }
        if d.min_len == 0 {
            bad(
                "data.min_len",
                "is 0; sequences need at least 1 token".into(),
            );
        }
        if d.max_len < d.min_len {
            bad(
                "data.max_len",
                format!(
                    "{} is below min_len {}; use max_len ≥ {}",
                    d.max_len, d.min_len, d.min_len
                ),
            );
        }
        if d.vocab < 2 || d.vocab > u64::from(u32::MAX) {
            bad(
                "data.vocab",
                format!("{} is out of range; use 2 ≤ vocab ≤ {}", d.vocab, u32::MAX),
            );
        }
        let ignore = self.loss.ignore_index;
        if ignore >= 0 && (ignore as u64) < d.vocab {
            bad(
                "loss.ignore_index",
                format!(
                    "{ignore} is a real token id (vocab {}); it would silently drop that token: use a negative value such as -100",
                    d.vocab
                ),
            );
        }
        if self.model.hidden == 0 {
            bad("model.hidden", "is 0; use at least 1".into());
        }
        if self.model.ffn == 0 {
            bad("model.ffn", "is 0; use at least 1".into());
        }
        let o = &self.optimizer;
        if !(o.lr.is_finite() && o.lr >= 0.0) {
            bad(
                "optimizer.lr",
                format!("{} must be a finite number ≥ 0", shown(o.lr)),
            );
        }
        for (i, beta) in o.betas.iter().enumerate() {
            if !(0.0..1.0).contains(beta) {
                bad(
                    "optimizer.betas",
                    format!(
                        "beta{} = {beta} must be in [0, 1), e.g. [0.9, 0.999]",
                        i + 1
                    ),
                );
            }
        }
        if !(o.eps.is_finite() && o.eps > 0.0) {
            bad(
                "optimizer.eps",
                format!("{} must be > 0, e.g. 1e-8", shown(o.eps)),
            );
        }
        if !(o.weight_decay.is_finite() && o.weight_decay >= 0.0) {
            bad(
                "optimizer.weight_decay",
                format!("{} must be ≥ 0", shown(o.weight_decay)),
            );
        }
        if !(o.momentum.is_finite() && (0.0..=1.0).contains(&o.momentum)) {
            bad(
                "optimizer.momentum",
                format!("{} must be in [0, 1]", shown(o.momentum)),
            );
        }
        if let Some(clip) = o.clip_norm
            && !(clip.is_finite() && clip > 0.0)
        {
            bad(
                "optimizer.clip_norm",
                format!("{} must be > 0; use 0 to disable clipping", shown(clip)),
            );
        }
        let s = &self.precision.loss_scale;
        // Below f32's smallest normal number the scale is rounded to zero or
        // loses its precision in the f32 weights it multiplies.
        if !(s.init.is_finite()
            && s.init >= f64::from(f32::MIN_POSITIVE)
            && s.init < f64::from(f32::MAX))
        {
            bad(
                "precision.loss_scale.init",
                format!(
                    "{} must be a positive f32 value from {:e} to {:e}, e.g. 65536",
                    shown(s.init),
                    f32::MIN_POSITIVE,
                    f32::MAX
                ),
            );
        }
        if !(s.growth_factor.is_finite() && s.growth_factor >= 1.0) {
            bad(
                "precision.loss_scale.growth_factor",
                format!("{} must be ≥ 1, e.g. 2", shown(s.growth_factor)),
            );
        }
        if !(s.backoff_factor > 0.0 && s.backoff_factor < 1.0) {
            bad(
                "precision.loss_scale.backoff_factor",
                format!("{} must be in (0, 1), e.g. 0.5", shown(s.backoff_factor)),
            );
        }
        if s.growth_interval == 0 {
            bad(
                "precision.loss_scale.growth_interval",
                "is 0; use at least 1 update, e.g. 2000".into(),
            );
        }
        if self.schedule.run_length().value() == 0 {
            bad(
                "schedule.total",
                "is 0; a run needs at least 1 update".into(),
            );
        }
        if self.log.every.value() == 0 {
            bad(
                "log.every",
                "is 0; use at least 1, e.g. \"1 update\"".into(),
            );
        }
        errors
    }
}

/// A setting's value as written in a config: `1e-45` rather than the 45
/// decimals `{}` gives very small and very large numbers.
fn shown(value: f64) -> String {
    if value != 0.0 && value.is_finite() && !(1e-4..1e15).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn values_are_shown_as_a_config_would_write_them() {
        assert_eq!(shown(1e-45), "1e-45");
        assert_eq!(shown(-2.5e20), "-2.5e20");
        assert_eq!(shown(0.5), "0.5");
        assert_eq!(shown(-3.0), "-3");
        assert_eq!(shown(0.0), "0");
        assert_eq!(shown(f64::NAN), "NaN");
    }
}
