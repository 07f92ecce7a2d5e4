//! Parsing of `#[accum(...)]` (with `parse_nested_meta`) and of the few
//! `#[serde(...)]` keys that change a field's serialized name.
//!
//! Parsing never stops at the first problem: each bad key is recorded in the
//! [`Ctxt`] and parsing goes on with the next attribute.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;

use crate::ctxt::Ctxt;

mod keys;
mod serde;

pub(crate) use keys::{ConstValue, Constant, Ramp, Role, SpanUse, Unit};
pub(crate) use serde::rename;
use serde::{serde_flag, serde_string};

/// `#[accum(...)]` on the struct.
#[derive(Default)]
pub(crate) struct Container {
    /// `crate = "..."`: the path of the accum crate in generated code.
    pub(crate) krate: Option<TokenStream>,
    /// Constant roles, in the order written.
    pub(crate) constants: Vec<Constant>,
    /// `#[serde(rename_all = "...")]`.
    pub(crate) rename_all: Option<String>,
    /// `section`: a part of a larger config; required roles are checked on
    /// the config that nests it.
    pub(crate) section: bool,
    /// Roles written on the struct whose value could not be read (already
    /// reported; they count as given so that no second error follows).
    pub(crate) attempted: Vec<Role>,
    /// `variable_length`: the data's lengths vary and the loop counts tokens.
    pub(crate) variable_length: bool,
    /// `check = path`: a function `fn(&Self) -> Findings` whose findings
    /// join those of `validate()` (and so keep `plan()` from a config they
    /// refuse).
    pub(crate) check: Option<syn::Path>,
}

/// `#[accum(...)]` on a field.
#[derive(Default)]
pub(crate) struct Field {
    /// The role flag and the path it was written with (for spans).
    pub(crate) role: Option<(Role, TokenStream)>,
    /// `nested`, with its span.
    pub(crate) nested: Option<TokenStream>,
    /// `skip`, with its span: the field is no part of the plan, even when
    /// its type derives `AccumConfig`.
    pub(crate) skip: Option<TokenStream>,
    /// `unit = "..."`.
    pub(crate) unit: Option<(Unit, syn::LitStr)>,
    /// `warmup`, `total` or `every`, with the path it was written with.
    pub(crate) span_use: Option<(SpanUse, TokenStream)>,
    /// `stages` or `ramp`, with the path it was written with.
    pub(crate) ramp: Option<(Ramp, TokenStream)>,
    /// `#[serde(rename = "...")]`.
    pub(crate) rename: Option<String>,
    /// `#[serde(flatten)]`.
    pub(crate) flatten: bool,
    /// An `accum` key that could not be read (already reported): the field
    /// may have been meant to play a role.
    pub(crate) unreadable: bool,
}

const FIELD_KEYS: &str = "`micro_batch`, `accumulation`, `replicas`, `world_size`, `tensor_parallel`, \
     `pipeline_parallel`, `context_parallel`, `seq_len`, `global_batch`, `nested`, `unit = \"...\"`, \
     `warmup`, `total`, `every`, `stages`, `ramp` or `skip`";

const CONTAINER_KEYS: &str = "`crate = \"...\"`, `section`, `variable_length`, `check = path`, or a role \
     with its value, e.g. `micro_batch = 2`";

/// Whether `attr` is `#[accum...]`; a malformed one (`#[accum]`,
/// `#[accum = ...]`) is reported and skipped.
fn accum_list(cx: &Ctxt, attr: &syn::Attribute) -> bool {
    if !attr.path().is_ident("accum") {
        return false;
    }
    match &attr.meta {
        syn::Meta::List(_) => true,
        other => {
            cx.error_spanned_by(
                other,
                "expected `#[accum(...)]` with keys in parentheses, e.g. `#[accum(micro_batch)]`",
            );
            false
        }
    }
}

impl Container {
    /// Parses the struct's attributes.
    pub(crate) fn from_ast(cx: &Ctxt, input: &syn::DeriveInput) -> Container {
        let mut out = Container::default();
        for attr in &input.attrs {
            if attr.path().is_ident("serde") {
                out.rename_all = serde_string(attr, "rename_all");
                continue;
            }
            if !accum_list(cx, attr) {
                continue;
            }
            let result = attr.parse_nested_meta(|meta| out.parse_key(cx, meta));
            if let Err(err) = result {
                cx.syn_error(err);
            }
        }
        out
    }

