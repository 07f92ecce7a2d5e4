//! The hostile strings every output channel is tested with, in one place:
//! the escapers' unit tests (`crate::escape`) and the end-to-end tests of
//! the binary (`tests/cli/channels.rs`) read this same list, so a string
//! added here is tried on every channel and every command. The readers
//! below read a channel's output back as its consumer would.

/// Every hostile string: markup of each channel, formula prefixes,
/// workflow commands, terminal escape sequences, controls, bidirectional
/// controls, separators, very long strings and plain text that must come
/// through.
pub(crate) fn hostile_strings() -> Vec<String> {
    let mut all: Vec<String> = [
        // Markdown code spans: backtick runs anywhere, spaces at the ends.
        "a`b",
        "`",
        "``",
        "```",
        "``x``",
        "a ` b `` c ``` d",
        "`leading",
        "trailing`",
        " spaced ",
        "  ",
        "` `",
        "x`](javascript:alert(1))",
        // HTML, SVG and XML.
        "</script><script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "]]>",
        "<![CDATA[x]]>",
        "<!-- c -->",
        "<svg onload=alert(1)>",
        "\"quoted\" attr=\"x\"",
        "it's 'single'",
        "a & b &amp; &#60; &lt;",
        "<title>t</title>",
        // Markdown text: tables, emphasis, links, images, HTML, blocks.
        "a|b|c",
        "*bold* _em_ **strong** ~~struck~~",
        "[link](http://evil.example) ![img](x.png)",
        "[ref]: http://evil.example",
        "*_[]()!",
        "# heading",
        "> quote",
        "1. list",
        "2) list",
        "- item",
        "+ item",
        "=====",
        "<http://evil.example>",
        "https://evil.example/x",
        "www.evil.example",
        "user@evil.example",
        "@org/team",
        "\\`escaped\\`",
        "\\",
        "{{template}} ${var} $(touch pwned)",
        // CSV: formula prefixes (OWASP), their full-width forms, quotes.
        "=cmd|' /C calc'!A0",
        "=1+1",
        "+1+1",
        "-2+3",
        "@SUM(1,2)",
        "\t=1+1",
        "\r=1+1",
        " =1+1",
        "＝1+1",
        "a,b",
        "a\"b",
        "-",
        // Workflow commands and their escapes.
        "\n::error::x",
        "x\r\n::warning file=a::y",
        "%0A::error::x",
        "%25%0D%0A",
        "a:b,c",
        "::add-mask::secret",
        "::stop-commands::token",
        // Terminal sequences: colours, hyperlinks, reset, title, clear,
        // cursor moves, device control, 8-bit CSI.
        "\u{1b}[31mred\u{1b}[0m",
        "\u{1b}]8;;http://evil.example\u{1b}\\link\u{1b}]8;;\u{1b}\\",
        "\u{1b}c",
        "\u{1b}]0;title\u{7}",
        "\u{1b}[2J\u{1b}[H",
        "\u{1b}[1A\u{1b}[2K",
        "\u{1b}P+q\u{1b}\\",
        "\u{9b}31m",
        "\u{1b}",
        // Other controls.
        "\u{7}bell",
        "nul\0byte",
        "back\u{8}\u{8}space",
        "del\u{7f}",
        "next\u{85}line",
        "cr\ronly",
        "tab\there",
        "line\nbreak",
        // Bidirectional controls and separators.
        "\u{202e}gnp.exe",
        "a\u{202a}b\u{202b}c\u{202c}d\u{202d}e",
        "\u{2066}x\u{2067}y\u{2068}z\u{2069}",
        "\u{200e}\u{200f}\u{61c}",
        "line\u{2028}separator",
        "para\u{2029}separator",
        "\u{feff}bom",
        // Text that must come through as it is.
        "\u{fffd}\u{fffd} replaced",
        "café 日本語 👩‍💻",
        "",
        "plain",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    // Very long strings.
    all.push("x".repeat(20_000));
    all.push("`".repeat(1_000));
    all.push("\u{1b}[31m".repeat(1_000));
    all.push(format!("{}\n::error::late", "a".repeat(10_000)));
    all
}

/// The content of the code span that opens `text`, as CommonMark reads
/// it, and what follows the span; `None` when no span opens or closes.
pub(crate) fn read_code_span(text: &str) -> Option<(String, &str)> {
    let open = text.len() - text.trim_start_matches('`').len();
    if open == 0 {
        return None;
    }
    let body = &text[open..];
    // The first run of exactly `open` backticks closes the span.
    let mut at = 0;
    while at < body.len() {
        let from = at + body[at..].find('`')?;
        let run = body[from..].len() - body[from..].trim_start_matches('`').len();
        if run == open {
            let content = &body[..from];
            let content = if content.len() >= 2
                && content.starts_with(' ')
                && content.ends_with(' ')
                && !content.bytes().all(|b| b == b' ')
            {
                &content[1..content.len() - 1]
            } else {
                content
            };
            return Some((content.to_owned(), &body[from + run..]));
        }
        at = from + run;
    }
    None
}

/// The fields of one CSV record (RFC 4180); `None` when it is not one.
pub(crate) fn read_csv_record(text: &str) -> Option<Vec<String>> {
    let mut fields = Vec::new();
    let mut rest = text;
    loop {
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut field = String::new();
            let mut chars = quoted.char_indices();
            let end = loop {
                let (i, c) = chars.next()?;
                if c == '"' {
                    if quoted[i + 1..].starts_with('"') {
                        field.push('"');
                        chars.next();
                    } else {
                        break i + 1;
                    }
                } else {
                    field.push(c);
                }
            };
            fields.push(field);
            rest = &quoted[end..];
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            let field = &rest[..end];
            if field.contains(['"', '\n', '\r']) {
                return None;
            }
            fields.push(field.to_owned());
            rest = &rest[end..];
        }
        match rest.strip_prefix(',') {
            Some(more) => rest = more,
            None if rest.is_empty() => return Some(fields),
            None => return None,
        }
    }
}
