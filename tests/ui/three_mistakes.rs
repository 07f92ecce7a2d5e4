// Three mistakes, three errors, one build (all errors are collected).
use accum::AccumConfig;

#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch)]
    micro_batch: i32,
    #[accum(accumulation)]
    accumulation: u32,
    warmup_steps: u64,
}

fn main() {}
