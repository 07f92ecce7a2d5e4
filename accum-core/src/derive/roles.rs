//! The checks of a config's role values against the plan rules: every
//! independent problem, each a [`Finding`] with its code, the path of the
//! field to change, the fix and the other fields that take part
//! (`accum::plan::global-batch`).
//!
//! "Independent" means a problem that stays after the others are fixed: a
//! zero `micro_batch`, a `world_size` that `tp·pp·cp` does not divide and a
//! global batch that is not a multiple of the accumulation are three
//! findings. A rule that needs a value that is itself wrong is skipped
//! rather than reported twice.

use crate::finding::{FieldPath, Finding, Findings};
use crate::plan::rules::{self, Violation};
use crate::plan::{Fix, Layout, Plan, PlanError, Role};

use super::{Given, RoleValue, input_from_values};

/// What the rules know about one role: the first place it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// A usable value (at least 1).
    Known(u64),
    /// Given, but zero or unreadable: reported elsewhere; rules that need it
    /// are skipped.
    Blocked,
    /// Given nowhere.
    Absent,
}

impl State {
    const fn known(self) -> Option<u64> {
        match self {
            State::Known(value) => Some(value),
            State::Blocked | State::Absent => None,
        }
    }
}

/// The role values with lookups by role.
struct Places<'a> {
    values: &'a [RoleValue],
}

impl<'a> Places<'a> {
    /// The first place `role` is given (a value, zero or unreadable).
    fn given(&self, role: Role) -> Option<&'a RoleValue> {
        self.values
            .iter()
            .find(|v| v.role == role && v.given != Given::Absent)
    }

    fn state(&self, role: Role) -> State {
        match self.given(role).map(|v| v.given) {
            Some(Given::Value(0) | Given::Unreadable) => State::Blocked,
            Some(Given::Value(value)) => State::Known(value),
            Some(Given::Absent) | None => State::Absent,
        }
    }

    /// The path of the first place `role` is given, or the first place it
    /// could be given (an absent optional field), or `None` when the config
    /// has no place for it.
    fn path(&self, role: Role) -> Option<FieldPath> {
        self.given(role)
            .or_else(|| self.values.iter().find(|v| v.role == role))
            .map(|v| v.source.path().clone())
    }

    /// Where a finding about `role` goes: its place, else the root.
    fn path_or_root(&self, role: Role) -> FieldPath {
        self.path(role).unwrap_or_default()
    }

    /// `err` as a finding at `role`'s place, with the places of the error's
    /// factors that are given.
    fn finding_with_factors(&self, err: &PlanError, role: Role) -> Finding {
        let mut finding = Finding::from_error(err, self.path_or_root(role));
        for (factor, value) in err.factors() {
            if let Some(v) = self.given(factor) {
                finding = finding.with_related(
                    v.source.path().clone(),
                    Some(factor),
                    format!("{factor} {value}"),
                );
            }
        }
        finding
    }
}

