// `accum::plan::replicas`: replicas written beside a layout must equal
// world_size / (tp·pp·cp); the error is on the replicas.
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(micro_batch = 2, accumulation = 4, replicas = 3, world_size = 8, tensor_parallel = 2)]
struct Train {}

fn main() {}
