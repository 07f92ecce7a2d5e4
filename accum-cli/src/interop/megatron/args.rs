//! Megatron-LM's arguments out of what people write: a launch script (the
//! command that runs `pretrain_*.py`, with the launcher in front of it), a
//! bare argument list, or a YAML file of arguments (`--micro-batch-size: 4`
//! under `MODEL_ARGS:`, as Megatron's functional tests write them, or
//! `micro_batch_size: 4` as `--yaml-cfg` files do).

use std::ops::Range;

use super::shell::{self, Field};
use crate::source::{Document, Node, NodeKind, ReadNote, SourceFormat, YamlLoader};

/// One option and its value(s), with ranges.
#[derive(Clone, Debug)]
pub(crate) struct Arg {
    /// `--micro-batch-size` (underscores read as dashes, as argparse and
    /// torchrun accept both).
    pub(crate) name: String,
    /// Its values (three for `--rampup-batch-size`).
    pub(crate) values: Vec<Field>,
    /// The option and its values in the text.
    pub(crate) range: Range<usize>,
}

impl Arg {
    pub(crate) fn value(&self) -> Option<&Field> {
        self.values.first()
    }
}

/// The arguments of the run: the launcher's (before the script) and
/// Megatron's (after it).
#[derive(Debug, Default)]
pub(crate) struct Invocation {
    pub(crate) launcher: Vec<Arg>,
    pub(crate) megatron: Vec<Arg>,
    /// Variables the script assigns a process count to
    /// (`NUM_GPUS=$((NUM_NODES * NUM_GPUS_PER_NODE))`), by [`WORLD_VARS`].
    pub(crate) world_vars: Vec<(String, Field)>,
    /// Where the command is, for findings about what it lacks.
    pub(crate) range: Range<usize>,
}

/// Options that take no value.
const FLAGS: &[&str] = &[
    "--fp16",
    "--bf16",
    "--calculate-per-token-loss",
    "--sequence-parallel",
    "--use-distributed-optimizer",
    "--overlap-grad-reduce",
    "--overlap-param-gather",
    "--use-flash-attn",
    "--use-mcore-models",
    "--no-masked-softmax-fusion",
    "--swiglu",
    "--untie-embeddings-and-output-weights",
    "--disable-bias-linear",
    "--standalone",
    "--decrease-batch-size-if-needed",
    "--use-rotary-position-embeddings",
    "--no-position-embedding",
    "--bf16-grad-reduce",
    "--accumulate-allreduce-grads-in-fp32",
    "--use-checkpoint-args",
    "--no-load-optim",
    "--no-load-rng",
    "--finetune",
    "--mock-data",
    "--no-async-tensor-model-parallel-allreduce",
    "--no-gradient-accumulation-fusion",
    "--use-legacy-models",
    "--log-throughput",
    "--log-params-norm",
    "--log-num-zeros-in-grad",
    "--no-bias-dropout-fusion",
    "--no-bias-gelu-fusion",
    "--deepspeed",
    "--no-pipeline-parallel",
];

/// Options of the launchers (torchrun, `python -m torch.distributed.launch`,
/// the DeepSpeed launcher) that give the world size.
pub(crate) const NPROC: &[&str] = &["--nproc-per-node", "--num-gpus"];
/// Nodes, for the same launchers.
pub(crate) const NNODES: &[&str] = &["--nnodes", "--num-nodes"];

/// Names launch scripts give the job's process count (upper case, as
/// written, or lower case), which their launcher takes from them or from
/// the same variables (`deepspeed` with a hostfile, `srun`, `mpirun -np`).
pub(crate) const WORLD_VARS: &[&str] = &[
    "WORLD_SIZE",
    "NUM_GPUS",
    "NGPUS",
    "N_GPUS",
    "GPU_NUM",
    "TOTAL_GPUS",
    "NUM_PROCESSES",
];

/// Options from a list of words: `--key value`, `--key=value`, flags.
fn options(words: &[Field]) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if !w.text.starts_with("--") || w.text.len() <= 2 {
            continue;
        }
        if let Some(eq) = w.text.find('=') {
            out.push(Arg {
                name: w.text[..eq].replace('_', "-"),
                values: vec![w.slice(eq + 1, w.text.len())],
                range: w.range(),
            });
            continue;
        }
        let name = w.text.replace('_', "-");
        let nargs = match name.as_str() {
            n if FLAGS.contains(&n) => 0,
            "--rampup-batch-size" => 3,
            _ => 1,
        };
        let mut values = Vec::new();
        for _ in 0..nargs {
            // A value may be negative (`-1`), never another option.
            match words.get(i).filter(|n| !n.text.starts_with("--")) {
                Some(next) => {
                    values.push(next.clone());
                    i += 1;
                }
                None => break,
            }
        }
        let range = match values.last() {
            Some(v) => {
                let (a, b) = (w.range(), v.range());
                a.start.min(b.start)..a.end.max(b.end)
            }
            None => w.range(),
        };
        out.push(Arg {
            name,
            values,
            range,
        });
    }
    out
}

