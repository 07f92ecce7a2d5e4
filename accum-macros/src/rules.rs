//! The plan rules, written once: the roles a value can play, the arithmetic
//! of a plan over plain `u64` values, and the wording of every violation
//! (`accum::plan::zero`, `accum::plan::missing`, `accum::plan::overflow`,
//! `accum::plan::layout`, `accum::plan::replicas`,
//! `accum::plan::global-batch`).
//!
//! This file is compiled by two crates. accum-macros has it as `rules`,
//! and checks a struct's literal constants with its functions at compile
//! time. accum-core has it as `plan::rules`, the expansion of
//! `accum_macros::plan_rules!()`, which emits this file's items:
//! `Plan`, `PlanInput::resolve`, `Layout` and the derive's run-time checks
//! call its functions, and `PlanError` holds its [`Violation`]s. So a
//! compile error and a run-time error about the same numbers read alike.
//! accum-core depends on accum-macros (it re-exports the derive), so the
//! macro crate cannot depend on accum-core, and a proc-macro crate exports
//! only macros: hence one file, shipped in accum-macros, compiled twice. It
//! must stay plain `std`: no `crate::` paths, no serde, no syn, nothing
//! that only one of the two crates has; its `//!` lines are left out of
//! the expansion, and no other line may start with them.
//!
//! The fix sentences write plan values as `key = value`, the way a user
//! writes them in `#[accum(...)]` and in TOML, without digit grouping so
//! that they can be copied; messages group digits for reading.

use std::fmt;

/// A role a configuration value can play in a plan. Its [`key`](Role::key)
/// is the `x-accum-role` of generated schemas and the key of
/// `#[accum(...)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// `m`: examples per microbatch per replica.
    MicroBatch,
    /// `A`: microbatches per update per replica.
    Accumulation,
    /// `D`: data-parallel replicas.
    Replicas,
    /// All devices of the job; `D = world_size / (tp·pp·cp)`.
    WorldSize,
    /// Tensor-parallel degree (devices sharing one model copy).
    TensorParallel,
    /// Pipeline-parallel degree (devices sharing one model copy).
    PipelineParallel,
    /// Context/sequence-parallel degree (devices sharing one model copy).
    ContextParallel,
    /// `L`: tokens per example when lengths are fixed.
    SeqLen,
    /// `B`: the declared effective batch, checked against `m·A·D`.
    GlobalBatch,
}

impl Role {
    /// Every role, in plan order.
    pub const ALL: [Role; 9] = [
        Role::MicroBatch,
        Role::Accumulation,
        Role::Replicas,
        Role::WorldSize,
        Role::TensorParallel,
        Role::PipelineParallel,
        Role::ContextParallel,
        Role::SeqLen,
        Role::GlobalBatch,
    ];

    /// The key of every role, in the order of [`Role::ALL`].
    pub const KEYS: [&'static str; 9] = [
        "micro_batch",
        "accumulation",
        "replicas",
        "world_size",
        "tensor_parallel",
        "pipeline_parallel",
        "context_parallel",
        "seq_len",
        "global_batch",
    ];

    /// The machine name, as in `x-accum-role` and `#[accum(...)]`.
    pub const fn key(self) -> &'static str {
        Role::KEYS[self as usize]
    }

    /// Parses a role key.
    pub fn from_key(key: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.key() == key)
    }

    /// The name of the variant, for code that names it (`Role::MicroBatch`).
    pub const fn variant(self) -> &'static str {
        match self {
            Role::MicroBatch => "MicroBatch",
            Role::Accumulation => "Accumulation",
            Role::Replicas => "Replicas",
            Role::WorldSize => "WorldSize",
            Role::TensorParallel => "TensorParallel",
            Role::PipelineParallel => "PipelineParallel",
            Role::ContextParallel => "ContextParallel",
            Role::SeqLen => "SeqLen",
            Role::GlobalBatch => "GlobalBatch",
        }
    }

    /// The symbol used in formulas (`m`, `A`, `D`, …).
    pub const fn symbol(self) -> &'static str {
        match self {
            Role::MicroBatch => "m",
            Role::Accumulation => "A",
            Role::Replicas => "D",
            Role::WorldSize => "world",
            Role::TensorParallel => "tp",
            Role::PipelineParallel => "pp",
            Role::ContextParallel => "cp",
            Role::SeqLen => "L",
            Role::GlobalBatch => "B",
        }
    }

    /// What the value counts.
    pub const fn counts(self) -> &'static str {
        match self {
            Role::MicroBatch => "examples per microbatch per replica",
            Role::Accumulation => "microbatches per update per replica",
            Role::Replicas => "data-parallel copies of the model",
            Role::WorldSize => "all devices of the job",
            Role::TensorParallel => "devices that split each layer of one model copy",
            Role::PipelineParallel => "devices that split the layers of one model copy",
            Role::ContextParallel => "devices that split the sequence of one model copy",
            Role::SeqLen => "tokens per example",
            Role::GlobalBatch => "examples per update over all replicas",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// `2048` as `2,048`.
pub fn group_digits(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A plan rule that values break, with the numbers that break it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// A factor that must be at least 1 is zero (`accum::plan::zero`).
    Zero {
        /// The role that is zero.
        role: Role,
    },
    /// A required value is missing and cannot be solved for
    /// (`accum::plan::missing`).
    Missing {
        /// The missing role.
        role: Role,
    },
    /// A product of plan values does not fit in 64 bits
    /// (`accum::plan::overflow`).
    Overflow {
        /// The factors, in the order they were multiplied.
        factors: Vec<(Role, u64)>,
    },
    /// `world_size` is not divisible by `tp·pp·cp` (`accum::plan::layout`).
    LayoutNotDivisible {
        /// All devices.
        world_size: u64,
        /// Tensor-parallel degree.
        tensor: u64,
        /// Pipeline-parallel degree.
        pipeline: u64,
        /// Context-parallel degree.
        context: u64,
    },
    /// Replicas given directly disagree with the layout
    /// (`accum::plan::replicas`).
    ReplicasDisagree {
        /// The replicas given directly.
        replicas: u64,
        /// All devices.
        world_size: u64,
        /// Tensor-parallel degree.
        tensor: u64,
        /// Pipeline-parallel degree.
        pipeline: u64,
        /// Context-parallel degree.
        context: u64,
    },
    /// The declared global batch is not `m·A·D`
    /// (`accum::plan::global-batch`).
    GlobalBatchMismatch {
        /// Declared global batch.
        global_batch: u64,
        /// Micro-batch.
        micro_batch: u64,
        /// Accumulation steps.
        accumulation: u64,
        /// Data-parallel replicas.
        replicas: u64,
    },
    /// Solving `A` (or `m`) from the global batch would need a fraction
    /// (`accum::plan::global-batch`).
    GlobalBatchNotDivisible {
        /// Declared global batch.
        global_batch: u64,
        /// The role being solved for (`accumulation` or `micro_batch`).
        solving: Role,
        /// The known factor besides `D`.
        known: u64,
        /// Data-parallel replicas.
        replicas: u64,
    },
    /// The global batch is not a multiple of the factors that are known, so
    /// no value of the others gives `B = m·A·D` (`accum::plan::global-batch`).
    GlobalBatchNotMultiple {
        /// Declared global batch.
        global_batch: u64,
        /// The known factors, in plan order.
        factors: Vec<(Role, u64)>,
    },
}

/// A violation in words: what is wrong, a short label for the value, the
/// way out, and the plan values of each alternative the way out names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text {
    /// What is wrong, with the equation and its numbers.
    pub message: String,
    /// A short label for the value itself.
    pub label: String,
    /// The way out: `use global_batch = 28 (accumulation = 7) or 32 (accumulation = 8)`.
    pub fix: String,
    /// The alternatives the fix names, in its order; each a set of plan
    /// values that pass together.
    pub options: Vec<Vec<(Role, u64)>>,
}

