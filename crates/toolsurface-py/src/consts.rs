//! The core's public constants as module attributes, so Python can check its own copies
//! against them (`tests/test_consts.py` pins them equal to the pure engine's).
//!
//! `FIELD_NAMES`, `FILE_EXTENSIONS`, `ER_ROOTS`, `ASK_MARKERS`, `SUBJECT_MARKERS`,
//! `FUNCTION_WORDS`, `READ_VERBS` and `WRITE_VERBS` are tuples and `CONNECTORS` a string,
//! the types of their Python twins.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use toolsurface_core as core;
use toolsurface_core::analysis::reading::{READ_VERBS, WRITE_VERBS};
use toolsurface_core::analysis::{
    ASK_MARKERS, CONNECTORS, ER_ROOTS, FILE_EXTENSIONS, FUNCTION_WORDS, MIN_TOKEN_CHARS,
    SUBJECT_MARKERS,
};
use toolsurface_core::{
    ALIASES_PRUNED_UP_TO, FUZZY_MIN_CHARS, FUZZY_MIN_SIMILARITY, FUZZY_PER_TOKEN, PAYLOAD_WEIGHT,
    SETTINGS_CACHE,
};

/// Add the constants to `m`.
pub(crate) fn add_to(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("N_FIELDS", core::N_FIELDS)?;
    m.add("FIELD_NAMES", PyTuple::new(m.py(), core::FIELD_NAMES)?)?;
    m.add("SETTINGS_CACHE", SETTINGS_CACHE)?;
    m.add("FUZZY_MIN_CHARS", FUZZY_MIN_CHARS)?;
    m.add("FUZZY_MIN_SIMILARITY", FUZZY_MIN_SIMILARITY)?;
    m.add("FUZZY_PER_TOKEN", FUZZY_PER_TOKEN)?;
    m.add("ALIASES_PRUNED_UP_TO", ALIASES_PRUNED_UP_TO)?;
    m.add("PAYLOAD_WEIGHT", PAYLOAD_WEIGHT)?;
    m.add("MIN_TOKEN_CHARS", MIN_TOKEN_CHARS)?;
    m.add("CONNECTORS", CONNECTORS.iter().collect::<String>())?;
    m.add("FILE_EXTENSIONS", PyTuple::new(m.py(), FILE_EXTENSIONS)?)?;
    m.add("ER_ROOTS", PyTuple::new(m.py(), ER_ROOTS)?)?;
    m.add("ASK_MARKERS", PyTuple::new(m.py(), ASK_MARKERS)?)?;
    m.add("SUBJECT_MARKERS", PyTuple::new(m.py(), SUBJECT_MARKERS)?)?;
    m.add("FUNCTION_WORDS", PyTuple::new(m.py(), FUNCTION_WORDS)?)?;
    m.add("READ_VERBS", PyTuple::new(m.py(), READ_VERBS)?)?;
    m.add("WRITE_VERBS", PyTuple::new(m.py(), WRITE_VERBS)?)?;
    Ok(())
}
