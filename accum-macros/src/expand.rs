//! Code generation. The generated impl is data only — a static field table
//! and a function that reads role values — so that the logic (plan, findings,
//! schema) lives once in `accum_core::derive`.
//!
//! Everything is `#[automatically_derived]`, inside `const _: () = { … }`,
//! with absolute paths under the crate path (`::accum` unless
//! `#[accum(crate = "…")]`) and `__`-prefixed locals.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{self, Container, Field};
use crate::attr::{self, ConstValue, Constant, Ramp, Role, SpanUse};
use crate::ctxt::Ctxt;
use crate::valid;

/// The derive: parse, validate (collecting every error), expand.
pub(crate) fn derive(input: &syn::DeriveInput) -> syn::Result<TokenStream> {
    let cx = Ctxt::new();
    let cont = Container::from_ast(&cx, input);
    if let Some(cont) = &cont {
        valid::check(&cx, cont);
    }
    cx.check()?;
    match cont {
        Some(cont) => Ok(expand(&cont)),
        // `from_ast` records an error whenever it returns `None`.
        None => Err(syn::Error::new(
            Span::call_site(),
            "`AccumConfig` needs a struct with named fields",
        )),
    }
}

/// The errors, plus empty impls of the traits so that uses of the type do
/// not fail a second time with unrelated errors (thiserror's fallback):
/// `AccumConfig`, and `ConstPlan` with a placeholder plan, since a struct
/// whose constant plan was refused is likely used as one. The build fails
/// on the errors either way, so the placeholder never runs.
pub(crate) fn fallback(input: &syn::DeriveInput, error: syn::Error) -> TokenStream {
    let krate = crate_path(attr::crate_override(input));
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let error = error.into_compile_error();
    quote! {
        #error
        #[doc(hidden)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #krate::AccumConfig for #ident #ty_generics #where_clause {
                const FIELDS: &'static [#krate::FieldInfo] = &[];
                fn role_values(
                    &self,
                    _: &#krate::FieldPath,
                    _: &mut ::std::vec::Vec<#krate::RoleValue>,
                ) {
                }
            }
            #[automatically_derived]
            impl #impl_generics #krate::ConstPlan for #ident #ty_generics #where_clause {
                const PLAN: #krate::Plan = #krate::Plan::from_parts(1, 1, 1, ::core::option::Option::None);
            }
        };
    }
}

fn crate_path(krate: Option<TokenStream>) -> TokenStream {
    krate.unwrap_or_else(|| quote!(::accum))
}

fn role_tokens(krate: &TokenStream, role: Role) -> TokenStream {
    let variant = format_ident!("{}", role.variant());
    quote!(#krate::Role::#variant)
}

fn expand(cont: &Container<'_>) -> TokenStream {
    let krate = crate_path(cont.attrs.krate.clone());
    let ident = cont.ident;
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();

    let constant_infos = cont.attrs.constants.iter().map(|c| {
        let role = role_tokens(&krate, c.role);
        let value = const_u64(&c.value);
        quote!(#krate::FieldInfo::constant(#role, #value))
    });
    let infos = constant_infos.chain(cont.fields.iter().filter_map(|f| field_info(&krate, f)));
    let constants = cont.attrs.constants.iter().map(|c| {
        let role = role_tokens(&krate, c.role);
        let value = const_u64(&c.value);
        quote!(__out.push(#krate::RoleValue::constant(#role, __prefix, #value));)
    });
    let reads = cont.fields.iter().filter_map(|f| read_field(&krate, f));
    let span_values = span_values(&krate, cont);
    let ramp_values = ramp_values(&krate, cont);
    let variable_length = variable_length(&krate, cont);
    let const_plan = const_plan(&krate, cont);
    let nested_checks = nested_role_checks(&krate, cont);
    let const_checks = constant_checks(cont);

    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all, clippy::pedantic)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #krate::AccumConfig for #ident #ty_generics #where_clause {
                const FIELDS: &'static [#krate::FieldInfo] = &[#(#infos),*];
                #variable_length

                fn role_values(
                    &self,
                    __prefix: &#krate::FieldPath,
                    __out: &mut ::std::vec::Vec<#krate::RoleValue>,
                ) {
                    #(#constants)*
                    #(#reads)*
                }
                #span_values
                #ramp_values
            }
            #const_plan
            #nested_checks
            #const_checks
        };
    }
}