impl Violation {
    /// The violation in words; each variant has one function below.
    pub(crate) fn text(&self) -> Text {
        match *self {
            Violation::Zero { role } => zero(role, role.key()),
            Violation::Missing { role } => missing(role),
            Violation::Overflow { ref factors } => overflow(&equation(factors)),
            Violation::LayoutNotDivisible {
                world_size,
                tensor,
                pipeline,
                context,
            } => layout_not_divisible(world_size, tensor, pipeline, context),
            Violation::ReplicasDisagree {
                replicas,
                world_size,
                tensor,
                pipeline,
                context,
            } => replicas_disagree(replicas, world_size, tensor, pipeline, context),
            Violation::GlobalBatchMismatch {
                global_batch,
                micro_batch,
                accumulation,
                replicas,
            } => global_batch_mismatch(global_batch, micro_batch, accumulation, replicas),
            Violation::GlobalBatchNotDivisible {
                global_batch,
                solving,
                known,
                replicas,
            } => global_batch_not_divisible(global_batch, solving, known, replicas),
            Violation::GlobalBatchNotMultiple {
                global_batch,
                ref factors,
            } => global_batch_not_multiple(global_batch, factors),
        }
    }

    /// The role of the value to change.
    pub(crate) fn role(&self) -> Role {
        match *self {
            Violation::Zero { role } | Violation::Missing { role } => role,
            // `L` when it is the factor that made `m·A·D·L` overflow, else `m`.
            Violation::Overflow { ref factors } => {
                if factors.iter().any(|(role, _)| *role == Role::SeqLen) {
                    Role::SeqLen
                } else {
                    Role::MicroBatch
                }
            }
            Violation::LayoutNotDivisible { .. } => Role::WorldSize,
            Violation::ReplicasDisagree { .. } => Role::Replicas,
            Violation::GlobalBatchMismatch { .. }
            | Violation::GlobalBatchNotDivisible { .. }
            | Violation::GlobalBatchNotMultiple { .. } => Role::GlobalBatch,
        }
    }
}

impl fmt::Display for Violation {
    /// The message, then the fix, as a compile error and `PlanError` show it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.text();
        write!(f, "{}; {}", text.message, text.fix)
    }
}

/// `micro_batch 2 × accumulation 18446744073709551615`.
pub fn equation(factors: &[(Role, u64)]) -> String {
    factors
        .iter()
        .map(|(role, value)| format!("{role} {value}"))
        .collect::<Vec<_>>()
        .join(" × ")
}

/// `accum::plan::zero`: every factor of the plan is at least 1. `place` is
/// how the fix names the value: its key, or its place in a file.
/// Example: `accumulation = 0`.
pub fn zero(role: Role, place: &str) -> Text {
    Text {
        message: format!("{role} is 0, and every factor of the plan must be at least 1"),
        label: "must be at least 1".to_owned(),
        fix: format!("set {place} to 1 or more"),
        options: vec![vec![(role, 1)]],
    }
}

/// The message of `accum::plan::missing` for replicas: without them or a
/// world size, the effective batch is unknown.
pub const MISSING_REPLICAS: &str =
    "neither replicas nor world_size is given, so the effective batch B = m·A·D is unknown";

/// How a missing `m` or `A` could be solved instead of given.
pub const fn solvable_as(role: Role) -> &'static str {
    match role {
        Role::MicroBatch => "or give global_batch and accumulation so that it can be solved",
        _ => {
            "or give global_batch so that it can be solved as global_batch / (micro_batch × replicas)"
        }
    }
}

/// `accum::plan::missing`: `m`, `A` and `D` are given or solvable from the
/// global batch. Example: a config with `micro_batch` and `replicas` only.
pub fn missing(role: Role) -> Text {
    let (message, fix) = match role {
        Role::Replicas => (
            MISSING_REPLICAS.to_owned(),
            "give replicas (data-parallel copies), or world_size with its tensor/pipeline/context degrees"
                .to_owned(),
        ),
        Role::MicroBatch | Role::Accumulation => {
            (format!("{role} is missing"), format!("give {role}, {}", solvable_as(role)))
        }
        _ => (format!("{role} is missing"), format!("give {role}")),
    };
    Text {
        message,
        label: "missing".to_owned(),
        fix,
        options: Vec::new(),
    }
}

/// `accum::plan::overflow`: the products of the plan fit in a 64-bit
/// count. Example: `micro_batch = 18446744073709551615, accumulation = 2`.
pub fn overflow(equation: &str) -> Text {
    Text {
        message: format!("{equation} does not fit in a 64-bit count"),
        label: "product overflows".to_owned(),
        fix: "use smaller values".to_owned(),
        options: Vec::new(),
    }
}

