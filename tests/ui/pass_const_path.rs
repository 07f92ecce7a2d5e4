// `accum::plan::global-batch`: constant plans from literals and paths to consts; the plan is usable
// in const context.
use accum::{AccumConfig, ConstPlan};

mod limits {
    pub const MICRO: u32 = 2;
}
const ACCUM: u64 = 8;
const WORLD: usize = 64;

#[derive(AccumConfig)]
#[accum(micro_batch = limits::MICRO, accumulation = ACCUM, replicas = 2, global_batch = 32)]
struct Fixed {}

#[derive(AccumConfig)]
#[accum(micro_batch = 1, accumulation = ACCUM, world_size = WORLD, tensor_parallel = 8, seq_len = 2048)]
struct FixedLayout {}

const B: u64 = <Fixed as ConstPlan>::PLAN.effective_batch().get();
const _: () = assert!(B == 32);
const T: Option<u64> = match <FixedLayout as ConstPlan>::PLAN.tokens_per_update() {
    Some(t) => Some(t.get()),
    None => None,
};

fn main() {
    assert_eq!(<FixedLayout as ConstPlan>::PLAN.replicas(), 8);
    assert_eq!(T, Some(64 * 2048));
    assert_eq!(Fixed {}.plan(), Ok(<Fixed as ConstPlan>::PLAN));
}
