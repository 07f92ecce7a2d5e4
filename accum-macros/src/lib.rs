//! The `#[derive(AccumConfig)]` macro of accum. See `docs/derive.md` for the
//! attributes and every error with its fix.
//!
//! One file per stage: `ast` reads the struct, `attr` parses
//! `#[accum(...)]`, `valid` checks the cross-field rules, `expand`
//! generates the impl; `ctxt` collects every error so that all of them are
//! reported in one build; `shared_rules` is accum-core's plan rules, so a
//! compile error reads like the run-time error about the same numbers.

mod ast;
mod attr;
mod ctxt;
mod expand;
// The plan rules (roles, arithmetic, wording) are accum-core's, compiled
// here from the same file: accum-core depends on this crate to re-export
// the derive, so this crate cannot depend on accum-core. The derive uses
// part of the rules, and their items are `pub` for accum-core's sake.
#[allow(dead_code, unreachable_pub)]
#[path = "../../accum-core/src/plan/rules.rs"]
mod shared_rules;
mod valid;

use proc_macro::TokenStream;

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