/// `tp·pp·cp`, or `None` when it overflows.
fn model_parallel(tensor: u64, pipeline: u64, context: u64) -> Option<u64> {
    tensor.checked_mul(pipeline)?.checked_mul(context)
}

fn replicas_noun(n: u64) -> String {
    if n == 1 {
        "1 replica".to_owned()
    } else {
        format!("{n} replicas")
    }
}

/// The nearest multiples of `step` below and above `value` (the lower one
/// left out when it would be zero).
pub fn nearest_multiples(value: u64, step: u64) -> (Option<u64>, Option<u64>) {
    if step == 0 {
        return (None, None);
    }
    let below = value / step * step;
    let above = below.checked_add(step);
    ((below > 0).then_some(below), above)
}

/// `accum::plan::layout`: `world_size` is divisible by `tp·pp·cp`, since
/// devices that share one model copy do not multiply the batch. Example:
/// `world_size = 64, tensor_parallel = 3, pipeline_parallel = 2`.
pub fn layout_not_divisible(world_size: u64, tensor: u64, pipeline: u64, context: u64) -> Text {
    let group = model_parallel(tensor, pipeline, context);
    let message = format!(
        "world_size {world_size} is not divisible by tensor {tensor} × pipeline {pipeline} × context {context} = {}: \
         devices that share one model copy do not multiply the batch",
        group.map_or_else(|| "more than 2^64".to_owned(), |g| g.to_string())
    );
    let (fix, options) = match group {
        Some(group) => {
            let (lo, hi) = nearest_multiples(world_size, group);
            let choices: Vec<u64> = lo.into_iter().chain(hi).collect();
            let shown: Vec<String> = choices
                .iter()
                .enumerate()
                .map(|(i, &w)| {
                    let noun = replicas_noun(w / group);
                    if i == 0 {
                        format!("world_size = {w} ({noun})")
                    } else {
                        format!("{w} ({noun})")
                    }
                })
                .collect();
            (
                format!("use {}", shown.join(" or ")),
                choices
                    .iter()
                    .map(|&w| vec![(Role::WorldSize, w)])
                    .collect(),
            )
        }
        None => (
            "use tensor, pipeline and context degrees whose product divides world_size".to_owned(),
            Vec::new(),
        ),
    };
    Text {
        message,
        label: "not divisible by tp·pp·cp".to_owned(),
        fix,
        options,
    }
}

/// `accum::plan::replicas`: replicas given beside a layout equal
/// `world_size / (tp·pp·cp)`. Example: `replicas = 3, world_size = 8,
/// tensor_parallel = 2`.
pub fn replicas_disagree(
    replicas: u64,
    world_size: u64,
    tensor: u64,
    pipeline: u64,
    context: u64,
) -> Text {
    let from_layout = layout_replicas(world_size, tensor, pipeline, context);
    let message = format!(
        "replicas {replicas} disagrees with world_size {world_size} / (tensor {tensor} × pipeline {pipeline} × context {context}) = {}",
        match &from_layout {
            Ok(d) => d.to_string(),
            Err(err) => err.text().message,
        }
    );
    let (fix, options) = match from_layout {
        Ok(d) => (
            format!("give either replicas or the layout, not both, or use replicas = {d}"),
            vec![vec![(Role::Replicas, d)]],
        ),
        Err(_) => (
            "give either replicas or the layout, not both".to_owned(),
            Vec::new(),
        ),
    };
    Text {
        message,
        label: "disagrees with the layout".to_owned(),
        fix,
        options,
    }
}

/// The global batches nearest to `global_batch` that are multiples of
/// `step`, each with the value of `solved` it gives:
/// `use global_batch = 28 (accumulation = 7) or 32 (accumulation = 8)`.
pub fn global_batch_choices(
    global_batch: u64,
    step: u64,
    solved: Option<Role>,
) -> (String, Vec<Vec<(Role, u64)>>) {
    let (lo, hi) = nearest_multiples(global_batch, step);
    let choices: Vec<(u64, Option<(Role, u64)>)> = lo
        .into_iter()
        .chain(hi)
        .map(|b| (b, solved.map(|role| (role, b / step))))
        .collect();
    let options = choices
        .iter()
        .map(|&(b, solved)| {
            let mut values = vec![(Role::GlobalBatch, b)];
            values.extend(solved);
            values
        })
        .collect();
    (choices_sentence(&choices), options)
}

/// `use global_batch = 96 (accumulation = 6) or 112 (accumulation = 7)`:
/// global batches, each with the value it solves a factor to, if any.
pub fn choices_sentence(choices: &[(u64, Option<(Role, u64)>)]) -> String {
    let shown: Vec<String> = choices
        .iter()
        .enumerate()
        .map(|(i, &(b, solved))| {
            let value = if i == 0 {
                format!("global_batch = {b}")
            } else {
                b.to_string()
            };
            match solved {
                Some((role, x)) => format!("{value} ({role} = {x})"),
                None => value,
            }
        })
        .collect();
    match shown.as_slice() {
        [init @ .., last] if !init.is_empty() => format!("use {} or {last}", init.join(", ")),
        _ => format!("use {}", shown.concat()),
    }
}

/// The most `(m, A)` pairs a fix names to keep a global batch.
pub const KEEP_PAIRS: usize = 4;

/// The largest divisor tried when listing the `(m, A)` pairs of a global
/// batch: every pair of `m·A ≤ 2^32` is found, and of a larger one those
/// whose smaller factor is at most this, in a bounded time.
const KEEP_SEARCH: u64 = 1 << 16;

