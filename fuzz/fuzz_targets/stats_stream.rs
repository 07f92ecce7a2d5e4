//! A report's stats stream, read a line at a time and drawn through the
//! report.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| accum_cli::harness::stats_stream(data));
