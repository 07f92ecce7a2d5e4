//! The burn loop driven by accum: the accumulated gradient of a group
//! equals the large-batch gradient of the same examples
//! (accum::verify::equivalence), with variable lengths, padding and
//! unsupervised prompt positions, over replicas on threads; and the loss
//! falls when it trains.

use std::collections::BTreeSet;

use accum::driver::epoch_order;
use accum::settings::LossScaleSettings;
use accum_burn_example::{
    BatchConfig, Corpus, ModelConfig, TrainConfig, first_group_gradient, relative_difference, train,
};
use burn::optim::AdamWConfig;

const SEED: u64 = 11;

#[test]
fn accumulated_gradients_equal_the_large_batch_gradient() {
    let corpus = Corpus::shipped();
    // The first group of B = 8 examples is the same for every split of B:
    // the epoch order depends on the seed and the data only. Its examples
    // have different lengths, so every microbatch is padded differently.
    let first: Vec<usize> = epoch_order(corpus.examples.len(), SEED, 0)[..8].to_vec();
    let lengths: BTreeSet<usize> = first.iter().map(|&id| corpus.examples[id].len()).collect();
    assert!(lengths.len() >= 4, "lengths vary: {lengths:?}");

    let large = first_group_gradient(&corpus, (8, 1, 1), SEED).unwrap();
    let norm: f64 = large
        .iter()
        .map(|g| f64::from(*g).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(norm > 1e-3, "a real gradient: ‖g‖ = {norm}");
    // m = 2, A = 4 (the acceptance case), then other splits of the same 8
    // examples, over one and two replicas.
    for mad in [
        (2, 4, 1),
        (2, 2, 2),
        (1, 8, 1),
        (4, 1, 2),
        (1, 4, 2),
        (4, 2, 1),
    ] {
        let accumulated = first_group_gradient(&corpus, mad, SEED).unwrap();
        let rel = relative_difference(&accumulated, &large);
        println!("m·A·D = {mad:?}: relative difference {rel:.2e}");
        assert!(rel < 1e-5, "m·A·D = {mad:?}: relative difference {rel:e}");
    }
    // The comparison can fail: another group's gradient is far away.
    let other = first_group_gradient(&corpus, (8, 1, 1), SEED + 1).unwrap();
    assert!(relative_difference(&other, &large) > 0.05);
}

#[test]
fn the_loss_falls_with_two_replicas_and_four_microbatches() {
    let corpus = Corpus::shipped();
    let config = TrainConfig::new(
        BatchConfig::new(2).with_global_batch(Some(16)),
        2,
        "60 updates".parse().unwrap(),
        "64 examples".parse().unwrap(),
        "20 updates".parse().unwrap(),
        3e-2,
        SEED,
        AdamWConfig::new().with_weight_decay(0.0),
        ModelConfig::new().with_seed(5),
        LossScaleSettings {
            init: 1024.0,
            growth_interval: 20,
            ..LossScaleSettings::default()
        },
    );
    let report = train(&corpus, &config, false).unwrap();
    let plan = report.plan;
    assert_eq!(plan.accumulation(), 4, "A = B / (m·D) = 16 / 4");
    assert_eq!((report.applied, report.skipped), (60, 0));
    assert_eq!(report.losses.len(), 60);
    // Three clean streaks of 20: the scale doubled three times.
    assert_eq!(report.loss_scale, 8192.0);
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let (start, end) = (mean(&report.losses[..10]), mean(&report.losses[50..]));
    println!("loss {start:.3} → {end:.3}");
    assert!(end < start - 0.5, "loss {start:.3} → {end:.3}");
    // accum's cosine schedule reached burn's optimizer: 64 examples of warmup
    // are 4 updates of 16, rising to the peak, then decaying to the end.
    assert_eq!(report.lrs.len(), 60);
    let peak = report.lrs.iter().copied().fold(0.0, f64::max);
    assert!((peak - 3e-2).abs() < 1e-12, "peak {peak}");
    assert!(
        report.lrs[0] < report.lrs[3],
        "warmup rises: {:?}",
        &report.lrs[..4]
    );
    assert!(
        report.lrs[59] < 0.01 * peak,
        "cosine ends low: {}",
        report.lrs[59]
    );
    // 39 examples = 2 full groups of 16 and a partial one of 7, processed:
    // 3 updates per epoch, so 60 updates are 20 epochs, and every supervised
    // token was trained on 20 times.
    assert_eq!(corpus.examples.len(), 39);
    let per_epoch: u64 = (0..corpus.examples.len())
        .map(|id| corpus.supervised(id))
        .sum();
    assert_eq!(report.tokens, 20 * per_epoch);
}

#[test]
fn a_replica_without_a_microbatch_in_a_partial_group_takes_part() {
    // 17 examples, B = 16 over D = 2: the second group holds one example,
    // so one replica has no microbatch; it still joins the all-reduce
    // (with zeros) and the update is applied on both.
    let mut corpus = Corpus::shipped();
    corpus.examples.truncate(17);
    let config = TrainConfig::new(
        BatchConfig::new(2).with_accumulation(Some(4)),
        2,
        "2 updates".parse().unwrap(),
        "0 updates".parse().unwrap(),
        "1 update".parse().unwrap(),
        1e-2,
        SEED,
        AdamWConfig::new().with_weight_decay(0.0),
        ModelConfig::new(),
        LossScaleSettings {
            init: 1024.0,
            ..LossScaleSettings::default()
        },
    );
    // The driver's own view of rank 1's second group: no microbatch.
    let plan = accum::plan::Plan::new(2, 4, 2).unwrap();
    let mut rank1 = accum::driver::Driver::builder(plan, 17)
        .seed(SEED)
        .rank(1)
        .build()
        .unwrap();
    let mut first = rank1.next_group().unwrap().unwrap();
    first.count_all(|id| corpus.supervised(id));
    rank1
        .finish(first, accum::driver::Outcome::Applied)
        .unwrap();
    let second = rank1.next_group().unwrap().unwrap();
    assert_eq!(second.microbatches().len(), 0);
    assert_eq!(second.examples().get(), 1);

    let report = train(&corpus, &config, false).unwrap();
    assert_eq!((report.applied, report.skipped), (2, 0));
    let all: Vec<usize> = (0..corpus.examples.len()).collect();
    assert_eq!(report.tokens, corpus.supervised_of(&all));
    assert!(report.losses.iter().all(|l| l.is_finite() && *l > 0.0));
}
