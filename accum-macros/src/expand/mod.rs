//! Code generation. The generated impl is data only — a static field table
//! and a function that reads role values — so that the logic (plan, findings,
//! schema) lives once in `accum_core::derive`.
//!
//! Everything is `#[automatically_derived]`, inside `const _: () = { … }`,
//! with absolute paths into the crate's hidden `__private` module (under
//! `::accum` unless `#[accum(crate = "…")]`), never into its public
//! modules, and `__`-prefixed locals.

mod checks;
mod constant;
mod spans;

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{self, Container, Field};
use crate::attr::{self, ConstValue, Ramp, Role, SpanUse};
use crate::ctxt::Ctxt;
use crate::valid;

/// The derive: parse, validate (collecting every error), expand.
///
/// When the only errors are missing roles (`accum::plan::missing`), the
/// full impl is generated beside them rather than the empty fallback: the
/// struct may be a section whose `#[accum(section)]` was forgotten, and a
/// config that nests it must see its roles, or it would report them
/// missing too.
pub(crate) fn derive(input: &syn::DeriveInput) -> syn::Result<TokenStream> {
    let cx = Ctxt::new();
    let roles = Ctxt::new();
    let cont = Container::from_ast(&cx, input);
    if let Some(cont) = &cont {
        valid::check(&cx, cont);
        valid::check_required_roles(&roles, cont);
    }
    match (roles.check(), cx.check()) {
        (Err(mut missing), Err(error)) => {
            missing.combine(error);
            return Err(missing);
        }
        (Ok(()), Err(error)) => return Err(error),
        (Err(missing), Ok(())) => {
            let missing = missing.into_compile_error();
            let expanded = cont.as_ref().map(|cont| {
                let stand_in = constant::const_plan_stand_in(cont);
                let marker = valid::has_roles(cont).then(|| checks::unmarked_section_marker(cont));
                let expanded = expand(cont);
                quote!(#expanded #stand_in #marker)
            });
            return Ok(quote!(#missing #expanded));
        }
        (Ok(()), Ok(())) => {}
    }
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
    let const_plan = placeholder_const_plan(&krate, ident, &input.generics);
    quote! {
        #error
        #[doc(hidden)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #krate::__private::AccumConfig for #ident #ty_generics #where_clause {
                const FIELDS: &'static [#krate::__private::FieldInfo] = &[];
                fn role_values(
                    &self,
                    _: &#krate::__private::FieldPath,
                    _: &mut ::std::vec::Vec<#krate::__private::RoleValue>,
                ) {
                }
            }
            #const_plan
        };
    }
}

/// An impl of `ConstPlan` with a placeholder plan, for a struct whose
/// constant plan was refused: the build fails on the error either way.
fn placeholder_const_plan(
    krate: &TokenStream,
    ident: &syn::Ident,
    generics: &syn::Generics,
) -> TokenStream {
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::__private::ConstPlan for #ident #ty_generics #where_clause {
            const PLAN: #krate::__private::Plan = #krate::__private::const_plan(1, 1, 1, ::core::option::Option::None);
        }
    }
}

fn crate_path(krate: Option<TokenStream>) -> TokenStream {
    krate.unwrap_or_else(|| quote!(::accum))
}

