//! Reading a run report, capped per field. A report is untrusted (it may
//! come with a repository), and whatever it holds ends up in a sheet, a
//! comparison or a terminal: a text field is cut at [`MAX_REPORT_TEXT`]
//! bytes, with a note of what was cut, and a list at a bound of its own,
//! while it is read, so that the memory a report takes is bounded by those
//! caps and not by what the file holds. The report's types keep their
//! shape: what was cut from a list is said in [`RunReport::warnings`].
//!
//! A report accum writes is never cut: its texts are short, its updates
//! and loss curve are already decimated to [`KEPT_UPDATES`] and
//! [`CURVE_CAPACITY`] entries, and its other lists are far below their caps.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{
    CURVE_CAPACITY, Counters, CurvePoint, Decimated, DroppedGroup, KEPT_UPDATES, LossCurve,
    MemoryReport, PlanSummary, Provenance, RecorderPosition, ReplicaCounters, ReplicaPeaks,
    RunReport, RunSummary, Segment, StageCounters, UpdateStats, one,
};
use crate::group_digits;
use crate::plan::LastGroup;
use crate::settings::{LogAxis, Normalization, OptimizerKind, PrecisionMode};
use crate::units::{Examples, Tokens, Updates};

/// The longest text a report field keeps (a name, a note, a path, a
/// warning, a string inside `model`), in bytes; the rest is cut, and
/// `… (N bytes cut)` says so.
pub(crate) const MAX_REPORT_TEXT: usize = 4096;

/// The most stages, replicas, dropped groups and example ids of one
/// dropped group read from a report. A run's report holds one stage per
/// stage of its plan and one entry per replica: far fewer.
pub(crate) const MAX_REPORT_ENTRIES: usize = 65_536;

/// The most warnings read from a report, and the most entries of an array
/// or a table inside its `model`.
pub(crate) const MAX_REPORT_NOTES: usize = 256;

/// A text cut at [`MAX_REPORT_TEXT`] bytes, on a character boundary, with
/// `… (N bytes cut)` after it when it was longer.
pub(crate) fn capped_text(text: &str) -> String {
    if text.len() <= MAX_REPORT_TEXT {
        return text.to_owned();
    }
    let mut end = MAX_REPORT_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text.len() - end;
    format!(
        "{}… ({} byte{} cut)",
        &text[..end],
        group_digits(cut as u64),
        if cut == 1 { "" } else { "s" }
    )
}

/// A string field, cut while it is read.
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Text, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(capped_text(v)))
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// A list read up to `N` entries; the others are skipped unread, and
/// counted.
struct Capped<T, const N: usize> {
    items: Vec<T>,
    total: u64,
}

impl<'de, T: Deserialize<'de>, const N: usize> Deserialize<'de> for Capped<T, N> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Capped<T, N>, D::Error> {
        struct V<T, const N: usize>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for V<T, N> {
            type Value = Capped<T, N>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Capped<T, N>, A::Error> {
                let mut items = Vec::new();
                let mut total = 0u64;
                while total < N as u64 {
                    match seq.next_element::<T>()? {
                        Some(item) => items.push(item),
                        None => return Ok(Capped { items, total }),
                    }
                    total += 1;
                }
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    total += 1;
                }
                Ok(Capped { items, total })
            }
        }
        deserializer.deserialize_seq(V(PhantomData))
    }
}

impl<T, const N: usize> Default for Capped<T, N> {
    fn default() -> Capped<T, N> {
        Capped {
            items: Vec::new(),
            total: 0,
        }
    }
}

impl<T, const N: usize> Capped<T, N> {
    /// The entries read, and a note for `warnings` when some were cut.
    fn read(self, what: &str, notes: &mut Vec<String>) -> Vec<T> {
        if self.total > self.items.len() as u64 {
            notes.push(format!(
                "the report lists {} {what}; the first {} were read ({} cut)",
                group_digits(self.total),
                group_digits(self.items.len() as u64),
                group_digits(self.total - self.items.len() as u64)
            ));
        }
        self.items
    }
}

/// A series read through [`Decimated`]: at most `N` entries kept, evenly
/// spread, in memory bounded by `N` whatever the array's length.
struct Thinned<T, const N: usize>(Decimated<T>);

impl<'de, T: Deserialize<'de>, const N: usize> Deserialize<'de> for Thinned<T, N> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Thinned<T, N>, D::Error> {
        struct V<T, const N: usize>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for V<T, N> {
            type Value = Thinned<T, N>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Thinned<T, N>, A::Error> {
                let mut kept = Decimated::new(N);
                while let Some(item) = seq.next_element::<T>()? {
                    kept.push(item);
                }
                Ok(Thinned(kept))
            }
        }
        deserializer.deserialize_seq(V(PhantomData))
    }
}

