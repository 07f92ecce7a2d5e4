// An unknown key is reported on the key, with the keys that exist.
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(micro_batch = 2, warmup = 3)]
struct Train {
    #[accum(accumulaton)]
    accumulation: u32,
    #[accum(replicas)]
    replicas: u32,
}

fn main() {}
