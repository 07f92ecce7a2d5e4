//! `accum run --backend mpi` under `mpirun`, one process per replica (`accum::run::data-parallel`,
//! `accum::calc::scaling`). Built only with the `mpi` feature; `.ci/mpi` runs these on
//! loopback with 2 and 4 ranks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use accum_core::verify::Tolerance;

use crate::scratch;

/// `mpirun` on loopback only, as root if need be, more ranks than cores.
fn mpirun(n: usize) -> Command {
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--oversubscribe",
        "--allow-run-as-root",
        "--mca",
        "btl",
        "self,tcp",
        "--mca",
        "btl_tcp_if_include",
        "lo",
        "-n",
        &n.to_string(),
    ])
    .arg(assert_cmd::cargo::cargo_bin("accum"))
    .env("NO_COLOR", "1");
    cmd
}

/// Waits for `child` at most `limit`; kills it and fails the test on timeout.
fn wait(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().expect("mpirun is waitable").is_some() {
            return child.wait_with_output().expect("mpirun output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("mpirun output");
            panic!(
                "mpirun did not finish within {limit:?}; a rank hangs\nstderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn run(mut cmd: Command, dir: &Path, args: &[&str]) -> Output {
    let child = cmd
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun starts (install openmpi-bin)");
    wait(child, Duration::from_secs(180))
}

/// A per-token config with variable lengths (2..=23 tokens, some labels
/// ignored by the data), 5 updates, the fifth group partial.
fn config(dir: &Path, name: &str, m: u64, a: u64, d: u64, examples: u64) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let text = format!(
        r#"[run]
name = "{name}"

[batch]
micro_batch = {m}
accumulation = {a}
replicas = {d}

[loss]
normalization = "per_token"

[precision]
mode = "fp32"

[optimizer]
kind = "adamw"
lr = 1e-2
clip_norm = 1.0

[schedule]
kind = "constant"
warmup = "0 updates"
total = "5 updates"

[data]
examples = {examples}
min_len = 2
max_len = 23
vocab = 32
seed = 11
last_group = "process"

[model]
hidden = 16
ffn = 32

[log]
every = "1 updates"
axis = "updates"
"#
    );
    std::fs::write(&path, text).expect("config written");
    path
}

/// A `.npy` file of `<f4` or `<i8` (format 1.0, C order): shape and values as f64.
fn npy(path: &Path) -> (Vec<usize>, Vec<f64>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "{}", path.display());
    let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + len]).expect("an ascii npy header");
    assert!(header.contains("'fortran_order': False"), "{header}");
    let shape_text = header
        .split("'shape': (")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .expect("a shape in the npy header");
    let shape: Vec<usize> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("a dimension"))
        .collect();
    let data = &bytes[10 + len..];
    let values: Vec<f64> = if header.contains("'<f4'") {
        data.chunks_exact(4)
            .map(|c| {
                f64::from(f32::from_le_bytes(
                    c.try_into().expect("chunks_exact gives whole elements"),
                ))
            })
            .collect()
    } else if header.contains("'<i8'") {
        data.chunks_exact(8)
            .map(|c| {
                i64::from_le_bytes(c.try_into().expect("chunks_exact gives whole elements")) as f64
            })
            .collect()
    } else {
        panic!("unexpected dtype in {header}");
    };
    assert_eq!(values.len(), shape.iter().product::<usize>());
    (shape, values)
}

const PARAMS: [&str; 5] = ["embed", "w1", "b1", "w2", "b2"];

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn max_abs(a: &[f64]) -> f64 {
    a.iter().map(|x| x.abs()).fold(0.0, f64::max)
}

fn stats(dump: &Path, update: u64) -> serde_json::Value {
    let text = std::fs::read_to_string(dump.join(format!("update-{update:06}/stats.json")))
        .expect("stats.json");
    serde_json::from_str(&text).expect("stats.json is json")
}

