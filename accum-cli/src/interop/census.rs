//! The census of what a dialect left unread: after a file has been read,
//! every key or argument whose name belongs to the batch vocabulary (batch
//! sizes, accumulation, devices, nodes, processes and world sizes, parallel
//! degrees, ramp-ups and batch schedules) that the dialect did not read
//! becomes a finding (`accum::interop::unread`, a warning) naming the key
//! and what accum assumed instead. A batch is reported with confidence only
//! when nothing of the vocabulary was left unread
//! ([`super::Imported::confident`]).
//!
//! The vocabulary is one list, shared by every dialect: JSON and YAML files
//! through [`super::reader::Reader`], which records each path it looks up,
//! and argument lists through [`unread_args`].

use std::collections::HashSet;
use std::ops::Range;

use accum_core::Code;
use accum_core::plan::Plan;

use super::Framework;
use crate::diagnostic::Diagnostic;
use crate::source::{Node, NodeKind};

/// A key of the batch vocabulary that the dialect did not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unread {
    /// The key as the file writes it (`train.global_batch_size`, `--foo-batch-size`).
    pub(crate) key: String,
    /// Its path (the key path, or the argument).
    pub(crate) path: Vec<String>,
    /// The key (or argument and value) in the text.
    pub(crate) range: Range<usize>,
    /// What the key is about, for what accum assumed instead.
    pub(crate) topic: Topic,
}

/// What a key of the batch vocabulary is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Topic {
    /// A batch size: micro, global, per device, train.
    Batch,
    /// Gradient accumulation.
    Accumulation,
    /// Devices, nodes, processes, the world size.
    Devices,
    /// A parallel degree (`*_parallel_size`).
    Parallel,
    /// A ramp-up or a batch schedule.
    Ramp,
}

/// Words that put a key outside the training batch: evaluation, inference,
/// logging, and names that only share a word with the vocabulary
/// (`batch_first`, `gradient_accumulation_fusion`, `limit_train_batches`).
const OUTSIDE: &[&str] = &[
    "eval",
    "evaluation",
    "val",
    "valid",
    "validation",
    "test",
    "testing",
    "predict",
    "prediction",
    "inference",
    "infer",
    "generation",
    "generate",
    "sanity",
    "limit",
    "log",
    "logging",
    "print",
    "norm",
    "first",
    "fusion",
    "allreduce",
    "fp32",
    "dtype",
    "bucket",
    "prefetch",
    "workers",
    "benchmark",
    "profile",
    "profiler",
    "checkpoint",
    "comm",
    "p2p",
    "sync",
];

/// The words of a key: lower case, split at `_`, `-`, `.` and blanks.
fn words(key: &str) -> Vec<String> {
    key.trim_start_matches('-')
        .to_ascii_lowercase()
        .split(['_', '-', '.', ' '])
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The topic of a key in the batch vocabulary, from its own name; `None`
/// when it is not a batch setting.
pub(crate) fn topic(key: &str) -> Option<Topic> {
    let w = words(key);
    let has = |x: &str| w.iter().any(|y| y == x);
    if w.iter().any(|x| OUTSIDE.contains(&x.as_str())) {
        return None;
    }
    let joined = w.concat();
    if has("rampup") || has("ramp") || (joined.contains("batch") && has("schedule")) {
        return Some(Topic::Ramp);
    }
    if has("accumulate") || has("accumulation") || has("accum") || has("gas") {
        return Some(Topic::Accumulation);
    }
    if has("grad") && (has("acc") || has("accu")) {
        return Some(Topic::Accumulation);
    }
    if has("batch")
        || has("bs")
        || has("mbs")
        || has("gbs")
        || has("microbatch")
        || has("minibatch")
        || w.iter().any(|x| x.ends_with("batchsize"))
    {
        return Some(Topic::Batch);
    }
    if has("devices")
        || has("gpus")
        || has("ngpus")
        || has("nodes")
        || has("nnodes")
        || has("nproc")
        || has("processes")
        || joined == "worldsize"
        || (has("world") && has("size"))
    {
        return Some(Topic::Devices);
    }
    let degree = has("size") || has("degree");
    if degree
        && (has("parallel")
            || ["tp", "pp", "cp", "ep", "dp", "sp", "etp", "mp"]
                .iter()
                .any(|x| has(x)))
    {
        return Some(Topic::Parallel);
    }
    None
}

/// The code of a value of key `path` that a reader refuses, `found` as
/// read: a factor of the batch (a batch size, an accumulation, a device
/// count or a parallel degree) given as 0 breaks the plan rule
/// `accum validate` names for the same mistake in accum's config
/// (`accum::plan::zero`); anything else is the framework's own value
/// problem (`accum::interop::value`).
pub(crate) fn refused_code(path: &[&str], found: Option<i128>) -> Code {
    let factor = path
        .last()
        .and_then(|key| topic(key))
        .is_some_and(|r| r != Topic::Ramp);
    let owned: Vec<String> = path.iter().map(|p| (*p).to_owned()).collect();
    if found == Some(0) && factor && !outside(&owned) {
        Code::Zero
    } else {
        Code::InteropValue
    }
}

/// Whether a path is outside the training batch by one of its tables
/// (`model.validation_ds.batch_size`, `inference.batch_size`).
pub(crate) fn outside(path: &[String]) -> bool {
    path.iter()
        .any(|p| words(p).iter().any(|w| OUTSIDE.contains(&w.as_str())))
}

/// The keys of a parsed file that belong to the batch vocabulary and whose
/// paths are not in `read`. A table counts as read when a key inside it was
/// read; the tables of a list are searched too (callbacks, plugins).
pub(crate) fn unread_keys(root: &Node, read: &HashSet<Vec<String>>) -> Vec<Unread> {
    // The tables something was read inside: every proper prefix of a path
    // read, so that each table is looked up once.
    let inside: HashSet<&[String]> = read
        .iter()
        .flat_map(|p| (0..p.len()).map(move |k| &p[..k]))
        .collect();
    let seen = Seen { read, inside };
    let mut out = Vec::new();
    let mut path = Vec::new();
    walk(root, None, &seen, &mut path, &mut out, 0);
    out
}

/// What a reader looked up, and the tables it looked inside.
struct Seen<'a> {
    read: &'a HashSet<Vec<String>>,
    inside: HashSet<&'a [String]>,
}

