//! One gate: a derived config hands out a plan exactly when `validate()`
//! finds no error, for any value of the config (the derived path, with
//! `replicas`, `tensor_parallel` and `world_size` roles, optional fields and
//! lengths in every unit, and the built-in `TrainingConfig` with its engine
//! sections), and the warnings of a valid plan stay beside it.

use accum::config::TrainingConfig;
use accum::{AccumConfig, Code, Span, UnitKind, Updates};
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A fine-tune config as a user writes it: nested sections, parallel
/// degrees, a warmup and a run length in any unit, an interval in updates.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
struct FineTune {
    #[accum(nested)]
    batch: Batch,
    #[accum(nested)]
    parallel: Option<Parallel>,
    #[accum(nested)]
    optim: Optim,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(section)]
struct Batch {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: Option<u32>,
    #[accum(global_batch)]
    global_batch: Option<u32>,
    #[accum(seq_len)]
    seq_len: Option<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(section)]
struct Parallel {
    #[accum(replicas)]
    replicas: Option<u32>,
    #[accum(tensor_parallel)]
    tensor_parallel: Option<u32>,
    #[accum(world_size)]
    world_size: Option<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(section)]
struct Optim {
    #[accum(warmup)]
    warmup: Option<Span>,
    #[accum(total)]
    total: Option<Span>,
    #[accum(every)]
    eval_every: Option<Updates>,
}

fn small() -> impl Strategy<Value = u32> {
    // Zero is a value users write by mistake; small numbers make layouts
    // that divide and global batches that fit often enough.
    prop_oneof![Just(0u32), 1u32..=8]
}

fn unit() -> impl Strategy<Value = UnitKind> {
    prop_oneof![
        Just(UnitKind::Update),
        Just(UnitKind::Microbatch),
        Just(UnitKind::Example),
        Just(UnitKind::Token),
    ]
}

fn span() -> impl Strategy<Value = Span> {
    (0u64..20_000, unit()).prop_map(|(value, unit)| Span::new(value, unit))
}

fn fine_tune() -> impl Strategy<Value = FineTune> {
    let batch = (
        small(),
        proptest::option::of(small()),
        proptest::option::of(0u32..=512),
        proptest::option::of(prop_oneof![Just(0u32), Just(16), Just(128)]),
    )
        .prop_map(|(micro_batch, accumulation, global_batch, seq_len)| Batch {
            micro_batch,
            accumulation,
            global_batch,
            seq_len,
        });
    let parallel = proptest::option::of(
        (
            proptest::option::of(small()),
            proptest::option::of(small()),
            proptest::option::of(prop_oneof![Just(0u32), 1u32..=16]),
        )
            .prop_map(|(replicas, tensor_parallel, world_size)| Parallel {
                replicas,
                tensor_parallel,
                world_size,
            }),
    );
    let optim = (
        proptest::option::of(span()),
        proptest::option::of(span()),
        proptest::option::of((0u64..500).prop_map(Updates::new)),
    )
        .prop_map(|(warmup, total, eval_every)| Optim {
            warmup,
            total,
            eval_every,
        });
    (batch, parallel, optim).prop_map(|(batch, parallel, optim)| FineTune {
        batch,
        parallel,
        optim,
    })
}

