//! The command line's lengths, stages, ramps, counts and byte sizes.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| accum_cli::harness::cli_values(data));
