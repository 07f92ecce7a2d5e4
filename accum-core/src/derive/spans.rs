//! The rules for a config's lengths ([`Span`]s, typed counts, integers with
//! a declared unit): a length in tokens needs a fixed `seq_len` unless the
//! data's lengths vary and are counted; a warmup and an interval are not
//! longer than the run (`accum::span`, `accum::run::scheduler`, `accum::calc::tokens`).
//!
//! What a length is for is declared on its field: `#[accum(warmup)]`,
//! `#[accum(total)]` (the run's length) or `#[accum(every)]` (an interval:
//! logging, evaluation, checkpoints). Lengths in different units are
//! compared through the plan, exactly — through its stages under a batch
//! ramp-up, where a warmup or run length in updates is a warning
//! (`accum::stages::shift`): its meaning in tokens depends on the stages.

use std::cmp::Ordering;
use std::fmt;

use serde::Serialize;

use crate::code::Code;
use crate::finding::{FieldPath, Finding, Findings};
use crate::plan::{Fix, Rounding, StagedPlan};
use crate::span::Span;
use crate::units::{Count, Unit, UnitKind, Updates, group_digits};

use super::{Given, RoleValue, input_from_values};
use crate::plan::Role;

/// What a length field is for, as declared on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SpanUse {
    /// `#[accum(warmup)]`: the learning-rate warmup.
    Warmup,
    /// `#[accum(total)]`: the run's length.
    Total,
    /// `#[accum(every)]`: an interval (logging, evaluation, checkpoints).
    Every,
}

impl SpanUse {
    /// The attribute key, as in `x-accum-span`: `warmup`, `total`, `every`.
    pub const fn key(self) -> &'static str {
        match self {
            SpanUse::Warmup => "warmup",
            SpanUse::Total => "total",
            SpanUse::Every => "every",
        }
    }

    /// Parses an attribute key.
    pub fn from_key(key: &str) -> Option<SpanUse> {
        [SpanUse::Warmup, SpanUse::Total, SpanUse::Every]
            .into_iter()
            .find(|u| u.key() == key)
    }
}

impl fmt::Display for SpanUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// One length field of a config that holds a value (an absent optional
/// field is not listed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpanValue {
    /// Where it is.
    pub path: FieldPath,
    /// What it is for, when declared.
    pub span_use: Option<SpanUse>,
    /// The length, in the unit it was written in.
    pub span: Span,
}

impl SpanValue {
    /// The length in field `name` of the struct at `prefix`. Called by
    /// generated code.
    pub fn field(
        prefix: &FieldPath,
        name: &str,
        span_use: Option<SpanUse>,
        span: Span,
    ) -> SpanValue {
        SpanValue::at(prefix.child(name), span_use, span)
    }

    /// The length at `path`, however it was read.
    pub fn at(path: FieldPath, span_use: Option<SpanUse>, span: Span) -> SpanValue {
        SpanValue {
            path,
            span_use,
            span,
        }
    }
}

/// A field type that holds a length: [`Span`], a typed count (`Updates`,
/// `Tokens`, …), or an `Option` of either.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a length",
    label = "`warmup`, `total` and `every` mark a length field",
    note = "use a `Span` (\"500 updates\", \"2M tokens\"), a typed count such as `Updates` or `Tokens`, or an integer with `#[accum(unit = \"update\")]`"
)]
pub trait SpanField {
    /// The length, `None` when absent.
    fn span_value(&self) -> Option<Span>;
}

impl SpanField for Span {
    #[inline]
    fn span_value(&self) -> Option<Span> {
        Some(*self)
    }
}

impl<U: Unit> SpanField for Count<U> {
    #[inline]
    fn span_value(&self) -> Option<Span> {
        Some(Span::of(*self))
    }
}

impl<T: SpanField> SpanField for Option<T> {
    #[inline]
    fn span_value(&self) -> Option<Span> {
        self.as_ref().and_then(SpanField::span_value)
    }
}

