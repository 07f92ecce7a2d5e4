//! stub
use super::{Canonical, ExportError, ImportError, ImportOptions, Imported};
pub(crate) fn import(
    name: &str,
    _text: &str,
    _opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    Err(ImportError::Invalid {
        name: name.to_owned(),
        findings: Vec::new(),
    })
}
pub(crate) fn export(_c: &Canonical) -> Result<String, ExportError> {
    Ok(String::new())
}