/// What a config's data-parallel replicas are, worked out here from the
/// fields rather than by accum: `replicas`, or `world_size / tp`.
fn replicas_of(config: &FineTune) -> Option<u64> {
    let parallel = config.parallel.as_ref()?;
    let from_layout = parallel.world_size.map(|world| {
        let tp = parallel.tensor_parallel.unwrap_or(1);
        u64::from(world) / u64::from(tp)
    });
    parallel.replicas.map(u64::from).or(from_layout)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// `plan()` and `staged_plan()` succeed exactly when `validate()`
    /// finds no error, refuse with the same findings, and a plan they give
    /// is the one the fields describe.
    #[test]
    fn a_plan_exactly_when_validate_finds_no_error(config in fine_tune()) {
        let validated = config.validate();
        let plan = config.plan();
        let staged = config.staged_plan();
        prop_assert_eq!(plan.is_ok(), validated.is_ok(), "{:?} / {:?}", plan, validated);
        prop_assert_eq!(staged.is_ok(), validated.is_ok());
        match (&validated, &plan) {
            (Err(findings), Err(refused)) => {
                prop_assert!(findings.has_errors());
                prop_assert_eq!(findings, refused);
            }
            (Ok(warnings), Ok(plan)) => {
                prop_assert!(!warnings.has_errors());
                let checked = config.checked().expect("validate found no error");
                prop_assert_eq!(checked.warnings(), warnings);
                prop_assert_eq!(checked.plan(), plan);
                // The plan is the fields' own arithmetic: D from the
                // replicas or the layout, B = m·A·D.
                let d = replicas_of(&config).expect("a valid plan has replicas");
                prop_assert_eq!(plan.replicas(), d);
                prop_assert_eq!(plan.micro_batch(), u64::from(config.batch.micro_batch));
                if let Some(a) = config.batch.accumulation {
                    prop_assert_eq!(plan.accumulation(), u64::from(a));
                }
                if let Some(b) = config.batch.global_batch {
                    prop_assert_eq!(plan.effective_batch().get(), u64::from(b));
                }
            }
            _ => prop_assert!(false, "plan() and validate() disagree"),
        }
    }

    /// The refusals a user meets most, checked against the fields: a
    /// parallel degree without `world_size`, and a warmup or interval in
    /// the run's own unit that is longer than the run, never give a plan.
    #[test]
    fn known_mistakes_never_give_a_plan(config in fine_tune()) {
        // A degree of 1 shares no model copy: only tp > 1 needs a world size.
        let tp_without_world = config
            .parallel
            .as_ref()
            .is_some_and(|p| p.tensor_parallel.is_some_and(|t| t > 1) && p.world_size.is_none());
        let optim = &config.optim;
        let longer = |span: Option<Span>| match (span, optim.total) {
            (Some(span), Some(total)) => span.unit() == total.unit() && span.value() > total.value(),
            _ => false,
        };
        let every = optim.eval_every.map(Span::of);
        if tp_without_world || longer(optim.warmup) || longer(every) {
            prop_assert!(config.plan().is_err(), "{:?}", config);
        }
    }
}

fn fine_tune_from(toml_text: &str) -> FineTune {
    toml::from_str(toml_text).expect("valid TOML for FineTune")
}

/// The first leak: `replicas`, `tensor_parallel` and no
/// `world_size`. `plan()` used to count the tensor-parallel devices as
/// replicas; it refuses as `validate()` does.
#[test]
fn tensor_parallel_without_world_size_gives_no_plan() {
    let config = fine_tune_from(
        "[batch]\nmicro_batch = 4\naccumulation = 2\n[parallel]\nreplicas = 8\ntensor_parallel = 2\n[optim]\n",
    );
    let refused = config
        .plan()
        .expect_err("tensor_parallel without world_size");
    assert_eq!(refused.codes(), [Code::WorldSize]);
    assert_eq!(refused.paths(), ["parallel.tensor_parallel"]);
    assert_eq!(config.staged_plan(), Err(refused.clone()));
    assert_eq!(config.validate(), Err(refused));
}

/// A warmup in tokens longer than a run in updates is refused by
/// `validate()` and so by `plan()`: 1M tokens is 489 updates of
/// B·L = 4 × 2 × 2 × 128 = 2,048 tokens, in a 100-update run.
#[test]
fn a_warmup_in_tokens_longer_than_the_run_gives_no_plan() {
    let config = fine_tune_from(
        "[batch]\nmicro_batch = 4\naccumulation = 2\nseq_len = 128\n[parallel]\nreplicas = 2\n\
         [optim]\nwarmup = \"1M tokens\"\ntotal = \"100 updates\"\n",
    );
    let refused = config.plan().expect_err("warmup longer than the run");
    assert_eq!(refused.codes(), [Code::Warmup]);
    let finding = refused.iter().next().expect("one finding");
    assert_eq!(
        finding.message,
        "`optim.warmup` is 1M tokens, longer than the run (`optim.total` is 100 updates = 204800 tokens)"
    );
}

