//! Every escaper on every string of the shared hostile list
//! ([`super::hostile`]), each checked against its channel's invariant by
//! reading the output back as the channel's reader would.

use super::hostile::{hostile_strings, read_code_span, read_csv_record};
use super::*;

/// The text a reader should see: hidden characters shown as `\u{…}`,
/// except those in `keep`, and line breaks (a CR LF pair once) replaced by
/// `newline` when given.
fn expected(text: &str, keep: &[char], newline: Option<&str>) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, newline) {
            ('\r', Some(_)) if chars.peek() == Some(&'\n') => {}
            ('\n' | '\r', Some(nl)) => out.push_str(nl),
            (c, _) if is_hidden(c) && !keep.contains(&c) => push_shown(&mut out, c),
            (c, _) => out.push(c),
        }
    }
    out
}

#[test]
fn hidden_characters_are_the_controls_bidi_marks_and_separators() {
    for c in [
        '\0', '\u{1b}', '\u{7f}', '\u{85}', '\u{9b}', '\u{202e}', '\u{2066}',
    ] {
        assert!(is_hidden(c), "{c:?}");
    }
    for c in ['\u{2028}', '\u{2029}', '\u{200f}', '\u{61c}', '\u{feff}'] {
        assert!(is_hidden(c), "{c:?}");
    }
    for c in ['a', ' ', 'é', '日', '\u{fffd}', '\u{200d}', '→'] {
        assert!(!is_hidden(c), "{c:?}");
    }
}

#[test]
fn terminal_text_holds_no_hidden_character_but_line_breaks_and_tabs() {
    for s in hostile_strings() {
        let out = terminal(&s);
        assert!(
            !out.chars().any(|c| is_hidden(c) && c != '\n' && c != '\t'),
            "{s:?} → {out:?}"
        );
        assert_eq!(out, expected(&s, &['\n', '\t'], None), "{s:?}");
    }
    assert_eq!(terminal("run \u{1b}c reset\n"), "run \\u{1b}c reset\n");
    assert_eq!(terminal("a\u{7}b\u{9b}c\td"), "a\\u{7}b\\u{9b}c\td");
    // Colours from an input are shown too: only accum's own are kept, and
    // only by `styled_terminal`.
    assert_eq!(terminal("\u{1b}[31mx"), "\\u{1b}[31mx");
    assert_eq!(
        styled_terminal("\u{1b}[1;31merror\u{1b}[0m \u{1b}]8;;x\u{1b}\\ \u{9b}1m"),
        "\u{1b}[1;31merror\u{1b}[0m \\u{1b}]8;;x\\u{1b}\\ \\u{9b}1m"
    );
    assert_eq!(terminal("plain"), "plain");
}

#[test]
fn styled_terminal_text_keeps_only_colour_sequences() {
    for s in hostile_strings() {
        let out = styled_terminal(&s);
        // Every ESC left opens a colour sequence.
        let mut rest: &str = &out;
        while let Some(at) = rest.find('\u{1b}') {
            let sgr = colour_sequence(&rest[at..]).unwrap_or_else(|| panic!("{s:?} → {out:?}"));
            rest = &rest[at + sgr.len()..];
        }
        assert!(
            !out.chars()
                .any(|c| is_hidden(c) && !matches!(c, '\n' | '\t' | '\u{1b}')),
            "{s:?} → {out:?}"
        );
    }
}

#[test]
fn a_line_is_one_physical_line() {
    for s in hostile_strings() {
        let out = line(&s);
        assert!(!out.chars().any(is_hidden), "{s:?} → {out:?}");
        assert_eq!(out.lines().count(), usize::from(!out.is_empty()), "{s:?}");
        assert_eq!(out, expected(&s, &[], None), "{s:?}");
    }
    assert_eq!(line("a\n::error::x"), "a\\u{a}::error::x");
}

/// `text` read back from HTML: the five references decoded; `None` when
/// the text holds markup or a reference of another kind.
fn read_html(text: &str) -> Option<String> {
    if text.contains(['<', '>', '"', '\'']) {
        return None;
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let (reference, c) = [
            ("&amp;", '&'),
            ("&lt;", '<'),
            ("&gt;", '>'),
            ("&quot;", '"'),
            ("&#39;", '\''),
        ]
        .into_iter()
        .find(|(r, _)| rest.starts_with(r))?;
        out.push(c);
        rest = &rest[reference.len()..];
    }
    out.push_str(rest);
    Some(out)
}

