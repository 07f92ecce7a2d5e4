//! Constant plans (`accum::plan::global-batch`, `accum::plan::layout`, `accum::plan::replicas`): `impl ConstPlan` when every role is a constant,
//! and const assertions for constants given as paths, whose values the
//! macro cannot see.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::{const_u64, panic_message};
use crate::ast::Container;
use crate::attr::{ConstValue, Constant, Role};
use crate::rules::constant as says;
use crate::valid;

fn constant<'c>(cont: &'c Container<'_>, role: Role) -> Option<&'c Constant> {
    cont.attrs.constants.iter().find(|c| c.role == role)
}

/// The tensor-, pipeline- and context-parallel degrees of a constant plan as
/// `u64` expressions, `1` where the struct declares none.
fn degrees(cont: &Container<'_>) -> [TokenStream; 3] {
    [
        Role::TensorParallel,
        Role::PipelineParallel,
        Role::ContextParallel,
    ]
    .map(|role| constant(cont, role).map_or_else(|| quote!(1u64), |c| const_u64(&c.value)))
}

/// A placeholder `impl ConstPlan` for a struct of constants only that
/// lacks a required role (already reported), so that its uses as a
/// constant plan add no second error; `None` when the struct has role
/// fields, a ramp-up or sections, and so would have no `ConstPlan` anyway.
pub(super) fn const_plan_stand_in(cont: &Container<'_>) -> Option<TokenStream> {
    if cont.attrs.section
        || cont
            .fields
            .iter()
            .any(|f| f.attrs.role.is_some() || f.attrs.ramp.is_some() || valid::is_nested(f))
    {
        return None;
    }
    let krate = super::crate_path(cont.attrs.krate.clone());
    let stand_in = super::placeholder_const_plan(&krate, cont.ident, cont.generics);
    Some(quote! {
        #[doc(hidden)]
        const _: () = {
            #stand_in
        };
    })
}

