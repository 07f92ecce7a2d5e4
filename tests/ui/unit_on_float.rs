// `accum::span`: `unit = "..."` declares what a whole count counts. On a float, a
// signed integer or a string the field would be read as no length at all,
// and the warmup and interval checks on it would vanish.
use accum::AccumConfig;

#[derive(AccumConfig)]
#[accum(micro_batch = 2, accumulation = 4, replicas = 1)]
struct Train {
    #[accum(unit = "update", warmup)]
    warmup: f64,
    #[accum(unit = "token")]
    budget: Option<f32>,
    #[accum(unit = "example")]
    seen: i64,
    #[accum(unit = "update")]
    label: String,
    #[accum(unit = "update")]
    eval_every: u64, // a whole count: fine
}

fn main() {}
