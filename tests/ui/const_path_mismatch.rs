// `accum::plan::global-batch`: constants given as paths are checked by a const assertion whose
// message states the equation.
use accum::AccumConfig;

const MICRO: u64 = 2;
const ACCUM: u64 = 8;
const GLOBAL: u64 = 30;

#[derive(AccumConfig)]
#[accum(micro_batch = MICRO, accumulation = ACCUM, replicas = 2, global_batch = GLOBAL)]
struct Train {}

fn main() {}
