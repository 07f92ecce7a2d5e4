//! The character model as a burn `Module`, and a padded microbatch as burn
//! tensors.
//!
//! `h = tanh(E[x] · W1 + b1)`, `logits = h · W2 + b2`, the next
//! character's cross-entropy at each position. A microbatch is padded to its
//! longest example; each position carries a loss weight, 0 on padding and on
//! the prompt, so one forward pass gives any normalization: the driver's
//! `1 / tokens of the group`, or burn-style `1 / tokens of the microbatch`.

use accum::engine::Rng;
use burn::module::{Module, Param};
use burn::optim::GradientsParams;
use burn::tensor::activation::log_softmax;
use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::corpus::{Corpus, PROMPT};

/// Model sizes and the initialization seed.
#[derive(burn::config::Config, Debug, PartialEq, schemars::JsonSchema)]
pub struct ModelConfig {
    /// Embedding width.
    #[config(default = 16)]
    pub hidden: usize,
    /// Hidden layer width.
    #[config(default = 32)]
    pub ffn: usize,
    /// Seed of the initial parameters: every replica starts from the same.
    #[config(default = 3)]
    pub seed: u64,
}

/// The character model's parameters.
#[derive(Module, Debug)]
pub struct CharModel {
    embed: Param<Tensor<2>>,
    w1: Param<Tensor<2>>,
    b1: Param<Tensor<1>>,
    w2: Param<Tensor<2>>,
    b2: Param<Tensor<1>>,
}

impl CharModel {
    /// A model over `vocab` characters on `device`, initialized from
    /// `config.seed` with accum's generator (not burn's, whose state is per
    /// device and process): embedding `N(0, 1)`, linear layers uniform in
    /// `±1/√fan_in`. Every call with the same arguments gives the same
    /// values, so replicas on threads start equal.
    pub fn new(vocab: usize, config: &ModelConfig, device: &Device) -> CharModel {
        let mut rng = Rng::new(config.seed, 1);
        let (h, f) = (config.hidden, config.ffn);
        let mut values = |n: usize, bound: Option<f64>| -> Vec<f32> {
            (0..n)
                .map(|_| match bound {
                    None => rng.normal() as f32,
                    Some(bound) => ((rng.next_f64() * 2.0 - 1.0) * bound) as f32,
                })
                .collect()
        };
        let in_h = Some(1.0 / (h as f64).sqrt());
        let in_f = Some(1.0 / (f as f64).sqrt());
        let matrix = |v: Vec<f32>, rows: usize, cols: usize| {
            Param::from_tensor(Tensor::<2>::from_data(
                TensorData::new(v, [rows, cols]),
                device,
            ))
        };
        let vector = |v: Vec<f32>| {
            let n = v.len();
            Param::from_tensor(Tensor::<1>::from_data(TensorData::new(v, [n]), device))
        };
        CharModel {
            embed: matrix(values(vocab * h, None), vocab, h),
            w1: matrix(values(h * f, in_h), h, f),
            b1: vector(values(f, in_h)),
            w2: matrix(values(f * vocab, in_f), f, vocab),
            b2: vector(values(vocab, in_f)),
        }
    }

    /// The summed, weighted cross-entropy of a padded microbatch:
    /// `Σ weight · (−log p(label))` over its positions, a `[1]` tensor.
    pub fn weighted_loss(&self, batch: &PaddedBatch) -> Tensor<1> {
        let x = self.embed.val().select(0, batch.tokens.clone());
        let h = (x.matmul(self.w1.val()) + self.b1.val().unsqueeze_dim(0)).tanh();
        let logits = h.matmul(self.w2.val()) + self.b2.val().unsqueeze_dim(0);
        let logp = log_softmax(logits, 1);
        let picked: Tensor<2> = logp.gather(1, batch.labels.clone().unsqueeze_dim(1));
        let picked: Tensor<1> = picked.reshape([batch.positions]);
        (picked * batch.weights.clone()).sum().neg()
    }

    /// The gradients of `grads` as flat `f32` buffers, one per parameter in
    /// order (embedding, w1, b1, w2, b2), zeros for a parameter it lacks (a
    /// replica without a microbatch in a partial group).
    pub fn flatten(&self, grads: &GradientsParams) -> Vec<Vec<f32>> {
        fn flat<const D: usize>(param: &Param<Tensor<D>>, grads: &GradientsParams) -> Vec<f32> {
            match grads.get::<D>(param.id) {
                Some(g) => g
                    .into_data()
                    .try_to_vec::<f32>()
                    .expect("a gradient of an f32 parameter is f32"),
                None => vec![0.0; param.val().shape().num_elements()],
            }
        }
        vec![
            flat(&self.embed, grads),
            flat(&self.w1, grads),
            flat(&self.b1, grads),
            flat(&self.w2, grads),
            flat(&self.b2, grads),
        ]
    }

    /// Flat buffers, in the order of [`CharModel::flatten`], as burn
    /// gradients for the optimizer, on `device` (without autodiff).
    pub fn gradients(&self, flat: &[Vec<f32>], device: &Device) -> GradientsParams {
        fn put<const D: usize>(
            param: &Param<Tensor<D>>,
            values: &[f32],
            device: &Device,
            grads: &mut GradientsParams,
        ) {
            let shape = param.val().shape();
            let tensor = Tensor::<D>::from_data(TensorData::new(values.to_vec(), shape), device);
            grads.register::<D>(param.id, tensor);
        }
        let mut grads = GradientsParams::new();
        let [embed, w1, b1, w2, b2] = flat else {
            panic!("the model has five parameters, got {} buffers", flat.len());
        };
        put(&self.embed, embed, device, &mut grads);
        put(&self.w1, w1, device, &mut grads);
        put(&self.b1, b1, device, &mut grads);
        put(&self.w2, w2, device, &mut grads);
        put(&self.b2, b2, device, &mut grads);
        grads
    }
}

/// One microbatch as burn tensors, padded to its longest example and
/// flattened to positions.
#[derive(Clone, Debug)]
pub struct PaddedBatch {
    /// Input ids, `[m·L]`.
    pub tokens: Tensor<1, Int>,
    /// Next-character ids, `[m·L]` (0 where padded).
    pub labels: Tensor<1, Int>,
    /// Each position's loss weight, `[m·L]`: `weight` where supervised, 0
    /// on padding and prompts.
    pub weights: Tensor<1>,
    /// `m·L`.
    pub positions: usize,
}

impl PaddedBatch {
    /// The examples `ids` of `corpus`, each supervised token weighted
    /// `weight`, on `device`.
    pub fn new(corpus: &Corpus, ids: &[usize], weight: f32, device: &Device) -> PaddedBatch {
        let len = ids
            .iter()
            .map(|&id| corpus.positions(id))
            .max()
            .unwrap_or(0);
        let n = ids.len() * len;
        let (mut tokens, mut labels, mut weights) = (vec![0i64; n], vec![0i64; n], vec![0f32; n]);
        for (row, &id) in ids.iter().enumerate() {
            let chars = &corpus.examples[id];
            for t in 0..corpus.positions(id) {
                let at = row * len + t;
                tokens[at] = i64::from(chars[t]);
                labels[at] = i64::from(chars[t + 1]);
                if t >= PROMPT {
                    weights[at] = weight;
                }
            }
        }
        PaddedBatch {
            tokens: Tensor::from_data(TensorData::new(tokens, [n]), device),
            labels: Tensor::from_data(TensorData::new(labels, [n]), device),
            weights: Tensor::from_data(TensorData::new(weights, [n]), device),
            positions: n,
        }
    }
}
