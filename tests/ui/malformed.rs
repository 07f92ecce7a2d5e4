// Malformed attributes: no parentheses, a value where a flag is expected,
// a flag where a value is expected, values of the wrong kind.
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(crate = "not a path", micro_batch = "2", global_batch = -1)]
struct Train {
    #[accum]
    a: u32,
    #[accum(accumulation = 8)]
    accumulation: u32,
    #[accum(unit = 5)]
    eval_every: u64,
    #[accum(unit = "steps")]
    save_every: u64,
    #[accum(replicas)]
    replicas: u32,
}

#[derive(AccumConfig)]
#[accum(replicas)]
struct FlagOnStruct {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: u32,
}

fn main() {}
