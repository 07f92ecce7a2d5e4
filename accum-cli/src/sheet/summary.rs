//! The figures at the top of a sheet: `B = m·A·D` with the numbers, tokens
//! per update, updates, epochs and the final loss — planned, or observed
//! when a run report is given.

use accum_core::Plan;
use accum_core::report::RunReport;
use accum_core::units::group_digits;

use super::build::Extras;
use super::series::RunSeries;
use super::{Card, Summary};

pub(super) fn summary(
    plan: &Plan,
    extras: &Extras,
    planned_updates: Option<u64>,
    report: Option<&RunReport>,
    run: Option<&RunSeries>,
) -> Summary {
    let n = group_digits;
    let b = plan.effective_batch().get();
    let mut cards = vec![Card {
        label: "effective batch B".into(),
        value: format!("{} examples", n(b)),
        detail: plan.batch_formula(),
        alert: false,
    }];

    // Tokens: exact with a fixed length, else what the trial counted, else
    // what the data's lengths lead to expect.
    let measured = report
        .filter(|r| r.counters.update_attempts > 0)
        .map(|r| r.counters.supervised_tokens.get() as f64 / r.counters.update_attempts as f64);
    let tokens_per_update = match (
        plan.tokens_per_update(),
        measured,
        extras.expected_tokens_per_update,
    ) {
        (Some(exact), _, _) => {
            cards.push(Card {
                label: "tokens per update T".into(),
                value: n(exact.get()),
                detail: plan.token_formula().unwrap_or_default(),
                alert: false,
            });
            Some(exact.get() as f64)
        }
        (None, Some(mean), _) => {
            cards.push(Card {
                label: "tokens per update".into(),
                value: format!("≈ {}", n(mean.round() as u64)),
                detail: format!(
                    "measured: the mean over {} groups; lengths vary",
                    n(report.map_or(0, |r| r.counters.update_attempts))
                ),
                alert: false,
            });
            Some(mean)
        }
        (None, None, Some(expected)) => {
            cards.push(Card {
                label: "tokens per update".into(),
                value: format!("≈ {}", n(expected)),
                detail: "expected from the data's lengths; the engine counts the real ones".into(),
                alert: false,
            });
            Some(expected as f64)
        }
        (None, None, None) => None,
    };

    let per_epoch = extras.epoch.map(|e| e.updates.get()).filter(|u| *u > 0);
    let planned_epochs = planned_updates
        .zip(per_epoch)
        .map(|(total, per)| total as f64 / per as f64);
    let (applied_updates, skipped_updates, epochs, final_loss) = match report {
        Some(r) => {
            let c = &r.counters;
            let applied = c.applied_updates.get();
            let skipped = c.skipped_updates;
            let planned = planned_updates.unwrap_or(r.total_updates.get());
            cards.push(Card {
                label: "updates".into(),
                value: n(applied),
                detail: if skipped > 0 {
                    format!(
                        "applied of {} planned; {} attempts skipped, no parameter change",
                        n(planned),
                        n(skipped)
                    )
                } else {
                    format!("applied of {} planned; none skipped", n(planned))
                },
                alert: skipped > 0,
            });
            let data = r.data_examples.get();
            let seen = c.examples.get().saturating_add(c.dropped_examples.get());
            let epochs = (data > 0).then(|| seen as f64 / data as f64);
            if let Some(epochs) = epochs {
                cards.push(Card {
                    label: "epochs".into(),
                    value: format!("{epochs:.2}"),
                    detail: format!("{} examples per epoch; {} started", n(data), n(c.epochs)),
                    alert: false,
                });
            }
            let last = run.and_then(RunSeries::final_loss);
            if let Some((x, loss)) = last {
                cards.push(Card {
                    label: "final loss".into(),
                    value: format!("{loss:.4}"),
                    detail: format!(
                        "the last logged point, at {} {}",
                        n(x as u64),
                        r.loss_curve.axis.key()
                    ),
                    alert: false,
                });
            }
            (Some(applied), Some(skipped), epochs, last.map(|(_, l)| l))
        }
        None => {
            if let Some(total) = planned_updates {
                cards.push(Card {
                    label: "updates".into(),
                    value: n(total),
                    detail: "planned: the schedule's total".into(),
                    alert: false,
                });
            }
            if let (Some(epochs), Some(epoch)) = (planned_epochs, extras.epoch) {
                cards.push(Card {
                    label: "epochs".into(),
                    value: format!("{epochs:.2}"),
                    detail: format!(
                        "planned: {} updates per epoch of {} examples",
                        n(epoch.updates.get()),
                        n(epoch.examples.get())
                    ),
                    alert: false,
                });
            }
            (None, None, None, None)
        }
    };
    Summary {
        micro_batch: plan.micro_batch(),
        accumulation: plan.accumulation(),
        replicas: plan.replicas(),
        effective_batch: b,
        tokens_per_update,
        planned_updates,
        planned_epochs,
        applied_updates,
        skipped_updates,
        epochs,
        final_loss,
        cards,
    }
}
