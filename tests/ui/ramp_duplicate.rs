// `accum::plan::global-batch`, batch ramp-up: a run has one ramp-up; a second field of a kind is
// refused at its attribute, and a field holds the ramp-up and nothing else.
use accum::AccumConfig;
use accum::plan::{LinearRamp, StageSpec};

#[derive(AccumConfig)]
#[accum(micro_batch = 2, replicas = 1)]
struct Train {
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(stages)]
    warmup_stages: Vec<StageSpec>,
    #[accum(stages)]
    stages: Option<Vec<StageSpec>>,
    #[accum(ramp)]
    ramp: LinearRamp,
    #[accum(ramp, stages)]
    both: Option<LinearRamp>,
}

fn main() {}
