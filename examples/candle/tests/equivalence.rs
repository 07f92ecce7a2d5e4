//! The candle loop driven by accum: the accumulated gradient of a group
//! equals the large-batch gradient of the same examples (`accum::run::normalization`, `accum::verify::equivalence`, `accum::verify::preflight`),
//! with variable lengths, padding and unsupervised prompt positions, over
//! replicas on threads; and the loss falls when it trains.

use accum::Updates;
use accum::driver::epoch_order;
use accum::plan::Plan;
use accum::settings::LossScaleSettings;
use accum_candle_example::{
    Corpus, ModelConfig, RunConfig, first_group_gradient, relative_difference, train,
};

const SEED: u64 = 11;

#[test]
fn accumulated_gradients_equal_the_large_batch_gradient() {
    let corpus = Corpus::shipped();
    // The first group of B = 8 examples is the same for every split of B:
    // the epoch order depends on the seed and the data only. Its examples
    // have different lengths, so every microbatch is padded differently.
    let first: Vec<usize> = epoch_order(corpus.examples.len(), SEED, 0)[..8].to_vec();
    let lengths: std::collections::BTreeSet<usize> =
        first.iter().map(|&id| corpus.examples[id].len()).collect();
    assert!(lengths.len() >= 4, "lengths vary: {lengths:?}");

    let large = first_group_gradient(&corpus, Plan::new(8, 1, 1).unwrap(), SEED).unwrap();
    let norm: f64 = large
        .iter()
        .map(|g| f64::from(*g).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(norm > 1e-3, "a real gradient: ‖g‖ = {norm}");
    for (m, a, d) in [(2, 4, 1), (1, 8, 1), (2, 2, 2), (4, 1, 2), (1, 4, 2)] {
        let plan = Plan::new(m, a, d).unwrap();
        let accumulated = first_group_gradient(&corpus, plan, SEED).unwrap();
        let rel = relative_difference(&accumulated, &large);
        assert!(rel < 1e-5, "{plan}: relative difference {rel:e}");
        println!("{plan}: relative difference {rel:.2e}");
    }
    // The comparison can fail: another group's gradient is far away.
    let other = first_group_gradient(&corpus, Plan::new(8, 1, 1).unwrap(), SEED + 1).unwrap();
    assert!(relative_difference(&other, &large) > 0.05);
}

#[test]
fn the_loss_falls_with_two_replicas_and_four_microbatches() {
    let corpus = Corpus::shipped();
    let config = RunConfig {
        plan: Plan::new(2, 4, 2).unwrap(),
        updates: Updates::new(60),
        warmup: "64 examples".parse().unwrap(),
        lr: 3e-2,
        seed: SEED,
        model: ModelConfig {
            hidden: 16,
            ffn: 32,
            seed: 5,
        },
        loss_scale: LossScaleSettings {
            init: 1024.0,
            growth_interval: 20,
            ..LossScaleSettings::default()
        },
        log_every: None,
    };
    let report = train(&corpus, &config).unwrap();
    assert_eq!((report.applied, report.skipped), (60, 0));
    assert_eq!(report.losses.len(), 60);
    // Three clean streaks of 20: the scale doubled three times.
    assert_eq!(report.loss_scale, 8192.0);
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let (start, end) = (mean(&report.losses[..10]), mean(&report.losses[50..]));
    assert!(end < start - 0.5, "loss {start:.3} → {end:.3}");
    println!("loss {start:.3} → {end:.3}");
    // 39 examples = 2 full groups of 16 and a partial one of 7, processed
    // (`accum::plan::partial-group`): 3 updates per epoch, so 60 updates are 20 epochs, and every
    // supervised token was trained on 20 times.
    assert_eq!(corpus.examples.len(), 39);
    let per_epoch: u64 = (0..corpus.examples.len())
        .map(|id| corpus.supervised(id))
        .sum();
    assert_eq!(report.tokens, 20 * per_epoch);
}
