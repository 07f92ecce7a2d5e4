// `warmup` marks a length; a float is not one (its unit and wholeness are
// unknown), so the field's type is reported.
use accum::AccumConfig;

#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(replicas)]
    replicas: u32,
    #[accum(warmup)]
    warmup: f64,
}

fn main() {}
