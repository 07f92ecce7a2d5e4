// `accum::plan::global-batch`, batch ramp-up: `#[accum(stages)]` marks a list of stages and
// `#[accum(ramp)]` a linear ramp; any other type is refused at its type,
// naming the types that fit. A type alias the macro cannot judge by name
// is refused by the trait bound.
use accum::AccumConfig;
use accum::plan::StageSpec;

type Ramp = std::collections::HashMap<String, u64>;

#[derive(AccumConfig)]
#[accum(micro_batch = 2, replicas = 1)]
struct Train {
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(stages)]
    stages: Vec<u64>,
    #[accum(ramp)]
    ramp: Option<StageSpec>,
}

#[derive(AccumConfig)]
#[accum(micro_batch = 2, accumulation = 8, replicas = 1)]
struct Aliased {
    #[accum(ramp)]
    ramp: Ramp,
}

fn main() {}
