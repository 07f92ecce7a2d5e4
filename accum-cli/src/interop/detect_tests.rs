//! The dialect detection: every framework's identifying keys are its own,
//! no key of another framework overturns a confident claim, and no
//! fixture is claimed for a framework it is not written for.

use std::collections::BTreeMap;
use std::fs;

use proptest::prelude::*;

use super::detect::{Detection, IDENTITIES, Kind, Sign, decide, detect, reads_as, shape};
use super::tests::fixtures;
use super::{Framework, ImportError, ImportOptions, import};
use accum_core::Code;

/// Every key path (or option) a kind's signs look at.
fn vocabulary(kind: Kind) -> Vec<&'static str> {
    IDENTITIES
        .iter()
        .filter(|id| id.kind == kind)
        .flat_map(|id| id.signs.iter().flat_map(|s| s.paths()))
        .collect()
}

#[test]
fn every_kinds_identifying_keys_are_its_own() {
    for (i, a) in IDENTITIES.iter().enumerate() {
        for b in &IDENTITIES[i + 1..] {
            assert_ne!(a.kind, b.kind, "one identity per kind");
            let theirs = vocabulary(b.kind);
            for path in vocabulary(a.kind) {
                assert!(
                    !theirs.contains(&path),
                    "`{path}` identifies both {} and {}",
                    a.kind.name(),
                    b.kind.name()
                );
                // Nor does one key path hold another kind's.
                for other in &theirs {
                    assert!(
                        !other.starts_with(&format!("{path}."))
                            && !path.starts_with(&format!("{other}.")),
                        "`{path}` ({}) and `{other}` ({}) nest",
                        a.kind.name(),
                        b.kind.name()
                    );
                }
            }
        }
    }
}

/// A YAML file holding the given dotted keys (options at the top), each
/// with a value that satisfies its sign.
fn yaml_of(keys: &[(&str, &str)]) -> String {
    #[derive(Default)]
    struct Tree(BTreeMap<String, Option<Tree>>, BTreeMap<String, String>);
    fn insert(tree: &mut Tree, path: &[&str], value: &str) {
        match path {
            [] => {}
            [last] => {
                if !tree.0.contains_key(*last) {
                    tree.1.insert((*last).to_owned(), value.to_owned());
                }
            }
            [first, rest @ ..] => {
                if tree.1.contains_key(*first) {
                    return;
                }
                let child = tree
                    .0
                    .entry((*first).to_owned())
                    .or_insert_with(|| Some(Tree::default()));
                if let Some(child) = child {
                    insert(child, rest, value);
                }
            }
        }
    }
    fn emit(tree: &Tree, indent: usize, out: &mut String) {
        for (k, v) in &tree.1 {
            out.push_str(&format!("{:indent$}{k}: {v}\n", ""));
        }
        for (k, child) in &tree.0 {
            out.push_str(&format!("{:indent$}{k}:\n", ""));
            if let Some(child) = child {
                emit(child, indent + 2, out);
            }
        }
    }
    let mut tree = Tree::default();
    for (path, value) in keys {
        if path.starts_with("--") {
            insert(&mut tree, &[path], value);
        } else {
            let segments: Vec<&str> = path.split('.').collect();
            insert(&mut tree, &segments, value);
        }
    }
    let mut out = String::new();
    emit(&tree, 0, &mut out);
    out
}

/// A key of a sign, with a value that satisfies it.
fn key_of(sign: Sign, which: usize) -> (&'static str, &'static str) {
    match sign {
        Sign::Keys(paths) => (paths[which % paths.len()], "1"),
        Sign::Holds(path, text) => (path, text),
        Sign::Option(option) => (option, "1"),
    }
}

/// Every sign of every kind, as (kind, sign).
fn all_signs() -> Vec<(Kind, Sign)> {
    IDENTITIES
        .iter()
        .flat_map(|id| id.signs.iter().map(move |s| (id.kind, *s)))
        .collect()
}

#[test]
fn each_kind_is_claimed_from_its_own_keys() {
    for id in IDENTITIES {
        let keys: Vec<_> = id.signs.iter().map(|s| key_of(*s, 0)).collect();
        let text = yaml_of(&keys);
        match detect("f.yaml", &text) {
            Detection::Claim {
                kind, confident, ..
            } => {
                assert_eq!(kind, id.kind, "{text}");
                assert!(confident, "{text}");
            }
            other => panic!("{}: {other:?}\n{text}", id.kind.name()),
        }
    }
}

