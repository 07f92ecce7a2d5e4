// A nested section must derive AccumConfig itself.
use accum::AccumConfig;

struct Optim {
    grad_accum: u32,
}

#[derive(AccumConfig)]
#[accum(micro_batch = 2, replicas = 1)]
struct Train {
    #[accum(nested)]
    optim: Optim,
}

fn main() {}
