//! accum's commands for the example's own config type (`candle.toml`):
//! `candle-accum sheet candle.toml --report run.json`, `validate`,
//! `schema`, `compare`, `calc`.

fn main() -> std::process::ExitCode {
    accum_cli::run::<accum_candle_example::config::CandleRun>()
}
