//! Thin helpers over `ndarray` f32 arrays: a named set of tensors
//! ([`Tensors`]) for parameters, gradients and optimizer state, and the few
//! whole-set kernels the group loop needs (accumulate, scale, global norm,
//! finiteness, differences), and the matrix product the models run
//! ([`gemm`]).
//!
//! The accumulate kernel ([`accumulate`]) is the one that runs once per
//! replica per group in the reduction; it is a plain slice loop the compiler
//! vectorizes, so it runs near memory-copy speed.

use ndarray::{ArrayD, IxDyn};

/// An ordered set of named f32 tensors (parameters, gradients, optimizer
/// moments). Names are unique; the order is the model's parameter order.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensors {
    names: Vec<String>,
    values: Vec<ArrayD<f32>>,
}

impl Tensors {
    /// A set from `(name, tensor)` pairs, in order. Every tensor is made
    /// contiguous (C order), so kernels can work on flat slices.
    ///
    /// # Panics
    /// When two tensors share a name (a programming error in a model).
    pub fn new(pairs: Vec<(String, ArrayD<f32>)>) -> Tensors {
        let mut names = Vec::with_capacity(pairs.len());
        let mut values = Vec::with_capacity(pairs.len());
        for (name, value) in pairs {
            assert!(
                !names.contains(&name),
                "tensor names are unique; `{name}` appears twice"
            );
            names.push(name);
            values.push(value.as_standard_layout().into_owned());
        }
        Tensors { names, values }
    }

    /// A set with the same names and shapes, all zeros.
    pub fn zeros_like(&self) -> Tensors {
        Tensors {
            names: self.names.clone(),
            values: self
                .values
                .iter()
                .map(|v| ArrayD::zeros(IxDyn(v.shape())))
                .collect(),
        }
    }

    /// Parameter names, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Number of tensors.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the set holds no tensor.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The tensor at position `index`.
    pub fn value(&self, index: usize) -> &ArrayD<f32> {
        &self.values[index]
    }

    /// The tensor at position `index`, mutably.
    pub fn value_mut(&mut self, index: usize) -> &mut ArrayD<f32> {
        &mut self.values[index]
    }

