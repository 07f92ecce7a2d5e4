//! The derive at run time: plans and findings (with field paths) for good and
//! bad values loaded from TOML, role metadata, constant plans in const
//! context, and reviewed snapshots of the annotated JSON Schemas.

use std::num::NonZeroU32;

use accum::config::TrainingConfig;
use accum::plan::{Plan, Role};
use accum::{AccumConfig, Code, ConstPlan, FieldPath, RoleField, Span, UnitKind, Updates};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A user's own config, written the way the issue shows it.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
struct Train {
    #[accum(micro_batch)]
    micro_batch_size: u32,
    #[accum(replicas)]
    data_parallel: NonZeroU32,
    #[accum(seq_len)]
    max_len: Option<u32>,
    #[accum(global_batch)]
    global_batch: Option<u32>,
    warmup: Span,
    eval_every: Updates,
    #[accum(unit = "update")]
    log_every_steps: u64,
    #[accum(nested)]
    optim: OptimSection,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(section)]
struct OptimSection {
    lr: f64,
    #[accum(accumulation)]
    grad_accum: u32,
}

fn train(toml_text: &str) -> Train {
    toml::from_str(toml_text).expect("valid TOML for Train")
}

fn config(toml_text: &str) -> TrainingConfig {
    toml::from_str(toml_text).expect("valid TOML for TrainingConfig")
}

const GOOD_TRAIN: &str = r#"
micro_batch_size = 2
data_parallel = 2
max_len = 128
global_batch = 32
warmup = "1.5k examples"
eval_every = 100
log_every_steps = 10

[optim]
lr = 0.001
grad_accum = 8
"#;

#[test]
fn user_struct_plans_from_toml() {
    let t = train(GOOD_TRAIN);
    let plan = t.plan().expect("valid plan");
    // `accum::plan::global-batch`: m=2, A=8, D=2 → B=32; L=128 → T=4096.
    assert_eq!(plan, Plan::new(2, 8, 2).unwrap().with_seq_len(128).unwrap());
    assert_eq!(plan.effective_batch().get(), 32);
    assert_eq!(plan.tokens_per_update().map(|t| t.get()), Some(4096));
    assert_eq!(t.validate(), Ok(accum::Findings::default()));
    assert_eq!(plan.accumulation(), 8);
    let checked = t.checked().expect("valid plan");
    assert_eq!(checked.plan(), &plan);
    assert!(checked.staged().is_constant());
    assert!(checked.warnings().is_empty());
}

#[test]
fn mismatch_is_reported_at_the_global_batch_field() {
    let t = train(&GOOD_TRAIN.replace("global_batch = 32", "global_batch = 30"));
    let findings = t.validate().unwrap_err();
    assert_eq!(findings.paths(), vec!["global_batch"]);
    let f = findings.iter().next().unwrap();
    assert_eq!(f.code, Code::GlobalBatch);
    assert_eq!(f.role, Some(Role::GlobalBatch));
    assert_eq!(
        f.message,
        "global_batch 30 ≠ micro_batch 2 × accumulation 8 × replicas 2 = 32; 30 is not a multiple of m·D = 4"
    );
    assert_eq!(f.label, "≠ 2 × 8 × 2 = 32");
    assert_eq!(
        f.fix.as_ref().map(|f| f.text.as_str()),
        Some(
            "keep global_batch = 30 with micro_batch = 1 and accumulation = 15; \
             or use global_batch = 28 (accumulation = 7) or 32 (accumulation = 8)"
        )
    );
    // The factors, at the user's own field names.
    let related: Vec<String> = f.related.iter().map(|r| r.path.to_string()).collect();
    assert_eq!(
        related,
        ["micro_batch_size", "optim.grad_accum", "data_parallel"]
    );
    assert!(t.plan().is_err());
}

