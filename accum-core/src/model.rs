//! The [`Model`] trait the engine trains, and the reference model
//! [`TokenMlp`] with a hand-written backward pass.
//!
//! `forward_backward` *adds* into gradient buffers the engine owns (R2: the
//! engine alone decides when they are zeroed) and weights every supervised
//! token by what [`GradScale`] says: the group's global denominator, fixed
//! before the first backward pass (R4, R5), times the loss scale (R7). It
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

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayD, ArrayView2, ArrayViewMut2, Ix2, IxDyn};

use crate::data::{Batch, Rng};
use crate::settings::Normalization;
use crate::tensor::{Tensors, fast_exp, fast_tanh, flat_mut, max_of, sum_of};

/// How one microbatch weights its token losses: the group's normalization
/// and global denominator (R4) and the loss scale (R7).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradScale {
    /// The normalization mode.
    pub normalization: Normalization,
    /// Supervised tokens of the whole group (`per_token`), examples of the
    /// whole group (`per_example`) or 1 (`sum`), over all microbatches and
    /// replicas. Fixed before the group's first backward pass (R5).
    pub denominator: f64,
    /// The loss scale multiplied into every gradient (1 unless fp16, R7).
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
            // R4: per-token mean over the whole group's supervised tokens.
            Normalization::PerToken => 1.0 / self.denominator,
            // R4: each example's mean, divided by the group's examples.
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
    /// once, R4), and the token count for `sum`.
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

    /// Bytes the workspace holds (counted as activation memory, R11).
    fn workspace_bytes(&self, workspace: &Self::Workspace) -> usize;

    /// Bytes a workspace needs per position, to check a plan fits before
    /// allocating (0 when unknown).
    fn workspace_bytes_per_position(&self) -> usize {
        0
    }

    /// Forward and backward on `batch`: adds `Σ w_t ∇ℓ_t` into `grads`
    /// (which must have the layout of [`Model::params`]) and returns what it
    /// evaluated. Never zeroes `grads`.
    fn forward_backward(
        &self,
        batch: &Batch,
        scale: &GradScale,
        grads: &mut Tensors,
        workspace: &mut Self::Workspace,
    ) -> LossSums;

    /// Model dimensions for manifests and reports.
    fn describe(&self) -> serde_json::Value;

    /// Floating-point operations per supervised token for forward + backward
    /// (for utilization figures), if known.
    fn flops_per_token(&self) -> Option<u64> {
        None
    }
}

/// The reference model: token embedding, one tanh layer, output projection.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenMlp {
    vocab: usize,
    hidden: usize,
    ffn: usize,
    params: Tensors,
}

/// Parameter names of [`TokenMlp`], in order.
pub const TOKEN_MLP_PARAMS: [&str; 5] = ["embed", "w1", "b1", "w2", "b2"];

impl TokenMlp {
    /// A model with `V = vocab`, `H = hidden`, `F = ffn`, initialized from
    /// `seed` like PyTorch's defaults: `embed ~ N(0, 1)`, linear weights and
    /// biases uniform in `±1/√fan_in`.
    pub fn new(vocab: usize, hidden: usize, ffn: usize, seed: u64) -> TokenMlp {
        let mut rng = Rng::new(seed, 7);
        let mut normal = |shape: &[usize]| {
            let n: usize = shape.iter().product();
            ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|_| rng.normal() as f32).collect())
                .expect("shape matches element count")
        };
        let embed = normal(&[vocab, hidden]);
        let mut rng = Rng::new(seed, 8);
        let mut uniform = |shape: &[usize], fan_in: usize| {
            let n: usize = shape.iter().product();
            let bound = 1.0 / (fan_in.max(1) as f64).sqrt();
            ArrayD::from_shape_vec(
                IxDyn(shape),
                (0..n)
                    .map(|_| ((rng.next_f64() * 2.0 - 1.0) * bound) as f32)
                    .collect(),
            )
            .expect("shape matches element count")
        };
        let w1 = uniform(&[hidden, ffn], hidden);
        let b1 = uniform(&[ffn], hidden);
        let w2 = uniform(&[ffn, vocab], ffn);
        let b2 = uniform(&[vocab], ffn);
        let params = Tensors::new(
            TOKEN_MLP_PARAMS
                .iter()
                .map(|s| (*s).to_owned())
                .zip([embed, w1, b1, w2, b2])
                .collect(),
        );
        TokenMlp {
            vocab,
            hidden,
            ffn,
            params,
        }
    }

    /// `V`.
    pub fn vocab(&self) -> usize {
        self.vocab
    }

    /// `H`.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// `F`.
    pub fn ffn(&self) -> usize {
        self.ffn
    }
}