/// Example ids of one update over all replicas and microbatches.
fn ids(dump: &Path, update: u64) -> BTreeSet<i64> {
    let dir = dump.join(format!("update-{update:06}"));
    let mut ids = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("the update folder") {
        let path = entry.expect("a folder entry").path();
        if path.to_string_lossy().ends_with("-ids.npy") {
            for id in npy(&path).1 {
                assert!(ids.insert(id as i64), "id {id} twice in {}", dir.display());
            }
        }
    }
    ids
}

/// Microbatch files (`r*-m*-*.npy`) of one update, name → bytes.
fn microbatch_files(dump: &Path, update: u64) -> Vec<(String, Vec<u8>)> {
    let dir = dump.join(format!("update-{update:06}"));
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("the update folder")
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "npy"))
        .map(|p| {
            (
                p.file_name()
                    .expect("a file name")
                    .to_string_lossy()
                    .into_owned(),
                std::fs::read(&p).expect("a dump file"),
            )
        })
        .collect();
    files.sort();
    files
}

/// `got` equals `reference` after every update within the engine's
/// documented tolerance (`verify::Tolerance`): gradients relative to the
/// reference gradient, parameters relative to the reference update.
fn assert_equivalent(got: &Path, reference: &Path, what: &str) {
    let tol = Tolerance::default();
    for update in 1..=5u64 {
        let dir = format!("update-{update:06}");
        let (s_got, s_ref) = (stats(got, update), stats(reference, update));
        assert_eq!(s_got["denominator"], s_ref["denominator"], "{what} {dir}");
        assert_eq!(s_got["applied"], s_ref["applied"], "{what} {dir}");
        let (l_got, l_ref) = (
            s_got["loss"].as_f64().expect("a loss"),
            s_ref["loss"].as_f64().expect("a loss"),
        );
        assert!(
            (l_got - l_ref).abs() <= tol.atol + tol.rtol * l_ref.abs(),
            "{what} {dir}: loss {l_got} vs {l_ref}"
        );
        assert_eq!(ids(got, update), ids(reference, update), "{what} {dir}");
        for p in PARAMS {
            let (shape_g, g) = npy(&got.join(&dir).join(format!("grad/{p}.npy")));
            let (shape_r, r) = npy(&reference.join(&dir).join(format!("grad/{p}.npy")));
            assert_eq!(shape_g, shape_r);
            let diff = max_abs_diff(&g, &r);
            assert!(
                diff <= tol.atol + tol.rtol * max_abs(&r),
                "{what} {dir} grad {p}: max diff {diff:e}, reference max {:e}",
                max_abs(&r)
            );
            let before = if update == 1 {
                reference.join(format!("init/{p}.npy"))
            } else {
                reference.join(format!("update-{:06}/param/{p}.npy", update - 1))
            };
            let (_, prev) = npy(&before);
            let (_, after_ref) = npy(&reference.join(&dir).join(format!("param/{p}.npy")));
            let (_, after_got) = npy(&got.join(&dir).join(format!("param/{p}.npy")));
            let step = max_abs_diff(&after_ref, &prev);
            let diff = max_abs_diff(&after_got, &after_ref);
            assert!(
                step > 0.0 && diff <= tol.atol + tol.param_rtol * step,
                "{what} {dir} param {p}: max diff {diff:e}, largest update {step:e}"
            );
        }
    }
}

