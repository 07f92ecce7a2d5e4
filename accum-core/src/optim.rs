//! Optimizers with PyTorch's semantics: [`Sgd`] (momentum, coupled weight
//! decay) and [`AdamW`] (decoupled weight decay, bias correction).
//!
//! An optimizer sees the group's full gradient once per *applied* update:
//! reduced, normalized, unscaled and clipped (`accum::run::group`, `accum::run::loss-scale`). Its state is allocated
//! lazily at the first step, as PyTorch does, which is why the first update
//! belongs in a memory measurement (`accum::run::memory`).

use crate::settings::{OptimizerKind, OptimizerSection};
use crate::tensor::Tensors;

/// An optimizer: updates parameters in place from a gradient.
#[derive(Clone, Debug, PartialEq)]
pub enum Optimizer {
    /// SGD with momentum.
    Sgd(Sgd),
    /// AdamW.
    AdamW(AdamW),
}

impl Optimizer {
    /// The optimizer a config section describes.
    pub fn from_section(section: &OptimizerSection) -> Optimizer {
        match section.kind {
            OptimizerKind::Sgd => Optimizer::Sgd(Sgd {
                momentum: section.momentum as f32,
                weight_decay: section.weight_decay as f32,
                buf: None,
            }),
            OptimizerKind::AdamW => Optimizer::AdamW(AdamW {
                beta1: section.betas[0],
                beta2: section.betas[1],
                eps: section.eps,
                weight_decay: section.weight_decay,
                step: 0,
                state: None,
            }),
        }
    }

    /// One update with learning rate `lr`.
    pub fn step(&mut self, params: &mut Tensors, grads: &Tensors, lr: f64) {
        self.step_scaled(params, grads, lr, 1.0);
    }

    /// One update with learning rate `lr` from the gradient `factor · grads`,
    /// in one pass over the parameters: the engine folds unscaling and
    /// clipping into `factor` instead of rewriting the gradient first.
    pub fn step_scaled(&mut self, params: &mut Tensors, grads: &Tensors, lr: f64, factor: f32) {
        match self {
            Optimizer::Sgd(o) => o.step(params, grads, lr, factor),
            Optimizer::AdamW(o) => o.step(params, grads, lr, factor),
        }
    }

    /// Bytes of optimizer state currently allocated.
    pub fn state_bytes(&self) -> usize {
        match self {
            Optimizer::Sgd(o) => o.buf.as_ref().map_or(0, Tensors::bytes),
            Optimizer::AdamW(o) => o.state.as_ref().map_or(0, |(m, v)| m.bytes() + v.bytes()),
        }
    }

    /// The state a checkpoint saves: the steps taken (AdamW's bias
    /// correction counts them; SGD's 0) and the state tensors allocated so
    /// far, in order (SGD's momentum buffer; AdamW's first and second
    /// moments), none before the first step.
    pub(crate) fn saved(&self) -> (u64, Vec<&Tensors>) {
        match self {
            Optimizer::Sgd(o) => (0, o.buf.iter().collect()),
            Optimizer::AdamW(o) => (
                u64::try_from(o.step).unwrap_or(0),
                o.state.iter().flat_map(|(m, v)| [m, v]).collect(),
            ),
        }
    }

    /// The state tensors this optimizer holds once it has stepped: 1 for
    /// SGD with momentum, 0 without, 2 for AdamW.
    pub(crate) fn state_tensors(&self) -> usize {
        match self {
            Optimizer::Sgd(o) if o.momentum == 0.0 => 0,
            Optimizer::Sgd(_) => 1,
            Optimizer::AdamW(_) => 2,
        }
    }

    /// Puts back what [`Optimizer::saved`] gave: `tensors` holds no
    /// tensor (before the first step) or [`Optimizer::state_tensors`] of
    /// them; the caller checks the count and each tensor's layout.
    pub(crate) fn restore(&mut self, steps: u64, mut tensors: Vec<Tensors>) {
        match self {
            Optimizer::Sgd(o) => o.buf = tensors.pop(),
            Optimizer::AdamW(o) => {
                o.step = i32::try_from(steps).unwrap_or(i32::MAX);
                o.state = match (tensors.pop(), tensors.pop()) {
                    (Some(v), Some(m)) => Some((m, v)),
                    _ => None,
                };
            }
        }
    }
}

/// SGD with momentum: `g ← g + wd·p`, `buf ← μ·buf + g` (`buf = g` at the
/// first step), `p ← p − lr·buf`. No dampening, no Nesterov.
#[derive(Clone, Debug, PartialEq)]
pub struct Sgd {
    momentum: f32,
    weight_decay: f32,
    buf: Option<Tensors>,
}

impl Sgd {
    fn step(&mut self, params: &mut Tensors, grads: &Tensors, lr: f64, factor: f32) {
        let lr = lr as f32;
        let (mu, wd) = (self.momentum, self.weight_decay);
        if mu == 0.0 {
            for (p, g) in params.slices_mut().zip(grads.slices()) {
                for (p, &g) in p.iter_mut().zip(g) {
                    *p -= lr * (g * factor + wd * *p);
                }
            }
            return;
        }
        let first = self.buf.is_none();
        let buf = self.buf.get_or_insert_with(|| grads.zeros_like());
        for ((p, g), b) in params
            .slices_mut()
            .zip(grads.slices())
            .zip(buf.slices_mut())
        {
            for ((p, &g), b) in p.iter_mut().zip(g).zip(b.iter_mut()) {
                let d = g * factor + wd * *p;
                *b = if first { d } else { mu * *b + d };
                *p -= lr * *b;
            }
        }
    }
}