/// Activation buffers of [`TokenMlp`] for up to `capacity` packed positions.
#[derive(Clone, Debug)]
pub struct MlpWorkspace {
    capacity: usize,
    /// `[n, H]`: gathered embeddings; later reused for `dx`.
    x: Vec<f32>,
    /// `[n, F]`: `tanh(x·w1 + b1)`.
    h: Vec<f32>,
    /// `[n, F]`: `dh`, then `dz`.
    dh: Vec<f32>,
    /// `[n, V]`: logits, then `dlogits`.
    logits: Vec<f32>,
    /// Packed input tokens, labels and weights.
    tok: Vec<usize>,
    lab: Vec<usize>,
    wt: Vec<f32>,
    /// Supervised positions of each packed example, in order.
    counts: Vec<usize>,
}

impl MlpWorkspace {
    fn new(capacity: usize, hidden: usize, ffn: usize, vocab: usize) -> MlpWorkspace {
        MlpWorkspace {
            capacity,
            x: vec![0.0; capacity * hidden],
            h: vec![0.0; capacity * ffn],
            dh: vec![0.0; capacity * ffn],
            logits: vec![0.0; capacity * vocab],
            tok: Vec::with_capacity(capacity),
            lab: Vec::with_capacity(capacity),
            wt: Vec::with_capacity(capacity),
            counts: Vec::with_capacity(capacity),
        }
    }

    fn bytes(&self) -> usize {
        (self.x.capacity() + self.h.capacity() + self.dh.capacity() + self.logits.capacity())
            * std::mem::size_of::<f32>()
            + (self.tok.capacity() + self.lab.capacity()) * std::mem::size_of::<usize>()
            + self.wt.capacity() * std::mem::size_of::<f32>()
            + self.counts.capacity() * std::mem::size_of::<usize>()
    }
}

fn view2(params: &Tensors, index: usize) -> ArrayView2<'_, f32> {
    params
        .value(index)
        .view()
        .into_dimensionality::<Ix2>()
        .expect("TokenMlp weight matrices are 2-D")
}

fn view2_mut(grads: &mut Tensors, index: usize) -> ArrayViewMut2<'_, f32> {
    grads
        .value_mut(index)
        .view_mut()
        .into_dimensionality::<Ix2>()
        .expect("TokenMlp weight matrices are 2-D")
}

fn mat(buf: &[f32], rows: usize, cols: usize) -> ArrayView2<'_, f32> {
    ArrayView2::from_shape((rows, cols), &buf[..rows * cols]).expect("buffer holds rows × cols")
}

fn mat_mut(buf: &mut [f32], rows: usize, cols: usize) -> ArrayViewMut2<'_, f32> {
    ArrayViewMut2::from_shape((rows, cols), &mut buf[..rows * cols])
        .expect("buffer holds rows × cols")
}

/// Adds the column sums of the `[rows, cols]` matrix in `src` to `dst`.
fn add_column_sums(dst: &mut [f32], src: &[f32], rows: usize, cols: usize) {
    for row in src[..rows * cols].chunks_exact(cols) {
        crate::tensor::accumulate(dst, row);
    }
}

impl Model for TokenMlp {
    type Workspace = MlpWorkspace;

