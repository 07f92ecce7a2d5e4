//! The lengths and the ramp-up a config reads at run time: `fn span_values`,
//! `fn ramp_values` and `const VARIABLE_LENGTH`, each reaching into nested
//! sections.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::{field_unit, name_lit, nested_read, span_use_tokens};
use crate::ast::{self, Container, Field};
use crate::attr::Ramp;
use crate::valid;

/// `fn ramp_values`: the `stages` and `ramp` fields and every nested
/// section. Nothing when the struct has none.
pub(super) fn ramp_values(krate: &TokenStream, cont: &Container<'_>) -> Option<TokenStream> {
    values_fn(krate, cont, "ramp", "RampValue", |field| {
        let ident = field.ident;
        let name = name_lit(field);
        let ty = field.ty;
        // Spanned at the type: a type that holds no ramp-up is reported there.
        match field.attrs.ramp.as_ref()?.0 {
            Ramp::Stages => Some(quote_spanned! {ty.span()=>
                if let ::core::option::Option::Some(__stages) =
                    <#ty as #krate::__private::StagesField>::stages_value(&self.#ident)
                {
                    __out.push(#krate::__private::RampValue::stages(__prefix, #name, __stages));
                }
            }),
            Ramp::Linear => Some(quote_spanned! {ty.span()=>
                if let ::core::option::Option::Some(__ramp) =
                    <#ty as #krate::__private::RampField>::ramp_value(&self.#ident)
                {
                    __out.push(#krate::__private::RampValue::linear(__prefix, #name, __ramp));
                }
            }),
        }
    })
}

/// `fn {kind}_values`, which pushes the struct's `{kind}` values (each a
/// `value` of the core crate) onto `__out`: what `read` makes of each field, and every nested section's
/// values. Nothing when no field gives a read: the trait's default (no
/// values) serves.
fn values_fn(
    krate: &TokenStream,
    cont: &Container<'_>,
    kind: &str,
    value: &str,
    read: impl Fn(&Field<'_>) -> Option<TokenStream>,
) -> Option<TokenStream> {
    let nested = format!("nested_{kind}_values");
    let reads: Vec<TokenStream> = cont
        .fields
        .iter()
        .filter_map(|field| {
            if valid::is_nested(field) {
                Some(nested_read(krate, field, &nested))
            } else {
                read(field)
            }
        })
        .collect();
    if reads.is_empty() {
        return None;
    }
    let name = format_ident!("{kind}_values");
    let value = format_ident!("{value}");
    Some(quote! {
        fn #name(
            &self,
            __prefix: &#krate::__private::FieldPath,
            __out: &mut ::std::vec::Vec<#krate::__private::#value>,
        ) {
            #(#reads)*
        }
    })
}

/// Whether `ty` (or `Option<ty>`) is an unsigned integer that
/// `accum_core::RoleType` reads as a count.
fn is_count_integer(ty: &syn::Type) -> bool {
    const COUNTS: &[&str] = &[
        "u8",
        "u16",
        "u32",
        "u64",
        "usize",
        "NonZeroU8",
        "NonZeroU16",
        "NonZeroU32",
        "NonZeroU64",
        "NonZeroUsize",
    ];
    let ty = ast::option_inner(ty).unwrap_or(ty);
    ast::last_ident(ty).is_some_and(|(ident, _)| COUNTS.iter().any(|name| ident == name))
}

/// Whether the field's type is `Span` (or `Option<Span>`): its unit is in
/// the value.
fn is_span(field: &Field<'_>) -> bool {
    let ty = ast::option_inner(field.ty).unwrap_or(field.ty);
    ast::last_ident(ty).is_some_and(|(ident, _)| ident == "Span")
}

/// `fn span_values`: every length field (a `Span`, a typed count, an
/// integer with `unit = "..."`, or a field marked with a use) and every
/// nested section. Nothing when the struct has none.
pub(super) fn span_values(krate: &TokenStream, cont: &Container<'_>) -> Option<TokenStream> {
    values_fn(krate, cont, "span", "SpanValue", |field| {
        let ident = field.ident;
        let name = name_lit(field);
        let ty = field.ty;
        if field.attrs.role.is_some() || field.attrs.ramp.is_some() {
            return None;
        }
        let span_use = match &field.attrs.span_use {
            Some((u, _)) => {
                let u = span_use_tokens(krate, *u);
                quote!(::core::option::Option::Some(#u))
            }
            None => quote!(::core::option::Option::None),
        };
        let value = match &field.attrs.unit {
            // A plain integer with its unit declared (other types with a
            // declared unit are not read as lengths).
            Some((unit, _)) if is_count_integer(ty) => {
                let variant = format_ident!("{}", unit.variant());
                quote_spanned! {ty.span()=>
                    <#ty as #krate::__private::RoleType>::role_value(&self.#ident)
                        .map(|__v| #krate::__private::Span::new(__v, #krate::__private::UnitKind::#variant))
                }
            }
            Some(_) if field.attrs.span_use.is_none() => return None,
            _ if field_unit(field).is_some()
                || is_span(field)
                || field.attrs.span_use.is_some() =>
            {
                // Spanned at the type: a type that is not a length is reported there.
                quote_spanned! {ty.span()=>
                    <#ty as #krate::__private::SpanField>::span_value(&self.#ident)
                }
            }
            _ => return None,
        };
        Some(quote! {
            if let ::core::option::Option::Some(__span) = #value {
                __out.push(#krate::__private::SpanValue::field(__prefix, #name, #span_use, __span));
            }
        })
    })
}

/// `const VARIABLE_LENGTH`: the struct's own `#[accum(variable_length)]`, or
/// any nested section's.
pub(super) fn variable_length(krate: &TokenStream, cont: &Container<'_>) -> Option<TokenStream> {
    let nested: Vec<&syn::Type> = cont
        .fields
        .iter()
        .filter(|f| valid::is_nested(f))
        .map(|f| f.ty)
        .collect();
    if !cont.attrs.variable_length && nested.is_empty() {
        return None;
    }
    let own = cont.attrs.variable_length;
    Some(quote! {
        const VARIABLE_LENGTH: bool = #own #(|| <#nested as #krate::__private::NestedConfig>::VARIABLE_LENGTH)*;
    })
}

/// `fn own_findings`: the struct's `#[accum(check = path)]`, whose findings
/// land under the struct's path, and every nested section's. Nothing when
/// the struct has neither.
pub(super) fn own_findings(krate: &TokenStream, cont: &Container<'_>) -> Option<TokenStream> {
    let own = cont.attrs.check.as_ref().map(|path| {
        // Spanned at the path: a function of another signature is reported there.
        quote_spanned! {path.span()=>
            #krate::__private::push_findings(__prefix, #path(self), __out);
        }
    });
    let nested: Vec<TokenStream> = cont
        .fields
        .iter()
        .filter(|field| valid::is_nested(field))
        .map(|field| nested_read(krate, field, "nested_own_findings"))
        .collect();
    let steps = schema_steps(krate, cont);
    if own.is_none() && nested.is_empty() && steps.is_none() {
        return None;
    }
    Some(quote! {
        fn own_findings(
            &self,
            __prefix: &#krate::__private::FieldPath,
            __out: &mut #krate::__private::Findings,
        ) {
            #own
            #(#nested)*
            #steps
        }
    })
}

/// Rule (`accum::span`): step-like integers in sections the derive cannot see (plain
/// serde structs) are found in the config's JSON Schema when the type has
/// one: a root config (not a `section`, not generic) probes for
/// `JsonSchema` the way the nested-section check probes for
/// `AccumConfig` — an inherent associated const that exists only when the
/// bound holds, shadowing a trait default — and runs
/// `derive::step_findings_of` at the root.
fn schema_steps(krate: &TokenStream, cont: &Container<'_>) -> Option<TokenStream> {
    if cont.attrs.section || !cont.generics.params.is_empty() {
        return None;
    }
    let ident = cont.ident;
    Some(quote! {
        struct __AccumSchemaProbe<__T>(::core::marker::PhantomData<__T>);
        trait __AccumNoSchema {
            const __STEPS: fn(&mut #krate::__private::Findings) = #krate::__private::no_step_findings;
        }
        impl<__T> __AccumNoSchema for __AccumSchemaProbe<__T> {}
        impl<__T: #krate::__private::SchemaConfig> __AccumSchemaProbe<__T> {
            const __STEPS: fn(&mut #krate::__private::Findings) = #krate::__private::step_findings_of::<__T>;
        }
        if __prefix.is_root() {
            (<__AccumSchemaProbe<#ident>>::__STEPS)(__out);
        }
    })
}