/// Checks a config's lengths against each other and the plan, and returns
/// every problem:
///
/// - a length in tokens without a fixed `seq_len`, unless
///   `variable_length` says the training loop counts the tokens of each
///   update (`accum::plan::seq-len`);
/// - a warmup longer than the run (`accum::span::warmup`);
/// - an interval longer than the run, which would never fire
///   (`accum::span::every`).
///
/// Lengths in different units are compared through the plan the role
/// values resolve to; without one (or without a fixed `seq_len` for
/// tokens) only lengths in the same unit are compared. Under a batch
/// ramp-up, [`check_values`](super::check_values) compares them through
/// the stages.
pub fn check_spans(spans: &[SpanValue], roles: &[RoleValue], variable_length: bool) -> Findings {
    check(spans, roles, &Through::Roles, variable_length)
}

/// What lengths in different units are compared through.
pub(super) enum Through<'a> {
    /// The constant plan the role values resolve to, if they do.
    Roles,
    /// A staged plan, and the field of its ramp-up (none for one stage).
    Stages(&'a StagedPlan, Option<&'a FieldPath>),
    /// Nothing: a ramp-up that does not resolve.
    Nothing,
}

/// The rules of [`check_spans`], through `through`.
pub(super) fn check(
    spans: &[SpanValue],
    roles: &[RoleValue],
    through: &Through<'_>,
    variable_length: bool,
) -> Findings {
    let mut findings = Findings::default();
    let resolved;
    let (plan, ramp) = match through {
        Through::Roles => {
            resolved = input_from_values(roles)
                .resolve()
                .ok()
                .map(StagedPlan::constant);
            (resolved.as_ref(), None)
        }
        Through::Stages(staged, ramp) => (Some(*staged), *ramp),
        Through::Nothing => (None, None),
    };
    let seq_len_place = roles.iter().find(|v| v.role == Role::SeqLen);
    let seq_len_given = roles
        .iter()
        .any(|v| v.role == Role::SeqLen && v.given != Given::Absent);

    // `accum::calc::tokens`: tokens are a number of updates only with a fixed length, or
    // when the loop counts them.
    if !seq_len_given && !variable_length {
        for value in spans {
            let span = value.span;
            if span.unit() != UnitKind::Token {
                continue;
            }
            let path = &value.path;
            let fix = match seq_len_place {
                Some(place) => format!(
                    "set `{}` (tokens per example), or give `{path}` in updates or examples",
                    place.source.path()
                ),
                None => format!(
                    "give `{path}` in updates or examples, or mark the config \
                     `#[accum(variable_length)]` when the training loop counts the tokens of each update"
                ),
            };
            let mut finding = Finding::new(
                Code::SeqLen,
                path.clone(),
                format!(
                    "`{path}` is {span}, and without a fixed seq_len a count of tokens is not a number of updates"
                ),
                "needs a fixed seq_len".to_owned(),
            )
            .with_fix(Fix::text(fix));
            if let Some(place) = seq_len_place {
                finding = finding.with_related(
                    place.source.path().clone(),
                    Some(Role::SeqLen),
                    "not given".to_owned(),
                );
            }
            findings.push(finding);
        }
    }

    // `accum::run::scheduler`: the warmup and the intervals fit in the run.
    let totals: Vec<(&SpanValue, Span)> = spans
        .iter()
        .filter(|v| v.span_use == Some(SpanUse::Total))
        .map(|v| (v, v.span))
        .collect();
    for value in spans {
        let span = value.span;
        let code = match value.span_use {
            Some(SpanUse::Warmup) => Code::Warmup,
            Some(SpanUse::Every) => Code::Every,
            _ => continue,
        };
        for &(total, total_span) in &totals {
            let order = compare(span, total_span, plan);
            if order.is_none() && plan.is_some() && variable_length && !seq_len_given {
                findings.push(unchecked(code, value, total, seq_len_place));
                continue;
            }
            if order != Some(Ordering::Greater) {
                continue;
            }
            findings.push(longer_than_the_run(
                code, value, span, total, total_span, plan,
            ));
        }
    }
    // Under a ramp-up, a schedule length in updates changes its meaning
    // with the stages.
    if let (Some(staged), Some(ramp)) = (plan, ramp)
        && !staged.is_constant()
    {
        for value in spans {
            if let Some(finding) = shifted(value, staged, ramp, variable_length) {
                findings.push(finding);
            }
        }
    }
    // A run is whole updates: a length in another unit rounds.
    if let Some(plan) = plan {
        findings.extend(
            totals
                .iter()
                .filter_map(|&(total, span)| rounded_total(total, span, plan)),
        );
    }
    findings
}

