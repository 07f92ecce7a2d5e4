// The derive needs a struct with named fields.
use accum::AccumConfig;

#[derive(AccumConfig)]
enum Mode {
    Small,
    Large,
}

#[derive(AccumConfig)]
struct Tuple(u32, u32, u32);

#[derive(AccumConfig)]
struct Unit;

fn main() {}