fn role_tokens(krate: &TokenStream, role: Role) -> TokenStream {
    let variant = format_ident!("{}", role.variant());
    quote!(#krate::__private::Role::#variant)
}

fn expand(cont: &Container<'_>) -> TokenStream {
    let krate = crate_path(cont.attrs.krate.clone());
    let ident = cont.ident;
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();

    let constant_infos = cont.attrs.constants.iter().map(|c| {
        let role = role_tokens(&krate, c.role);
        let value = const_u64(&c.value);
        quote!(#krate::__private::FieldInfo::constant(#role, #value))
    });
    let infos = constant_infos.chain(cont.fields.iter().filter_map(|f| field_info(&krate, f)));
    let constants = cont.attrs.constants.iter().map(|c| {
        let role = role_tokens(&krate, c.role);
        let value = const_u64(&c.value);
        quote!(__out.push(#krate::__private::RoleValue::constant(#role, __prefix, #value));)
    });
    let reads = cont.fields.iter().filter_map(|f| read_field(&krate, f));
    let span_values = spans::span_values(&krate, cont);
    let ramp_values = spans::ramp_values(&krate, cont);
    let own_findings = spans::own_findings(&krate, cont);
    let variable_length = spans::variable_length(&krate, cont);
    let const_plan = constant::const_plan(&krate, cont);
    let nested_checks = checks::nested_role_checks(&krate, cont);
    let const_checks = constant::constant_checks(cont);

    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all, clippy::pedantic)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #krate::__private::AccumConfig for #ident #ty_generics #where_clause {
                const FIELDS: &'static [#krate::__private::FieldInfo] = &[#(#infos),*];
                #variable_length

                fn role_values(
                    &self,
                    __prefix: &#krate::__private::FieldPath,
                    __out: &mut ::std::vec::Vec<#krate::__private::RoleValue>,
                ) {
                    #(#constants)*
                    #(#reads)*
                }
                #span_values
                #ramp_values
                #own_findings
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
    quote!(#krate::__private::RampRole::#variant)
}

fn span_use_tokens(krate: &TokenStream, span_use: SpanUse) -> TokenStream {
    let variant = format_ident!("{}", span_use.variant());
    quote!(#krate::__private::SpanUse::#variant)
}

fn field_info(krate: &TokenStream, field: &Field<'_>) -> Option<TokenStream> {
    let name = name_lit(field);
    let optional = ast::option_inner(field.ty).is_some();
    if valid::is_nested(field) {
        let ty = field.ty;
        return Some(quote_spanned! {ty.span()=>
            #krate::__private::FieldInfo::nested(#name, <#ty as #krate::__private::NestedConfig>::FIELDS, #optional)
        });
    }
    if let Some((role, _)) = &field.attrs.role {
        let role = role_tokens(krate, *role);
        return Some(quote!(#krate::__private::FieldInfo::role(#name, #role, #optional)));
    }
    if let Some((ramp, _)) = &field.attrs.ramp {
        let ramp = ramp_tokens(krate, *ramp);
        return Some(quote!(#krate::__private::FieldInfo::ramp(#name, #ramp, #optional)));
    }
    let span_use = field
        .attrs
        .span_use
        .as_ref()
        .map(|(u, _)| span_use_tokens(krate, *u));
    match (field_unit(field), span_use) {
        (Some(unit), span_use) => {
            let variant = format_ident!("{}", unit.variant());
            let info = quote!(#krate::__private::FieldInfo::unit(#name, #krate::__private::UnitKind::#variant, #optional));
            Some(match span_use {
                Some(span_use) => quote!(#info.with_span_use(#span_use)),
                None => info,
            })
        }
        (None, Some(span_use)) => {
            Some(quote!(#krate::__private::FieldInfo::span(#name, #span_use, #optional)))
        }
        (None, None) => None,
    }
}

/// The read of a nested section's values through its `NestedConfig` impl:
/// `method` is `nested_role_values`, `nested_span_values` or
/// `nested_ramp_values`, and the section's values land under its name.
/// Spanned at the type: a type that is no section is reported there.
fn nested_read(krate: &TokenStream, field: &Field<'_>, method: &str) -> TokenStream {
    let ident = field.ident;
    let name = name_lit(field);
    let ty = field.ty;
    let method = syn::Ident::new(method, ty.span());
    quote_spanned! {ty.span()=>
        <#ty as #krate::__private::NestedConfig>::#method(
            &self.#ident,
            &#krate::__private::join_path(__prefix, #name),
            __out,
        );
    }
}

fn read_field(krate: &TokenStream, field: &Field<'_>) -> Option<TokenStream> {
    let ident = field.ident;
    let name = name_lit(field);
    let ty = field.ty;
    if valid::is_nested(field) {
        return Some(nested_read(krate, field, "nested_role_values"));
    }
    let (role, _) = field.attrs.role.as_ref()?;
    let role = role_tokens(krate, *role);
    // Spanned at the type: a type that cannot hold a role is reported there.
    Some(quote_spanned! {ty.span()=>
        __out.push(#krate::__private::RoleValue::field(
            #role,
            __prefix,
            #name,
            <#ty as #krate::__private::RoleType>::role_value(&self.#ident),
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

/// A message usable as a `panic!` format string.
fn panic_message(message: &str) -> Literal {
    Literal::string(&message.replace('{', "{{").replace('}', "}}"))
}
