//! Back-of-the-envelope estimates next to the plan: per-device memory
//! (`accum::run::memory`) and data-parallel throughput scaling (`accum::calc::scaling`), plus the byte-size
//! parser they share with memory budgets.
//!
//! These are estimates from declared inputs, not measurements: the engine's
//! memory accounting (`accum::run::memory`) measures what a run really holds.
//!
//! ```
//! use accum_core::estimate::{ByteSize, MemoryInputs, OptimizerState};
//!
//! let inputs = MemoryInputs {
//!     params: 1_000_000,
//!     weight_bytes: 4,
//!     optimizer: OptimizerState::Moments,
//!     master_weights: false,
//!     activation_per_example: "2MiB".parse::<ByteSize>()?,
//! };
//! let estimate = inputs.estimate(8)?;
//! assert_eq!(estimate.weights.get(), 4_000_000);
//! assert_eq!(estimate.optimizer_state.get(), 8_000_000);
//! assert_eq!(estimate.activations.get(), 8 * 2 * 1024 * 1024);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::plan::{Plan, PlanError};
use crate::settings::{OptimizerKind, OptimizerSection};

/// A number of bytes, parsed from `"512MiB"`, `"1.5GB"`, `"2e9"` or `"1024"`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct ByteSize(u64);

impl ByteSize {
    /// `bytes` bytes.
    #[inline]
    pub const fn new(bytes: u64) -> ByteSize {
        ByteSize(bytes)
    }

    /// The number of bytes.
    #[inline]
    pub const fn get(self) -> u64 {
        self.0
    }
}

/// A byte size could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteSizeError {
    text: String,
    reason: &'static str,
}

impl fmt::Display for ByteSizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a byte size ({}); write e.g. \"512MiB\", \"1.5GB\", \"24GiB\" or a number of bytes",
            self.text, self.reason
        )
    }
}

impl std::error::Error for ByteSizeError {}

impl FromStr for ByteSize {
    type Err = ByteSizeError;

    fn from_str(text: &str) -> Result<ByteSize, ByteSizeError> {
        let err = |reason| ByteSizeError {
            text: text.to_owned(),
            reason,
        };
        let trimmed = text.trim();
        let split = trimmed
            .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
            .unwrap_or(trimmed.len());
        let (number, unit) = trimmed.split_at(split);
        let number = number.trim();
        let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1.0,
            "k" | "kb" => 1e3,
            "m" | "mb" => 1e6,
            "g" | "gb" => 1e9,
            "t" | "tb" => 1e12,
            "ki" | "kib" => 1024.0,
            "mi" | "mib" => 1024.0 * 1024.0,
            "gi" | "gib" => 1024.0 * 1024.0 * 1024.0,
            "ti" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
            _ => return Err(err("unknown unit")),
        };
        if number.is_empty() {
            return Err(err("no number"));
        }
        let value: f64 = number.parse().map_err(|_| err("not a number"))?;
        let bytes = value * scale;
        if !bytes.is_finite() || bytes < 0.0 {
            return Err(err("must be a finite, non-negative amount"));
        }
        if bytes >= u64::MAX as f64 {
            return Err(err("too large"));
        }
        // Sizes are estimates: rounding a fractional byte is harmless.
        Ok(ByteSize(bytes.round() as u64))
    }
}

impl fmt::Display for ByteSize {
    /// Binary units with two decimals: `"1.50 GiB"`, `"512 B"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut value = self.0 as f64;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        if unit == 0 {
            write!(f, "{} B", self.0)
        } else {
            write!(f, "{value:.2} {}", UNITS[unit])
        }
    }
}

/// The state an optimizer keeps per parameter, which is what a memory
/// estimate counts: not which optimizer runs ([`OptimizerKind`] says that),
/// since SGD keeps a momentum buffer only when its momentum is not 0.
///
/// The serialized names are those of the optimizers that keep each state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OptimizerState {
    /// Adam's two fp32 moments per parameter (8 bytes), as AdamW keeps.
    #[default]
    #[serde(rename = "adam_w")]
    Moments,
    /// One fp32 momentum buffer per parameter (4 bytes), as SGD with
    /// momentum keeps.
    #[serde(rename = "sgd_momentum")]
    Momentum,
    /// No state, as SGD without momentum keeps.
    #[serde(rename = "sgd")]
    Stateless,
}

