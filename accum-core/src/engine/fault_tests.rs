//! Engine faults: non-finite gradients on one replica, a replica failing in
//! the middle of a group, an empty data set and data smaller than one
//! microbatch. Each has one clear outcome.

use super::tests::FailsOn;
use super::*;
use crate::data::{Dataset, PackedMicrobatch, Sequence};
use crate::model::{GradScale, LossSums, MlpWorkspace};
use crate::plan::LastGroup;
use crate::settings::{DataSection, ModelSection, ScheduleSection};
use crate::units::Microbatches;

/// A small, fast config: V=16, H=8, F=16, lengths 2..=9.
fn small(examples: u64) -> EngineConfig {
    EngineConfig {
        data: DataSection {
            examples,
            min_len: 2,
            max_len: 9,
            vocab: 16,
            seed: 5,
            ..DataSection::default()
        },
        model: ModelSection { hidden: 8, ffn: 16 },
        schedule: ScheduleSection {
            kind: crate::settings::ScheduleKind::Constant,
            warmup: "0 updates".parse().expect("span"),
            total: Some("2 updates".parse().expect("span")),
        },
        ..EngineConfig::default()
    }
}

fn plan(m: u64, a: u64, d: u64) -> Plan {
    Plan::new(m, a, d).expect("small plan")
}

fn all_zero(engine: &Engine<impl Model>) -> bool {
    engine
        .replicas
        .iter()
        .all(|r| r.grads.slices().all(|s| s.iter().all(|&x| x == 0.0)))
}

#[test]
fn a_non_finite_gradient_on_one_replica_skips_the_attempt_for_all() {
    let config = small(64);
    let mut engine = Engine::new(plan(2, 2, 4), &config).expect("engine");
    let before = engine.model().params().clone();
    let mut options = RunOptions {
        faults: vec![Fault {
            attempt: 1,
            replica: 3,
            microbatch: 1,
        }],
        ..RunOptions::default()
    };
    let stats = engine
        .step(&mut options)
        .expect("step")
        .expect("an attempt");
    assert!(!stats.applied);
    assert!(!stats.grad_norm.is_finite());
    // One model copy for every replica: nothing changed anywhere.
    assert_eq!(engine.model().params(), &before);
    assert_eq!(engine.counters().update_attempts, 1);
    assert_eq!(engine.counters().skipped_updates, 1);
    assert_eq!(engine.counters().applied_updates, Updates::new(0));
    // Every replica starts the next group from zero gradients (`accum::run::zeroing`).
    assert!(all_zero(&engine));
    // The next attempt is clean and applied.
    let next = engine
        .step(&mut options)
        .expect("step")
        .expect("an attempt");
    assert!(next.applied);
    assert_ne!(engine.model().params(), &before);
}

#[test]
fn a_replica_failing_mid_group_names_replica_and_microbatch_and_applies_nothing() {
    let config = small(64);
    let p = plan(2, 4, 2);
    // Find the example replica 1 sees in its third microbatch of the first group.
    let mut probe = Engine::new(p, &config).expect("engine");
    probe.step(&mut RunOptions::default()).expect("step");
    let id = probe.groups.batches[1][2].ids[0];

    let model = FailsOn {
        inner: TokenMlp::new(16, 8, 16, config.data.seed),
        id,
    };
    let data = Dataset::synthetic(&config.data);
    let mut engine = Engine::with_model(p, &config, model, data).expect("engine");
    let before = engine.model().params().clone();
    let err = engine.step(&mut RunOptions::default()).unwrap_err();
    match &err {
        EngineError::MicrobatchFailed {
            attempt,
            replica,
            microbatch,
            message,
        } => {
            assert_eq!((*attempt, *replica, *microbatch), (1, 1, 2));
            assert!(
                message.contains(&format!("example {id} is corrupt")),
                "{message}"
            );
        }
        other => panic!("expected the failing microbatch, got {other}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("replica 1 failed on microbatch 2 of update attempt 1"),
        "{text}"
    );
    // The group is not applied, and its partial gradients are gone.
    assert_eq!(engine.model().params(), &before);
    assert_eq!(engine.counters().update_attempts, 0);
    assert_eq!(engine.counters().applied_updates, Updates::new(0));
    assert!(all_zero(&engine));
}

#[test]
fn an_empty_data_set_is_refused_before_any_work() {
    let config = small(16);
    let empty = Dataset::from_examples(Vec::new(), 16).expect("no examples is a data set");
    let model = TokenMlp::new(16, 8, 16, 1);
    let err = Engine::with_model(plan(2, 2, 2), &config, model, empty).unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::NotEnoughData {
                examples: 0,
                effective_batch: 8
            }
        ),
        "{err}"
    );
    // Through the settings: zero examples is an invalid config, named.
    let err = Engine::new(plan(2, 2, 2), &small(0)).unwrap_err();
    assert!(err.to_string().contains("data.examples"), "{err}");
}

