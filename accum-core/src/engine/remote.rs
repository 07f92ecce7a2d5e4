//! Replicas in other processes (one process per replica, e.g. MPI): what
//! this process learns about them through
//! [`Reducer::all_gather`](crate::replica::Reducer::all_gather), so that
//! every process checks the same shards (`accum::run::data-parallel`) and the process of rank 0
//! reports and dumps the same run as in-process threads would.
//!
//! Two gathers per group, both of `u64` slots of a fixed length per rank
//! (floats travel as their bits, so nothing is rounded):
//! - before the backward passes, the example ids each replica really
//!   loaded, microbatch by microbatch (`id + 1`, `0` = empty), checked
//!   against the group this process planned for every replica;
//! - after the gradient all-reduce, each replica's loss sums, flags, memory
//!   and per-microbatch events.

use super::{Engine, EngineError, MicrobatchEvent, ReplicaOutcome};
use crate::memory::MemoryBreakdown;
use crate::model::{LossSums, Model};
use crate::units::{Examples, Microbatches, Tokens};

/// Fixed fields of an outcome record, before the per-microbatch events.
const OUTCOME_FIELDS: usize = 18;
/// Fields of one microbatch event in an outcome record.
const EVENT_FIELDS: usize = 3;

impl<M: Model> Engine<M> {
    /// The rank this process runs (one per process when distributed).
    fn own_rank(&self) -> usize {
        self.reducer.local_ranks().start
    }

    /// `accum::run::data-parallel` across processes: gathers the ids every replica really loaded and
    /// checks them against this process's plan of the group, whose ids the
    /// shard check has already recorded.
    pub(super) fn check_remote_shards(&mut self, attempt: u64) -> Result<(), EngineError> {
        let plan = self.groups.plan();
        let (m, a) = (plan.micro_batch() as usize, plan.accumulation() as usize);
        let rank = self.own_rank();
        let mut mine = vec![0u64; m * a];
        for (i, batch) in self.groups.microbatches(rank).iter().enumerate() {
            for (j, &id) in batch.ids.iter().enumerate().take(m) {
                mine[i * m + j] = id.saturating_add(1);
            }
        }
        let all = self
            .reducer
            .all_gather(rank, &mine)
            .map_err(EngineError::Reduce)?;
        for (replica, slot) in all.chunks(m * a).enumerate() {
            for (microbatch, got) in slot.chunks(m).enumerate() {
                let planned: &[u64] = match self.groups.microbatches(replica).get(microbatch) {
                    Some(b) => &b.ids,
                    None => &[],
                };
                let same = got.len() >= planned.len()
                    && got
                        .iter()
                        .zip(planned)
                        .all(|(&g, &p)| g == p.saturating_add(1))
                    && got[planned.len()..].iter().all(|&g| g == 0);
                if !same {
                    return Err(EngineError::ShardMismatch {
                        attempt,
                        replica,
                        microbatch,
                    });
                }
            }
        }
        Ok(())
    }

    /// Completes this process's outcome with every other replica's: one
    /// outcome per rank, in rank order. Remote replicas' events and counters
    /// are updated as their own loops did.
    pub(super) fn gather_outcomes(
        &mut self,
        attempt: u64,
        local: Vec<ReplicaOutcome>,
    ) -> Result<Vec<ReplicaOutcome>, EngineError> {
        let a = self.groups.plan().accumulation() as usize;
        let rank = self.own_rank();
        let len = OUTCOME_FIELDS + EVENT_FIELDS * a;
        let own = local
            .first()
            .expect("a distributed process runs one replica");
        let record = encode(own, &self.replicas[rank].events, a);
        debug_assert_eq!(record.len(), len);
        let all = self
            .reducer
            .all_gather(rank, &record)
            .map_err(EngineError::Reduce)?;
        let mut local = local.into_iter();
        let mut outcomes = Vec::with_capacity(self.replicas.len());
        for (replica, slot) in all.chunks(len).enumerate() {
            if replica == rank {
                outcomes.extend(local.next());
                continue;
            }
            let (outcome, used) = decode(slot);
            let state = &mut self.replicas[replica];
            state.events.clear();
            for (index, e) in slot[OUTCOME_FIELDS..]
                .chunks(EVENT_FIELDS)
                .take(used)
                .enumerate()
            {
                state.events.push(MicrobatchEvent {
                    attempt,
                    replica,
                    index,
                    examples: e[0],
                    tokens: e[1],
                    mean_token_loss: f64::from_bits(e[2]),
                });
                state.counters.microbatches += Microbatches::ONE;
                state.counters.backward_passes += 1;
                state.counters.examples += Examples::new(e[0]);
                state.counters.supervised_tokens += Tokens::new(e[1]);
            }
            outcomes.push(outcome);
        }
        Ok(outcomes)
    }
}