#[test]
fn every_zero_is_reported_with_its_path() {
    let t = train(
        &GOOD_TRAIN
            .replace("micro_batch_size = 2", "micro_batch_size = 0")
            .replace("grad_accum = 8", "grad_accum = 0")
            .replace("max_len = 128", "max_len = 0"),
    );
    let findings = t.validate().unwrap_err();
    assert_eq!(
        findings.paths(),
        vec!["micro_batch_size", "max_len", "optim.grad_accum"]
    );
    let text = findings.to_string();
    assert!(text.starts_with("3 problems in the config:\n"), "{text}");
    assert!(
        text.contains("  - optim.grad_accum: accumulation is 0, and every factor of the plan must be at least 1; set `optim.grad_accum` to 1 or more\n"),
        "{text}"
    );
}

#[test]
fn roles_list_paths_and_units() {
    let roles = Train::roles();
    let paths: Vec<(Role, String, bool)> = roles
        .iter()
        .map(|r| (r.role, r.path.to_string(), r.optional))
        .collect();
    assert_eq!(
        paths,
        vec![
            (Role::MicroBatch, "micro_batch_size".to_owned(), false),
            (Role::Replicas, "data_parallel".to_owned(), false),
            (Role::SeqLen, "max_len".to_owned(), true),
            (Role::GlobalBatch, "global_batch".to_owned(), true),
            (Role::Accumulation, "optim.grad_accum".to_owned(), false),
        ]
    );
    let units: Vec<(&str, Option<UnitKind>)> = Train::FIELDS
        .iter()
        .filter(|f| f.role.is_none() && f.nested.is_none())
        .map(|f| (f.name, f.unit))
        .collect();
    assert_eq!(
        units,
        vec![
            ("eval_every", Some(UnitKind::Update)),
            ("log_every_steps", Some(UnitKind::Update)),
        ]
    );
}

const GOOD_CONFIG: &str = r#"
[run]
name = "tiny"

[batch]
micro_batch = 8
accumulation = 4
global_batch = 2048
seq_len = 4096

[parallel]
world_size = 256
tensor = 2
pipeline = 2
"#;

#[test]
fn training_config_with_a_layout() {
    // `accum::plan::global-batch`: 256 devices / (tp 2 × pp 2) = 64 replicas; m=8, A=4 → B=2048, T=8,388,608.
    let c = config(GOOD_CONFIG);
    assert_eq!(c.validate(), Ok(accum::Findings::default()));
    let plan = c.plan().expect("valid");
    assert_eq!(plan.replicas(), 64);
    assert_eq!(plan.effective_batch().get(), 2048);
    assert_eq!(plan.tokens_per_update().map(|t| t.get()), Some(8_388_608));
    assert_eq!(plan.layout().map(|l| l.world_size), Some(256));
}

#[test]
fn training_config_with_replicas_only() {
    let c =
        config("[run]\nname = \"dp\"\n[batch]\nmicro_batch = 2\naccumulation = 8\nreplicas = 2\n");
    assert_eq!(c.plan().map(|p| p.effective_batch().get()), Ok(32));
    assert_eq!(c.parallel, None);
}

#[test]
fn neither_replicas_nor_world_size_names_both_fields() {
    let c = config("[run]\nname = \"x\"\n[batch]\nmicro_batch = 2\naccumulation = 8\n");
    let findings = c.validate().unwrap_err();
    assert_eq!(findings.paths(), vec!["batch.replicas"]);
    let f = findings.iter().next().unwrap();
    assert_eq!(f.code, Code::Missing);
    assert_eq!(
        f.fix.as_ref().map(|f| f.text.as_str()),
        Some("set `batch.replicas` (data-parallel copies) or `parallel.world_size` (all devices)")
    );
}

#[test]
fn layout_not_divisible_is_reported_at_world_size() {
    let c = config(&GOOD_CONFIG.replace("world_size = 256", "world_size = 254"));
    let findings = c.validate().unwrap_err();
    assert_eq!(findings.paths(), vec!["parallel.world_size"]);
    let f = findings.iter().next().unwrap();
    assert_eq!(f.code, Code::Layout);
    assert_eq!(
        f.fix.as_ref().map(|f| f.text.as_str()),
        Some("use world_size = 252 (63 replicas) or 256 (64 replicas)")
    );
    let related: Vec<(String, &str)> = f
        .related
        .iter()
        .map(|r| (r.path.to_string(), r.label.as_str()))
        .collect();
    assert_eq!(
        related,
        [
            ("parallel.tensor".to_owned(), "tensor_parallel 2"),
            ("parallel.pipeline".to_owned(), "pipeline_parallel 2")
        ]
    );
}

