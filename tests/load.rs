//! Loading a config file in the user's own program (`accum::load_config`):
//! the typed config with its plan and warnings, or the located diagnostics
//! `accum validate` gives (file, line, column, snippet, help,
//! did-you-mean), in TOML, YAML and JSON; and errors that read as
//! sentences when `main` returns them through `?`.

use accum::{AccumConfig, ConfigError, Span, Updates};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The issue's fine-tune config: nested sections, tensor parallelism,
/// variable-length data, a warmup and a run in examples, an evaluation
/// interval in updates.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(variable_length)]
#[serde(deny_unknown_fields)]
struct FineTune {
    #[accum(nested)]
    batch: Batch,
    #[accum(nested)]
    parallel: Parallel,
    #[accum(nested)]
    optim: Optim,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(section)]
#[serde(deny_unknown_fields)]
struct Batch {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(section)]
#[serde(deny_unknown_fields)]
struct Parallel {
    #[accum(world_size)]
    world_size: u32,
    #[accum(tensor_parallel)]
    tensor_parallel: Option<u32>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(section)]
#[serde(deny_unknown_fields)]
struct Optim {
    lr: f64,
    #[accum(warmup)]
    warmup: Span,
    #[accum(total)]
    total: Span,
    #[accum(every)]
    eval_every: Updates,
}

const GOOD: &str = r#"
[batch]
micro_batch = 4
accumulation = 2

[parallel]
world_size = 8
tensor_parallel = 2

[optim]
lr = 0.5
warmup = "320 examples"
total = "3200 examples"
eval_every = "25 updates"
"#;

fn load(name: &str, text: &str) -> Result<accum::Loaded<FineTune>, ConfigError> {
    accum::load_config_str::<FineTune>(name, text)
}

#[test]
fn a_good_file_loads_with_its_plan() {
    let loaded = load("train.toml", GOOD).expect("a valid config");
    // D = 8 / 2 = 4: B = 4 × 2 × 4 = 32; 3,200 examples is 100 updates.
    assert_eq!(loaded.plan().replicas(), 4);
    assert_eq!(loaded.plan().effective_batch().get(), 32);
    assert!(loaded.staged_plan().is_constant());
    assert!(loaded.warnings().is_empty());
    assert_eq!(loaded.render_warnings(false), "");
    assert_eq!(loaded.config().optim.eval_every, Updates::new(25));
    assert_eq!(loaded.into_config().parallel.tensor_parallel, Some(2));
    // A warmup in tokens over variable-length data and no seq_len cannot be
    // compared with a run in examples before the run: said up front, and
    // the config still loads.
    let text = GOOD.replace("\"320 examples\"", "\"20k tokens\"");
    let loaded = load("train.toml", &text).expect("a warning only");
    let codes: Vec<&str> = loaded
        .warnings()
        .iter()
        .map(|w| w.finding.code.as_str())
        .collect();
    assert_eq!(codes, ["accum::span::warmup"]);
    assert!(
        loaded.render_warnings(false).contains("seq_len"),
        "{}",
        loaded.render_warnings(false)
    );
}

#[test]
fn the_same_config_loads_from_yaml_and_json() {
    let yaml = "batch:\n  micro_batch: 4\n  accumulation: 2\nparallel:\n  world_size: 8\n  tensor_parallel: 2\n\
                optim:\n  lr: 0.5\n  warmup: 320 examples\n  total: 3200 examples\n  eval_every: 25\n";
    let json = r#"{"batch": {"micro_batch": 4, "accumulation": 2},
        "parallel": {"world_size": 8, "tensor_parallel": 2},
        "optim": {"lr": 0.5, "warmup": "320 examples", "total": "3200 examples", "eval_every": 25}}"#;
    for (name, text) in [("train.yaml", yaml), ("train.json", json)] {
        let loaded = load(name, text).unwrap_or_else(|err| panic!("{name}: {err}"));
        assert_eq!(loaded.plan().effective_batch().get(), 32, "{name}");
    }
}

/// The issue's key typo: serde's raw error, with the whole file in it,
/// becomes the located diagnostic with a did-you-mean.
#[test]
fn a_key_typo_is_located_with_a_did_you_mean() {
    let text = GOOD.replace("tensor_parallel = 2", "tensor_paralel = 2");
    let err = load("train.toml", &text).expect_err("a typo");
    let diagnostics = err.diagnostics();
    assert_eq!(diagnostics.len(), 1, "{err}");
    let d = &diagnostics[0];
    assert_eq!(d.finding.code.as_str(), "accum::schema::unknown-key");
    assert_eq!(d.finding.path.segments(), ["parallel", "tensor_paralel"]);
    let rendered = err.to_string();
    assert!(rendered.contains("train.toml:8:1"), "{rendered}");
    assert!(rendered.contains("tensor_paralel = 2"), "{rendered}");
    assert!(rendered.contains("tensor_parallel"), "{rendered}");
    // Debug is what `main` prints through `?`: the same text, no struct
    // dump, and not the whole file.
    assert_eq!(format!("{err:?}"), rendered);
    assert!(!rendered.contains("input: Some"), "{rendered}");
    assert!(!rendered.contains("[optim]"), "{rendered}");
}

