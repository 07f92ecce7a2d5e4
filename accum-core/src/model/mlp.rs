//! The reference model [`TokenMlp`]: token embedding, one tanh layer,
//! output projection, cross-entropy, with a hand-written backward pass.
//!
//! With a [`Team`] of `T` threads, every phase of a microbatch is split in
//! `T` parts that write disjoint outputs and never change the order of a
//! sum: rows of the activations (forward pass, softmax with cross-entropy,
//! `dh`), columns of the weight gradients (`dW2`, `dW1`, each over all rows
//! in row order) and columns of `dx` with its scatter into `dEmbed`. Each
//! element is therefore computed by the same operations in the same order
//! whatever `T` is, and the gradients are identical across thread counts
//! (`gradients_are_identical_across_thread_counts`).
//!
//! Element-wise work is fused per row and runs with the widest vector unit
//! the processor has (detected at run time, `pulp`): the bias, `tanh`, the
//! softmax with the cross-entropy and its gradient in three passes over a
//! row that stays in the L1 cache, and the tanh backward in one pass.

use faer::reborrow::{Reborrow, ReborrowMut};
use ndarray::{ArrayD, IxDyn};

use super::split::{Rows, par_cols, par_cols_pair, par_dz, par_rows};
use super::{GradScale, LossSums, Model, Team};
use crate::data::{PackedMicrobatch, Rng};
use crate::tensor::{
    MatMut, MatRef, Tensors, accumulate, fast_exp, fast_tanh, flat_mut, gemm, mat, mat_mut, mat_of,
    mat_of_mut, max_of,
};

/// The reference model: token embedding, one tanh layer, output projection.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenMlp {
    vocab: usize,
    hidden: usize,
    ffn: usize,
    params: Tensors,
}

/// Parameter names of [`TokenMlp`], in order.
pub(crate) const TOKEN_MLP_PARAMS: [&str; 5] = ["embed", "w1", "b1", "w2", "b2"];

impl TokenMlp {
    /// The workspace bytes per position of a model of these dimensions,
    /// known before the model is made (to refuse a plan before allocating).
    pub(crate) fn workspace_bytes_per_position_for(
        vocab: usize,
        hidden: usize,
        ffn: usize,
    ) -> usize {
        (2 * hidden + 2 * ffn + vocab) * std::mem::size_of::<f32>()
            + 3 * std::mem::size_of::<usize>()
            + std::mem::size_of::<f32>()
    }
}

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
    /// `[n, F]`: each row's token loss in its first element (between the
    /// forward pass and the sums), then `dh`, then `dz`.
    dh: Vec<f32>,
    /// `[n, V]`: logits, then `dlogits`.
    logits: Vec<f32>,
    /// Packed input tokens, labels and weights.
    tok: Vec<usize>,
    lab: Vec<usize>,
    wt: Vec<f32>,
    /// Supervised positions of each packed example, in order.
    counts: Vec<usize>,
    /// Whether blocks may go through the tokens (`by_token`); the tests
    /// turn it off to compare both ways.
    through_tokens: bool,
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
            through_tokens: true,
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

/// The most rows (packed positions) processed at once, forward and
/// backward, so that their activations (about 3 KiB a row for the benchmark
/// model, 12 MiB for a full block) stay in the last-level cache between the
/// forward and the backward pass, while each matrix product is large enough
/// to amortize its packing: measured on the benchmark, blocks of 512, 1,024,
/// 2,048, 4,096 and 8,192 rows gave m = 32 / A = 8 53.6, 53.7, 52.0, 51.8
/// and 52.4 ms per update on one thread. A microbatch of `n` rows is cut
/// into `⌈n / CHUNK⌉` blocks of equal size.
const CHUNK: usize = 4096;

/// Whether a block of `rows` rows goes through the tokens: its forward
/// pass reads `x·w1` from the table `embed·w1` (`[V, F]`, in x's buffer),
/// and its backward pass sums dz by token into `S` (`[V, F]`, in the
/// logits' buffer) for `dW1 = embedᵀ·S` and `dEmbed += S·w1ᵀ`: three
/// products of `V` rows instead of `rows`, so when there are fewer tokens
/// in the vocabulary than rows, and the two buffers have room. Depends on
/// the block and the workspace only, never on the team.
fn by_token(rows: usize, (hd, fd, vd): (usize, usize, usize), capacity: usize) -> bool {
    vd < rows && vd * fd <= capacity * hd && fd <= capacity
}