/// Checks role values, however they were found (a derived config's
/// [`role_values`](super::AccumConfig::role_values), or a schema's
/// `x-accum-role` over a config file), and returns every independent
/// problem:
///
/// - every zero (`accum::plan::zero`);
/// - a role given in two places, reported at the second
///   (`accum::plan::duplicate`);
/// - a tensor, pipeline or context degree without a world size
///   (`accum::plan::world-size`);
/// - a world size not divisible by `tp·pp·cp` (`accum::plan::layout`);
/// - replicas that disagree with the layout (`accum::plan::replicas`);
/// - `m`, `A` or `D` missing and not solvable (`accum::plan::missing`);
/// - a global batch that is not `m·A·D`, that does not let a missing `m` or
///   `A` be solved exactly, or that is not a multiple of the factors that
///   are known while another is wrong (`accum::plan::global-batch`);
/// - products that overflow (`accum::plan::overflow`).
///
/// An [`Unreadable`](Given::Unreadable) value is taken as given and wrong:
/// it is not reported (its reader does that), and the rules that need it are
/// skipped. When the result is empty, the first values given for each role
/// resolve to a plan.
pub fn check_roles(values: &[RoleValue]) -> Findings {
    let places = Places { values };
    let mut findings = Findings::default();
    zeroes(values, &mut findings);
    duplicates(values, &mut findings);
    degrees_without_world(&places, &mut findings);
    let replicas = replicas(&places, &mut findings);
    let (m, a, b) = (
        places.state(Role::MicroBatch),
        places.state(Role::Accumulation),
        places.state(Role::GlobalBatch),
    );
    missing(&places, m, a, b, &mut findings);
    products(&places, [m, a, replicas.state], &mut findings);
    if let State::Known(global_batch) = b {
        global_batch_rules(&places, global_batch, m, a, &replicas, &mut findings);
    }
    let readable = values.iter().all(|v| v.given != Given::Unreadable);
    if findings.is_empty() && readable {
        // Whatever the rules above let through, the plan must not reject.
        if let Err(err) = input_from_values(values).resolve() {
            let path = err.role().map_or_else(
                || places.path_or_root(Role::MicroBatch),
                |r| places.path_or_root(r),
            );
            findings.push(Finding::from_error(&err, path));
        }
    }
    findings
}

/// `accum::plan::zero`: every factor is at least 1.
fn zeroes(values: &[RoleValue], findings: &mut Findings) {
    for v in values.iter().filter(|v| v.given == Given::Value(0)) {
        let err = PlanError::Rule(Violation::Zero { role: v.role });
        let path = v.source.path().clone();
        let fix = Fix::from(rules::zero(v.role, &format!("`{path}`")));
        findings.push(Finding::from_error(&err, path).with_fix(fix));
    }
}

/// A role given in two places: the plan would silently take the first.
fn duplicates(values: &[RoleValue], findings: &mut Findings) {
    for role in Role::ALL {
        let given: Vec<&RoleValue> = values
            .iter()
            .filter(|v| v.role == role && v.given != Given::Absent)
            .collect();
        let [first, rest @ ..] = given.as_slice() else {
            continue;
        };
        for second in rest {
            let (at_first, at_second) = (first.source.path(), second.source.path());
            findings.push(
                Finding::new(
                    crate::Code::Duplicate,
                    at_second.clone(),
                    format!("{role} is given twice, at `{at_first}` and at `{at_second}`"),
                    "given again".to_owned(),
                )
                .with_role(role)
                .with_fix(Fix::text(format!("remove one of them, e.g. `{at_second}`")))
                .with_related(
                    at_first.clone(),
                    Some(role),
                    "first given here".to_owned(),
                ),
            );
        }
    }
}

/// `accum::plan::world-size`: parallel degrees without a world size have nothing to divide.
fn degrees_without_world(places: &Places<'_>, findings: &mut Findings) {
    if places.given(Role::WorldSize).is_some() {
        return;
    }
    for role in [
        Role::TensorParallel,
        Role::PipelineParallel,
        Role::ContextParallel,
    ] {
        if let (State::Known(degree), Some(path)) = (places.state(role), places.path(role))
            && degree > 1
        {
            findings.push(
                Finding::new(
                    crate::Code::WorldSize,
                    path,
                    format!(
                        "{role} is given without world_size, so the replicas cannot be computed"
                    ),
                    "needs world_size".to_owned(),
                )
                .with_role(role)
                .with_fix(Fix::text(
                    "give world_size as well (replicas = world_size / (tp·pp·cp))",
                )),
            );
        }
    }
}

/// `D`, with where it comes from.
struct Replicas {
    state: State,
    /// The place to point at and its label, when `D` is known.
    related: Option<(FieldPath, String)>,
}

