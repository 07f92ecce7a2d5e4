//! TOML configuration files: parsing, schema, spans, typed validation and the plan.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    accum_cli::harness::config(accum_cli::harness::ConfigFormat::Toml, data);
});
