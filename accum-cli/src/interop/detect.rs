//! Which framework a file is written for, from evidence.
//!
//! Each framework lists the signs that identify it: keys (or a Megatron
//! command's options) that its own parser defines and no other framework
//! here reads. The signs of two frameworks never share a key, so a key a
//! file shares with another framework (`train.global_batch_size` in a
//! Hydra research config, `trainer.accumulate_grad_batches` in a NeMo
//! model) is never a claim. A file is claimed for the framework with the
//! most signs, only when it has more than any other; two that fit equally
//! are named together, and none at all is said too. A claim is confident
//! when it leads by two signs or more: one key of another framework added
//! to the file cannot overturn it.
//!
//! Lightning's `trainer:` section is the one shape two frameworks share:
//! NeMo's models are Lightning trainers. It is Lightning's evidence only
//! when no framework has a sign of its own, and such a claim is never
//! confident.

use std::ops::Range;

use super::Framework;
use crate::source::{Document, Node, NodeKind, SourceFormat, YamlLoader};

/// One sign of a framework.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sign {
    /// Any of these dotted key paths, with a value other than null: one
    /// sign however many are present.
    Keys(&'static [&'static str]),
    /// A string at this dotted path that holds this text.
    Holds(&'static str, &'static str),
    /// A Megatron-LM option: in a launch script's command, or as a key of
    /// a YAML file of arguments (at the top or one level down).
    Option(&'static str),
}

#[cfg(test)]
impl Sign {
    /// The key paths (or options) the sign looks at.
    pub(crate) fn paths(self) -> Vec<&'static str> {
        match self {
            Sign::Keys(paths) => paths.to_vec(),
            Sign::Holds(path, _) | Sign::Option(path) => vec![path],
        }
    }
}

/// What a file can be: a framework accum imports, or an Accelerate
/// config, which gives the processes and not the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// A framework's training file.
    Framework(Framework),
    /// `accelerate config`'s file.
    Accelerate,
}

impl Kind {
    /// The name in prose.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Framework(f) => f.display_name(),
            Kind::Accelerate => "Accelerate",
        }
    }
}

/// The signs of one kind of file, and where its parser defines them.
pub(crate) struct Identity {
    /// The kind.
    pub(crate) kind: Kind,
    /// The signs no other kind has.
    pub(crate) signs: &'static [Sign],
}

/// The trainer arguments of Lightning's `Trainer.__init__`
/// (`src/lightning/pytorch/trainer/trainer.py`) that a `trainer:` section
/// holds; NeMo's files hold the same section.
const TRAINER_SECTION: &[&str] = &[
    "trainer.accumulate_grad_batches",
    "trainer.max_epochs",
    "trainer.max_steps",
    "trainer.devices",
    "trainer.num_nodes",
    "trainer.precision",
    "trainer.gradient_clip_val",
    "trainer.log_every_n_steps",
    "trainer.val_check_interval",
    "trainer.check_val_every_n_epoch",
    "trainer.accelerator",
    "trainer.strategy",
];

