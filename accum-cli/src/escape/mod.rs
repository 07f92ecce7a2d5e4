//! One escaper per output channel. Every string that comes from an input
//! (a config's keys, names and notes, a report and its file name, an
//! engine file, a line quoted from any of them) is written through the
//! escaper of the channel it lands in, and of no other:
//!
//! | channel | function | what it guarantees |
//! |---|---|---|
//! | terminal (every stdout and stderr write) | [`terminal`] | no hidden character but `\n` and `\t` |
//! | terminal, accum's own colours | [`styled_terminal`] | [`terminal`], keeping `ESC [ … m` |
//! | one physical line (`--format short`, names in messages) | [`line`] | no hidden character at all |
//! | HTML text and attribute values | [`html`] | no markup, no hidden character |
//! | SVG text drawn by plotters | [`svg`] | no hidden character (XML forbids them; plotters escapes markup) |
//! | Markdown text (table cells, headings, quotes) | [`markdown`] | no markup, link, HTML or line break |
//! | Markdown code span | [`markdown_code`] | one span, whatever backticks the text holds |
//! | a link or URI reference | [`url_path`] | one reference, percent-encoded |
//! | CSV field | [`csv_field`] | one RFC 4180 field, no formula |
//! | GitHub workflow command | [`github_data`], [`github_property`] | one command, its properties intact |
//! | JSON and SARIF | [`json`] | serde's escapes, and no hidden character raw |
//! | TOML | [`toml`] | the same values, and no hidden character raw but line breaks and tabs |
//!
//! A *hidden* character ([`is_hidden`]) changes what a reader sees without
//! being seen: the C0 and C1 controls and DEL (`ESC` starts every terminal
//! escape sequence; `U+009B` is a one-character `ESC [`), the bidirectional
//! controls that reorder text (the "Trojan Source" characters U+202A–U+202E,
//! U+2066–U+2069, and the marks U+061C, U+200E, U+200F), the line and
//! paragraph separators U+2028 and U+2029 (line breaks to some readers and
//! to JavaScript), and U+FEFF. Every channel shows them as Rust writes them,
//! `\u{1b}`, so a reader sees that they were there.

use std::borrow::Cow;
use std::fmt::Write as _;

use accum_core::shown::shown_where;
pub(crate) use accum_core::shown::{is_hidden, line, push_shown};

/// A hidden character that text of several lines may not hold raw: any
/// but the line break and the tab, which lay such text out.
fn hidden_in_text(c: char) -> bool {
    is_hidden(c) && c != '\n' && c != '\t'
}

/// Text for a terminal, or for whatever reads stdout and stderr: every
/// hidden character but line breaks and tabs shown as `\u{…}`. Every write
/// of the CLI to stdout and stderr goes through it (`crate::output`), to a
/// terminal or not: a log viewer, `less -R` or a CI page interprets the
/// sequences as a terminal does.
pub(crate) fn terminal(text: &str) -> Cow<'_, str> {
    shown_where(text, hidden_in_text)
}

/// [`terminal`] for text that accum coloured itself, from input escaped
/// before the colours were added (`crate::diagnostic::render_text`): the
/// colour sequences `ESC [ digits;… m` stay, every other hidden character
/// is shown.
pub(crate) fn styled_terminal(text: &str) -> Cow<'_, str> {
    let show = hidden_in_text;
    if !text.chars().any(show) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(sgr) = colour_sequence(rest) {
            out.push_str(sgr);
            rest = &rest[sgr.len()..];
            continue;
        }
        if show(c) {
            push_shown(&mut out, c);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// `ESC [ digits;… m` at the start of `text`: a colour, nothing else.
fn colour_sequence(text: &str) -> Option<&str> {
    let body = text.strip_prefix("\u{1b}[")?;
    let end = body.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
    (body[end..].starts_with('m')).then(|| &text[..2 + end + 1])
}

/// HTML element content and attribute values (quoted with `"` or `'`):
/// `& < > " '` as references, hidden characters but `\n` and `\t` shown.
pub(crate) fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if is_hidden(c) => push_shown(&mut out, c),
            _ => out.push(c),
        }
    }
    out
}

