//! The `#[derive(AccumConfig)]` macro of accum.

use proc_macro::TokenStream;

/// Derives `accum_core::AccumConfig` for a training-config struct.
#[proc_macro_derive(AccumConfig, attributes(accum))]
pub fn derive_accum_config(input: TokenStream) -> TokenStream {
    let _ = input;
    TokenStream::new()
}
