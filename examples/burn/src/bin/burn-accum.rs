//! accum's commands for the example's config type (`train.json`,
//! `TrainConfig`, a burn config and an accum config on one struct):
//! `burn-accum sheet train.json --report run.json`, `validate`, `schema`,
//! `compare`, `calc`.

fn main() -> std::process::ExitCode {
    accum_cli::run::<accum_burn_example::TrainConfig>()
}
