//! The threaded loop against the large batch, against itself, and against
//! its own lengths.

use accum::Updates;
use accum::driver::{Driver, DriverNote};
use accum::plan::Plan;

use accum_threads_example::{Config, data, gradient, load, train};

fn shipped() -> (Config, Plan) {
    load(include_str!("../config.toml")).expect("the shipped config is valid")
}

#[test]
fn the_config_plans_four_ranks_from_eight_devices() {
    let (_, plan) = shipped();
    // 8 devices / tensor parallel 2 = 4 ranks; 24 = 2 × A × 4, so A = 3.
    let factors = (plan.micro_batch(), plan.accumulation(), plan.replicas());
    assert_eq!(factors, (2, 3, 4));
    assert_eq!(
        plan.layout().map(|l| (l.world_size, l.tensor)),
        Some((8, 2))
    );
    // Counting the tensor-parallel devices as ranks is refused.
    let text = include_str!("../config.toml").replace("tensor_parallel = 2", "tensor_parallel = 3");
    let err = load(&text).unwrap_err().to_string();
    assert!(err.contains("parallel.world_size"), "{err}");
}

#[test]
fn the_accumulated_gradient_equals_the_large_batch() {
    let (config, plan) = shipped();
    let data = data(200);
    let run = train(&config, plan, &data).unwrap();
    // The large batch: the same 24 examples (the same seed deals the same
    // group whatever its split) in one microbatch on one replica.
    let large = Plan::new(24, 1, 1).unwrap();
    let mut driver = Driver::builder(large, data.len())
        .seed(config.seed)
        .build()
        .unwrap();
    let group = driver.next_group().unwrap().unwrap();
    let ids: Vec<usize> = group.ids().collect();
    let tokens: usize = ids.iter().map(|&id| data[id].len()).sum();
    let want = gradient(&data, &ids, (0.0, 0.0), tokens as f64);
    for (got, want) in run.first_gradient.iter().zip(want) {
        assert!(
            ((got - want) / want).abs() < 1e-14,
            "accumulated {got} vs large batch {want}"
        );
    }
    // And the loss falls: the line is learnt.
    let (w, b) = run.params;
    assert!(
        (w - 3.0).abs() < 0.1 && (b + 1.0).abs() < 0.1,
        "w = {w}, b = {b}"
    );
    assert!(run.losses.last().unwrap() < &(run.losses[0] / 100.0));
}

#[test]
fn two_runs_are_bit_identical() {
    let (config, plan) = shipped();
    let data = data(200);
    let bits = |run: &accum_threads_example::Run| {
        let mut bits = vec![run.params.0.to_bits(), run.params.1.to_bits()];
        bits.extend(run.first_gradient.iter().map(|g| g.to_bits()));
        bits.extend(run.losses.iter().map(|l| l.to_bits()));
        bits.extend(run.rates.iter().map(|(_, r)| r.to_bits()));
        bits
    };
    let first = train(&config, plan, &data).unwrap();
    for _ in 0..3 {
        assert_eq!(bits(&train(&config, plan, &data).unwrap()), bits(&first));
    }
}

#[test]
fn the_warmup_in_tokens_ends_where_the_real_tokens_cross_it() {
    let (config, plan) = shipped();
    let run = train(&config, plan, &data(200)).unwrap();
    let warmup = config.optim.warmup.value();
    // Before each update: the tokens trained so far; the warmup's rate is
    // their share of the warmup's 2,000, until the update that crosses it.
    let crossing = run.rates.iter().position(|&(t, _)| t >= warmup).unwrap();
    for &(tokens, rate) in &run.rates[..crossing] {
        assert!((rate - 0.8 * tokens as f64 / warmup as f64).abs() < 1e-15);
    }
    assert_eq!(run.rates[crossing].1, 0.8);
    assert_eq!(run.warmup_end, Updates::new(crossing as u64));
    // The run ends on the update whose examples reach 3,600: 200 examples
    // an epoch are 8 groups of 24 and a partial one of 8, so 18 epochs of
    // 9 updates, not the 150 updates of 24 that the plan converts it to.
    let p = run.progress;
    assert_eq!(
        (p.examples.get(), p.updates.get(), p.partial),
        (3600, 162, 18)
    );
    assert_eq!(
        run.notes[0],
        DriverNote::PartialGroups {
            updates: 18,
            short: 18 * 16
        }
    );
    assert!(matches!(
        run.notes.get(1),
        Some(DriverNote::TotalOvershot { .. }) | None
    ));
    assert_eq!(run.log.len() as u64, p.updates.get() / 10);
}
