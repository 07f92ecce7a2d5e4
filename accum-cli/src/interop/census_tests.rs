//! The census's promise, as a property: inserting a key or argument of the
//! batch vocabulary that no reader knows, anywhere a file of its kind can
//! hold one, never leaves a fixture's verdict confident and unchanged.

use std::fs;

use proptest::prelude::*;

use super::tests::{fixtures, header};
use super::*;

/// The verdict of an import: the batch (`m`, `A`, `D`, `B`) or none, and
/// whether it is reported with confidence.
fn verdict(result: &Result<Imported, ImportError>) -> (Option<[u64; 4]>, bool) {
    match result {
        Ok(i) => {
            let plan = i.config.plan().expect("an imported config has a plan");
            (
                Some([
                    plan.micro_batch(),
                    plan.accumulation(),
                    plan.replicas(),
                    plan.effective_batch().get(),
                ]),
                i.confident(),
            )
        }
        Err(_) => (None, false),
    }
}

/// Where a key can go: byte offsets, each with the text to insert there.
fn places(name: &str, text: &str, key: &str, env: &[(String, String)]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut offset = 0;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let body = text
        .lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("//"))
        .unwrap_or("");
    let json_like = body.starts_with('{');
    let dashed_yaml = text
        .lines()
        .any(|l| l.trim_start().starts_with("--micro-batch-size:"));
    // The keys of the block mappings a line is in, by indentation.
    let mut parents: Vec<(usize, String)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let next = lines.get(i + 1).map(|l| l.trim_start()).unwrap_or("");
        let comment = trimmed.starts_with('#') || trimmed.starts_with("//");
        if name.ends_with(".sh") {
            // Arguments of the run go next to its batch arguments (below).
        } else if json_like {
            // A key at the start of an object that has keys.
            if !comment && trimmed.trim_end().ends_with('{') && !next.starts_with('}') {
                out.push((offset + line.len(), format!("\"{key}\": 3,\n")));
            }
        } else if dashed_yaml {
            if trimmed.starts_with("--") && trimmed.contains(':') {
                out.push((offset, format!("{indent}--{key}: 3\n")));
            }
        } else {
            // A key of a block mapping, before another key at its indent,
            // outside evaluation and inference sections (not the training
            // batch: the census leaves them out).
            let own = trimmed.split_once(':').map(|(k, _)| k).filter(|k| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            if let Some(own) = own.filter(|_| !comment) {
                parents.retain(|(i, _)| *i < indent.len());
                let path: Vec<String> = parents.iter().map(|(_, k)| k.clone()).collect();
                if !census::outside(&path) {
                    out.push((offset, format!("{indent}{key}: 3\n")));
                }
                parents.push((indent.len(), own.to_owned()));
            }
        }
        offset += line.len();
    }
    if name.ends_with(".sh") {
        for at in super::megatron::batch_argument_starts(text, env) {
            out.push((at, format!("--{key} 3 ")));
        }
    }
    out
}

/// Names of the vocabulary that no reader reads.
fn unknown_key() -> impl Strategy<Value = String> {
    (
        "[a-z]{1,5}",
        prop::sample::select(vec![
            "batch_size",
            "micro_batch_size",
            "global_batch_size",
            "accumulation_steps",
            "grad_acc_steps",
            "num_devices",
            "gpus",
            "num_nodes",
            "world_size",
            "model_parallel_size",
            "parallel_degree",
            "rampup_batch_size",
        ]),
        any::<bool>(),
    )
        .prop_map(|(prefix, suffix, dashes)| {
            let key = format!("zz{prefix}_{suffix}");
            if dashes { key.replace('_', "-") } else { key }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn an_unknown_batch_key_never_leaves_the_verdict_confident_and_unchanged(
        which in any::<prop::sample::Index>(),
        place in any::<prop::sample::Index>(),
        key in unknown_key(),
    ) {
        let all = fixtures();
        let (framework, path) = &all[which.index(all.len())];
        let text = fs::read_to_string(path).expect("a fixture");
        let name = path.display().to_string();
        let opts = header(path, &text).options;
        let before = verdict(&import_file(*framework, path, &opts));
        let key = if name.ends_with(".sh") { key.replace('_', "-") } else { key };
        let spots = places(&name, &text, &key, &opts.env);
        prop_assume!(!spots.is_empty());
        let (at, insert) = &spots[place.index(spots.len())];
        let mut changed = text.clone();
        changed.insert_str(*at, insert);
        let mut opts = opts;
        opts.search_dirs.push(path.parent().expect("a folder").to_owned());
        opts.allow_paths.extend(crate::source::named::repository_root(path));
        let after = verdict(&import(*framework, &name, &changed, &opts));
        prop_assert!(
            !(after.1 && after.0 == before.0),
            "{name}: inserting {insert:?} left {:?} confident\n{changed}",
            after.0
        );
    }
}

#[test]
fn every_fixture_that_parses_has_a_place_for_a_key() {
    for (framework, path) in fixtures() {
        let text = fs::read_to_string(&path).expect("a fixture");
        let name = path.display().to_string();
        let opts = header(&path, &text).options;
        if matches!(
            import_file(framework, &path, &opts),
            Err(ImportError::Syntax { .. } | ImportError::Read { .. })
        ) {
            continue;
        }
        assert!(
            !places(&name, &text, "zz_batch_size", &opts.env).is_empty(),
            "{name}: no place to insert a key"
        );
    }
}

/// A factor of the batch read as 0, whatever the framework calls it, has
/// the plan's code; other refused values, and factors outside the training
/// batch, keep the framework's.
#[test]
fn a_zero_factor_has_the_plans_code() {
    for key in [
        "per_device_train_batch_size",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
        "accumulate_grad_batches",
        "--micro-batch-size",
        "--global-batch-size",
        "num_processes",
        "devices",
        "--tensor-model-parallel-size",
    ] {
        assert_eq!(census::refused_code(&[key], Some(0)), Code::Zero, "{key}");
        assert_eq!(
            census::refused_code(&[key], Some(-1)),
            Code::InteropValue,
            "{key}"
        );
        assert_eq!(
            census::refused_code(&[key], None),
            Code::InteropValue,
            "{key}"
        );
    }
    for key in ["logging_steps", "seed", "--rampup-batch-size"] {
        assert_eq!(
            census::refused_code(&[key], Some(0)),
            Code::InteropValue,
            "{key}"
        );
    }
    assert_eq!(
        census::refused_code(&["model", "validation_ds", "batch_size"], Some(0)),
        Code::InteropValue
    );
}