#[test]
fn all_findings_at_once_across_sections() {
    let c = config(
        r#"
[run]
name = "broken"
[batch]
micro_batch = 0
accumulation = 0
replicas = 4
[parallel]
world_size = 8
tensor = 0
"#,
    );
    let findings = c.validate().unwrap_err();
    assert_eq!(
        findings.paths(),
        vec!["batch.micro_batch", "batch.accumulation", "parallel.tensor"]
    );
}

#[test]
fn replicas_disagreeing_with_the_layout() {
    let c = config(&GOOD_CONFIG.replace("[batch]\n", "[batch]\nreplicas = 32\n"));
    let findings = c.validate().unwrap_err();
    assert_eq!(findings.paths(), vec!["batch.replicas"]);
    assert!(
        findings
            .iter()
            .next()
            .unwrap()
            .message
            .starts_with("replicas 32 disagrees with world_size 256"),
        "{findings}"
    );
}

#[test]
fn training_config_roles() {
    let roles: Vec<RoleField> = TrainingConfig::roles();
    let paths: Vec<String> = roles.iter().map(|r| r.path.to_string()).collect();
    assert_eq!(
        paths,
        vec![
            "batch.micro_batch",
            "batch.accumulation",
            "batch.replicas",
            "batch.global_batch",
            "batch.seq_len",
            "parallel.world_size",
            "parallel.tensor",
            "parallel.pipeline",
            "parallel.context",
        ]
    );
    // Everything under the optional [parallel] section is optional.
    assert!(
        roles
            .iter()
            .filter(|r| r.path.starts_with(&FieldPath::parse("parallel")))
            .all(|r| r.optional)
    );
    assert!(!roles[0].optional);
}

const MICRO: u64 = 4;
const ACCUM: u32 = 2;

#[derive(AccumConfig, JsonSchema)]
#[accum(micro_batch = MICRO, accumulation = ACCUM, replicas = 4, global_batch = 32, seq_len = 512)]
struct Fixed {
    #[allow(dead_code)]
    name: String,
}

#[derive(AccumConfig)]
#[accum(
    micro_batch = 1,
    accumulation = 16,
    world_size = 64,
    tensor_parallel = 8
)]
struct FixedLayout {}

// The plan is usable in const context.
const FIXED_BATCH: u64 = <Fixed as ConstPlan>::PLAN.effective_batch().get();

#[test]
fn constant_plans_in_const_context() {
    assert_eq!(FIXED_BATCH, 32);
    assert_eq!(<Fixed as ConstPlan>::PLAN.seq_len(), Some(512));
    let fixed = Fixed {
        name: String::new(),
    };
    assert_eq!(fixed.plan(), Ok(<Fixed as ConstPlan>::PLAN));
    assert_eq!(fixed.validate(), Ok(accum::Findings::default()));
    assert!(Fixed::roles().is_empty());
    let layout = <FixedLayout as ConstPlan>::PLAN;
    assert_eq!(
        (layout.replicas(), layout.effective_batch().get()),
        (8, 128)
    );
    assert_eq!(FixedLayout {}.plan(), Ok(layout));
}

#[test]
fn constants_are_listed_in_the_schema() {
    let schema = accum::schema_for::<Fixed>();
    assert_eq!(
        schema.as_value()["x-accum-constants"],
        serde_json::json!({
            "micro_batch": 4, "accumulation": 2, "replicas": 4, "global_batch": 32, "seq_len": 512
        })
    );
}

