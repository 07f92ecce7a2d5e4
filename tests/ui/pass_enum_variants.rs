// `accum::schema::enum`: a config's enum may have unit, struct, newtype and
// tuple variants, renamed or not, and inside a section. The derive accepts
// them beside the plan's roles, and a wrong choice lists every variant as
// the file writes it, with a did-you-mean that says how to write a table.
use accum::AccumConfig;

#[derive(Debug, AccumConfig, serde::Deserialize, schemars::JsonSchema)]
#[accum(section)]
struct Batch {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(replicas)]
    replicas: u32,
    reduce: Reduce,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Reduce {
    Mean,
    #[serde(rename = "sum-then-divide")]
    SumThenDivide { by: u32 },
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Head {
    Tied,
    Separate { width: u32, bias: bool },
    Shared(String),
    Lora(u32, f32),
}

#[derive(Debug, AccumConfig, serde::Deserialize, schemars::JsonSchema)]
struct Train {
    #[accum(nested)]
    batch: Batch,
    head: Head,
}

const GOOD: &str = r#"
head = { separate = { width = 64, bias = false } }

[batch]
micro_batch = 4
accumulation = 2
replicas = 2
reduce = "mean"
"#;

fn main() {
    let loaded = accum::load_config_str::<Train>("train.toml", GOOD).expect("a good config");
    assert_eq!(loaded.plan().effective_batch().get(), 16);
    assert!(matches!(loaded.config().head, Head::Separate { width: 64, bias: false }));

    // A misspelt struct variant: every variant is listed, and the
    // did-you-mean shows the table it takes.
    let text = GOOD.replace("head = { separate = { width = 64, bias = false } }", "head = \"seperate\"");
    let err = accum::load_config_str::<Train>("train.toml", &text).expect_err("a wrong choice");
    let shown = err.render(false);
    for variant in ["\"tied\"", "separate { bias, width }", "shared (one value)", "lora [2 items]"] {
        assert!(shown.contains(variant), "{variant} is not listed: {shown}");
    }
    assert!(shown.contains("did you mean `separate`?"), "{shown}");
    assert!(shown.contains("head = { separate = { bias = …, width = … } }"), "{shown}");

    // A renamed struct variant inside a section, in YAML.
    let yaml = "head: tied\nbatch:\n  micro_batch: 4\n  accumulation: 2\n  replicas: 2\n  reduce: sum-then-divid\n";
    let err = accum::load_config_str::<Train>("train.yaml", yaml).expect_err("a wrong choice");
    let shown = err.render(false);
    assert!(shown.contains("\"mean\""), "{shown}");
    assert!(shown.contains("sum-then-divide { by }"), "{shown}");
    assert!(shown.contains("did you mean `sum-then-divide`?"), "{shown}");
}
