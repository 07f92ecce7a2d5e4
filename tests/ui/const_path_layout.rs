// `accum::plan::global-batch`: world_size given as a path: the layout check is a const assertion.
use accum::AccumConfig;

const WORLD: u32 = 64;
const TP: u32 = 3;

#[derive(AccumConfig)]
#[accum(micro_batch = 1, accumulation = 4, world_size = WORLD, tensor_parallel = TP)]
struct Train {}

fn main() {}
