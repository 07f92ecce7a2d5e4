//! `pattern` and `patternProperties`: JSON Schema writes its regular
//! expressions in ECMA-262's dialect; they are read with `regex-lite`,
//! whose syntax is the same for what schemas use (classes, groups,
//! repetitions, anchors), once `\s` and `\S` are given ECMA-262's meaning
//! (Unicode spaces besides ASCII ones). What `regex-lite` cannot read
//! (look-around, back-references) is refused when the schema is read.

use regex_lite::{Regex, RegexBuilder};

/// ECMA-262's white space and line terminators (`\s`), as a class body.
const SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// Most bytes a compiled pattern may take: a schema's pattern is a few
/// dozen characters, and one from a hostile file stays bounded.
const SIZE_LIMIT: usize = 1 << 20;

/// Compiles an ECMA-262 pattern; the error says why it cannot be read.
pub(super) fn compile(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(&translate(pattern)?)
        .size_limit(SIZE_LIMIT)
        .build()
        .map_err(|err| {
            err.to_string()
                .lines()
                .last()
                .unwrap_or("")
                .trim()
                .to_owned()
        })
}

/// `\s` and `\S` spelled out; every other character and escape as written.
/// `regex-lite` has no class within a class, which `\S` inside `[…]`
/// would need: refused.
fn translate(pattern: &str) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('s') if in_class => out.push_str(SPACE),
                Some('s') => {
                    out.push('[');
                    out.push_str(SPACE);
                    out.push(']');
                }
                Some('S') if in_class => {
                    return Err("`\\S` inside a character class is not supported".to_owned());
                }
                Some('S') => {
                    out.push_str("[^");
                    out.push_str(SPACE);
                    out.push(']');
                }
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` or `^]` right after the opening is a literal in
                // neither dialect's way; copied as is.
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_are_ecma_spaces() {
        let span = compile(r"^\s*[0-9]+\s*(steps|tokens)\s*$").expect("compiles");
        assert!(span.is_match("12 steps"));
        assert!(span.is_match("12\u{a0}tokens"));
        assert!(!span.is_match("12 stepz"));
        let not_space = compile(r"^\S+$").expect("compiles");
        assert!(not_space.is_match("a_b"));
        assert!(compile(r"[\S]").is_err());
        assert!(!not_space.is_match("a\u{3000}b"));
        let class = compile(r"^[\sx]+$").expect("compiles");
        assert!(class.is_match("x\u{2003}x"));
    }

    #[test]
    fn unsearchable_patterns_are_refused_with_the_reason() {
        for pattern in [r"(?=a)b", r"(a)\1", "a{", "[z-a]"] {
            let err = compile(pattern).expect_err(pattern);
            assert!(!err.is_empty(), "{pattern}");
        }
        // Search is unanchored, as in ECMA-262.
        assert!(compile("b").expect("compiles").is_match("abc"));
    }
}
