//! How [`TokenMlp`](super::TokenMlp) splits one block of rows over a
//! [`Team`]: contiguous row blocks of the packed activations, column blocks
//! of weight gradients, matching column blocks of two matrices. Each split
//! halves the parts recursively and runs the halves with [`Team::join`];
//! the pieces write disjoint outputs and none reorders a sum.

use super::Team;
use crate::tensor::{MatMut, MatRef, gemm, mat, mat_mut};

/// The split point of `len` items when `parts` parts are divided into
/// `half` and `parts − half`.
pub(super) fn split_point(len: usize, half: usize, parts: usize) -> usize {
    len * half / parts
}

/// One block of rows of the packed activations.
pub(super) struct Rows<'a> {
    pub(super) x: &'a mut [f32],
    pub(super) h: &'a mut [f32],
    pub(super) logits: &'a mut [f32],
    pub(super) dh: &'a mut [f32],
    pub(super) tok: &'a [usize],
    pub(super) lab: &'a [usize],
    pub(super) wt: &'a [f32],
}

impl<'a> Rows<'a> {
    pub(super) fn len(&self) -> usize {
        self.tok.len()
    }

    fn split(self, at: usize, (hd, fd, vd): (usize, usize, usize)) -> (Rows<'a>, Rows<'a>) {
        // Rows that read x·w1 from a table carry no x.
        let (x0, x1) = if self.x.is_empty() {
            (&mut [][..], &mut [][..])
        } else {
            self.x.split_at_mut(at * hd)
        };
        let (h0, h1) = self.h.split_at_mut(at * fd);
        let (l0, l1) = self.logits.split_at_mut(at * vd);
        let (d0, d1) = self.dh.split_at_mut(at * fd);
        let (t0, t1) = self.tok.split_at(at);
        let (b0, b1) = self.lab.split_at(at);
        let (w0, w1) = self.wt.split_at(at);
        (
            Rows {
                x: x0,
                h: h0,
                logits: l0,
                dh: d0,
                tok: t0,
                lab: b0,
                wt: w0,
            },
            Rows {
                x: x1,
                h: h1,
                logits: l1,
                dh: d1,
                tok: t1,
                lab: b1,
                wt: w1,
            },
        )
    }
}

/// Runs `f` on `parts` contiguous row blocks, in parallel on `team`.
pub(super) fn par_rows<F>(
    team: &Team,
    rows: Rows<'_>,
    parts: usize,
    dims: (usize, usize, usize),
    f: &F,
) where
    F: Fn(Rows<'_>) + Sync,
{
    if parts <= 1 || rows.len() < 2 {
        f(rows);
        return;
    }
    let half = parts / 2;
    let at = split_point(rows.len(), half, parts);
    let (a, b) = rows.split(at, dims);
    team.join(
        || par_rows(team, a, half, dims, f),
        || par_rows(team, b, parts - half, dims, f),
    );
}

/// Runs `f(first column, block, bias block)` on `parts` column blocks of
/// `view` and the matching blocks of `bias`, in parallel on `team`.
pub(super) fn par_cols<F>(
    team: &Team,
    first: usize,
    view: MatMut<'_>,
    bias: &mut [f32],
    parts: usize,
    f: &F,
) where
    F: Fn(usize, MatMut<'_>, &mut [f32]) + Sync,
{
    let cols = view.ncols();
    if parts <= 1 || cols < 2 {
        f(first, view, bias);
        return;
    }
    let half = parts / 2;
    let mid = split_point(cols, half, parts);
    let (left, right) = view.split_at_col_mut(mid);
    let (b0, b1) = if bias.is_empty() {
        (&mut [][..], &mut [][..])
    } else {
        bias.split_at_mut(mid)
    };
    team.join(
        || par_cols(team, first, left, b0, half, f),
        || par_cols(team, first + mid, right, b1, parts - half, f),
    );
}

/// `dz = dlogits·w2ᵀ ⊙ (1 − h²)` on `parts` row blocks of `dh` (`[n, F]`).
pub(super) fn par_dz(
    team: &Team,
    dh: &mut [f32],
    parts: usize,
    h: &[f32],
    dlogits: &[f32],
    w2: MatRef<'_>,
    dims: (usize, usize, usize),
) {
    let (_, fd, vd) = dims;
    let n = dh.len() / fd;
    if parts <= 1 || n < 2 {
        gemm(
            mat_mut(dh, n, fd),
            false,
            mat(dlogits, n, vd),
            w2.transpose(),
        );
        pulp::Arch::new().dispatch(|| {
            for (d, &h) in dh.iter_mut().zip(h) {
                *d *= 1.0 - h * h;
            }
        });
        return;
    }
    let half = parts / 2;
    let at = split_point(n, half, parts);
    let (d0, d1) = dh.split_at_mut(at * fd);
    let (h0, h1) = h.split_at(at * fd);
    let (l0, l1) = dlogits.split_at(at * vd);
    team.join(
        || par_dz(team, d0, half, h0, l0, w2, dims),
        || par_dz(team, d1, parts - half, h1, l1, w2, dims),
    );
}

/// Runs `f(first column, a block, b block)` on `parts` matching column
/// blocks of `a` and `b` (same number of columns), in parallel on `team`.
pub(super) fn par_cols_pair<F>(
    team: &Team,
    first: usize,
    a: MatMut<'_>,
    b: MatMut<'_>,
    parts: usize,
    f: &F,
) where
    F: Fn(usize, MatMut<'_>, MatMut<'_>) + Sync,
{
    let cols = a.ncols();
    if parts <= 1 || cols < 2 {
        f(first, a, b);
        return;
    }
    let half = parts / 2;
    let mid = split_point(cols, half, parts);
    let (a0, a1) = a.split_at_col_mut(mid);
    let (b0, b1) = b.split_at_col_mut(mid);
    team.join(
        || par_cols_pair(team, first, a0, b0, half, f),
        || par_cols_pair(team, first + mid, a1, b1, parts - half, f),
    );
}
