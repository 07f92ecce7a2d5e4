// `accum::plan::zero`: every factor of the plan is at least 1.
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(micro_batch = 2, accumulation = 0, replicas = 2)]
struct Train {}

fn main() {}
