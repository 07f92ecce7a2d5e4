//! A configuration of any type read through its JSON Schema
//! (`sheet --schema SCHEMA FILE`), as `validate --schema` reads it: the
//! plan roles, the batch ramp-up and the lengths are found at their
//! `x-accum-*` places, and [`SchemaRun`] hands them to the core like a
//! derived config would, so the stock binary builds the same sheet as the
//! type's own binary (`accum_cli::run::<T>()`) without its sheet hook.

use std::path::Path;

use accum_core::{AccumConfig, FieldInfo, FieldPath, RampValue, RoleValue, SpanValue};
use serde_json::Value;

use crate::diagnostic::{self, Severity};
use crate::error::CliError;
use crate::output::eprint_styled;
use crate::source::Document;
use crate::validate::SchemaMap;

/// A configuration's plan values, read through a schema. `VARIABLE` is the
/// schema's `x-accum-variable-length`: whether lengths in tokens need no
/// fixed `seq_len`.
#[derive(Clone, Debug)]
pub(crate) struct SchemaRun<const VARIABLE: bool> {
    roles: Vec<RoleValue>,
    spans: Vec<SpanValue>,
    ramps: Vec<RampValue>,
}

impl<const VARIABLE: bool> AccumConfig for SchemaRun<VARIABLE> {
    // The fields are the schema's, known at run time: the values below
    // carry their paths.
    const FIELDS: &'static [FieldInfo] = &[];
    const VARIABLE_LENGTH: bool = VARIABLE;

    fn role_values(&self, _prefix: &FieldPath, out: &mut Vec<RoleValue>) {
        out.extend(self.roles.iter().cloned());
    }

    fn span_values(&self, _prefix: &FieldPath, out: &mut Vec<SpanValue>) {
        out.extend(self.spans.iter().cloned());
    }

    fn ramp_values(&self, _prefix: &FieldPath, out: &mut Vec<RampValue>) {
        out.extend(self.ramps.iter().cloned());
    }
}

/// A configuration file read through a schema, valid.
pub(crate) enum Read {
    /// Lengths in tokens need a fixed `seq_len`.
    Fixed(SchemaRun<false>),
    /// The data's lengths vary (`x-accum-variable-length`).
    Variable(SchemaRun<true>),
}

/// Reads `file` through the schema at `schema`: its findings are printed
/// as `validate --schema` prints them, and an error ends the command
/// (exit 1).
pub(crate) fn read(file: &Path, schema: &Path) -> Result<(Document, Read), CliError> {
    let text = crate::source::read_text(schema, crate::source::MAX_FILE_BYTES)
        .map_err(|err| CliError::usage(format!("cannot read the schema: {err}")))?;
    let value: Value = serde_json::from_str(&text).map_err(|err| {
        CliError::usage(format!(
            "{}: the schema is not JSON: {err}; give the schema the configuration type's own binary writes (`schema -o FILE`)",
            accum_core::shown::path(schema)
        ))
    })?;
    crate::validate::read_schema(&value)
        .map_err(|err| CliError::usage(format!("{}: {err}", accum_core::shown::path(schema))))?;
    let map = SchemaMap::from_schema(&value);
    if map.roles.is_empty() {
        return Err(CliError::usage(format!(
            "{}: the schema marks no plan role (`x-accum-role`); give the schema of a `#[derive(AccumConfig)]` type",
            accum_core::shown::path(schema)
        )));
    }
    let doc = crate::load::load_or_print(file)?;
    let instance = crate::validate::instance(&doc, &value, &map);
    let findings =
        crate::validate::validate(&doc, &instance, &value, &map, true).map_err(CliError::usage)?;
    if !findings.is_empty() {
        eprint_styled(&diagnostic::render_text(
            &doc.name,
            &doc.text,
            &findings,
            crate::style::stderr(),
        ));
    }
    let errors = diagnostic::count(&findings, Severity::Error);
    if errors > 0 {
        return Err(CliError::invalid(format!(
            "{}: {errors} error{} (run `{} validate --schema {} {}` for details)",
            doc.name,
            if errors == 1 { "" } else { "s" },
            crate::output::bin_name(),
            accum_core::shown::path(schema),
            accum_core::shown::path(file)
        )));
    }
    let (roles, _, ramps) = crate::validate::plan_values(&instance, &map, &[]);
    // Every length, as a derived config lists them, in the file's order.
    let mut spans = crate::validate::all_spans(&instance, &map);
    spans.sort_by_key(|v| {
        doc.node(v.path.segments())
            .map_or(usize::MAX, |node| node.range.start)
    });
    let read = if map.variable_length {
        Read::Variable(SchemaRun {
            roles,
            spans,
            ramps,
        })
    } else {
        Read::Fixed(SchemaRun {
            roles,
            spans,
            ramps,
        })
    };
    Ok((doc, read))
}
