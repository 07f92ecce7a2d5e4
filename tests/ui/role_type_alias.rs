// `accum::plan::global-batch`: a type the macro cannot judge by its name is checked by the
// `RoleType` bound, reported at the field's type.
use accum::AccumConfig;

type Signed = i64;

#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: Signed,
    #[accum(replicas)]
    replicas: u32,
}

fn main() {}