#[test]
fn html_holds_no_markup_and_reads_back_as_the_text() {
    for s in hostile_strings() {
        let out = html(&s);
        assert!(
            !out.chars().any(|c| is_hidden(c) && c != '\n' && c != '\t'),
            "{s:?} → {out:?}"
        );
        assert_eq!(
            read_html(&out),
            Some(expected(&s, &['\n', '\t'], None)),
            "{s:?} → {out:?}"
        );
    }
    assert_eq!(
        html("<a href=\"x\">&'"),
        "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
    );
}

#[test]
fn svg_text_holds_no_character_xml_forbids() {
    for s in hostile_strings() {
        let out = svg(&s);
        assert!(!out.chars().any(is_hidden), "{s:?} → {out:?}");
    }
}

/// `text` read back from Markdown text: a backslash before ASCII
/// punctuation removed, the three references decoded; `None` when a
/// character that opens markup is left unescaped.
fn read_markdown(text: &str) -> Option<String> {
    if text.contains(['<', '>', '\n', '\r']) {
        return None;
    }
    let mut out = String::new();
    let mut chars = text.char_indices().peekable();
    let mut first = true;
    while let Some((i, c)) = chars.next() {
        let rest = &text[i + c.len_utf8()..];
        match c {
            '\\' => match chars.peek() {
                Some(&(_, next)) if next.is_ascii_punctuation() => {
                    out.push(next);
                    chars.next();
                }
                _ => out.push('\\'),
            },
            '`' | '*' | '_' | '[' | ']' | '|' | '~' | '@' => return None,
            '#' if first => return None,
            '+' | '-' | '=' if first && opens_block(c, rest) => return None,
            ':' if rest.starts_with("//") => return None,
            '.' if out.to_ascii_lowercase().ends_with("www") => return None,
            '&' => {
                let (reference, c) = [("&amp;", '&'), ("&lt;", '<'), ("&gt;", '>')]
                    .into_iter()
                    .find(|(r, _)| text[i..].starts_with(r))?;
                out.push(c);
                for _ in 1..reference.len() {
                    chars.next();
                }
            }
            c => out.push(c),
        }
        first = first && c == ' ';
    }
    Some(out)
}

#[test]
fn markdown_text_opens_no_markup_and_reads_back_as_the_text() {
    for s in hostile_strings() {
        let out = markdown(&s);
        assert!(!out.chars().any(is_hidden), "{s:?} → {out:?}");
        assert_eq!(
            read_markdown(&out),
            Some(expected(&s, &[], Some(" "))),
            "{s:?} → {out:?}"
        );
    }
    assert_eq!(markdown("a|b\n<i>*x*"), "a\\|b &lt;i&gt;\\*x\\*");
    assert_eq!(markdown("1. x"), "1\\. x");
    assert_eq!(markdown("1.5 and 16 = 4 × 4"), "1.5 and 16 = 4 × 4");
    assert_eq!(markdown("-100 and = 4"), "-100 and = 4");
    assert_eq!(markdown("- item"), "\\- item");
    assert_eq!(markdown("==="), "\\===");
    assert_eq!(markdown("see https://x"), "see https\\://x");
}

#[test]
fn a_code_span_holds_the_whole_text_whatever_its_backticks() {
    for s in hostile_strings() {
        let out = markdown_code(&s);
        assert!(!out.chars().any(is_hidden), "{s:?} → {out:?}");
        let (content, after) = read_code_span(&out).unwrap_or_else(|| panic!("{s:?} → {out:?}"));
        assert_eq!(after, "", "the span ends the text: {s:?} → {out:?}");
        let want = expected(&s, &[], Some(" "));
        let want = if want.is_empty() {
            " ".to_owned()
        } else {
            want
        };
        assert_eq!(content, want, "{s:?} → {out:?}");
    }
    assert_eq!(markdown_code("a`b"), "``a`b``");
    assert_eq!(markdown_code("`x"), "`` `x ``");
    assert_eq!(markdown_code("plain"), "`plain`");
}

#[test]
fn a_csv_field_is_one_field_and_never_a_formula() {
    for s in hostile_strings() {
        let out = csv_field(&s);
        let record = format!("{out},end");
        let fields = read_csv_record(&record).unwrap_or_else(|| panic!("{s:?} → {out:?}"));
        assert_eq!(fields.len(), 2, "{s:?} → {out:?}");
        let value = &fields[0];
        let first = value.trim_start_matches(' ').chars().next();
        assert!(
            !matches!(
                first,
                Some('=' | '+' | '-' | '@' | '\t' | '\r' | '＝' | '＋' | '－' | '＠')
            ) || is_plain_number(value),
            "{s:?} → {value:?}"
        );
        let shown = expected(&s, &[], None);
        assert!(
            *value == shown || *value == format!("'{shown}"),
            "{s:?} → {value:?}"
        );
    }
    assert_eq!(csv_field("=1+1"), "\"'=1+1\"");
    assert_eq!(csv_field("-0.5"), "-0.5");
    assert_eq!(csv_field("1e-4"), "1e-4");
    assert_eq!(csv_field("-2+3"), "\"'-2+3\"");
    assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
}

