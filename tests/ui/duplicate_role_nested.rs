// `accum::plan::global-batch`: a role is given once in the whole config, nested sections included
// (checked by a const assertion over the sections' field tables).
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(section)]
struct Optim {
    #[accum(accumulation)]
    grad_accum: u32,
}

#[derive(AccumConfig)]
#[accum(micro_batch = 2, accumulation = 8, replicas = 1)]
struct Train {
    #[accum(nested)]
    optim: Optim,
}

fn main() {}