/// `a` against `b`, exactly: in the same unit directly, else through the
/// stages. Each length is a real position on the run's update axis; the
/// whole updates it covers (rounded down) order them unless they are the
/// same, and inside that update the stage's plan compares what is left
/// (`rest_a / per_update(a) ⋛ rest_b / per_update(b)`).
fn compare(a: Span, b: Span, plan: Option<&StagedPlan>) -> Option<Ordering> {
    if a.unit() == b.unit() {
        return Some(a.value().cmp(&b.value()));
    }
    let plan = plan?;
    let whole_a = plan.to_updates(a.value(), a.unit(), Rounding::Down).ok()?;
    let whole_b = plan.to_updates(b.value(), b.unit(), Rounding::Down).ok()?;
    if whole_a != whole_b {
        return Some(whole_a.cmp(&whole_b));
    }
    let stage = plan.plan_at(whole_a);
    let rest = |span: Span| -> Option<u128> {
        let before = plan.consumed(whole_a, span.unit()).ok()?;
        Some(u128::from(span.value() - before))
    };
    let per_a = u128::from(stage.per_update(a.unit()).ok()?);
    let per_b = u128::from(stage.per_update(b.unit()).ok()?);
    Some((rest(a)? * per_b).cmp(&(rest(b)? * per_a)))
}

/// The warning (`accum::span::warmup`, `accum::span::every`) of a warmup or
/// an interval that cannot be compared with the run before it starts: one
/// of the two is in tokens, the other is not, and with variable-length
/// examples and no `seq_len` the tokens of an update are known only as the
/// run counts them. Without it, the only sign would come at the end of the
/// run (a warmup that never reached its peak).
fn unchecked(
    code: Code,
    value: &SpanValue,
    total: &SpanValue,
    seq_len_place: Option<&RoleValue>,
) -> Finding {
    let (what, rule) = match code {
        Code::Warmup => ("warmup", "whether the warmup ends before the run does"),
        _ => ("interval", "whether the interval comes within the run"),
    };
    let seq_len = seq_len_place.map_or_else(
        || "seq_len".to_owned(),
        |place| format!("`{}`", place.source.path()),
    );
    let mut finding = Finding::new(
        code,
        value.path.clone(),
        format!(
            "the {what} `{}` is {} and the run `{}` is {}: with variable-length examples and no seq_len \
             the tokens of an update are unknown, so {rule} is known only as the run goes",
            value.path, value.span, total.path, total.span
        ),
        "cannot be checked against the run".to_owned(),
    )
    .warning()
    .with_fix(Fix::text(format!(
        "set {seq_len} when every example has the same number of tokens, or write `{}` and `{}` in one unit",
        value.path, total.path
    )))
    .with_related(total.path.clone(), None, format!("the run: {}", total.span));
    if let Some(place) = seq_len_place {
        finding = finding.with_related(
            place.source.path().clone(),
            Some(Role::SeqLen),
            "not given".to_owned(),
        );
    }
    finding
}

