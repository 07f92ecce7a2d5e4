//! Whether accum colours what it prints, and text that carries its colours
//! as data.
//!
//! One choice holds for the whole process: `--color auto|always|never`
//! ([`choose`]). `always` and `never` win over the environment, as a flag
//! given for one run should (no-color.org: "per-instance command-line
//! arguments should override `NO_COLOR`"). Under `auto`, in this order:
//! a non-empty `NO_COLOR` turns colour off; a `CLICOLOR_FORCE` that is set,
//! non-empty and not `0` turns it on (bixense.com/clicolors); `CLICOLOR=0`
//! and `TERM=dumb` turn it off; otherwise the stream decides, coloured only
//! when it is a terminal. This is the order of anstream's `ColorChoice::Auto`
//! that clap colours its own help with (`anstream/src/auto.rs`, `choice`;
//! `anstyle-query/src/lib.rs`, `no_color` and `clicolor_force`), so accum's
//! messages and clap's agree.
//!
//! Coloured text is built as a [`Styled`]: pieces of text, some with a
//! [`Tone`]. Each piece is escaped ([`crate::escape::terminal`]) before its
//! colour is added, so a name from a config can never bring a sequence of
//! its own, and the plain text (for JSON, files and tests) is the same
//! pieces without colour.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::escape;

/// `--color`: when accum colours its output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub(crate) enum ColorChoice {
    /// Colour a terminal, unless `NO_COLOR` is set (or `CLICOLOR_FORCE`
    /// colours a pipe too).
    #[default]
    Auto,
    /// Always colour, a pipe or a file too.
    Always,
    /// Never colour.
    Never,
}

static CHOICE: AtomicU8 = AtomicU8::new(0);

/// Sets the process's choice (from `--color`).
pub(crate) fn choose(choice: ColorChoice) {
    let code = match choice {
        ColorChoice::Auto => 0,
        ColorChoice::Always => 1,
        ColorChoice::Never => 2,
    };
    CHOICE.store(code, Ordering::Relaxed);
}

/// The process's choice; `auto` until [`choose`] says otherwise.
pub(crate) fn chosen() -> ColorChoice {
    match CHOICE.load(Ordering::Relaxed) {
        1 => ColorChoice::Always,
        2 => ColorChoice::Never,
        _ => ColorChoice::Auto,
    }
}

/// The `--color` a command line asks for, read before clap parses it, so
/// that clap's own usage errors follow it too. The last one given wins, as
/// clap's does; a value clap will refuse is left to clap.
pub(crate) fn from_args<I, S>(args: I) -> Option<ColorChoice>
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut found = None;
    let mut next_is_value = false;
    for arg in args {
        let arg = arg.as_ref().to_string_lossy();
        let value = if next_is_value {
            next_is_value = false;
            Some(arg.as_ref())
        } else if arg == "--" {
            break;
        } else if arg == "--color" {
            next_is_value = true;
            None
        } else {
            arg.strip_prefix("--color=")
        };
        match value {
            Some("auto") => found = Some(ColorChoice::Auto),
            Some("always") => found = Some(ColorChoice::Always),
            Some("never") => found = Some(ColorChoice::Never),
            _ => {}
        }
    }
    found
}

/// What the environment says of colour (read once per decision).
#[derive(Clone, Copy, Debug, Default)]
struct Environment {
    no_color: bool,
    clicolor_force: bool,
    clicolor_off: bool,
    dumb: bool,
}

impl Environment {
    fn read() -> Environment {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        Environment {
            no_color: var("NO_COLOR").is_some(),
            clicolor_force: var("CLICOLOR_FORCE").is_some_and(|v| v != "0"),
            clicolor_off: var("CLICOLOR").is_some_and(|v| v == "0"),
            dumb: var("TERM").is_some_and(|v| v == "dumb"),
        }
    }
}

fn decide(choice: ColorChoice, env: Environment, is_terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if env.no_color => false,
        ColorChoice::Auto if env.clicolor_force => true,
        ColorChoice::Auto if env.clicolor_off || env.dumb => false,
        ColorChoice::Auto => is_terminal,
    }
}

/// Whether what accum prints on stdout is coloured.
pub(crate) fn stdout() -> bool {
    decide(
        chosen(),
        Environment::read(),
        std::io::stdout().is_terminal(),
    )
}

/// Whether what accum prints on stderr is coloured.
pub(crate) fn stderr() -> bool {
    decide(
        chosen(),
        Environment::read(),
        std::io::stderr().is_terminal(),
    )
}

/// What a piece of text says, which its colour shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tone {
    /// Passed, done: green.
    Pass,
    /// Failed: bold red.
    Fail,
    /// Worth a look, not a failure: yellow.
    Warn,
}

impl Tone {
    /// The SGR parameters of the tone (the 8 base colours, which every
    /// terminal palette remaps to stay readable).
    fn sgr(self) -> &'static str {
        match self {
            Tone::Pass => "32",
            Tone::Fail => "1;31",
            Tone::Warn => "33",
        }
    }
}

