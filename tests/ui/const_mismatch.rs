// `accum::plan::global-batch`: a constant plan must satisfy m·A·D = global_batch.
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(micro_batch = 2, accumulation = 8, replicas = 2, global_batch = 30)]
struct NotAMultiple {}

#[derive(AccumConfig)]
#[accum(micro_batch = 2, accumulation = 8, replicas = 2, global_batch = 28)]
struct WrongAccumulation {}

fn main() {}
