//! The constant-plan rules: constants written as literals on the struct are
//! checked here with accum-core's plan rules (`rules`), so that the
//! compile error is the sentence `plan()` would give for the same numbers,
//! on the literal to change. Constants given as paths are left to a
//! generated const assertion (see `expand`).

use proc_macro2::Span;

use crate::ast::Container;
use crate::attr::{ConstValue, Role};
use crate::ctxt::Ctxt;
use crate::rules::{self, PlanValues, Violation};

/// The constant written for `role`, if any.
fn constant<'c>(cont: &'c Container<'_>, role: Role) -> Option<&'c ConstValue> {
    cont.attrs
        .constants
        .iter()
        .find(|c| c.role == role)
        .map(|c| &c.value)
}

/// Rules `accum::plan::zero`, `accum::plan::layout`, `accum::plan::replicas`,
/// `accum::plan::global-batch` and `accum::plan::overflow` for constant
/// plans: constants on the struct are checked here when they are literals.
/// Example: `#[accum(micro_batch = 2, accumulation = 8, replicas = 2,
/// global_batch = 30)]`. The global batch is checked when `m`, `A` and `D`
/// (or a world size) are all constants; a role held by a field is checked
/// at run time. Constants given as paths are checked by a generated const
/// assertion instead (see `expand`).
pub(super) fn check_constant_plan(cx: &Ctxt, cont: &Container<'_>) {
    zero_literals(cx, cont);
    let mut literals = [None; 9];
    for role in Role::ALL {
        match constant(cont, role) {
            None => {}
            Some(value) => match value.literal() {
                Some(v) => literals[role as usize] = Some(v),
                None => return, // a path is involved: the const assertion checks it
            },
        }
    }
    if literals.contains(&Some(0)) {
        return; // reported above; the arithmetic would repeat it
    }
    let lit = |role: Role| literals[role as usize];
    let layout = lit(Role::WorldSize).map(|world| {
        [
            world,
            lit(Role::TensorParallel).unwrap_or(1),
            lit(Role::PipelineParallel).unwrap_or(1),
            lit(Role::ContextParallel).unwrap_or(1),
        ]
    });
    let all_factors = lit(Role::MicroBatch).is_some()
        && lit(Role::Accumulation).is_some()
        && (lit(Role::Replicas).is_some() || layout.is_some());
    let given = PlanValues {
        micro_batch: lit(Role::MicroBatch),
        accumulation: lit(Role::Accumulation),
        replicas: lit(Role::Replicas),
        layout,
        seq_len: lit(Role::SeqLen),
        global_batch: lit(Role::GlobalBatch).filter(|_| all_factors),
    };
    match rules::resolve(&given) {
        // Roles held by fields are the run-time check's.
        Ok(_) | Err(Violation::Missing { .. }) => {}
        Err(violation) => cx.error_at(span_of(cont, violation.role()), violation),
    }
}

/// The literal a violation about `role` points at: the role's own, else
/// the world size for replicas computed from it, else the global batch.
fn span_of(cont: &Container<'_>, role: Role) -> Span {
    let fallback = match role {
        Role::Replicas => Role::WorldSize,
        _ => Role::GlobalBatch,
    };
    constant(cont, role)
        .or_else(|| constant(cont, fallback))
        .map_or_else(|| cont.ident.span(), ConstValue::span)
}

/// Part of `accum::plan::zero`: a literal zero factor is reported on the
/// literal. Example: `#[accum(accumulation = 0)]`.
fn zero_literals(cx: &Ctxt, cont: &Container<'_>) {
    for constant in &cont.attrs.constants {
        if constant.value.literal() == Some(0) {
            cx.error_at(
                constant.value.span(),
                Violation::Zero {
                    role: constant.role,
                },
            );
        }
    }
}
