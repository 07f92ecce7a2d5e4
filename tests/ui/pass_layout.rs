// `accum::plan::global-batch`: replicas from a world layout, D = world_size / (tp·pp·cp).
use accum::AccumConfig;

#[derive(AccumConfig)]
struct Train {
    #[accum(micro_batch)]
    micro_batch: u64,
    #[accum(accumulation)]
    accumulation: u64,
    #[accum(world_size)]
    gpus: u64,
    #[accum(tensor_parallel)]
    tp: u64,
    #[accum(pipeline_parallel)]
    pp: std::num::NonZeroU64,
    #[accum(context_parallel)]
    cp: Option<u8>,
    #[accum(seq_len)]
    seq_len: u32,
}

fn main() {
    let train = Train {
        micro_batch: 8,
        accumulation: 4,
        gpus: 256,
        tp: 2,
        pp: std::num::NonZeroU64::new(2).unwrap(),
        cp: None,
        seq_len: 4096,
    };
    let plan = train.plan().unwrap();
    assert_eq!(plan.replicas(), 64);
    assert_eq!(plan.effective_batch().get(), 2048);
    assert_eq!(plan.tokens_per_update().unwrap().get(), 8_388_608);
    let bad = Train { gpus: 254, ..train };
    let findings = bad.validate().unwrap_err();
    assert_eq!(findings.paths(), ["gpus"]);
}
