//! The fixtures that are whole repositories: `tests/fixtures/interop/repos/
//! <name>/`, each imitating a public repository's config tree (and, as
//! `*.py.in`, the Python that registers its resolvers). Each is copied into
//! a folder of its own with `.git`, so that it is its own repository (the
//! read root of the import) and the `.py` files of one are not seen by
//! another; the `.py.in` files become `.py` there. Every file with an
//! `expect:` line is imported from there and checked as the fixture table
//! checks its files (`tests.rs`), plus:
//!
//! - `framework:` the framework to import it with;
//! - `says:` text the rendered findings must hold (one line each);
//! - `at:` `CODE FILE:LINE`: a finding of that code is reported in that file
//!   (relative to the repository), at that line.

use std::fs;
use std::path::{Path, PathBuf};

use super::tests::{batch_of, header, root, short};
use super::*;

#[path = "../../tests/support/fixture_tree.rs"]
mod fixture_tree;
use fixture_tree::copy_tree as copy;

/// Each fixture repository, copied into a repository of its own (under a
/// folder of the test's `label`: tests run at once).
fn repositories(label: &str) -> Vec<(String, PathBuf)> {
    let scratch = std::env::temp_dir().join(format!("accum-repos-{}-{label}", std::process::id()));
    let _ = fs::remove_dir_all(&scratch);
    let mut out = Vec::new();
    let mut names: Vec<PathBuf> = fs::read_dir(root().join("repos"))
        .expect("the repositories")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_dir())
        .collect();
    names.sort();
    for from in names {
        let name = from
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        let to = scratch.join(&name);
        copy(&from, &to);
        fs::create_dir_all(to.join(".git")).expect(".git");
        out.push((name, to));
    }
    out
}

/// The files under `dir` with an `expect:` line.
fn entries(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .expect("a folder")
        .map(|e| e.expect("an entry").path())
        .collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            entries(&path, out);
        } else if fs::read_to_string(&path)
            .is_ok_and(|t| t.lines().any(|l| l.starts_with("# expect:")))
        {
            out.push(path);
        }
    }
}

fn lines<'t>(text: &'t str, name: &str) -> Vec<&'t str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# ")?.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
        .collect()
}

#[test]
fn every_fixture_repository_gives_the_frameworks_batch_or_refusal() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, repo) in repositories("table") {
        let mut files = Vec::new();
        entries(&repo, &mut files);
        assert!(!files.is_empty(), "{name}: no file with `expect:`");
        for path in files {
            count += 1;
            let text = fs::read_to_string(&path).expect("a fixture");
            let show = path
                .strip_prefix(&repo)
                .unwrap_or(&path)
                .display()
                .to_string();
            let show = format!("{name}/{show}");
            let e = header(&path, &text);
            let framework: Framework = lines(&text, "framework")
                .first()
                .unwrap_or_else(|| panic!("{show}: no `framework:` line"))
                .parse()
                .unwrap_or_else(|_| panic!("{show}: an unknown framework"));
            let result = import_file(framework, &path, &e.options);
            let files = match &result {
                Ok(i) => i.files.clone(),
                Err(ImportError::Invalid { files }) => files.clone(),
                Err(other) => {
                    failures.push(format!("{show}: {other}"));
                    continue;
                }
            };
            let batch = result.as_ref().ok().map(|i| batch_of(&i.config));
            let mut codes: Vec<String> = files
                .iter()
                .flat_map(|f| &f.findings)
                .map(|f| short(f.finding.code))
                .collect();
            codes.sort();
            let rendered = render_reports(&files, false);
            if batch != e.batch {
                failures.push(format!(
                    "{show}: batch {batch:?}, expected {:?}\n{rendered}",
                    e.batch
                ));
            }
            if codes != e.codes {
                failures.push(format!(
                    "{show}: codes {codes:?}, expected {:?}\n{rendered}",
                    e.codes
                ));
            }
            for said in lines(&text, "says") {
                if !rendered.contains(said) {
                    failures.push(format!(
                        "{show}: the findings do not say `{said}`\n{rendered}"
                    ));
                }
            }
            for at in lines(&text, "at") {
                let (code, place) = at.split_once(' ').expect("`at: CODE FILE:LINE`");
                let (file, line) = place.rsplit_once(':').expect("FILE:LINE");
                let line: usize = line.parse().expect("a line");
                let found = files.iter().any(|f| {
                    f.name.ends_with(file)
                        && f.findings.iter().any(|d| {
                            short(d.finding.code) == code
                                && d.location.range.as_ref().is_some_and(|r| {
                                    crate::source::line_col(&f.text, r.start).0 == line
                                })
                        })
                });
                if !found {
                    let places: Vec<String> = files
                        .iter()
                        .flat_map(|f| {
                            f.findings.iter().map(move |d| {
                                let line = d
                                    .location
                                    .range
                                    .as_ref()
                                    .map_or(0, |r| crate::source::line_col(&f.text, r.start).0);
                                format!("{} {}:{line}", short(d.finding.code), f.name)
                            })
                        })
                        .collect();
                    failures.push(format!(
                        "{show}: no `{code}` finding at {file}:{line}; found {places:?}"
                    ));
                }
            }
        }
    }
    assert!(count >= 16, "only {count} fixtures in repositories");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Without the repository (a text imported alone), nothing is composed and
/// no resolver is registered: the reader stops at what it cannot know.
#[test]
fn a_text_imported_alone_composes_nothing_and_evaluates_no_resolver() {
    let repos = repositories("alone");
    let (_, repo) = repos
        .iter()
        .find(|(n, _)| n == "safari_resolvers")
        .expect("the safari fixture");
    let path = repo.join("configs/experiment/vit.yaml");
    let text = fs::read_to_string(&path).expect("the fixture");
    let Err(ImportError::Invalid { files }) = import(
        Framework::Lightning,
        "vit.yaml",
        &text,
        &ImportOptions::default(),
    ) else {
        panic!("refused without its repository");
    };
    assert!(files[0].findings.iter().any(|f| {
        f.finding.code == Code::Missing
            && f.finding
                .message
                .contains("no Python file of the repository registers the resolver `eval`")
    }));
}

/// A link out of the repository is not followed by the resolver scan, and
/// a defaults entry that leads out is not read.
#[test]
fn links_out_of_the_repository_are_not_followed() {
    let repos = repositories("links");
    let (_, repo) = repos
        .iter()
        .find(|(n, _)| n == "safari_unregistered")
        .expect("the fixture");
    let outside = repo
        .parent()
        .expect("the scratch folder")
        .join("outside-registrations");
    fs::create_dir_all(&outside).expect("outside");
    fs::write(
        outside.join("train.py"),
        "OmegaConf.register_new_resolver('eval', eval)\n",
    )
    .expect("outside python");
    std::os::unix::fs::symlink(&outside, repo.join("linked")).expect("a link to a folder");
    std::os::unix::fs::symlink(outside.join("train.py"), repo.join("linked.py"))
        .expect("a link to a file");
    assert!(super::resolvers::scan(repo).is_empty());
    let path = repo.join("configs/experiment/vit.yaml");
    let opts = ImportOptions::default();
    let Err(ImportError::Invalid { files }) = import_file(Framework::Lightning, &path, &opts)
    else {
        panic!("refused: the registration is outside");
    };
    assert!(
        files[0]
            .findings
            .iter()
            .any(|f| f.finding.code == Code::Missing)
    );
}