/// A typed count gets the help of a `Span` for an ambiguous or a wrong
/// unit, never the schema's pattern.
#[test]
fn typed_counts_say_what_is_wrong_with_the_unit() {
    let cases = [
        (
            "\"25 steps\"",
            "`25 steps` is ambiguous: \"steps\" can mean updates or microbatches",
        ),
        (
            "\"2M tokens\"",
            "`2M tokens` counts tokens, but this field counts updates",
        ),
        (
            "\"25 potatoes\"",
            "`potatoes` in `25 potatoes` is not a unit",
        ),
    ];
    for (value, message) in cases {
        let text = GOOD.replace("\"25 updates\"", value);
        let err = load("train.toml", &text).expect_err(value);
        let d = &err.diagnostics()[0];
        assert_eq!(err.diagnostics().len(), 1, "{err}");
        assert_eq!(d.finding.code.as_str(), "accum::span", "{err}");
        assert_eq!(d.finding.path.segments(), ["optim", "eval_every"]);
        assert_eq!(d.finding.message, message);
        assert!(d.help_text().is_some(), "{err}");
        let rendered = err.to_string();
        assert!(!rendered.contains("pattern"), "{rendered}");
        assert!(!rendered.contains("^\\s*"), "{rendered}");
    }
    let err = load(
        "train.toml",
        &GOOD.replace("\"25 updates\"", "\"2M tokens\""),
    )
    .expect_err("another unit");
    assert_eq!(
        err.diagnostics()[0].help_text(),
        Some(
            "write it in updates, e.g. \"2000000 updates\" (converting between units needs the plan), \
             or make the field a `Span`, which takes any unit"
        )
    );
}

/// A plan error is located at its field, like every finding of
/// `validate()`, and the loader gives no config for it.
#[test]
fn plan_findings_are_located_at_their_fields() {
    let text = GOOD.replace("world_size = 8", "world_size = 9");
    let err = load("train.toml", &text).expect_err("9 is not divisible by 2");
    let d = &err.diagnostics()[0];
    assert_eq!(d.finding.code.as_str(), "accum::plan::layout");
    assert_eq!(d.finding.path.segments(), ["parallel", "world_size"]);
    assert!(err.to_string().contains("train.toml:7:14"), "{err}");
    // A warmup longer than the run: 200 updates of a 100-update run.
    let text = GOOD.replace("\"320 examples\"", "\"200 updates\"");
    let err = load("train.toml", &text).expect_err("too long");
    assert_eq!(
        err.diagnostics()[0].finding.code.as_str(),
        "accum::span::warmup"
    );
}

/// Warnings keep the config and the plan, and render like `accum validate`.
#[test]
fn warnings_stay_beside_the_loaded_plan() {
    let text = GOOD.replace("\"3200 examples\"", "\"3210 examples\"");
    let loaded = load("train.toml", &text).expect("a warning only");
    assert_eq!(loaded.warnings().len(), 1);
    assert_eq!(
        loaded.warnings()[0].finding.code.as_str(),
        "accum::span::rounding"
    );
    let rendered = loaded.render_warnings(false);
    assert!(rendered.contains("train.toml:13:9"), "{rendered}");
    assert!(rendered.contains("rounds up to 101 updates"), "{rendered}");
}

#[test]
fn files_that_cannot_be_read_say_why() {
    let err = accum::load_config::<FineTune>("no/such/train.toml").expect_err("missing");
    assert!(err.diagnostics().is_empty());
    assert!(err.to_string().contains("no/such/train.toml"), "{err}");
    let err = load("train.ini", GOOD).expect_err("unknown format");
    assert!(
        err.to_string()
            .contains("name the file .toml, .json, .yaml or .yml"),
        "{err}"
    );
    let err = load("train.toml", "[batch\nmicro_batch = 4\n").expect_err("syntax");
    assert_eq!(err.diagnostics()[0].finding.code.as_str(), "accum::syntax");
    assert!(err.to_string().contains("train.toml:1:"), "{err}");
}

/// `?` in `main` prints an error's `Debug`: the public errors read as the
/// sentence of their `Display`.
#[test]
fn public_errors_read_as_sentences_through_debug() {
    let zero = accum::plan::Plan::new(0, 8, 2).expect_err("m = 0");
    assert_eq!(format!("{zero:?}"), zero.to_string());
    assert!(!format!("{zero:?}").contains("Zero {"), "{zero:?}");
    let findings = FineTune {
        batch: Batch {
            micro_batch: 0,
            accumulation: 2,
        },
        parallel: Parallel {
            world_size: 8,
            tensor_parallel: None,
        },
        optim: load("train.toml", GOOD).expect("valid").into_config().optim,
    }
    .plan()
    .expect_err("m = 0");
    assert_eq!(format!("{findings:?}"), findings.to_string());
    assert!(
        format!("{findings:?}").starts_with("1 problem in the config:\n  - batch.micro_batch: "),
        "{findings:?}"
    );
    let span = "100 steps".parse::<Span>().expect_err("ambiguous");
    assert_eq!(format!("{span:?}"), span.to_string());
    let overflow = Updates::MAX
        .checked_add(Updates::new(1))
        .expect_err("overflow");
    assert_eq!(format!("{overflow:?}"), overflow.to_string());
    // The driver's, the reducer's and the schedule's errors too.
    let reducer = accum::driver::DriverError::ReducerSize {
        reducer: 8,
        replicas: 4,
    };
    assert_eq!(format!("{reducer:?}"), reducer.to_string());
    assert!(
        !format!("{reducer:?}").contains("ReducerSize"),
        "{reducer:?}"
    );
    let reduce = accum::replica::ReduceError {
        reason: "rank 1 panicked".to_owned(),
    };
    assert_eq!(format!("{reduce:?}"), reduce.to_string());
}

