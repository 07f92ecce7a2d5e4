// `accum::plan::global-batch`: a field whose type derives AccumConfig must be marked
// `#[accum(nested)]` (or `#[accum(skip)]`), whatever the section holds;
// unmarked, its roles, lengths and checks would be ignored without a word.
use accum::{AccumConfig, Span};

#[derive(AccumConfig)]
#[accum(section)]
struct Parallel {
    #[accum(replicas)]
    data_parallel: u32,
}

#[derive(AccumConfig)]
#[accum(section)]
struct Sequence {
    #[accum(seq_len)]
    max_len: u32,
}

// No plan role here: only a warmup, whose check against the run would be
// lost.
#[derive(AccumConfig)]
#[accum(section)]
struct Optim {
    lr: f64,
    #[accum(warmup)]
    warmup: Span,
}

// The replicas live in `parallel`: the error names the field, and no
// "missing role" error follows.
#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    grad_accum: u32,
    parallel: Parallel,
}

// Every required role is here, but `sequence.max_len` would be lost, and
// so would the checks of `optim.warmup`.
#[derive(AccumConfig)]
#[accum(micro_batch = 2, accumulation = 4, replicas = 1)]
struct Finetune {
    sequence: Option<Sequence>,
    optim: Optim,
    #[accum(total)]
    total: Span,
}

fn main() {}
