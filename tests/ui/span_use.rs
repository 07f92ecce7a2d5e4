// `warmup`, `total` and `every` mark lengths: a flag on a length field,
// never on a plan role.
use accum::AccumConfig;

#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch, every)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(replicas)]
    replicas: u32,
    #[accum(total = 5)]
    total: accum::Span,
}

fn main() {}