/// `accum::plan::replicas` and `accum::plan::layout`: `D` from `replicas` or
/// from the layout, with the layout's rules.
fn replicas(places: &Places<'_>, findings: &mut Findings) -> Replicas {
    let from_layout = layout_replicas(places, findings);
    let direct = places.state(Role::Replicas);
    match (direct, from_layout) {
        (State::Known(d), Some((State::Known(_), layout)))
            if rules::replicas_agree(d, layout.parts()).is_err() =>
        {
            let [world_size, tensor, pipeline, context] = layout.parts();
            let err = PlanError::Rule(Violation::ReplicasDisagree {
                replicas: d,
                world_size,
                tensor,
                pipeline,
                context,
            });
            findings.push(places.finding_with_factors(&err, Role::Replicas));
            Replicas {
                state: State::Blocked,
                related: None,
            }
        }
        (State::Known(d), _) => Replicas {
            state: State::Known(d),
            related: Some((places.path_or_root(Role::Replicas), format!("replicas {d}"))),
        },
        (State::Blocked, _) => Replicas {
            state: State::Blocked,
            related: None,
        },
        (State::Absent, Some((state, layout))) => Replicas {
            state,
            related: state.known().map(|d| {
                (
                    places.path_or_root(Role::WorldSize),
                    format!("world_size {} = {} replicas", layout.world_size, d),
                )
            }),
        },
        (State::Absent, None) => {
            findings.push(missing_replicas(places));
            Replicas {
                state: State::Absent,
                related: None,
            }
        }
    }
}

/// `D = world_size / (tp·pp·cp)` when a world size is given, reporting a
/// layout that does not divide. `None` without a world size.
fn layout_replicas(places: &Places<'_>, findings: &mut Findings) -> Option<(State, Layout)> {
    let world = places.state(Role::WorldSize);
    if world == State::Absent {
        return None;
    }
    let degree = |role| match places.state(role) {
        State::Known(value) => Some(value),
        State::Absent => Some(1),
        State::Blocked => None,
    };
    let degrees = (
        degree(Role::TensorParallel),
        degree(Role::PipelineParallel),
        degree(Role::ContextParallel),
    );
    let (State::Known(world), (Some(tp), Some(pp), Some(cp))) = (world, degrees) else {
        return Some((State::Blocked, Layout::data_parallel(0)));
    };
    let layout = Layout::new(world, tp, pp, cp);
    match layout.replicas() {
        Ok(d) => Some((State::Known(d), layout)),
        Err(err) => {
            findings.push(places.finding_with_factors(&err, Role::WorldSize));
            Some((State::Blocked, layout))
        }
    }
}

fn missing_replicas(places: &Places<'_>) -> Finding {
    let err = PlanError::Rule(Violation::Missing {
        role: Role::Replicas,
    });
    let (path, fix) = match (places.path(Role::Replicas), places.path(Role::WorldSize)) {
        (Some(r), Some(w)) => (
            r.clone(),
            format!("set `{r}` (data-parallel copies) or `{w}` (all devices)"),
        ),
        (Some(r), None) => (r.clone(), format!("set `{r}` (data-parallel copies)")),
        (None, Some(w)) => (w.clone(), format!("set `{w}` (all devices)")),
        (None, None) => (
            FieldPath::root(),
            "add a field with `#[accum(replicas)]` or `#[accum(world_size)]`".to_owned(),
        ),
    };
    Finding::new(
        err.code(),
        path,
        rules::MISSING_REPLICAS.to_owned(),
        err.label(),
    )
    .with_role(Role::Replicas)
    .with_fix(Fix::text(fix))
}

/// `m` and `A`: given, or solvable from the global batch and the other.
fn missing(places: &Places<'_>, m: State, a: State, b: State, findings: &mut Findings) {
    for (role, other) in [(Role::MicroBatch, a), (Role::Accumulation, m)] {
        let state = if role == Role::MicroBatch { m } else { a };
        let solvable = b != State::Absent && other != State::Absent;
        if state == State::Absent && !solvable {
            let err = PlanError::Rule(Violation::Missing { role });
            let path = places.path_or_root(role);
            let fix = Fix::text(format!("set `{path}`, {}", rules::solvable_as(role)));
            findings.push(Finding::from_error(&err, path).with_fix(fix));
        }
    }
}