/// The `accum::stages::shift` warning for a warmup or run length written
/// in updates or microbatches under a ramp-up: its length in examples (and
/// tokens, with a fixed `seq_len`) through the stages, and what it would be
/// at the full batch.
fn shifted(
    value: &SpanValue,
    staged: &StagedPlan,
    ramp: &FieldPath,
    variable_length: bool,
) -> Option<Finding> {
    let span = value.span;
    if !matches!(value.span_use, Some(SpanUse::Warmup | SpanUse::Total))
        || !matches!(span.unit(), UnitKind::Update | UnitKind::Microbatch)
        || span.value() == 0
    {
        return None;
    }
    let exact = |unit| staged.convert(span.value(), span.unit(), unit, Rounding::Exact);
    let full = |unit| {
        staged
            .final_plan()
            .convert(span.value(), span.unit(), unit, Rounding::Exact)
    };
    let examples = exact(UnitKind::Example).ok()?;
    let tokens = exact(UnitKind::Token).ok();
    let path = &value.path;
    let through = match tokens {
        Some(tokens) => format!(
            "{} examples and {} tokens",
            group_digits(examples),
            group_digits(tokens)
        ),
        None => format!("{} examples", group_digits(examples)),
    };
    let (unit, kept, at_full) = match tokens {
        Some(tokens) => (UnitKind::Token, tokens, full(UnitKind::Token).ok()?),
        None => (UnitKind::Example, examples, full(UnitKind::Example).ok()?),
    };
    // Which updates: the run's first ones, through every stage they cross.
    let stages = staged
        .stage_index_at(
            staged
                .to_updates(span.value(), span.unit(), Rounding::Up)
                .ok()?
                .saturating_sub(Updates::new(1)),
        )
        .saturating_add(1);
    // Tokens are a length this config can use with a fixed seq_len, or
    // when the loop counts them.
    let lengths = if tokens.is_none() && !variable_length {
        "examples"
    } else {
        "tokens or examples"
    };
    let kept_span = written(kept, unit);
    Some(
        Finding::new(
            Code::StageShift,
            path.clone(),
            format!(
                "`{path}` is {span} under a batch ramp-up: {through} through the stages ({} {} at the full batch)",
                group_digits(at_full),
                unit.plural()
            ),
            format!(
                "in {} across {stages} stage{}",
                span.unit().plural(),
                if stages == 1 { "" } else { "s" }
            ),
        )
        .warning()
        .with_fix(Fix::text(format!(
            "write it in {lengths}, which keep their meaning whatever the stages: \"{kept_span}\" is its length through these stages"
        )))
        .with_related(ramp.clone(), None, "the batch changes here".to_owned()),
    )
}

/// The `accum::span::rounding` warning for a run length in examples or
/// microbatches that is not a whole number of updates through the plan: the
/// run trains whole updates, so it rounds up to the update that crosses the
/// length (as the schedule and the driver count it), and trains more than
/// was written. A length in tokens is a budget that is almost never whole
/// updates (`"10B tokens"` of `B·L = 1,048,576`); a warning there would be
/// on every such config and say nothing, so it is left to `accum calc
/// --total`, which gives the tokens the run trains.
fn rounded_total(value: &SpanValue, span: Span, plan: &StagedPlan) -> Option<Finding> {
    if matches!(span.unit(), UnitKind::Update | UnitKind::Token)
        || plan
            .to_updates(span.value(), span.unit(), Rounding::Exact)
            .is_ok()
    {
        return None;
    }
    let up = plan
        .to_updates(span.value(), span.unit(), Rounding::Up)
        .ok()?;
    let down = up.saturating_sub(Updates::new(1));
    let trained = plan.consumed(up, span.unit()).ok()?;
    let below = plan.consumed(down, span.unit()).ok()?;
    let unit = span.unit();
    let path = &value.path;
    let updates = |n: Updates| {
        format!(
            "{} update{}",
            group_digits(n.get()),
            if n.get() == 1 { "" } else { "s" }
        )
    };
    // As a config writes them: digits without grouping.
    let fix = if down.is_zero() {
        format!(
            "write `{path}` as \"{}\" ({}), which the run trains exactly",
            written(up.get(), UnitKind::Update),
            written(trained, unit)
        )
    } else {
        format!(
            "write `{path}` as \"{}\" or \"{}\" ({} or {}), which the run trains exactly",
            written(down.get(), UnitKind::Update),
            written(up.get(), UnitKind::Update),
            written(below, unit),
            written(trained, unit)
        )
    };
    Some(
        Finding::new(
            Code::Rounding,
            path.clone(),
            format!(
                "`{path}` is {span}, not a whole number of updates: the run rounds up to {}, which train {} {}",
                updates(up),
                group_digits(trained),
                unit.plural()
            ),
            format!("rounds up to {}", updates(up)),
        )
        .warning()
        .with_fix(Fix::text(fix)),
    )
}