#[test]
fn schema_of_the_training_config() {
    let schema = accum::schema_for::<TrainingConfig>();
    let value = schema.as_value();
    assert_eq!(
        value.pointer("/$defs/BatchSection/properties/accumulation/x-accum-role"),
        Some(&serde_json::json!("accumulation"))
    );
    assert_eq!(
        value.pointer("/$defs/ParallelSection/properties/world_size/x-accum-role"),
        Some(&serde_json::json!("world_size"))
    );
    insta::assert_json_snapshot!("training_config_schema", value);
}

#[test]
fn schema_of_a_user_struct() {
    let schema = accum::schema_for::<Train>();
    let value = schema.as_value();
    assert_eq!(
        value.pointer("/properties/micro_batch_size/x-accum-role"),
        Some(&serde_json::json!("micro_batch"))
    );
    assert_eq!(
        value.pointer("/properties/log_every_steps/x-accum-unit"),
        Some(&serde_json::json!("update"))
    );
    assert_eq!(
        value.pointer("/$defs/OptimSection/properties/grad_accum/x-accum-role"),
        Some(&serde_json::json!("accumulation"))
    );
    insta::assert_json_snapshot!("user_struct_schema", value);
}

/// A fine-tune config as users write them: nested sections, a device layout
/// with tensor parallelism, and lengths in several units with their uses.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, AccumConfig)]
struct FineTune {
    #[accum(nested)]
    batch: FineTuneBatch,
    #[accum(nested)]
    cluster: Cluster,
    #[accum(nested)]
    schedule: FineTuneSchedule,
    #[accum(every)]
    eval_every: Updates,
    #[accum(every, unit = "example")]
    save_every_examples: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(section)]
struct FineTuneBatch {
    #[accum(micro_batch)]
    micro: u32,
    #[accum(accumulation)]
    accum: Option<u32>,
    #[accum(global_batch)]
    global: Option<u32>,
    #[accum(seq_len)]
    max_len: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(section)]
struct Cluster {
    #[accum(world_size)]
    gpus: u32,
    #[accum(tensor_parallel)]
    tp: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(section)]
struct FineTuneSchedule {
    #[accum(warmup)]
    warmup: Span,
    #[accum(total)]
    total: Span,
    /// Not compared with the run: no use declared.
    cooldown: Option<Span>,
}

const GOOD_FINE_TUNE: &str = r#"
eval_every = 50
save_every_examples = 6400

[batch]
micro = 4
accum = 8
global = 512
max_len = 2048

[cluster]
gpus = 32
tp = 2

[schedule]
warmup = "100 updates"
total = "2000 updates"
"#;

fn fine_tune(text: &str) -> FineTune {
    toml::from_str(text).expect("valid TOML for FineTune")
}

#[test]
fn a_good_fine_tune_validates_and_plans() {
    let f = fine_tune(GOOD_FINE_TUNE);
    assert_eq!(f.validate(), Ok(accum::Findings::default()));
    // 32 GPUs / tp 2 = 16 replicas; 4 × 8 × 16 = 512.
    assert_eq!(f.plan().map(|p| p.effective_batch().get()), Ok(512));
}

#[test]
fn three_independent_problems_are_three_findings() {
    // micro = 0, 30 GPUs that tp 4 does not divide, and a global batch of
    // 500 that accumulation 8 does not divide: three findings, each at its
    // field, with its code and fix.
    let f = fine_tune(
        &GOOD_FINE_TUNE
            .replace("micro = 4", "micro = 0")
            .replace("gpus = 32", "gpus = 30")
            .replace("tp = 2", "tp = 4")
            .replace("global = 512", "global = 500"),
    );
    let findings = f.validate().unwrap_err();
    assert_eq!(
        findings.paths(),
        ["batch.micro", "cluster.gpus", "batch.global"]
    );
    assert_eq!(
        findings.codes(),
        [Code::Zero, Code::Layout, Code::GlobalBatch]
    );
    let texts: Vec<String> = findings
        .iter()
        .map(|f| format!("{} | {}", f.message, f.fix.as_ref().map_or("", |x| &x.text)))
        .collect();
    assert_eq!(
        texts,
        [
            "micro_batch is 0, and every factor of the plan must be at least 1 | set `batch.micro` to 1 or more",
            "world_size 30 is not divisible by tensor 4 × pipeline 1 × context 1 = 4: devices that share one model copy do not multiply the batch | use world_size = 28 (7 replicas) or 32 (8 replicas)",
            "global_batch 500 is not a multiple of accumulation 8, so no value of the other factors gives B = m·A·D | use global_batch = 496 or 504",
        ]
    );
    assert!(f.plan().is_err());
}

