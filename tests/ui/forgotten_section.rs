// `accum::plan::missing`: a struct nested as a section but not marked
// `#[accum(section)]` is checked alone for the roles it leaves to the
// config that nests it. Its own error names `section` first, the nesting
// config names it at the field, and no false "missing role" error follows
// there: the config sees the section's roles.
use accum::AccumConfig;

#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    grad_accum: u32,
}

#[derive(AccumConfig)]
struct Cfg {
    #[accum(nested)]
    train: Train,
    #[accum(replicas)]
    replicas: u32,
}

// The use of the config adds no error: its impl is whole.
fn main() {
    let cfg = Cfg { train: Train { micro_batch: 2, grad_accum: 4 }, replicas: 2 };
    let _ = cfg.plan();
}
