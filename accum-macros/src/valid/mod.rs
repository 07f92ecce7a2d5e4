//! Cross-field rules checked at compile time. One function per rule; each
//! opens with the rule, its docs/rules.md id and an example input. All of them run,
//! so every mistake is reported in one build.

mod constant;
mod ramp;
mod types;

use crate::ast::{self, Container, Field};
use crate::attr::Role;
use crate::ctxt::Ctxt;
use types::{COLLECTIONS, FLOATS, INTEGERS, LENGTHS, PLAIN, named_in};

/// Runs every rule but the required-role rule, which
/// [`check_required_roles`] runs on its own context.
pub(crate) fn check(cx: &Ctxt, cont: &Container<'_>) {
    check_duplicate_roles(cx, cont);
    check_role_types(cx, cont);
    check_nested_fields(cx, cont);
    check_ambiguous_steps(cx, cont);
    check_unit_attr(cx, cont);
    check_skip(cx, cont);
    check_span_use(cx, cont);
    ramp::check(cx, cont);
    constant::check_constant_plan(cx, cont);
}

/// Rule (`accum::span`, `accum::run::scheduler`): `#[accum(warmup)]`, `#[accum(total)]` and
/// `#[accum(every)]` mark a length, which validation compares with the
/// run's; a plan role or a nested section is not a length. Example:
/// `#[accum(micro_batch, every)] m: u32`.
fn check_span_use(cx: &Ctxt, cont: &Container<'_>) {
    for field in &cont.fields {
        let Some((span_use, path)) = &field.attrs.span_use else {
            continue;
        };
        let what = match (&field.attrs.role, is_nested(field)) {
            (Some((role, _)), _) => format!("a `{}` field plays a plan role", role.key()),
            (None, true) => "a nested section".to_owned(),
            (None, false) => continue,
        };
        cx.error_spanned_by(
            path,
            format!("{what} and is not a length; remove `{}`", span_use.key()),
        );
    }
}