#[test]
fn a_shared_key_alone_claims_nothing_and_two_equal_fits_are_a_tie() {
    // Hydra research configs keep a `train.global_batch_size` too.
    let text = "train:\n  global_batch_size: 256\n  micro_batch_size: 8\n";
    assert_eq!(detect("exp.yaml", text), Detection::Unknown);
    // A trainer section alone is Lightning's, and never confident: NeMo's
    // files share it.
    let text = "trainer:\n  accumulate_grad_batches: 4\ntrain:\n  global_batch_size: 256\n";
    assert!(matches!(
        detect("exp.yaml", text),
        Detection::Claim {
            kind: Kind::Framework(Framework::Lightning),
            confident: false,
            ..
        }
    ));
    let text = "seed_everything: 1\nbase_model: x\n";
    let Detection::Tie(kinds) = detect("x.yaml", text) else {
        panic!("one sign each is a tie");
    };
    let kinds: Vec<Kind> = kinds.into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds.len(),
        2,
        "both named: {:?}",
        kinds.iter().map(|k| k.name()).collect::<Vec<_>>()
    );
}

#[test]
fn a_megatron_launch_script_is_claimed_from_its_command() {
    let text = "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py \\\n  --micro-batch-size 2 --global-batch-size 64 --tensor-model-parallel-size 2\n";
    let Detection::Claim {
        kind,
        evidence,
        confident,
    } = detect("run.sh", text)
    else {
        panic!("a Megatron command");
    };
    assert_eq!(kind, Kind::Framework(Framework::Megatron));
    assert!(confident);
    assert_eq!(evidence.len(), 3);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any mixture of signs: when one kind is claimed with confidence, one
    /// more key of another kind's vocabulary never turns the claim to
    /// another kind or to a tie.
    #[test]
    fn one_key_of_another_dialect_never_flips_a_confident_claim(
        picks in prop::collection::vec((any::<prop::sample::Index>(), 0usize..4), 1..8),
        extra in (any::<prop::sample::Index>(), 0usize..4),
    ) {
        let signs = all_signs();
        let keys: Vec<(&str, &str)> = picks
            .iter()
            .map(|(i, w)| key_of(signs[i.index(signs.len())].1, *w))
            .collect();
        let before = decide(&shape("f.yaml", &yaml_of(&keys)));
        let Detection::Claim { kind, confident: true, .. } = before else {
            return Ok(());
        };
        let others: Vec<&(Kind, Sign)> = signs.iter().filter(|(k, _)| *k != kind).collect();
        let (_, sign) = others[extra.0.index(others.len())];
        let mut more = keys.clone();
        more.push(key_of(*sign, extra.1));
        let after = decide(&shape("f.yaml", &yaml_of(&more)));
        let still = matches!(&after, Detection::Claim { kind: k, .. } if *k == kind);
        prop_assert!(still, "{} became {:?}\n{}", kind.name(), after, yaml_of(&more));
    }
}

/// What a fixture's `detect:` line says it is detected as: a framework's
/// key, `accelerate`, `tie` or `none`.
fn detect_line(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let l = l.trim_start().trim_start_matches(['#', '/']).trim();
        l.strip_prefix("detect:").map(|r| r.trim().to_owned())
    })
}

fn kind_key(detection: &Detection) -> String {
    match detection {
        Detection::Claim {
            kind: Kind::Framework(f),
            ..
        } => f.key().to_owned(),
        Detection::Claim {
            kind: Kind::Accelerate,
            ..
        } => "accelerate".to_owned(),
        Detection::Tie(_) => "tie".to_owned(),
        Detection::Unknown => "none".to_owned(),
    }
}

#[test]
fn no_fixture_is_claimed_for_a_framework_it_is_not_written_for() {
    let mut failures = Vec::new();
    for (framework, path) in fixtures() {
        let text = fs::read_to_string(&path).expect("a fixture");
        let name = path.display().to_string();
        let detection = detect(&name, &text);
        let got = kind_key(&detection);
        let ok = match detect_line(&text) {
            // A fixture written as another framework's file says so.
            Some(expected) => got == expected,
            // Otherwise: its own framework (or one its reader reads), or no
            // claim at all.
            None => match &detection {
                Detection::Claim { kind, .. } => reads_as(framework, *kind),
                Detection::Tie(_) | Detection::Unknown => true,
            },
        };
        if !ok {
            failures.push(format!("{name}: detected as {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_file_named_as_the_wrong_framework_is_told_which_it_is() {
    let text = "checkpoint_dir: checkpoints/x\nout_dir: out/x\ntrain:\n  save_interval: 200\n  global_batch_size: 8\n  micro_batch_size: 2\n";
    let opts = ImportOptions {
        world_size: Some(1),
        micro_batch: Some(2),
        ..ImportOptions::default()
    };
    let Err(ImportError::Invalid { files }) =
        import(Framework::Lightning, "lora.yaml", text, &opts)
    else {
        panic!("refused");
    };
    let f = &files[0].findings[0];
    assert_eq!(f.finding.code, Code::Dialect);
    assert!(
        f.finding.message.starts_with("this is a LitGPT file, not Lightning's: `checkpoint_dir`, `out_dir`, `train.save_interval` are LitGPT's own"),
        "{}",
        f.finding.message
    );
    assert_eq!(
        f.help_text(),
        Some("import it with `accum import litgpt FILE`")
    );
}
