// R3: a field whose type derives AccumConfig with plan roles must be marked
// `#[accum(nested)]`; unmarked, its roles would be ignored without a word.
use accum::AccumConfig;

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

// Every required role is here, but `sequence.max_len` would be lost.
#[derive(AccumConfig)]
#[accum(micro_batch = 2, accumulation = 4, replicas = 1)]
struct Finetune {
    sequence: Option<Sequence>,
}

fn main() {}
