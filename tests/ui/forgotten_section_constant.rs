// `accum::plan::duplicate`: a section that fixes a role the nesting config
// gives too (`#[accum(replicas = 1)]` written to quiet a missing-role
// error, where `#[accum(section)]` was meant) is a role given twice, and
// the error says so at the config; the section itself has no error.
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(replicas = 1)]
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

fn main() {}
