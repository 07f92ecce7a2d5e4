//! The `accum` command-line tool. All logic lives in the library so that
//! users' own binaries can reuse it.

fn main() -> std::process::ExitCode {
    accum_cli::main()
}
