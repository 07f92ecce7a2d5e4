// A failed derive reports its error once: the type still implements
// `AccumConfig` and `ConstPlan` (empty stand-ins), so the uses below add no
// second wave of errors such as E0277.
use accum::{AccumConfig, ConstPlan};

#[derive(AccumConfig)]
#[accum(micro_batch = 2, accumulation = 8, replicas = 2, global_batch = 30)]
struct Train {
    lr: f64,
}

const BATCH: u64 = <Train as ConstPlan>::PLAN.effective_batch().get();

fn main() {
    let train = Train { lr: 1e-3 };
    let _ = (BATCH, train.lr, train.plan(), train.validate(), Train::roles());
}