impl OptimizerState {
    /// The state of the optimizer a config section describes: AdamW keeps
    /// its moments; SGD a momentum buffer unless its momentum is 0, when the
    /// engine's SGD allocates none (`crate::optim::Sgd`).
    pub fn of(section: &OptimizerSection) -> OptimizerState {
        match section.kind {
            OptimizerKind::AdamW => OptimizerState::Moments,
            OptimizerKind::Sgd if section.momentum > 0.0 => OptimizerState::Momentum,
            OptimizerKind::Sgd => OptimizerState::Stateless,
        }
    }

    /// Optimizer-state bytes per parameter.
    pub const fn state_bytes_per_param(self) -> u64 {
        match self {
            OptimizerState::Moments => 8,
            OptimizerState::Momentum => 4,
            OptimizerState::Stateless => 0,
        }
    }
}

/// What a per-device memory estimate needs (`accum::run::memory`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryInputs {
    /// Parameters held by one device.
    pub params: u64,
    /// Bytes per weight (4 for fp32, 2 for bf16/fp16); gradients use the same.
    pub weight_bytes: u64,
    /// The optimizer's state per parameter.
    pub optimizer: OptimizerState,
    /// Whether an fp32 master copy of the weights is kept (mixed precision).
    pub master_weights: bool,
    /// Activation memory one example needs during its forward and backward pass.
    pub activation_per_example: ByteSize,
}

/// A per-device memory estimate, by component (`accum::run::memory`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryEstimate {
    /// Weights (and the fp32 master copy, if any).
    pub weights: ByteSize,
    /// Gradient buffers (the accumulation target).
    pub gradients: ByteSize,
    /// Optimizer state.
    pub optimizer_state: ByteSize,
    /// Activations of one microbatch: `activation_per_example × m`.
    pub activations: ByteSize,
    /// The sum.
    pub total: ByteSize,
}

impl MemoryInputs {
    /// Per-device memory at micro-batch `m`. Accumulation steps do not
    /// appear: accumulation changes the batch, not the activation memory.
    pub fn estimate(&self, micro_batch: u64) -> Result<MemoryEstimate, PlanError> {
        let mul = |a: u64, b: u64, what: &str| {
            a.checked_mul(b).ok_or_else(|| PlanError::Overflow {
                equation: format!("{what}: {a} × {b} bytes"),
            })
        };
        let mut weights = mul(self.params, self.weight_bytes, "weights")?;
        if self.master_weights {
            weights = weights
                .checked_add(mul(self.params, 4, "master weights")?)
                .ok_or_else(|| PlanError::Overflow {
                    equation: "weights + master weights".into(),
                })?;
        }
        let gradients = mul(self.params, self.weight_bytes, "gradients")?;
        let state = mul(
            self.params,
            self.optimizer.state_bytes_per_param(),
            "optimizer state",
        )?;
        let activations = mul(
            self.activation_per_example.get(),
            micro_batch,
            "activations",
        )?;
        let total = [weights, gradients, state, activations]
            .into_iter()
            .try_fold(0u64, u64::checked_add)
            .ok_or_else(|| PlanError::Overflow {
                equation: "weights + gradients + optimizer state + activations".into(),
            })?;
        Ok(MemoryEstimate {
            weights: ByteSize(weights),
            gradients: ByteSize(gradients),
            optimizer_state: ByteSize(state),
            activations: ByteSize(activations),
            total: ByteSize(total),
        })
    }

    /// The largest micro-batch whose estimate fits in `budget`, or `None`
    /// when weights, gradients and optimizer state alone exceed it — then
    /// accumulation alone cannot help (`accum::run::memory`).
    pub fn max_micro_batch(&self, budget: ByteSize) -> Result<Option<u64>, PlanError> {
        let fixed = self.estimate(0)?.total.get();
        if fixed >= budget.get() {
            return Ok(None);
        }
        let per = self.activation_per_example.get();
        if per == 0 {
            return Ok(Some(u64::MAX));
        }
        let m = (budget.get() - fixed) / per;
        Ok((m > 0).then_some(m))
    }
}

