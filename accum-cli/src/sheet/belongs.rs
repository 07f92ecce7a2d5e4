//! Whether a run report belongs to the configuration a sheet describes:
//! the configuration file's hash the report recorded, the full plan, the
//! stages of a batch ramp-up and the run's scheduled length. A sheet whose
//! preparation and trial describe different runs would say untrue things
//! ("5,000 applied of 300 planned"); the command refuses it and says what
//! differs, or renders it under a banner with `--force`.

use accum_core::command_line::config_hash;
use accum_core::group_digits;
use accum_core::plan::StagedPlan;
use accum_core::report::{PlanSummary, RunReport};

/// How a report stands to the configuration a sheet describes.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Belonging {
    /// What makes the report another run's: its plan, the batch of a stage
    /// of its ramp-up, its scheduled length. The sheet is refused unless
    /// `--force`.
    pub(crate) differs: Vec<String>,
    /// The configuration file changed since the run (its hash differs)
    /// though plan and length are the same: a note, not a refusal (the
    /// run's name or notes may have been edited).
    pub(crate) changed: Option<String>,
}

/// The most stages whose differences are listed one by one.
const LISTED_STAGES: usize = 3;

/// How `report` stands to the configuration whose text is `text`, whose
/// plan is `staged` and whose schedule runs `planned` updates (when the
/// sheet knows it). `file` names the configuration in the sentences.
pub(crate) fn belonging(
    report: &RunReport,
    file: &str,
    text: &str,
    staged: &StagedPlan,
    planned: Option<u64>,
) -> Belonging {
    let mut differs = Vec::new();
    let full = PlanSummary::from(staged.final_plan());
    // The plan's seq_len is compared only when both know it.
    let same_plan = |a: &PlanSummary, b: &PlanSummary| {
        (a.micro_batch, a.accumulation, a.replicas, a.effective_batch)
            == (b.micro_batch, b.accumulation, b.replicas, b.effective_batch)
            && (a.seq_len.is_none() || b.seq_len.is_none() || a.seq_len == b.seq_len)
    };
    if !same_plan(&report.plan, &full) {
        differs.push(format!(
            "the report's plan is {}; {file} plans {full}",
            report.plan
        ));
    }
    // Stage by stage, the batch B: a run resumed under another m, A or D
    // of the same B belongs to the configuration it was re-planned to.
    let stages = staged.stages();
    if stages.len() > 1 || report.stages.len() > 1 {
        if report.stages.len() > stages.len() {
            differs.push(format!(
                "the report ran {} stages of a batch ramp-up; {file} plans {}",
                group_digits(report.stages.len() as u64),
                group_digits(stages.len() as u64)
            ));
        } else {
            let other: Vec<String> = report
                .stages
                .iter()
                .zip(stages)
                .enumerate()
                .filter(|(_, (ran, planned))| {
                    ran.plan.effective_batch != planned.plan().effective_batch().get()
                })
                .map(|(n, (ran, planned))| {
                    format!(
                        "stage {} of the report trained B {}; {file} plans B {}",
                        group_digits(n as u64 + 1),
                        group_digits(ran.plan.effective_batch),
                        group_digits(planned.plan().effective_batch().get())
                    )
                })
                .collect();
            let more = other.len().saturating_sub(LISTED_STAGES);
            differs.extend(other.into_iter().take(LISTED_STAGES));
            if more > 0 {
                differs.push(format!("{} more stages differ", group_digits(more as u64)));
            }
        }
    }
    if let Some(planned) = planned
        && planned != report.total_updates.get()
    {
        differs.push(format!(
            "the report's run is scheduled for {} updates; {file} schedules {}",
            group_digits(report.total_updates.get()),
            group_digits(planned)
        ));
    }
    let changed = report.provenance.as_ref().and_then(|p| {
        let recorded = p.config_hash.as_deref()?;
        let ours = config_hash(text.as_bytes());
        (recorded != ours).then(|| {
            let from = p
                .config_path
                .as_deref()
                .map_or_else(String::new, |path| format!(" ({path})"));
            format!(
                "the report was written from a configuration{from} whose hash is {recorded}; {file} hashes to {ours}"
            )
        })
    });
    Belonging { differs, changed }
}

#[cfg(test)]
mod tests {
    use super::*;
    use accum_core::Updates;
    use accum_core::plan::Plan;
    use accum_core::report::Provenance;

    #[test]
    fn a_report_of_another_configuration_says_what_differs() {
        let staged = StagedPlan::constant(Plan::new(2, 1, 2).expect("a plan"));
        let mut report = crate::sheet::tests::report();
        assert_eq!(
            belonging(&report, "a.toml", "x", &staged, Some(2)),
            Belonging::default()
        );
        report.provenance = Some(Provenance {
            config_hash: Some(config_hash(b"x")),
            ..Provenance::default()
        });
        assert_eq!(
            belonging(&report, "a.toml", "x", &staged, Some(2)),
            Belonging::default()
        );
        // An edited file of the same plan and length: a note.
        report.provenance = Some(Provenance {
            config_path: Some("long.toml".into()),
            config_hash: Some(config_hash(b"y")),
            ..Provenance::default()
        });
        let edited = belonging(&report, "a.toml", "x", &staged, Some(2));
        assert!(edited.differs.is_empty());
        assert_eq!(
            edited.changed,
            Some(format!(
                "the report was written from a configuration (long.toml) whose hash is {}; a.toml hashes to {}",
                config_hash(b"y"),
                config_hash(b"x")
            ))
        );
        // Another plan and another length: refused.
        report.total_updates = Updates::new(5000);
        report.plan.accumulation = 4;
        report.plan.effective_batch = 16;
        let other = belonging(&report, "a.toml", "x", &staged, Some(300));
        assert_eq!(
            other.differs,
            [
                "the report's plan is m 2 × A 4 × D 2 = B 16; a.toml plans m 2 × A 1 × D 2 = B 4",
                "the report's run is scheduled for 5,000 updates; a.toml schedules 300",
            ]
        );
    }
}