    /// The tensor called `name`, if any.
    pub fn get(&self, name: &str) -> Option<&ArrayD<f32>> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| &self.values[i])
    }

    /// The tensor called `name`, mutably.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut ArrayD<f32>> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| &mut self.values[i])
    }

    /// `(name, tensor)` pairs in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ArrayD<f32>)> {
        self.names.iter().map(String::as_str).zip(&self.values)
    }

    /// The tensors, mutably, in order (to borrow several at once).
    pub(crate) fn arrays_mut(&mut self) -> &mut [ArrayD<f32>] {
        &mut self.values
    }

    /// Every tensor as a flat slice, in order.
    pub fn slices(&self) -> impl Iterator<Item = &[f32]> {
        self.values.iter().map(flat)
    }

    /// Every tensor as a flat mutable slice, in order.
    pub fn slices_mut(&mut self) -> impl Iterator<Item = &mut [f32]> {
        self.values.iter_mut().map(flat_mut)
    }

    /// Total number of elements.
    pub fn numel(&self) -> usize {
        self.values.iter().map(ArrayD::len).sum()
    }

    /// Bytes held by the elements (f32: 4 bytes each).
    pub fn bytes(&self) -> usize {
        self.numel() * std::mem::size_of::<f32>()
    }

    /// Whether `other` has the same names and shapes.
    pub fn same_layout(&self, other: &Tensors) -> bool {
        self.names == other.names
            && self
                .values
                .iter()
                .zip(&other.values)
                .all(|(a, b)| a.shape() == b.shape())
    }

    /// Sets every element to zero, keeping the buffers (no allocation).
    pub fn fill_zero(&mut self) {
        for s in self.slices_mut() {
            s.fill(0.0);
        }
    }

    /// `self += other`, element-wise (the accumulate kernel).
    ///
    /// # Panics
    /// When the layouts differ (an internal invariant of the engine).
    pub fn add_assign(&mut self, other: &Tensors) {
        assert!(self.same_layout(other), "tensor sets share one layout");
        for (dst, src) in self.values.iter_mut().zip(&other.values) {
            accumulate(flat_mut(dst), flat(src));
        }
    }

    /// Copies `other` into `self` without allocating.
    ///
    /// # Panics
    /// When the layouts differ.
    pub fn copy_from(&mut self, other: &Tensors) {
        assert!(self.same_layout(other), "tensor sets share one layout");
        for (dst, src) in self.values.iter_mut().zip(&other.values) {
            flat_mut(dst).copy_from_slice(flat(src));
        }
    }

    /// `self *= factor`, element-wise.
    pub fn scale(&mut self, factor: f32) {
        let arch = pulp::Arch::new();
        for s in self.slices_mut() {
            arch.dispatch(|| {
                for x in s {
                    *x *= factor;
                }
            });
        }
    }

    /// The squared global L2 norm, accumulated in f64.
    pub fn sq_norm(&self) -> f64 {
        self.slices()
            .map(|s| s.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>())
            .sum()
    }

    /// The squared global L2 norm (accumulated in f64) and the largest
    /// absolute element (NaN if any element is NaN), in one pass.
    pub fn sq_norm_and_max_abs(&self) -> (f64, f32) {
        let arch = pulp::Arch::new();
        let mut sq = 0.0f64;
        let mut max = 0.0f32;
        let mut nan = false;
        for s in self.slices() {
            let (s_sq, s_max, s_nan) = arch.dispatch(|| {
                const LANES: usize = 8;
                let mut sq = [0.0f64; LANES];
                let mut mx = [0.0f32; LANES];
                let mut nan = false;
                let chunks = s.chunks_exact(LANES);
                let rest = chunks.remainder();
                for c in chunks {
                    for i in 0..LANES {
                        sq[i] += f64::from(c[i]) * f64::from(c[i]);
                        let a = c[i].abs();
                        mx[i] = if a > mx[i] { a } else { mx[i] };
                        nan |= c[i].is_nan();
                    }
                }
                for &x in rest {
                    sq[0] += f64::from(x) * f64::from(x);
                    let a = x.abs();
                    mx[0] = if a > mx[0] { a } else { mx[0] };
                    nan |= x.is_nan();
                }
                (
                    sq.iter().sum::<f64>(),
                    mx.iter().fold(0.0f32, |m, &v| m.max(v)),
                    nan,
                )
            });
            sq += s_sq;
            max = max.max(s_max);
            nan |= s_nan;
        }
        (sq, if nan { f32::NAN } else { max })
    }

    /// The global L2 norm over all tensors (what clipping uses).
    pub fn norm(&self) -> f64 {
        self.sq_norm().sqrt()
    }

    /// The largest absolute element (NaN if any element is NaN).
    pub fn max_abs(&self) -> f32 {
        let mut max = 0.0f32;
        for s in self.slices() {
            for &x in s {
                if x.is_nan() {
                    return f32::NAN;
                }
                max = max.max(x.abs());
            }
        }
        max
    }

    /// Whether every element is finite.
    pub fn all_finite(&self) -> bool {
        self.slices().all(|s| s.iter().all(|x| x.is_finite()))
    }

    /// The largest `|a − b|` over all elements.
    ///
    /// # Panics
    /// When the layouts differ.
    pub fn max_abs_diff(&self, other: &Tensors) -> f32 {
        assert!(self.same_layout(other), "tensor sets share one layout");
        self.slices()
            .zip(other.slices())
            .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
            .fold(0.0f32, |m, d| if d.is_nan() { f32::NAN } else { m.max(d) })
    }
}

/// The flat C-order slice of a contiguous tensor.
///
/// # Panics
/// When the tensor is not contiguous; [`Tensors`] keeps all tensors contiguous.
pub fn flat(array: &ArrayD<f32>) -> &[f32] {
    array
        .as_slice()
        .expect("tensors in a set are contiguous (C order)")
}

/// The flat C-order mutable slice of a contiguous tensor.
///
/// # Panics
/// When the tensor is not contiguous.
pub fn flat_mut(array: &mut ArrayD<f32>) -> &mut [f32] {
    array
        .as_slice_mut()
        .expect("tensors in a set are contiguous (C order)")
}

/// A read-only f32 matrix view for [`gemm`] (faer's; any strides).
pub type MatRef<'a> = faer::MatRef<'a, f32>;

/// A mutable f32 matrix view for [`gemm`] (faer's; any strides).
pub type MatMut<'a> = faer::MatMut<'a, f32>;

