// Optional roles: replicas or world_size may be absent; validate says which
// field to set. A missing accumulation is solved from global_batch.
use accum::AccumConfig;

#[derive(AccumConfig, Default)]
struct Train {
    #[accum(micro_batch)]
    micro_batch: u32,
    #[accum(accumulation)]
    accumulation: Option<u32>,
    #[accum(replicas)]
    replicas: Option<u32>,
    #[accum(world_size)]
    world_size: Option<u32>,
    #[accum(global_batch)]
    global_batch: Option<u64>,
}

fn main() {
    let t = Train { micro_batch: 2, replicas: Some(2), global_batch: Some(32), ..Train::default() };
    assert_eq!(t.plan().unwrap().accumulation(), 8);
    assert_eq!(t.validate(), Ok(accum::Findings::default()));
    let neither = Train { micro_batch: 2, accumulation: Some(8), ..Train::default() };
    let findings = neither.validate().unwrap_err();
    assert_eq!(findings.paths(), ["replicas"]);
    assert_eq!(
        findings.iter().next().unwrap().fix.as_ref().map(|fix| fix.text.as_str()),
        Some("set `replicas` (data-parallel copies) or `world_size` (all devices)")
    );
}
