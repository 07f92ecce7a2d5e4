// `accum::plan::global-batch`: a role is given once; the error is on the second occurrence.
use accum::AccumConfig;

#[derive(AccumConfig)]
struct TwoFields {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(replicas)]
    dp: u32,
    #[accum(replicas)]
    data_parallel: u32,
}

#[derive(AccumConfig)]
#[accum(accumulation = 8, replicas = 2)]
struct ConstantAndField {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    grad_accum: u32,
}

fn main() {}