/// The `(m, A)` pairs with `m·A = per_replica` that keep a global batch
/// (`B/D = m·A`), at most [`KEEP_PAIRS`] of them, in the order a user
/// would take them. With a micro-batch given, it is the limit (the largest
/// that is known to fit) and the pairs are those of `m` up to it, largest
/// first, so nearest to it; with only an accumulation given, those of `A`
/// nearest to it, the larger `A` (smaller `m`) first on a tie; with neither,
/// the largest `m` first.
pub fn keeping_pairs(
    per_replica: u64,
    micro_batch: Option<u64>,
    accumulation: Option<u64>,
) -> Vec<(u64, u64)> {
    if per_replica == 0 {
        return Vec::new();
    }
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    let mut i: u64 = 1;
    while i <= KEEP_SEARCH && i.checked_mul(i).is_some_and(|sq| sq <= per_replica) {
        if per_replica.is_multiple_of(i) {
            pairs.push((i, per_replica / i));
            if i != per_replica / i {
                pairs.push((per_replica / i, i));
            }
        }
        i += 1;
    }
    match (micro_batch, accumulation) {
        (Some(limit), _) => {
            pairs.retain(|&(m, _)| m <= limit);
            pairs.sort_by_key(|&(m, _)| std::cmp::Reverse(m));
        }
        (None, Some(given)) => {
            pairs.sort_by_key(|&(_, a)| (a.abs_diff(given), std::cmp::Reverse(a)));
        }
        (None, None) => pairs.sort_by_key(|&(m, _)| std::cmp::Reverse(m)),
    }
    pairs.truncate(KEEP_PAIRS);
    pairs
}

/// The fix of a global batch that the known factors do not divide: first
/// the `(m, A)` pairs that keep it ([`keeping_pairs`]), when `replicas`
/// divides it, then the global batches nearest to it that are multiples of
/// `step`, each with the value of `solved` it gives. When `replicas` does
/// not divide it, no pair keeps it, and the fix says so before the global
/// batches: `keep global_batch = 60 with micro_batch = 6 and accumulation =
/// 5, or micro_batch × accumulation = 5 × 6; or use global_batch = 48
/// (accumulation = 3) or 64 (accumulation = 4)`.
pub fn keep_or_choices(
    global_batch: u64,
    replicas: Option<u64>,
    micro_batch: Option<u64>,
    accumulation: Option<u64>,
    step: u64,
    solved: Option<Role>,
) -> (String, Vec<Vec<(Role, u64)>>) {
    let (_, mut options) = global_batch_choices(global_batch, step, solved);
    let choices: Vec<(u64, Option<(Role, u64)>)> = options
        .iter()
        .map(|values| (values[0].1, values.get(1).copied()))
        .collect();
    let pairs = match replicas {
        Some(d) if d != 0 && global_batch.is_multiple_of(d) => {
            keeping_pairs(global_batch / d, micro_batch, accumulation)
        }
        _ => Vec::new(),
    };
    let fix = keep_sentence(global_batch, replicas, &pairs, &choices);
    let mut all: Vec<Vec<(Role, u64)>> = pairs
        .iter()
        .map(|&(m, a)| vec![(Role::MicroBatch, m), (Role::Accumulation, a)])
        .collect();
    all.append(&mut options);
    (fix, all)
}

/// The sentence of [`keep_or_choices`]: the pairs that keep
/// `global_batch`, or why none does (`replicas` does not divide it), then
/// the global batches of `choices` ([`choices_sentence`]).
pub fn keep_sentence(
    global_batch: u64,
    replicas: Option<u64>,
    pairs: &[(u64, u64)],
    choices: &[(u64, Option<(Role, u64)>)],
) -> String {
    let others = choices_sentence(choices);
    if !pairs.is_empty() {
        let (m, a) = pairs[0];
        let first = format!("micro_batch = {m} and accumulation = {a}");
        let more: Vec<String> = pairs[1..]
            .iter()
            .map(|(m, a)| format!("{m} × {a}"))
            .collect();
        let listed = match more.as_slice() {
            [] => first,
            [one] => format!("{first}, or micro_batch × accumulation = {one}"),
            [init @ .., last] => format!(
                "{first}, or micro_batch × accumulation = {} or {last}",
                init.join(", ")
            ),
        };
        return if choices.is_empty() {
            format!("keep global_batch = {global_batch} with {listed}")
        } else {
            format!("keep global_batch = {global_batch} with {listed}; or {others}")
        };
    }
    match replicas {
        Some(d) if d != 0 && !global_batch.is_multiple_of(d) => format!(
            "no micro_batch and accumulation keep global_batch = {global_batch}: it must be a multiple of \
             replicas {d}; {others}"
        ),
        _ => others,
    }
}

/// `accum::plan::global-batch`: a declared global batch equals `m·A·D`.
/// Example: `micro_batch = 2, accumulation = 8, replicas = 2,
/// global_batch = 30`. When `m·D` divides it, the fix keeps it by changing
/// `A`; otherwise it keeps it by changing `m` and `A` together, when `D`
/// divides it, and only then names the nearest global batches that work.
pub fn global_batch_mismatch(
    global_batch: u64,
    micro_batch: u64,
    accumulation: u64,
    replicas: u64,
) -> Text {
    let product = micro_batch
        .saturating_mul(accumulation)
        .saturating_mul(replicas);
    let step = micro_batch.saturating_mul(replicas);
    let divisible = step != 0 && global_batch.is_multiple_of(step);
    let mut message = format!(
        "global_batch {} ≠ micro_batch {micro_batch} × accumulation {accumulation} × replicas {replicas} = {}",
        group_digits(global_batch),
        group_digits(product)
    );
    if !divisible && step != 0 {
        message.push_str(&format!(
            "; {} is not a multiple of m·D = {}",
            group_digits(global_batch),
            group_digits(step)
        ));
    }
    let (fix, options) = if divisible {
        (
            format!(
                "use accumulation = {} to keep global_batch = {global_batch}, or global_batch = {product}",
                global_batch / step
            ),
            vec![
                vec![(Role::Accumulation, global_batch / step)],
                vec![(Role::GlobalBatch, product)],
            ],
        )
    } else {
        keep_or_choices(
            global_batch,
            Some(replicas),
            Some(micro_batch),
            Some(accumulation),
            step,
            Some(Role::Accumulation),
        )
    };
    Text {
        message,
        label: format!(
            "≠ {micro_batch} × {accumulation} × {replicas} = {}",
            group_digits(product)
        ),
        fix,
        options,
    }
}

/// The factor besides `D` that is known when solving `solving`.
pub const fn solving_partner(solving: Role) -> Role {
    match solving {
        Role::MicroBatch => Role::Accumulation,
        _ => Role::MicroBatch,
    }
}