/// The first `rows × cols` elements of `buf` as a row-major matrix.
///
/// # Panics
/// When `buf` holds fewer than `rows × cols` elements.
pub fn mat(buf: &[f32], rows: usize, cols: usize) -> MatRef<'_> {
    faer::MatRef::from_row_major_slice(&buf[..rows * cols], rows, cols)
}

/// The first `rows × cols` elements of `buf` as a mutable row-major matrix.
///
/// # Panics
/// When `buf` holds fewer than `rows × cols` elements.
pub fn mat_mut(buf: &mut [f32], rows: usize, cols: usize) -> MatMut<'_> {
    faer::MatMut::from_row_major_slice_mut(&mut buf[..rows * cols], rows, cols)
}

/// A 2-D tensor of a set as a row-major matrix.
///
/// # Panics
/// When the tensor is not 2-D.
pub fn mat_of(array: &ArrayD<f32>) -> MatRef<'_> {
    let &[rows, cols] = array.shape() else {
        panic!(
            "a matrix product takes 2-D tensors, not {:?}",
            array.shape()
        )
    };
    mat(flat(array), rows, cols)
}

/// A 2-D tensor of a set as a mutable row-major matrix.
///
/// # Panics
/// When the tensor is not 2-D.
pub fn mat_of_mut(array: &mut ArrayD<f32>) -> MatMut<'_> {
    let &[rows, cols] = array.shape() else {
        panic!(
            "a matrix product takes 2-D tensors, not {:?}",
            array.shape()
        )
    };
    mat_mut(flat_mut(array), rows, cols)
}

/// `dst ← a·b`, or `dst ← dst + a·b` when `add`, in f32 on the calling
/// thread: faer's matmul, which packs its operands into a buffer of its
/// own per thread (allocated at the thread's first product, then reused:
/// a product in the steady state allocates nothing) and runs the packed
/// kernel of the widest vector unit the processor has ([`gemm_kernel`]).
/// For a given element, the sum over the inner dimension runs in the same
/// order whatever the shape of `dst`, so products over column blocks of a
/// matrix give the same bits as one product over all of it.
///
/// # Panics
/// When the shapes do not chain (`a` is `m × k`, `b` `k × n`, `dst` `m × n`).
pub fn gemm(dst: MatMut<'_>, add: bool, a: MatRef<'_>, b: MatRef<'_>) {
    let accum = if add {
        faer::Accum::Add
    } else {
        faer::Accum::Replace
    };
    faer::linalg::matmul::matmul(dst, accum, a, b, 1.0f32, faer::Par::Seq);
}

/// Runs one small product on the calling thread, so that the thread's
/// packing buffer ([`gemm`]) is allocated now rather than inside a later
/// product: the engine's threads call it when their pool starts.
pub(crate) fn warm_gemm() {
    // 32³ is past the sizes faer multiplies without packing (16³).
    const N: usize = 32;
    let a = [0.0f32; N * N];
    let mut c = [0.0f32; N * N];
    gemm(mat_mut(&mut c, N, N), false, mat(&a, N, N), mat(&a, N, N));
}

/// The kernel [`gemm`] runs on this processor: faer dispatches f32 products
/// to its AVX-512 kernels where the processor has AVX-512F, to its AVX2
/// kernels where it has AVX2 and FMA, and to portable code elsewhere.
pub fn gemm_kernel() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "faer matmul, AVX-512 kernel (private-gemm-x86)";
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return "faer matmul, AVX2+FMA kernel (private-gemm-x86)";
        }
    }
    "faer matmul, portable kernel (gemm)"
}

/// `dst += src`, element-wise: the gradient accumulation kernel. Written as
/// fixed-width chunks so it vectorizes without `unsafe`.
///
/// # Panics
/// When the lengths differ.
#[inline]
pub fn accumulate(dst: &mut [f32], src: &[f32]) {
    assert_eq!(dst.len(), src.len(), "accumulate needs equal lengths");
    // The loop runs with the widest vector instructions the processor has
    // (detected once, at run time): gradient accumulation is bound by
    // memory bandwidth, and the default build only uses 128-bit vectors.
    pulp::Arch::new().dispatch(|| {
        for (x, y) in dst.iter_mut().zip(src) {
            *x += *y;
        }
    });
}

