// `#[accum(crate = "...")]`: generated code names the crate given, here
// accum-core directly, as crates that do not depend on the facade do.
use accum_core::{AccumConfig, ConstPlan};

#[derive(accum::AccumConfig)]
#[accum(crate = "accum_core")]
struct Train {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
    #[accum(replicas)]
    replicas: u32,
}

#[derive(accum::AccumConfig)]
#[accum(crate = "::accum_core", micro_batch = 2, accumulation = 8, replicas = 2)]
struct Fixed {}

fn main() {
    let t = Train { micro_batch: 2, accumulation: 8, replicas: 2 };
    assert_eq!(t.plan().unwrap(), <Fixed as ConstPlan>::PLAN);
}
