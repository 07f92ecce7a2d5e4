//! The `#[derive(AccumConfig)]` macro of accum. See `docs/derive.md` for the
//! attributes and every error with its fix.
//!
//! One file per stage: `ast` reads the struct, `attr` parses
//! `#[accum(...)]`, `valid` checks the cross-field rules, `expand`
//! generates the impl; `ctxt` collects every error so that all of them are
//! reported in one build; `rules` is the plan rules, which accum-core
//! compiles too (through [`plan_rules!`]), so a compile error reads like the
//! run-time error about the same numbers.

mod ast;
mod attr;
mod ctxt;
mod expand;
// The plan rules (roles, arithmetic, wording). accum-core depends on this
// crate to re-export the derive, so this crate cannot depend on accum-core:
// the rules live here, and accum-core compiles the same source through
// `plan_rules!`. The derive uses part of them; their items are `pub` for
// accum-core's sake.
#[allow(dead_code, unreachable_pub)]
mod rules;
mod valid;

use proc_macro::TokenStream;

/// The source of the plan rules, which this crate compiles as `rules`.
const RULES: &str = include_str!("rules.rs");

/// The items of the plan rules (`rules.rs` of this crate), for accum-core,
/// whose `plan::rules` module is this macro's expansion: one source
/// compiled by both crates, shipped in this one, so that each packages on
/// its own. The file's `//!` header documents the module where it is
/// declared, so it is left out: an expansion cannot carry inner
/// attributes.
#[doc(hidden)]
#[proc_macro]
pub fn plan_rules(input: TokenStream) -> TokenStream {
    if !input.is_empty() {
        return syn::Error::new(
            proc_macro2::Span::call_site(),
            "`plan_rules!` takes no input",
        )
        .into_compile_error()
        .into();
    }
    let items: String = RULES
        .lines()
        .filter(|line| !line.trim_start().starts_with("//!"))
        .flat_map(|line| [line, "\n"])
        .collect();
    items
        .parse()
        .expect("rules.rs parses: this crate compiles it as a module")
}

/// Derives `accum::AccumConfig` (and `accum::ConstPlan` for fully constant
/// plans) for a struct with named fields whose fields play plan roles.
///
/// ```text
/// #[derive(AccumConfig)]
/// struct Train {
///     #[accum(micro_batch)]  micro_batch_size: u32,
///     #[accum(accumulation)] grad_accum: u32,
///     #[accum(replicas)]     data_parallel: u32,
/// }
/// ```
#[proc_macro_derive(AccumConfig, attributes(accum))]
pub fn derive_accum_config(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input)
        .unwrap_or_else(|error| expand::fallback(&input, error))
        .into()
}
