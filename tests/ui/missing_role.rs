// `accum::plan::global-batch`: the plan needs micro_batch, accumulation, and replicas or world_size.
use accum::AccumConfig;

#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch)]
    micro_batch: u32,
}

fn main() {}
