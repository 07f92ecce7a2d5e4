//! `explain CODE`: the rule behind a diagnostic code, from the project's
//! rules (`docs/rules.md`), like `rustc --explain`. Every [`Code`] has its
//! entry; a code merged into another prints the entry of the code that
//! replaced it. A code may be written by any suffix at `::` boundaries
//! that names one code (`global-batch`, `plan::global-batch`); a suffix
//! that names several lists them, and a misspelt one gets a did-you-mean.

use accum_core::Code;

use crate::cli::ExplainArgs;
use crate::error::{CliError, Exit};
use crate::output::bin_name;
use crate::output::print_text;
use crate::rulebook;

pub(crate) fn run(args: &ExplainArgs) -> Result<Exit, CliError> {
    let Some(code) = &args.code else {
        let entries: Vec<rulebook::Entry> = Code::ALL.iter().map(|&c| rulebook::entry(c)).collect();
        let width = entries.iter().map(|e| e.code.len()).max().unwrap_or(0);
        let mut out = String::new();
        for entry in entries {
            let summary = entry
                .summary
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            out.push_str(&format!("{:width$}  {summary}\n", entry.code));
        }
        out.push_str(&format!(
            "\n`{} explain CODE` prints a code's entry.\n",
            bin_name()
        ));
        print_text(&out)?;
        return Ok(Exit::Ok);
    };
    match lookup(code) {
        Lookup::One(code) => {
            let entry = rulebook::entry(code);
            print_text(&format!("{}\n\n{}\n", entry.code, entry.text))?;
            Ok(Exit::Ok)
        }
        Lookup::Several(codes) => {
            let listed: Vec<String> = codes.iter().map(|c| format!("`{c}`")).collect();
            Err(CliError::usage(format!(
                "`{}` is the end of several codes: {}; `{} explain` lists every code",
                code.trim(),
                listed.join(", "),
                bin_name()
            )))
        }
        Lookup::None(near) => {
            let hint = match near.as_slice() {
                [] => String::new(),
                [one] => format!("did you mean `{one}`? "),
                several => format!(
                    "did you mean one of {}? ",
                    several
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            Err(CliError::usage(format!(
                "no rule has the code `{}`; {hint}`{} explain` lists every code",
                code.trim(),
                bin_name()
            )))
        }
    }
}

/// What a code as written names.
#[derive(Debug, PartialEq, Eq)]
enum Lookup {
    /// One code: the text is a code, a code merged into it, or a suffix
    /// of one of them at a `::` boundary that no other code ends with.
    One(Code),
    /// A suffix that several codes end with, in the order of
    /// [`Code::ALL`].
    Several(Vec<Code>),
    /// Nothing; the codes whose suffix is most like the text, for a
    /// did-you-mean (none when nothing is alike enough).
    None(Vec<Code>),
}

/// Every code written, merged codes included, with the code it names.
fn written() -> impl Iterator<Item = (&'static str, Code)> {
    Code::ALL
        .iter()
        .map(|&code| (code.as_str(), code))
        .chain(Code::RENAMED.iter().copied())
}

/// The suffixes of `code` at its `::` boundaries, the whole code first:
/// `accum::plan::global-batch`, `plan::global-batch`, `global-batch`.
fn suffixes(code: &str) -> impl Iterator<Item = &str> {
    std::iter::once(code).chain(
        code.match_indices("::")
            .map(|(at, sep)| &code[at + sep.len()..]),
    )
}

/// The codes that `text` names as a whole code or a suffix at `::`
/// boundaries (`global-batch`, `plan::global-batch`); a code merged into
/// another names the one that replaced it.
fn lookup(text: &str) -> Lookup {
    let text = text.trim();
    if let Some(code) = rulebook::parse(text) {
        return Lookup::One(code);
    }
    let mut named: Vec<Code> = Vec::new();
    for (written, code) in written() {
        if suffixes(written).any(|suffix| suffix == text) && !named.contains(&code) {
            named.push(code);
        }
    }
    named.sort();
    match named.as_slice() {
        [one] => Lookup::One(*one),
        [_, ..] => Lookup::Several(named),
        [] => {
            let all: Vec<(&str, Code)> = written()
                .flat_map(|(written, code)| suffixes(written).map(move |s| (s, code)))
                .filter(|(suffix, _)| *suffix != "accum")
                .collect();
            let near = crate::suggest::did_you_mean(text, all.iter().map(|(s, _)| *s));
            let mut codes: Vec<Code> = all
                .iter()
                .filter(|(suffix, _)| Some(*suffix) == near)
                .map(|&(_, code)| code)
                .collect();
            codes.sort();
            codes.dedup();
            Lookup::None(codes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unique_suffix_names_its_code() {
        for text in [
            "global-batch",
            "plan::global-batch",
            "accum::plan::global-batch",
            " global-batch ",
            "not-divisible",
        ] {
            assert_eq!(lookup(text), Lookup::One(Code::GlobalBatch), "{text}");
        }
        // Every code is named by its last segment when no other code ends
        // with it, and by the whole code always.
        for &code in Code::ALL {
            let last = code.as_str().rsplit("::").next().expect("a segment");
            let sharing = Code::ALL
                .iter()
                .filter(|c| c.as_str().rsplit("::").next() == Some(last))
                .count();
            if sharing == 1 && last != "accum" {
                assert_eq!(lookup(last), Lookup::One(code), "{last}");
            }
            assert_eq!(lookup(code.as_str()), Lookup::One(code));
        }
    }

    #[test]
    fn a_suffix_of_several_codes_lists_them() {
        let Lookup::Several(codes) = lookup("world-size") else {
            panic!("world-size ends two codes");
        };
        assert!(codes.len() >= 2, "{codes:?}");
        assert!(
            codes.iter().all(|c| c.as_str().ends_with("::world-size")),
            "{codes:?}"
        );
        // Only boundaries count: `size` is not a suffix of `world-size`.
        assert!(matches!(lookup("size"), Lookup::None(_)));
    }

    #[test]
    fn a_misspelt_code_gets_the_nearest() {
        assert_eq!(lookup("global-bach"), Lookup::None(vec![Code::GlobalBatch]));
        assert_eq!(
            lookup("plan::globalbatch"),
            Lookup::None(vec![Code::GlobalBatch])
        );
        assert_eq!(
            lookup("accum::schema::unknown-keys"),
            Lookup::None(vec![Code::UnknownKey])
        );
        assert_eq!(lookup("nothing-like-it"), Lookup::None(Vec::new()));
    }
}