/// What a data-parallel scaling estimate needs (`accum::calc::scaling`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScalingInputs {
    /// Examples per second one device processes (forward and backward) at micro-batch `m`.
    pub device_examples_per_sec: f64,
    /// Bytes of gradients reduced once per update.
    pub gradient_bytes: ByteSize,
    /// All-reduce bus bandwidth in bytes per second.
    pub bandwidth_bytes_per_sec: f64,
}

/// Throughput of a plan at one replica count (`accum::calc::scaling`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ScalingPoint {
    /// Data-parallel replicas.
    pub replicas: u64,
    /// Effective batch at this replica count.
    pub effective_batch: u64,
    /// Compute seconds per update (A microbatches on each replica, in parallel).
    pub compute_sec: f64,
    /// Communication seconds per update: one ring all-reduce of the gradients.
    pub comm_sec: f64,
    /// Examples per second over all replicas.
    pub examples_per_sec: f64,
    /// Throughput ÷ (replicas × single-device throughput).
    pub efficiency: f64,
}

impl ScalingInputs {
    /// Throughput for `replicas` replicas of the plan's `m` and `A`. The
    /// gradients are reduced once per update, not per microbatch (`accum::calc::scaling`):
    /// a ring all-reduce moves `2·(D−1)/D` of the gradient bytes.
    pub fn at(&self, plan: &Plan, replicas: u64) -> ScalingPoint {
        let per_replica = (plan.micro_batch() * plan.accumulation()) as f64;
        let compute_sec = per_replica / self.device_examples_per_sec;
        let d = replicas.max(1) as f64;
        let comm_sec = if replicas > 1 {
            2.0 * (d - 1.0) / d * self.gradient_bytes.get() as f64 / self.bandwidth_bytes_per_sec
        } else {
            0.0
        };
        let examples_per_sec = per_replica * d / (compute_sec + comm_sec);
        ScalingPoint {
            replicas,
            effective_batch: plan
                .micro_batch()
                .saturating_mul(plan.accumulation())
                .saturating_mul(replicas),
            compute_sec,
            comm_sec,
            examples_per_sec,
            efficiency: examples_per_sec / (d * self.device_examples_per_sec),
        }
    }

    /// Points for 1, 2, 4, … up to and including `max_replicas`.
    pub fn curve(&self, plan: &Plan, max_replicas: u64) -> Vec<ScalingPoint> {
        let mut points = Vec::new();
        let mut d = 1u64;
        while d < max_replicas {
            points.push(self.at(plan, d));
            d = d.saturating_mul(2);
        }
        points.push(self.at(plan, max_replicas.max(1)));
        points
    }
}