/// `e^x` for f32, within 2 ulp of `f32::exp` on the range that matters
/// (`|x| ≤ 87`), branch-free so loops over slices vectorize: Cody–Waite range
/// reduction and Cephes' minimax polynomial. NaN stays NaN; results below
/// `e^-87.3` are clamped there (about 1e-38).
#[inline(always)]
pub(crate) fn fast_exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // 1.5 · 2^23: adding it rounds to an integer kept in the low mantissa bits.
    const MAGIC: f32 = 12_582_912.0;
    // Plain multiply-adds: `mul_add` is a library call without the FMA
    // target feature, and this must vectorize on baseline x86-64.
    let xc = x.clamp(-87.3, 88.3);
    let t = xc * LOG2E + MAGIC;
    let n = t - MAGIC;
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let mut p = 1.987_569_2e-4f32;
    p = p * r + 1.398_2e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let y = p * r * r + r + 1.0;
    let bits = (t.to_bits() as i32 - MAGIC.to_bits() as i32 + 127) << 23;
    let out = y * f32::from_bits(bits as u32);
    if x.is_nan() { x } else { out }
}

/// `tanh(x)` through [`fast_exp`]: `1 − 2/(e^{2|x|} + 1)` with the sign of
/// `x`; absolute error below 3e-7.
#[inline(always)]
pub(crate) fn fast_tanh(x: f32) -> f32 {
    let a = x.abs().min(10.0);
    let e = fast_exp(2.0 * a);
    let t = 1.0 - 2.0 / (e + 1.0);
    if x.is_nan() { x } else { t.copysign(x) }
}

