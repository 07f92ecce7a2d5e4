// `accum::plan::global-batch`, batch ramp-up: a list of stages in a nested section and a linear
// ramp at the root; the plan's roles give the full batch, the ramp-up the
// smaller batches before it. Both given at run time is a finding at the ramp.
use accum::plan::{LinearRamp, StageSpec};
use accum::{AccumConfig, Code, Updates};

#[derive(AccumConfig, serde::Deserialize, schemars::JsonSchema)]
#[accum(section)]
struct Batch {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(stages)]
    #[serde(default)]
    warmup: Vec<StageSpec>,
}

#[derive(AccumConfig, serde::Deserialize, schemars::JsonSchema)]
#[accum(replicas = 2)]
struct Train {
    #[accum(nested)]
    batch: Batch,
    #[accum(ramp)]
    #[serde(rename = "rampup")]
    ramp: Option<LinearRamp>,
}

fn main() {
    let train: Train = toml::from_str(
        "[batch]\nmicro_batch = 4\naccumulation = 16\n\
         [[batch.warmup]]\nglobal_batch = 32\nuntil = \"10 updates\"\n",
    )
    .expect("valid TOML");
    assert_eq!(train.validate(), Ok(accum::Findings::default()));
    let staged = train.staged_plan().expect("valid stages");
    assert_eq!(staged.stages()[1].start(), Updates::new(10));
    assert_eq!(staged.final_plan().effective_batch().get(), 128);

    let both = Train {
        ramp: Some(LinearRamp { start: 32, increment: 32, over: "1k examples".parse().expect("span") }),
        ..train
    };
    let findings = both.validate().expect_err("two ramp-ups");
    assert_eq!(findings.codes(), [Code::StageOrder]);
    assert_eq!(findings.paths(), ["rampup"]);

    let schema = accum::schema_for::<Train>();
    let role = |pointer: &str| schema.as_value().pointer(pointer).cloned();
    assert_eq!(role("/properties/rampup/x-accum-role"), Some("ramp".into()));
    assert_eq!(role("/$defs/Batch/properties/warmup/x-accum-role"), Some("stages".into()));
    let _ = both.batch.warmup.len();
}
