//! Accelerate's config file (`accelerate config`, `--config_file`): the
//! processes of the run (`num_processes`, all machines together;
//! `distributed_type: NO` is one), and its DeepSpeed block
//! (`deepspeed_config`: `gradient_accumulation_steps`,
//! `deepspeed_config_file`).

use crate::source::YamlLoader;
use std::path::Path;

use accum_core::Code;

use super::super::reader::{Reader, owned};
use super::super::{FileReport, files};
use crate::diagnostic::Diagnostic;

/// What an Accelerate config says about the run.
pub(crate) struct Launch {
    /// All processes, when known.
    pub(crate) processes: Option<u64>,
    /// `deepspeed_config.gradient_accumulation_steps`, when a number.
    gas: Option<(u64, std::ops::Range<usize>)>,
    /// `deepspeed_config.deepspeed_config_file`, with the range of its value.
    pub(crate) deepspeed_file: Option<(String, std::ops::Range<usize>)>,
    /// Where the config is: files it names are looked for from there.
    pub(crate) path: std::path::PathBuf,
    /// The file and its findings.
    pub(crate) report: FileReport,
}

/// Reads the Accelerate config at `path`; a report with the reason when it
/// cannot be read.
pub(crate) fn read(path: &Path) -> Result<Launch, Box<FileReport>> {
    let name = path.display().to_string();
    let text = files::read(path).map_err(|reason| {
        Box::new(FileReport {
            name: name.clone(),
            text: String::new(),
            unread: Vec::new(),
            named_inside: false,
            findings: vec![
                Diagnostic::error(
                    Code::File,
                    vec![],
                    format!("the Accelerate config cannot be read: {reason}"),
                )
                .help("give a readable file with --accelerate-config FILE"),
            ],
        })
    })?;
    // accelerate reads its config with `yaml.safe_load`
    // (`accelerate/commands/config/config_args.py`, `BaseConfig.from_yaml_file`).
    let mut r = match Reader::parse(&name, &text, Some(YamlLoader::PyYaml11)) {
        Ok(r) => r,
        Err(err) => {
            return Err(Box::new(FileReport {
                name,
                text: text.clone(),
                unread: Vec::new(),
                named_inside: false,
                findings: vec![
                    Diagnostic::error(Code::File, vec![], err.to_string())
                        .help("fix the Accelerate config")
                        .at(0..0, "not readable"),
                ],
            }));
        }
    };
    r.strings_are_numbers = true;
    let single = r
        .str(&["distributed_type"])
        .is_some_and(|d| d.value.eq_ignore_ascii_case("no"));
    let processes = r
        .uint(&["num_processes"], 1)
        .map(|v| v.value)
        .or(single.then_some(1));
    let gas = if r.is_auto(&["deepspeed_config", "gradient_accumulation_steps"]) {
        None
    } else {
        r.uint(&["deepspeed_config", "gradient_accumulation_steps"], 1)
            .map(|v| (v.value, v.range))
    };
    let deepspeed_file = r
        .str(&["deepspeed_config", "deepspeed_config_file"])
        .filter(|s| !s.value.is_empty() && s.value != "none")
        .map(|s| (s.value, s.range));
    Ok(Launch {
        processes,
        gas,
        deepspeed_file,
        path: path.to_owned(),
        report: r.into_report(),
    })
}

/// The Trainer puts its `gradient_accumulation_steps` into the DeepSpeed
/// plugin's config and refuses a different number there
/// (`Trainer.propagate_args_to_deepspeed` → `trainer_config_process`).
pub(crate) fn check_gas(r: &mut Reader, launch: &Launch, trainer_gas: u64) {
    if let Some((gas, _)) = &launch.gas
        && *gas != trainer_gas
        && launch.deepspeed_file.is_none()
    {
        let range = r.range_of(&[super::GAS]);
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                owned(&[super::GAS]),
                format!(
                    "the Trainer would stop at start-up: \"Please correct the following DeepSpeed config values that mismatch TrainingArguments values: - ds gradient_accumulation_steps={gas} vs hf gradient_accumulation_steps={trainer_gas}\" (the Accelerate config's deepspeed_config sets {gas})"
                ),
            )
            .help("make the Accelerate config's gradient_accumulation_steps and the Trainer's agree")
            .at(range, "differs from the Accelerate config"),
        );
    }
}