    fn kind(&self) -> &'static str {
        "token_mlp"
    }

    fn params(&self) -> &Tensors {
        &self.params
    }

    fn params_mut(&mut self) -> &mut Tensors {
        &mut self.params
    }

    fn workspace(&self, max_positions: usize) -> MlpWorkspace {
        MlpWorkspace::new(max_positions, self.hidden, self.ffn, self.vocab)
    }

    fn workspace_bytes(&self, workspace: &MlpWorkspace) -> usize {
        workspace.bytes()
    }

    fn workspace_bytes_per_position(&self) -> usize {
        (2 * self.hidden + 2 * self.ffn + self.vocab) * std::mem::size_of::<f32>()
            + 3 * std::mem::size_of::<usize>()
            + std::mem::size_of::<f32>()
    }

    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": self.kind(),
            "vocab": self.vocab,
            "hidden": self.hidden,
            "ffn": self.ffn,
        })
    }

    fn flops_per_token(&self) -> Option<u64> {
        // Forward 2HF + 2FV; backward twice that (input and weight gradients).
        let (h, f, v) = (self.hidden as u64, self.ffn as u64, self.vocab as u64);
        Some(6 * h * f + 6 * f * v)
    }

    /// # Panics
    /// When a token id or a supervised label is not below `V`, or when the
    /// gradient layout differs from the parameters'.
    fn forward_backward(
        &self,
        batch: &Batch,
        scale: &GradScale,
        grads: &mut Tensors,
        ws: &mut MlpWorkspace,
    ) -> LossSums {
        let (hd, fd, vd) = (self.hidden, self.ffn, self.vocab);
        assert!(
            grads.same_layout(&self.params),
            "gradient buffers have the parameters' layout"
        );

        // Pack supervised positions only: padding and ignored labels are not work.
        ws.tok.clear();
        ws.lab.clear();
        ws.wt.clear();
        ws.counts.clear();
        let mut examples = 0u64;
        for i in 0..batch.examples() {
            let span = batch.span(i);
            let supervised = batch.labels[span.clone()]
                .iter()
                .filter(|&&l| l != scale.ignore_index)
                .count();
            if supervised == 0 {
                continue;
            }
            examples += 1;
            ws.counts.push(supervised);
            let w = scale.token_weight(supervised);
            for p in span {
                let label = batch.labels[p];
                if label == scale.ignore_index {
                    continue;
                }
                let tok = batch.tokens[p] as usize;
                let lab = usize::try_from(label).unwrap_or(usize::MAX);
                assert!(
                    tok < vd && lab < vd,
                    "token {tok} and label {label} must be below the vocabulary size {vd}"
                );
                ws.tok.push(tok);
                ws.lab.push(lab);
                ws.wt.push(w);
            }
        }
        let n = ws.tok.len();
        if n == 0 {
            return LossSums::default();
        }
        if n > ws.capacity {
            // Sized by the engine for the largest microbatch; grow if a caller did not.
            *ws = MlpWorkspace::new(n, hd, fd, vd);
            return self.forward_backward(batch, scale, grads, ws);
        }

        let embed = self.params.value(0).as_slice().expect("contiguous");
        let w1 = view2(&self.params, 1);
        let b1 = self.params.value(2).as_slice().expect("contiguous");
        let w2 = view2(&self.params, 3);
        let b2 = self.params.value(4).as_slice().expect("contiguous");

        // x = embed[tok]
        for (row, &t) in ws.x[..n * hd].chunks_exact_mut(hd).zip(&ws.tok) {
            row.copy_from_slice(&embed[t * hd..(t + 1) * hd]);
        }
        // h = tanh(x·w1 + b1)
        for row in ws.h[..n * fd].chunks_exact_mut(fd) {
            row.copy_from_slice(b1);
        }
        general_mat_mul(
            1.0,
            &mat(&ws.x, n, hd),
            &w1,
            1.0,
            &mut mat_mut(&mut ws.h, n, fd),
        );
        for v in &mut ws.h[..n * fd] {
            *v = fast_tanh(*v);
        }
        // logits = h·w2 + b2
        for row in ws.logits[..n * vd].chunks_exact_mut(vd) {
            row.copy_from_slice(b2);
        }
        general_mat_mul(
            1.0,
            &mat(&ws.h, n, fd),
            &w2,
            1.0,
            &mut mat_mut(&mut ws.logits, n, vd),
        );

        // Cross-entropy, and dlogits = w·(softmax − onehot) in place.
        let inv_scale = 1.0 / f64::from(scale.loss_scale);
        let mut sums = LossSums {
            tokens: n as u64,
            examples,
            activation_bytes: n * (2 * hd + 2 * fd + vd) * std::mem::size_of::<f32>(),
            ..LossSums::default()
        };
        let mut example_loss = 0.0f64;
        let mut example_tokens = 0usize;
        let mut example = 0usize;
        for (k, row) in ws.logits[..n * vd].chunks_exact_mut(vd).enumerate() {
            let lab = ws.lab[k];
            let w = ws.wt[k];
            let max = max_of(row);
            let target = row[lab];
            for v in row.iter_mut() {
                *v = fast_exp(*v - max);
            }
            let sum = sum_of(row);
            let loss = f64::from(max + sum.ln() - target);
            let coef = w / sum;
            for v in row.iter_mut() {
                *v *= coef;
            }
            row[lab] -= w;
            sums.token_loss += loss;
            sums.objective += f64::from(w) * inv_scale * loss;
            sums.weight += f64::from(w) * inv_scale;
            // Per-example means: the packed positions of one example are consecutive.
            example_loss += loss;
            example_tokens += 1;
            if example_tokens == ws.counts[example] {
                sums.example_mean_loss += example_loss / example_tokens as f64;
                example_loss = 0.0;
                example_tokens = 0;
                example += 1;
            }
        }

        // dW2 += hᵀ·dlogits, db2 += Σ dlogits
        general_mat_mul(
            1.0,
            &mat(&ws.h, n, fd).t(),
            &mat(&ws.logits, n, vd),
            1.0,
            &mut view2_mut(grads, 3),
        );
        add_column_sums(flat_mut(grads.value_mut(4)), &ws.logits, n, vd);
        // dh = dlogits·w2ᵀ; dz = dh ⊙ (1 − h²)
        general_mat_mul(
            1.0,
            &mat(&ws.logits, n, vd),
            &w2.t(),
            0.0,
            &mut mat_mut(&mut ws.dh, n, fd),
        );
        for (d, &h) in ws.dh[..n * fd].iter_mut().zip(&ws.h[..n * fd]) {
            *d *= 1.0 - h * h;
        }
        // dW1 += xᵀ·dz, db1 += Σ dz
        general_mat_mul(
            1.0,
            &mat(&ws.x, n, hd).t(),
            &mat(&ws.dh, n, fd),
            1.0,
            &mut view2_mut(grads, 1),
        );
        add_column_sums(flat_mut(grads.value_mut(2)), &ws.dh, n, fd);
        // dx = dz·w1ᵀ (reusing x's buffer), scattered into dEmbed rows.
        general_mat_mul(
            1.0,
            &mat(&ws.dh, n, fd),
            &w1.t(),
            0.0,
            &mut mat_mut(&mut ws.x, n, hd),
        );
        let dembed = flat_mut(grads.value_mut(0));
        for (row, &t) in ws.x[..n * hd].chunks_exact(hd).zip(&ws.tok) {
            crate::tensor::accumulate(&mut dembed[t * hd..(t + 1) * hd], row);
        }
        sums
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Example;

    fn tiny_batch() -> Batch {
        Batch::of(&[
            Example {
                id: 0,
                tokens: vec![1, 4, 2],
                labels: vec![4, -100, 6],
            },
            Example {
                id: 1,
                tokens: vec![3, 0, 5, 5, 6],
                labels: vec![0, 5, 5, 6, 2],
            },
            Example {
                id: 2,
                tokens: vec![2],
                labels: vec![-100],
            },
        ])
    }

    fn scale(normalization: Normalization, denominator: f64) -> GradScale {
        GradScale {
            normalization,
            denominator,
            loss_scale: 1.0,
            ignore_index: -100,
        }
    }

    fn objective(model: &TokenMlp, batch: &Batch, s: &GradScale) -> f64 {
        let mut grads = model.params().zeros_like();
        let mut ws = model.workspace(16);
        model
            .forward_backward(batch, s, &mut grads, &mut ws)
            .objective
    }

    #[test]
    fn backward_matches_finite_differences() {
        let batch = tiny_batch();
        for s in [
            scale(Normalization::PerToken, 7.0),
            scale(Normalization::PerExample, 2.0),
            scale(Normalization::Sum, 1.0),
        ] {
            let model = TokenMlp::new(7, 3, 5, 11);
            let mut grads = model.params().zeros_like();
            let mut ws = model.workspace(16);
            let sums = model.forward_backward(&batch, &s, &mut grads, &mut ws);
            assert_eq!(sums.tokens, 7);
            assert_eq!(sums.examples, 2);
            let eps = 1e-2f32;
            let mut checked = 0;
            for (pi, name) in TOKEN_MLP_PARAMS.iter().enumerate() {
                let numel = model.params().value(pi).len();
                for k in 0..numel {
                    let mut plus = model.clone();
                    flat_mut(plus.params_mut().value_mut(pi))[k] += eps;
                    let mut minus = model.clone();
                    flat_mut(minus.params_mut().value_mut(pi))[k] -= eps;
                    let fd = (objective(&plus, &batch, &s) - objective(&minus, &batch, &s))
                        / (2.0 * f64::from(eps));
                    let an = f64::from(grads.value(pi).as_slice().unwrap()[k]);
                    assert!(
                        (an - fd).abs() <= 2e-3 + 2e-2 * fd.abs(),
                        "{:?} {name}[{k}]: analytic {an} vs finite difference {fd}",
                        s.normalization
                    );
                    checked += 1;
                }
            }
            assert_eq!(checked, 7 * 3 + 3 * 5 + 5 + 5 * 7 + 7);
        }
    }

    #[test]
    fn weights_sum_to_one_for_means() {
        let model = TokenMlp::new(7, 3, 5, 1);
        let batch = tiny_batch();
        let mut grads = model.params().zeros_like();
        let mut ws = model.workspace(2); // too small: grows
        let t = model.forward_backward(
            &batch,
            &scale(Normalization::PerToken, 7.0),
            &mut grads,
            &mut ws,
        );
        assert!((t.weight - 1.0).abs() < 1e-6, "{t:?}");
        assert!((t.objective - t.token_loss / 7.0).abs() < 1e-6);
        let e = model.forward_backward(
            &batch,
            &scale(Normalization::PerExample, 2.0),
            &mut grads,
            &mut ws,
        );
        assert!((e.weight - 1.0).abs() < 1e-6, "{e:?}");
        assert!((e.objective - e.example_mean_loss / 2.0).abs() < 1e-6);
    }

    #[test]
    fn adds_into_existing_gradients() {
        let model = TokenMlp::new(7, 3, 5, 2);
        let batch = tiny_batch();
        let s = scale(Normalization::Sum, 1.0);
        let mut once = model.params().zeros_like();
        let mut ws = model.workspace(16);
        model.forward_backward(&batch, &s, &mut once, &mut ws);
        let mut twice = model.params().zeros_like();
        model.forward_backward(&batch, &s, &mut twice, &mut ws);
        model.forward_backward(&batch, &s, &mut twice, &mut ws);
        once.scale(2.0);
        assert!(once.max_abs_diff(&twice) < 1e-5);
        assert!(twice.sq_norm() > 0.0);
    }

    #[test]
    fn loss_scale_scales_gradients_not_the_objective() {
        let model = TokenMlp::new(7, 3, 5, 3);
        let batch = tiny_batch();
        let mut s = scale(Normalization::PerToken, 7.0);
        let mut g1 = model.params().zeros_like();
        let mut ws = model.workspace(16);
        let a = model.forward_backward(&batch, &s, &mut g1, &mut ws);
        s.loss_scale = 1024.0;
        let mut g2 = model.params().zeros_like();
        let b = model.forward_backward(&batch, &s, &mut g2, &mut ws);
        assert!((a.objective - b.objective).abs() < 1e-9);
        g1.scale(1024.0);
        assert!(g1.max_abs_diff(&g2) < 1e-3);
    }
}
