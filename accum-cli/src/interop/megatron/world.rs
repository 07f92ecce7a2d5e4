//! The world size: the options, or the launcher in front of the script
//! (`torchrun --nproc-per-node N --nnodes K`).

use std::ops::Range;

use accum_core::Code;

use super::args::{Arg, NNODES, NPROC};
use super::arguments::Args;
use super::shell::Field;
use crate::diagnostic::Diagnostic;
use crate::interop::ImportOptions;
use crate::interop::reader::{Number, python_number};

/// The world size: the options, or the launcher's `nproc × nnodes`.
pub(super) fn world_size(a: &mut Args, opts: &ImportOptions, top: &Range<usize>) -> Option<u64> {
    let given = crate::interop::dialect::world_from_options(opts);
    // The launcher's count, with the environment variables it took a
    // default for (`${SLURM_NNODES:-1}`).
    type Count = (u64, Range<usize>, Vec<String>);
    let read = |arg: Option<&Arg>| -> Result<Option<Count>, Box<Field>> {
        let Some(field) = arg.and_then(Arg::value) else {
            return Ok(None);
        };
        if !field.unknown.is_empty() {
            return Err(Box::new(field.clone()));
        }
        match python_number(&field.text).and_then(|n| match n {
            Number::Int(i) => u64::try_from(i).ok().filter(|&v| v >= 1),
            Number::Float(_) => None,
        }) {
            Some(v) => Ok(Some((v, field.range(), field.defaults.clone()))),
            None => Err(Box::new(field.clone())),
        }
    };
    let nproc = read(a.launcher(NPROC));
    let nnodes = read(a.launcher(NNODES));
    let launched = match (&nproc, &nnodes) {
        (Ok(Some((n, s, d))), Ok(k)) => {
            let mut defaults = d.clone();
            defaults.extend(k.iter().flat_map(|k| k.2.iter().cloned()));
            defaults.sort();
            defaults.dedup();
            Ok(Some((
                n.saturating_mul(k.as_ref().map_or(1, |k| k.0)),
                s.clone(),
                defaults,
            )))
        }
        (Ok(None), _) => Ok(None),
        (Err(f), _) | (_, Err(f)) => Err(f.clone()),
    };
    match (given, launched) {
        // The value given wins over the script's defaults for variables of
        // the environment: the job's environment sets them, and accum does
        // not see it (`--env` gives them exactly).
        (Some(w), Ok(Some((l, range, defaults)))) if w != l && !defaults.is_empty() => {
            let vars: Vec<String> = defaults.iter().map(|d| format!("`{d}`")).collect();
            a.findings.push(
                Diagnostic::error(
                    Code::InteropWorldSize,
                    Args::path("--nproc-per-node"),
                    format!(
                        "the launcher here starts {l} processes only with the script's defaults for {}, which the job's environment sets; accum uses the world size given, {w}",
                        crate::output::listed(&vars)
                    ),
                )
                .warning()
                .help(format!(
                    "to read the launcher's count exactly, give the environment instead of --world-size: {}",
                    defaults
                        .iter()
                        .map(|d| format!("--env {d}=N"))
                        .collect::<Vec<_>>()
                        .join(" ")
                ))
                .at(range, "count from environment defaults"),
            );
            Some(w)
        }
        (Some(w), Ok(Some((l, range, _)))) if w != l => {
            a.findings.push(
                Diagnostic::error(
                    Code::InteropWorldSize,
                    Args::path("--nproc-per-node"),
                    format!("the world size given is {w}, but the launcher here starts {l} processes (processes per node × nodes)"),
                )
                .warning()
                .help("make the launcher and --world-size agree; accum uses the launcher's count")
                .at(range, "launcher's count"),
            );
            Some(l)
        }
        (_, Ok(Some((l, _, _)))) => Some(l),
        // The launcher's values do not matter when the world size is given.
        (Some(w), _) => Some(w),
        (None, Err(field)) => {
            let vars: Vec<String> = field
                .unknown
                .iter()
                .filter_map(|u| u.strip_prefix("`$").and_then(|u| u.strip_suffix('`')))
                .map(|u| {
                    format!(
                        "--env {}=N",
                        u.trim_start_matches('{').trim_end_matches('}')
                    )
                })
                .collect();
            a.findings.push(
                Diagnostic::error(
                    Code::Missing,
                    vec![],
                    format!(
                        "the world size depends on the launcher's `{}`, which the script does not set ({})",
                        field.text,
                        if field.unknown.is_empty() { "not a whole number".to_owned() } else { crate::output::listed(&field.unknown) }
                    ),
                )
                .help(if vars.is_empty() {
                    "give the launcher's world size (--world-size N)".to_owned()
                } else {
                    format!("give the launcher's world size (--world-size N), or {}", vars.join(" "))
                })
                .at(field.range(), "world size unknown"),
            );
            None
        }
        (None, Ok(None)) if !a.inv.world_vars.is_empty() => script_count(a, top),
        (None, Ok(None)) => {
            a.findings.push(
                Diagnostic::error(
                    Code::Missing,
                    vec![],
                    "the world size is not in Megatron's arguments: it comes from the launcher",
                )
                .help(
                    "give the launcher's world size (--world-size N), or include the torchrun line",
                )
                .at(top.clone(), "world size needed"),
            );
            None
        }
    }
}