/// Every kind's identifying signs. No key path appears twice (a test
/// checks it).
pub(crate) const IDENTITIES: &[Identity] = &[
    // deepspeed/runtime/constants.py (TRAIN_BATCH_SIZE, STEPS_PER_PRINT, …)
    // and deepspeed/runtime/zero/config.py (ZERO_OPTIMIZATION); GPT-NeoX
    // hands its own arguments to DeepSpeed.
    Identity {
        kind: Kind::Framework(Framework::DeepSpeed),
        signs: &[
            Sign::Keys(&["train_micro_batch_size_per_gpu"]),
            Sign::Keys(&["train_batch_size"]),
            Sign::Keys(&["zero_optimization"]),
            Sign::Keys(&["gradient_clipping"]),
            Sign::Keys(&["steps_per_print"]),
            Sign::Keys(&["wall_clock_breakdown"]),
            Sign::Keys(&["zero_allow_untested_optimizer"]),
            // GPT-NeoX's arguments, which it hands to DeepSpeed.
            Sign::Keys(&["pipe-parallel-size", "pipe_parallel_size"]),
            Sign::Keys(&["model-parallel-size", "model_parallel_size"]),
        ],
    },
    // megatron/training/arguments.py (the options) and
    // megatron/training/yaml_arguments.py (`model_parallel`, `language_model`).
    Identity {
        kind: Kind::Framework(Framework::Megatron),
        signs: &[
            Sign::Option("--micro-batch-size"),
            Sign::Option("--global-batch-size"),
            Sign::Option("--tensor-model-parallel-size"),
            Sign::Option("--pipeline-model-parallel-size"),
            Sign::Option("--train-iters"),
            Sign::Option("--train-samples"),
            Sign::Option("--seq-length"),
            Sign::Option("--lr-warmup-iters"),
            // megatron/training/yaml_arguments.py, validate_yaml.
            Sign::Keys(&["model_parallel"]),
            Sign::Keys(&["language_model"]),
            Sign::Keys(&["training.micro_batch_size", "training.global_batch_size"]),
        ],
    },
    // transformers' TrainingArguments (src/transformers/training_args.py);
    // axolotl also reads `eval_strategy`, `save_strategy`, `logging_steps` and
    // `output_dir` (src/axolotl/utils/schemas/config.py), so they are not signs.
    Identity {
        kind: Kind::Framework(Framework::HuggingFace),
        signs: &[
            Sign::Keys(&["per_device_train_batch_size"]),
            Sign::Keys(&["per_device_eval_batch_size"]),
            Sign::Keys(&["num_train_epochs"]),
            Sign::Keys(&["lr_scheduler_type"]),
            Sign::Keys(&["logging_strategy"]),
            // TRL's ModelConfig and LLaMA-Factory's ModelArguments.
            Sign::Keys(&["model_name_or_path"]),
        ],
    },
    // Lightning's Trainer.__init__ (src/lightning/pytorch/trainer/trainer.py)
    // and LightningCLI (src/lightning/pytorch/cli.py).
    Identity {
        kind: Kind::Framework(Framework::Lightning),
        signs: &[
            // LightningCLI (src/lightning/pytorch/cli.py).
            Sign::Keys(&["seed_everything"]),
            Sign::Keys(&["model.class_path", "model.init_args"]),
            Sign::Holds("trainer._target_", "lightning"),
            // The latent-diffusion family's `lightning: trainer:`.
            Sign::Keys(&["lightning.trainer"]),
            // Trainer arguments written flat.
            Sign::Keys(&[
                "accumulate_grad_batches",
                "gradient_clip_val",
                "log_every_n_steps",
                "check_val_every_n_epoch",
                "val_check_interval",
                "max_epochs",
            ]),
        ],
    },
    // NeMo's Megatron model configs (examples/nlp/language_modeling/conf,
    // tuning/conf) and nemo/utils/exp_manager.py.
    Identity {
        kind: Kind::Framework(Framework::NeMo),
        signs: &[
            // nemo/utils/exp_manager.py, ExpManagerConfig.
            Sign::Keys(&["exp_manager"]),
            Sign::Keys(&["model.micro_batch_size", "model.global_batch_size"]),
            Sign::Keys(&[
                "model.tensor_model_parallel_size",
                "model.pipeline_model_parallel_size",
            ]),
            Sign::Keys(&[
                "model.data.train_ds.micro_batch_size",
                "model.data.train_ds.global_batch_size",
            ]),
            // NeMo 2.0's recipes as YAML (the speech-LLM pipeline).
            Sign::Keys(&[
                "data.common.micro_batch_size",
                "data.common.global_batch_size",
            ]),
            Sign::Keys(&[
                "strategy.tensor_model_parallel_size",
                "strategy.pipeline_model_parallel_size",
            ]),
            Sign::Keys(&["model.restore_from_path"]),
            Sign::Keys(&["model.megatron_amp_O2"]),
            Sign::Keys(&["model.train_ds.manifest_filepath"]),
            Sign::Keys(&["model.train_ds.dataloader_params"]),
        ],
    },
    // axolotl's AxolotlInputConfig (src/axolotl/utils/schemas/config.py,
    // model.py, peft.py).
    Identity {
        kind: Kind::Framework(Framework::Axolotl),
        signs: &[
            Sign::Keys(&["base_model"]),
            Sign::Keys(&["datasets"]),
            Sign::Keys(&["sequence_len"]),
            Sign::Keys(&["sample_packing", "eval_sample_packing"]),
            Sign::Keys(&["pad_to_sequence_len"]),
            Sign::Keys(&["val_set_size"]),
            Sign::Keys(&["special_tokens"]),
            Sign::Keys(&["adapter"]),
            Sign::Keys(&["lora_r"]),
        ],
    },
    // litgpt/args.py (TrainArgs, EvalArgs) and the setup() arguments of
    // litgpt/pretrain.py and litgpt/finetune/*.py.
    Identity {
        kind: Kind::Framework(Framework::LitGpt),
        signs: &[
            Sign::Keys(&["train.save_interval"]),
            Sign::Keys(&["train.log_interval"]),
            Sign::Keys(&["train.lr_warmup_steps", "train.lr_warmup_fraction"]),
            Sign::Keys(&["train.max_tokens"]),
            Sign::Keys(&["train.max_norm", "train.min_lr"]),
            Sign::Keys(&["eval.interval", "eval.max_iters", "eval.max_new_tokens"]),
            Sign::Keys(&["out_dir"]),
            Sign::Keys(&["checkpoint_dir", "initial_checkpoint_dir"]),
            Sign::Keys(&["logger_name"]),
            Sign::Keys(&["tokenizer_dir"]),
            Sign::Holds("data.class_path", "litgpt."),
        ],
    },
    // accelerate's config file (src/accelerate/commands/config/config_args.py).
    Identity {
        kind: Kind::Accelerate,
        signs: &[
            Sign::Keys(&["compute_environment"]),
            Sign::Keys(&["distributed_type"]),
            Sign::Keys(&["main_training_function"]),
        ],
    },
];