/// `accum::plan::global-batch`: a missing `A` (or `m`) is solved exactly
/// from the global batch, never floored. Example: `micro_batch = 2,
/// replicas = 2, global_batch = 30` (30 / 4 is not whole).
pub fn global_batch_not_divisible(
    global_batch: u64,
    solving: Role,
    known: u64,
    replicas: u64,
) -> Text {
    let step = known.saturating_mul(replicas);
    let (micro_batch, accumulation) = match solving {
        Role::MicroBatch => (None, Some(known)),
        _ => (Some(known), None),
    };
    let (fix, options) = keep_or_choices(
        global_batch,
        Some(replicas),
        micro_batch,
        accumulation,
        step,
        Some(solving),
    );
    Text {
        message: format!(
            "cannot solve {solving}: global_batch {} is not a multiple of {} {known} × replicas {replicas} = {}",
            group_digits(global_batch),
            solving_partner(solving),
            group_digits(step)
        ),
        label: match solving {
            Role::MicroBatch => "not a multiple of A·D".to_owned(),
            _ => "not a multiple of m·D".to_owned(),
        },
        fix,
        options,
    }
}

/// `"accumulation 8 × replicas 2 = 16"`, or `"accumulation 8"` alone.
fn factors_text(factors: &[(Role, u64)]) -> String {
    let parts: Vec<String> = factors
        .iter()
        .map(|(role, value)| format!("{role} {}", group_digits(*value)))
        .collect();
    match factors {
        [_] => parts.concat(),
        _ => format!(
            "{} = {}",
            parts.join(" × "),
            group_digits(product_of(factors))
        ),
    }
}

fn product_of(factors: &[(Role, u64)]) -> u64 {
    factors
        .iter()
        .fold(1u64, |acc, (_, value)| acc.saturating_mul(*value))
}

/// `accum::plan::global-batch`, while another factor is itself wrong: the
/// global batch is still a multiple of the factors that are known.
/// Example: `micro_batch = 0, accumulation = 8, global_batch = 30`.
pub fn global_batch_not_multiple(global_batch: u64, factors: &[(Role, u64)]) -> Text {
    let given = |role: Role| factors.iter().find(|(r, _)| *r == role).map(|&(_, v)| v);
    let (fix, options) = keep_or_choices(
        global_batch,
        given(Role::Replicas),
        given(Role::MicroBatch),
        given(Role::Accumulation),
        product_of(factors),
        None,
    );
    Text {
        message: format!(
            "global_batch {} is not a multiple of {}, so no value of the other factors gives B = m·A·D",
            group_digits(global_batch),
            factors_text(factors)
        ),
        label: format!("not a multiple of {}", group_digits(product_of(factors))),
        fix,
        options,
    }
}

/// The text of a const assertion about constants the derive cannot read
/// (paths to `const`s): const evaluation cannot format numbers, so these
/// name the rule without them. `Plan::from_parts` panics with them too.
#[allow(dead_code)]
pub mod constant {
    /// A zero factor.
    pub const ZERO: &str = "is 0, and every factor of the plan must be at least 1";
    /// `world_size` not divisible by `tp·pp·cp`.
    pub const LAYOUT: &str = "devices that share one model copy do not multiply the batch; \
         use a world_size that is a multiple of tensor × pipeline × context";
    /// Replicas that disagree with the layout.
    pub const REPLICAS: &str = "give either replicas or the layout, not both, or make them agree";
    /// A global batch that is not `m·A·D`.
    pub const GLOBAL_BATCH: &str =
        "change accumulation or global_batch so that m·A·D = global_batch";
    /// `m·A·D` overflows.
    pub const PRODUCT_OVERFLOW: &str =
        "micro_batch × accumulation × replicas does not fit in a 64-bit count; use smaller values";
    /// `m·A·D·L` overflows.
    pub const TOKENS_OVERFLOW: &str = "micro_batch × accumulation × replicas × seq_len does not fit in a 64-bit count; \
         use smaller values";
    /// `tp·pp·cp` overflows.
    pub const GROUP_OVERFLOW: &str =
        "tensor × pipeline × context does not fit in a 64-bit count; use smaller values";
    /// `m`, `A` or `D` is 0.
    pub const FACTOR_ZERO: &str =
        "every factor of the plan (micro_batch, accumulation, replicas) must be at least 1";
    /// `L` is 0.
    pub const SEQ_LEN_ZERO: &str = "seq_len is 0, and every factor of the plan must be at least 1";
    /// A part of the layout is 0.
    pub const LAYOUT_ZERO: &str =
        "world_size and the tensor, pipeline and context degrees must be at least 1";
    /// `world_size` not divisible by `tp·pp·cp`, without the numbers.
    pub const LAYOUT_NOT_DIVISIBLE: &str = "world_size is not divisible by tensor × pipeline × context: \
         devices that share one model copy do not multiply the batch";
}

/// `value`, or [`Violation::Zero`] when it is 0 (`accum::plan::zero`).
pub fn nonzero(role: Role, value: u64) -> Result<u64, Violation> {
    if value == 0 {
        Err(Violation::Zero { role })
    } else {
        Ok(value)
    }
}

/// The product of plan values, or [`Violation::Overflow`]
/// (`accum::plan::overflow`).
pub fn product(factors: &[(Role, u64)]) -> Result<u64, Violation> {
    factors
        .iter()
        .try_fold(1u64, |acc, (_, value)| acc.checked_mul(*value))
        .ok_or_else(|| Violation::Overflow {
            factors: factors.to_vec(),
        })
}

/// `D = world_size / (tp·pp·cp)` (`accum::plan::layout`): every part at
/// least 1, and the world divisible. A `tp·pp·cp` that overflows is larger
/// than any world, so it is reported as not divisible.
pub fn layout_replicas(
    world_size: u64,
    tensor: u64,
    pipeline: u64,
    context: u64,
) -> Result<u64, Violation> {
    nonzero(Role::WorldSize, world_size)?;
    nonzero(Role::TensorParallel, tensor)?;
    nonzero(Role::PipelineParallel, pipeline)?;
    nonzero(Role::ContextParallel, context)?;
    match model_parallel(tensor, pipeline, context) {
        Some(group) if world_size.is_multiple_of(group) => Ok(world_size / group),
        _ => Err(Violation::LayoutNotDivisible {
            world_size,
            tensor,
            pipeline,
            context,
        }),
    }
}