#[test]
fn token_lengths_need_a_fixed_seq_len() {
    let f = fine_tune(
        &GOOD_FINE_TUNE
            .replace("max_len = 2048\n", "")
            .replace("warmup = \"100 updates\"", "warmup = \"2M tokens\""),
    );
    let findings = f.validate().unwrap_err();
    assert_eq!(findings.paths(), ["schedule.warmup"]);
    assert_eq!(findings.codes(), [Code::SeqLen]);
    let finding = findings.iter().next().unwrap();
    assert_eq!(
        finding.fix.as_ref().map(|f| f.text.as_str()),
        Some(
            "set `batch.max_len` (tokens per example), or give `schedule.warmup` in updates or examples"
        )
    );
    // With the length fixed, 2M tokens are 2,000,000 / (512 × 2048) ≈ 1.9
    // updates, well within the run.
    let f =
        fine_tune(&GOOD_FINE_TUNE.replace("warmup = \"100 updates\"", "warmup = \"2M tokens\""));
    assert_eq!(f.validate(), Ok(accum::Findings::default()));
}

#[test]
fn a_warmup_longer_than_the_run_is_reported_through_the_plan() {
    // One update is 512 examples; 2000 updates are 1,024,000 examples.
    let f = fine_tune(
        &GOOD_FINE_TUNE.replace("warmup = \"100 updates\"", "warmup = \"1.1M examples\""),
    );
    let findings = f.validate().unwrap_err();
    assert_eq!(findings.paths(), ["schedule.warmup"]);
    assert_eq!(findings.codes(), [Code::Warmup]);
    let finding = findings.iter().next().unwrap();
    assert_eq!(
        finding.message,
        "`schedule.warmup` is 1100k examples, longer than the run (`schedule.total` is 2k updates = 1024k examples)"
    );
    assert_eq!(finding.related[0].path.to_string(), "schedule.total");
}

#[test]
fn an_interval_longer_than_the_run_is_reported_at_its_field() {
    let f = fine_tune(
        &GOOD_FINE_TUNE
            .replace("eval_every = 50", "eval_every = 2500")
            .replace(
                "save_every_examples = 6400",
                "save_every_examples = 2000000",
            )
            .replace(
                "total = \"2000 updates\"",
                "total = \"2000 updates\"\ncooldown = \"5000 updates\"",
            ),
    );
    let findings = f.validate().unwrap_err();
    // The cooldown has no declared use and is not compared.
    assert_eq!(findings.paths(), ["eval_every", "save_every_examples"]);
    assert_eq!(findings.codes(), [Code::Every, Code::Every]);
}

#[test]
fn lengths_with_their_uses_are_in_the_schema() {
    let schema = accum::schema_for::<FineTune>();
    let value = schema.as_value();
    assert_eq!(
        value.pointer("/$defs/FineTuneSchedule/properties/warmup/x-accum-span"),
        Some(&serde_json::json!("warmup"))
    );
    assert_eq!(
        value.pointer("/properties/eval_every/x-accum-span"),
        Some(&serde_json::json!("every"))
    );
    assert_eq!(
        value.pointer("/properties/save_every_examples/x-accum-unit"),
        Some(&serde_json::json!("example"))
    );
    assert_eq!(value.get("x-accum-variable-length"), None);
    let canonical = accum::schema_for::<TrainingConfig>();
    assert_eq!(
        canonical.as_value().get("x-accum-variable-length"),
        Some(&serde_json::json!(true))
    );
}

