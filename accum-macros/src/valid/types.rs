//! Names of types the rules recognise by their last path segment. The
//! rules that judge a field's type by name (is it a section, a role, a
//! ramp-up?) build their lists from these groups, so a type is described
//! once.

/// The integer types, signed or not, whose name says nothing about a unit.
pub(super) const INTEGERS: &[&str] = &[
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
];

/// Floating-point types: a count of steps in one is still a count.
pub(super) const FLOATS: &[&str] = &["f32", "f64"];

/// Plain values that are neither numbers nor containers.
pub(super) const PLAIN: &[&str] = &["bool", "char", "str", "String"];

/// The length types: a `Span` and the typed counts.
pub(super) const LENGTHS: &[&str] = &[
    "Span",
    "Updates",
    "Microbatches",
    "Examples",
    "Tokens",
    "Count",
];

/// The standard collections other than `Vec`.
pub(super) const COLLECTIONS: &[&str] = &["VecDeque", "HashMap", "BTreeMap", "HashSet", "BTreeSet"];

/// Whether `ident` is one of the names in `groups`.
pub(super) fn named_in(ident: &syn::Ident, groups: &[&[&str]]) -> bool {
    groups
        .iter()
        .flat_map(|group| group.iter())
        .any(|name| ident == name)
}