    fn parse_key(&mut self, cx: &Ctxt, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        if meta.path.is_ident("crate") {
            let lit: syn::LitStr = meta.value()?.parse()?;
            match lit.parse::<syn::Path>() {
                Ok(path) if self.krate.is_none() => self.krate = Some(quote::quote!(#path)),
                Ok(_) => cx.error_spanned_by(
                    &lit,
                    "`crate` is given twice; keep one `#[accum(crate = \"...\")]`",
                ),
                Err(_) => cx.error_spanned_by(
                    &lit,
                    format!(
                        "`{}` is not a path; write the crate path, e.g. `crate = \"accum_core\"`",
                        lit.value()
                    ),
                ),
            }
            return Ok(());
        }
        if let Some(role) = Role::from_path(&meta.path) {
            if !meta.input.peek(syn::Token![=]) {
                self.attempted.push(role);
                return Err(meta.error(format!(
                    "a role on the struct needs its value, e.g. `{} = 8` or `{} = MY_CONST`; \
                     to make a field play the role, put `#[accum({})]` on the field",
                    role.key(),
                    role.key(),
                    role.key()
                )));
            }
            let path = &meta.path;
            let key = quote::quote!(#path);
            let expr: syn::Expr = meta.value()?.parse()?;
            if let Some(value) = const_value(cx, role, expr) {
                self.constants.push(Constant { role, key, value });
            }
            return Ok(());
        }
        if meta.path.is_ident("section") {
            if self.section {
                return Err(meta.error("`section` is given twice; remove one"));
            }
            self.section = true;
            return Ok(());
        }
        if meta.path.is_ident("check") {
            let value = meta.value()?;
            let path = match value.parse::<syn::Expr>()? {
                syn::Expr::Path(path) if path.qself.is_none() => path.path,
                other => {
                    cx.error_spanned_by(
                        &other,
                        "`check` takes the path of a function `fn(&Self) -> Findings`, e.g. `check = Self::settings_findings`",
                    );
                    return Ok(());
                }
            };
            if self.check.is_some() {
                cx.error_spanned_by(&path, "`check` is given twice; keep one");
            } else {
                self.check = Some(path);
            }
            return Ok(());
        }
        if meta.path.is_ident("variable_length") {
            if self.variable_length {
                return Err(meta.error("`variable_length` is given twice; remove one"));
            }
            self.variable_length = true;
            return Ok(());
        }
        if meta.path.is_ident("nested")
            || meta.path.is_ident("skip")
            || meta.path.is_ident("unit")
            || SpanUse::from_path(&meta.path).is_some()
            || Ramp::from_path(&meta.path).is_some()
        {
            return Err(meta.error(format!(
                "`{}` belongs on a field, not on the struct",
                path_text(&meta.path)
            )));
        }
        let written = path_text(&meta.path);
        let guess = ["crate", "section", "variable_length", "check"]
            .into_iter()
            .chain(Role::ALL.iter().map(|role| role.key()))
            .find(|key| close(key, &written));
        let hint = match guess {
            Some("crate") => "did you mean `crate = \"...\"`? ".to_owned(),
            Some(flag @ ("section" | "variable_length")) => format!("did you mean `{flag}`? "),
            Some("check") => "did you mean `check = path`? ".to_owned(),
            Some(key) => format!("did you mean `{key} = ...`? "),
            None => String::new(),
        };
        // A misspelt role counts as given, so that no "missing role" error
        // follows this one.
        if let Some(role) = Role::ALL.into_iter().find(|role| Some(role.key()) == guess) {
            self.attempted.push(role);
        }
        // Likewise a misspelt `section` is taken as meant: its required
        // roles live in the config that nests it.
        if guess == Some("section") {
            self.section = true;
        }
        cx.syn_error(meta.error(format!(
            "unknown `accum` key `{written}` on a struct; {hint}expected {CONTAINER_KEYS}"
        )));
        // Skip its value and go on with the next key.
        if meta.input.peek(syn::Token![=]) {
            let _: syn::Expr = meta.value()?.parse()?;
        }
        Ok(())
    }
}

/// Reads the value of `role = value`: an integer literal or a path to a
/// `const`.
fn const_value(cx: &Ctxt, role: Role, expr: syn::Expr) -> Option<ConstValue> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(lit),
            ..
        }) => match lit.base10_parse::<u64>() {
            Ok(value) => Some(ConstValue::Lit { value, lit }),
            Err(_) => {
                cx.error_spanned_by(
                    &lit,
                    format!(
                        "`{} = {}` does not fit in a 64-bit count; use a smaller value",
                        role.key(),
                        lit.base10_digits()
                    ),
                );
                None
            }
        },
        syn::Expr::Path(path) if path.qself.is_none() => Some(ConstValue::Path(path)),
        other => {
            cx.error_spanned_by(
                &other,
                format!(
                    "`{}` takes an unsigned integer literal or a path to a `const`, e.g. `{} = 8` or `{} = MY_CONST`",
                    role.key(),
                    role.key(),
                    role.key()
                ),
            );
            None
        }
    }
}

impl Field {
    /// Parses a field's attributes.
    pub(crate) fn from_ast(cx: &Ctxt, field: &syn::Field) -> Field {
        let mut out = Field::default();
        for attr in &field.attrs {
            if attr.path().is_ident("serde") {
                if let Some(name) = serde_string(attr, "rename") {
                    out.rename = Some(name);
                }
                out.flatten |= serde_flag(attr, "flatten");
                continue;
            }
            if !accum_list(cx, attr) {
                continue;
            }
            let result = attr.parse_nested_meta(|meta| out.parse_key(cx, meta));
            if let Err(err) = result {
                out.unreadable = true;
                cx.syn_error(err);
            }
        }
        out
    }

