// `accum::plan::global-batch`: roles may live in nested sections, optional sections and flattened
// sections; paths in findings and roles follow the serialized names.
use accum::AccumConfig;
use accum::plan::Role;

#[derive(AccumConfig, serde::Deserialize)]
#[accum(section)]
struct Optim {
    #[accum(accumulation)]
    #[serde(rename = "gradient_accumulation")]
    grad_accum: u32,
}

#[derive(AccumConfig, serde::Deserialize)]
#[accum(section)]
struct Data {
    #[accum(micro_batch)]
    micro_batch: u32,
}

#[derive(AccumConfig, serde::Deserialize)]
#[accum(section)]
struct Cluster {
    #[accum(replicas)]
    replicas: u32,
}

#[derive(AccumConfig, serde::Deserialize)]
struct Train {
    #[accum(nested)]
    optim: Optim,
    #[accum(nested)]
    #[serde(flatten)]
    data: Data,
    #[accum(nested)]
    cluster: Option<Cluster>,
}

fn main() {
    let train = Train {
        optim: Optim { grad_accum: 0 },
        data: Data { micro_batch: 2 },
        cluster: Some(Cluster { replicas: 2 }),
    };
    let paths: Vec<String> = Train::roles().into_iter().map(|r| r.path.to_string()).collect();
    assert_eq!(paths, ["optim.gradient_accumulation", "micro_batch", "cluster.replicas"]);
    assert_eq!(Train::roles()[2].role, Role::Replicas);
    let findings = train.validate().unwrap_err();
    assert_eq!(findings.paths(), ["optim.gradient_accumulation"]);
    let train = Train { optim: Optim { grad_accum: 8 }, ..train };
    assert_eq!(train.plan().map(|p| p.effective_batch().get()), Ok(32));
    let _ = (train.data.micro_batch, train.cluster.map(|c| c.replicas));
}
