// A misspelt key on the struct gets a did-you-mean, and nothing else
// follows from it (the misspelt role or `section` counts as meant).
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(sectoin)]
struct Optim {
    #[accum(accumulation)]
    grad_accum: u32,
}

#[derive(AccumConfig)]
#[accum(micro_bach = 2, accumulation = 4, replicas = 1, crat = "accum")]
struct Train {
    lr: f64,
}

fn main() {}