/// One sign found in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    /// The key or option as written (`train.save_interval`).
    pub(crate) what: String,
    /// Where.
    pub(crate) range: Range<usize>,
}

/// What the evidence says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Detection {
    /// One kind has more signs than any other.
    Claim {
        /// The kind.
        kind: Kind,
        /// Its signs found.
        evidence: Vec<Found>,
        /// It leads by two signs or more.
        confident: bool,
    },
    /// Two or more kinds have the same, largest, number of signs.
    Tie(Vec<(Kind, Vec<Found>)>),
    /// No sign of any kind.
    Unknown,
}

/// The keys and options a file holds, as the detection sees them.
pub(crate) enum Shape {
    /// A YAML or JSON mapping.
    Tree(Box<Document>),
    /// A launch script: the options of its Megatron command, with their ranges.
    Script(Vec<(String, Range<usize>)>),
    /// Neither.
    Other,
}

/// Reads the shape of a file: a mapping as PyYAML reads it (JSON too),
/// else a launch script's Megatron command.
pub(crate) fn shape(name: &str, text: &str) -> Shape {
    let format = if super::reader::looks_like_json(name, text) {
        SourceFormat::Json
    } else {
        SourceFormat::Yaml
    };
    if let Ok(doc) = Document::parse_with(
        name.to_owned(),
        text.to_owned(),
        format,
        YamlLoader::PyYaml11,
    ) && matches!(doc.root.kind, NodeKind::Table(_))
    {
        return Shape::Tree(Box::new(doc));
    }
    match super::megatron::script_options(text) {
        Some(options) if !options.is_empty() => Shape::Script(options),
        _ => Shape::Other,
    }
}

/// The signs of `identity` found in `shape`.
fn signs_in(identity: &Identity, shape: &Shape) -> Vec<Found> {
    let mut found: Vec<Found> = identity
        .signs
        .iter()
        .filter_map(|sign| find(*sign, shape))
        .collect();
    // In the order of the file.
    found.sort_by_key(|f| f.range.start);
    found
}

