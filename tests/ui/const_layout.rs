// `accum::plan::layout`: world_size must be divisible by tp·pp·cp.
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(micro_batch = 1, accumulation = 4, world_size = 64, tensor_parallel = 3, pipeline_parallel = 2)]
struct Train {}

fn main() {}