/// Prose for HTML element content: [`html`], with each pair of backticks
/// around a span made a `<code>` element, as the same text renders in
/// Markdown. A backtick without a partner stays a backtick.
pub(crate) fn html_prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else {
            break;
        };
        let code = &rest[open + 1..open + 1 + len];
        out.push_str(&html(&rest[..open]));
        if code.is_empty() {
            out.push_str("``");
        } else {
            out.push_str("<code>");
            out.push_str(&html(code));
            out.push_str("</code>");
        }
        rest = &rest[open + 2 + len..];
    }
    out.push_str(&html(rest));
    out
}

/// Text of an SVG drawing made by plotters (titles, legends, labels), which
/// writes `& < > " '` as references itself: every hidden character shown,
/// since XML 1.0 allows no control character but `\t \n \r`, not even as a
/// reference, and an SVG text element is one line.
pub(crate) fn svg(text: &str) -> Cow<'_, str> {
    line(text)
}

/// Markdown text, for a heading, a quote, a list item or a table cell: the
/// text renders as written, with no markup, link, image, HTML or line
/// break of its own.
///
/// - `&`, `<`, `>` as HTML references: no raw HTML, no `<…>` autolink;
/// - a backslash before every character that opens inline markup in
///   CommonMark or GitHub's extensions (backslash, backtick, `*`, `_`,
///   `[`, `]`, `|`, `~`, `@`: emphasis, code, links and images, tables,
///   strikethrough, mentions and e-mail autolinks), before `:` in `scheme://` and before the `.` of `www.`,
///   which GitHub links bare;
/// - a backslash before a first character that would open a block (`#`,
///   a list's `-`, `+` or `1.`, a `---` or `===` line);
/// - line breaks as spaces, other hidden characters shown.
pub(crate) fn markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    // A block opens at the text's first character, the only one at a
    // line's start once line breaks are spaces: `leading` holds while only
    // spaces came, `number` while only spaces and then digits did.
    let mut leading = true;
    let mut number = Some(0_usize);
    for (i, c) in text.char_indices() {
        let rest = &text[i + c.len_utf8()..];
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' if rest.starts_with('\n') => {}
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '@' => {
                out.push('\\');
                out.push(c);
            }
            '#' if leading => out.push_str("\\#"),
            '+' | '-' | '=' if leading && opens_block(c, rest) => {
                out.push('\\');
                out.push(c);
            }
            ':' if rest.starts_with("//") => out.push_str("\\:"),
            '.' if text.as_bytes()[..i].ends_with(b"www")
                || text.as_bytes()[..i].ends_with(b"WWW") =>
            {
                out.push_str("\\.");
            }
            '.' | ')'
                if number.is_some_and(|n| (1..=9).contains(&n))
                    && (rest.is_empty() || rest.starts_with(' ')) =>
            {
                out.push('\\');
                out.push(c);
            }
            c if is_hidden(c) => push_shown(&mut out, c),
            _ => out.push(c),
        }
        // A line break is a space here.
        let blank = matches!(c, ' ' | '\n' | '\r');
        number = match (number, c) {
            (Some(0), _) if blank => Some(0),
            (Some(n), '0'..='9') => Some(n + 1),
            _ => None,
        };
        leading = leading && blank;
    }
    out
}

/// Whether `c` at a line's start, before `rest`, opens a block: a list
/// item (`-` or `+` then a space or nothing), a thematic break (`---`) or a
/// heading's underline (`===`).
fn opens_block(c: char, rest: &str) -> bool {
    let list = c != '=' && (rest.is_empty() || rest.starts_with([' ', '\t', '\n', '\r']));
    list || rest.chars().all(|x| x == c || x == ' ')
}

