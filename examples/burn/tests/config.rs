//! One struct with burn's `#[derive(Config)]` and accum's
//! `#[derive(AccumConfig)]`: loaded from the JSON file burn reads through
//! accum's loader (`accum::load_config`, the diagnostics of `accum
//! validate`), then planned; and what burn's generated serde does that a
//! plain serde derive would not (src/config.rs cites it).

use std::path::Path;

use accum::AccumConfig;
use accum_burn_example::{ModelConfig, TrainConfig};
use burn::config::Config;

fn shipped() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/train.json"))
}

/// The shipped config's text with `edit` applied to its JSON value.
fn edited(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let text = std::fs::read_to_string(shipped()).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut value);
    value.to_string()
}

#[test]
fn the_shipped_config_loads_validates_and_plans() {
    let loaded = TrainConfig::load_checked(shipped()).unwrap();
    assert!(
        loaded.warnings().is_empty(),
        "{}",
        loaded.render_warnings(false)
    );
    let plan = *loaded.plan();
    let config = loaded.into_config();
    // A is absent from the file: accum's loader solves it from B = m·A·D
    // and gives it to the typed config.
    assert_eq!(config.batch.accumulation, Some(4));
    assert_eq!(
        (plan.micro_batch(), plan.accumulation(), plan.replicas()),
        (2, 4, 2)
    );
    assert_eq!(plan.effective_batch().get(), 16);
    assert_eq!(
        config.model,
        ModelConfig::new().with_hidden(24).with_ffn(64).with_seed(7)
    );
}