/// `accum::plan::replicas`: replicas given beside a layout agree with it.
pub fn replicas_agree(
    replicas: u64,
    [world_size, tensor, pipeline, context]: [u64; 4],
) -> Result<u64, Violation> {
    let from_layout = layout_replicas(world_size, tensor, pipeline, context)?;
    if from_layout == replicas {
        Ok(replicas)
    } else {
        Err(Violation::ReplicasDisagree {
            replicas,
            world_size,
            tensor,
            pipeline,
            context,
        })
    }
}

/// `accum::plan::global-batch`: `B = m·A·D`, with the product checked
/// (`accum::plan::overflow`).
pub fn check_global_batch(
    global_batch: u64,
    micro_batch: u64,
    accumulation: u64,
    replicas: u64,
) -> Result<u64, Violation> {
    let product = product(&[
        (Role::MicroBatch, micro_batch),
        (Role::Accumulation, accumulation),
        (Role::Replicas, replicas),
    ])?;
    if product == global_batch {
        Ok(product)
    } else {
        Err(Violation::GlobalBatchMismatch {
            global_batch,
            micro_batch,
            accumulation,
            replicas,
        })
    }
}

/// `accum::plan::global-batch`: solves `B = known · x · D` for `x`
/// (`solving`), exactly.
pub fn solve(
    global_batch: u64,
    solving: Role,
    known: u64,
    replicas: u64,
) -> Result<u64, Violation> {
    let step = product(&[
        (solving_partner(solving), known),
        (Role::Replicas, replicas),
    ])?;
    if global_batch.is_multiple_of(step) {
        Ok(global_batch / step)
    } else {
        Err(Violation::GlobalBatchNotDivisible {
            global_batch,
            solving,
            known,
            replicas,
        })
    }
}

/// `accum::plan::global-batch` with a factor that is itself wrong: the
/// global batch is a multiple of the factors that are known. A product
/// that overflows is left to the overflow rule.
pub fn check_multiple(global_batch: u64, factors: &[(Role, u64)]) -> Result<(), Violation> {
    match product(factors) {
        Ok(p) if !factors.is_empty() && !global_batch.is_multiple_of(p) => {
            Err(Violation::GlobalBatchNotMultiple {
                global_batch,
                factors: factors.to_vec(),
            })
        }
        _ => Ok(()),
    }
}

/// Plan values as given, some possibly missing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanValues {
    /// `m`.
    pub micro_batch: Option<u64>,
    /// `A`.
    pub accumulation: Option<u64>,
    /// `D`, when given directly.
    pub replicas: Option<u64>,
    /// `[world_size, tp, pp, cp]`, when given.
    pub layout: Option<[u64; 4]>,
    /// `L`.
    pub seq_len: Option<u64>,
    /// `B`.
    pub global_batch: Option<u64>,
}

/// A plan whose every rule holds: `m·A·D = B` and `B·L` fit in 64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Solved {
    /// `m`.
    pub micro_batch: u64,
    /// `A`.
    pub accumulation: u64,
    /// `D`.
    pub replicas: u64,
    /// `B = m·A·D`.
    pub global_batch: u64,
}

