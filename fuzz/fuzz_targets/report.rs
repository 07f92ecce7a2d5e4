//! A run report read capped per field, drawn as a sheet, a CSV and a
//! comparison.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| accum_cli::harness::report(data));