/// A run length in examples that is not whole updates plans (a warning),
/// and the warning says how it rounds; it stays beside the plan.
#[test]
fn a_run_length_that_rounds_is_a_warning_beside_the_plan() {
    // B = 4 × 2 × 8 = 64: 6,450 examples is 100.8 updates.
    let config = fine_tune_from(
        "[batch]\nmicro_batch = 4\naccumulation = 2\n[parallel]\nreplicas = 8\n\
         [optim]\ntotal = \"6450 examples\"\n",
    );
    let checked = config.checked().expect("a warning only");
    assert_eq!(checked.plan().effective_batch().get(), 64);
    let warnings = checked.warnings();
    assert_eq!(warnings.codes(), [Code::Rounding]);
    assert!(!warnings.has_errors());
    let warning = warnings.iter().next().expect("one warning");
    assert_eq!(warning.path.to_string(), "optim.total");
    assert_eq!(
        warning.message,
        "`optim.total` is 6450 examples, not a whole number of updates: the run rounds up to 101 updates, which train 6,464 examples"
    );
    assert_eq!(
        warning.fix.as_ref().map(|f| f.text.as_str()),
        Some(
            "write `optim.total` as \"100 updates\" or \"101 updates\" (6.4k examples or 6.464k examples), which the run trains exactly"
        )
    );
    assert_eq!(config.validate(), Ok(warnings.clone()));
    // In microbatches too: 1,001 microbatches of A = 2.
    let microbatches = fine_tune_from(
        "[batch]\nmicro_batch = 4\naccumulation = 2\n[parallel]\nreplicas = 8\n\
         [optim]\ntotal = \"1001 microbatches\"\n",
    );
    assert_eq!(
        microbatches.validate().map(|w| w.codes()),
        Ok(vec![Code::Rounding])
    );
    // A whole number of updates says nothing.
    let whole = fine_tune_from(
        "[batch]\nmicro_batch = 4\naccumulation = 2\n[parallel]\nreplicas = 8\n\
         [optim]\ntotal = \"6400 examples\"\n",
    );
    assert_eq!(whole.validate(), Ok(accum::Findings::default()));
    // A budget in tokens is not warned about: it is almost never whole
    // updates (1M tokens of B·L = 64 × 16).
    let tokens = fine_tune_from(
        "[batch]\nmicro_batch = 4\naccumulation = 2\nseq_len = 16\n[parallel]\nreplicas = 8\n\
         [optim]\ntotal = \"1M tokens\"\n",
    );
    assert_eq!(tokens.validate(), Ok(accum::Findings::default()));
}

/// The built-in config's engine sections are part of the gate: a data
/// section `accum validate` refuses gives no plan either.
#[test]
fn training_config_settings_keep_the_plan_back() {
    let good: TrainingConfig =
        toml::from_str("[batch]\nmicro_batch = 2\naccumulation = 4\nreplicas = 1\n")
            .expect("valid TOML");
    assert!(good.plan().is_ok());
    let bad: TrainingConfig = toml::from_str(
        "[batch]\nmicro_batch = 2\naccumulation = 4\nreplicas = 1\n[data]\nmin_len = 8\nmax_len = 4\n",
    )
    .expect("valid TOML");
    let refused = bad.plan().expect_err("max_len below min_len");
    assert_eq!(refused.codes(), [Code::Settings]);
    assert_eq!(refused.paths(), ["data.max_len"]);
    assert_eq!(bad.validate(), Err(refused.clone()));
    assert_eq!(bad.check(), Err(refused.clone()));
    assert_eq!(bad.staged_plan(), Err(refused));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The same property for the built-in config, whose engine sections
    /// join the plan's rules.
    #[test]
    fn training_config_plans_exactly_when_it_validates(
        micro_batch in 0u64..4,
        accumulation in 0u64..4,
        replicas in 0u64..4,
        min_len in 0u64..6,
        max_len in 0u64..6,
        warmup in 0u64..50,
        total in 0u64..50,
    ) {
        let text = format!(
            "[batch]\nmicro_batch = {micro_batch}\naccumulation = {accumulation}\nreplicas = {replicas}\n\
             [data]\nmin_len = {min_len}\nmax_len = {max_len}\n\
             [schedule]\nwarmup = \"{warmup} updates\"\ntotal = \"{total} updates\"\n"
        );
        let config: TrainingConfig = toml::from_str(&text).expect("valid TOML");
        let validated = config.validate();
        prop_assert_eq!(config.plan().is_ok(), validated.is_ok());
        prop_assert_eq!(config.staged_plan().is_ok(), validated.is_ok());
        let bad_data = min_len == 0 || max_len < min_len;
        if bad_data || warmup > total || micro_batch == 0 || accumulation == 0 || replicas == 0 {
            prop_assert!(config.plan().is_err());
        }
    }
}

