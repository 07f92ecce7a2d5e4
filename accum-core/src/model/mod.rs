//! The [`Model`] trait the engine trains, the [`Team`] of threads one
//! replica may use, and the reference model [`TokenMlp`] (in `mlp.rs`) with
//! a hand-written backward pass.
//!
//! `forward_backward` *adds* into gradient buffers the engine owns (`accum::run::zeroing`: the
//! engine alone decides when they are zeroed) and weights every supervised
//! token by what [`GradScale`] says: the group's global denominator, fixed
//! before the first backward pass (`accum::run::normalization`, `accum::run::group`), times the loss scale (`accum::run::loss-scale`). It
//! returns the sums it evaluated ([`LossSums`]), so the engine can check that
//! the normalization happened exactly once.
//!
//! `TokenMlp`, exactly: `x = embed[tok]` (V×H), `h = tanh(x·w1 + b1)` (H×F),
//! `logits = h·w2 + b2` (F×V), cross-entropy per token against its label;
//! positions whose label is the ignore index contribute nothing. Because
//! every position is independent, the model packs the supervised positions of
//! a microbatch into one dense `[n, H]` matrix and never computes on padding
//! or ignored positions. Activation buffers live in a per-replica
//! [`Model::Workspace`], sized once and reused, so the hot loop does not
//! allocate.

use crate::data::PackedMicrobatch;
use crate::settings::Normalization;
use crate::tensor::Tensors;

mod mlp;
mod split;

#[cfg(test)]
pub(crate) use mlp::TOKEN_MLP_PARAMS;
pub use mlp::{MlpWorkspace, TokenMlp};

/// How one microbatch weights its token losses: the group's normalization
/// and global denominator (`accum::run::normalization`) and the loss scale (`accum::run::loss-scale`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradScale {
    /// The normalization mode.
    pub normalization: Normalization,
    /// Supervised tokens of the whole group (`per_token`), examples of the
    /// whole group (`per_example`) or 1 (`sum`), over all microbatches and
    /// replicas. Fixed before the group's first backward pass (`accum::run::group`).
    pub denominator: f64,
    /// The loss scale multiplied into every gradient (1 unless fp16, `accum::run::loss-scale`).
    pub loss_scale: f32,
    /// Labels equal to this value are not supervised.
    pub ignore_index: i64,
}

impl GradScale {
    /// The gradient weight of one supervised token of an example with
    /// `supervised` supervised tokens, loss scale included.
    #[inline]
    pub fn token_weight(&self, supervised: usize) -> f32 {
        let w = match self.normalization {
            // `accum::run::normalization`: per-token mean over the whole group's supervised tokens.
            Normalization::PerToken => 1.0 / self.denominator,
            // `accum::run::normalization`: each example's mean, divided by the group's examples.
            Normalization::PerExample => 1.0 / (self.denominator * supervised.max(1) as f64),
            Normalization::Sum => 1.0 / self.denominator,
        };
        (w * f64::from(self.loss_scale)) as f32
    }
}

/// What one `forward_backward` call evaluated.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossSums {
    /// Sum of token cross-entropies, unweighted.
    pub token_loss: f64,
    /// Sum over examples of each example's mean token loss.
    pub example_mean_loss: f64,
    /// This microbatch's share of the group's normalized loss (weights
    /// applied, loss scale removed).
    pub objective: f64,
    /// Sum of the token weights, loss scale removed: over a whole group this
    /// is 1 for `per_token` and `per_example` (normalization happened exactly
    /// once, `accum::run::normalization`), and the token count for `sum`.
    pub weight: f64,
    /// Supervised tokens evaluated.
    pub tokens: u64,
    /// Examples with at least one supervised token.
    pub examples: u64,
    /// Bytes of activations this call kept live between its forward and
    /// backward passes.
    pub activation_bytes: usize,
}