fn three_examples() -> Dataset {
    let examples = (0..3)
        .map(|id| Sequence {
            id,
            tokens: vec![1, 2, 3],
            labels: vec![2, 3, 4],
        })
        .collect();
    Dataset::from_examples(examples, 16).expect("valid examples")
}

#[test]
fn fewer_examples_than_one_microbatch_follow_the_last_group_policy() {
    // m = 4, A = 2, D = 1: B = 8, and the data holds 3 examples.
    let p = plan(4, 2, 1);
    let mut config = small(3);
    config.schedule.total = Some("1 updates".parse().expect("span"));

    // process: one update over the 3 examples, with their real denominator (`accum::plan::partial-group`).
    config.data.last_group = LastGroup::Process;
    let model = TokenMlp::new(16, 8, 16, 1);
    let mut engine = Engine::with_model(p, &config, model, three_examples()).expect("engine");
    let report = engine.run(&mut RunOptions::default()).expect("run");
    assert_eq!(report.counters.applied_updates, Updates::new(1));
    assert_eq!(report.updates[0].microbatches, Microbatches::new(1));
    assert_eq!(report.updates[0].denominator, 9.0);

    // drop: nothing is left to train on.
    config.data.last_group = LastGroup::Drop;
    let model = TokenMlp::new(16, 8, 16, 1);
    let err = Engine::with_model(p, &config, model, three_examples()).unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::NotEnoughData {
                examples: 3,
                effective_batch: 8
            }
        ),
        "{err}"
    );

    // error: the partial group is refused before any work.
    config.data.last_group = LastGroup::Error;
    let model = TokenMlp::new(16, 8, 16, 1);
    let err = Engine::with_model(p, &config, model, three_examples()).unwrap_err();
    assert!(matches!(err, EngineError::Plan(_)), "{err}");
    assert!(err.to_string().contains('3'), "{err}");
}

/// A user model that computes its gradients but does not report the sum of
/// its token weights.
struct NoWeights(TokenMlp);

impl Model for NoWeights {
    type Workspace = MlpWorkspace;
    fn kind(&self) -> &'static str {
        "no_weights"
    }
    fn params(&self) -> &Tensors {
        self.0.params()
    }
    fn params_mut(&mut self) -> &mut Tensors {
        self.0.params_mut()
    }
    fn workspace(&self, max_positions: usize) -> MlpWorkspace {
        self.0.workspace(max_positions)
    }
    fn workspace_bytes(&self, workspace: &MlpWorkspace) -> usize {
        self.0.workspace_bytes(workspace)
    }
    fn forward_backward(
        &self,
        batch: &PackedMicrobatch,
        scale: &GradScale,
        grads: &mut Tensors,
        workspace: &mut MlpWorkspace,
    ) -> LossSums {
        LossSums {
            weight: 0.0,
            ..self.0.forward_backward(batch, scale, grads, workspace)
        }
    }
    fn describe(&self) -> serde_json::Value {
        self.0.describe()
    }
}

#[test]
fn a_model_without_loss_weights_is_told_so() {
    let config = small(16);
    let model = NoWeights(TokenMlp::new(16, 8, 16, 1));
    let data = Dataset::synthetic(&config.data);
    let mut engine = Engine::with_model(plan(2, 2, 1), &config, model, data).unwrap();
    let err = engine.step(&mut RunOptions::default()).unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::LossWeightsMissing {
                attempt: 1,
                model: "no_weights",
                tokens,
            } if tokens > 0
        ),
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains("reported no loss weights"), "{text}");
    assert!(text.contains("`LossSums::weight` is 0"), "{text}");
    assert!(!text.contains("more than once"), "{text}");
}