/// Every plan rule over `given`, in the order a user fixes them: the
/// layout and replicas, zeros, the global batch (solving a missing `m` or
/// `A` exactly), then the products. The first violation is returned.
pub fn resolve(given: &PlanValues) -> Result<Solved, Violation> {
    let replicas = match (given.replicas, given.layout) {
        (Some(d), Some(layout)) => replicas_agree(d, layout)?,
        (Some(d), None) => d,
        (None, Some([w, tp, pp, cp])) => layout_replicas(w, tp, pp, cp)?,
        (None, None) => {
            return Err(Violation::Missing {
                role: Role::Replicas,
            });
        }
    };
    nonzero(Role::Replicas, replicas)?;
    for (role, value) in [
        (Role::MicroBatch, given.micro_batch),
        (Role::Accumulation, given.accumulation),
        (Role::GlobalBatch, given.global_batch),
    ] {
        if let Some(value) = value {
            nonzero(role, value)?;
        }
    }
    let (m, a) = match (given.micro_batch, given.accumulation, given.global_batch) {
        (Some(m), Some(a), Some(b)) => {
            check_global_batch(b, m, a, replicas)?;
            (m, a)
        }
        (Some(m), Some(a), None) => (m, a),
        (Some(m), None, Some(b)) => (m, solve(b, Role::Accumulation, m, replicas)?),
        (None, Some(a), Some(b)) => (solve(b, Role::MicroBatch, a, replicas)?, a),
        (None, _, _) => {
            return Err(Violation::Missing {
                role: Role::MicroBatch,
            });
        }
        (Some(_), None, None) => {
            return Err(Violation::Missing {
                role: Role::Accumulation,
            });
        }
    };
    let mut factors = vec![
        (Role::MicroBatch, m),
        (Role::Accumulation, a),
        (Role::Replicas, replicas),
    ];
    let global_batch = product(&factors)?;
    if let Some(len) = given.seq_len {
        nonzero(Role::SeqLen, len)?;
        factors.push((Role::SeqLen, len));
        product(&factors)?;
    }
    Ok(Solved {
        micro_batch: m,
        accumulation: a,
        replicas,
        global_batch,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(m: u64, a: u64, d: u64, b: u64) -> PlanValues {
        PlanValues {
            micro_batch: Some(m),
            accumulation: Some(a),
            replicas: Some(d),
            global_batch: Some(b),
            ..PlanValues::default()
        }
    }

    #[test]
    fn roles_have_one_table() {
        for (i, role) in Role::ALL.into_iter().enumerate() {
            assert_eq!(role as usize, i);
            assert_eq!(Role::from_key(role.key()), Some(role));
            assert_eq!(format!("{role:?}"), role.variant());
            assert!(!role.counts().is_empty() && !role.symbol().is_empty());
        }
        assert_eq!(Role::from_key("micro"), None);
    }

    #[test]
    fn a_plan_that_holds_is_solved() {
        let solved = resolve(&given(2, 8, 2, 32)).expect("holds");
        assert_eq!((solved.accumulation, solved.global_batch), (8, 32));
        let solve_a = PlanValues {
            accumulation: None,
            ..given(2, 0, 2, 32)
        };
        assert_eq!(resolve(&solve_a).map(|s| s.accumulation), Ok(8));
        let solve_m = PlanValues {
            micro_batch: None,
            ..given(0, 4, 2, 64)
        };
        assert_eq!(resolve(&solve_m).map(|s| s.micro_batch), Ok(8));
    }

    #[test]
    fn global_batch_mismatch_keeps_b_when_m_d_divides_it() {
        let err = resolve(&given(2, 8, 2, 28)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "global_batch 28 ≠ micro_batch 2 × accumulation 8 × replicas 2 = 32; \
             use accumulation = 7 to keep global_batch = 28, or global_batch = 32"
        );
        assert_eq!(
            err.text().options,
            [vec![(Role::Accumulation, 7)], vec![(Role::GlobalBatch, 32)]]
        );
        assert_eq!(err.role(), Role::GlobalBatch);
    }

    #[test]
    fn global_batch_mismatch_names_the_nearest_batches_otherwise() {
        let err = resolve(&given(2, 8, 2, 30)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "global_batch 30 ≠ micro_batch 2 × accumulation 8 × replicas 2 = 32; 30 is not a multiple of m·D = 4; \
             keep global_batch = 30 with micro_batch = 1 and accumulation = 15; \
             or use global_batch = 28 (accumulation = 7) or 32 (accumulation = 8)"
        );
        assert_eq!(err.text().label, "≠ 2 × 8 × 2 = 32");
        // Large values: grouped in the message, copyable in the fix; 4000
        // is not a multiple of 64 replicas, so no (m, A) keeps it.
        let err = resolve(&given(8, 8, 64, 4000)).unwrap_err();
        assert!(
            err.text().message.starts_with("global_batch 4,000 ≠"),
            "{err}"
        );
        assert_eq!(
            err.text().fix,
            "no micro_batch and accumulation keep global_batch = 4000: it must be a multiple of replicas 64; \
             use global_batch = 3584 (accumulation = 7) or 4096 (accumulation = 8)"
        );
        assert_eq!(
            err.text().options,
            [
                vec![(Role::GlobalBatch, 3584), (Role::Accumulation, 7)],
                vec![(Role::GlobalBatch, 4096), (Role::Accumulation, 8)]
            ]
        );
    }

    #[test]
    fn a_global_batch_is_kept_by_pairs_up_to_the_given_micro_batch() {
        let err = resolve(&given(8, 4, 2, 60)).unwrap_err();
        assert_eq!(
            err.text().fix,
            "keep global_batch = 60 with micro_batch = 6 and accumulation = 5, \
             or micro_batch × accumulation = 5 × 6, 3 × 10 or 2 × 15; \
             or use global_batch = 48 (accumulation = 3) or 64 (accumulation = 4)"
        );
        let options = err.text().options;
        assert_eq!(options.len(), KEEP_PAIRS + 2);
        assert_eq!(options[0], [(Role::MicroBatch, 6), (Role::Accumulation, 5)]);
        // Every pair keeps B = m·A·D, with m no larger than the one given.
        for option in &options[..KEEP_PAIRS] {
            let [(Role::MicroBatch, m), (Role::Accumulation, a)] = option[..] else {
                panic!("{option:?}");
            };
            assert!(m <= 8 && m * a * 2 == 60, "{option:?}");
        }
        // A left-out accumulation keeps B the same way.
        let err = solve(84, Role::Accumulation, 8, 3).unwrap_err();
        assert!(
            err.text()
                .fix
                .starts_with("keep global_batch = 84 with micro_batch = 7 and accumulation = 4, "),
            "{err}"
        );
        // A left-out micro-batch: the accumulations nearest the given one,
        // the larger first on a tie.
        assert_eq!(
            keeping_pairs(30, None, Some(4)),
            [(6, 5), (10, 3), (5, 6), (15, 2)]
        );
        let err = solve(60, Role::MicroBatch, 4, 2).unwrap_err();
        assert!(
            err.text()
                .fix
                .starts_with("keep global_batch = 60 with micro_batch = 6 and accumulation = 5, "),
            "{err}"
        );
        // A global batch that is not a multiple of the replicas says why.
        let err = solve(61, Role::MicroBatch, 4, 2).unwrap_err();
        assert!(
            err.text()
                .fix
                .starts_with("no micro_batch and accumulation keep global_batch = 61: it must be a multiple of replicas 2; use "),
            "{err}"
        );
    }

    #[test]
    fn pairs_are_bounded() {
        assert_eq!(keeping_pairs(1, Some(8), None), [(1, 1)]);
        assert_eq!(keeping_pairs(0, Some(8), None), []);
        // A large prime: only 1 and itself, found without a long search.
        let prime = 18_446_744_073_709_551_557;
        assert_eq!(keeping_pairs(prime, None, None), [(prime, 1), (1, prime)]);
        assert_eq!(
            keeping_pairs(1 << 40, Some(1 << 20), None).len(),
            KEEP_PAIRS
        );
        // Past 2^32 examples per replica, the divisors up to 2^16 and their
        // partners are the ones found.
        assert_eq!(
            keeping_pairs(1 << 40, Some(1 << 20), None)[0],
            (1 << 16, 1 << 24)
        );
    }

    #[test]
    fn solving_needs_a_whole_factor() {
        let err = solve(30, Role::Accumulation, 2, 2).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot solve accumulation: global_batch 30 is not a multiple of micro_batch 2 × replicas 2 = 4; \
             keep global_batch = 30 with micro_batch = 1 and accumulation = 15; \
             or use global_batch = 28 (accumulation = 7) or 32 (accumulation = 8)"
        );
        let err = solve(30, Role::MicroBatch, 4, 2).unwrap_err();
        assert_eq!(
            err.text().fix,
            "keep global_batch = 30 with micro_batch = 3 and accumulation = 5, \
             or micro_batch × accumulation = 5 × 3, 15 × 1 or 1 × 15; \
             or use global_batch = 24 (micro_batch = 3) or 32 (micro_batch = 4)"
        );
        assert_eq!(err.text().label, "not a multiple of A·D");
        // No multiple below: only the one above.
        let err = solve(2, Role::Accumulation, 2, 2).unwrap_err();
        assert_eq!(
            err.text().fix,
            "keep global_batch = 2 with micro_batch = 1 and accumulation = 1; \
             or use global_batch = 4 (accumulation = 1)"
        );
        assert_eq!(solve(32, Role::Accumulation, 2, 2), Ok(8));
    }

    #[test]
    fn b_not_a_multiple_of_the_known_factors() {
        let factors = [(Role::Accumulation, 8), (Role::Replicas, 2)];
        let err = check_multiple(30, &factors).unwrap_err();
        assert_eq!(
            err.to_string(),
            "global_batch 30 is not a multiple of accumulation 8 × replicas 2 = 16, so no value of the other factors \
             gives B = m·A·D; keep global_batch = 30 with micro_batch = 3 and accumulation = 5, \
             or micro_batch × accumulation = 5 × 3, 1 × 15 or 15 × 1; or use global_batch = 16 or 32"
        );
        assert_eq!(
            err.text().options[4..],
            [vec![(Role::GlobalBatch, 16)], vec![(Role::GlobalBatch, 32)]]
        );
        // Without the replicas no pair is known to keep it.
        let without = check_multiple(30, &[(Role::Accumulation, 8)]).unwrap_err();
        assert_eq!(without.text().fix, "use global_batch = 24 or 32");
        assert_eq!(check_multiple(32, &factors), Ok(()));
        assert_eq!(check_multiple(30, &[]), Ok(()));
        let one = check_multiple(500, &[(Role::Accumulation, 8)]).unwrap_err();
        assert!(
            one.text().message.contains("multiple of accumulation 8,"),
            "{one}"
        );
    }

    #[test]
    fn zero_factors_are_violations() {
        for role in [Role::MicroBatch, Role::Accumulation, Role::GlobalBatch] {
            let mut input = given(2, 8, 2, 32);
            match role {
                Role::MicroBatch => input.micro_batch = Some(0),
                Role::Accumulation => input.accumulation = Some(0),
                _ => input.global_batch = Some(0),
            }
            assert_eq!(resolve(&input), Err(Violation::Zero { role }));
        }
        let err = resolve(&given(2, 0, 2, 32)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "accumulation is 0, and every factor of the plan must be at least 1; set accumulation to 1 or more"
        );
        assert_eq!(err.text().options, [vec![(Role::Accumulation, 1)]]);
        assert_eq!(
            zero(Role::Replicas, "`batch.replicas`").fix,
            "set `batch.replicas` to 1 or more"
        );
        let seq = PlanValues {
            seq_len: Some(0),
            ..given(2, 8, 2, 32)
        };
        assert_eq!(resolve(&seq), Err(Violation::Zero { role: Role::SeqLen }));
        assert_eq!(
            layout_replicas(8, 0, 1, 1),
            Err(Violation::Zero {
                role: Role::TensorParallel
            })
        );
    }

    #[test]
    fn layouts_that_do_not_divide() {
        assert_eq!(layout_replicas(64, 2, 2, 1), Ok(16));
        let err = layout_replicas(64, 3, 2, 1).unwrap_err();
        assert_eq!(
            err.to_string(),
            "world_size 64 is not divisible by tensor 3 × pipeline 2 × context 1 = 6: devices that share one model \
             copy do not multiply the batch; use world_size = 60 (10 replicas) or 66 (11 replicas)"
        );
        assert_eq!(err.role(), Role::WorldSize);
        let small = layout_replicas(4, 8, 1, 1).unwrap_err();
        assert_eq!(small.text().fix, "use world_size = 8 (1 replica)");
        let huge = layout_replicas(64, u64::MAX, 2, 1).unwrap_err();
        assert!(huge.text().message.contains("= more than 2^64"), "{huge}");
        assert!(huge.text().options.is_empty());
    }

    #[test]
    fn replicas_that_disagree_with_the_layout() {
        assert_eq!(replicas_agree(4, [8, 2, 1, 1]), Ok(4));
        let err = replicas_agree(3, [8, 2, 1, 1]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "replicas 3 disagrees with world_size 8 / (tensor 2 × pipeline 1 × context 1) = 4; \
             give either replicas or the layout, not both, or use replicas = 4"
        );
        assert_eq!(err.text().options, [vec![(Role::Replicas, 4)]]);
        let input = PlanValues {
            layout: Some([8, 2, 1, 1]),
            ..given(2, 8, 3, 48)
        };
        assert_eq!(resolve(&input), Err(err));
        // A layout that does not divide is its own violation, first.
        assert!(matches!(
            replicas_agree(3, [8, 3, 1, 1]),
            Err(Violation::LayoutNotDivisible { .. })
        ));
    }

    #[test]
    fn products_that_overflow() {
        let err = resolve(&given(u64::MAX, 2, 1, 8)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "micro_batch 18446744073709551615 × accumulation 2 × replicas 1 does not fit in a 64-bit count; use smaller values"
        );
        let long = PlanValues {
            seq_len: Some(1 << 30),
            global_batch: None,
            ..given(1 << 20, 1 << 20, 1, 0)
        };
        let err = resolve(&long).unwrap_err();
        assert_eq!(err.role(), Role::SeqLen);
        assert!(matches!(err, Violation::Overflow { ref factors } if factors.len() == 4));
        assert!(solve(8, Role::Accumulation, u64::MAX, 2).is_err());
    }

    #[test]
    fn missing_values_name_how_to_solve_them() {
        assert_eq!(
            resolve(&PlanValues::default()),
            Err(Violation::Missing {
                role: Role::Replicas
            })
        );
        let only_m = PlanValues {
            micro_batch: Some(2),
            replicas: Some(1),
            ..PlanValues::default()
        };
        let err = resolve(&only_m).unwrap_err();
        assert_eq!(
            err.to_string(),
            "accumulation is missing; give accumulation, or give global_batch so that it can be solved as \
             global_batch / (micro_batch × replicas)"
        );
        assert_eq!(missing(Role::Replicas).message, MISSING_REPLICAS);
    }

    #[test]
    fn digits_are_grouped_for_reading() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(u64::MAX), "18,446,744,073,709,551,615");
    }
}