impl LossSums {
    /// Adds another microbatch's sums.
    pub fn add(&mut self, other: &LossSums) {
        self.token_loss += other.token_loss;
        self.example_mean_loss += other.example_mean_loss;
        self.objective += other.objective;
        self.weight += other.weight;
        self.tokens += other.tokens;
        self.examples += other.examples;
        self.activation_bytes = self.activation_bytes.max(other.activation_bytes);
    }
}

/// A model the engine can train: named parameters and a fused forward and
/// backward pass that adds into existing gradient buffers.
pub trait Model: Send + Sync {
    /// Per-replica scratch memory (activations), reused across microbatches.
    type Workspace: Send;

    /// A short machine name for manifests (`"token_mlp"`).
    fn kind(&self) -> &'static str;

    /// The parameters, as named tensors.
    fn params(&self) -> &Tensors;

    /// The parameters, mutably (the optimizer updates them in place).
    fn params_mut(&mut self) -> &mut Tensors;

    /// A workspace for microbatches of up to `max_positions` positions.
    fn workspace(&self, max_positions: usize) -> Self::Workspace;

    /// Bytes the workspace holds (counted as activation memory, `accum::run::memory`).
    fn workspace_bytes(&self, workspace: &Self::Workspace) -> usize;

    /// Bytes a workspace needs per position, to check a plan fits before
    /// allocating (0 when unknown).
    fn workspace_bytes_per_position(&self) -> usize {
        0
    }

    /// Forward and backward on `batch`: adds `Σ w_t ∇ℓ_t` into `grads`
    /// (which must have the layout of [`Model::params`]) and returns what it
    /// evaluated. Never zeroes `grads`.
    ///
    /// The returned [`LossSums::weight`] must be the sum of the weights the
    /// model gave its supervised tokens ([`GradScale::token_weight`], loss
    /// scale removed): the engine checks with it that the loss was
    /// normalized exactly once (`accum::run::normalization`), and refuses a group whose model
    /// evaluated tokens but reported no weight.
    fn forward_backward(
        &self,
        batch: &PackedMicrobatch,
        scale: &GradScale,
        grads: &mut Tensors,
        workspace: &mut Self::Workspace,
    ) -> LossSums;

    /// [`Model::forward_backward`] with `team`'s threads available. The
    /// engine calls this one; the default ignores the team and runs on one
    /// thread. A model that splits its work should make the result
    /// independent of [`Team::threads`] where it can (the reference model
    /// does, bit for bit).
    fn forward_backward_team(
        &self,
        batch: &PackedMicrobatch,
        scale: &GradScale,
        grads: &mut Tensors,
        workspace: &mut Self::Workspace,
        team: &Team,
    ) -> LossSums {
        let _ = team;
        self.forward_backward(batch, scale, grads, workspace)
    }

    /// Model dimensions for manifests and reports.
    fn describe(&self) -> serde_json::Value;

    /// Floating-point operations per supervised token for forward + backward
    /// (for utilization figures), if known.
    fn flops_per_token(&self) -> Option<u64> {
        None
    }
}

/// The threads one replica may use inside a microbatch (intra-replica
/// parallelism). The engine runs every replica inside its own thread pool,
/// so [`Team::join`] and rayon's parallel iterators called from
/// [`Model::forward_backward_team`] run on the engine's threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Team {
    threads: usize,
}

impl Team {
    /// One thread: everything runs on the caller.
    pub const fn single() -> Team {
        Team { threads: 1 }
    }

    /// A team of `threads` threads (at least 1), for the engine.
    pub(crate) fn new(threads: usize) -> Team {
        Team {
            threads: threads.max(1),
        }
    }

    /// How many parts to split the work into.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `a` and `b`, in parallel when the team has more than one thread.
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        if self.threads > 1 {
            rayon::join(a, b)
        } else {
            (a(), b())
        }
    }
}

impl Default for Team {
    fn default() -> Self {
        Team::single()
    }
}
