// Generic structs: the field table does not depend on the parameters.
use accum::AccumConfig;

#[derive(AccumConfig)]
struct Train<T, const N: usize> {
    #[accum(micro_batch)]
    micro_batch: u16,
    #[accum(accumulation)]
    accumulation: u16,
    #[accum(replicas)]
    replicas: u16,
    extra: [T; N],
}

fn main() {
    let t = Train { micro_batch: 4, accumulation: 4, replicas: 4, extra: ["a"; 2] };
    assert_eq!(t.plan().unwrap().effective_batch().get(), 64);
    assert_eq!(Train::<u8, 1>::roles().len(), 3);
    assert_eq!(t.extra.len(), 2);
}
