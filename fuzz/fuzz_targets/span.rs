//! The span parser (`"1.5k examples"`) and span resolution through plans.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| accum_cli::harness::span(data));