/// The first key of a sign present in a file.
fn find(sign: Sign, shape: &Shape) -> Option<Found> {
    match (sign, shape) {
        (Sign::Keys(paths), Shape::Tree(doc)) => paths.iter().find_map(|p| key(doc, p)),
        (Sign::Holds(path, text), Shape::Tree(doc)) => {
            let found = key(doc, path)?;
            let node = doc.node(&split(path))?;
            matches!(&node.kind, NodeKind::String(s) if s.contains(text)).then_some(found)
        }
        (Sign::Option(option), Shape::Tree(doc)) => {
            // `--micro-batch-size: 4`, at the top or under one section
            // (`MODEL_ARGS:` of Megatron's functional tests).
            let NodeKind::Table(entries) = &doc.root.kind else {
                return None;
            };
            let at_top = entries.iter().find(|e| e.key == option);
            let below = || {
                entries.iter().find_map(|e| match &e.value.kind {
                    NodeKind::Table(inner) => inner.iter().find(|x| x.key == option),
                    _ => None,
                })
            };
            at_top.or_else(below).map(|e| Found {
                what: option.to_owned(),
                range: e.key_range.clone(),
            })
        }
        (Sign::Option(option), Shape::Script(options)) => options
            .iter()
            .find(|(name, _)| name == option)
            .map(|(name, range)| Found {
                what: name.clone(),
                range: range.clone(),
            }),
        _ => None,
    }
}

fn split(path: &str) -> Vec<String> {
    path.split('.').map(str::to_owned).collect()
}

/// A key present with a value other than null.
fn key(doc: &Document, path: &str) -> Option<Found> {
    let segments = split(path);
    let node: &Node = doc.node(&segments)?;
    if matches!(node.kind, NodeKind::Null) {
        return None;
    }
    Some(Found {
        what: path.to_owned(),
        range: doc
            .key_range(&segments)
            .unwrap_or_else(|| node.range.clone()),
    })
}

/// The evidence of every kind in a file, and what it says.
pub(crate) fn detect(name: &str, text: &str) -> Detection {
    decide(&shape(name, text))
}

/// What the evidence of a shape says.
pub(crate) fn decide(shape: &Shape) -> Detection {
    let mut scored: Vec<(Kind, Vec<Found>)> = IDENTITIES
        .iter()
        .map(|id| (id.kind, signs_in(id, shape)))
        .filter(|(_, found)| !found.is_empty())
        .collect();
    scored.sort_by_key(|(_, found)| std::cmp::Reverse(found.len()));
    match scored.as_slice() {
        [] => trainer_section(shape).map_or(Detection::Unknown, |found| Detection::Claim {
            kind: Kind::Framework(Framework::Lightning),
            evidence: vec![found],
            confident: false,
        }),
        [(kind, evidence)] => Detection::Claim {
            kind: *kind,
            confident: evidence.len() >= 2,
            evidence: evidence.clone(),
        },
        [(kind, evidence), (_, second), ..] if evidence.len() > second.len() => Detection::Claim {
            kind: *kind,
            confident: evidence.len() >= second.len() + 2,
            evidence: evidence.clone(),
        },
        [(_, first), ..] => {
            let top = first.len();
            Detection::Tie(scored.into_iter().filter(|(_, f)| f.len() == top).collect())
        }
    }
}

/// A Lightning `trainer:` section, which NeMo's files share.
fn trainer_section(shape: &Shape) -> Option<Found> {
    find(Sign::Keys(TRAINER_SECTION), shape)
}

/// The evidence in words: "`a`, `b` and `c`".
pub(crate) fn listed(evidence: &[Found]) -> String {
    let names: Vec<String> = evidence.iter().map(|f| format!("`{}`", f.what)).collect();
    crate::output::listed(&names)
}

/// Whether a file read by `named` may be claimed by `kind` without a
/// refusal: the Lightning reader reads NeMo's models as NeMo does.
pub(crate) fn reads_as(named: Framework, kind: Kind) -> bool {
    match kind {
        Kind::Framework(f) => f == named || (named == Framework::Lightning && f == Framework::NeMo),
        Kind::Accelerate => false,
    }
}
