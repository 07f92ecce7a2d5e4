//! Which framework a file is, by its evidence (`accum import FILE` and
//! `accum lint FILE` without a framework named).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    accum_cli::harness::detect(data);
});
