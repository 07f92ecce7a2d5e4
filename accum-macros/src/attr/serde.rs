//! The few `#[serde(...)]` keys that change a field's serialized name,
//! read without reporting errors: everything else is left to serde.

use proc_macro2::{TokenStream, TokenTree};

/// The string value of `key = "..."` at the top level of a `#[serde(...)]`
/// attribute. Everything else in the attribute is left to serde: this never
/// reports an error.
pub(super) fn serde_string(attr: &syn::Attribute, key: &str) -> Option<String> {
    let syn::Meta::List(list) = &attr.meta else {
        return None;
    };
    let tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
    tokens.windows(3).find_map(|w| match w {
        [
            TokenTree::Ident(ident),
            TokenTree::Punct(eq),
            TokenTree::Literal(lit),
        ] if ident == key && eq.as_char() == '=' => {
            let tokens = TokenStream::from(TokenTree::Literal(lit.clone()));
            syn::parse2::<syn::LitStr>(tokens)
                .ok()
                .map(|lit| lit.value())
        }
        _ => None,
    })
}

/// Whether the bare flag `key` appears at the top level of `#[serde(...)]`.
pub(super) fn serde_flag(attr: &syn::Attribute, key: &str) -> bool {
    let syn::Meta::List(list) = &attr.meta else {
        return false;
    };
    let tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
    tokens.iter().enumerate().any(|(i, t)| {
        matches!(t, TokenTree::Ident(ident) if ident == key)
            && !matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '=')
    })
}

/// Applies a serde `rename_all` rule to a field name.
pub(crate) fn rename(name: &str, rule: &str) -> String {
    let words: Vec<&str> = name.split('_').filter(|w| !w.is_empty()).collect();
    let capitalized = |w: &&str| {
        let mut chars = w.chars();
        chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect::<String>())
            .unwrap_or_default()
    };
    match rule {
        "lowercase" => name.to_lowercase(),
        "UPPERCASE" => name.to_uppercase(),
        "PascalCase" => words.iter().map(capitalized).collect(),
        "camelCase" => {
            let pascal: String = words.iter().map(capitalized).collect();
            let mut chars = pascal.chars();
            chars
                .next()
                .map(|c| c.to_lowercase().chain(chars).collect())
                .unwrap_or_default()
        }
        "SCREAMING_SNAKE_CASE" => name.to_uppercase(),
        "kebab-case" => name.replace('_', "-"),
        "SCREAMING-KEBAB-CASE" => name.to_uppercase().replace('_', "-"),
        _ => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_rename_all_rules() {
        assert_eq!(rename("grad_accum", "kebab-case"), "grad-accum");
        assert_eq!(rename("grad_accum", "camelCase"), "gradAccum");
        assert_eq!(rename("grad_accum", "PascalCase"), "GradAccum");
        assert_eq!(rename("grad_accum", "SCREAMING_SNAKE_CASE"), "GRAD_ACCUM");
        assert_eq!(rename("grad_accum", "snake_case"), "grad_accum");
    }

    #[test]
    fn serde_keys_are_read_without_errors() {
        let attr: syn::Attribute =
            syn::parse_quote!(#[serde(default, rename = "gradient_accumulation", with = "x")]);
        assert_eq!(
            serde_string(&attr, "rename").as_deref(),
            Some("gradient_accumulation")
        );
        assert!(!serde_flag(&attr, "flatten"));
        assert!(serde_flag(&attr, "default"));
        let flatten: syn::Attribute = syn::parse_quote!(#[serde(flatten)]);
        assert!(serde_flag(&flatten, "flatten"));
    }
}