fn encode(o: &ReplicaOutcome, events: &[MicrobatchEvent], a: usize) -> Vec<u64> {
    let s = &o.sums;
    let mut r = vec![
        s.token_loss.to_bits(),
        s.example_mean_loss.to_bits(),
        s.objective.to_bits(),
        s.weight.to_bits(),
        s.tokens,
        s.examples,
        s.activation_bytes as u64,
        u64::from(o.overflow),
        o.zeroings,
        o.peak.params,
        o.peak.grads,
        o.peak.optimizer_state,
        o.peak.activations,
        o.peak.retained,
        o.denominator.to_bits(),
        o.activations,
        o.retained,
        events.len() as u64,
    ];
    r.resize(OUTCOME_FIELDS + EVENT_FIELDS * a, 0);
    for (slot, e) in r[OUTCOME_FIELDS..]
        .chunks_mut(EVENT_FIELDS)
        .zip(events.iter().take(a))
    {
        slot.copy_from_slice(&[e.examples, e.tokens, e.mean_token_loss.to_bits()]);
    }
    r
}

/// The outcome and the number of microbatch events in a record.
fn decode(r: &[u64]) -> (ReplicaOutcome, usize) {
    let outcome = ReplicaOutcome {
        sums: LossSums {
            token_loss: f64::from_bits(r[0]),
            example_mean_loss: f64::from_bits(r[1]),
            objective: f64::from_bits(r[2]),
            weight: f64::from_bits(r[3]),
            tokens: r[4],
            examples: r[5],
            activation_bytes: usize::try_from(r[6]).unwrap_or(usize::MAX),
        },
        overflow: r[7] != 0,
        zeroings: r[8],
        peak: MemoryBreakdown {
            params: r[9],
            grads: r[10],
            optimizer_state: r[11],
            activations: r[12],
            retained: r[13],
        },
        denominator: f64::from_bits(r[14]),
        activations: r[15],
        retained: r[16],
    };
    let used = usize::try_from(r[17]).unwrap_or(usize::MAX);
    (outcome, used)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::engine::{EngineConfig, Fault, RunOptions};
    use crate::plan::{Plan, StageSpec, StagedPlan};
    use crate::replica::InProcess;
    use crate::report::RunReport;
    use crate::settings::{
        DataSection, ModelSection, Normalization, OptimizerSection, ScheduleKind, ScheduleSection,
    };
    use crate::tensor::Tensors;

    fn config() -> EngineConfig {
        let mut c = EngineConfig {
            data: DataSection {
                examples: 70,
                min_len: 2,
                max_len: 11,
                vocab: 16,
                seed: 9,
                ..DataSection::default()
            },
            model: ModelSection { hidden: 8, ffn: 16 },
            optimizer: OptimizerSection {
                lr: 1e-2,
                ..OptimizerSection::default()
            },
            schedule: ScheduleSection {
                kind: ScheduleKind::Constant,
                warmup: "0 updates".parse().unwrap(),
                total: Some("5 updates".parse().unwrap()),
            },
            ..EngineConfig::default()
        };
        c.loss.normalization = Normalization::PerToken;
        c
    }

    /// Runs `d` engines, one rank each, on threads; every rank's result.
    fn run_per_rank(
        plan: impl Into<StagedPlan>,
        config: &EngineConfig,
        failure: Option<Fault>,
        configure: impl Fn(usize, &mut EngineConfig) + Sync,
    ) -> Vec<Result<RunReport, EngineError>> {
        run_per_rank_with_params(plan, config, failure, configure)
            .into_iter()
            .map(|(r, _)| r)
            .collect()
    }

    /// [`run_per_rank`], with each rank's parameters at the end.
    fn run_per_rank_with_params(
        plan: impl Into<StagedPlan>,
        config: &EngineConfig,
        failure: Option<Fault>,
        configure: impl Fn(usize, &mut EngineConfig) + Sync,
    ) -> Vec<(Result<RunReport, EngineError>, Option<Tensors>)> {
        let plan: StagedPlan = plan.into();
        let plan = &plan;
        let d = plan.final_plan().replicas() as usize;
        let shared = Arc::new(InProcess::new(d));
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..d)
                .map(|rank| {
                    let shared = Arc::clone(&shared);
                    let configure = &configure;
                    s.spawn(move || {
                        let mut config = config.clone();
                        configure(rank, &mut config);
                        let engine = Engine::new(plan, &config).and_then(|e| {
                            e.with_reducer(Box::new(
                                shared
                                    .member(rank)
                                    .expect("each rank takes its member once"),
                            ))
                        });
                        let mut engine = match engine {
                            Ok(e) => e,
                            Err(e) => return (Err(e), None),
                        };
                        if let Some(f) = failure {
                            engine.inject_failure(f);
                        }
                        let result = engine.run(&mut RunOptions::default());
                        (result, Some(engine.model().params().clone()))
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    #[test]
    fn one_engine_per_rank_reports_the_in_process_run() {
        let plan = Plan::new(2, 3, 2).unwrap();
        let config = config();
        let threads = Engine::new(plan, &config)
            .unwrap()
            .run(&mut RunOptions::default())
            .unwrap();
        let ranks = run_per_rank(plan, &config, None, |_, _| {});
        for report in ranks {
            let report = report.unwrap();
            // Partial last group included (70 examples, B = 12).
            assert_eq!(report.counters, threads.counters);
            assert_eq!(report.replicas, threads.replicas);
            assert_eq!(report.memory, threads.memory);
            assert_eq!(report.updates.len(), threads.updates.len());
            for (a, b) in report.updates.iter().zip(&threads.updates) {
                assert_eq!(a.denominator, b.denominator);
                assert_eq!(a.tokens, b.tokens);
                assert!(
                    (a.loss - b.loss).abs() <= 1e-6 * b.loss.abs(),
                    "{a:?} {b:?}"
                );
                assert!((a.grad_norm - b.grad_norm).abs() <= 1e-4 * b.grad_norm);
            }
        }
    }

    /// A ramp-up across processes: every rank draws each group under the
    /// same stage, so the shard check and the outcome records (sized by the
    /// group's `A`) agree, and each rank reports the in-process run.
    #[test]
    fn one_engine_per_rank_runs_a_ramp_up_like_the_in_process_run() {
        let base = Plan::new(2, 2, 2).unwrap();
        let stages = StagedPlan::from_specs(
            &base,
            &[
                StageSpec::accumulation(1).until("2 updates".parse().unwrap()),
                StageSpec::accumulation(3).until("4 updates".parse().unwrap()),
                StageSpec::accumulation(2),
            ],
        )
        .unwrap();
        let mut config = config();
        config.schedule.total = Some("9 updates".parse().unwrap());
        let threads = Engine::new(&stages, &config)
            .unwrap()
            .run(&mut RunOptions::default())
            .unwrap();
        assert_eq!(threads.stages.len(), 3);
        for report in run_per_rank(&stages, &config, None, |_, _| {}) {
            let report = report.unwrap();
            assert_eq!(report.counters, threads.counters);
            assert_eq!(report.stages, threads.stages);
            assert_eq!(report.replicas, threads.replicas);
            for (a, b) in report.updates.iter().zip(&threads.updates) {
                assert_eq!(
                    (a.stage, a.microbatches, a.tokens),
                    (b.stage, b.microbatches, b.tokens)
                );
                assert_eq!(a.denominator, b.denominator);
            }
        }
    }

    #[test]
    fn a_failing_rank_stops_every_rank_before_the_update() {
        let plan = Plan::new(2, 3, 3).unwrap();
        let at = Fault {
            attempt: 2,
            replica: 2,
            microbatch: 1,
        };
        // The reference: the one update that completed before the failure.
        let mut one = Engine::new(plan, &config()).unwrap();
        one.step(&mut RunOptions::default()).unwrap();
        let results = run_per_rank_with_params(plan, &config(), Some(at), |_, _| {});
        for (rank, (r, params)) in results.into_iter().enumerate() {
            // No partial update: every rank still holds the parameters
            // after attempt 1 (up to the order of the f32 sums; a second
            // AdamW update would move them by about lr = 1e-2).
            let params = params.unwrap();
            for ((name, got), (_, want)) in params.iter().zip(one.model().params().iter()) {
                let diff = (got - want).iter().fold(0.0f32, |m, d| m.max(d.abs()));
                assert!(diff < 1e-4, "rank {rank} {name}: {diff}");
            }
            let err = r.unwrap_err().to_string();
            assert!(
                err.contains("attempt 2, microbatch 1 on replica 2"),
                "rank {rank}: {err}"
            );
            if rank != 2 {
                assert!(
                    err.contains("aborted: replica 2 failed"),
                    "rank {rank}: {err}"
                );
            }
        }
    }

    /// A model that panics on the second microbatch it sees on one rank.
    struct PanicsOnce {
        inner: crate::model::TokenMlp,
        calls: std::sync::atomic::AtomicUsize,
    }

    impl Model for PanicsOnce {
        type Workspace = crate::model::MlpWorkspace;
        fn kind(&self) -> &'static str {
            "panics_once"
        }
        fn params(&self) -> &Tensors {
            self.inner.params()
        }
        fn params_mut(&mut self) -> &mut Tensors {
            self.inner.params_mut()
        }
        fn workspace(&self, max_positions: usize) -> Self::Workspace {
            self.inner.workspace(max_positions)
        }
        fn workspace_bytes(&self, workspace: &Self::Workspace) -> usize {
            self.inner.workspace_bytes(workspace)
        }
        fn forward_backward(
            &self,
            batch: &crate::data::PackedMicrobatch,
            scale: &crate::model::GradScale,
            grads: &mut Tensors,
            workspace: &mut Self::Workspace,
        ) -> LossSums {
            let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            assert!(n != 1, "out of memory in the feed-forward layer");
            self.inner.forward_backward(batch, scale, grads, workspace)
        }
        fn describe(&self) -> serde_json::Value {
            self.inner.describe()
        }
    }

    #[test]
    fn a_panicking_rank_names_its_attempt_and_microbatch_on_every_rank() {
        let plan = Plan::new(2, 3, 2).unwrap();
        let config = config();
        let shared = Arc::new(InProcess::new(2));
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..2)
                .map(|rank| {
                    let shared = Arc::clone(&shared);
                    let config = &config;
                    s.spawn(move || {
                        let d = &config.data;
                        let inner = crate::model::TokenMlp::new(
                            d.vocab as usize,
                            config.model.hidden as usize,
                            config.model.ffn as usize,
                            d.seed,
                        );
                        let calls = std::sync::atomic::AtomicUsize::new(if rank == 1 {
                            0
                        } else {
                            usize::MAX / 2
                        });
                        let model = PanicsOnce { inner, calls };
                        let data = crate::data::Dataset::synthetic(d);
                        Engine::with_model(plan, config, model, data)?
                            .with_reducer(Box::new(
                                shared
                                    .member(rank)
                                    .expect("each rank takes its member once"),
                            ))?
                            .run(&mut RunOptions::default())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (rank, r) in results.into_iter().enumerate() {
            let err = r.unwrap_err().to_string();
            // Every rank names the failing replica, its microbatch and the attempt.
            for part in [
                "replica 1",
                "microbatch 1",
                "attempt 1",
                "out of memory in the feed-forward layer",
            ] {
                assert!(err.contains(part), "rank {rank}: {err}");
            }
        }
    }

    #[test]
    fn ranks_with_different_data_are_refused_before_the_backward_passes() {
        let plan = Plan::new(2, 2, 2).unwrap();
        let results = run_per_rank(plan, &config(), None, |rank, c| {
            c.data.seed += rank as u64;
        });
        for r in results {
            let err = r.unwrap_err().to_string();
            assert!(
                err.contains("attempt 1: replica") && err.contains("same config, data and seed"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_backend_of_another_size_is_refused() {
        let plan = Plan::new(2, 2, 2).unwrap();
        let engine = Engine::new(plan, &config()).unwrap();
        let err = engine
            .with_reducer(Box::new(InProcess::new(3)))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("2 data-parallel replicas but the backend runs 3")
                && err.contains("mpirun -n 2"),
            "{err}"
        );
    }

    #[test]
    fn outcome_records_round_trip_bit_exactly() {
        let o = ReplicaOutcome {
            sums: LossSums {
                token_loss: 1.0 / 3.0,
                example_mean_loss: -2.5e-300,
                objective: f64::NAN,
                weight: 0.999_999_9,
                tokens: 17,
                examples: 3,
                activation_bytes: 4096,
            },
            overflow: true,
            zeroings: 2,
            peak: MemoryBreakdown {
                params: 1,
                grads: 2,
                optimizer_state: 3,
                activations: 4,
                retained: 5,
            },
            denominator: 123.0,
            activations: 77,
            retained: 5,
        };
        let event = MicrobatchEvent {
            attempt: 1,
            replica: 1,
            index: 0,
            examples: 2,
            tokens: 9,
            mean_token_loss: 0.1,
        };
        let r = encode(&o, &[event], 3);
        assert_eq!(r.len(), OUTCOME_FIELDS + 3 * EVENT_FIELDS);
        let (back, used) = decode(&r);
        assert_eq!(used, 1);
        assert_eq!(back.sums.token_loss.to_bits(), o.sums.token_loss.to_bits());
        assert_eq!(
            back.sums.example_mean_loss.to_bits(),
            o.sums.example_mean_loss.to_bits()
        );
        assert!(back.sums.objective.is_nan());
        assert_eq!(back.sums.weight, o.sums.weight);
        assert_eq!((back.sums.tokens, back.sums.examples), (17, 3));
        assert_eq!(back.sums.activation_bytes, 4096);
        assert!(back.overflow);
        assert_eq!(back.zeroings, 2);
        assert_eq!(back.peak, o.peak);
        assert_eq!(back.denominator, 123.0);
        assert_eq!((back.activations, back.retained), (77, 5));
        assert_eq!(
            &r[OUTCOME_FIELDS..OUTCOME_FIELDS + 3],
            &[2, 9, 0.1f64.to_bits()]
        );
    }
}