/// Text in pieces, some toned: rendered with colours or without.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Styled {
    pieces: Vec<(String, Option<Tone>)>,
}

impl Styled {
    /// Empty text.
    pub(crate) fn new() -> Styled {
        Styled::default()
    }

    /// Appends plain text.
    pub(crate) fn push(&mut self, text: impl Into<String>) -> &mut Styled {
        self.pieces.push((text.into(), None));
        self
    }

    /// Appends text in `tone`.
    pub(crate) fn toned(&mut self, text: impl Into<String>, tone: Tone) -> &mut Styled {
        self.pieces.push((text.into(), Some(tone)));
        self
    }

    /// Appends another styled text.
    pub(crate) fn append(&mut self, other: Styled) -> &mut Styled {
        self.pieces.extend(other.pieces);
        self
    }

    /// The text without colour, as it was pushed.
    #[cfg(test)]
    pub(crate) fn plain(&self) -> String {
        self.pieces.iter().map(|(text, _)| text.as_str()).collect()
    }

    /// The text for a terminal: every piece escaped, then, with `color`,
    /// the toned pieces wrapped in their colour and a reset. Print it with
    /// [`crate::output::print_styled`] or `eprint_styled`, which keep
    /// exactly these colour sequences.
    pub(crate) fn render(&self, color: bool) -> String {
        let mut out = String::new();
        for (text, tone) in &self.pieces {
            let shown = escape::terminal(text);
            match tone.filter(|_| color) {
                // A line break inside a toned piece ends the colour first,
                // so that a pager or a log that starts at that line shows
                // it uncoloured, not in a colour it cannot see begin.
                Some(tone) => {
                    for (i, line) in shown.split('\n').enumerate() {
                        if i > 0 {
                            out.push('\n');
                        }
                        if !line.is_empty() {
                            out.push_str(&format!("\u{1b}[{}m{line}\u{1b}[0m", tone.sgr()));
                        }
                    }
                }
                None => out.push_str(&shown),
            }
        }
        out
    }
}

impl From<String> for Styled {
    fn from(text: String) -> Styled {
        Styled {
            pieces: vec![(text, None)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(no_color: bool, force: bool, off: bool, dumb: bool) -> Environment {
        Environment {
            no_color,
            clicolor_force: force,
            clicolor_off: off,
            dumb,
        }
    }

    #[test]
    fn a_flag_wins_over_the_environment() {
        let all = env(true, true, true, true);
        assert!(decide(ColorChoice::Always, all, false));
        assert!(!decide(
            ColorChoice::Never,
            env(false, true, false, false),
            true
        ));
    }

    #[test]
    fn auto_follows_no_color_then_clicolor_force_then_the_stream() {
        let auto = ColorChoice::Auto;
        assert!(decide(auto, Environment::default(), true));
        assert!(!decide(auto, Environment::default(), false));
        // NO_COLOR before CLICOLOR_FORCE, as anstream decides.
        assert!(!decide(auto, env(true, true, false, false), true));
        assert!(decide(auto, env(false, true, false, false), false));
        assert!(!decide(auto, env(false, false, true, false), true));
        assert!(!decide(auto, env(false, false, false, true), true));
        assert!(decide(auto, env(false, true, false, true), false));
    }

    #[test]
    fn the_flag_is_read_from_the_arguments_before_clap() {
        let args = |a: &[&str]| from_args(a.iter().copied());
        assert_eq!(
            args(&["accum", "run", "--color", "never"]),
            Some(ColorChoice::Never)
        );
        assert_eq!(
            args(&["accum", "--color=always", "run"]),
            Some(ColorChoice::Always)
        );
        assert_eq!(
            args(&["accum", "--color=always", "--color", "auto"]),
            Some(ColorChoice::Auto)
        );
        assert_eq!(args(&["accum", "--color", "pink"]), None);
        assert_eq!(args(&["accum", "--", "--color=never"]), None);
        assert_eq!(args(&["accum", "run", "x.toml"]), None);
    }

    #[test]
    fn pieces_are_escaped_before_they_are_coloured() {
        let mut text = Styled::new();
        text.push("run \u{1b}[31mx\n")
            .toned("pass", Tone::Pass)
            .push(" done");
        let coloured = text.render(true);
        assert!(coloured.contains("\u{1b}[32mpass\u{1b}[0m"), "{coloured:?}");
        // The sequence from the input is shown, not sent.
        assert_eq!(coloured.matches('\u{1b}').count(), 2, "{coloured:?}");
        let plain = text.render(false);
        assert!(!plain.contains('\u{1b}'), "{plain:?}");
        assert!(plain.ends_with("pass done"), "{plain:?}");
        assert_eq!(text.plain(), "run \u{1b}[31mx\npass done");
    }

    #[test]
    fn a_toned_piece_of_several_lines_is_coloured_line_by_line() {
        let mut text = Styled::new();
        text.toned("one\ntwo\n", Tone::Warn);
        assert_eq!(
            text.render(true),
            "\u{1b}[33mone\u{1b}[0m\n\u{1b}[33mtwo\u{1b}[0m\n"
        );
    }
}