/// Every object in a schema that carries `x-accum-role`, with its path.
fn role_properties<'a>(
    value: &'a serde_json::Value,
    path: String,
    out: &mut Vec<(String, &'a serde_json::Value)>,
) {
    match value {
        serde_json::Value::Object(map) => {
            if map.contains_key("x-accum-role") {
                out.push((path.clone(), value));
            }
            for (key, child) in map {
                role_properties(child, format!("{path}/{key}"), out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                role_properties(child, format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn plan_factors_are_at_least_one_in_every_schema() {
    for schema in [
        accum::schema_for::<TrainingConfig>(),
        accum::schema_for::<Train>(),
        accum::schema_for::<FineTune>(),
    ] {
        let mut roles = Vec::new();
        role_properties(schema.as_value(), String::new(), &mut roles);
        assert!(roles.len() >= 4, "{roles:?}");
        for (path, property) in roles {
            // A batch ramp-up field is marked too, but it is no plan factor.
            if matches!(property["x-accum-role"].as_str(), Some("stages" | "ramp")) {
                continue;
            }
            assert_eq!(property["minimum"], 1, "{path}");
        }
    }
}

#[test]
fn ramp_up_fields_are_marked_with_their_role() {
    let schema = accum::schema_for::<TrainingConfig>();
    let batch = &schema.as_value()["$defs"]["BatchSection"]["properties"];
    assert_eq!(batch["stages"]["x-accum-role"], "stages");
    assert_eq!(batch["ramp"]["x-accum-role"], "ramp");
    assert!(batch["stages"].get("minimum").is_none());
    let fields: Vec<(&str, Option<accum::RampRole>)> = <TrainingConfig as AccumConfig>::FIELDS
        .iter()
        .filter_map(|f| f.nested)
        .flatten()
        .filter(|f| f.ramp.is_some())
        .map(|f| (f.name, f.ramp))
        .collect();
    assert_eq!(
        fields,
        [
            ("stages", Some(accum::RampRole::Stages)),
            ("ramp", Some(accum::RampRole::Ramp))
        ]
    );
}

#[test]
fn the_canonical_config_ramps_up_through_the_derive() {
    let c = config(
        "[batch]\nmicro_batch = 4\naccumulation = 16\nreplicas = 2\nseq_len = 1000\n\
         [batch.ramp]\nstart = 32\nincrement = 32\nover = \"9600 examples\"\n",
    );
    let mut ramps = Vec::new();
    c.ramp_values(&FieldPath::root(), &mut ramps);
    assert_eq!(ramps.len(), 1);
    assert_eq!(ramps[0].path, FieldPath::parse("batch.ramp"));
    let staged = c.staged_plan().expect("a valid ramp");
    let batches: Vec<u64> = staged
        .stages()
        .iter()
        .map(|s| s.plan().effective_batch().get())
        .collect();
    assert_eq!(batches, [32, 64, 96, 128]);
    // Megatron's rule: 3 increments over 9,600 examples, 3,200 each:
    // 100 updates of 32, then 50 of 64, then 34 of 96 (3,264 examples: the
    // batch changes once more than 3,200 are consumed).
    let starts: Vec<u64> = staged.stages().iter().map(|s| s.start().get()).collect();
    assert_eq!(starts, [0, 100, 150, 184]);

    // A plan problem stops the staged plan with every finding of the plan.
    let broken = config(
        "[batch]\nmicro_batch = 0\naccumulation = 16\nreplicas = 2\n\
         [batch.ramp]\nstart = 32\nincrement = 32\nover = \"9600 examples\"\n",
    );
    let findings = broken.staged_plan().expect_err("m = 0");
    assert_eq!(findings.codes(), [Code::Zero]);
}

#[test]
fn warnings_alone_validate_ok_and_are_kept() {
    // A warmup in updates under a ramp-up is a warning: `validate` is Ok,
    // with the warning in it, and the config plans.
    let c = config(
        "[batch]\nmicro_batch = 8\naccumulation = 16\nreplicas = 4\nseq_len = 2048\n\
         [[batch.stages]]\nglobal_batch = 128\nuntil = \"128k examples\"\n\
         [schedule]\nwarmup = \"2000 updates\"\ntotal = \"10B tokens\"\n",
    );
    let warnings = c.validate().expect("warnings only");
    assert_eq!(warnings.codes(), [Code::StageShift]);
    assert_eq!(warnings.paths(), ["schedule.warmup"]);
    assert!(!warnings.has_errors());
    assert_eq!(c.plan().map(|p| p.effective_batch().get()), Ok(512));
    // An error beside it: Err, with both.
    let both = config(
        "[batch]\nmicro_batch = 8\naccumulation = 16\nreplicas = 4\nseq_len = 2048\n\
         [[batch.stages]]\nglobal_batch = 128\nuntil = \"128k examples\"\n\
         [schedule]\nwarmup = \"2000 updates\"\ntotal = \"10B tokens\"\n\
         [log]\nevery = \"20B tokens\"\n",
    );
    let all = both
        .validate()
        .expect_err("an interval longer than the run");
    assert!(all.has_errors());
    assert_eq!(all.paths(), ["log.every", "schedule.warmup"]);
    assert_eq!((all.errors().count(), all.warnings().count()), (1, 1));
}

#[test]
fn schemas_have_an_id_and_a_version() {
    let schema = accum::schema_for::<TrainingConfig>();
    let value = schema.as_value();
    assert_eq!(value["$id"], "urn:accum:schema:v1:TrainingConfig");
    assert_eq!(value["x-accum-schema-version"], accum::SCHEMA_VERSION);
    assert_eq!(
        accum::schema_for::<FineTune>().as_value()["$id"],
        "urn:accum:schema:v1:FineTune"
    );
}

#[test]
fn the_run_section_is_optional_and_named_by_the_loader() {
    let c = config("[batch]\nmicro_batch = 2\naccumulation = 8\nreplicas = 2\n");
    assert_eq!(c.validate(), Ok(accum::Findings::default()));
    assert_eq!(c.run.name, None);
    assert_eq!(c.run.name_or("quickstart"), "quickstart");
    // Written back, an empty [run] is left out.
    let text = toml::to_string(&c).expect("serialize");
    assert!(!text.contains("[run]"), "{text}");
    let named = config(
        "[run]\nname = \"tiny\"\n[batch]\nmicro_batch = 2\naccumulation = 8\nreplicas = 2\n",
    );
    assert_eq!(named.run.name_or("quickstart"), "tiny");
    let schema = accum::schema_for::<TrainingConfig>();
    let required = schema.as_value()["required"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(required, [serde_json::json!("batch")]);
}

/// A bare rule id ("`accum::run::loss-scale`", "(`accum::sheet`)") in `text`: the letter R, not inside a
/// word, followed by a digit.
fn rule_ids(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len())
        .filter(|&i| {
            chars[i] == 'R'
                && chars.get(i + 1).is_some_and(char::is_ascii_digit)
                && (i == 0 || !chars[i - 1].is_alphanumeric())
        })
        .map(|i| {
            chars[i.saturating_sub(30)..(i + 4).min(chars.len())]
                .iter()
                .collect()
        })
        .collect()
}

#[test]
fn user_facing_text_has_no_bare_rule_ids() {
    use accum::plan::{LastGroup, Layout, PlanInput, Rounding};
    let mut texts: Vec<String> = Vec::new();
    // Codes, as `accum explain` lists them.
    texts.extend(Code::ALL.iter().map(|c| c.summary().to_owned()));
    // Plan errors, from every kind of input that produces one.
    let p = Plan::new(2, 8, 2).unwrap();
    let errors = [
        Plan::new(0, 1, 1).unwrap_err(),
        Plan::new(u64::MAX, 2, 1).unwrap_err(),
        Layout::new(64, 3, 2, 1).replicas().unwrap_err(),
        PlanInput {
            micro_batch: Some(2),
            replicas: Some(2),
            global_batch: Some(30),
            ..PlanInput::default()
        }
        .resolve()
        .unwrap_err(),
        PlanInput {
            micro_batch: Some(2),
            accumulation: Some(8),
            replicas: Some(2),
            global_batch: Some(30),
            ..PlanInput::default()
        }
        .resolve()
        .unwrap_err(),
        PlanInput {
            micro_batch: Some(2),
            accumulation: Some(8),
            replicas: Some(3),
            layout: Some(Layout::new(8, 2, 1, 1)),
            ..PlanInput::default()
        }
        .resolve()
        .unwrap_err(),
        PlanInput::default().resolve().unwrap_err(),
        p.to_updates(1000, UnitKind::Token, Rounding::Up)
            .unwrap_err(),
        p.to_updates(33, UnitKind::Example, Rounding::Exact)
            .unwrap_err(),
        p.epoch(accum::Examples::new(100), LastGroup::Error)
            .unwrap_err(),
        p.replan(0).unwrap_err(),
    ];
    for err in &errors {
        texts.extend([err.to_string(), err.message(), err.fix().text, err.label()]);
    }
    // Spans that cannot be read.
    for bad in [
        "100",
        "100 steps",
        "100 epochs",
        "x updates",
        "1.5 updates",
        "",
    ] {
        let err = bad.parse::<Span>().unwrap_err();
        texts.extend([err.to_string(), err.message(), err.fix()]);
    }
    // Findings of a config with a mistake in every section, settings included.
    let broken = config(
        r#"
[batch]
micro_batch = 0
accumulation = 8
global_batch = 30
seq_len = 0
[parallel]
world_size = 64
tensor = 3
[schedule]
warmup = "300 updates"
total = "200 updates"
[log]
every = "500 updates"
[data]
examples = 0
min_len = 8
max_len = 4
[optimizer]
lr = -1.0
"#,
    );
    let findings = broken.check().unwrap_err();
    assert!(findings.len() >= 8, "{findings}");
    texts.push(findings.to_string());
    texts.extend(findings.iter().map(|f| f.label.clone()));
    texts.extend(
        findings
            .iter()
            .flat_map(|f| f.related.iter().map(|r| r.label.clone())),
    );
    // Schemas: every description an editor shows.
    for schema in [
        accum::schema_for::<TrainingConfig>(),
        accum::schema_for::<Train>(),
        accum::schema_for::<FineTune>(),
    ] {
        texts.push(schema.as_value().to_string());
    }
    let found: Vec<String> = texts.iter().flat_map(|t| rule_ids(t)).collect();
    assert!(found.is_empty(), "bare rule ids: {found:#?}");
    // The checker itself finds them.
    assert_eq!(rule_ids("scaling (R7) is").len(), 1);
    assert!(rule_ids("fp16 GRU2 R").is_empty());
}

#[test]
fn span_values_list_every_length_with_its_path_and_use() {
    let mut out = Vec::new();
    fine_tune(GOOD_FINE_TUNE).span_values(&FieldPath::root(), &mut out);
    let listed: Vec<(String, String, Option<accum::SpanUse>)> = out
        .iter()
        .map(|v| (v.path.to_string(), v.span.to_string(), v.span_use))
        .collect();
    // The absent optional `cooldown` is not listed.
    assert_eq!(
        listed,
        [
            (
                "schedule.warmup".to_owned(),
                "100 updates".to_owned(),
                Some(accum::SpanUse::Warmup)
            ),
            (
                "schedule.total".to_owned(),
                "2k updates".to_owned(),
                Some(accum::SpanUse::Total)
            ),
            (
                "eval_every".to_owned(),
                "50 updates".to_owned(),
                Some(accum::SpanUse::Every)
            ),
            (
                "save_every_examples".to_owned(),
                "6400 examples".to_owned(),
                Some(accum::SpanUse::Every)
            ),
        ]
    );
    let mut out = Vec::new();
    config(GOOD_CONFIG).span_values(&FieldPath::root(), &mut out);
    let paths: Vec<String> = out.iter().map(|v| v.path.to_string()).collect();
    // Without `total` the run has its demonstration length, and nothing is
    // compared with it.
    assert_eq!(paths, ["schedule.warmup", "log.every"]);
}
