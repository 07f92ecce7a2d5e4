// `accum::plan::global-batch`: with nested sections the required roles are checked by a const
// assertion over the sections' field tables.
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(section)]
struct Batch {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(replicas)]
    replicas: u32,
}

#[derive(AccumConfig)]
struct Train {
    #[accum(nested)]
    batch: Batch,
}

fn main() {}
