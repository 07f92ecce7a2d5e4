//! The LitGPT importer (and export of what it imports without errors).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    accum_cli::harness::import(accum_cli::interop::Framework::LitGpt, data);
});