/// Tables deeper than this are not searched (no configuration nests so far).
const MAX_DEPTH: usize = 32;

fn walk(
    node: &Node,
    key_range: Option<&Range<usize>>,
    seen: &Seen<'_>,
    path: &mut Vec<String>,
    out: &mut Vec<Unread>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let was_read = seen.read.contains(path.as_slice());
    let before = out.len();
    match &node.kind {
        NodeKind::Table(entries) => {
            for e in entries {
                path.push(e.key.clone());
                walk(&e.value, Some(&e.key_range), seen, path, out, depth + 1);
                path.pop();
            }
        }
        // A list of tables (callbacks, plugins): each table's keys, even
        // when the list was looked up (readers look into the tables they
        // know, not at every key).
        NodeKind::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if matches!(item.kind, NodeKind::Table(_)) {
                    path.push(i.to_string());
                    walk(item, None, seen, path, out, depth + 1);
                    path.pop();
                }
            }
        }
        _ => {}
    }
    // A table of the vocabulary is named itself only when nothing inside
    // it was read or named (`accumulate_grad_batches: {0: 8}`).
    let inner = out.len() > before
        || (matches!(node.kind, NodeKind::Table(_)) && seen.inside.contains(path.as_slice()));
    if let (Some(key), Some(range)) = (path.last(), key_range)
        && !was_read
        && !inner
        && !matches!(node.kind, NodeKind::Null)
        && let Some(topic) = topic(key)
        && !outside(&path[..path.len() - 1])
        // A degree of 1 divides nothing: the replicas are the same with it.
        && !(topic == Topic::Parallel && matches!(node.kind, NodeKind::Integer(1)))
    {
        out.push(Unread {
            key: path.join("."),
            path: path.clone(),
            range: range.start..node.range.end.max(range.end),
            topic,
        });
    }
}

/// The arguments of a command line (`--name`, its value, their ranges) that
/// belong to the batch vocabulary and that `known` does not list.
pub(crate) fn unread_args<'a>(
    args: impl IntoIterator<Item = (&'a str, Option<&'a str>, Range<usize>)>,
    known: impl Fn(&str) -> bool,
) -> Vec<Unread> {
    let mut seen = HashSet::new();
    args.into_iter()
        .filter(|(name, ..)| !known(name))
        .filter_map(|(name, value, range)| {
            let topic = topic(name)?;
            // A degree of 1 divides nothing, as for keys.
            if topic == Topic::Parallel && value.is_some_and(|v| v.trim() == "1") {
                return None;
            }
            seen.insert(name.to_owned()).then(|| Unread {
                key: name.to_owned(),
                path: vec![name.to_owned()],
                range,
                topic,
            })
        })
        .collect()
}

