// `accum::plan::global-batch`: `skip` leaves a field out of the plan; with a role or `nested` beside
// it, one of the two is a mistake.
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(section)]
struct Optim {
    #[accum(accumulation)]
    grad_accum: u32,
}

#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch, skip)]
    micro_batch: u32,
    #[accum(replicas)]
    replicas: u32,
    #[accum(skip, nested)]
    optim: Optim,
}

fn main() {}
