//! What burn's built-in accumulation computes for per-microbatch mean
//! losses of different lengths, against the large batch of the same
//! examples, and accum's driver denominator making it exact
//! (accum::run::normalization). The code under test cites burn's source:
//! src/burn_accumulation.rs.

use std::collections::BTreeSet;

use accum::plan::Plan;
use accum_burn_example::burn_accumulation::{Measured, measure};
use accum_burn_example::{Corpus, ModelConfig, relative_difference};

const SEED: u64 = 11;

fn norm(g: &[f32]) -> f64 {
    g.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt()
}

/// The shipped lines cut to lengths from 6 to 45 characters: microbatches
/// whose supervised tokens differ several times over.
fn ragged() -> Corpus {
    let mut corpus = Corpus::shipped();
    for (i, example) in corpus.examples.iter_mut().enumerate() {
        example.truncate(6 + (i * 17) % 40);
    }
    corpus
}

#[test]
fn burn_sums_per_microbatch_means_and_the_driver_denominator_is_exact() {
    // Three splits of groups of 8 examples into microbatches of different
    // supervised lengths, the case where a mean of means is not the mean:
    // on the shipped lines (similar lengths) and on ragged ones.
    let cases = [(Corpus::shipped(), "shipped"), (ragged(), "ragged")];
    for ((corpus, name), (m, a)) in cases
        .iter()
        .flat_map(|c| [(2, 4), (1, 8), (4, 2)].map(|split| (c, split)))
    {
        let measured = measure(
            corpus,
            Plan::new(m, a, 1).unwrap(),
            SEED,
            &ModelConfig::new(),
        );
        let measured = measured.unwrap();
        assert_eq!(measured.microbatches.len() as u64, a);
        let distinct: BTreeSet<u64> = measured.tokens.iter().copied().collect();
        assert!(
            distinct.len() >= 2,
            "tokens per microbatch: {:?}",
            measured.tokens
        );

        let summed = relative_difference(&measured.burn_summed, &measured.large);
        let averaged = relative_difference(&measured.burn_averaged, &measured.large);
        let driver = relative_difference(&measured.driver, &measured.large);
        let ratio = norm(&measured.burn_summed) / norm(&measured.large);
        println!(
            "{name}: m = {m}, A = {a}, tokens per microbatch {:?}: relative difference to the \
             large batch: burn's sum {summed:.3} (‖sum‖/‖large‖ = {ratio:.3}), \
             sum / A {averaged:.2e}, driver {driver:.1e}",
            measured.tokens
        );
        // burn's sum is about A times the large batch.
        assert!(
            (ratio - a as f64).abs() < 0.05 * a as f64,
            "‖sum‖ / ‖large‖ = {ratio}"
        );
        assert!(summed > 0.9 * (a - 1) as f64, "burn's sum: {summed}");
        // Divided by A, it is still the mean of means, which weighs a short
        // microbatch's tokens more than a long one's: hundreds of times the
        // f32 rounding the driver's path shows.
        assert!(averaged > 1e-3, "sum / A: {averaged:e}");
        assert!(
            averaged > 100.0 * driver,
            "sum / A {averaged:e}, driver {driver:e}"
        );
        // accum's denominator, counted over the group before the first
        // backward pass, through the same GradientsAccumulator: the large
        // batch within f32 rounding.
        assert!(driver < 1e-5, "driver: {driver:e}");
        burn_is_the_sum_of_microbatch_means(corpus, &measured);
    }
}

/// burn's sum, term by term, is `Σ_k (1/n_k) Σ_{t∈k} ∇ℓ_t`: rebuilt from
/// each microbatch's own per-token mean gradient, it matches burn's path.
fn burn_is_the_sum_of_microbatch_means(corpus: &Corpus, measured: &Measured) {
    let mut rebuilt = vec![0.0f32; measured.large.len()];
    for ids in &measured.microbatches {
        // A corpus of exactly these examples, as one large batch: its
        // `large` is the microbatch's per-token mean gradient.
        let alone = Corpus {
            examples: ids.iter().map(|&id| corpus.examples[id].clone()).collect(),
            vocab: corpus.vocab,
        };
        let plan = Plan::new(ids.len() as u64, 1, 1).unwrap();
        let mean = measure(&alone, plan, SEED, &ModelConfig::new())
            .unwrap()
            .large;
        for (r, g) in rebuilt.iter_mut().zip(&mean) {
            *r += g;
        }
    }
    let rel = relative_difference(&rebuilt, &measured.burn_summed);
    assert!(
        rel < 1e-5,
        "burn's sum rebuilt from microbatch means: {rel:e}"
    );
}
