//! Generated role checks across nested sections (`accum::plan::global-batch`): the required-role,
//! role-once and ramp-once rules as const assertions over the field tables,
//! and a probe for fields that hold a section without `#[accum(nested)]`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::{panic_message, ramp_tokens, role_tokens};
use crate::ast::{self, Container, Field};
use crate::attr::{Ramp, Role};
use crate::valid;

/// Rule (`accum::plan::global-batch`, nested sections): a field without `#[accum(nested)]` whose type
/// derives `AccumConfig` would have its roles, lengths and checks ignored
/// silently — a section with only a warmup loses the warmup's checks, one
/// with roles its roles. So any such field must be marked `nested` or
/// `skip`, whatever its section holds. The macro cannot see another type's
/// impls, so a generated probe does: an inherent associated const that
/// exists only when the type implements `AccumConfig`, shadowing a trait
/// default for every other type (the way the `impls` crate tests for a
/// trait). Each such field gets a const assertion naming it and the fix;
/// `unmarked` is true when any field is such a section, so that no
/// "missing role" error follows.
fn unmarked_section_checks(
    krate: &TokenStream,
    cont: &Container<'_>,
) -> (TokenStream, Vec<TokenStream>, TokenStream) {
    let probes: Vec<(&Field<'_>, &syn::Type)> = cont
        .fields
        .iter()
        .filter_map(|f| valid::probed_type(f).map(|ty| (f, ty)))
        .collect();
    if probes.is_empty() {
        return (TokenStream::new(), Vec::new(), quote!(false));
    }
    let items = quote! {
        struct __AccumProbe<__T: ?::core::marker::Sized>(::core::marker::PhantomData<__T>);
        trait __AccumNotAConfig {
            const __IS_CONFIG: bool = false;
        }
        impl<__T: ?::core::marker::Sized> __AccumNotAConfig for __AccumProbe<__T> {}
        impl<__T: ?::core::marker::Sized + #krate::__private::AccumConfig> __AccumProbe<__T> {
            const __IS_CONFIG: bool = true;
        }
    };
    let ident = cont.ident;
    let mut checks = Vec::new();
    let mut any = Vec::new();
    for (field, ty) in probes {
        let span = field.ident.span();
        let is_config = quote_spanned!(span=> <__AccumProbe<#ty>>::__IS_CONFIG);
        let name = field.ident;
        let written = quote!(#ty).to_string().replace(' ', "");
        let message = panic_message(&format!(
            "field `{name}` of `{ident}` holds `{written}`, which derives `AccumConfig`; unmarked, its roles, \
             lengths and checks are ignored: write `#[accum(nested)]` on `{name}`, or `#[accum(skip)]` to leave it out"
        ));
        checks.push(quote_spanned! {span=>
            const _: () = {
                if #is_config {
                    ::core::panic!(#message)
                }
            };
        });
        any.push(is_config);
    }
    (items, checks, quote!((#(#any)||*)))
}

/// The marker of a struct with roles that lacks a required one and has no
/// `#[accum(section)]` (its error is already reported): `UnmarkedSection`,
/// which [`forgotten_section_checks`] looks for in the configs that nest it.
pub(super) fn unmarked_section_marker(cont: &Container<'_>) -> TokenStream {
    let krate = super::crate_path(cont.attrs.krate.clone());
    let ident = cont.ident;
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();
    quote! {
        #[doc(hidden)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #krate::__private::UnmarkedSection for #ident #ty_generics #where_clause {}
        };
    }
}

/// Rule (`accum::plan::missing`, nested sections): a section's required
/// roles are checked on the config that nests it only when its struct is
/// marked `#[accum(section)]`; without it, the section's own derive reports
/// the roles the section leaves to this config as missing. That derive
/// cannot see where the struct is nested, so it implements
/// `UnmarkedSection`, and each `#[accum(nested)]` field here is probed for
/// it (the way [`unmarked_section_checks`] probes for `AccumConfig`): a
/// const assertion at the field names the struct and the attribute.
fn forgotten_section_checks(krate: &TokenStream, cont: &Container<'_>) -> TokenStream {
    let nested: Vec<&Field<'_>> = cont.fields.iter().filter(|f| valid::is_nested(f)).collect();
    if nested.is_empty() {
        return TokenStream::new();
    }
    let ident = cont.ident;
    let checks = nested.iter().map(|field| {
        let ty = ast::option_inner(field.ty).unwrap_or(field.ty);
        let span = field.ident.span();
        let unmarked = quote_spanned!(span=> <__AccumSectionProbe<#ty>>::__UNMARKED);
        let name = field.ident;
        let written = quote!(#ty).to_string().replace(' ', "");
        let message = panic_message(&format!(
            "field `{name}` of `{ident}` is a section, and `{written}` is not marked `#[accum(section)]`, so it \
             is checked alone for the roles it leaves to `{ident}`: write `#[accum(section)]` on `{written}`"
        ));
        quote_spanned! {span=>
            const _: () = {
                if #unmarked {
                    ::core::panic!(#message)
                }
            };
        }
    });
    quote! {
        struct __AccumSectionProbe<__T: ?::core::marker::Sized>(::core::marker::PhantomData<__T>);
        trait __AccumMarkedSection {
            const __UNMARKED: bool = false;
        }
        impl<__T: ?::core::marker::Sized> __AccumMarkedSection for __AccumSectionProbe<__T> {}
        impl<__T: ?::core::marker::Sized + #krate::__private::UnmarkedSection> __AccumSectionProbe<__T> {
            const __UNMARKED: bool = true;
        }
        #(#checks)*
    }
}

/// With nested sections (or fields that may be unmarked sections), the
/// required-role and role-once rules (`accum::plan::missing`, `accum::plan::duplicate`) can only be checked once the
/// sections' field tables exist: a const assertion over `FIELDS`. Generic
/// structs are checked by the macro instead (a const item cannot name them).
pub(super) fn nested_role_checks(krate: &TokenStream, cont: &Container<'_>) -> Option<TokenStream> {
    if !valid::deferred_role_checks(cont) {
        return None;
    }
    let (probe_items, probe_checks, unmarked) = unmarked_section_checks(krate, cont);
    let forgotten = forgotten_section_checks(krate, cont);
    let required = !cont.attrs.section;
    let ident = cont.ident;
    let span = ident.span();
    let fields = quote_spanned!(span=> <#ident as #krate::__private::AccumConfig>::FIELDS);
    let has = |role: Role| {
        let role_tokens = role_tokens(krate, role);
        quote!(#krate::__private::has_role(__fields, #role_tokens))
    };
    let mut checks = Vec::new();
    for role in [Role::MicroBatch, Role::Accumulation] {
        if !required {
            break;
        }
        let present = has(role);
        let key = role.key();
        let message = panic_message(&format!(
            "`{ident}` has no `{key}` role in its fields or nested sections; mark the field that holds it \
             with `#[accum({key})]`, or fix it with `#[accum({key} = ...)]` on the struct"
        ));
        // An unmarked section already has its own error.
        checks.push(quote_spanned!(span=> if !#unmarked && !#present { ::core::panic!(#message) }));
    }
    let replicas = has(Role::Replicas);
    let world = has(Role::WorldSize);
    let message = panic_message(&format!(
        "`{ident}` has no `replicas` or `world_size` role in its fields or nested sections; mark a field with \
         `#[accum(replicas)]` or `#[accum(world_size)]`, or write `#[accum(replicas = 1)]` on the struct"
    ));
    if required {
        checks.push(
            quote_spanned!(span=> if !#unmarked && !(#replicas || #world) { ::core::panic!(#message) }),
        );
    }
    for role in Role::ALL {
        let role_tokens = role_tokens(krate, role);
        let key = role.key();
        let message = panic_message(&format!(
            "`{key}` is given more than once in `{ident}` (its fields, nested sections and constants); \
             a role is given once, remove the extra `#[accum({key})]` or `#[accum({key} = ...)]`"
        ));
        checks.push(quote_spanned! {span=>
            if #krate::__private::count_role(__fields, #role_tokens) > 1 {
                ::core::panic!(#message)
            }
        });
    }
    for ramp in Ramp::ALL {
        let ramp_tokens = ramp_tokens(krate, ramp);
        let key = ramp.key();
        let message = panic_message(&format!(
            "`{key}` is given more than once in `{ident}` (its fields and nested sections); \
             a run has one batch ramp-up, remove the extra `#[accum({key})]`"
        ));
        checks.push(quote_spanned! {span=>
            if #krate::__private::count_ramp(__fields, #ramp_tokens) > 1 {
                ::core::panic!(#message)
            }
        });
    }
    Some(quote_spanned! {span=>
        #probe_items
        #(#probe_checks)*
        #forgotten
        const _: () = {
            let __fields: &[#krate::__private::FieldInfo] = #fields;
            #(#checks)*
        };
    })
}