/// A config with enums of every variant kind, one inside a section.
#[derive(Debug, Deserialize, JsonSchema, AccumConfig)]
#[serde(deny_unknown_fields)]
struct Choices {
    #[accum(nested)]
    batch: ChoiceBatch,
    model: Model,
}

#[derive(Debug, Deserialize, JsonSchema, AccumConfig)]
#[accum(section)]
#[serde(deny_unknown_fields)]
struct ChoiceBatch {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(replicas)]
    replicas: u32,
    norm: Norm,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Model {
    Linear,
    Mlp {
        hidden: usize,
    },
    Embed(usize),
    Pair(u32, u32),
    #[serde(rename = "conv2d")]
    Convolution {
        kernel: u32,
        stride: u32,
    },
}

#[derive(Debug, Deserialize, JsonSchema)]
enum Norm {
    #[serde(rename = "per-token")]
    PerToken,
    Sum,
}

const CHOICES: &str = r#"
model = "linear"

[batch]
micro_batch = 2
accumulation = 4
replicas = 1
norm = "Sum"
"#;

/// What a wrong choice says, rendered.
fn choice_error(name: &str, text: &str) -> String {
    let err = accum::load_config_str::<Choices>(name, text).expect_err("a wrong choice");
    err.render(false)
}

/// Every variant is listed the way a file writes it; a near name gets a
/// did-you-mean, a struct variant written as a string is shown as a table,
/// and the help names no schema command of another config.
#[test]
fn enum_choices_list_every_variant_as_written() {
    // Every variant loads the way the messages below write it.
    for (model, read) in [
        (r#""linear""#, "linear"),
        ("{ mlp = { hidden = 8 } }", "mlp 8"),
        ("{ embed = 3 }", "embed 3"),
        ("{ pair = [1, 2] }", "pair 1 2"),
        ("{ conv2d = { kernel = 3, stride = 1 } }", "conv2d 3 1"),
    ] {
        let text = CHOICES.replace(r#""linear""#, model);
        let loaded = accum::load_config_str::<Choices>("run.toml", &text).expect("a good file");
        let config = loaded.config();
        let words = match config.model {
            Model::Linear => "linear".to_owned(),
            Model::Mlp { hidden } => format!("mlp {hidden}"),
            Model::Embed(n) => format!("embed {n}"),
            Model::Pair(a, b) => format!("pair {a} {b}"),
            Model::Convolution { kernel, stride } => format!("conv2d {kernel} {stride}"),
        };
        assert_eq!(words, read);
        assert!(matches!(config.batch.norm, Norm::Sum));
    }
    for (name, from, to) in [
        ("unit_typo", r#"model = "linear""#, r#"model = "linaer""#),
        ("struct_typo", r#"model = "linear""#, r#"model = "mpl""#),
        (
            "struct_as_string",
            r#"model = "linear""#,
            r#"model = "mlp""#,
        ),
        (
            "newtype_as_string",
            r#"model = "linear""#,
            r#"model = "embed""#,
        ),
        ("renamed_typo", r#"model = "linear""#, r#"model = "conv2""#),
        ("far", r#"model = "linear""#, r#"model = "transformer""#),
        ("in_section", r#"norm = "Sum""#, r#"norm = "per_token""#),
    ] {
        let text = CHOICES.replace(from, to);
        insta::assert_snapshot!(format!("enum_{name}"), choice_error("run.toml", &text));
    }
    // The table is shown in the file's own format.
    let yaml =
        "model: mlp\nbatch:\n  micro_batch: 2\n  accumulation: 4\n  replicas: 1\n  norm: Sum\n";
    insta::assert_snapshot!("enum_yaml", choice_error("run.yaml", yaml));
    let json = r#"{"model": "pari", "batch": {"micro_batch": 2, "accumulation": 4, "replicas": 1, "norm": "Sum"}}"#;
    insta::assert_snapshot!("enum_json", choice_error("run.json", json));
    // A missing key names no schema command: a program that only loads
    // its config has none, and `accum schema` describes another config.
    let missing = choice_error("run.toml", &CHOICES.replace("replicas = 1\n", ""));
    assert!(!missing.contains("schema` describes"), "{missing}");
    assert!(missing.contains("add `replicas` to"), "{missing}");
}
