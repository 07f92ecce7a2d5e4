//! What the keys of `#[accum(...)]` name: the plan roles, units, length
//! uses and ramp-up fields, and the value of a struct-level constant.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;

/// A plan role, as written in `#[accum(...)]`: the role table of
/// accum-core, compiled into this crate from the same file.
pub(crate) use crate::rules::Role;

impl Role {
    pub(super) fn from_path(path: &syn::Path) -> Option<Role> {
        let ident = path.get_ident()?;
        Role::ALL.into_iter().find(|role| ident == role.key())
    }
}

/// A unit, as written in `#[accum(unit = "...")]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unit {
    Example,
    Microbatch,
    Update,
    Token,
}

impl Unit {
    /// The variant name of `accum_core::UnitKind`.
    pub(crate) const fn variant(self) -> &'static str {
        match self {
            Unit::Example => "Example",
            Unit::Microbatch => "Microbatch",
            Unit::Update => "Update",
            Unit::Token => "Token",
        }
    }

    /// The plural noun: `updates`.
    pub(crate) const fn noun(self) -> &'static str {
        match self {
            Unit::Example => "examples",
            Unit::Microbatch => "microbatches",
            Unit::Update => "updates",
            Unit::Token => "tokens",
        }
    }

    /// The typed count of this unit: `Updates`.
    pub(crate) const fn type_name(self) -> &'static str {
        match self {
            Unit::Example => "Examples",
            Unit::Microbatch => "Microbatches",
            Unit::Update => "Updates",
            Unit::Token => "Tokens",
        }
    }

    pub(super) fn from_name(name: &str) -> Option<Unit> {
        match name {
            "example" | "examples" => Some(Unit::Example),
            "microbatch" | "microbatches" => Some(Unit::Microbatch),
            "update" | "updates" => Some(Unit::Update),
            "token" | "tokens" => Some(Unit::Token),
            _ => None,
        }
    }

    /// The unit of a typed count (`Updates`, `Count<Update>`), by type name.
    pub(crate) fn from_type_name(name: &str) -> Option<Unit> {
        match name {
            "Examples" | "Example" => Some(Unit::Example),
            "Microbatches" | "Microbatch" => Some(Unit::Microbatch),
            "Updates" | "Update" => Some(Unit::Update),
            "Tokens" | "Token" => Some(Unit::Token),
            _ => None,
        }
    }
}

/// What a length field is for, as written in `#[accum(warmup)]`,
/// `#[accum(total)]` or `#[accum(every)]` (mirror of `accum_core::SpanUse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SpanUse {
    Warmup,
    Total,
    Every,
}

impl SpanUse {
    const ALL: [SpanUse; 3] = [SpanUse::Warmup, SpanUse::Total, SpanUse::Every];

    /// The key in `#[accum(...)]`.
    pub(crate) const fn key(self) -> &'static str {
        match self {
            SpanUse::Warmup => "warmup",
            SpanUse::Total => "total",
            SpanUse::Every => "every",
        }
    }

    /// The variant name of `accum_core::SpanUse`.
    pub(crate) const fn variant(self) -> &'static str {
        match self {
            SpanUse::Warmup => "Warmup",
            SpanUse::Total => "Total",
            SpanUse::Every => "Every",
        }
    }

    pub(super) fn from_path(path: &syn::Path) -> Option<SpanUse> {
        let ident = path.get_ident()?;
        SpanUse::ALL.into_iter().find(|u| ident == u.key())
    }
}

/// A batch ramp-up field, as written in `#[accum(stages)]` or
/// `#[accum(ramp)]` (mirror of `accum_core::RampRole`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ramp {
    Stages,
    Linear,
}

impl Ramp {
    pub(crate) const ALL: [Ramp; 2] = [Ramp::Stages, Ramp::Linear];

    /// The key in `#[accum(...)]` and `x-accum-role`.
    pub(crate) const fn key(self) -> &'static str {
        match self {
            Ramp::Stages => "stages",
            Ramp::Linear => "ramp",
        }
    }

    /// The variant name of `accum_core::RampRole`.
    pub(crate) const fn variant(self) -> &'static str {
        match self {
            Ramp::Stages => "Stages",
            Ramp::Linear => "Ramp",
        }
    }

    /// The types the field may have, for messages.
    pub(crate) const fn types(self) -> &'static str {
        match self {
            Ramp::Stages => "`Vec<StageSpec>` or `Option<Vec<StageSpec>>`",
            Ramp::Linear => "`LinearRamp` or `Option<LinearRamp>`",
        }
    }

    pub(super) fn from_path(path: &syn::Path) -> Option<Ramp> {
        let ident = path.get_ident()?;
        Ramp::ALL.into_iter().find(|r| ident == r.key())
    }
}

/// The value of a struct-level constant role.
pub(crate) enum ConstValue {
    /// An integer literal, already read.
    Lit { value: u64, lit: syn::LitInt },
    /// A path to a `const`, checked by a generated const assertion.
    Path(syn::ExprPath),
}

impl ConstValue {
    /// The literal's value, when it is one.
    pub(crate) fn literal(&self) -> Option<u64> {
        match self {
            ConstValue::Lit { value, .. } => Some(*value),
            ConstValue::Path(_) => None,
        }
    }

    /// The value as written, for messages.
    pub(crate) fn written(&self) -> String {
        match self {
            ConstValue::Lit { value, .. } => value.to_string(),
            ConstValue::Path(path) => quote::quote!(#path).to_string().replace(' ', ""),
        }
    }

    /// The span of the value.
    pub(crate) fn span(&self) -> Span {
        match self {
            ConstValue::Lit { lit, .. } => lit.span(),
            ConstValue::Path(path) => path.span(),
        }
    }
}

/// A struct-level constant: `#[accum(micro_batch = 2)]`.
pub(crate) struct Constant {
    pub(crate) role: Role,
    /// The key as written, for spans.
    pub(crate) key: TokenStream,
    pub(crate) value: ConstValue,
}