/// Whether a command runs Megatron: it passes its batch options.
fn is_megatron(cmd: &shell::Command) -> bool {
    cmd.words.iter().any(|w| {
        let t = w.text.replace('_', "-");
        t.starts_with("--micro-batch-size") || t.starts_with("--global-batch-size")
    })
}

/// Whether a word is the training script (`pretrain_gpt.py`).
fn is_script(w: &Field) -> bool {
    w.text.ends_with(".py") || w.text.contains(".py ")
}

/// The run a launch script (or argument list) starts, with the variables
/// `env` gives. `None` when no command passes Megatron's batch options; the
/// limit when the script makes the reader do more work than any launch
/// script needs.
pub(crate) fn from_script(
    text: &str,
    env: &[(String, String)],
) -> Result<Option<Invocation>, shell::Limit> {
    let script = shell::run(text, env);
    if let Some(limit) = script.limit {
        return Err(limit);
    }
    Ok(invocation(&script))
}

fn invocation(script: &shell::Script) -> Option<Invocation> {
    let candidates: Vec<&shell::Command> =
        script.commands.iter().filter(|c| is_megatron(c)).collect();
    // The pretraining command when there is one (a script may also evaluate).
    let chosen = candidates
        .iter()
        .find(|c| {
            c.words.iter().any(|w| {
                let base = w.text.rsplit('/').next().unwrap_or(&w.text);
                base.starts_with("pretrain") && is_script(w)
            })
        })
        .or(candidates.first())?;
    let split = chosen.words.iter().position(is_script);
    let (launcher, megatron) = match split {
        Some(at) => (&chosen.words[..at], &chosen.words[at + 1..]),
        None => (&chosen.words[..0], &chosen.words[..]),
    };
    let world_vars = WORLD_VARS
        .iter()
        .flat_map(|v| [(*v).to_owned(), v.to_ascii_lowercase()])
        .filter_map(|name| script.assigned(&name).map(|field| (name, field)))
        .collect();
    Some(Invocation {
        launcher: options(launcher),
        megatron: options(megatron),
        world_vars,
        range: chosen.range.clone(),
    })
}

/// Whether a file is a YAML file of arguments rather than a script.
pub(crate) fn is_yaml(name: &str, text: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        return true;
    }
    if lower.ends_with(".sh") {
        return false;
    }
    // `--micro-batch-size: 4` or `micro_batch_size: 4` on a line of its own.
    text.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("--micro-batch-size:") || t.starts_with("micro_batch_size:")
    })
}

/// Why a YAML file of arguments could not be read, and where.
type YamlFailure = (String, Option<Range<usize>>);

/// The arguments of a YAML file: keys that start with `--` (with `true`
/// for a flag and `false`/`null` for an option left out), or, when there are
/// none, every leaf key as `--key-with-dashes`. `${VAR}` in a value is the
/// environment's, from `env` or unknown. The file is read as PyYAML reads
/// it (`megatron/training/yaml_arguments.py` loads it with PyYAML), with the
/// notes on values it reads differently from YAML 1.2.
pub(crate) fn from_yaml(
    name: &str,
    text: &str,
    env: &[(String, String)],
) -> Result<(Invocation, Vec<ReadNote>), YamlFailure> {
    let doc = Document::parse_with(
        name.to_owned(),
        text.to_owned(),
        SourceFormat::Yaml,
        YamlLoader::PyYaml11,
    )
    .map_err(|e| (e.message, e.range))?;
    let mut dashed = Vec::new();
    let mut plain = Vec::new();
    collect(&doc.root, &doc.text, env, &mut dashed, &mut plain, 0);
    let megatron = if dashed.is_empty() { plain } else { dashed };
    Ok((
        Invocation {
            launcher: Vec::new(),
            megatron,
            world_vars: Vec::new(),
            range: doc.root.range.clone(),
        },
        doc.notes,
    ))
}

