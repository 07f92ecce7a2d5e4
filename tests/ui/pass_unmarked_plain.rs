// Fields of other types without `accum` attributes are fine when those
// types are no config: enums and plain structs. A section that derives
// AccumConfig is marked `nested`, or left out with `skip`.
use accum::{AccumConfig, Span, Updates};

#[derive(Clone, Copy)]
enum Kind {
    Cosine,
}

struct Paths {
    out: String,
}

#[derive(AccumConfig)]
#[accum(section)]
struct Logging {
    every: Updates,
}

#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(replicas)]
    replicas: u32,
    kind: Kind,
    paths: Paths,
    #[accum(skip)]
    logging: Logging,
    warmup: Span,
}

fn main() {
    let train = Train {
        micro_batch: 2,
        accumulation: 4,
        replicas: 1,
        kind: Kind::Cosine,
        paths: Paths { out: "runs".into() },
        logging: Logging { every: Updates::new(10) },
        warmup: "10 updates".parse().unwrap(),
    };
    assert_eq!(train.plan().unwrap().effective_batch().get(), 8);
    let _ = (train.kind, train.paths.out, train.logging.every, train.warmup);
}
