//! The derive's input as borrowed AST structs: the struct, its named fields
//! and their parsed attributes, each keeping the original syntax for spans.

use crate::attr;
use crate::ctxt::Ctxt;

/// A struct with named fields that derives `AccumConfig`.
pub(crate) struct Container<'a> {
    pub(crate) ident: &'a syn::Ident,
    pub(crate) generics: &'a syn::Generics,
    pub(crate) attrs: attr::Container,
    pub(crate) fields: Vec<Field<'a>>,
}

/// One named field.
pub(crate) struct Field<'a> {
    pub(crate) ident: &'a syn::Ident,
    pub(crate) ty: &'a syn::Type,
    pub(crate) attrs: attr::Field,
    /// The serialized name (after `rename` / `rename_all`), or `""` for a
    /// `#[serde(flatten)]` section.
    pub(crate) name: String,
    pub(crate) original: &'a syn::Field,
}

impl<'a> Container<'a> {
    /// Reads the input; `None` (with the error recorded) when it is not a
    /// struct with named fields.
    pub(crate) fn from_ast(cx: &Ctxt, input: &'a syn::DeriveInput) -> Option<Container<'a>> {
        let attrs = attr::Container::from_ast(cx, input);
        let named = match &input.data {
            syn::Data::Struct(data) => match &data.fields {
                syn::Fields::Named(named) => named,
                syn::Fields::Unnamed(unnamed) => {
                    cx.error_spanned_by(
                        unnamed,
                        "`AccumConfig` needs named fields, so that every role has a name in the config file; \
                         write `struct Name { micro_batch: u32, ... }`",
                    );
                    return None;
                }
                syn::Fields::Unit => {
                    cx.error_spanned_by(
                        &input.ident,
                        format!(
                            "`AccumConfig` needs a struct with named fields, not a unit struct; write \
                             `struct {} {{}}` (roles may all be constants) or add named fields",
                            input.ident
                        ),
                    );
                    return None;
                }
            },
            syn::Data::Enum(data) => {
                cx.error_at(
                    data.enum_token.span,
                    "`AccumConfig` can only be derived for a struct with named fields, not an enum; \
                     put the plan roles in a struct and the enum in one of its fields",
                );
                return None;
            }
            syn::Data::Union(data) => {
                cx.error_at(
                    data.union_token.span,
                    "`AccumConfig` can only be derived for a struct with named fields, not a union",
                );
                return None;
            }
        };
        let fields = named
            .named
            .iter()
            .filter_map(|field| Field::from_ast(cx, field, attrs.rename_all.as_deref()))
            .collect();
        Some(Container {
            ident: &input.ident,
            generics: &input.generics,
            attrs,
            fields,
        })
    }
}

impl<'a> Field<'a> {
    fn from_ast(cx: &Ctxt, field: &'a syn::Field, rename_all: Option<&str>) -> Option<Field<'a>> {
        let ident = field.ident.as_ref()?;
        let attrs = attr::Field::from_ast(cx, field);
        let plain = ident.to_string();
        let plain = plain.strip_prefix("r#").unwrap_or(&plain).to_owned();
        let name = if attrs.flatten {
            String::new()
        } else if let Some(name) = &attrs.rename {
            name.clone()
        } else if let Some(rule) = rename_all {
            attr::rename(&plain, rule)
        } else {
            plain
        };
        Some(Field {
            ident,
            ty: &field.ty,
            attrs,
            name,
            original: field,
        })
    }
}

/// The `T` of `Option<T>` (also `std::option::Option<T>`), by syntax.
pub(crate) fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(path) = ungroup(ty) else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(syn::GenericArgument::Type(inner)) if args.args.len() == 1 => Some(inner),
        _ => None,
    }
}

/// The type without invisible groups and parentheses.
pub(crate) fn ungroup(mut ty: &syn::Type) -> &syn::Type {
    loop {
        match ty {
            syn::Type::Group(group) => ty = &group.elem,
            syn::Type::Paren(paren) => ty = &paren.elem,
            _ => return ty,
        }
    }
}

/// The last path segment's name of a type (`u32`, `Updates`), if it is a path.
pub(crate) fn last_ident(ty: &syn::Type) -> Option<(&syn::Ident, &syn::PathArguments)> {
    match ungroup(ty) {
        syn::Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .map(|segment| (&segment.ident, &segment.arguments)),
        _ => None,
    }
}