/// A workflow command's value read back as the runner unescapes it
/// (`%25`, `%0D`, `%0A`, `%3A`, `%2C`).
fn read_github(text: &str) -> String {
    text.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
}

#[test]
fn a_workflow_command_stays_one_command_with_its_properties() {
    for s in hostile_strings() {
        let data = github_data(&s);
        assert!(!data.chars().any(is_hidden), "{s:?} → {data:?}");
        assert_eq!(
            read_github(&data),
            expected(&s, &['\r', '\n'], None),
            "{s:?}"
        );
        let property = github_property(&s);
        assert!(
            !property.contains([':', ',', '\r', '\n']),
            "{s:?} → {property:?}"
        );
        assert!(!property.chars().any(is_hidden), "{s:?} → {property:?}");
        assert_eq!(
            read_github(&property),
            expected(&s, &['\r', '\n'], None),
            "{s:?}"
        );
    }
}

#[test]
fn json_holds_no_raw_hidden_character_and_the_same_values() {
    for s in hostile_strings() {
        let text = serde_json::to_string_pretty(&serde_json::json!({ "name": s, "list": [s] }))
            .expect("serializes");
        let out = json(text);
        assert!(
            !out.chars().any(|c| is_hidden(c) && c != '\n'),
            "{s:?} → {out:?}"
        );
        let back: serde_json::Value = serde_json::from_str(&out).expect("still JSON");
        assert_eq!(back["name"], s.as_str());
        assert_eq!(back["list"][0], s.as_str());
    }
}

#[test]
fn a_url_path_is_one_reference() {
    for s in hostile_strings() {
        let out = url_path(&s);
        assert!(
            out.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~/%".contains(&b)),
            "{s:?} → {out:?}"
        );
    }
    assert_eq!(
        url_path("my configs/a (1).svg"),
        "my%20configs/a%20%281%29.svg"
    );
}

#[test]
fn toml_keeps_every_value_and_shows_no_hidden_character() {
    use std::collections::BTreeMap;
    // Each hostile string as a key and a value, at the top and in a table,
    // in whatever form the `toml` crate picks for it (bare, basic,
    // literal, multi-line).
    for s in hostile_strings() {
        let mut table = BTreeMap::new();
        table.insert(s.clone(), s.clone());
        table.insert("plain".to_owned(), format!("a{s}'b\\c\"d"));
        let mut doc = BTreeMap::new();
        doc.insert("run".to_owned(), table.clone());
        doc.insert(s.clone(), table.clone());
        let text = toml::to_string(&doc).expect("serializes");
        let escaped = toml(text);
        assert!(
            !escaped
                .chars()
                .any(|c| is_hidden(c) && c != '\n' && c != '\t'),
            "{s:?}: {escaped}"
        );
        let back: BTreeMap<String, BTreeMap<String, String>> = toml::from_str(&escaped)
            .unwrap_or_else(|e| panic!("{s:?} does not read back: {e}\n{escaped}"));
        assert_eq!(back, doc, "{s:?}");
    }
}

#[test]
fn toml_shows_hidden_characters_in_comments_and_keeps_clean_text() {
    let clean = "[run]\nname = 'x'\n".to_owned();
    assert_eq!(toml(clean.clone()), clean);
    assert_eq!(
        toml("# a \u{9b}31m note\nkey = 1\n".to_owned()),
        "# a \\u{9b}31m note\nkey = 1\n"
    );
}

#[test]
fn prose_in_html_makes_code_of_backtick_pairs_only() {
    assert_eq!(
        html_prose("run `accum <b>` & see `x`"),
        "run <code>accum &lt;b&gt;</code> &amp; see <code>x</code>"
    );
    // An odd backtick stays, and nothing inside a pair escapes the element.
    assert_eq!(html_prose("a ` b"), "a ` b");
    assert_eq!(html_prose("`a` `b"), "<code>a</code> `b");
    assert_eq!(html_prose("``"), "``");
    assert_eq!(
        html_prose("`</code><script>`"),
        "<code>&lt;/code&gt;&lt;script&gt;</code>"
    );
}

#[test]
fn prose_in_html_holds_no_markup_but_code_and_reads_back_as_the_text() {
    for s in hostile_strings() {
        let out = html_prose(&s);
        // The only markup is the code element around a pair's inside.
        let inside = out.replace("<code>", "`").replace("</code>", "`");
        assert_eq!(
            read_html(&inside),
            Some(expected(&s, &['\n', '\t'], None)),
            "{s:?} → {out:?}"
        );
    }
}
