//! The derive at run time: plans and findings (with field paths) for good and
//! bad values loaded from TOML, role metadata, constant plans in const
//! context, and reviewed snapshots of the annotated JSON Schemas.

use std::num::NonZeroU32;

use accum::config::TrainingConfig;
use accum::{
    AccumConfig, Code, ConstPlan, FieldPath, Plan, Role, RoleField, Span, UnitKind, Updates,
};
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
fn r3_user_struct_plans_from_toml() {
    let t = train(GOOD_TRAIN);
    let plan = t.plan().expect("valid plan");
    // R3: m=2, A=8, D=2 → B=32; L=128 → T=4096.
    assert_eq!(plan, Plan::new(2, 8, 2).unwrap().with_seq_len(128).unwrap());
    assert_eq!(plan.effective_batch().get(), 32);
    assert_eq!(plan.tokens_per_update().map(|t| t.get()), Some(4096));
    assert_eq!(t.validate(), Ok(()));
    let input = t.plan_input();
    assert_eq!(input.global_batch, Some(32));
    assert_eq!(input.accumulation, Some(8));
}

#[test]
fn r3_mismatch_is_reported_at_the_global_batch_field() {
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
        Some("use global_batch 28 (accumulation 7) or 32 (accumulation 8)")
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
fn r3_training_config_with_a_layout() {
    // R3: 256 devices / (tp 2 × pp 2) = 64 replicas; m=8, A=4 → B=2048, T=8,388,608.
    let c = config(GOOD_CONFIG);
    assert_eq!(c.validate(), Ok(()));
    let plan = c.plan().expect("valid");
    assert_eq!(plan.replicas(), 64);
    assert_eq!(plan.effective_batch().get(), 2048);
    assert_eq!(plan.tokens_per_update().map(|t| t.get()), Some(8_388_608));
    assert_eq!(plan.layout().map(|l| l.world_size), Some(256));
}

#[test]
fn r3_training_config_with_replicas_only() {
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
fn r3_layout_not_divisible_is_reported_at_world_size() {
    let c = config(&GOOD_CONFIG.replace("world_size = 256", "world_size = 254"));
    let findings = c.validate().unwrap_err();
    assert_eq!(findings.paths(), vec!["parallel.world_size"]);
    let f = findings.iter().next().unwrap();
    assert_eq!(f.code, Code::Layout);
    assert_eq!(
        f.fix.as_ref().map(|f| f.text.as_str()),
        Some("use world_size 252 (63 replicas) or 256 (64 replicas)")
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
fn r3_constant_plans_in_const_context() {
    assert_eq!(FIXED_BATCH, 32);
    assert_eq!(<Fixed as ConstPlan>::PLAN.seq_len(), Some(512));
    let fixed = Fixed {
        name: String::new(),
    };
    assert_eq!(fixed.plan(), Ok(<Fixed as ConstPlan>::PLAN));
    assert_eq!(fixed.validate(), Ok(()));
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
