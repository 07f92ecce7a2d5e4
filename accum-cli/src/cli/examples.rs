//! The examples under each command's `--help`, written for the binary that
//! shows them: `accum` with its example configs and its run and interop
//! commands, or a user's own binary (`accum_cli::run::<MyConfig>()`) with
//! its own name and only the commands it has.

/// Which binary the help is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Binary<'a> {
    /// `accum` itself, with every command.
    Accum,
    /// A user's binary of this name, with the common commands only.
    User(&'a str),
}

/// The examples of `command` (a subcommand name, or `""` for the top level).
pub(crate) fn examples(binary: Binary<'_>, command: &str) -> Option<String> {
    let text = match binary {
        Binary::Accum => accum(command)?.to_owned(),
        Binary::User(bin) => user(command)?.replace("{bin}", bin),
    };
    Some(format!("Examples:\n{text}"))
}

fn accum(command: &str) -> Option<&'static str> {
    Some(match command {
        "" => {
            "  accum init train.toml
  accum calc -m 8 -d 64 -a 4 -L 4096
  accum validate examples/quickstart.toml
  accum run examples/quickstart.toml --report run.json
  accum sheet examples/quickstart.toml --report run.json --format html -o sheet.html
  accum explain accum::plan::global-batch"
        }
        "init" => {
            "  accum init                     # accum.toml and accum.schema.json here
  accum init runs/baseline.toml
  accum init train.yaml            # YAML, with the yaml-language-server directive

An existing file is never overwritten."
        }
        "calc" => CALC,
        "schema" => "  accum schema\n  accum schema -o accum.schema.json",
        "validate" => {
            "  accum validate examples/quickstart.toml
  accum validate configs/*.toml --format short     # one line per finding
  accum validate configs/*.toml --format json
  # any derived config: plan roles come from the schema's x-accum-role marks
  accum validate --schema my.schema.json my-run.yaml

Exit status: 0 valid, 1 findings (printed), 2 usage or I/O error."
        }
        "replan" => {
            "  # the micro-batch of 32 does not fit: keep B with m ≤ 8 (A is recomputed)
  accum replan train.toml --max-micro-batch 8 > train-m8.toml
  accum replan train.toml --max-micro-batch 8 -o train-m8.toml
  accum replan train.toml --max-micro-batch 8 --in-place     # keeps train.toml.bak
  # the largest micro-batch whose estimated memory fits 2 MiB per device
  accum replan examples/quickstart.toml --memory-budget 2MiB
  # resume a D = 2 run on one device: same B, A doubled, then `accum run one.toml --resume DIR`
  accum replan examples/quickstart.toml --replicas 1 -o one.toml

Spans counted in microbatches are rewritten to keep their number of updates."
        }
        "sheet" => {
            "  accum sheet examples/quickstart.toml                          # Markdown to stdout
  accum run examples/quickstart.toml --report run.json
  accum sheet examples/quickstart.toml --report run.json -o sheet.html   # one self-contained file
  accum sheet examples/quickstart.toml --report run.json -o sheet.md     # + its SVG plots beside it
  accum sheet examples/quickstart.toml --format json"
        }
        "explain" => {
            "  accum explain accum::plan::global-batch
  accum explain plan::zero          # the accum:: prefix may be left out
  accum explain                     # every code"
        }
        "completions" => {
            "  accum completions bash > ~/.local/share/bash-completion/completions/accum
  accum completions zsh > ~/.zfunc/_accum"
        }
        "run" => {
            "  accum run examples/quickstart.toml
  accum run examples/quickstart.toml --report run.json
  accum run examples/quickstart.toml --dump dump/   # accum-dump/1: .npy tensors for numpy/PyTorch
  mpirun -n 2 accum run examples/quickstart.toml --backend mpi   # one process per replica (feature `mpi`)

Ctrl-C stops at the next group boundary; the report is still written."
        }
        "verify" => {
            "  accum verify examples/quickstart.toml
  accum verify examples/quickstart.toml --format json"
        }
        "import" => {
            "  accum import deepspeed ds_config.json --world-size 16 -o train.toml
  accum import megatron args.sh --world-size 64 --seq-len 4096
  accum import megatron train.sh --env GPUS_PER_NODE=8 --env NNODES=2
  accum import hf recipe.yaml --accelerate-config zero3.yaml
  accum import hf training_args.json --num-processes 8 --examples 100000 --variable-lengths
  accum import lightning trainer.yaml --micro-batch 16
  accum import axolotl qlora.yml --world-size 4

Frameworks: deepspeed, megatron, hf, lightning, nemo, axolotl, litgpt.
Exit 1 when a finding is an error; -o is written only when there is none."
        }
        "export" => {
            "  accum export deepspeed examples/quickstart.toml -o ds_config.json
  accum export megatron examples/seed-calculator.toml
  accum export hf examples/quickstart.toml
  accum export lightning examples/quickstart.toml"
        }
        "lint" => {
            "  accum lint deepspeed ds_config.json --world-size 16
  accum lint hf training_args.json --num-processes 8 --format json
  accum lint deepspeed ds_config.json --world-size 16 --diff   # what --fix would change"
        }
        _ => return None,
    })
}

fn user(command: &str) -> Option<&'static str> {
    Some(match command {
        "" => {
            "  {bin} validate my-run.toml
  {bin} calc -m 8 -d 64 -a 4 -L 4096
  {bin} sheet my-run.toml -o sheet.html
  {bin} explain accum::plan::global-batch"
        }
        "calc" => USER_CALC,
        "schema" => "  {bin} schema\n  {bin} schema -o {bin}.schema.json",
        "validate" => {
            "  {bin} validate my-run.toml
  {bin} validate configs/*.toml --format short     # one line per finding
  {bin} validate configs/*.toml --format json

Exit status: 0 valid, 1 findings (printed), 2 usage or I/O error."
        }
        "replan" => {
            "  # the micro-batch does not fit: keep B with m ≤ 8 (A is recomputed)
  {bin} replan my-run.toml --max-micro-batch 8 -o my-run-m8.toml
  {bin} replan my-run.toml --max-micro-batch 8 --in-place     # keeps my-run.toml.bak
  # the largest micro-batch whose estimated memory fits 24 GiB per device
  {bin} replan my-run.toml --memory-budget 24GiB --params 1.3e9 --activation-per-example 1.5GiB
  # move to 4 data-parallel replicas keeping B (m, A and world_size follow)
  {bin} replan my-run.toml --replicas 4 -o my-run-d4.toml

Spans counted in microbatches are rewritten to keep their number of updates."
        }
        "sheet" => {
            "  {bin} sheet my-run.toml                 # Markdown to stdout
  {bin} sheet my-run.toml -o sheet.html   # one self-contained file
  {bin} sheet my-run.toml --format json"
        }
        "explain" => {
            "  {bin} explain accum::plan::global-batch
  {bin} explain                     # every code"
        }
        "completions" => {
            "  {bin} completions bash > ~/.local/share/bash-completion/completions/{bin}
  {bin} completions zsh > ~/.zfunc/_{bin}"
        }
        _ => return None,
    })
}

const CALC: &str = "  # the calculator's worked example: B = 8 × 4 × 64 = 2,048; T = 8,388,608
  accum calc -m 8 -d 64 -a 4 -L 4096

  # replicas from a layout: 64 GPUs, tensor 2 × pipeline 2 → D = 16
  accum calc -m 4 -a 8 --world-size 64 --tensor 2 --pipeline 2

  # solve the accumulation steps for a target global batch (exact, never floored)
  accum calc -m 8 -d 64 --global-batch 4096

  # per-device memory and scaling estimates
  accum calc -m 8 -d 8 -a 4 --params 1.3e9 --precision bf16 --activation-per-example 1.5GiB \\
      --device-throughput 12 --bandwidth 50GB

  # a batch ramp-up in stages: 128 until 128k examples, 256 until 384k, then B = 512
  accum calc -m 8 -a 16 -d 4 -L 2048 --stage 128:128k-examples --stage 256:384k-examples

  # a linear ramp as Megatron-LM's --rampup-batch-size, and the run in tokens
  accum calc -m 1 -a 96 --world-size 2048 --tensor 8 --pipeline 16 -L 2048 \\
      --ramp 16:16:4B-tokens --total 300B-tokens

  # for scripts
  accum calc -m 2 -a 8 -d 2 --format json";

const USER_CALC: &str = "  # B = 8 × 4 × 64 = 2,048 examples; T = 8,388,608 tokens per update
  {bin} calc -m 8 -d 64 -a 4 -L 4096

  # replicas from a layout: 64 GPUs, tensor 2 × pipeline 2 → D = 16
  {bin} calc -m 4 -a 8 --world-size 64 --tensor 2 --pipeline 2

  # solve the accumulation steps for a target global batch (exact, never floored)
  {bin} calc -m 8 -d 64 --global-batch 4096

  # a batch ramp-up in stages: 128 until 128k examples, 256 until 384k, then B = 512
  {bin} calc -m 8 -a 16 -d 4 -L 2048 --stage 128:128k-examples --stage 256:384k-examples

  # for scripts
  {bin} calc -m 2 -a 8 -d 2 --format json";