/// `impl ConstPlan` when every role is a constant and the batch does not
/// ramp up (`accum::plan::global-batch`: the plan is known at compile time and usable in const
/// context).
pub(super) fn const_plan(krate: &TokenStream, cont: &Container<'_>) -> Option<TokenStream> {
    if cont.attrs.section
        || cont
            .fields
            .iter()
            .any(|f| f.attrs.role.is_some() || f.attrs.ramp.is_some() || valid::is_nested(f))
    {
        return None;
    }
    let m = const_u64(&constant(cont, Role::MicroBatch)?.value);
    let a = const_u64(&constant(cont, Role::Accumulation)?.value);
    let seq = match constant(cont, Role::SeqLen) {
        Some(c) => {
            let v = const_u64(&c.value);
            quote!(::core::option::Option::Some(#v))
        }
        None => quote!(::core::option::Option::None),
    };
    let plan = match constant(cont, Role::WorldSize) {
        Some(world) => {
            let world = const_u64(&world.value);
            let [tp, pp, cp] = degrees(cont);
            quote! {
                #krate::__private::const_layout_plan(#m, #a, #krate::__private::Layout::new(#world, #tp, #pp, #cp), #seq)
            }
        }
        None => {
            let d = const_u64(&constant(cont, Role::Replicas)?.value);
            quote!(#krate::__private::const_plan(#m, #a, #d, #seq))
        }
    };
    let ident = cont.ident;
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();
    Some(quote! {
        #[automatically_derived]
        impl #impl_generics #krate::__private::ConstPlan for #ident #ty_generics #where_clause {
            const PLAN: #krate::__private::Plan = #plan;
        }
    })
}

/// Constant plans that involve paths to `const`s (`accum::plan::global-batch`): the macro cannot see
/// their values, so a const assertion checks zeroes, the layout's
/// divisibility and `m·A·D = global_batch`, with the equation in its message.
/// Literal-only plans were checked by the macro itself (`valid`).
pub(super) fn constant_checks(cont: &Container<'_>) -> Option<TokenStream> {
    let constants = &cont.attrs.constants;
    let any_path = constants
        .iter()
        .any(|c| matches!(c.value, ConstValue::Path(_)));
    if !any_path {
        return None;
    }
    let ident = cont.ident;
    let mut checks = Vec::new();
    for c in constants {
        if let ConstValue::Path(path) = &c.value {
            let value = const_u64(&c.value);
            let key = c.role.key();
            let message = panic_message(&format!(
                "`{ident}`: {key} {} {}",
                c.value.written(),
                says::ZERO
            ));
            checks.push(quote_spanned!(path.span()=> if #value == 0 { ::core::panic!(#message) }));
        }
    }
    let written = |role: Role| constant(cont, role).map(|c| c.value.written());
    let mut replicas =
        constant(cont, Role::Replicas).map(|c| (const_u64(&c.value), c.value.written()));
    if let Some(world) = constant(cont, Role::WorldSize) {
        let span = world.value.span();
        let value = const_u64(&world.value);
        let [tp, pp, cp] = degrees(cont);
        let shown = |role| written(role).unwrap_or_else(|| "1".to_owned());
        let degrees_text = format!(
            "tensor {} × pipeline {} × context {}",
            shown(Role::TensorParallel),
            shown(Role::PipelineParallel),
            shown(Role::ContextParallel)
        );
        let equation = format!("{} / ({degrees_text})", world.value.written());
        let overflow = panic_message(&format!("`{ident}`: {}", says::GROUP_OVERFLOW));
        let not_divisible = panic_message(&format!(
            "`{ident}`: world_size {} is not divisible by {degrees_text}: {}",
            world.value.written(),
            says::LAYOUT
        ));
        checks.push(quote_spanned! {span=>
            let __group = match #tp.checked_mul(#pp) {
                ::core::option::Option::Some(__tp_pp) => match __tp_pp.checked_mul(#cp) {
                    ::core::option::Option::Some(__group) => __group,
                    ::core::option::Option::None => ::core::panic!(#overflow),
                },
                ::core::option::Option::None => ::core::panic!(#overflow),
            };
            if #value % __group != 0 {
                ::core::panic!(#not_divisible)
            }
            let __layout_replicas = #value / __group;
        });
        if let Some((d, d_written)) = &replicas {
            let message = panic_message(&format!(
                "`{ident}`: replicas {d_written} disagrees with world_size {equation}; {}",
                says::REPLICAS
            ));
            checks.push(
                quote_spanned!(span=> if #d != __layout_replicas { ::core::panic!(#message) }),
            );
        }
        replicas = Some((quote!(__layout_replicas), format!("({equation})")));
    }
    if let (Some(m), Some(a), Some((d, d_written)), Some(b)) = (
        constant(cont, Role::MicroBatch),
        constant(cont, Role::Accumulation),
        replicas,
        constant(cont, Role::GlobalBatch),
    ) {
        let span = b.value.span();
        let (m_value, a_value, b_value) = (
            const_u64(&m.value),
            const_u64(&a.value),
            const_u64(&b.value),
        );
        let equation = format!(
            "global_batch {} ≠ micro_batch {} × accumulation {} × replicas {d_written}",
            b.value.written(),
            m.value.written(),
            a.value.written(),
        );
        let mismatch = panic_message(&format!("`{ident}`: {equation}; {}", says::GLOBAL_BATCH));
        let overflow = panic_message(&format!("`{ident}`: {}", says::PRODUCT_OVERFLOW));
        checks.push(quote_spanned! {span=>
            let __product = match #m_value.checked_mul(#a_value) {
                ::core::option::Option::Some(__ma) => match __ma.checked_mul(#d) {
                    ::core::option::Option::Some(__product) => __product,
                    ::core::option::Option::None => ::core::panic!(#overflow),
                },
                ::core::option::Option::None => ::core::panic!(#overflow),
            };
            if __product != #b_value {
                ::core::panic!(#mismatch)
            }
        });
    }
    Some(quote! {
        const _: () = {
            #(#checks)*
        };
    })
}
