//! The figures at the top of a sheet: `B = m·A·D` with the numbers (a
//! ramp-up as `16 → 32 → 64 in 3 stages`), tokens per update, updates,
//! epochs and the final loss — planned, or observed when a run report is
//! given.

use accum_core::report::RunReport;
use accum_core::{UnitKind, group_digits};

use super::axes::Axes;
use super::extras::Extras;
use super::stages::steps;
use super::{Card, Headline};

pub(super) fn headline(
    axes: &Axes,
    extras: &Extras,
    planned_updates: Option<u64>,
    report: Option<&RunReport>,
) -> Headline {
    let n = group_digits;
    let staged = axes.staged();
    let plan = staged.final_plan();
    let b = plan.effective_batch().get();
    let batches: Vec<u64> = staged
        .stages()
        .iter()
        .map(|s| s.plan().effective_batch().get())
        .collect();
    let ramped = batches.len() > 1;
    let mut cards = vec![if ramped {
        Card {
            label: "effective batch B".into(),
            value: steps(&batches),
            detail: format!(
                "in {} stages, up to {}",
                n(batches.len() as u64),
                plan.batch_formula()
            ),
            alert: false,
        }
    } else {
        Card {
            label: "effective batch B".into(),
            value: format!("{} examples", n(b)),
            detail: plan.batch_formula(),
            alert: false,
        }
    }];
    // Tokens per update of each stage, when they are known without a run.
    let stage_tokens: Option<Vec<u64>> =
        batches.iter().map(|b| axes.tokens_per_update(*b)).collect();

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
                value: match &stage_tokens {
                    Some(tokens) if ramped => steps(tokens),
                    _ => n(exact.get()),
                },
                detail: match plan.seq_len() {
                    Some(len) if ramped => {
                        format!("T = B·L with L = {}, stage by stage as B grows", n(len))
                    }
                    _ => plan.token_formula().unwrap_or_default(),
                },
                alert: false,
            });
            Some(exact.get() as f64)
        }
        (None, Some(mean), _) => {
            cards.push(Card {
                label: "tokens per update".into(),
                value: format!("≈ {}", n(mean.round() as u64)),
                detail: format!(
                    "measured: the mean over {} groups{}; lengths vary",
                    n(report.map_or(0, |r| r.counters.update_attempts)),
                    if ramped { " of all stages" } else { "" }
                ),
                alert: false,
            });
            Some(mean)
        }
        (None, None, Some(expected)) => {
            cards.push(Card {
                label: "tokens per update".into(),
                value: match &stage_tokens {
                    Some(tokens) if ramped => format!("≈ {}", steps(tokens)),
                    _ => format!("≈ {}", n(expected)),
                },
                detail: if ramped {
                    "expected from the data's lengths, stage by stage as B grows; the engine counts the real ones"
                        .into()
                } else {
                    "expected from the data's lengths; the engine counts the real ones".into()
                },
                alert: false,
            });
            Some(expected as f64)
        }
        (None, None, None) => None,
    };

    // With a ramp-up, an epoch is not a fixed number of updates: the
    // planned epochs are the examples the stages consume over the data's.
    let per_epoch = extras.epoch.map(|e| e.updates.get()).filter(|u| *u > 0);
    let consumed = planned_updates.and_then(|u| axes.at(u, UnitKind::Example).ok());
    let planned_epochs = if ramped {
        consumed
            .zip(extras.epoch.map(|e| e.examples.get()).filter(|e| *e > 0))
            .map(|(seen, data)| seen as f64 / data as f64)
    } else {
        planned_updates
            .zip(per_epoch)
            .map(|(total, per)| total as f64 / per as f64)
    };
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
                    value: epoch_count(epochs),
                    detail: format!("{} examples per epoch; {} started", n(data), n(c.epochs)),
                    alert: false,
                });
            }
            // The figures the terminal and a comparison give too.
            let loss = r.loss_headline();
            if let Some(loss) = loss {
                cards.push(Card {
                    label: "loss".into(),
                    value: loss.first_to_last(),
                    detail: format!(
                        "first → final applied update, exact; minimum {}",
                        accum_core::report::LossHeadline::loss(loss.min)
                    ),
                    alert: false,
                });
                if let Some(means) = loss.means {
                    cards.push(Card {
                        label: "loss, windowed means".into(),
                        value: format!(
                            "{} → {}",
                            accum_core::report::LossHeadline::loss(means.first),
                            accum_core::report::LossHeadline::loss(means.last)
                        ),
                        detail: format!(
                            "{}{}",
                            means.how(),
                            if loss.spread {
                                ", of the updates the report keeps, evenly spread"
                            } else {
                                ""
                            }
                        ),
                        alert: false,
                    });
                }
            }
            if r.stopped_early {
                cards.push(Card {
                    label: "stopped early".into(),
                    value: format!("{} of {} updates", n(applied), n(planned)),
                    detail: "the run was stopped at a group boundary before its total; the figures are of the updates it made".into(),
                    alert: true,
                });
            }
            (Some(applied), Some(skipped), epochs, loss)
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
            match (planned_epochs, extras.epoch, consumed) {
                (Some(epochs), Some(epoch), Some(seen)) if ramped => cards.push(Card {
                    label: "epochs".into(),
                    value: epoch_count(epochs),
                    detail: format!(
                        "planned: {} examples through the stages, {} per epoch",
                        n(seen),
                        n(epoch.examples.get())
                    ),
                    alert: false,
                }),
                (Some(epochs), Some(epoch), _) => cards.push(Card {
                    label: "epochs".into(),
                    value: epoch_count(epochs),
                    detail: format!(
                        "planned: {} updates per epoch of {} examples",
                        n(epoch.updates.get()),
                        n(epoch.examples.get())
                    ),
                    alert: false,
                }),
                _ => {}
            }
            (None, None, None, None)
        }
    };
    Headline {
        micro_batch: plan.micro_batch(),
        accumulation: plan.accumulation(),
        replicas: plan.replicas(),
        effective_batch: b,
        stages: ramped.then_some(batches.len()),
        first_effective_batch: ramped.then(|| staged.first_plan().effective_batch().get()),
        tokens_per_update,
        planned_updates,
        planned_epochs,
        applied_updates,
        skipped_updates,
        epochs,
        first_loss: final_loss.map(|l| l.first),
        final_loss: final_loss.map(|l| l.last),
        min_loss: final_loss.map(|l| l.min),
        cards,
    }
}

/// Passes over the data, to two decimals, with thousands separators when
/// a tiny data set is read many times (`"500,000.35"`).
fn epoch_count(epochs: f64) -> String {
    let text = format!("{epochs:.2}");
    match text.split_once('.') {
        Some((whole, fraction)) if (1e4..1e18).contains(&epochs) => match whole.parse::<u64>() {
            Ok(whole) => format!("{}.{fraction}", group_digits(whole)),
            Err(_) => text,
        },
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_read_as_numbers() {
        assert_eq!(epoch_count(6.4), "6.40");
        assert_eq!(epoch_count(9_999.994), "9999.99");
        assert_eq!(epoch_count(500_000.35), "500,000.35");
        assert_eq!(epoch_count(19_075.0), "19,075.00");
    }
}