#[cfg(test)]
#[cfg(feature = "engine")]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes() {
        let cases = [
            ("1024", 1024),
            ("512MiB", 512 << 20),
            ("1.5GiB", 3 << 29),
            ("1.5GB", 1_500_000_000),
            ("2e9", 2_000_000_000),
            ("24 GiB", 24 << 30),
            ("4k", 4000),
            ("0", 0),
        ];
        for (text, bytes) in cases {
            assert_eq!(
                text.parse::<ByteSize>().map(ByteSize::get),
                Ok(bytes),
                "{text}"
            );
        }
        for bad in ["", "GiB", "-1GiB", "1 parsec", "nan", "inf", "1e400"] {
            assert!(bad.parse::<ByteSize>().is_err(), "{bad}");
        }
        assert_eq!(ByteSize::new(3 << 29).to_string(), "1.50 GiB");
        assert_eq!(ByteSize::new(512).to_string(), "512 B");
    }

    #[test]
    fn memory_estimate_and_accumulation_independence() {
        let inputs = MemoryInputs {
            params: 1_000,
            weight_bytes: 2,
            optimizer: OptimizerState::Moments,
            master_weights: true,
            activation_per_example: ByteSize::new(100),
        };
        let e = inputs.estimate(4).expect("fits");
        assert_eq!(e.weights.get(), 2_000 + 4_000);
        assert_eq!(e.gradients.get(), 2_000);
        assert_eq!(e.optimizer_state.get(), 8_000);
        assert_eq!(e.activations.get(), 400);
        assert_eq!(e.total.get(), 16_400);
        // The budget leaves room for 36 examples after the fixed 16,000 bytes.
        assert_eq!(inputs.max_micro_batch(ByteSize::new(19_650)), Ok(Some(36)));
        // Weights and state alone exceed the budget: accumulation cannot help (`accum::run::memory`).
        assert_eq!(inputs.max_micro_batch(ByteSize::new(15_000)), Ok(None));
        let huge = MemoryInputs {
            params: u64::MAX,
            ..inputs
        };
        assert!(huge.estimate(1).is_err());
    }

    /// The state an estimate counts for a config's optimizer is what the
    /// engine's optimizer holds after its first update, for every kind and
    /// with momentum on and off.
    #[test]
    fn optimizer_state_is_what_the_engine_allocates() {
        use crate::optim::Optimizer;
        use crate::tensor::Tensors;

        let tensors = || {
            Tensors::new(vec![
                ("w".to_owned(), ndarray::ArrayD::from_elem(vec![3, 2], 0.5)),
                ("b".to_owned(), ndarray::ArrayD::from_elem(vec![5], -0.25)),
            ])
        };
        let cases = [
            (OptimizerKind::AdamW, 0.9, OptimizerState::Moments),
            (OptimizerKind::AdamW, 0.0, OptimizerState::Moments),
            (OptimizerKind::Sgd, 0.9, OptimizerState::Momentum),
            (OptimizerKind::Sgd, 0.25, OptimizerState::Momentum),
            (OptimizerKind::Sgd, 0.0, OptimizerState::Stateless),
        ];
        for (kind, momentum, state) in cases {
            let section = OptimizerSection {
                kind,
                momentum,
                ..OptimizerSection::default()
            };
            assert_eq!(OptimizerState::of(&section), state, "{kind} {momentum}");
            let mut optimizer = Optimizer::from_section(&section);
            let (mut params, grads) = (tensors(), tensors());
            optimizer.step(&mut params, &grads, 1e-3);
            assert_eq!(
                optimizer.state_bytes() as u64,
                params.numel() as u64 * state.state_bytes_per_param(),
                "{kind} {momentum}"
            );
        }
    }

    /// The serialized names stay those of the optimizers that keep each state.
    #[test]
    fn optimizer_state_serializes_as_before() {
        for (state, name) in [
            (OptimizerState::Moments, "\"adam_w\""),
            (OptimizerState::Momentum, "\"sgd_momentum\""),
            (OptimizerState::Stateless, "\"sgd\""),
        ] {
            assert_eq!(serde_json::to_string(&state).expect("serializes"), name);
            assert_eq!(
                serde_json::from_str::<OptimizerState>(name).expect("parses"),
                state
            );
        }
    }

    #[test]
    fn one_reduction_per_update() {
        let plan = Plan::new(8, 4, 1).expect("valid");
        let inputs = ScalingInputs {
            device_examples_per_sec: 32.0,
            gradient_bytes: ByteSize::new(1_000_000_000),
            bandwidth_bytes_per_sec: 1e9,
        };
        let one = inputs.at(&plan, 1);
        assert_eq!(one.comm_sec, 0.0);
        assert!((one.compute_sec - 1.0).abs() < 1e-12);
        assert!((one.efficiency - 1.0).abs() < 1e-12);
        let two = inputs.at(&plan, 2);
        // 2·(2−1)/2 · 1 GB / 1 GB/s = 1 s of communication per update.
        assert!((two.comm_sec - 1.0).abs() < 1e-12);
        assert!((two.examples_per_sec - 32.0).abs() < 1e-9);
        assert!((two.efficiency - 0.5).abs() < 1e-12);
        // More accumulation amortizes the one reduction per update.
        let more = Plan::new(8, 16, 1).expect("valid");
        assert!(inputs.at(&more, 2).efficiency > two.efficiency);
        let curve = inputs.curve(&plan, 6);
        let ds: Vec<u64> = curve.iter().map(|p| p.replicas).collect();
        assert_eq!(ds, vec![1, 2, 4, 6]);
    }
}
