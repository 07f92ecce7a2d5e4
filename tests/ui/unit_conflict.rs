// `accum::span`: `unit = "..."` declares the unit of a plain integer; it cannot
// contradict a role or a typed count.
use accum::{AccumConfig, Updates};

#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch, unit = "example")]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(replicas)]
    replicas: u32,
    #[accum(unit = "token")]
    eval_every: Updates,
    #[accum(unit = "update")]
    save_every: Updates, // agrees with the type: fine
}

fn main() {}
