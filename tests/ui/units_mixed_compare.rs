// `accum::span`: counts in different units cannot be compared either.
use accum::{Examples, Tokens};

fn main() {
    let _ = Examples::new(32) == Tokens::new(32);
}
