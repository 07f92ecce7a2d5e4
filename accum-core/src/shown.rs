//! Text from an input, shown where a reader sees it: on one line, with
//! every *hidden* character ([`is_hidden`]) written as Rust writes it,
//! `\u{1b}`. A file name is such text: a name may hold a line break
//! followed by what reads as another line of output (a CI system's
//! `::error::` command), or a terminal escape sequence. Every message that
//! names a file names it through [`path`].
//!
//! The command line's output channels build on these (`accum_cli`'s
//! `escape` module).

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::path::Path;

/// Whether `c` is hidden: it changes what a reader sees without being
/// seen. The C0 and C1 controls and DEL (`ESC` starts every terminal escape
/// sequence; `U+009B` is a one-character `ESC [`), the bidirectional
/// controls that reorder text (the "Trojan Source" characters
/// U+202A–U+202E, U+2066–U+2069, and the marks U+061C, U+200E, U+200F), the
/// line and paragraph separators U+2028 and U+2029 (line breaks to some
/// readers and to JavaScript), and U+FEFF.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{FEFF}'
        )
}

/// Appends `c` as `\u{1b}`.
pub fn push_shown(out: &mut String, c: char) {
    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
}

/// `text` with every character for which `show` holds written as
/// `\u{…}`; borrowed when there is none.
pub fn shown_where(text: &str, show: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&show) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if show(c) {
            push_shown(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One physical line: every hidden character, line breaks and tabs
/// included, shown as `\u{…}`.
pub fn line(text: &str) -> Cow<'_, str> {
    shown_where(text, is_hidden)
}

/// A path as a message shows it (see [`path`]).
#[derive(Clone, Copy, Debug)]
pub struct ShownPath<'a>(&'a Path);

/// `path` for a message: as `Path::display` shows it, on one line, with
/// every hidden character written as `\u{…}`.
pub fn path(path: &Path) -> ShownPath<'_> {
    ShownPath(path)
}

impl fmt::Display for ShownPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&line(&self.0.display().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_shown_on_one_line_without_escape_sequences() {
        let name = Path::new("runs/a\n::error file=x::owned\u{1b}[2J.json");
        assert_eq!(
            path(name).to_string(),
            "runs/a\\u{a}::error file=x::owned\\u{1b}[2J.json"
        );
        assert_eq!(
            path(Path::new("runs/ok é.json")).to_string(),
            "runs/ok é.json"
        );
    }
}