/// `m·A·D` and `m·A·D·L` fit in 64 bits.
fn products(places: &Places<'_>, [m, a, d]: [State; 3], findings: &mut Findings) {
    let (Some(m), Some(a), Some(d)) = (m.known(), a.known(), d.known()) else {
        return;
    };
    let plan = Plan::new(m, a, d).and_then(|plan| match places.state(Role::SeqLen) {
        State::Known(len) => plan.with_seq_len(len),
        _ => Ok(plan),
    });
    if let Err(err) = plan {
        let role = if Plan::new(m, a, d).is_ok() {
            Role::SeqLen
        } else {
            Role::MicroBatch
        };
        findings.push(Finding::from_error(&err, places.path_or_root(role)).with_role(role));
    }
}

/// `accum::plan::global-batch`: the declared global batch is `m·A·D`; a missing `m` or `A` is solved
/// exactly; with a factor that is itself wrong, the global batch must still
/// be a multiple of the factors that are known.
fn global_batch_rules(
    places: &Places<'_>,
    global_batch: u64,
    m: State,
    a: State,
    replicas: &Replicas,
    findings: &mut Findings,
) {
    let d = replicas.state;
    let violation = match (m, a, d) {
        (State::Known(m), State::Known(a), State::Known(d)) => {
            match rules::check_global_batch(global_batch, m, a, d) {
                Err(Violation::Overflow { .. }) => return, // reported by `products`
                result => result.err(),
            }
        }
        (State::Absent, State::Known(known), State::Known(d))
        | (State::Known(known), State::Absent, State::Known(d)) => {
            let solving = if m == State::Absent {
                Role::MicroBatch
            } else {
                Role::Accumulation
            };
            match rules::solve(global_batch, solving, known, d) {
                Err(Violation::Overflow { .. }) => return, // left to the final resolve
                result => result.err(),
            }
        }
        _ => {
            let factors: Vec<(Role, u64)> = [
                (Role::MicroBatch, m),
                (Role::Accumulation, a),
                (Role::Replicas, d),
            ]
            .into_iter()
            .filter_map(|(role, state)| Some((role, state.known()?)))
            .collect();
            rules::check_multiple(global_batch, &factors).err()
        }
    };
    let err = violation.map(PlanError::from);
    let Some(err) = err else {
        return;
    };
    let mut finding = Finding::from_error(&err, places.path_or_root(Role::GlobalBatch));
    for (role, value) in err.factors() {
        let place = match role {
            Role::Replicas => replicas.related.clone(),
            _ => places
                .given(role)
                .map(|v| (v.source.path().clone(), format!("{role} {value}"))),
        };
        if let Some((path, label)) = place {
            finding = finding.with_related(path, Some(role), label);
        }
    }
    findings.push(finding);
}

