// `accum::plan::global-batch`: roles count examples, microbatches or devices: unsigned integers only.
use accum::AccumConfig;

#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch)]
    micro_batch: i32,
    #[accum(accumulation)]
    accumulation: f32,
    #[accum(replicas)]
    replicas: Option<Option<u32>>,
    #[accum(seq_len)]
    seq_len: String,
}

fn main() {}
