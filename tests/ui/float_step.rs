// `accum::span`: a float named for steps is as ambiguous as an integer one, and not a
// whole count either.
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(micro_batch = 2, accumulation = 4, replicas = 1)]
struct Train {
    num_train_steps: f64,
    warmup_steps: Option<f32>,
    learning_rate: f64, // not a step count: fine
}

fn main() {}
