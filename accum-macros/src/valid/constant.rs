//! The constant-plan rule (`accum::plan::global-batch`): constants written as literals on the
//! struct are checked here, with the arithmetic of the plan; constants given
//! as paths are left to a generated const assertion (see `expand`).

use crate::ast::Container;
use crate::attr::{ConstValue, Role};
use crate::ctxt::Ctxt;

/// The literal value of a constant role, if all of it is a literal.
fn literal<'c>(cont: &'c Container<'_>, role: Role) -> Option<Option<(u64, &'c ConstValue)>> {
    match cont.attrs.constants.iter().find(|c| c.role == role) {
        None => Some(None),
        Some(c) => c.value.literal().map(|v| Some((v, &c.value))),
    }
}

/// Rule (`accum::plan::global-batch`, constant plans): constants on the struct are checked here when
/// they are literals: no factor is zero, `world_size` is divisible by
/// `tp·pp·cp`, replicas agree with the layout, and `m·A·D` equals a declared
/// `global_batch`. Example: `#[accum(micro_batch = 2, accumulation = 8,
/// replicas = 2, global_batch = 30)]`. Constants given as paths are checked
/// by a generated const assertion instead (see `expand`).
pub(super) fn check_constant_plan(cx: &Ctxt, cont: &Container<'_>) {
    zero_literals(cx, cont);

    let lits: Option<Vec<Option<(u64, &ConstValue)>>> = [
        Role::MicroBatch,
        Role::Accumulation,
        Role::Replicas,
        Role::WorldSize,
        Role::TensorParallel,
        Role::PipelineParallel,
        Role::ContextParallel,
        Role::GlobalBatch,
    ]
    .into_iter()
    .map(|role| literal(cont, role))
    .collect();
    let Some(lits) = lits else {
        return; // a path is involved: the const assertion checks it
    };
    let [m, a, d, world, tp, pp, cp, b] = lits.as_slice() else {
        return;
    };
    if lits.iter().flatten().any(|(v, _)| *v == 0) {
        return; // reported above; the arithmetic would repeat it
    }
    let mut replicas = d.map(|(v, _)| v);
    if let Some((world, world_value)) = world {
        let (tp, pp, cp) = (
            tp.map_or(1, |t| t.0),
            pp.map_or(1, |t| t.0),
            cp.map_or(1, |t| t.0),
        );
        let group = tp.checked_mul(pp).and_then(|g| g.checked_mul(cp));
        match group {
            Some(group) if world % group == 0 => {
                let from_layout = world / group;
                if let Some((d, d_value)) = d
                    && *d != from_layout
                {
                    cx.error_at(
                        d_value.span(),
                        format!(
                            "replicas {d} disagrees with world_size {world} / (tensor_parallel {tp} × pipeline_parallel {pp} × \
                             context_parallel {cp}) = {from_layout}; remove `replicas` or use replicas {from_layout}"
                        ),
                    );
                    return;
                }
                replicas = Some(from_layout);
            }
            _ => {
                let group_text =
                    group.map_or_else(|| "more than 2^64".to_owned(), |g| g.to_string());
                let fix = group.map_or_else(String::new, |g| {
                    let below = world / g * g;
                    if below > 0 {
                        format!("; use world_size {below} or {}", below + g)
                    } else {
                        format!("; use world_size {g}")
                    }
                });
                cx.error_at(
                    world_value.span(),
                    format!(
                        "world_size {world} is not divisible by tensor_parallel {tp} × pipeline_parallel {pp} × \
                         context_parallel {cp} = {group_text}: devices that share one model copy do not multiply the batch{fix}"
                    ),
                );
                return;
            }
        }
    }
    let (Some((m, _)), Some((a, _)), Some(d), Some((b, b_value))) = (m, a, replicas, b) else {
        return;
    };
    let product = m.checked_mul(*a).and_then(|p| p.checked_mul(d));
    match product {
        Some(product) if product == *b => {}
        Some(product) => {
            let step = m * d;
            let fix = if b % step == 0 {
                format!(
                    "use accumulation = {} to keep global_batch = {b}, or global_batch = {product}",
                    b / step
                )
            } else {
                format!(
                    "{b} is not a multiple of micro_batch × replicas = {step}; use global_batch = {product}, \
                     or a multiple of {step} with the matching accumulation"
                )
            };
            cx.error_at(
                b_value.span(),
                format!(
                    "global_batch {b} ≠ micro_batch {m} × accumulation {a} × replicas {d} = {product}; {fix}"
                ),
            );
        }
        None => cx.error_at(
            b_value.span(),
            format!(
                "micro_batch {m} × accumulation {a} × replicas {d} does not fit in a 64-bit count; use smaller values"
            ),
        ),
    }
}

/// Part of the constant-plan rule (`accum::plan::global-batch`): a literal zero factor is reported on
/// the literal. Example: `#[accum(accumulation = 0)]`.
fn zero_literals(cx: &Ctxt, cont: &Container<'_>) {
    for constant in &cont.attrs.constants {
        if constant.value.literal() == Some(0) {
            let key = constant.role.key();
            cx.error_at(
                constant.value.span(),
                format!("`{key} = 0`: every factor of the plan must be at least 1; use `{key} = 1` or more"),
            );
        }
    }
}