/// AdamW (Loshchilov & Hutter), PyTorch's `torch.optim.AdamW`:
/// `p ← p·(1 − lr·wd)`; `m ← β1·m + (1−β1)·g`; `v ← β2·v + (1−β2)·g²`;
/// `p ← p − (lr / (1−β1^t)) · m / (√v / √(1−β2^t) + eps)`.
#[derive(Clone, Debug, PartialEq)]
pub struct AdamW {
    beta1: f64,
    beta2: f64,
    eps: f64,
    weight_decay: f64,
    step: i32,
    state: Option<(Tensors, Tensors)>,
}

impl AdamW {
    fn step(&mut self, params: &mut Tensors, grads: &Tensors, lr: f64, factor: f32) {
        self.step = self.step.saturating_add(1);
        let (m, v) = self
            .state
            .get_or_insert_with(|| (grads.zeros_like(), grads.zeros_like()));
        let bc1 = 1.0 - self.beta1.powi(self.step);
        let bc2_sqrt = (1.0 - self.beta2.powi(self.step)).sqrt();
        let step_size = (lr / bc1) as f32;
        let decay = (1.0 - lr * self.weight_decay) as f32;
        let (b1, b2, eps) = (self.beta1 as f32, self.beta2 as f32, self.eps as f32);
        let inv_bc2_sqrt = (1.0 / bc2_sqrt) as f32;
        // One pass over parameters, gradient and both moments, with the
        // widest vector unit the processor has.
        let arch = pulp::Arch::new();
        for (((p, g), m), v) in params
            .slices_mut()
            .zip(grads.slices())
            .zip(m.slices_mut())
            .zip(v.slices_mut())
        {
            arch.dispatch(|| {
                for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
                    let g = g * factor;
                    *p *= decay;
                    *m = b1 * *m + (1.0 - b1) * g;
                    *v = b2 * *v + (1.0 - b2) * g * g;
                    let denom = v.sqrt() * inv_bc2_sqrt + eps;
                    *p -= step_size * *m / denom;
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn};

    fn one(values: &[f32]) -> Tensors {
        Tensors::new(vec![(
            "p".into(),
            ArrayD::from_shape_vec(IxDyn(&[values.len()]), values.to_vec()).unwrap(),
        )])
    }

    fn get(t: &Tensors) -> Vec<f32> {
        t.value(0).as_slice().unwrap().to_vec()
    }

    #[test]
    fn adamw_matches_pytorch_by_hand() {
        // Two steps of torch.optim.AdamW(lr=0.1, betas=(0.9, 0.999), eps=1e-8,
        // weight_decay=0.01) on p=[1.0, -2.0] with g=[0.5, 0.1] then [0.5, -0.3],
        // computed by hand from the update rule.
        let section = OptimizerSection {
            lr: 0.1,
            weight_decay: 0.01,
            ..OptimizerSection::default()
        };
        let mut opt = Optimizer::from_section(&section);
        let mut p = one(&[1.0, -2.0]);
        opt.step(&mut p, &one(&[0.5, 0.1]), 0.1);
        // Step 1: m̂/√v̂ = sign(g) → p = p(1 − 0.001) − 0.1·sign(g).
        let after1 = get(&p);
        assert!((after1[0] - (0.999 - 0.1)).abs() < 1e-6, "{after1:?}");
        assert!((after1[1] - (-1.998 - 0.1)).abs() < 1e-6, "{after1:?}");
        opt.step(&mut p, &one(&[0.5, -0.3]), 0.1);
        let expect = |p0: f64, g1: f64, g2: f64| {
            let m = 0.9 * (0.1 * g1) + 0.1 * g2;
            let v = 0.999 * (0.001 * g1 * g1) + 0.001 * g2 * g2;
            let mhat = m / (1.0 - 0.81);
            let denom = v.sqrt() / (1.0 - 0.999f64.powi(2)).sqrt() + 1e-8;
            p0 * (1.0 - 0.001) - 0.1 * mhat / denom
        };
        let after2 = get(&p);
        assert!((f64::from(after2[0]) - expect(f64::from(after1[0]), 0.5, 0.5)).abs() < 1e-5);
        assert!((f64::from(after2[1]) - expect(f64::from(after1[1]), 0.1, -0.3)).abs() < 1e-5);
        assert_eq!(opt.state_bytes(), 2 * 2 * 4);
    }

    #[test]
    fn sgd_momentum_matches_pytorch_by_hand() {
        let section = OptimizerSection {
            kind: OptimizerKind::Sgd,
            momentum: 0.9,
            weight_decay: 0.0,
            ..OptimizerSection::default()
        };
        let mut opt = Optimizer::from_section(&section);
        assert_eq!(opt.state_bytes(), 0);
        let mut p = one(&[1.0]);
        opt.step(&mut p, &one(&[1.0]), 0.1); // buf = 1 → p = 0.9
        opt.step(&mut p, &one(&[1.0]), 0.1); // buf = 1.9 → p = 0.71
        assert!((get(&p)[0] - 0.71).abs() < 1e-6);
        assert_eq!(opt.state_bytes(), 4);

        let plain = OptimizerSection {
            momentum: 0.0,
            weight_decay: 0.5,
            ..section
        };
        let mut opt = Optimizer::from_section(&plain);
        let mut p = one(&[2.0]);
        opt.step(&mut p, &one(&[1.0]), 0.1); // g + wd·p = 2 → p = 1.8
        assert!((get(&p)[0] - 1.8).abs() < 1e-6);
        assert_eq!(opt.state_bytes(), 0);
    }
}