/// The largest element (−∞ for an empty slice; NaN elements are skipped).
#[inline(always)]
pub(crate) fn max_of(values: &[f32]) -> f32 {
    // The maximum does not depend on the order: as many lanes as a 512-bit
    // vector has.
    const LANES: usize = 16;
    let mut acc = [f32::NEG_INFINITY; LANES];
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            acc[i] = if c[i] > acc[i] { c[i] } else { acc[i] };
        }
    }
    let mut m = rest
        .iter()
        .fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m });
    for a in acc {
        if a > m {
            m = a;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::ArrayD;

    fn set(a: &[f32], b: &[f32]) -> Tensors {
        Tensors::new(vec![
            (
                "a".into(),
                ArrayD::from_shape_vec(IxDyn(&[a.len()]), a.to_vec()).unwrap(),
            ),
            (
                "b".into(),
                ArrayD::from_shape_vec(IxDyn(&[1, b.len()]), b.to_vec()).unwrap(),
            ),
        ])
    }

    #[test]
    fn accumulate_adds_with_remainder() {
        let mut dst: Vec<f32> = (0..37).map(|i| i as f32).collect();
        let src: Vec<f32> = (0..37).map(|i| 2.0 * i as f32).collect();
        accumulate(&mut dst, &src);
        assert!(dst.iter().enumerate().all(|(i, &x)| x == 3.0 * i as f32));
    }

    #[test]
    fn set_kernels() {
        let mut g = set(&[3.0, 0.0], &[4.0]);
        assert_eq!(g.numel(), 3);
        assert_eq!(g.bytes(), 12);
        assert!((g.norm() - 5.0).abs() < 1e-12);
        let other = set(&[1.0, 1.0], &[1.0]);
        g.add_assign(&other);
        assert_eq!(g.get("a").unwrap().as_slice().unwrap(), &[4.0, 1.0]);
        g.scale(0.5);
        assert_eq!(g.get("b").unwrap().as_slice().unwrap(), &[2.5]);
        assert_eq!(g.max_abs_diff(&other), 1.5);
        assert_eq!(g.max_abs(), 2.5);
        g.fill_zero();
        assert_eq!(g.sq_norm(), 0.0);
        assert!(g.all_finite());
        g.get_mut("a").unwrap()[[0]] = f32::INFINITY;
        assert!(!g.all_finite());
        let zeros = other.zeros_like();
        assert!(zeros.same_layout(&other));
        assert_eq!(zeros.sq_norm(), 0.0);
    }

    #[test]
    #[should_panic(expected = "appears twice")]
    fn duplicate_names_are_rejected() {
        let a = ArrayD::zeros(IxDyn(&[1]));
        let _ = Tensors::new(vec![("w".into(), a.clone()), ("w".into(), a)]);
    }

    #[test]
    fn fast_exp_and_tanh_match_std() {
        let mut worst_exp = 0.0f64;
        let mut worst_tanh = 0.0f64;
        let mut x = -87.0f32;
        while x < 88.0 {
            let got = f64::from(fast_exp(x));
            let want = f64::from(x).exp();
            worst_exp = worst_exp.max((got - want).abs() / want);
            x += 0.0137;
        }
        let mut x = -12.0f32;
        while x < 12.0 {
            let got = f64::from(fast_tanh(x));
            worst_tanh = worst_tanh.max((got - f64::from(x).tanh()).abs());
            x += 0.000_731;
        }
        assert!(worst_exp < 3e-7, "exp relative error {worst_exp}");
        assert!(worst_tanh < 3e-7, "tanh absolute error {worst_tanh}");
        assert!(fast_exp(f32::NAN).is_nan() && fast_tanh(f32::NAN).is_nan());
        assert_eq!(fast_exp(0.0), 1.0);
        assert_eq!(fast_tanh(0.0), 0.0);
        assert_eq!(fast_tanh(50.0), 1.0);
        assert_eq!(fast_tanh(-50.0), -1.0);
        assert!(fast_exp(-1000.0) < 1e-37);
    }

    /// A deterministic matrix of `rows × cols` values in ±1.
    fn filled(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
        let mut rng = crate::data::Rng::new(seed, 3);
        (0..rows * cols)
            .map(|_| (rng.next_f64() * 2.0 - 1.0) as f32)
            .collect()
    }

    #[test]
    fn gemm_matches_a_plain_sum() {
        // Replace and add, with transposed operands, against f64 sums.
        for (m, k, n) in [(1, 1, 1), (3, 5, 2), (17, 64, 33), (70, 9, 130)] {
            let a = filled(k, m, 1);
            let b = filled(n, k, 2);
            let start = filled(m, n, 3);
            for add in [false, true] {
                let mut c = start.clone();
                gemm(
                    mat_mut(&mut c, m, n),
                    add,
                    mat(&a, k, m).transpose(),
                    mat(&b, n, k).transpose(),
                );
                for i in 0..m {
                    for j in 0..n {
                        let sum: f64 = (0..k)
                            .map(|p| f64::from(a[p * m + i]) * f64::from(b[j * k + p]))
                            .sum();
                        let want = sum
                            + if add {
                                f64::from(start[i * n + j])
                            } else {
                                0.0
                            };
                        let got = f64::from(c[i * n + j]);
                        assert!(
                            (got - want).abs() <= 1e-5 * (1.0 + want.abs()),
                            "{m}×{k}×{n}, add {add}: c[{i},{j}] = {got}, want {want}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn column_blocks_of_a_product_give_the_same_bits() {
        // What the threads of a model rely on: dst's columns split in blocks,
        // each block its own product, equal bit for bit to one product, for
        // small and large shapes and blocks of any width.
        for (m, k, n) in [(5, 3, 7), (24, 40, 32), (64, 700, 96), (256, 1500, 256)] {
            let a = filled(k, m, 4);
            let b = filled(k, n, 5);
            let start = filled(m, n, 6);
            let mut whole = start.clone();
            gemm(
                mat_mut(&mut whole, m, n),
                true,
                mat(&a, k, m).transpose(),
                mat(&b, k, n),
            );
            for cut in [1, n / 3, n / 2, n - 1] {
                let mut blocks = start.clone();
                let (left, right) = mat_mut(&mut blocks, m, n).split_at_col_mut(cut);
                let (bl, br) = (
                    mat(&b, k, n).subcols(0, cut),
                    mat(&b, k, n).subcols(cut, n - cut),
                );
                gemm(left, true, mat(&a, k, m).transpose(), bl);
                gemm(right, true, mat(&a, k, m).transpose(), br);
                assert!(
                    blocks
                        .iter()
                        .zip(&whole)
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{m}×{k}×{n} cut at column {cut}"
                );
            }
        }
    }

    #[test]
    fn lane_reductions() {
        let v: Vec<f32> = (0..37).map(|i| (i as f32 - 20.0).abs()).collect();
        assert_eq!(max_of(&v), 20.0);
        assert_eq!(max_of(&[]), f32::NEG_INFINITY);
    }
}
