// `accum::plan::missing`: every unmarked section is named, optional ones
// and those nested a level deeper included; the configs that nest them
// have all their roles, so no "missing role" error follows.
use accum::AccumConfig;

// Only the replicas, through a constant: a section all the same.
#[derive(AccumConfig)]
#[accum(world_size = 8)]
struct Cluster {
    #[accum(tensor_parallel)]
    tp: u32,
}

#[derive(AccumConfig)]
struct Data {
    #[accum(micro_batch)]
    micro_batch: u32,
}

#[derive(AccumConfig)]
struct Optim {
    #[accum(accumulation)]
    grad_accum: u32,
}

// A marked section whose own section is not.
#[derive(AccumConfig)]
#[accum(section)]
struct Schedule {
    #[accum(nested)]
    optim: Optim,
}

#[derive(AccumConfig)]
struct Run {
    #[accum(nested)]
    cluster: Option<Cluster>,
    #[accum(nested)]
    data: Data,
    #[accum(nested)]
    schedule: Schedule,
}

fn main() {}
