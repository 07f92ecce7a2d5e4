//! `accum import`, `accum export` and `accum lint`: the batch settings of
//! DeepSpeed, Megatron-LM, Hugging Face and Lightning, read, checked and
//! written through the canonical configuration.

use accum_core::config::TrainingConfig;
use accum_core::settings::PrecisionMode;

use crate::cli::{ExportArgs, Format, ImportArgs};
use crate::diagnostic::{self, Severity};
use crate::error::{CliError, Exit};
use crate::fsio::write_atomic;
use crate::interop::{
    self, BatchSection, Canonical, DataSection, ImportError, ImportOptions, LogSection, LossScale,
    LossSection, OptimizerSection, ParallelSection, PrecisionSection, RunSection, ScheduleSection,
};
use crate::load::load_checked;
use crate::output::{print_json, print_text};

impl Canonical {
    /// The canonical values of a checked configuration and its plan.
    pub fn from_config(config: &TrainingConfig, plan: &accum_core::Plan) -> Canonical {
        Canonical {
            run: RunSection {
                name: config.run.name.clone().unwrap_or_default(),
                notes: config.run.notes.clone().unwrap_or_default(),
            },
            batch: BatchSection {
                micro_batch: plan.micro_batch(),
                accumulation: plan.accumulation(),
                replicas: plan.replicas(),
                global_batch: config.batch.global_batch,
                seq_len: plan.seq_len(),
            },
            parallel: plan.layout().map(|l| ParallelSection {
                world_size: l.world_size,
                tensor: l.tensor,
                pipeline: l.pipeline,
                context: l.context,
            }),
            loss: LossSection {
                normalization: config.loss.normalization,
            },
            precision: PrecisionSection {
                mode: config.precision.mode,
                loss_scale: (config.precision.mode == PrecisionMode::Fp16).then_some(LossScale {
                    init: config.precision.loss_scale.init,
                    growth_factor: Some(config.precision.loss_scale.growth_factor),
                    backoff_factor: Some(config.precision.loss_scale.backoff_factor),
                    growth_interval: Some(config.precision.loss_scale.growth_interval),
                }),
            },
            optimizer: OptimizerSection {
                clip_norm: config.optimizer.clip_norm,
                lr: Some(config.optimizer.lr),
            },
            schedule: Some(ScheduleSection {
                warmup: Some(config.schedule.warmup),
                total: Some(config.schedule.total),
            }),
            data: DataSection {
                last_group: config.data.last_group,
                examples: Some(config.data.examples),
            },
            log: Some(LogSection {
                every: config.log.every,
            }),
        }
    }
}

fn options(args: &ImportArgs) -> ImportOptions {
    ImportOptions {
        world_size: args.world_size,
        num_processes: args.num_processes,
        num_nodes: args.num_nodes,
        tensor: args.tensor,
        pipeline: args.pipeline,
        context: args.context,
        deepspeed_mpu: args.deepspeed_mpu,
        micro_batch: args.micro_batch,
        examples: args.examples,
        seq_len: args.seq_len,
        variable_lengths: args.variable_lengths,
    }
}

/// `accum import` (with `lint`, only the findings).
pub(crate) fn import(args: &ImportArgs, lint: bool) -> Result<Exit, CliError> {
    let name = args.file.display().to_string();
    let text = read_engine_file(&args.file)?;
    let color = std::env::var_os("NO_COLOR").is_none()
        && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let (canonical, findings) = match interop::import(args.engine, &name, &text, &options(args)) {
        Ok(imported) => (Some(imported.canonical), imported.findings),
        Err(ImportError::Invalid { findings, .. }) => (None, findings),
        Err(err @ ImportError::Syntax { .. }) => return Err(CliError::invalid(err)),
    };
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    match args.format {
        Format::Json => print_json(&serde_json::json!({
            "file": name,
            "engine": args.engine.key(),
            "errors": errors,
            "warnings": findings.len() - errors,
            "findings": diagnostic::to_json(&name, &text, &findings),
            "canonical": if lint { None } else { canonical.as_ref() },
        }))?,
        Format::Text => {
            if !findings.is_empty() {
                eprint!(
                    "{}",
                    interop::render_findings(&name, &text, &findings, color)
                );
            }
            if lint {
                let summary = if findings.is_empty() {
                    format!("{name}: ok ({})\n", args.engine.display_name())
                } else {
                    format!(
                        "{name}: {errors} error{}, {} warning{}\n",
                        if errors == 1 { "" } else { "s" },
                        findings.len() - errors,
                        if findings.len() - errors == 1 {
                            ""
                        } else {
                            "s"
                        }
                    )
                };
                print_text(&summary)?;
            } else if let Some(canonical) = &canonical {
                let toml = canonical.to_toml();
                match &args.output {
                    Some(out) => write_atomic(out, toml.as_bytes())?,
                    None => print_text(&toml)?,
                }
            }
        }
    }
    if canonical.is_none() && !lint {
        return Err(CliError::invalid(format!(
            "{name}: no canonical configuration: fix the errors above"
        )));
    }
    Ok(if errors > 0 { Exit::Invalid } else { Exit::Ok })
}

fn read_engine_file(path: &std::path::Path) -> Result<String, CliError> {
    let meta = std::fs::metadata(path)
        .map_err(|err| CliError::usage(format!("{}: {}", path.display(), describe(&err))))?;
    if meta.is_dir() {
        return Err(CliError::usage(format!(
            "{}: is a directory; give an engine configuration file",
            path.display()
        )));
    }
    if meta.len() > crate::source::MAX_FILE_BYTES {
        return Err(CliError::usage(format!(
            "{}: {} bytes is larger than the {}-byte limit for configuration files",
            path.display(),
            meta.len(),
            crate::source::MAX_FILE_BYTES
        )));
    }
    let bytes = std::fs::read(path)
        .map_err(|err| CliError::usage(format!("{}: {}", path.display(), describe(&err))))?;
    String::from_utf8(bytes).map_err(|err| {
        CliError::invalid(format!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            err.utf8_error().valid_up_to()
        ))
    })
}

fn describe(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => err.to_string(),
    }
}

/// `accum export`.
pub(crate) fn export(args: &ExportArgs) -> Result<Exit, CliError> {
    let mut checked = load_checked::<TrainingConfig>(&args.config, TrainingConfig::check)?;
    // A config without a run name is named after its file.
    if checked.config.run.name.is_none() {
        checked.config.run.name = args
            .config
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned());
    }
    let canonical = Canonical::from_config(&checked.config, &checked.plan);
    let text = interop::export(args.engine, &canonical).map_err(CliError::invalid)?;
    match &args.output {
        Some(out) => write_atomic(out, text.as_bytes())?,
        None => print_text(&text)?,
    }
    Ok(Exit::Ok)
}