/// The finding for an unread key, with what accum assumed instead: the
/// quantity of the batch that the key's topic is about.
pub(crate) fn finding(
    framework: Framework,
    unread: &Unread,
    plan: &Plan,
    ramp: bool,
) -> Diagnostic {
    let (m, a, d, b) = (
        plan.micro_batch(),
        plan.accumulation(),
        plan.replicas(),
        plan.effective_batch().get(),
    );
    let assumed = match unread.topic {
        Topic::Batch => format!(
            "the batch from the keys it read: micro-batch m = {m} and global batch B = {m} × {a} × {d} = {b}"
        ),
        Topic::Accumulation => {
            format!("the accumulation from the keys it read: A = {a} microbatches per update")
        }
        Topic::Devices => {
            format!("the devices from the keys and options it read: D = {d} data-parallel replicas")
        }
        Topic::Parallel => format!(
            "the parallel degrees from the keys and options it read: D = {d} data-parallel replicas"
        ),
        Topic::Ramp if ramp => "the batch schedule from the keys it read".to_owned(),
        Topic::Ramp => format!("a constant batch: B = {b} from the first update"),
    };
    Diagnostic::error(
        Code::Unread,
        unread.path.clone(),
        format!(
            "`{}` is a batch setting that accum's {framework} reader does not read; accum assumed {assumed}",
            unread.key
        ),
    )
    .warning()
    .help(format!(
        "check what {framework} does with `{}`: if it changes the batch, the batch here is not the one trained; remove the key, or give the value it means through the keys or options accum reads",
        unread.key
    ))
    .at(unread.range.clone(), "not read by accum")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Document, SourceFormat};

    #[test]
    fn the_vocabulary_is_the_batch_and_not_its_neighbours() {
        for (key, expected) in [
            ("train_batch_size", Some(Topic::Batch)),
            ("--micro-batch-size", Some(Topic::Batch)),
            ("per_gpu_train_batch_size", Some(Topic::Batch)),
            ("auto_find_batch_size", Some(Topic::Batch)),
            ("batch_duration", Some(Topic::Batch)),
            ("gradient_accumulation_steps", Some(Topic::Accumulation)),
            ("accumulate_grad_batches", Some(Topic::Accumulation)),
            ("grad_acc_steps", Some(Topic::Accumulation)),
            ("devices", Some(Topic::Devices)),
            ("num_nodes", Some(Topic::Devices)),
            ("--nproc_per_node", Some(Topic::Devices)),
            ("global_num_gpus", Some(Topic::Devices)),
            ("world_size", Some(Topic::Devices)),
            ("pipe_parallel_size", Some(Topic::Parallel)),
            ("--ds-sequence-parallel-size", Some(Topic::Parallel)),
            ("sequence_parallel_degree", Some(Topic::Parallel)),
            ("dp_shard_size", Some(Topic::Parallel)),
            ("rampup_batch_size", Some(Topic::Ramp)),
            ("--step-batch-size-schedule", Some(Topic::Ramp)),
            ("per_device_eval_batch_size", None),
            ("eval_accumulation_steps", None),
            ("limit_train_batches", None),
            ("--no-gradient-accumulation-fusion", None),
            ("--accumulate-allreduce-grads-in-fp32", None),
            ("batch_first", None),
            ("sequence_parallel", None),
            ("log_every_n_steps", None),
            ("learning_rate", None),
            ("reduce_bucket_size", None),
            ("batch_p2p_comm", None),
            ("sync_batch_comm", None),
        ] {
            assert_eq!(topic(key), expected, "{key}");
        }
    }

    #[test]
    fn unread_keys_skip_what_was_read_and_evaluation() {
        let text = "exp_manager:\n  checkpoint_callback_params:\n    model_parallel_size: 2\nexpert_model_parallel_size: 1\ntrainer:\n  devices: 2\n  gpus_per_node: 8\nmodel:\n  train_ds:\n    batch_size: 4\n    batch_sampler:\n      batch_size: 8\n  validation_ds:\n    batch_size: 16\n  rampup_batch_size: null\ncallbacks:\n  - accumulate: 3\n";
        let doc =
            Document::parse("x.yaml".into(), text.into(), SourceFormat::Yaml).expect("parses");
        let read: HashSet<Vec<String>> = [
            vec!["trainer", "devices"],
            vec!["model", "train_ds", "batch_size"],
        ]
        .into_iter()
        .map(|p| p.into_iter().map(str::to_owned).collect())
        .collect();
        let keys: Vec<(String, Topic)> = unread_keys(&doc.root, &read)
            .into_iter()
            .map(|u| (u.key, u.topic))
            .collect();
        assert_eq!(
            keys,
            [
                ("trainer.gpus_per_node".to_owned(), Topic::Devices),
                (
                    "model.train_ds.batch_sampler.batch_size".to_owned(),
                    Topic::Batch
                ),
                ("callbacks.0.accumulate".to_owned(), Topic::Accumulation),
            ]
        );
        let u = &unread_keys(&doc.root, &read)[0];
        assert_eq!(&text[u.range.clone()], "gpus_per_node: 8");
    }

    #[test]
    fn unread_args_name_each_option_once() {
        let args = [
            ("--micro-batch-size", Some("2"), 0..1),
            ("--foo-batch-size", Some("3"), 2..3),
            ("--foo-batch-size", None, 4..5),
            ("--lr", Some("1e-4"), 6..7),
            ("--encoder-pipeline-model-parallel-size", Some("1"), 8..9),
        ];
        let u = unread_args(args, |n| n == "--micro-batch-size");
        assert_eq!(u.len(), 1);
        assert_eq!(
            (u[0].key.as_str(), u[0].range.clone()),
            ("--foo-batch-size", 2..3)
        );
    }
}