/// The dump of `mpirun -n n … --backend mpi` equals the in-process run with
/// the same D and the D=1 large-batch run (`accum::verify::equivalence`: within tolerance).
fn dump_matches_threads_and_large_batch(n: u64) {
    let dir = scratch(&format!("mpi-equivalence-{n}"));
    let (m, a) = (3, 2);
    let b = m * a * n;
    let examples = 4 * b + b / 2 + 1;
    let acc = config(&dir, "acc", m, a, n, examples);
    let large = config(&dir, "large", b, 1, 1, examples);
    let acc = acc.to_str().expect("a utf-8 path");
    let large = large.to_str().expect("a utf-8 path");

    let out = run(
        mpirun(n as usize),
        &dir,
        &[
            "run",
            acc,
            "--backend",
            "mpi",
            "-q",
            "--dump",
            "mpi",
            "--report",
            "mpi.json",
        ],
    );
    assert!(
        out.status.success(),
        "mpirun failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Rank 0 prints the summary once; the other ranks print nothing.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.matches("5 applied updates in ").count(),
        1,
        "{stdout}"
    );
    for (args, what) in [
        (vec!["run", acc, "-q", "--dump", "threads"], "threads"),
        (vec!["run", large, "-q", "--dump", "large"], "large"),
    ] {
        let out = crate::run_in(&dir, &args);
        assert_eq!(out.code, 0, "{what}: {}", out.stderr);
    }
    let (mpi, threads, big) = (dir.join("mpi"), dir.join("threads"), dir.join("large"));
    // Same microbatches on the same replicas as the threads (`accum::run::data-parallel`).
    for update in 1..=5 {
        assert_eq!(
            microbatch_files(&mpi, update)
                .into_iter()
                .filter(|(n, _)| n.starts_with('r'))
                .collect::<Vec<_>>(),
            microbatch_files(&threads, update)
                .into_iter()
                .filter(|(n, _)| n.starts_with('r'))
                .collect::<Vec<_>>(),
            "update {update}"
        );
    }
    let r1 = format!("update-000005/r{}-m0-ids.npy", n - 1);
    assert!(mpi.join(&r1).exists(), "the last replica's microbatch {r1}");
    assert_equivalent(&mpi, &threads, "mpi vs threads");
    assert_equivalent(&mpi, &big, "mpi vs large batch");
    assert_equivalent(&threads, &big, "threads vs large batch");
    // The report equals the in-process one, counters and memory included.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("mpi.json")).expect("the report"))
            .expect("report json");
    let out = crate::run_in(&dir, &["run", acc, "--format", "json"]);
    let threads_report: serde_json::Value = serde_json::from_str(&out.stdout).expect("report json");
    for key in ["counters", "replicas", "memory", "dropped"] {
        assert_eq!(report[key], threads_report[key], "{key}");
    }
    assert_eq!(report["counters"]["update_attempts"], 5);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn mpi_2_ranks_dump_matches_threads_and_large_batch() {
    dump_matches_threads_and_large_batch(2);
}

#[test]
fn mpi_4_ranks_dump_matches_threads_and_large_batch() {
    dump_matches_threads_and_large_batch(4);
}

/// One rank fails mid-group: every rank exits non-zero naming the rank and
/// microbatch, nothing of the failed update is dumped, no report appears.
fn failing_rank_stops_every_rank(n: u64) {
    let dir = scratch(&format!("mpi-fail-{n}"));
    let acc = config(&dir, "acc", 2, 3, n, 400);
    let failing = n - 1;
    let out = run(
        mpirun(n as usize),
        &dir,
        &[
            "run",
            acc.to_str().expect("a utf-8 path"),
            "--backend",
            "mpi",
            "-q",
            "--dump",
            "dump",
            "--report",
            "run.json",
            "--fail-at",
            &format!("{failing}:3:1"),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    for rank in 0..n {
        let line = stderr
            .lines()
            .find(|l| l.starts_with(&format!("error: rank {rank} of {n}: ")))
            .unwrap_or_else(|| panic!("no error line of rank {rank}:\n{stderr}"));
        assert!(
            line.contains(&format!("attempt 3, microbatch 1 on replica {failing}")),
            "{line}"
        );
        if rank != failing {
            assert!(
                line.contains(&format!("aborted: replica {failing} failed")),
                "{line}"
            );
        }
    }
    assert!(!dir.join("run.json").exists(), "a report was written");
    assert!(dir.join("dump/update-000002/stats.json").exists());
    assert!(
        !dir.join("dump/update-000003").exists(),
        "the failed group reached the dump"
    );
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("dump/manifest.json")).expect("the manifest"),
    )
    .expect("manifest json");
    assert_eq!(manifest["updates"], 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn mpi_2_ranks_failing_rank_stops_every_rank() {
    failing_rank_stops_every_rank(2);
}

#[test]
fn mpi_4_ranks_failing_rank_stops_every_rank() {
    failing_rank_stops_every_rank(4);
}

/// A world of another size than `D` is refused on every rank before any
/// work, with the launch that fits.
#[test]
fn mpi_world_of_another_size_is_refused() {
    let dir = scratch("mpi-world");
    let acc = config(&dir, "acc", 2, 3, 2, 400);
    let out = run(
        mpirun(3),
        &dir,
        &[
            "run",
            acc.to_str().expect("a utf-8 path"),
            "--backend",
            "mpi",
            "--report",
            "run.json",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    for rank in 0..3 {
        let line = stderr
            .lines()
            .find(|l| l.starts_with(&format!("error: rank {rank} of 3: ")))
            .unwrap_or_else(|| panic!("no error line of rank {rank}:\n{stderr}"));
        assert!(
            line.contains("the plan has 2 data-parallel replicas but the backend runs 3")
                && line.contains("mpirun -n 2"),
            "{line}"
        );
    }
    assert!(out.stdout.is_empty());
    assert!(!dir.join("run.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Rank 0 cannot create its dump folder: the other ranks, already waiting
/// in the run's first collective, stop too instead of hanging.
#[test]
fn mpi_rank_0_setup_failure_stops_every_rank() {
    let dir = scratch("mpi-setup");
    let acc = config(&dir, "acc", 2, 3, 2, 400);
    std::fs::write(dir.join("file"), b"").expect("a plain file");
    let out = run(
        mpirun(2),
        &dir,
        &[
            "run",
            acc.to_str().expect("a utf-8 path"),
            "--backend",
            "mpi",
            "--dump",
            "file/dump",
            "--report",
            "run.json",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.lines().any(|l| l.starts_with("error: rank 1 of 2: ")
            && l.contains("aborted: rank 0 of 2: file/dump: cannot write dump file")),
        "{stderr}"
    );
    assert!(!dir.join("run.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Process ids of `accum` ranks whose command line mentions `marker` and
/// whose MPI rank is `rank`.
fn rank_pids(marker: &str, rank: usize) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline);
        if cmdline.contains(marker)
            && !cmdline.starts_with("mpirun")
            && environ
                .split(|&b| b == 0)
                .any(|v| v == format!("OMPI_COMM_WORLD_RANK={rank}").as_bytes())
        {
            pids.push(pid);
        }
    }
    pids
}

/// A rank killed mid-run: mpirun ends the others, the job fails and no
/// report appears.
#[test]
fn mpi_killed_rank_leaves_no_report() {
    let dir = scratch("mpi-kill");
    let marker = dir.join("killed.toml");
    let text = std::fs::read_to_string(config(&dir, "acc", 2, 3, 2, 400))
        .unwrap()
        .replace("total = \"5 updates\"", "total = \"100000 updates\"");
    std::fs::write(&marker, text).unwrap();
    let child = mpirun(2)
        .current_dir(&dir)
        .args([
            "run",
            marker.to_str().expect("a utf-8 path"),
            "--backend",
            "mpi",
            "-q",
            "--dump",
            "dump",
            "--report",
            "run.json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun starts");
    let start = Instant::now();
    while !dir.join("dump/update-000003").exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pids = rank_pids(marker.to_str().expect("a utf-8 path"), 1);
    assert_eq!(pids.len(), 1, "rank 1's process: {pids:?}");
    let killed = Command::new("kill")
        .args(["-9", &pids[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = wait(child, Duration::from_secs(60));
    assert!(!out.status.success());
    assert!(!dir.join("run.json").exists(), "a report was written");
    let _ = std::fs::remove_dir_all(&dir);
}