/// A section's own rules (`#[accum(check = …)]`) join `validate()` at the
/// section's path, through optional sections too, and keep the plan back.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(check = Self::own_rules)]
struct WithRules {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(replicas)]
    replicas: u32,
    #[accum(nested)]
    optim: Option<OptimRules>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(section, check = Self::own_rules)]
struct OptimRules {
    lr: f64,
}

impl WithRules {
    fn own_rules(&self) -> accum::Findings {
        let mut findings = accum::Findings::default();
        if self.micro_batch > 64 {
            findings.push(accum::Finding::new(
                Code::Settings,
                accum::FieldPath::parse("micro_batch"),
                format!(
                    "micro_batch {} is more than this model fits",
                    self.micro_batch
                ),
                "too large".to_owned(),
            ));
        }
        findings
    }
}

impl OptimRules {
    fn own_rules(&self) -> accum::Findings {
        let mut findings = accum::Findings::default();
        if self.lr <= 0.0 || self.lr.is_nan() {
            findings.push(
                accum::Finding::new(
                    Code::Settings,
                    accum::FieldPath::parse("lr"),
                    format!("lr {} is not positive", self.lr),
                    "not positive".to_owned(),
                )
                .with_related(
                    accum::FieldPath::parse("lr"),
                    None,
                    "here".to_owned(),
                ),
            );
        }
        findings
    }
}

#[test]
fn own_rules_join_the_gate_at_their_paths() {
    let good = WithRules {
        micro_batch: 2,
        accumulation: 4,
        replicas: 1,
        optim: Some(OptimRules { lr: 0.1 }),
    };
    assert_eq!(good.plan().map(|p| p.effective_batch().get()), Ok(8));
    let bad = WithRules {
        micro_batch: 128,
        optim: Some(OptimRules { lr: -1.0 }),
        ..good.clone()
    };
    let refused = bad.plan().expect_err("two own rules");
    assert_eq!(refused.paths(), ["micro_batch", "optim.lr"]);
    let lr = refused.iter().nth(1).expect("the section's finding");
    assert_eq!(lr.related[0].path.to_string(), "optim.lr");
    assert_eq!(bad.validate(), Err(refused));
    // An absent optional section has no rules to break.
    let without = WithRules {
        optim: None,
        ..good
    };
    assert!(without.plan().is_ok());
}

/// A plain serde section the derive cannot see into: its `max_steps: u64`
/// compiles, and the config's JSON Schema shows it to `validate()`, with
/// its path; the plan is refused with it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
struct WithPlainSection {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(replicas)]
    replicas: u32,
    trainer: Trainer,
    eval: Option<Eval>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
struct Trainer {
    max_steps: u64,
    lr: f64,
    seed: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
struct Eval {
    eval_iters: Option<u32>,
    every: u32,
}

#[test]
fn step_like_integers_in_plain_sections_are_found_through_the_schema() {
    let config = WithPlainSection {
        micro_batch: 2,
        accumulation: 4,
        replicas: 1,
        trainer: Trainer {
            max_steps: 1000,
            lr: 0.1,
            seed: 7,
        },
        eval: None,
    };
    let refused = config.plan().expect_err("max_steps has no unit");
    assert_eq!(refused.paths(), ["eval.eval_iters", "trainer.max_steps"]);
    assert_eq!(refused.codes(), [Code::Span, Code::Span]);
    let finding = refused.iter().nth(1).expect("max_steps");
    assert_eq!(
        finding.message,
        "`trainer.max_steps` is an integer named for steps, with no unit: a step is an update in one framework and a microbatch in the next"
    );
    assert_eq!(config.validate(), Err(refused));
    // The schema alone gives the same findings, for a tool that has only it.
    let schema = accum::schema_for::<WithPlainSection>();
    assert_eq!(accum::step_findings(schema.as_value()).len(), 2);
    // A config without a JSON Schema has nothing to walk, and plans.
    #[derive(AccumConfig)]
    #[accum(micro_batch = 2, accumulation = 4, replicas = 1)]
    struct NoSchema {
        trainer: Trainer,
    }
    let plain = NoSchema {
        trainer: config.trainer.clone(),
    };
    assert!(plain.plan().is_ok());
    assert_eq!(plain.trainer.max_steps, 1000);
}