    fn parse_key(&mut self, cx: &Ctxt, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        if let Some(role) = Role::from_path(&meta.path) {
            if meta.input.peek(syn::Token![=]) {
                if self.role.is_none() {
                    let path = &meta.path;
                    self.role = Some((role, quote::quote!(#path)));
                }
                return Err(meta.error(format!(
                    "a role on a field takes no value: write `#[accum({})]`; the value is the field's",
                    role.key()
                )));
            }
            match &self.role {
                None => {
                    let path = &meta.path;
                    self.role = Some((role, quote::quote!(#path)));
                }
                // `accum::plan::duplicate`: one field, one role; the second one is the mistake.
                Some((first, _)) => cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "this field already plays `{}`; a field plays one role, remove `{}`",
                        first.key(),
                        role.key()
                    ),
                ),
            }
            return Ok(());
        }
        if meta.path.is_ident("nested") {
            if self.nested.is_some() {
                cx.error_spanned_by(&meta.path, "`nested` is given twice; remove one");
            }
            let path = &meta.path;
            self.nested = Some(quote::quote!(#path));
            return Ok(());
        }
        if meta.path.is_ident("skip") {
            if self.skip.is_some() {
                cx.error_spanned_by(&meta.path, "`skip` is given twice; remove one");
            }
            let path = &meta.path;
            self.skip = Some(quote::quote!(#path));
            return Ok(());
        }
        if meta.path.is_ident("unit") {
            let lit = match meta.value()?.parse::<syn::Lit>()? {
                syn::Lit::Str(lit) => lit,
                other => {
                    cx.error_spanned_by(
                        other,
                        "`unit` takes a string: `unit = \"update\"`, \"microbatch\", \"example\" or \"token\"",
                    );
                    return Ok(());
                }
            };
            match Unit::from_name(&lit.value()) {
                Some(unit) => self.unit = Some((unit, lit)),
                None => cx.error_spanned_by(
                    &lit,
                    format!(
                        "`{}` is not a unit; use \"update\", \"microbatch\", \"example\" or \"token\"",
                        lit.value()
                    ),
                ),
            }
            return Ok(());
        }
        if let Some(span_use) = SpanUse::from_path(&meta.path) {
            if meta.input.peek(syn::Token![=]) {
                return Err(meta.error(format!(
                    "`{}` takes no value: write `#[accum({})]` on the length field",
                    span_use.key(),
                    span_use.key()
                )));
            }
            match &self.span_use {
                None => {
                    let path = &meta.path;
                    self.span_use = Some((span_use, quote::quote!(#path)));
                }
                Some((first, _)) => cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "this length is already marked `{}`; a field has one use, remove `{}`",
                        first.key(),
                        span_use.key()
                    ),
                ),
            }
            return Ok(());
        }
        if let Some(ramp) = Ramp::from_path(&meta.path) {
            if meta.input.peek(syn::Token![=]) {
                return Err(meta.error(format!(
                    "`{}` takes no value: write `#[accum({})]` on the field that holds it",
                    ramp.key(),
                    ramp.key()
                )));
            }
            match &self.ramp {
                None => {
                    let path = &meta.path;
                    self.ramp = Some((ramp, quote::quote!(#path)));
                }
                Some((first, _)) => cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "this field already holds `{}`; a field holds one ramp-up, remove `{}`",
                        first.key(),
                        ramp.key()
                    ),
                ),
            }
            return Ok(());
        }
        if meta.path.is_ident("crate") || meta.path.is_ident("variable_length") {
            return Err(meta.error(format!(
                "`{}` belongs on the struct, not on a field",
                path_text(&meta.path)
            )));
        }
        let written = path_text(&meta.path);
        let hint = Role::ALL
            .iter()
            .map(|role| role.key())
            .chain([
                "nested", "unit", "warmup", "total", "every", "stages", "ramp", "skip",
            ])
            .find(|key| close(key, &written))
            .map(|key| format!("did you mean `{key}`? "))
            .unwrap_or_default();
        Err(meta.error(format!(
            "unknown `accum` key `{written}`; {hint}expected {FIELD_KEYS}"
        )))
    }
}

/// Whether `a` and `b` differ by at most two edits (a typo).
fn close(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous.last().is_some_and(|&d| d <= 2)
}

fn path_text(path: &syn::Path) -> String {
    quote::quote!(#path).to_string().replace(' ', "")
}

/// The `crate = "..."` override, read without reporting errors (for the
/// fallback impl, which is emitted when parsing already failed).
pub(crate) fn crate_override(input: &syn::DeriveInput) -> Option<TokenStream> {
    let mut krate = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("accum")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                krate = lit
                    .parse::<syn::Path>()
                    .ok()
                    .map(|path| quote::quote!(#path));
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    krate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_are_close_and_other_keys_are_not() {
        assert!(close("accumulation", "accumulaton"));
        assert!(close("micro_batch", "microbatch"));
        assert!(!close("replicas", "warmup"));
        assert!(!close("seq_len", "nested_section"));
    }
}
