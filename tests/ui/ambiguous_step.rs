// `accum::span`: a "step" is an update in one framework and a microbatch in the next.
use accum::AccumConfig;

#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation_steps: u32, // a role says what it counts: fine
    #[accum(replicas)]
    replicas: u32,
    warmup_steps: u64,
    max_iters: u32,
    log_every_steps: Option<usize>,
    #[accum(unit = "update")]
    save_every_steps: u64, // the escape hatch: fine
}

fn main() {}
