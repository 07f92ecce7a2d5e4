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

// The failed derive still emits an empty impl, so this use adds no error.
fn main() {
    let train = Train { micro_batch: 2, accumulation: 8, warmup_steps: 100 };
    let _ = train.validate();
}