fn collect(
    node: &Node,
    text: &str,
    env: &[(String, String)],
    dashed: &mut Vec<Arg>,
    plain: &mut Vec<Arg>,
    depth: usize,
) {
    let NodeKind::Table(entries) = &node.kind else {
        return;
    };
    if depth > 8 {
        return;
    }
    for e in entries {
        let range =
            e.key_range.start.min(e.value.range.start)..e.value.range.end.max(e.key_range.end);
        let value = |v: &Node| -> Option<Vec<Field>> {
            let shown = match &v.kind {
                NodeKind::Null | NodeKind::Bool(false) => return None,
                NodeKind::Bool(true) => return Some(Vec::new()),
                NodeKind::Integer(i) => i.to_string(),
                NodeKind::Float(_) => text.get(v.range.clone()).unwrap_or("").trim().to_owned(),
                NodeKind::String(s) => s.clone(),
                NodeKind::Array(items) => {
                    return Some(
                        items
                            .iter()
                            .map(|i| {
                                let t = text.get(i.range.clone()).unwrap_or("").trim().to_owned();
                                Field::at(t, i.range.clone(), Vec::new())
                            })
                            .collect(),
                    );
                }
                NodeKind::Table(_) => return None,
            };
            let (shown, unknown) = substitute(&shown, env);
            Some(vec![Field::at(shown, v.range.clone(), unknown)])
        };
        if let Some(key) = e.key.strip_prefix("--") {
            if let Some(values) = value(&e.value) {
                dashed.push(Arg {
                    name: format!("--{}", key.replace('_', "-")),
                    values,
                    range,
                });
            }
        } else if matches!(e.value.kind, NodeKind::Table(_)) {
            collect(&e.value, text, env, dashed, plain, depth + 1);
        } else if let Some(values) = value(&e.value) {
            plain.push(Arg {
                name: format!("--{}", e.key.replace('_', "-")),
                values,
                range,
            });
        }
    }
}

/// `${VAR}` replaced from `env`; the names not there are unknown.
fn substitute(text: &str, env: &[(String, String)]) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut unknown = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after.find('}') {
            Some(end) => {
                let name = &after[..end];
                match env.iter().find(|(k, _)| k == name) {
                    Some((_, v)) => out.push_str(v),
                    None => {
                        unknown.push(format!("`${{{name}}}`"));
                        out.push_str(&rest[at..at + 3 + end]);
                    }
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[at..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    (out, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(args: &[Arg]) -> Vec<(String, Vec<String>)> {
        args.iter()
            .map(|a| {
                (
                    a.name.clone(),
                    a.values.iter().map(|v| v.text.clone()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn the_pretraining_command_is_chosen_and_split_at_the_script() {
        let text = "python tools/eval.py --micro-batch-size 1\n\
                    torchrun --nproc_per_node 8 pretrain_gpt.py --micro_batch_size=4 --fp16 --rampup-batch-size 16 16 1000 --lr 1e-4\n";
        let inv = from_script(text, &[])
            .expect("within limits")
            .expect("a run");
        assert_eq!(
            names(&inv.launcher),
            [("--nproc-per-node".to_owned(), vec!["8".to_owned()])]
        );
        assert_eq!(
            names(&inv.megatron),
            [
                ("--micro-batch-size".to_owned(), vec!["4".to_owned()]),
                ("--fp16".to_owned(), vec![]),
                (
                    "--rampup-batch-size".to_owned(),
                    vec!["16".to_owned(), "16".to_owned(), "1000".to_owned()]
                ),
                ("--lr".to_owned(), vec!["1e-4".to_owned()]),
            ]
        );
        let m = &inv.megatron[0];
        assert_eq!(&text[m.value().expect("value").range()], "4");
        assert!(
            from_script("echo hello\n", &[])
                .expect("within limits")
                .is_none()
        );
    }

    #[test]
    fn yaml_arguments_read_both_forms() {
        let text = "ENV_VARS:\n  A: 1\nMODEL_ARGS:\n  --micro-batch-size: 4\n  --fp16: true\n  --bf16: false\n  --save: ${CKPT}\n";
        let (inv, _) = from_yaml("model_config.yaml", text, &[]).expect("yaml");
        let n = names(&inv.megatron);
        assert_eq!(
            n[0],
            ("--micro-batch-size".to_owned(), vec!["4".to_owned()])
        );
        assert_eq!(n[1], ("--fp16".to_owned(), vec![]));
        assert_eq!(n.len(), 3);
        assert_eq!(inv.megatron[2].values[0].unknown, ["`${CKPT}`"]);
        let (inv, _) = from_yaml(
            "cfg.yaml",
            "model:\n  micro_batch_size: 2\n  tensor_model_parallel_size: 2\n",
            &[],
        )
        .expect("yaml");
        assert_eq!(
            names(&inv.megatron)[1],
            (
                "--tensor-model-parallel-size".to_owned(),
                vec!["2".to_owned()]
            )
        );
        assert!(is_yaml("x", "MODEL_ARGS:\n  --micro-batch-size: 4\n"));
        assert!(!is_yaml("train.sh", "micro_batch_size: 4\n"));
    }
}