fn name_lit(field: &Field<'_>) -> Literal {
    Literal::string(&field.name)
}

/// The unit of a typed count field (`Updates`, `Option<Tokens>`,
/// `Count<Update>`), or of `#[accum(unit = "...")]`.
fn field_unit(field: &Field<'_>) -> Option<attr::Unit> {
    if let Some((unit, _)) = &field.attrs.unit {
        return Some(*unit);
    }
    let ty = ast::option_inner(field.ty).unwrap_or(field.ty);
    let (ident, args) = ast::last_ident(ty)?;
    if ident == "Count" {
        let syn::PathArguments::AngleBracketed(args) = args else {
            return None;
        };
        return match args.args.first() {
            Some(syn::GenericArgument::Type(tag)) => {
                attr::Unit::from_type_name(&ast::last_ident(tag)?.0.to_string())
            }
            _ => None,
        };
    }
    attr::Unit::from_type_name(&ident.to_string())
}

fn ramp_tokens(krate: &TokenStream, ramp: Ramp) -> TokenStream {
    let variant = format_ident!("{}", ramp.variant());
    quote!(#krate::RampRole::#variant)
}

/// `fn ramp_values`: the `stages` and `ramp` fields and every nested
/// section. Nothing when the struct has none.
fn ramp_values(krate: &TokenStream, cont: &Container<'_>) -> Option<TokenStream> {
    let reads: Vec<TokenStream> = cont
        .fields
        .iter()
        .filter_map(|field| {
            let ident = field.ident;
            let name = name_lit(field);
            let ty = field.ty;
            if valid::is_nested(field) {
                return Some(quote_spanned! {ty.span()=>
                    <#ty as #krate::NestedConfig>::nested_ramp_values(
                        &self.#ident,
                        &#krate::derive::join_path(__prefix, #name),
                        __out,
                    );
                });
            }
            // Spanned at the type: a type that holds no ramp-up is reported there.
            match field.attrs.ramp.as_ref()?.0 {
                Ramp::Stages => Some(quote_spanned! {ty.span()=>
                    if let ::core::option::Option::Some(__stages) =
                        <#ty as #krate::StagesField>::stages_value(&self.#ident)
                    {
                        __out.push(#krate::RampValue::stages(__prefix, #name, __stages));
                    }
                }),
                Ramp::Linear => Some(quote_spanned! {ty.span()=>
                    if let ::core::option::Option::Some(__ramp) =
                        <#ty as #krate::RampField>::ramp_value(&self.#ident)
                    {
                        __out.push(#krate::RampValue::linear(__prefix, #name, __ramp));
                    }
                }),
            }
        })
        .collect();
    if reads.is_empty() {
        return None;
    }
    Some(quote! {
        fn ramp_values(
            &self,
            __prefix: &#krate::FieldPath,
            __out: &mut ::std::vec::Vec<#krate::RampValue>,
        ) {
            #(#reads)*
        }
    })
}

fn span_use_tokens(krate: &TokenStream, span_use: SpanUse) -> TokenStream {
    let variant = format_ident!("{}", span_use.variant());
    quote!(#krate::SpanUse::#variant)
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

fn field_info(krate: &TokenStream, field: &Field<'_>) -> Option<TokenStream> {
    let name = name_lit(field);
    let optional = ast::option_inner(field.ty).is_some();
    if valid::is_nested(field) {
        let ty = field.ty;
        return Some(quote_spanned! {ty.span()=>
            #krate::FieldInfo::nested(#name, <#ty as #krate::NestedConfig>::FIELDS, #optional)
        });
    }
    if let Some((role, _)) = &field.attrs.role {
        let role = role_tokens(krate, *role);
        return Some(quote!(#krate::FieldInfo::role(#name, #role, #optional)));
    }
    if let Some((ramp, _)) = &field.attrs.ramp {
        let ramp = ramp_tokens(krate, *ramp);
        return Some(quote!(#krate::FieldInfo::ramp(#name, #ramp, #optional)));
    }
    let span_use = field
        .attrs
        .span_use
        .as_ref()
        .map(|(u, _)| span_use_tokens(krate, *u));
    match (field_unit(field), span_use) {
        (Some(unit), span_use) => {
            let variant = format_ident!("{}", unit.variant());
            let info =
                quote!(#krate::FieldInfo::unit(#name, #krate::UnitKind::#variant, #optional));
            Some(match span_use {
                Some(span_use) => quote!(#info.with_span_use(#span_use)),
                None => info,
            })
        }
        (None, Some(span_use)) => {
            Some(quote!(#krate::FieldInfo::span(#name, #span_use, #optional)))
        }
        (None, None) => None,
    }
}

/// `fn span_values`: every length field (a `Span`, a typed count, an
/// integer with `unit = "..."`, or a field marked with a use) and every
/// nested section. Nothing when the struct has none.
fn span_values(krate: &TokenStream, cont: &Container<'_>) -> Option<TokenStream> {
    let reads: Vec<TokenStream> = cont
        .fields
        .iter()
        .filter_map(|field| {
            let ident = field.ident;
            let name = name_lit(field);
            let ty = field.ty;
            if valid::is_nested(field) {
                return Some(quote_spanned! {ty.span()=>
                    <#ty as #krate::NestedConfig>::nested_span_values(
                        &self.#ident,
                        &#krate::derive::join_path(__prefix, #name),
                        __out,
                    );
                });
            }
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
                        <#ty as #krate::RoleType>::role_value(&self.#ident)
                            .map(|__v| #krate::Span::new(__v, #krate::UnitKind::#variant))
                    }
                }
                Some(_) if field.attrs.span_use.is_none() => return None,
                _ if field_unit(field).is_some()
                    || is_span(field)
                    || field.attrs.span_use.is_some() =>
                {
                    // Spanned at the type: a type that is not a length is reported there.
                    quote_spanned! {ty.span()=>
                        <#ty as #krate::SpanField>::span_value(&self.#ident)
                    }
                }
                _ => return None,
            };
            Some(quote! {
                if let ::core::option::Option::Some(__span) = #value {
                    __out.push(#krate::SpanValue::field(__prefix, #name, #span_use, __span));
                }
            })
        })
        .collect();
    if reads.is_empty() {
        return None;
    }
    Some(quote! {
        fn span_values(
            &self,
            __prefix: &#krate::FieldPath,
            __out: &mut ::std::vec::Vec<#krate::SpanValue>,
        ) {
            #(#reads)*
        }
    })
}

/// `const VARIABLE_LENGTH`: the struct's own `#[accum(variable_length)]`, or
/// any nested section's.
fn variable_length(krate: &TokenStream, cont: &Container<'_>) -> Option<TokenStream> {
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
        const VARIABLE_LENGTH: bool = #own #(|| <#nested as #krate::NestedConfig>::VARIABLE_LENGTH)*;
    })
}

fn read_field(krate: &TokenStream, field: &Field<'_>) -> Option<TokenStream> {
    let ident = field.ident;
    let name = name_lit(field);
    let ty = field.ty;
    if valid::is_nested(field) {
        return Some(quote_spanned! {ty.span()=>
            <#ty as #krate::NestedConfig>::nested_role_values(
                &self.#ident,
                &#krate::derive::join_path(__prefix, #name),
                __out,
            );
        });
    }
    let (role, _) = field.attrs.role.as_ref()?;
    let role = role_tokens(krate, *role);
    // Spanned at the type: a type that cannot hold a role is reported there.
    Some(quote_spanned! {ty.span()=>
        __out.push(#krate::RoleValue::field(
            #role,
            __prefix,
            #name,
            <#ty as #krate::RoleType>::role_value(&self.#ident),
        ));
    })
}

/// A constant's value as a `u64` expression.
fn const_u64(value: &ConstValue) -> TokenStream {
    match value {
        ConstValue::Lit { value, lit } => {
            let mut literal = Literal::u64_suffixed(*value);
            literal.set_span(lit.span());
            quote!(#literal)
        }
        ConstValue::Path(path) => quote_spanned!(path.span()=> ((#path) as u64)),
    }
}

fn constant<'c>(cont: &'c Container<'_>, role: Role) -> Option<&'c Constant> {
    cont.attrs.constants.iter().find(|c| c.role == role)
}

/// `impl ConstPlan` when every role is a constant and the batch does not
/// ramp up (R3: the plan is known at compile time and usable in const
/// context).
fn const_plan(krate: &TokenStream, cont: &Container<'_>) -> Option<TokenStream> {
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
            let degree =
                |role| constant(cont, role).map_or_else(|| quote!(1u64), |c| const_u64(&c.value));
            let (tp, pp, cp) = (
                degree(Role::TensorParallel),
                degree(Role::PipelineParallel),
                degree(Role::ContextParallel),
            );
            quote! {
                #krate::Plan::from_layout_parts(#m, #a, #krate::Layout::new(#world, #tp, #pp, #cp), #seq)
            }
        }
        None => {
            let d = const_u64(&constant(cont, Role::Replicas)?.value);
            quote!(#krate::Plan::from_parts(#m, #a, #d, #seq))
        }
    };
    let ident = cont.ident;
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();
    Some(quote! {
        #[automatically_derived]
        impl #impl_generics #krate::ConstPlan for #ident #ty_generics #where_clause {
            const PLAN: #krate::Plan = #plan;
        }
    })
}

/// A message usable as a `panic!` format string.
fn panic_message(message: &str) -> Literal {
    Literal::string(&message.replace('{', "{{").replace('}', "}}"))
}

/// Whether a field table holds any plan role, nested sections included.
fn any_role(krate: &TokenStream, fields: &TokenStream) -> TokenStream {
    let checks = Role::ALL.iter().map(|&role| {
        let role = role_tokens(krate, role);
        quote!(#krate::derive::has_role(#fields, #role))
    });
    quote!((#(#checks)||*))
}

/// Rule (R3, nested sections): a field without `#[accum(nested)]` whose type
/// derives `AccumConfig` with plan roles would have its roles ignored
/// silently. The macro cannot see another type's impls, so a generated probe
/// does: an inherent associated const that exists only when the type
/// implements `AccumConfig`, shadowing a trait default for every other type
/// (the way the `impls` crate tests for a trait). Each such field gets a
/// const assertion naming it and the fix; `unmarked` is true when any field
/// is such a section, so that no "missing role" error follows.
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
            const __FIELDS: &'static [#krate::FieldInfo] = &[];
        }
        impl<__T: ?::core::marker::Sized> __AccumNotAConfig for __AccumProbe<__T> {}
        impl<__T: ?::core::marker::Sized + #krate::AccumConfig> __AccumProbe<__T> {
            const __FIELDS: &'static [#krate::FieldInfo] = <__T as #krate::AccumConfig>::FIELDS;
        }
    };
    let ident = cont.ident;
    let mut checks = Vec::new();
    let mut any = Vec::new();
    for (field, ty) in probes {
        let span = field.ident.span();
        let fields = quote_spanned!(span=> <__AccumProbe<#ty>>::__FIELDS);
        let has_roles = any_role(krate, &fields);
        let name = field.ident;
        let written = quote!(#ty).to_string().replace(' ', "");
        let message = panic_message(&format!(
            "field `{name}` of `{ident}` holds `{written}`, which derives `AccumConfig` with plan roles; \
             unmarked, its roles are ignored: write `#[accum(nested)]` on `{name}`"
        ));
        checks.push(quote_spanned! {span=>
            const _: () = {
                if #has_roles {
                    ::core::panic!(#message)
                }
            };
        });
        any.push(has_roles);
    }
    (items, checks, quote!((#(#any)||*)))
}

/// With nested sections (or fields that may be unmarked sections), the
/// required-role and role-once rules (R3) can only be checked once the
/// sections' field tables exist: a const assertion over `FIELDS`. Generic
/// structs are checked by the macro instead (a const item cannot name them).
fn nested_role_checks(krate: &TokenStream, cont: &Container<'_>) -> Option<TokenStream> {
    if !valid::deferred_role_checks(cont) {
        return None;
    }
    let (probe_items, probe_checks, unmarked) = unmarked_section_checks(krate, cont);
    let required = !cont.attrs.section;
    let ident = cont.ident;
    let span = ident.span();
    let fields = quote_spanned!(span=> <#ident as #krate::AccumConfig>::FIELDS);
    let has = |role: Role| {
        let role_tokens = role_tokens(krate, role);
        quote!(#krate::derive::has_role(__fields, #role_tokens))
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
             a role is given once, remove the extra `#[accum({key})]`"
        ));
        checks.push(quote_spanned! {span=>
            if #krate::derive::count_role(__fields, #role_tokens) > 1 {
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
            if #krate::derive::count_ramp(__fields, #ramp_tokens) > 1 {
                ::core::panic!(#message)
            }
        });
    }
    Some(quote_spanned! {span=>
        #probe_items
        #(#probe_checks)*
        const _: () = {
            let __fields: &[#krate::FieldInfo] = #fields;
            #(#checks)*
        };
    })
}

/// Constant plans that involve paths to `const`s (R3): the macro cannot see
/// their values, so a const assertion checks zeroes, the layout's
/// divisibility and `m·A·D = global_batch`, with the equation in its message.
/// Literal-only plans were checked by the macro itself (`valid`).
fn constant_checks(cont: &Container<'_>) -> Option<TokenStream> {
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
                "`{ident}`: `{key} = {}` is 0; every factor of the plan must be at least 1",
                c.value.written()
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
        let degree =
            |role| constant(cont, role).map_or_else(|| quote!(1u64), |c| const_u64(&c.value));
        let (tp, pp, cp) = (
            degree(Role::TensorParallel),
            degree(Role::PipelineParallel),
            degree(Role::ContextParallel),
        );
        let shown = |role| written(role).unwrap_or_else(|| "1".to_owned());
        let equation = format!(
            "{} / ({} × {} × {})",
            world.value.written(),
            shown(Role::TensorParallel),
            shown(Role::PipelineParallel),
            shown(Role::ContextParallel)
        );
        let overflow = panic_message(&format!(
            "`{ident}`: tensor_parallel × pipeline_parallel × context_parallel does not fit in a 64-bit count"
        ));
        let not_divisible = panic_message(&format!(
            "`{ident}`: world_size is not divisible by tensor_parallel × pipeline_parallel × context_parallel \
             ({equation} is not whole): devices that share one model copy do not multiply the batch; \
             use a world_size that is a multiple of tp·pp·cp"
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
                "`{ident}`: replicas ({d_written}) ≠ world_size / (tensor_parallel × pipeline_parallel × \
                 context_parallel) = {equation}; remove `replicas` or make them agree"
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
        let mismatch = panic_message(&format!(
            "`{ident}`: {equation}; change accumulation or global_batch so that m·A·D = global_batch"
        ));
        let overflow = panic_message(&format!(
            "`{ident}`: micro_batch × accumulation × replicas does not fit in a 64-bit count"
        ));
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