/// `text` as one Markdown code span, as CommonMark reads code spans: fenced
/// by a run of backticks one longer than the longest run in the text (a
/// span ends only at a run of its own length), with a space inside each
/// fence when the text starts or ends with a backtick, or starts and ends
/// with a space (one space is taken off each side). Line breaks become
/// spaces (as CommonMark reads them in a span), other hidden characters
/// are shown; inside a span nothing else is markup.
pub(crate) fn markdown_code(text: &str) -> String {
    let mut body = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\r' => body.push(' '),
            c if is_hidden(c) => push_shown(&mut body, c),
            _ => body.push(c),
        }
    }
    if body.is_empty() {
        return "` `".to_owned();
    }
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let all_spaces = body.bytes().all(|b| b == b' ');
    let pad = body.starts_with('`')
        || body.ends_with('`')
        || (!all_spaces && body.starts_with(' ') && body.ends_with(' '));
    let pad = if pad { " " } else { "" };
    format!("{fence}{pad}{body}{pad}{fence}")
}

/// A relative path as a URI reference (a Markdown link's destination, a
/// SARIF `uri`): `/` separators, and every byte outside RFC 3986's
/// unreserved characters and `/` percent-encoded, so that `my configs/a
/// (1).svg` stays one reference and no character ends the link.
pub(crate) fn url_path(name: &str) -> String {
    let mut out = String::new();
    for byte in name.replace('\\', "/").bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// One CSV field (RFC 4180) that no spreadsheet runs as a formula.
///
/// A field that starts with `=`, `+`, `-`, `@`, a tab or a carriage return
/// (also after leading spaces, and their full-width forms `＝ ＋ － ＠`) is
/// prefixed with `'`, as OWASP's "CSV Injection" page recommends, unless
/// the whole field is a plain number (`-0.5`, `1e-4`), which a spreadsheet
/// reads as that number. Hidden characters are shown (so no field holds a
/// line break), and a field with `,`, `"` or a leading or trailing
/// space is quoted, its `"` doubled.
pub(crate) fn csv_field(text: &str) -> Cow<'_, str> {
    let shown = line(text);
    let first = shown.trim_start_matches(' ').chars().next();
    let formula = matches!(
        first,
        Some('=' | '+' | '-' | '@' | '\t' | '\r' | '＝' | '＋' | '－' | '＠')
    ) && !is_plain_number(&shown);
    let quote =
        formula || shown.contains([',', '"']) || shown.starts_with(' ') || shown.ends_with(' ');
    if !quote {
        return shown;
    }
    let mut out = String::with_capacity(shown.len() + 4);
    out.push('"');
    if formula {
        out.push('\'');
    }
    out.push_str(&shown.replace('"', "\"\""));
    out.push('"');
    Cow::Owned(out)
}

/// Whether `text` is a decimal number as Rust and spreadsheets write one:
/// an optional sign, digits with at most one `.`, an optional exponent.
fn is_plain_number(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e.strip_prefix(['-', '+']).unwrap_or(e))),
        None => (unsigned, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((whole, fraction)) => {
            (digits(whole) || whole.is_empty())
                && (digits(fraction) || fraction.is_empty())
                && !(whole.is_empty() && fraction.is_empty())
        }
        None => digits(mantissa),
    };
    mantissa_ok && exponent.is_none_or(digits)
}

/// A GitHub Actions workflow command's message: `%`, CR and LF as `%25`,
/// `%0D` and `%0A`, which the runner turns back into them, so that the
/// message cannot end its line and start a command of its own (the
/// toolkit's `escapeData`, actions/toolkit packages/core/src/command.ts);
/// other hidden characters shown.
pub(crate) fn github_data(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c if is_hidden(c) => push_shown(&mut out, c),
            _ => out.push(c),
        }
    }
    out
}