/// Applies the edits of a fix to role values: each role's first place gets
/// the value (or a new place at the root when the role has none). For
/// tests of fixes.
#[cfg(test)]
pub(crate) fn apply(values: &[RoleValue], edits: &[crate::plan::Edit]) -> Vec<RoleValue> {
    let mut out = values.to_vec();
    for edit in edits {
        match out.iter_mut().find(|v| v.role == edit.role) {
            Some(place) => place.given = Given::Value(edit.value),
            None => out.push(RoleValue::at(
                edit.role,
                FieldPath::root(),
                Given::Value(edit.value),
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::Code;
    use crate::plan::Edit;

    fn value(role: Role, path: &str, value: Option<u64>) -> RoleValue {
        RoleValue::at(role, FieldPath::parse(path), value.into())
    }

    fn batch(m: u64, a: u64, d: u64) -> Vec<RoleValue> {
        vec![
            value(Role::MicroBatch, "m", Some(m)),
            value(Role::Accumulation, "a", Some(a)),
            value(Role::Replicas, "d", Some(d)),
        ]
    }

    #[test]
    fn a_good_plan_has_no_findings() {
        let mut values = batch(2, 8, 2);
        values.push(value(Role::GlobalBatch, "b", Some(32)));
        assert_eq!(check_roles(&values), Findings::default());
    }

    #[test]
    fn a_role_in_two_places_is_reported_at_the_second() {
        let mut values = batch(2, 8, 2);
        values.push(value(Role::Replicas, "cluster.d", Some(4)));
        let findings = check_roles(&values);
        assert_eq!(findings.paths(), ["cluster.d"]);
        let f = findings.iter().next().expect("one finding");
        assert_eq!(f.code, Code::Duplicate);
        assert_eq!(
            f.message,
            "replicas is given twice, at `d` and at `cluster.d`"
        );
        assert_eq!(f.related[0].path, FieldPath::parse("d"));
    }

    #[test]
    fn parallel_degrees_need_a_world_size() {
        let mut values = batch(2, 8, 2);
        values.push(value(Role::TensorParallel, "tp", Some(2)));
        let findings = check_roles(&values);
        assert_eq!(findings.paths(), ["tp"]);
        assert_eq!(findings.codes(), [Code::WorldSize]);
    }

    #[test]
    fn constants_are_reported_at_their_struct() {
        let root = FieldPath::root();
        let values = [
            RoleValue::constant(Role::MicroBatch, &root, 2),
            RoleValue::constant(Role::Accumulation, &root, 8),
            RoleValue::constant(Role::Replicas, &root, 2),
            RoleValue::constant(Role::GlobalBatch, &root, 30),
        ];
        let findings = check_roles(&values);
        assert_eq!(findings.paths(), ["(root)"]);
        assert!(
            findings
                .to_string()
                .starts_with("1 problem in the config:\n  - (root): global_batch 30"),
            "{findings}"
        );
    }

    #[test]
    fn a_missing_accumulation_is_solved_or_reported() {
        let mut values = vec![
            value(Role::MicroBatch, "m", Some(2)),
            value(Role::Accumulation, "a", None),
            value(Role::Replicas, "d", Some(2)),
        ];
        let findings = check_roles(&values);
        assert_eq!(findings.paths(), ["a"]);
        assert_eq!(findings.codes(), [Code::Missing]);
        assert_eq!(
            findings
                .iter()
                .next()
                .and_then(|f| f.fix.as_ref())
                .map(|f| f.text.as_str()),
            Some(
                "set `a`, or give global_batch so that it can be solved as global_batch / (micro_batch × replicas)"
            )
        );
        values.push(value(Role::GlobalBatch, "b", Some(32)));
        assert!(check_roles(&values).is_empty());
        assert_eq!(
            input_from_values(&values)
                .resolve()
                .map(|p| p.accumulation()),
            Ok(8)
        );
        values.pop();
        values.push(value(Role::GlobalBatch, "b", Some(30)));
        let findings = check_roles(&values);
        let f = findings.iter().next().expect("not divisible");
        assert_eq!(
            (f.code, f.path.to_string()),
            (Code::GlobalBatch, "b".to_owned())
        );
        assert_eq!(f.label, "not a multiple of m·D");
        let options = &f.fix.as_ref().expect("fix").options;
        assert_eq!(
            options,
            &[
                vec![
                    Edit::new(Role::MicroBatch, 1),
                    Edit::new(Role::Accumulation, 15)
                ],
                vec![
                    Edit::new(Role::GlobalBatch, 28),
                    Edit::new(Role::Accumulation, 7)
                ],
                vec![
                    Edit::new(Role::GlobalBatch, 32),
                    Edit::new(Role::Accumulation, 8)
                ],
            ]
        );
    }

    #[test]
    fn the_mismatch_names_its_factors_with_their_places() {
        let mut values = batch(2, 8, 2);
        values.push(value(Role::GlobalBatch, "b", Some(30)));
        let findings = check_roles(&values);
        let f = findings.iter().next().expect("mismatch");
        assert_eq!(f.code, Code::GlobalBatch);
        assert_eq!(f.role, Some(Role::GlobalBatch));
        assert_eq!(
            f.message,
            "global_batch 30 ≠ micro_batch 2 × accumulation 8 × replicas 2 = 32; 30 is not a multiple of m·D = 4"
        );
        assert_eq!(f.label, "≠ 2 × 8 × 2 = 32");
        assert_eq!(
            f.fix.as_ref().map(|f| f.text.as_str()),
            Some(
                "keep global_batch = 30 with micro_batch = 1 and accumulation = 15; \
                 or use global_batch = 28 (accumulation = 7) or 32 (accumulation = 8)"
            )
        );
        let related: Vec<(String, &str)> = f
            .related
            .iter()
            .map(|r| (r.path.to_string(), r.label.as_str()))
            .collect();
        assert_eq!(
            related,
            [
                ("m".to_owned(), "micro_batch 2"),
                ("a".to_owned(), "accumulation 8"),
                ("d".to_owned(), "replicas 2")
            ]
        );
    }

    #[test]
    fn three_independent_problems_are_three_findings() {
        // micro_batch = 0, a world size that tp does not divide, and a
        // global batch that accumulation 8 does not divide.
        let values = [
            value(Role::MicroBatch, "batch.micro_batch", Some(0)),
            value(Role::Accumulation, "batch.accumulation", Some(8)),
            value(Role::Replicas, "batch.replicas", None),
            value(Role::GlobalBatch, "batch.global_batch", Some(30)),
            value(Role::WorldSize, "parallel.world_size", Some(64)),
            value(Role::TensorParallel, "parallel.tensor", Some(3)),
        ];
        let findings = check_roles(&values);
        assert_eq!(
            findings.paths(),
            [
                "batch.micro_batch",
                "parallel.world_size",
                "batch.global_batch"
            ]
        );
        assert_eq!(
            findings.codes(),
            [Code::Zero, Code::Layout, Code::GlobalBatch]
        );
        let messages: Vec<&str> = findings.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            messages[2],
            "global_batch 30 is not a multiple of accumulation 8, so no value of the other factors gives B = m·A·D"
        );
        let layout = findings.iter().nth(1).expect("layout");
        assert_eq!(
            layout.fix.as_ref().map(|f| f.text.as_str()),
            Some("use world_size = 63 (21 replicas) or 66 (22 replicas)")
        );
        assert_eq!(layout.related[0].label, "tensor_parallel 3");
    }

    #[test]
    fn unreadable_values_are_neither_missing_nor_checked() {
        let values = [
            RoleValue::at(Role::MicroBatch, FieldPath::parse("m"), Given::Unreadable),
            value(Role::Accumulation, "a", Some(8)),
            value(Role::Replicas, "d", Some(2)),
            value(Role::GlobalBatch, "b", Some(32)),
        ];
        assert!(check_roles(&values).is_empty());
        let values = [
            RoleValue::at(Role::MicroBatch, FieldPath::parse("m"), Given::Unreadable),
            value(Role::Accumulation, "a", Some(8)),
            value(Role::Replicas, "d", Some(2)),
            value(Role::GlobalBatch, "b", Some(30)),
        ];
        let findings = check_roles(&values);
        assert_eq!(findings.codes(), [Code::GlobalBatch]);
        assert_eq!(
            findings.iter().next().map(|f| f.message.as_str()),
            Some(
                "global_batch 30 is not a multiple of accumulation 8 × replicas 2 = 16, so no value of the other factors gives B = m·A·D"
            )
        );
    }

    #[test]
    fn replicas_that_disagree_with_the_layout() {
        let values = [
            value(Role::MicroBatch, "m", Some(2)),
            value(Role::Accumulation, "a", Some(8)),
            value(Role::Replicas, "d", Some(3)),
            value(Role::WorldSize, "world", Some(8)),
            value(Role::TensorParallel, "tp", Some(2)),
        ];
        let findings = check_roles(&values);
        assert_eq!(findings.codes(), [Code::Replicas]);
        let f = findings.iter().next().expect("disagree");
        assert_eq!(f.path.to_string(), "d");
        assert_eq!(
            f.fix.as_ref().map(|f| f.options.clone()),
            Some(vec![vec![Edit::new(Role::Replicas, 4)]])
        );
    }

    #[test]
    fn missing_replicas_name_the_places_to_fill() {
        let values = [
            value(Role::MicroBatch, "m", Some(2)),
            value(Role::Accumulation, "a", Some(8)),
            value(Role::Replicas, "d", None),
            value(Role::WorldSize, "gpus", None),
        ];
        let findings = check_roles(&values);
        assert_eq!(findings.codes(), [Code::Missing]);
        assert_eq!(
            findings
                .iter()
                .next()
                .and_then(|f| f.fix.as_ref())
                .map(|f| f.text.as_str()),
            Some("set `d` (data-parallel copies) or `gpus` (all devices)")
        );
    }

    #[test]
    fn overflow_is_reported_at_the_factor() {
        let mut values = batch(u64::MAX, 2, 1);
        values.push(value(Role::GlobalBatch, "b", Some(8)));
        let findings = check_roles(&values);
        assert_eq!(findings.codes(), [Code::Overflow]);
        assert_eq!(findings.paths(), ["m"]);
        let mut values = batch(1 << 20, 1 << 20, 1);
        values.push(value(Role::SeqLen, "len", Some(1 << 30)));
        let findings = check_roles(&values);
        assert_eq!(findings.codes(), [Code::Overflow]);
        assert_eq!(findings.paths(), ["len"]);
    }

    fn any_given() -> impl Strategy<Value = Given> {
        prop_oneof![
            3 => (1u64..=12).prop_map(Given::Value),
            1 => Just(Given::Value(0)),
            1 => Just(Given::Absent),
            1 => Just(Given::Unreadable),
            1 => (13u64..=100).prop_map(Given::Value),
        ]
    }

    /// One place per role, each in any state.
    fn any_values() -> impl Strategy<Value = Vec<RoleValue>> {
        proptest::collection::vec(any_given(), Role::ALL.len()).prop_map(|given| {
            Role::ALL
                .into_iter()
                .zip(given)
                .map(|(role, given)| RoleValue::at(role, FieldPath::parse(role.key()), given))
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn no_findings_means_a_plan(values in any_values()) {
            let findings = check_roles(&values);
            let resolved = input_from_values(&values).resolve();
            let readable = values.iter().all(|v| v.given != Given::Unreadable);
            if findings.is_empty() && readable {
                prop_assert!(resolved.is_ok(), "{:?} → {:?}", values, resolved);
            }
            if resolved.is_err() && readable {
                prop_assert!(!findings.is_empty(), "{:?}", resolved);
            }
            // Every finding is at a place of the config, with a fix.
            for f in &findings {
                prop_assert!(values.iter().any(|v| v.source.path() == &f.path), "{}", f);
                prop_assert!(f.fix.is_some(), "{}", f);
            }
        }

        #[test]
        fn every_fix_option_removes_its_finding(values in any_values()) {
            for f in &check_roles(&values) {
                let Some(fix) = &f.fix else { continue };
                for option in &fix.options {
                    let fixed = check_roles(&apply(&values, option));
                    prop_assert!(
                        !fixed.iter().any(|g| g.code == f.code && g.path == f.path),
                        "{} still there after {:?}: {}", f, option, fixed
                    );
                }
            }
        }
    }
}