/// The running per-example mean of token losses over the packed rows (the
/// rows of one example are consecutive).
#[derive(Default)]
struct ExampleMeans {
    loss: f64,
    tokens: usize,
    index: usize,
}

impl ExampleMeans {
    fn add(&mut self, loss: f64, counts: &[usize], sums: &mut LossSums) {
        self.loss += loss;
        self.tokens += 1;
        if self.tokens == counts[self.index] {
            sums.example_mean_loss += self.loss / self.tokens as f64;
            *self = ExampleMeans {
                index: self.index + 1,
                ..ExampleMeans::default()
            };
        }
    }
}

/// Adds the column sums of the rows of `src` (row-major, `cols` wide),
/// restricted to columns `first..first + dst.len()`, to `dst`, in row order.
fn add_column_sums(dst: &mut [f32], src: &[f32], cols: usize, first: usize) {
    let width = dst.len();
    for row in src.chunks_exact(cols) {
        accumulate(dst, &row[first..first + width]);
    }
}

/// Row `r` of a matrix whose rows are contiguous, as a slice.
fn row_of(m: MatRef<'_>, r: usize) -> &[f32] {
    m.row(r)
        .try_as_row_major()
        .expect("the model's matrices are row-major")
        .as_slice()
}

/// Row `r` of a matrix whose rows are contiguous, as a mutable slice.
fn row_of_mut(m: MatMut<'_>, r: usize) -> &mut [f32] {
    m.row_mut(r)
        .try_as_row_major_mut()
        .expect("the model's matrices are row-major")
        .as_slice_mut()
}

/// `e^(v − max)` in place, and their sum (sixteen partial sums: one
/// 512-bit vector, or two 256-bit ones, of the exponentials at a time).
#[inline(always)]
fn exp_sum(row: &mut [f32], max: f32) -> f32 {
    const LANES: usize = 16;
    let mut acc = [0.0f32; LANES];
    let mut chunks = row.chunks_exact_mut(LANES);
    for c in &mut chunks {
        for i in 0..LANES {
            let e = fast_exp(c[i] - max);
            c[i] = e;
            acc[i] += e;
        }
    }
    let mut rest = 0.0f32;
    for v in chunks.into_remainder() {
        let e = fast_exp(*v - max);
        *v = e;
        rest += e;
    }
    acc.iter().sum::<f32>() + rest
}

impl TokenMlp {
    /// The forward pass and the loss gradient of one block of rows:
    /// `h = tanh(x·w1 + b1)`, `logits = h·w2 + b2`, then per row the
    /// cross-entropy (kept in the row's first `dh` element) and
    /// `dlogits = w·(softmax − onehot)` in place of the logits. With a
    /// `table` (`embed·w1`, `[V, F]`), row `r` of `x·w1` is its row
    /// `tok_r`, and `x` is neither gathered nor multiplied.
    fn forward_rows(&self, rows: Rows<'_>, table: Option<&[f32]>) {
        let (hd, fd, vd) = (self.hidden, self.ffn, self.vocab);
        let n = rows.len();
        if n == 0 {
            return;
        }
        let embed = self.params.value(0).as_slice().expect("contiguous");
        let b1 = self.params.value(2).as_slice().expect("contiguous");
        let b2 = self.params.value(4).as_slice().expect("contiguous");
        if let Some(table) = table {
            for (row, &t) in rows.h.chunks_exact_mut(fd).zip(rows.tok) {
                row.copy_from_slice(b1);
                accumulate(row, &table[t * fd..(t + 1) * fd]);
            }
        } else {
            for (row, &t) in rows.x.chunks_exact_mut(hd).zip(rows.tok) {
                row.copy_from_slice(&embed[t * hd..(t + 1) * hd]);
            }
            for row in rows.h.chunks_exact_mut(fd) {
                row.copy_from_slice(b1);
            }
            gemm(
                mat_mut(rows.h, n, fd),
                true,
                mat(rows.x, n, hd),
                mat_of(self.params.value(1)),
            );
        }
        pulp::Arch::new().dispatch(|| {
            for v in rows.h.iter_mut() {
                *v = fast_tanh(*v);
            }
        });
        for row in rows.logits.chunks_exact_mut(vd) {
            row.copy_from_slice(b2);
        }
        gemm(
            mat_mut(rows.logits, n, vd),
            true,
            mat(rows.h, n, fd),
            mat_of(self.params.value(3)),
        );
        let (lab, wt) = (rows.lab, rows.wt);
        pulp::Arch::new().dispatch(LossRows {
            logits: rows.logits,
            losses: rows.dh,
            lab,
            wt,
            vd,
            fd,
        });
    }
}

