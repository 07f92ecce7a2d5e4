// `accum::span`: counts in different units cannot be added; convert through a `Plan`.
use accum::{Microbatches, Updates};

fn main() {
    let _ = Updates::new(1) + Microbatches::new(8);
}
