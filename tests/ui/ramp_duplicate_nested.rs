// `accum::plan::global-batch`, batch ramp-up: one ramp-up in the whole config, nested sections
// included (checked by a const assertion over the sections' field tables).
use accum::AccumConfig;
use accum::plan::LinearRamp;

#[derive(AccumConfig)]
#[accum(section)]
struct Batch {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(ramp)]
    ramp: Option<LinearRamp>,
}

#[derive(AccumConfig)]
#[accum(replicas = 1)]
struct Train {
    #[accum(nested)]
    batch: Batch,
    #[accum(ramp)]
    warmup_ramp: Option<LinearRamp>,
}

fn main() {}
