// `accum::plan::overflow`: m·A·D (and m·A·D·L) must fit in a 64-bit count;
// the error is on the micro-batch, or on the sequence length that made the
// tokens of an update overflow.
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(micro_batch = 18446744073709551615, accumulation = 2, replicas = 1)]
struct Batch {}

#[derive(AccumConfig)]
#[accum(micro_batch = 1048576, accumulation = 1048576, replicas = 1, seq_len = 1073741824)]
struct Tokens {}

fn main() {}