/// Rule (`accum::span`): `#[accum(unit = "...")]` declares the unit of a plain integer.
/// On a role field (its unit follows from the role) or on a typed count in
/// another unit it would contradict the type. Example:
/// `#[accum(unit = "token")] eval_every: Updates`.
fn check_unit_attr(cx: &Ctxt, cont: &Container<'_>) {
    for field in &cont.fields {
        let Some((unit, lit)) = &field.attrs.unit else {
            continue;
        };
        if let Some((role, _)) = &field.attrs.role {
            cx.error_spanned_by(
                lit,
                format!(
                    "a `{}` field is counted by its role; remove `unit = \"{}\"`",
                    role.key(),
                    lit.value()
                ),
            );
            continue;
        }
        let ty = ast::option_inner(field.ty).unwrap_or(field.ty);
        // Rule (`accum::span`): a unit declares what a whole count counts. On a float
        // (`#[accum(unit = "update")] warmup: f64`), a signed integer or a
        // plain value, the field would be read as no length at all, and
        // its checks would vanish.
        if let Some((ident, _)) = ast::last_ident(ty)
            && (named_in(ident, &[FLOATS, PLAIN])
                || (named_in(ident, &[INTEGERS]) && ident.to_string().starts_with('i')))
        {
            let written = quote::quote!(#ty).to_string().replace(' ', "");
            let noun = unit.noun();
            cx.error_spanned_by(
                lit,
                format!(
                    "`unit = \"{}\"` declares a whole count of {noun}, and `{}: {written}` is not one; \
                     use an unsigned integer (`u64`) with it, or a typed count such as `{}` without it",
                    lit.value(),
                    field.ident,
                    unit.type_name()
                ),
            );
            continue;
        }
        let typed = ast::last_ident(ty)
            .and_then(|(ident, _)| crate::attr::Unit::from_type_name(&ident.to_string()));
        if let Some(typed) = typed
            && typed != *unit
        {
            let written = quote::quote!(#ty).to_string().replace(' ', "");
            cx.error_spanned_by(
                lit,
                format!(
                    "`{}: {written}` is already counted in its type's unit; remove `unit = \"{}\"` or change the type",
                    field.ident,
                    lit.value()
                ),
            );
        }
    }
}

/// Rule (`accum::plan::global-batch`): `#[accum(skip)]` leaves a field out of the plan; with a role,
/// a unit, a use, a ramp-up or `nested` beside it, one of the two is a
/// mistake. Example: `#[accum(skip, nested)] optim: Optim`.
fn check_skip(cx: &Ctxt, cont: &Container<'_>) {
    for field in &cont.fields {
        let Some(skip) = &field.attrs.skip else {
            continue;
        };
        let attrs = &field.attrs;
        let other = attrs
            .role
            .as_ref()
            .map(|(role, _)| role.key())
            .or(attrs.nested.as_ref().map(|_| "nested"))
            .or(attrs.unit.as_ref().map(|_| "unit"))
            .or(attrs.span_use.as_ref().map(|(u, _)| u.key()))
            .or(attrs.ramp.as_ref().map(|(r, _)| r.key()));
        if let Some(other) = other {
            cx.error_spanned_by(
                skip,
                format!(
                    "`skip` leaves `{}` out of the plan, and `{other}` puts it in; remove one",
                    field.ident
                ),
            );
        }
    }
}

/// Whether a field is a nested section (its roles are unknown here).
pub(crate) fn is_nested(field: &Field<'_>) -> bool {
    field.attrs.nested.is_some()
}

/// Types that are certainly not a config section, besides the integers,
/// floats, plain values, collections and lengths: what a field without an
/// `accum` attribute usually holds.
const NOT_SECTION: &[&str] = &[
    "Vec",
    "Box",
    "Rc",
    "Arc",
    "Cow",
    "PathBuf",
    "Path",
    "Duration",
    "Value",
    "StageSpec",
    "LinearRamp",
];

/// The type to probe for plan roles: a field without `accum` attributes
/// whose type (or its `Option`'s) is a plain path that may name a struct
/// deriving `AccumConfig`. Its roles would be ignored silently, so a
/// generated const check looks (see `expand`).
pub(crate) fn probed_type<'f>(field: &'f Field<'_>) -> Option<&'f syn::Type> {
    if field.attrs.role.is_some()
        || field.attrs.unit.is_some()
        || field.attrs.ramp.is_some()
        || field.attrs.unreadable
        || field.attrs.skip.is_some()
        || is_nested(field)
    {
        return None;
    }
    let ty = ast::option_inner(field.ty).unwrap_or(field.ty);
    let (ident, _) = ast::last_ident(ty)?;
    let known = named_in(
        ident,
        &[INTEGERS, FLOATS, PLAIN, COLLECTIONS, LENGTHS, NOT_SECTION],
    ) || ident.to_string().starts_with("NonZero");
    (!known).then_some(ty)
}

/// Whether the required-role and role-once rules are checked by generated
/// const assertions rather than here: when nested sections (or fields that
/// may be unmarked sections) hide roles from the macro. A const item cannot
/// name a generic struct, so generic structs are checked here.
pub(crate) fn deferred_role_checks(cont: &Container<'_>) -> bool {
    cont.generics.params.is_empty()
        && cont
            .fields
            .iter()
            .any(|f| is_nested(f) || probed_type(f).is_some())
}

/// Whether `role` is written in this struct (a field or a constant).
fn written(cont: &Container<'_>, role: Role) -> bool {
    cont.attrs.constants.iter().any(|c| c.role == role)
        || cont.attrs.attempted.contains(&role)
        || cont
            .fields
            .iter()
            .any(|f| f.attrs.role.as_ref().is_some_and(|(r, _)| *r == role))
}

/// Whether the struct gives any role itself (a field or a constant): one
/// that lacks a required role is then likely a section.
pub(crate) fn has_roles(cont: &Container<'_>) -> bool {
    Role::ALL.into_iter().any(|role| written(cont, role))
}

/// Rule (`accum::plan::missing`): the plan needs `m`, `A`, and `D` or a world size; each can be
/// a field, a struct-level constant or live in a nested section. Example:
/// `struct Train { #[accum(micro_batch)] m: u32 }` has no accumulation and no
/// replicas. With nested sections the roles inside are not visible to the
/// macro; a generated const assertion checks them instead. A struct marked
/// `#[accum(section)]` is part of a larger config and is not checked alone.
///
/// A struct with roles that lacks some is as often a section whose
/// `#[accum(section)]` was forgotten as a config that lacks a role, and the
/// macro cannot see whether another struct nests it. So the error names
/// `section` first when the struct has roles of its own, and the derive
/// still generates the full impl beside it (see `expand::derive`): a config
/// that nests the struct then sees its roles, and no second, false
/// "missing role" error follows there.
pub(crate) fn check_required_roles(cx: &Ctxt, cont: &Container<'_>) {
    if cont.attrs.section || cont.fields.iter().any(is_nested) || deferred_role_checks(cont) {
        return;
    }
    // A field whose `accum` attribute could not be read was probably meant
    // to play a role; its error is already reported.
    if cont.fields.iter().any(|f| f.attrs.unreadable) {
        return;
    }
    let ident = cont.ident;
    let section = if has_roles(cont) {
        format!(
            "if `{ident}` is a section of a larger config, write `#[accum(section)]` on `{ident}` \
             (its required roles are then checked on the config that nests it); otherwise "
        )
    } else {
        String::new()
    };
    for role in [Role::MicroBatch, Role::Accumulation] {
        if !written(cont, role) {
            let key = role.key();
            cx.error_spanned_by(
                ident,
                format!(
                    "`{ident}` has no `{key}` role; {section}mark the field that holds it with `#[accum({key})]`, \
                     or fix it on the struct with `#[accum({key} = ...)]`"
                ),
            );
        }
    }
    if !written(cont, Role::Replicas) && !written(cont, Role::WorldSize) {
        cx.error_spanned_by(
            ident,
            format!(
                "`{ident}` has no `replicas` or `world_size` role; {section}mark a field with `#[accum(replicas)]` \
                 (data-parallel copies) or `#[accum(world_size)]` (all devices), or write \
                 `#[accum(replicas = 1)]` on the struct"
            ),
        );
    }
}

/// Rule (`accum::plan::duplicate`): a role is given once — two fields, or a struct-level constant
/// and a field, would leave the plan to pick one silently. Example:
/// `#[accum(replicas)] dp: u32` and `#[accum(replicas)] data_parallel: u32`.
/// The error is on the second occurrence.
fn check_duplicate_roles(cx: &Ctxt, cont: &Container<'_>) {
    let mut seen: Vec<Role> = Vec::new();
    // Struct attributes come before the fields in the source.
    for constant in &cont.attrs.constants {
        if seen.contains(&constant.role) {
            cx.error_spanned_by(
                &constant.key,
                format!(
                    "`{}` is given twice on the struct; remove this one",
                    constant.role.key()
                ),
            );
        } else {
            seen.push(constant.role);
        }
    }
    for field in &cont.fields {
        let Some((role, path)) = &field.attrs.role else {
            continue;
        };
        if seen.contains(role) {
            let first = cont
                .attrs
                .constants
                .iter()
                .any(|c| c.role == *role)
                .then(|| format!("`#[accum({} = ...)]` on the struct", role.key()))
                .or_else(|| {
                    cont.fields
                        .iter()
                        .find(|f| f.attrs.role.as_ref().is_some_and(|(r, _)| r == role))
                        .map(|f| format!("field `{}`", f.ident))
                })
                .unwrap_or_default();
            cx.error_spanned_by(
                path,
                format!(
                    "`{}` is already given by {first}; a role is given once, remove this one",
                    role.key()
                ),
            );
        } else {
            seen.push(*role);
        }
    }
}

/// Types that certainly cannot hold a role value, besides the floats,
/// plain values and lengths: the integers that are no count (negative or
/// wider than `u64`) and `Vec`.
const NOT_ROLE: &[&str] = &[
    "u128",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "Vec",
    "NonZeroI8",
    "NonZeroI16",
    "NonZeroI32",
    "NonZeroI64",
    "NonZeroI128",
    "NonZeroIsize",
    "NonZeroU128",
];

/// Whether `ty` is certainly not a role type (an unknown path, such as a
/// type alias, is left to the `RoleType` bound in the generated code).
fn wrong_role_type(ty: &syn::Type, allow_option: bool) -> bool {
    if let Some(inner) = ast::option_inner(ty) {
        return !allow_option || wrong_role_type(inner, false);
    }
    match ast::ungroup(ty) {
        syn::Type::Path(_) => match ast::last_ident(ty) {
            Some((ident, _)) => named_in(ident, &[FLOATS, PLAIN, LENGTHS, NOT_ROLE]),
            None => true,
        },
        _ => true,
    }
}

/// Rule (`accum::plan::global-batch`): a role counts examples, microbatches or devices, so its field
/// is an unsigned integer, a `NonZero*`, or an `Option` of one (the role is
/// then optional and checked at run time). Example:
/// `#[accum(micro_batch)] m: i32` or `#[accum(accumulation)] a: f32`.
fn check_role_types(cx: &Ctxt, cont: &Container<'_>) {
    for field in &cont.fields {
        let Some((role, _)) = &field.attrs.role else {
            continue;
        };
        if wrong_role_type(field.ty, true) {
            let ty = field.ty;
            let written = quote::quote!(#ty).to_string().replace(' ', "");
            let hint = if ast::option_inner(ty).and_then(ast::option_inner).is_some() {
                "; one `Option` is enough"
            } else {
                ""
            };
            cx.error_spanned_by(
                ty,
                format!(
                    "`{written}` cannot hold the `{}` role; use an unsigned integer (`u32`, `u64`, …), \
                     a `NonZero*`, or an `Option` of one for an optional role{hint}",
                    role.key()
                ),
            );
        }
    }
}

/// Rule (`accum::plan::global-batch`): a nested section is a struct that also derives `AccumConfig`
/// (or an `Option` of one); it plays no role itself and has no unit of its
/// own. Example: `#[accum(nested, replicas)] parallel: ParallelSection`.
fn check_nested_fields(cx: &Ctxt, cont: &Container<'_>) {
    for field in &cont.fields {
        if !is_nested(field) {
            continue;
        }
        if let Some((role, path)) = &field.attrs.role {
            cx.error_spanned_by(
                path,
                format!(
                    "a nested section cannot play `{}` itself; put `#[accum({})]` on the field inside the section",
                    role.key(),
                    role.key()
                ),
            );
        }
        if let Some((_, lit)) = &field.attrs.unit {
            cx.error_spanned_by(
                lit,
                "a nested section has no unit; declare units on the fields inside it",
            );
        }
        let inner = ast::option_inner(field.ty).unwrap_or(field.ty);
        if !matches!(ast::ungroup(inner), syn::Type::Path(_)) {
            cx.error_spanned_by(
                field.ty,
                format!(
                    "`{}` is marked `nested` but its type is not a struct; use a struct that derives `AccumConfig`, or `Option` of one",
                    field.ident
                ),
            );
        }
    }
}

/// Words in a field name that say "some kind of step" without saying which.
const STEP_WORDS: &[&str] = &["step", "steps", "iter", "iters", "iteration", "iterations"];

fn is_float(ty: &syn::Type) -> bool {
    let ty = ast::option_inner(ty).unwrap_or(ty);
    ast::last_ident(ty).is_some_and(|(ident, _)| named_in(ident, &[FLOATS]))
}

fn is_bare_integer(ty: &syn::Type) -> bool {
    let ty = ast::option_inner(ty).unwrap_or(ty);
    match ast::last_ident(ty) {
        Some((ident, _)) => {
            named_in(ident, &[INTEGERS]) || ident.to_string().starts_with("NonZero")
        }
        None => false,
    }
}

/// Rule (`accum::span`, units are explicit): a field named for steps or iterations
/// with a bare integer type is ambiguous — a "step" is an update in one
/// framework and a microbatch in the next. Example: `warmup_steps: u64`,
/// `max_iters: u32`, `log_every_steps: usize`, and floats such as
/// `num_train_steps: f64` (a fraction of a step is no clearer). Fix: a typed
/// count or `Span`, or `#[accum(unit = "update")]` to state the unit.
fn check_ambiguous_steps(cx: &Ctxt, cont: &Container<'_>) {
    for field in &cont.fields {
        if field.attrs.role.is_some()
            || field.attrs.unit.is_some()
            || field.attrs.ramp.is_some()
            || is_nested(field)
        {
            continue;
        }
        let name = field.ident.to_string();
        let ambiguous = name
            .trim_start_matches("r#")
            .split('_')
            .any(|word| STEP_WORDS.contains(&word.to_ascii_lowercase().as_str()));
        let float = is_float(field.ty);
        if !ambiguous || !(float || is_bare_integer(field.ty)) {
            continue;
        }
        let ident = field.ident;
        let ty = field.ty;
        let colon = &field.original.colon_token;
        let written = quote::quote!(#ty).to_string().replace(' ', "");
        let message = if float {
            format!(
                "`{name}: {written}` is ambiguous and not a whole count; declare its unit with `Updates`, \
                 `Microbatches`, `Examples` or `Tokens` (or `Span`)"
            )
        } else {
            format!(
                "`{name}: {written}` is ambiguous; declare its unit with `Updates`, `Microbatches`, `Examples` \
                 or `Tokens` (or `Span`), or keep the integer and write `#[accum(unit = \"update\")]`"
            )
        };
        cx.error_spanned_by(quote::quote!(#ident #colon #ty), message);
    }
}