#[test]
fn burn_reads_and_writes_the_same_file_and_accum_plans_the_copy() {
    // burn's own loader (`Config::load`, JSON) reads the file accum checked.
    let by_burn = TrainConfig::load(shipped()).unwrap();
    let loaded = TrainConfig::load_checked(shipped()).unwrap();
    let plan = *loaded.plan();
    let mut by_accum = loaded.into_config();
    // The same config, but for the accumulation accum's loader solved.
    assert_eq!(
        (by_burn.batch.accumulation, by_accum.batch.accumulation),
        (None, Some(4))
    );
    by_accum.batch.accumulation = None;
    assert_eq!(by_burn.to_string(), by_accum.to_string());
    // burn's `save` writes what accum loads again, to the same plan.
    let dir = std::env::temp_dir().join(format!("accum-burn-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("copy.json");
    by_burn.save(&copy).unwrap();
    let again = TrainConfig::load_checked(&copy).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(*again.plan(), plan);
    let mut reread = again.into_config();
    assert_eq!(reread.batch.accumulation, Some(4));
    reread.batch.accumulation = None;
    assert_eq!(reread.to_string(), by_burn.to_string());
}

#[test]
fn the_paths_accum_reports_are_the_keys_burn_writes() {
    // burn's own loader: the file as it is, without the accumulation
    // accum's loader solves.
    let config = TrainConfig::load(shipped()).unwrap();
    let written: serde_json::Value = serde_json::from_str(&config.to_string()).unwrap();
    let roles = TrainConfig::roles();
    let paths: Vec<String> = roles.iter().map(|r| r.path.to_string()).collect();
    assert_eq!(
        paths,
        [
            "batch.micro_batch",
            "batch.accumulation",
            "batch.global_batch",
            "replicas"
        ]
    );
    // Every role path names a key in burn's JSON, except the one the file
    // leaves out (burn writes an absent `Option` as null).
    for path in paths {
        let pointer = format!("/{}", path.replace('.', "/"));
        assert!(
            written.pointer(&pointer).is_some(),
            "`{path}` is a role path; burn writes {written}"
        );
    }
    assert_eq!(
        written.pointer("/batch/accumulation"),
        Some(&serde_json::Value::Null)
    );
}

/// The dotted field path of each of `err`'s diagnostics, in file order.
fn paths(err: &accum::ConfigError) -> Vec<String> {
    err.diagnostics()
        .iter()
        .map(|d| d.finding.path.segments().join("."))
        .collect()
}

#[test]
fn every_plan_problem_is_reported_at_its_field() {
    let text = edited(|v| {
        v["batch"]["micro_batch"] = 0.into();
        v["replicas"] = 0.into();
        v["warmup"] = "300 updates".into();
    });
    let err = TrainConfig::from_json("bad.json", &text).unwrap_err();
    let paths = paths(&err);
    for path in ["batch.micro_batch", "replicas", "warmup"] {
        assert!(paths.contains(&path.to_owned()), "{path} in {paths:?}");
    }
    let shown = err.to_string();
    println!("{shown}");
    assert!(shown.contains("bad.json:1:"), "{shown}");
    assert!(
        shown.contains("set `batch.micro_batch` to 1 or more"),
        "{shown}"
    );
    assert!(shown.contains("longer than the run"), "{shown}");
}

#[test]
fn a_value_of_the_wrong_shape_is_located_in_the_file() {
    let text = "{\n  \"batch\": { \"micro_batch\": \"two\" }\n}";
    let err = TrainConfig::from_json("typed.json", text).unwrap_err();
    let shown = err.to_string();
    println!("{shown}");
    assert!(
        paths(&err).contains(&"batch.micro_batch".to_owned()),
        "{shown}"
    );
    assert!(
        shown.contains("`batch.micro_batch` must be an integer, found string \"two\""),
        "{shown}"
    );
    assert!(shown.contains("typed.json:2:29"), "{shown}");
}

#[test]
fn burn_defaults_apply_to_new_only() {
    // `ModelConfig::new()` gives the `#[config(default)]` values, but burn's
    // generated `Deserialize`, and the schema beside it, ask the file for
    // every field.
    assert_eq!(ModelConfig::new().ffn, 32);
    let text = edited(|v| {
        v["model"].as_object_mut().unwrap().remove("ffn");
    });
    let err = TrainConfig::from_json("short.json", &text).unwrap_err();
    let shown = err.to_string();
    println!("{shown}");
    assert!(shown.contains("missing key `ffn`"), "{shown}");
    assert!(shown.contains("short.json:1:"), "{shown}");
    let codes: Vec<&str> = err
        .diagnostics()
        .iter()
        .map(|d| d.finding.code.as_str())
        .collect();
    assert_eq!(codes, ["accum::schema::missing-key"], "{shown}");
}

#[test]
fn burn_ignores_an_unknown_key_and_accum_reports_the_role_it_leaves_out() {
    // A misspelt optional key is dropped by burn's deserializer...
    let text = edited(|v| {
        let batch = v["batch"].as_object_mut().unwrap();
        batch.remove("global_batch");
        batch.insert("accumulaton".into(), 4.into());
    });
    let err = TrainConfig::from_json("typo.json", &text).unwrap_err();
    // ...and accum's loader finds the plan without an accumulation.
    let shown = err.to_string();
    println!("{shown}");
    assert!(
        paths(&err).contains(&"batch.accumulation".to_owned()),
        "{shown}"
    );
}

/// A burn config that also derives `JsonSchema`, as `accum::schema_for` and
/// `accum_cli::run` ask, with a `rename`: the one attribute the three
/// derives do not agree on.
#[derive(burn::config::Config, Debug, AccumConfig, schemars::JsonSchema)]
struct Renamed {
    #[accum(micro_batch)]
    #[serde(rename = "mb")]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(replicas)]
    replicas: u32,
}

#[test]
fn a_serde_rename_reaches_accum_and_the_schema_but_not_burn() {
    // Without `JsonSchema` nothing registers `#[serde]`, and the rename is a
    // compile error; with it, it compiles, and accum and schemars follow it...
    let paths: Vec<String> = Renamed::roles()
        .iter()
        .map(|r| r.path.to_string())
        .collect();
    assert_eq!(paths, ["mb", "accumulation", "replicas"]);
    let schema = accum::schema_for::<Renamed>().to_value();
    assert!(
        schema.pointer("/properties/mb/x-accum-role").is_some(),
        "{schema}"
    );
    // ...while burn's serde impls keep the field's own name: a finding at
    // `mb` would name a key the file does not have. Keep burn configs free
    // of `#[serde]`.
    let written: serde_json::Value =
        serde_json::from_str(&Renamed::new(2, 4, 1).to_string()).unwrap();
    assert!(
        written.get("micro_batch").is_some() && written.get("mb").is_none(),
        "{written}"
    );
    assert!(
        serde_json::from_str::<Renamed>(r#"{"mb": 2, "accumulation": 4, "replicas": 1}"#).is_err()
    );
}
