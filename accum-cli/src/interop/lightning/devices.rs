//! Lightning's `devices` (or 1.x's `gpus`) × `num_nodes`, read as
//! Lightning's device parser reads them
//! (`lightning/fabric/utilities/device_parser.py`, `_parse_gpu_ids` and
//! `_normalize_parse_gpu_string_input`): an int `N` is `N` devices (`0` is
//! none), `-1` and `"-1"` are every visible device, a list or `"0,1,3"` names
//! the devices (`"0,"` is one: device 0), `"2"` is the int 2, and `"auto"`
//! is the machine's choice.

use accum_core::Code;

use super::super::ImportOptions;
use super::super::reader::{Reader, owned};
use super::Trainer;
use crate::diagnostic::Diagnostic;
use crate::source::NodeKind;

/// What a `devices` value says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Devices {
    /// This many devices.
    Count(u64),
    /// The machine decides (`auto`, `-1`): the world size is needed.
    Machine(&'static str),
    /// Not a value Lightning accepts.
    Invalid,
}

/// Reads a `devices` value as Lightning's parser does.
pub(crate) fn parse(kind: &NodeKind) -> Devices {
    match kind {
        NodeKind::Integer(-1) => Devices::Machine("-1 (every visible device)"),
        NodeKind::Integer(i) if *i >= 1 => {
            u64::try_from(*i).map_or(Devices::Invalid, Devices::Count)
        }
        NodeKind::Array(items) => {
            let ids: Vec<i128> = items
                .iter()
                .filter_map(|i| match i.kind {
                    NodeKind::Integer(v) if v >= 0 => Some(v),
                    _ => None,
                })
                .collect();
            device_ids(ids, items.len())
        }
        NodeKind::String(s) => {
            let s = s.trim();
            if s == "auto" {
                Devices::Machine("\"auto\"")
            } else if s == "-1" {
                Devices::Machine("\"-1\" (every visible device)")
            } else if s.contains(',') {
                let ids: Vec<&str> = s
                    .split(',')
                    .map(str::trim)
                    .filter(|x| !x.is_empty())
                    .collect();
                let parsed: Vec<u64> = ids.iter().filter_map(|x| x.parse().ok()).collect();
                device_ids(parsed, ids.len())
            } else {
                match s.parse::<u64>() {
                    Ok(n) if n >= 1 => Devices::Count(n),
                    _ => Devices::Invalid,
                }
            }
        }
        _ => Devices::Invalid,
    }
}

/// The devices a list of ids names: their count when every one of the
/// `written` entries is an id, none is named twice and there is one at
/// least, else `Invalid`.
fn device_ids<T: Ord>(mut ids: Vec<T>, written: usize) -> Devices {
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    if count != written || ids.len() != count || count == 0 {
        Devices::Invalid
    } else {
        Devices::Count(count as u64)
    }
}

/// The world size: `devices × num_nodes`, or the options when the machine
/// decides; `None` with a finding when it cannot be known.
pub(crate) fn world(r: &mut Reader, opts: &ImportOptions, t: &Trainer) -> Option<u64> {
    let key = if r.has(&t.path("devices")) || !r.has(&t.path("gpus")) {
        "devices"
    } else {
        "gpus"
    };
    let path = t.path(key);
    let devices = match r.node(&path).cloned() {
        // An OmegaConf interpolation (`${oc.env:NUM_GPUS,1}`), resolved.
        Some(node) => Some(r.resolved(&path, node)?.kind),
        None => None,
    };
    let devices = match devices {
        None | Some(NodeKind::Null) => Devices::Machine("not set (\"auto\")"),
        Some(kind) => parse(&kind),
    };
    let nodes = r
        .uint(&t.path("num_nodes"), 1)
        .map(|v| v.value)
        .or(opts.num_nodes)
        .unwrap_or(1);
    let given = super::super::dialect::world_from_options(opts);
    match devices {
        Devices::Count(d) => {
            let f = d.saturating_mul(nodes);
            if let Some(w) = given
                && w != f
            {
                let range = r.range_of(&path);
                r.push(
                    Diagnostic::error(
                        Code::InteropWorldSize,
                        owned(&path),
                        format!("{key} × num_nodes = {f}, but the world size given is {w}"),
                    )
                    .warning()
                    .help("make them agree; accum uses the file's devices × num_nodes")
                    .at(range, "device count"),
                );
            }
            Some(f)
        }
        Devices::Machine(what) => match given {
            Some(w) => Some(w),
            None => {
                let range = r.range_of(&path);
                r.push(
                    Diagnostic::error(
                        Code::Missing,
                        owned(&path),
                        format!("{key} is {what}, so the number of devices depends on the machine"),
                    )
                    .help("give the world size (--world-size N), or write devices as a number")
                    .at(range, "device count needed"),
                );
                None
            }
        },
        Devices::Invalid => {
            let range = r.range_of(&path);
            r.push(
                Diagnostic::error(
                    Code::InteropValue,
                    owned(&path),
                    format!("{key} is not a value Lightning accepts: a count ≥ 1, -1, \"auto\", or a list of distinct device ids"),
                )
                .help("write devices as a number of devices, a list of ids, or \"auto\"")
                .at(range, "not a device count"),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Node;

    fn node(kind: NodeKind) -> Node {
        Node { range: 0..0, kind }
    }

    #[test]
    fn device_forms_read_as_lightning_reads_them() {
        let s = |t: &str| parse(&NodeKind::String(t.into()));
        assert_eq!(s("0,"), Devices::Count(1));
        assert_eq!(s("0,1,3"), Devices::Count(3));
        assert_eq!(s("2"), Devices::Count(2));
        assert!(matches!(s("auto"), Devices::Machine(_)));
        assert!(matches!(s("-1"), Devices::Machine(_)));
        assert_eq!(s("0,0"), Devices::Invalid);
        assert_eq!(s("0"), Devices::Invalid);
        assert_eq!(parse(&NodeKind::Integer(4)), Devices::Count(4));
        assert!(matches!(parse(&NodeKind::Integer(-1)), Devices::Machine(_)));
        assert_eq!(parse(&NodeKind::Integer(0)), Devices::Invalid);
        let list = NodeKind::Array(vec![node(NodeKind::Integer(0)), node(NodeKind::Integer(2))]);
        assert_eq!(parse(&list), Devices::Count(2));
    }
}
