//! Applying fixes for `validate --fix` and `lint --fix`: the unified diff
//! of `--diff`, and the writing of every changed file, all or none, through
//! the project's one writer.

use crate::diagnostic::Diagnostic;
use crate::error::{CliError, Exit};
use crate::fix::{self, Applicability};
use crate::output::{eprintln_safe, print_text};
use crate::writes::Outputs;

/// Most rounds of fixes for one file: a fix may uncover another (a key
/// renamed, its quoted value is then checked), and each round is checked
/// again; a file that still changes after this many is left as it is then.
pub(crate) const MAX_FIX_ROUNDS: usize = 8;

/// Applies the fixes of `checked` up to `allowed`, checks the text again
/// with `check`, and repeats while fixes apply: how many were applied, and
/// the last check. `view` gives a check's text and findings (`None` when
/// there is nothing to fix); a round whose text `check` cannot read
/// (`Ok(None)`) is not applied.
pub(crate) fn rounds<S>(
    mut checked: S,
    allowed: Applicability,
    view: impl Fn(&S) -> Option<(&str, &[Diagnostic])>,
    mut check: impl FnMut(String) -> Result<Option<S>, CliError>,
) -> Result<(usize, S), CliError> {
    let mut fixed = 0;
    for _ in 0..MAX_FIX_ROUNDS {
        let Some((text, findings)) = view(&checked) else {
            break;
        };
        let picked = fix::chosen(findings.iter().map(|d| d.fixes.as_slice()), allowed);
        let Some(next) = (!picked.is_empty())
            .then(|| fix::apply(text, &picked))
            .flatten()
        else {
            break;
        };
        let Some(next) = check(next)? else {
            break;
        };
        fixed += picked.len();
        checked = next;
    }
    Ok((fixed, checked))
}

/// A file that `--fix` changed: where it is, its name in findings, its
/// text before and after, and how many fixes it took.
pub(crate) struct Changed {
    pub(crate) path: std::path::PathBuf,
    pub(crate) name: String,
    pub(crate) original: String,
    pub(crate) text: String,
    pub(crate) fixed: usize,
}

/// `--diff`: the unified diff of each file `--fix` would change, on
/// stdout; exit 1 when there is one, as a check that fails until the fixes
/// are applied.
pub(crate) fn print_diffs(changed: &[Changed]) -> Result<Exit, CliError> {
    let mut out = String::new();
    for change in changed {
        let name = crate::escape::line(&change.name).into_owned();
        out.push_str(
            &similar::TextDiff::from_lines(&change.original, &change.text)
                .unified_diff()
                .context_radius(3)
                .header(&side("a", &name), &side("b", &name))
                .to_string(),
        );
    }
    print_text(&out)?;
    Ok(if changed.is_empty() {
        Exit::Ok
    } else {
        Exit::Invalid
    })
}

/// A diff header's name: `a/NAME` for a relative name, as git writes it;
/// an absolute name as it is.
fn side(prefix: &str, name: &str) -> String {
    if std::path::Path::new(name).is_absolute() {
        name.to_owned()
    } else {
        format!("{prefix}/{name}")
    }
}

/// `--fix`: writes every changed file, all or none, through the one
/// writer; a file that changed on disk since it was read is not
/// overwritten. Each file's count of fixes goes to stderr.
pub(crate) fn write_fixed(changed: &[Changed]) -> Result<(), CliError> {
    let mut outputs = Outputs::new();
    for change in changed {
        let now = std::fs::read(&change.path).map_err(|err| {
            CliError::usage(format!(
                "{}: cannot read it again before writing the fixes: {err}",
                accum_core::shown::path(&change.path)
            ))
        })?;
        let bom = now.starts_with("\u{feff}".as_bytes());
        let body = if bom { &now[3..] } else { &now[..] };
        if body != change.original.as_bytes() {
            return Err(CliError::usage(format!(
                "{}: changed while it was checked; nothing was written: run again",
                accum_core::shown::path(&change.path)
            )));
        }
        let text = &change.text;
        let bytes = if bom {
            ["\u{feff}", text].concat().into_bytes()
        } else {
            text.clone().into_bytes()
        };
        outputs.add_in_place(&change.path, &bytes)?;
    }
    outputs.commit()?;
    for change in changed {
        eprintln_safe!(
            "fixed {} finding{} in {}",
            change.fixed,
            if change.fixed == 1 { "" } else { "s" },
            crate::escape::line(&change.name)
        );
    }
    Ok(())
}
