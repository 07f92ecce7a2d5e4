//! The batch ramp-up rules (`accum::plan::global-batch`): a `stages` or `ramp` field holds the
//! ramp-up alone, in a type that can hold it, and a config has one of each
//! kind at most.

use super::is_nested;
use super::types::{COLLECTIONS, FLOATS, INTEGERS, LENGTHS, PLAIN, named_in};
use crate::ast::{self, Container};
use crate::attr::Ramp;
use crate::ctxt::Ctxt;

/// Runs the ramp-up rules.
pub(super) fn check(cx: &Ctxt, cont: &Container<'_>) {
    check_ramp_fields(cx, cont);
    check_ramp_types(cx, cont);
    check_duplicate_ramps(cx, cont);
}

/// Rule (`accum::plan::global-batch`, batch ramp-up): a `stages` or `ramp` field holds the ramp-up
/// and nothing else: it plays no plan role, is not a nested section, has no
/// unit and is not a length with a use. Example:
/// `#[accum(stages, accumulation)] stages: Vec<StageSpec>`.
fn check_ramp_fields(cx: &Ctxt, cont: &Container<'_>) {
    for field in &cont.fields {
        let Some((ramp, path)) = &field.attrs.ramp else {
            continue;
        };
        let other = if let Some((role, _)) = &field.attrs.role {
            Some(format!("plays `{}`", role.key()))
        } else if is_nested(field) {
            Some("is marked `nested`".to_owned())
        } else if let Some((_, lit)) = &field.attrs.unit {
            Some(format!("has `unit = \"{}\"`", lit.value()))
        } else {
            field
                .attrs
                .span_use
                .as_ref()
                .map(|(u, _)| format!("is marked `{}`", u.key()))
        };
        if let Some(other) = other {
            cx.error_spanned_by(
                path,
                format!(
                    "this field {other}, so it cannot hold the batch ramp-up too; put `{}` on a field of its own",
                    ramp.key()
                ),
            );
        }
    }
}

/// Whether `ty` certainly cannot hold a ramp-up of kind `ramp` (an unknown
/// path, such as a type alias, is left to the `StagesField` / `RampField`
/// bound in the generated code).
fn wrong_ramp_type(ty: &syn::Type, ramp: Ramp, allow_option: bool) -> bool {
    if let Some(inner) = ast::option_inner(ty) {
        return !allow_option || wrong_ramp_type(inner, ramp, false);
    }
    if !matches!(ast::ungroup(ty), syn::Type::Path(_)) {
        return true;
    }
    let Some((ident, args)) = ast::last_ident(ty) else {
        return true;
    };
    // No number, plain value, length or collection holds a ramp-up; a
    // `StageSpec` is one stage of it, not the whole.
    if ident == "StageSpec" || named_in(ident, &[INTEGERS, FLOATS, PLAIN, LENGTHS, COLLECTIONS]) {
        return true;
    }
    match ramp {
        Ramp::Linear => ident == "Vec",
        Ramp::Stages if ident == "LinearRamp" => true,
        Ramp::Stages if ident == "Vec" => {
            let syn::PathArguments::AngleBracketed(args) = args else {
                return true;
            };
            match args.args.first() {
                Some(syn::GenericArgument::Type(item)) if args.args.len() == 1 => {
                    ast::last_ident(item).is_none_or(|(name, _)| name != "StageSpec")
                }
                _ => true,
            }
        }
        Ramp::Stages => false,
    }
}

/// Rule (`accum::plan::global-batch`, batch ramp-up): `#[accum(stages)]` marks a list of stages
/// (`Vec<StageSpec>`, or an `Option` of one), `#[accum(ramp)]` a linear
/// ramp (`LinearRamp`, or an `Option` of one). Example:
/// `#[accum(stages)] stages: Vec<u64>`. The error is on the type.
fn check_ramp_types(cx: &Ctxt, cont: &Container<'_>) {
    for field in &cont.fields {
        let Some((ramp, _)) = &field.attrs.ramp else {
            continue;
        };
        if wrong_ramp_type(field.ty, *ramp, true) {
            let ty = field.ty;
            let written = quote::quote!(#ty).to_string().replace(' ', "");
            let what = match ramp {
                Ramp::Stages => "the stages of a batch ramp-up",
                Ramp::Linear => "a linear batch ramp",
            };
            cx.error_spanned_by(
                ty,
                format!(
                    "`{written}` cannot hold {what}; use {} (`accum::plan`)",
                    ramp.types()
                ),
            );
        }
    }
}

/// Rule (`accum::plan::global-batch`, batch ramp-up): a config has one list of stages and one linear
/// ramp at most; a second field of a kind would leave the plan to pick one
/// silently. Example: `#[accum(ramp)] a: LinearRamp` and
/// `#[accum(ramp)] b: LinearRamp`. The error is on the second. Across nested
/// sections a generated const assertion checks it (see `expand`).
fn check_duplicate_ramps(cx: &Ctxt, cont: &Container<'_>) {
    for ramp in Ramp::ALL {
        let mut fields = cont
            .fields
            .iter()
            .filter(|f| f.attrs.ramp.as_ref().is_some_and(|(r, _)| *r == ramp));
        let Some(first) = fields.next() else {
            continue;
        };
        for field in fields {
            if let Some((_, path)) = &field.attrs.ramp {
                cx.error_spanned_by(
                    path,
                    format!(
                        "`{}` is already given by field `{}`; a run has one batch ramp-up, remove this one",
                        ramp.key(),
                        first.ident
                    ),
                );
            }
        }
    }
}
