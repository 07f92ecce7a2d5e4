//! `accum replan FILE`: re-plans the file to a smaller micro-batch
//! ([`crate::replan`]), from `--max-micro-batch` or from a memory budget
//! (`accum::run::memory`), or to another data-parallel degree
//! (`--replicas`), and writes the edited text where the flags say.

use accum_core::estimate::{ByteSize, MemoryInputs};
use accum_core::plan::Plan;

use crate::cli::{Format, ReplanArgs};
use crate::commands::Hooks;
use crate::error::{CliError, Exit};
use crate::load::{CliConfig, Schema, load_checked};
use crate::output::print_text;
use crate::output::{eprint_safe, eprintln_safe};
use crate::replan::{Replanned, replan, replan_replicas, summary_text};
use crate::source::Document;
use crate::writes::{BACKUP, Outputs, backup_path, read_for_backup, write_atomic};

/// Re-plans `args.file` and writes the result, the summary on stderr.
pub(crate) fn run<T: CliConfig>(args: &ReplanArgs, hooks: &Hooks<T>) -> Result<Exit, CliError> {
    let checked = load_checked::<T>(&args.file, hooks.check)?;
    let schema = Schema::<T>::builtin();
    if let Some(replicas) = args.replicas {
        let result = replan_replicas(
            &checked.doc,
            &schema.map,
            &checked.plan,
            replicas,
            args.max_micro_batch,
        )
        .map_err(|err| {
            // The refusal is located already; other errors get the file's name.
            if err.starts_with(&format!("{}:", checked.doc.name)) {
                CliError::invalid(err)
            } else {
                CliError::invalid(format!("{}: {err}", checked.doc.name))
            }
        })?;
        return write(args, &checked.doc, &result);
    }
    let max = match (args.max_micro_batch, args.memory_budget) {
        (Some(max), _) => max,
        (None, Some(budget)) => {
            let inputs = match (
                args.params,
                args.activation_per_example,
                (hooks.memory)(&checked.config),
            ) {
                (Some(params), Some(activation), _) => MemoryInputs {
                    params,
                    weight_bytes: 4,
                    optimizer: accum_core::estimate::OptimizerState::Moments,
                    master_weights: false,
                    activation_per_example: activation,
                },
                (params, activation, Some(model)) => MemoryInputs {
                    params: params.unwrap_or(model.params),
                    activation_per_example: activation.unwrap_or(model.activation_per_example),
                    ..model
                },
                _ => {
                    return Err(CliError::usage(
                        "--memory-budget needs the memory model of this config: give --params and --activation-per-example",
                    ));
                }
            };
            memory_limit(&inputs, budget, &checked.plan)?
        }
        (None, None) => return Err(CliError::usage("give --max-micro-batch or --memory-budget")),
    };
    let result = replan(&checked.doc, &schema.map, &checked.plan, max)
        .map_err(|err| CliError::invalid(format!("{}: {err}", checked.doc.name)))?;
    write(args, &checked.doc, &result)
}

/// Writes the re-planned file where the flags say, and the summary on stderr.
fn write(args: &ReplanArgs, doc: &Document, result: &Replanned) -> Result<Exit, CliError> {
    match (&args.output, args.in_place) {
        (Some(out), _) => {
            // The new configuration keeps the file's format, which the
            // output's name must say.
            use crate::outfile::{FileFormat, output_format};
            let kept = match doc.format {
                crate::source::SourceFormat::Toml => FileFormat::Toml,
                crate::source::SourceFormat::Yaml => FileFormat::Yaml,
                crate::source::SourceFormat::Json => FileFormat::Json,
            };
            output_format(out, &[kept], None, "replan")?;
            write_atomic(out, result.text.as_bytes())?;
        }
        (None, true) => {
            // The backup and the new file: both or neither.
            let bak = backup_path(&args.file);
            let mut outputs = Outputs::new();
            outputs.add(&bak, &read_for_backup(&args.file)?, BACKUP)?;
            outputs.add_in_place(&args.file, result.text.as_bytes())?;
            outputs.commit()?;
            eprintln_safe!(
                "kept the previous file as {}",
                accum_core::shown::path(&bak)
            );
        }
        (None, false) => print_text(&result.text)?,
    }
    match args.format {
        Format::Json => {
            let summary = serde_json::to_string_pretty(result)
                .map_err(|err| CliError::usage(format!("cannot render JSON: {err}")))?;
            eprintln_safe!("{}", crate::escape::json(summary));
        }
        Format::Text => eprint_safe!("{}", summary_text(result)),
    }
    Ok(Exit::Ok)
}

/// The largest micro-batch whose estimated per-device memory fits the
/// budget (`accum::run::memory`), or the reason none does (`accum::run::memory`).
fn memory_limit(inputs: &MemoryInputs, budget: ByteSize, plan: &Plan) -> Result<u64, CliError> {
    let now = inputs
        .estimate(plan.micro_batch())
        .map_err(|err| CliError::usage(err.to_string()))?;
    let fixed = inputs
        .estimate(0)
        .map_err(|err| CliError::usage(err.to_string()))?;
    match inputs
        .max_micro_batch(budget)
        .map_err(|err| CliError::usage(err.to_string()))?
    {
        None => Err(CliError::invalid(format!(
            "weights {} + gradients {} + optimizer state {} = {} already exceed the budget {}; \
             accumulation changes the batch, not this memory, so no micro-batch fits: shard the \
             optimizer state or the model, or lower the precision",
            fixed.weights, fixed.gradients, fixed.optimizer_state, fixed.total, budget
        ))),
        Some(max) => {
            eprintln_safe!(
                "memory estimate: {} at m {} ({} fixed + {} activations per example); budget {} allows m ≤ {}",
                now.total,
                plan.micro_batch(),
                fixed.total,
                inputs.activation_per_example,
                budget,
                max
            );
            Ok(max)
        }
    }
}