/// A workflow command's property value (`file=…`, `title=…`): also `:` and
/// `,`, which end a property (the toolkit's `escapeProperty`, the same
/// file).
pub(crate) fn github_property(text: &str) -> String {
    github_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// JSON text made by serde_json, with every hidden character that serde
/// leaves raw (C1 controls, bidirectional controls, U+2028, U+2029,
/// U+FEFF; it escapes C0 and nothing else) written as `\uXXXX`. Outside
/// strings JSON is ASCII, so each one is inside a string, where `\uXXXX`
/// is the same character: the document's values do not change.
pub(crate) fn json(text: String) -> String {
    if !text.chars().any(is_hidden_raw_in_json) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_hidden_raw_in_json(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// A hidden character that serde_json writes raw: not C0 (escaped inside
/// strings, and `\n` the pretty printer's own).
fn is_hidden_raw_in_json(c: char) -> bool {
    is_hidden(c) && u32::from(c) >= 0x7f
}

/// TOML text made by the `toml` crate, with every hidden character that it
/// writes raw (it escapes C0 and DEL in basic strings, nothing else) made
/// visible without changing a value: `\uXXXX` inside a basic string,
/// where it is the same character; a literal string (`'…'`, which has no
/// escapes) that holds one is rewritten as the basic string of the same
/// value; in a comment it is shown as `\u{…}`. Line breaks and tabs
/// between values stay.
pub(crate) fn toml(text: String) -> String {
    if !text.chars().any(hidden_in_text) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text.as_str();
    while let Some(c) = rest.chars().next() {
        let token = match c {
            '#' => {
                let end = rest.find('\n').unwrap_or(rest.len());
                out.push_str(&terminal(&rest[..end]));
                end
            }
            '"' => {
                let delimiter = if rest.starts_with("\"\"\"") {
                    "\"\"\""
                } else {
                    "\""
                };
                let end = basic_string_end(rest, delimiter);
                for c in rest[..end].chars() {
                    if hidden_in_text(c) {
                        let _ = write!(out, "\\u{:04X}", u32::from(c));
                    } else {
                        out.push(c);
                    }
                }
                end
            }
            '\'' => {
                let delimiter = if rest.starts_with("\'\'\'") {
                    "\'\'\'"
                } else {
                    "\'"
                };
                let body_start = delimiter.len();
                let end = rest[body_start..]
                    .find(delimiter)
                    .map_or(rest.len(), |at| body_start + at + delimiter.len());
                let token = &rest[..end];
                if token.chars().any(hidden_in_text) {
                    let body = token
                        .strip_prefix(delimiter)
                        .and_then(|t| t.strip_suffix(delimiter))
                        .unwrap_or(&token[body_start..]);
                    // A multi-line literal drops a line break right after
                    // its opening delimiter (TOML 1.0, "String").
                    let body = if delimiter.len() == 3 {
                        body.strip_prefix("\r\n")
                            .or_else(|| body.strip_prefix('\n'))
                            .unwrap_or(body)
                    } else {
                        body
                    };
                    out.push('"');
                    for c in body.chars() {
                        match c {
                            '\\' => out.push_str("\\\\"),
                            '"' => out.push_str("\\\""),
                            '\n' => out.push_str("\\n"),
                            '\r' => out.push_str("\\r"),
                            '\t' => out.push_str("\\t"),
                            c if is_hidden(c) => {
                                let _ = write!(out, "\\u{:04X}", u32::from(c));
                            }
                            c => out.push(c),
                        }
                    }
                    out.push('"');
                } else {
                    out.push_str(token);
                }
                end
            }
            c if hidden_in_text(c) => {
                // Nothing the `toml` crate writes puts one here; shown all the same.
                push_shown(&mut out, c);
                c.len_utf8()
            }
            c => {
                out.push(c);
                c.len_utf8()
            }
        };
        rest = &rest[token..];
    }
    out
}

/// The length of the basic string (`"…"` or `"""…"""`) at the start of
/// `text`, closing delimiter included; escapes (`\\`, `\"`) are skipped.
fn basic_string_end(text: &str, delimiter: &str) -> usize {
    let mut at = delimiter.len();
    while at < text.len() {
        let rest = &text[at..];
        if let Some(escaped) = rest.strip_prefix('\\') {
            at += 1 + escaped.chars().next().map_or(0, char::len_utf8);
        } else if rest.starts_with(delimiter) {
            // A multi-line string may end with up to two quotes of its own
            // before the delimiter.
            let quotes = rest.chars().take_while(|&c| c == '"').count();
            return at + quotes.max(delimiter.len()).min(delimiter.len() + 2);
        } else {
            at += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    text.len()
}

#[cfg(test)]
pub(crate) mod hostile;
#[cfg(test)]
mod tests;