/// A JSON value (`model`) read with its strings cut at [`MAX_REPORT_TEXT`]
/// and its arrays and tables at [`MAX_REPORT_NOTES`] entries (a last entry
/// `"…"` counts the others), so that its memory is bounded by the caps.
struct CappedValue(serde_json::Value);

impl<'de> Deserialize<'de> for CappedValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CappedValue, D::Error> {
        use serde_json::{Map, Value};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CappedValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<CappedValue, E> {
                Ok(CappedValue(Value::Null))
            }
            fn visit_none<E>(self) -> Result<CappedValue, E> {
                Ok(CappedValue(Value::Null))
            }
            fn visit_bool<E>(self, v: bool) -> Result<CappedValue, E> {
                Ok(CappedValue(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<CappedValue, E> {
                Ok(CappedValue(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<CappedValue, E> {
                Ok(CappedValue(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<CappedValue, E> {
                Ok(CappedValue(
                    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number),
                ))
            }
            fn visit_str<E>(self, v: &str) -> Result<CappedValue, E> {
                Ok(CappedValue(Value::String(capped_text(v))))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<CappedValue, A::Error> {
                let mut items = Vec::new();
                while items.len() < MAX_REPORT_NOTES {
                    match seq.next_element::<CappedValue>()? {
                        Some(item) => items.push(item.0),
                        None => return Ok(CappedValue(Value::Array(items))),
                    }
                }
                let mut more = 0u64;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    more += 1;
                }
                if more > 0 {
                    items.push(Value::String(format!(
                        "… ({} items cut)",
                        group_digits(more)
                    )));
                }
                Ok(CappedValue(Value::Array(items)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CappedValue, A::Error> {
                let mut entries = Map::new();
                let mut more = 0u64;
                while let Some(key) = map.next_key::<Text>()? {
                    if entries.len() < MAX_REPORT_NOTES {
                        let value = map.next_value::<CappedValue>()?;
                        entries.insert(key.0, value.0);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                        more += 1;
                    }
                }
                if more > 0 {
                    entries.insert(
                        "…".to_owned(),
                        Value::String(format!("{} entries cut", group_digits(more))),
                    );
                }
                Ok(CappedValue(Value::Object(entries)))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A dropped group, its ids capped.
#[derive(Deserialize)]
struct ReadDropped {
    epoch: u64,
    ids: Capped<u64, MAX_REPORT_ENTRIES>,
}

/// The memory peaks, one per replica, capped like the replicas' counters.
#[derive(Deserialize)]
struct ReadMemory {
    replicas: Capped<ReplicaPeaks, MAX_REPORT_ENTRIES>,
    peak_bytes: u64,
    peak_activation_bytes: u64,
    peak_grows: bool,
}

/// The loss curve, its points thinned to [`CURVE_CAPACITY`].
#[derive(Deserialize)]
struct ReadCurve {
    axis: LogAxis,
    points: Thinned<CurvePoint, CURVE_CAPACITY>,
    #[serde(default = "one")]
    stride: u64,
}

/// A run report as read: [`RunReport`]'s fields, each capped (the keys and
/// defaults are [`RunReport`]'s own).
#[derive(Deserialize)]
pub(super) struct ReadReport {
    format: Text,
    plan: PlanSummary,
    model: CappedValue,
    precision: PrecisionMode,
    loss_scaling: bool,
    normalization: Normalization,
    last_group: LastGroup,
    optimizer: OptimizerKind,
    total_updates: Updates,
    warmup_updates: Updates,
    data_examples: Examples,
    data_tokens: Tokens,
    counters: Counters,
    #[serde(default)]
    stages: Capped<StageCounters, MAX_REPORT_ENTRIES>,
    replicas: Capped<ReplicaCounters, MAX_REPORT_ENTRIES>,
    updates: Thinned<UpdateStats, KEPT_UPDATES>,
    #[serde(default = "one")]
    updates_stride: u64,
    #[serde(default)]
    summary: RunSummary,
    #[serde(default)]
    stats_stream: Option<Text>,
    loss_curve: ReadCurve,
    memory: ReadMemory,
    dropped: Capped<ReadDropped, MAX_REPORT_ENTRIES>,
    stopped_early: bool,
    warnings: Capped<Text, MAX_REPORT_NOTES>,
    #[serde(default)]
    segments: Capped<Segment, MAX_REPORT_ENTRIES>,
    #[serde(default)]
    recorder: Option<RecorderPosition>,
    #[serde(default)]
    provenance: Option<ReadProvenance>,
}

/// The provenance, its texts capped.
#[derive(Deserialize)]
struct ReadProvenance {
    #[serde(default)]
    run_name: Option<Text>,
    #[serde(default)]
    config_path: Option<Text>,
    #[serde(default)]
    config_hash: Option<Text>,
    #[serde(default)]
    accum_version: Option<Text>,
    #[serde(default)]
    started_at: Option<Text>,
    #[serde(default)]
    wall_seconds: Option<f64>,
    #[serde(default)]
    examples_per_second: Option<f64>,
    #[serde(default)]
    tokens_per_second: Option<f64>,
    #[serde(default)]
    updates_per_second: Option<f64>,
    #[serde(default)]
    git_commit: Option<Text>,
}

impl From<ReadProvenance> for Provenance {
    fn from(read: ReadProvenance) -> Provenance {
        let text = |t: Option<Text>| t.map(|t| t.0);
        let finite = |v: Option<f64>| v.filter(|v| v.is_finite() && *v >= 0.0);
        Provenance {
            run_name: text(read.run_name),
            config_path: text(read.config_path),
            config_hash: text(read.config_hash),
            accum_version: text(read.accum_version),
            started_at: text(read.started_at),
            wall_seconds: finite(read.wall_seconds),
            examples_per_second: finite(read.examples_per_second),
            tokens_per_second: finite(read.tokens_per_second),
            updates_per_second: finite(read.updates_per_second),
            git_commit: text(read.git_commit),
        }
    }
}

impl From<ReadReport> for RunReport {
    fn from(read: ReadReport) -> RunReport {
        let mut notes = Vec::new();
        let mut warnings: Vec<String> = read
            .warnings
            .read("warnings", &mut notes)
            .into_iter()
            .map(|t| t.0)
            .collect();
        let stages = read.stages.read("stages", &mut notes);
        let segments = read.segments.read("segments", &mut notes);
        let replicas = read.replicas.read("replicas", &mut notes);
        let memory = MemoryReport {
            replicas: read
                .memory
                .replicas
                .read("replicas' memory peaks", &mut notes),
            peak_bytes: read.memory.peak_bytes,
            peak_activation_bytes: read.memory.peak_activation_bytes,
            peak_grows: read.memory.peak_grows,
        };
        let dropped = read
            .dropped
            .read("dropped groups", &mut notes)
            .into_iter()
            .map(|d| DroppedGroup {
                epoch: d.epoch,
                ids: d.ids.read("ids in a dropped group", &mut notes),
            })
            .collect();
        // A thinned series keeps its spacing: the stride it was written
        // with, times the thinning's.
        let updates_stride = read.updates_stride.saturating_mul(read.updates.0.stride());
        let curve_stride = read
            .loss_curve
            .stride
            .saturating_mul(read.loss_curve.points.0.stride());
        warnings.extend(notes);
        RunReport {
            format: read.format.0,
            plan: read.plan,
            model: read.model.0,
            precision: read.precision,
            loss_scaling: read.loss_scaling,
            normalization: read.normalization,
            last_group: read.last_group,
            optimizer: read.optimizer,
            total_updates: read.total_updates,
            warmup_updates: read.warmup_updates,
            data_examples: read.data_examples,
            data_tokens: read.data_tokens,
            counters: read.counters,
            stages,
            replicas,
            updates: read.updates.0.items().to_vec(),
            updates_stride,
            summary: read.summary,
            stats_stream: read.stats_stream.map(|t| t.0),
            loss_curve: LossCurve {
                axis: read.loss_curve.axis,
                points: read.loss_curve.points.0.items().to_vec(),
                stride: curve_stride,
            },
            memory,
            dropped,
            stopped_early: read.stopped_early,
            warnings,
            segments,
            recorder: read.recorder,
            provenance: read.provenance.map(Provenance::from),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json, to_value};

    use super::*;
    use crate::report::REPORT_FORMAT;

    /// A report's JSON with every field at its default.
    fn report() -> Value {
        let replica = to_value(ReplicaCounters::default()).expect("json");
        json!({
            "format": REPORT_FORMAT,
            "plan": { "micro_batch": 1, "accumulation": 1, "replicas": 1, "effective_batch": 1, "seq_len": null },
            "model": { "kind": "mine" },
            "precision": to_value(PrecisionMode::default()).expect("json"),
            "loss_scaling": false,
            "normalization": to_value(Normalization::default()).expect("json"),
            "last_group": to_value(LastGroup::default()).expect("json"),
            "optimizer": to_value(OptimizerKind::default()).expect("json"),
            "total_updates": 4,
            "warmup_updates": 0,
            "data_examples": 4,
            "data_tokens": 8,
            "counters": to_value(Counters::default()).expect("json"),
            "replicas": [replica],
            "updates": [],
            "loss_curve": { "axis": "updates", "points": [] },
            "memory": to_value(MemoryReport::default()).expect("json"),
            "dropped": [],
            "stopped_early": false,
            "warnings": ["a warning"]
        })
    }

    fn read(value: &Value) -> RunReport {
        serde_json::from_str(&value.to_string()).expect("a report")
    }

    #[test]
    fn a_report_within_the_caps_reads_back_as_written() {
        let report = read(&report());
        let again = read(&serde_json::from_str(&report.to_json()).expect("json"));
        assert_eq!(again, report);
        assert_eq!(report.warnings, ["a warning"]);
        assert_eq!(report.model, json!({ "kind": "mine" }));
    }

    #[test]
    fn long_texts_are_cut_with_a_note() {
        let mut value = report();
        let name = "é".repeat(5_000_000);
        value["model"]["name"] = json!(name);
        value["warnings"] = json!([name]);
        value["stats_stream"] = json!("x".repeat(10_000));
        value["format"] = json!("f".repeat(MAX_REPORT_TEXT + 1));
        let report = read(&value);
        let cut = report.model["name"].as_str().expect("a name");
        assert!(cut.starts_with("éé"));
        assert!(cut.ends_with("… (9,995,904 bytes cut)"), "{}", &cut[4000..]);
        assert!(cut.len() < MAX_REPORT_TEXT + 40);
        assert_eq!(report.warnings[0], cut);
        let stream = report.stats_stream.expect("a stream");
        assert!(stream.ends_with("x… (5,904 bytes cut)"), "{stream}");
        assert!(report.format.ends_with("f… (1 byte cut)"));
        assert_eq!(capped_text("short"), "short");
    }

    #[test]
    fn long_lists_are_bounded_while_read_and_said_in_the_warnings() {
        let mut value = report();
        let stage = json!({
            "plan": value["plan"].clone(), "first_update": 0, "last_update": null,
            "applied_updates": 0, "attempts": 0, "skipped": 0, "microbatches": 0,
            "examples": 0, "tokens": 0
        });
        value["stages"] = Value::Array(vec![stage; MAX_REPORT_ENTRIES + 10]);
        value["warnings"] = json!(vec!["w"; MAX_REPORT_NOTES + 1]);
        value["dropped"] = json!([{ "epoch": 0, "ids": vec![7; MAX_REPORT_ENTRIES + 2] }]);
        value["model"]["layers"] = json!(vec![1; MAX_REPORT_NOTES + 5]);
        let peaks = to_value(ReplicaPeaks::default()).expect("json");
        value["memory"]["replicas"] = Value::Array(vec![peaks; MAX_REPORT_ENTRIES + 3]);
        let update = to_value(UpdateStats {
            attempt: 1,
            epoch: 0,
            stage: 0,
            applied: true,
            updates: Updates::new(1),
            loss: 1.0,
            denominator: 1.0,
            examples: Examples::new(1),
            tokens: Tokens::new(1),
            microbatches: crate::units::Microbatches::new(1),
            partial: false,
            lr: 0.0,
            grad_norm: 1.0,
            clipped: false,
            loss_scale: 1.0,
        })
        .expect("json");
        value["updates"] = Value::Array(vec![update; 4 * KEPT_UPDATES]);
        value["updates_stride"] = json!(3);
        value["loss_curve"]["points"] =
            Value::Array(vec![json!({ "x": 1, "loss": 1.0 }); 3 * CURVE_CAPACITY]);
        let report = read(&value);
        assert_eq!(report.stages.len(), MAX_REPORT_ENTRIES);
        assert_eq!(report.dropped[0].ids.len(), MAX_REPORT_ENTRIES);
        assert_eq!(report.memory.replicas.len(), MAX_REPORT_ENTRIES);
        let layers = report.model["layers"].as_array().expect("layers");
        assert_eq!(layers.len(), MAX_REPORT_NOTES + 1);
        assert_eq!(layers[MAX_REPORT_NOTES], "… (5 items cut)");
        // The series keep their spacing: a kept entry every `stride` attempts.
        assert!(report.updates.len() <= KEPT_UPDATES);
        assert_eq!(report.updates_stride, 3 * 4);
        assert!(report.loss_curve.points.len() <= CURVE_CAPACITY);
        assert_eq!(report.loss_curve.stride, 4);
        let notes = &report.warnings[MAX_REPORT_NOTES..];
        assert_eq!(
            notes,
            [
                "the report lists 257 warnings; the first 256 were read (1 cut)",
                "the report lists 65,546 stages; the first 65,536 were read (10 cut)",
                "the report lists 65,539 replicas' memory peaks; the first 65,536 were read (3 cut)",
                "the report lists 65,538 ids in a dropped group; the first 65,536 were read (2 cut)",
            ]
        );
    }
}