/// Per row of `logits` (`vd` wide): the cross-entropy against its label,
/// kept in the first element of the row's `losses` row (`fd` wide), and
/// `w·(softmax − onehot)` in place of the logits.
///
/// A [`pulp::WithSimd`] operation rather than a closure: its
/// `#[inline(always)]` body, and the `#[inline(always)]` helpers it calls,
/// are compiled inside `pulp`'s dispatch with the processor's vector unit
/// enabled. A closure this large is compiled on its own, for baseline
/// x86-64 (128-bit vectors, no FMA), and ran four times slower. The
/// arithmetic is the same either way (no contraction into FMAs, the same
/// fixed partial sums), so the results are identical.
struct LossRows<'a> {
    logits: &'a mut [f32],
    losses: &'a mut [f32],
    lab: &'a [usize],
    wt: &'a [f32],
    vd: usize,
    fd: usize,
}

impl pulp::WithSimd for LossRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Self {
            logits,
            losses,
            lab,
            wt,
            vd,
            fd,
        } = self;
        for (k, (row, loss)) in logits
            .chunks_exact_mut(vd)
            .zip(losses.chunks_exact_mut(fd))
            .enumerate()
        {
            let (label, w) = (lab[k], wt[k]);
            let max = max_of(row);
            let target = row[label];
            let sum = exp_sum(row, max);
            loss[0] = max + sum.ln() - target;
            let coef = w / sum;
            for v in row.iter_mut() {
                *v *= coef;
            }
            row[label] -= w;
        }
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
        TokenMlp::workspace_bytes_per_position_for(self.vocab, self.hidden, self.ffn)
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
        batch: &PackedMicrobatch,
        scale: &GradScale,
        grads: &mut Tensors,
        ws: &mut MlpWorkspace,
    ) -> LossSums {
        self.forward_backward_team(batch, scale, grads, ws, &Team::single())
    }

    /// # Panics
    /// As [`TokenMlp::forward_backward`].
    fn forward_backward_team(
        &self,
        batch: &PackedMicrobatch,
        scale: &GradScale,
        grads: &mut Tensors,
        ws: &mut MlpWorkspace,
        team: &Team,
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
            let positions = batch.positions_of(i);
            let supervised = batch.labels[positions.clone()]
                .iter()
                .filter(|&&l| l != scale.ignore_index)
                .count();
            if supervised == 0 {
                continue;
            }
            examples += 1;
            ws.counts.push(supervised);
            let w = scale.token_weight(supervised);
            for p in positions {
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
            return self.forward_backward_team(batch, scale, grads, ws, team);
        }
        let dims = (hd, fd, vd);
        let inv_scale = 1.0 / f64::from(scale.loss_scale);
        let mut sums = LossSums {
            tokens: n as u64,
            examples,
            activation_bytes: n * (2 * hd + 2 * fd + vd) * std::mem::size_of::<f32>(),
            ..LossSums::default()
        };
        let mut example = ExampleMeans::default();
        let [g_embed, g_w1, g_b1, g_w2, g_b2] = grads.arrays_mut() else {
            unreachable!("the gradient layout was checked to be the model's five tensors")
        };
        let w1 = mat_of(self.params.value(1));
        let w2 = mat_of(self.params.value(3));
        // Blocks of at most CHUNK rows, forward and backward one after the other, in
        // the same first rows of the workspace: a block's activations stay in
        // the caches. The blocks do not depend on the team.
        let block = n.div_ceil(n.div_ceil(CHUNK));
        for r0 in (0..n).step_by(block) {
            let len = block.min(n - r0);
            let parts = team.threads().min(len);
            let (tok, lab, wt) = (
                &ws.tok[r0..r0 + len],
                &ws.lab[r0..r0 + len],
                &ws.wt[r0..r0 + len],
            );

            // Through the tokens (see `by_token`): embed·w1 in x's buffer.
            let by_token = ws.through_tokens && by_token(len, dims, ws.capacity);
            let (x, table) = if by_token {
                let (table, _) = ws.x.split_at_mut(vd * fd);
                let embed = mat_of(self.params.value(0));
                // By column blocks on the team, like dW2: each element's sum
                // runs in the same order on any number of threads.
                par_cols(
                    team,
                    0,
                    mat_mut(table, vd, fd),
                    &mut [],
                    parts,
                    &|first, block, _| {
                        let cols = w1.subcols(first, block.ncols());
                        gemm(block, false, embed, cols);
                    },
                );
                (&mut [][..], Some(&*table))
            } else {
                (&mut ws.x[..len * hd], None)
            };
            // Forward, loss and dlogits, by blocks of rows.
            let rows = Rows {
                x,
                h: &mut ws.h[..len * fd],
                logits: &mut ws.logits[..len * vd],
                dh: &mut ws.dh[..len * fd],
                tok,
                lab,
                wt,
            };
            par_rows(team, rows, parts, dims, &|rows| {
                self.forward_rows(rows, table);
            });

            // The sums, in row order whatever the split.
            for (row, &w) in ws.dh[..len * fd].chunks_exact(fd).zip(wt) {
                let loss = f64::from(row[0]);
                let w = f64::from(w);
                sums.token_loss += loss;
                sums.objective += w * inv_scale * loss;
                sums.weight += w * inv_scale;
                example.add(loss, &ws.counts, &mut sums);
            }

            let h = mat(&ws.h, len, fd);
            let dlogits = mat(&ws.logits, len, vd);
            // dW2 += hᵀ·dlogits, db2 += Σ dlogits (by columns), while
            // dz = dlogits·w2ᵀ ⊙ (1 − h²) (by rows).
            let dh_rows = &mut ws.dh[..len * fd];
            let logits = &ws.logits[..len * vd];
            team.join(
                || {
                    par_cols(
                        team,
                        0,
                        mat_of_mut(g_w2),
                        flat_mut(g_b2),
                        parts,
                        &|first, block, bias| {
                            let cols = dlogits.subcols(first, block.ncols());
                            gemm(block, true, h.transpose(), cols);
                            add_column_sums(bias, logits, vd, first);
                        },
                    );
                },
                || par_dz(team, dh_rows, parts, &ws.h[..len * fd], logits, w2, dims),
            );
            let dz = mat(&ws.dh, len, fd);
            let dz_flat = &ws.dh[..len * fd];
            if by_token {
                // Row t of S ([V, F], in the logits' buffer, which dW2 and dz
                // are done with) sums the rows of dz whose token is t, in row
                // order. Then dW1 += embedᵀ·S and db1 += Σ S (by columns) —
                // xᵀ·dz and Σ dz, since row r of x is embed[tok_r] — and
                // dEmbed += S·w1ᵀ, dz·w1ᵀ scattered by token.
                let embed = mat_of(self.params.value(0));
                let sums = mat_mut(&mut ws.logits, vd, fd);
                par_cols_pair(
                    team,
                    0,
                    sums,
                    mat_of_mut(g_w1),
                    parts,
                    &|first, mut sums, dw1| {
                        let width = sums.ncols();
                        for t in 0..vd {
                            row_of_mut(sums.rb_mut(), t).fill(0.0);
                        }
                        for (row, &t) in dz_flat.chunks_exact(fd).zip(tok) {
                            accumulate(row_of_mut(sums.rb_mut(), t), &row[first..first + width]);
                        }
                        gemm(dw1, true, embed.transpose(), sums.rb());
                    },
                );
                let sums = &ws.logits[..vd * fd];
                add_column_sums(flat_mut(g_b1), sums, fd, 0);
                let sums = mat(sums, vd, fd);
                par_cols(
                    team,
                    0,
                    mat_of_mut(g_embed),
                    &mut [],
                    parts,
                    &|first, demb, _| {
                        let w1_rows = w1.subrows(first, demb.ncols());
                        gemm(demb, true, sums, w1_rows.transpose());
                    },
                );
                continue;
            }
            let x = mat(&ws.x, len, hd);
            // dW1 += xᵀ·dz, db1 += Σ dz (by columns).
            par_cols(
                team,
                0,
                mat_of_mut(g_w1),
                flat_mut(g_b1),
                parts,
                &|first, block, bias| {
                    let cols = dz.subcols(first, block.ncols());
                    gemm(block, true, x.transpose(), cols);
                    add_column_sums(bias, dz_flat, fd, first);
                },
            );
            // dx = dz·w1ᵀ (into x's buffer, by columns), each block scattered
            // into the same columns of dEmbed in row order.
            let dx = mat_mut(&mut ws.x, len, hd);
            par_cols_pair(
                team,
                0,
                dx,
                mat_of_mut(g_embed),
                parts,
                &|first, mut dx, mut demb| {
                    let w1_rows = w1.subrows(first, dx.ncols());
                    gemm(dx.rb_mut(), false, dz, w1_rows.transpose());
                    for (r, &t) in tok.iter().enumerate() {
                        accumulate(row_of_mut(demb.rb_mut(), t), row_of(dx.rb(), r));
                    }
                },
            );
        }
        sums
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Sequence;
    use crate::settings::Normalization;

    fn tiny_batch() -> PackedMicrobatch {
        PackedMicrobatch::of(&[
            Sequence {
                id: 0,
                tokens: vec![1, 4, 2],
                labels: vec![4, -100, 6],
            },
            Sequence {
                id: 1,
                tokens: vec![3, 0, 5, 5, 6],
                labels: vec![0, 5, 5, 6, 2],
            },
            Sequence {
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

    fn objective(model: &TokenMlp, batch: &PackedMicrobatch, s: &GradScale) -> f64 {
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

    #[test]
    fn blocks_through_the_tokens_match_the_direct_products() {
        // 80 examples of a 16-token vocabulary: more rows than tokens, so
        // the blocks go through the tokens unless told not to.
        let config = crate::settings::DataSection {
            examples: 80,
            min_len: 2,
            max_len: 30,
            vocab: 16,
            seed: 5,
            ..crate::settings::DataSection::default()
        };
        let batch = PackedMicrobatch::of(crate::data::Dataset::synthetic(&config).examples());
        let model = TokenMlp::new(16, 8, 12, 4);
        assert!(by_token(batch.positions(), (8, 12, 16), batch.positions()));
        for s in [
            scale(Normalization::PerToken, 500.0),
            scale(Normalization::Sum, 1.0),
        ] {
            let run = |through_tokens: bool, threads: usize| {
                let mut grads = model.params().zeros_like();
                let mut ws = model.workspace(batch.positions());
                ws.through_tokens = through_tokens;
                let team = Team::new(threads);
                let sums = model.forward_backward_team(&batch, &s, &mut grads, &mut ws, &team);
                (grads, sums)
            };
            let (direct, direct_sums) = run(false, 1);
            let (tokens, token_sums) = run(true, 1);
            for (name, (a, b)) in TOKEN_MLP_PARAMS
                .iter()
                .zip(direct.slices().zip(tokens.slices()))
            {
                let scale = a.iter().fold(0.0f32, |m, x| m.max(x.abs()));
                let worst = a
                    .iter()
                    .zip(b)
                    .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
                assert!(scale > 0.0, "{name}");
                assert!(worst <= 1e-5 * scale, "{name}: {worst} against {scale}");
            }
            assert!((direct_sums.objective - token_sums.objective).abs() < 1e-6);
            assert_eq!(run(true, 3).0, tokens, "through the tokens on 3 threads");
        }
    }

    #[test]
    fn gradients_are_identical_across_thread_counts() {
        let config = crate::settings::DataSection {
            examples: 96,
            min_len: 40,
            max_len: 120,
            vocab: 32,
            seed: 4,
            ..crate::settings::DataSection::default()
        };
        let data = crate::data::Dataset::synthetic(&config);
        let batch = PackedMicrobatch::of(data.examples());
        let model = TokenMlp::new(32, 24, 40, 9);
        let s = scale(Normalization::PerExample, 96.0);
        let run = |threads: usize| {
            let mut grads = model.params().zeros_like();
            let mut ws = model.workspace(batch.positions());
            let sums =
                model.forward_backward_team(&batch, &s, &mut grads, &mut ws, &Team::new(threads));
            (grads, sums)
        };
        // More rows than one block: blocks and parts both vary.
        assert!(batch.positions() > CHUNK, "{}", batch.positions());
        let (one, sums) = run(1);
        assert!(one.sq_norm() > 0.0);
        for threads in [2, 3, 4] {
            let (many, many_sums) = run(threads);
            assert_eq!(many, one, "{threads} threads");
            assert_eq!(many_sums, sums, "{threads} threads");
        }
        // Fewer rows than tokens in the vocabulary: the direct products.
        let small = PackedMicrobatch::of(&data.examples()[..12]);
        let wide = TokenMlp::new(1000, 24, 40, 9);
        assert!(!by_token(
            small.positions(),
            (24, 40, 1000),
            small.positions()
        ));
        let run = |threads: usize| {
            let mut grads = wide.params().zeros_like();
            let mut ws = wide.workspace(small.positions());
            wide.forward_backward_team(&small, &s, &mut grads, &mut ws, &Team::new(threads));
            grads
        };
        let one = run(1);
        for threads in [2, 3] {
            assert_eq!(run(threads), one, "{threads} threads, direct products");
        }
    }
}