/// No launcher count, but the script computes a process count
/// (`NUM_GPUS=$((NUM_NODES * NUM_GPUS_PER_NODE))`): taken as the world size,
/// with a warning that names the assumption; when it depends on variables
/// the script does not set, the refusal names them and the flags.
fn script_count(a: &mut Args, top: &Range<usize>) -> Option<u64> {
    let (name, field) = a.inv.world_vars.first().cloned()?;
    let count = python_number(&field.text).and_then(|n| match n {
        Number::Int(i) => u64::try_from(i).ok().filter(|&v| v >= 1),
        Number::Float(_) => None,
    });
    let range = if field.range() == (0..0) {
        top.clone()
    } else {
        field.range()
    };
    match count {
        Some(w) if field.unknown.is_empty() => {
            a.findings.push(
                Diagnostic::error(
                    Code::InteropWorldSize,
                    vec![],
                    format!(
                        "the launcher's process count is not in the script; accum takes the script's {name} = {w} as the world size, assuming the launcher starts that many processes"
                    ),
                )
                .warning()
                .help("if the launcher starts another number of processes, give it: --world-size N")
                .at(range, format!("{name} = {w}")),
            );
            Some(w)
        }
        _ => {
            let vars: Vec<String> = field
                .unknown
                .iter()
                .filter_map(|u| u.strip_prefix('`').and_then(|u| u.split('`').next()))
                .map(|u| {
                    u.trim_start_matches('$')
                        .trim_start_matches('{')
                        .trim_end_matches('}')
                        .to_owned()
                })
                .filter(|u| {
                    !u.is_empty() && u.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                })
                .collect();
            let flags: Vec<String> = vars.iter().map(|v| format!("--env {v}=N")).collect();
            a.findings.push(
                Diagnostic::error(
                    Code::Missing,
                    vec![],
                    format!(
                        "the world size is not in Megatron's arguments, and the script's {name} depends on {}, which the script does not set",
                        if field.unknown.is_empty() {
                            "a value that is not a whole number".to_owned()
                        } else {
                            crate::output::listed(&field.unknown)
                        }
                    ),
                )
                .help(if flags.is_empty() {
                    "give the launcher's world size (--world-size N)".to_owned()
                } else {
                    format!(
                        "give {} (the script then computes {name}), or the world size: --world-size N",
                        flags.join(" ")
                    )
                })
                .at(range, "world size unknown"),
            );
            None
        }
    }
}