/// A length as a config writes it, exactly and short where it can be:
/// `"17.6M tokens"`, `"1,228,800"` → `"1228800 examples"`. A suffix is used
/// when the number before it is below 1,000 with at most three decimals.
fn written(value: u64, unit: UnitKind) -> String {
    let noun = if value == 1 {
        unit.singular()
    } else {
        unit.plural()
    };
    for (scale, suffix) in [
        (1_000_000_000_000u64, "T"),
        (1_000_000_000, "B"),
        (1_000_000, "M"),
        (1_000, "k"),
    ] {
        if value >= scale && value / scale < 1000 && value.is_multiple_of(scale / 1000) {
            let whole = value / scale;
            let thousandths = (value % scale) / (scale / 1000);
            let decimals = format!("{thousandths:03}");
            let decimals = decimals.trim_end_matches('0');
            return if decimals.is_empty() {
                format!("{whole}{suffix} {noun}")
            } else {
                format!("{whole}.{decimals}{suffix} {noun}")
            };
        }
    }
    format!("{value} {noun}")
}

fn longer_than_the_run(
    code: Code,
    value: &SpanValue,
    span: Span,
    total: &SpanValue,
    total_span: Span,
    plan: Option<&StagedPlan>,
) -> Finding {
    let (path, total_path) = (&value.path, &total.path);
    // The run's length in this field's unit, rounded down: the most it
    // may be.
    let limit = match plan {
        Some(plan) if total_span.unit() != span.unit() => plan
            .span_to_unit(&total_span, span.unit(), Rounding::Down)
            .ok(),
        _ => Some(total_span),
    };
    let run = match limit {
        Some(limit) if limit.unit() != total_span.unit() => {
            let exact = plan
                .and_then(|p| {
                    p.span_to_unit(&total_span, span.unit(), Rounding::Exact)
                        .ok()
                })
                .is_some();
            format!("{total_span} {} {limit}", if exact { "=" } else { "≈" })
        }
        _ => total_span.to_string(),
    };
    let what = if code == Code::Every {
        ", so it never fires"
    } else {
        ""
    };
    let fix = match limit {
        Some(limit) => {
            format!("make `{path}` at most {limit}, or lengthen the run (`{total_path}`)")
        }
        None => format!("shorten `{path}`, or lengthen the run (`{total_path}`)"),
    };
    Finding::new(
        code,
        path.clone(),
        format!("`{path}` is {span}, longer than the run (`{total_path}` is {run}){what}"),
        "longer than the run".to_owned(),
    )
    .with_fix(Fix::text(fix))
    .with_related(total_path.clone(), None, format!("the run: {total_span}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(m: u64, a: u64, d: u64, seq_len: Option<u64>) -> Vec<RoleValue> {
        let at = |role: Role, path: &str, value: Option<u64>| {
            RoleValue::at(role, FieldPath::parse(path), value.into())
        };
        vec![
            at(Role::MicroBatch, "m", Some(m)),
            at(Role::Accumulation, "a", Some(a)),
            at(Role::Replicas, "d", Some(d)),
            at(Role::SeqLen, "max_len", seq_len),
        ]
    }

    fn span(path: &str, span_use: Option<SpanUse>, text: &str) -> SpanValue {
        SpanValue::at(
            FieldPath::parse(path),
            span_use,
            text.parse().expect("a span"),
        )
    }

    #[test]
    fn tokens_need_a_fixed_seq_len_or_variable_lengths() {
        let spans = [span("warmup", Some(SpanUse::Warmup), "2M tokens")];
        let findings = check_spans(&spans, &roles(2, 8, 2, None), false);
        assert_eq!(findings.codes(), [Code::SeqLen]);
        let f = findings.iter().next().expect("one finding");
        assert_eq!(f.path, FieldPath::parse("warmup"));
        assert_eq!(
            f.message,
            "`warmup` is 2M tokens, and without a fixed seq_len a count of tokens is not a number of updates"
        );
        assert_eq!(
            f.fix.as_ref().map(|f| f.text.as_str()),
            Some("set `max_len` (tokens per example), or give `warmup` in updates or examples")
        );
        assert_eq!(f.related[0].path, FieldPath::parse("max_len"));
        assert!(check_spans(&spans, &roles(2, 8, 2, Some(128)), false).is_empty());
        assert!(check_spans(&spans, &roles(2, 8, 2, None), true).is_empty());
        // A config without any place for seq_len is told about the attribute.
        let findings = check_spans(&spans, &roles(2, 8, 2, None)[..3], false);
        assert!(
            findings
                .iter()
                .next()
                .and_then(|f| f.fix.as_ref())
                .is_some_and(|f| f.text.contains("#[accum(variable_length)]")),
            "{findings}"
        );
    }

    #[test]
    fn lengths_in_tokens_that_cannot_be_compared_are_said_up_front() {
        // Variable lengths, no seq_len: a warmup in tokens against a run in
        // updates, and an interval in updates against a run in tokens.
        let spans = [
            span("warmup", Some(SpanUse::Warmup), "2M tokens"),
            span("total", Some(SpanUse::Total), "300 updates"),
        ];
        let findings = check_spans(&spans, &roles(2, 8, 2, None), true);
        assert_eq!(findings.codes(), [Code::Warmup]);
        let f = findings.iter().next().expect("one finding");
        assert_eq!(f.severity, crate::Severity::Warning);
        assert_eq!(
            f.message,
            "the warmup `warmup` is 2M tokens and the run `total` is 300 updates: with variable-length examples \
             and no seq_len the tokens of an update are unknown, so whether the warmup ends before the run does \
             is known only as the run goes"
        );
        assert_eq!(
            f.fix.as_ref().map(|f| f.text.as_str()),
            Some(
                "set `max_len` when every example has the same number of tokens, or write `warmup` and `total` in one unit"
            )
        );
        let every = [
            span("log.every", Some(SpanUse::Every), "100 updates"),
            span("total", Some(SpanUse::Total), "1B tokens"),
        ];
        let findings = check_spans(&every, &roles(2, 8, 2, None), true);
        assert_eq!(findings.codes(), [Code::Every]);
        assert!(
            findings
                .iter()
                .all(|f| f.severity == crate::Severity::Warning)
        );
        // Checkable: a fixed seq_len, or both lengths in one unit.
        // (2M tokens are 488 updates of 32 × 128 tokens, within 3000.)
        let long = [
            spans[0].clone(),
            span("total", Some(SpanUse::Total), "3000 updates"),
        ];
        assert!(check_spans(&long, &roles(2, 8, 2, Some(128)), true).is_empty());
        let same = [
            span("warmup", Some(SpanUse::Warmup), "2M tokens"),
            span("total", Some(SpanUse::Total), "1B tokens"),
        ];
        assert!(check_spans(&same, &roles(2, 8, 2, None), true).is_empty());
        // Without variable lengths, the tokens finding is the one.
        let findings = check_spans(&spans, &roles(2, 8, 2, None), false);
        assert_eq!(findings.codes(), [Code::SeqLen]);
    }

    #[test]
    fn a_warmup_longer_than_the_run() {
        let spans = [
            span("schedule.warmup", Some(SpanUse::Warmup), "1500 examples"),
            span("schedule.total", Some(SpanUse::Total), "40 updates"),
        ];
        // B = 32: 40 updates = 1,280 examples < 1,500.
        let findings = check_spans(&spans, &roles(2, 8, 2, None), false);
        assert_eq!(findings.codes(), [Code::Warmup]);
        let f = findings.iter().next().expect("warmup");
        assert_eq!(
            f.message,
            "`schedule.warmup` is 1500 examples, longer than the run (`schedule.total` is 40 updates = 1280 examples)"
        );
        assert_eq!(
            f.fix.as_ref().map(|f| f.text.as_str()),
            Some(
                "make `schedule.warmup` at most 1280 examples, or lengthen the run (`schedule.total`)"
            )
        );
        assert_eq!(f.related[0].label, "the run: 40 updates");
        // 1,280 examples is exactly the run: allowed.
        let fits = [
            span("schedule.warmup", Some(SpanUse::Warmup), "1280 examples"),
            span("schedule.total", Some(SpanUse::Total), "40 updates"),
        ];
        assert!(check_spans(&fits, &roles(2, 8, 2, None), false).is_empty());
    }

    #[test]
    fn an_interval_longer_than_the_run_never_fires() {
        let spans = [
            span("eval_every", Some(SpanUse::Every), "200 updates"),
            span("log_every", Some(SpanUse::Every), "10 updates"),
            span("total", Some(SpanUse::Total), "100 updates"),
        ];
        let findings = check_spans(&spans, &roles(2, 8, 2, None), false);
        assert_eq!(findings.codes(), [Code::Every]);
        assert_eq!(findings.paths(), ["eval_every"]);
        assert!(
            findings
                .iter()
                .next()
                .is_some_and(|f| f.message.ends_with("so it never fires")),
            "{findings}"
        );
    }

    #[test]
    fn units_are_compared_exactly_through_the_plan() {
        // m 2 × A 8 × D 2, L 128: one update = 8 microbatches = 32 examples = 4,096 tokens.
        let plan = crate::plan::Plan::new(2, 8, 2)
            .and_then(|p| p.with_seq_len(128))
            .map(StagedPlan::constant)
            .expect("valid");
        let s = |text: &str| text.parse::<Span>().expect("a span");
        let cases = [
            ("8 microbatches", "1 update", Ordering::Equal),
            ("9 microbatches", "32 examples", Ordering::Greater),
            ("4096 tokens", "33 examples", Ordering::Less),
            ("4097 tokens", "1 update", Ordering::Greater),
        ];
        for (a, b, expected) in cases {
            assert_eq!(
                compare(s(a), s(b), Some(&plan)),
                Some(expected),
                "{a} vs {b}"
            );
        }
        assert_eq!(compare(s("1 update"), s("1 example"), None), None);
        assert_eq!(
            compare(s("3 updates"), s("2 updates"), None),
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn lengths_are_written_short_and_exactly() {
        let cases = [
            (17_600_000, UnitKind::Token, "17.6M tokens"),
            (2_516_582_400, UnitKind::Token, "2516582400 tokens"),
            (3_145_728_000, UnitKind::Token, "3145728000 tokens"),
            (3_145_000_000, UnitKind::Token, "3.145B tokens"),
            (4_000_000_000, UnitKind::Token, "4B tokens"),
            (1_500, UnitKind::Example, "1.5k examples"),
            (999, UnitKind::Example, "999 examples"),
            (1, UnitKind::Update, "1 update"),
            (1_000_500, UnitKind::Example, "1000500 examples"),
        ];
        for (value, unit, text) in cases {
            assert_eq!(written(value, unit), text);
        }
    }

    #[test]
    fn unmarked_lengths_are_not_compared() {
        let spans = [
            span("cooldown", None, "500 updates"),
            span("total", Some(SpanUse::Total), "100 updates"),
        ];
        assert!(check_spans(&spans, &roles(2, 8, 2, None), false).is_empty());
    }
}
