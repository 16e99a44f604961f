//! `toolsurface._native`: PyO3 bindings of `toolsurface-core`.
//!
//! Binding code only: it converts types, detaches from the interpreter for index builds
//! and batches (single searches stay attached: they take microseconds), maps the core's
//! errors to `ValueError` and a Rust panic to `RuntimeError` (never `PanicException`).
//! The typed stub is `python/toolsurface/_native.pyi`.
//!
//! One concept a module: `errors.rs` (panics and core errors as Python exceptions),
//! `args.rs` (argument conversion), `batch.rs` (a batch's results
//! converted a chunk at a time, the interpreter let go between chunks), `consts.rs` (the core's constants), the classes
//! `analyzer.rs`, `analysed.rs` (a part of an index build's documents analysed), `lexicon.rs`, `filter.rs`, `index.rs`, `rules.rs`, `searcher.rs` and `plain_search.rs` (a registry's `search` on its hot path), and the functions
//! `schema.rs` (`tool_fields_packed`, with `json.rs`), `packed.rs` (the packed field texts' layout), `copy.rs` (`copy_json`), `sort.rs`
//! (`sort_by_name`) and `snapshot.rs` (`read_snapshot`, a surface snapshot's JSON read for a
//! restore).
//!
//! `alloc.rs` is the extension's global allocator: blocks of 64 KiB and more are mapped
//! and unmapped directly, so that an index build's freed temporaries leave the process
//! instead of staying in the rayon workers' glibc arenas.
//!
//! The `unsafe` code is in `alloc.rs` (the allocator, each block and its `libc` calls
//! argued sound), `searcher.rs` (it makes a search hit as `tuple.__new__` would but
//! without its generic call, for an admitted hit type, and leaves a hit of atomic items
//! untracked by the collector, as CPython leaves such tuples) and `schema.rs` (one pass over
//! a schema dict's items with borrowed pointers, a `str` comparison and a call without an
//! argument tuple, each in C with no Python code run); each `unsafe` block says why it is
//! sound. The rest of the crate denies `unsafe`.

#![deny(unsafe_code)]

mod aliases;
mod alloc;
mod analysed;
mod analyzer;
mod args;
mod batch;
mod consts;
mod copy;
mod errors;
mod filter;
mod index;
mod json;
mod lexicon;
mod names;
mod packed;
mod plain_search;
mod reading;
mod rules;
mod schema;
mod searcher;
mod snapshot;
mod sort;

use pyo3::prelude::*;

use crate::aliases::PyAliases;
use crate::analyzer::PyAnalyzer;
use crate::filter::PyFilter;
use crate::index::PyIndex;
use crate::lexicon::PyLexicon;
use crate::rules::PyBoostRules;
use crate::searcher::PySearcher;

/// Large blocks straight from the kernel, so that freed build memory leaves the process
/// (`alloc.rs`).
#[global_allocator]
static GLOBAL: alloc::Allocator = alloc::Allocator;

/// The native engine of toolsurface.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    consts::add_to(m)?;
    m.add_class::<PyAliases>()?;
    m.add_class::<analysed::PyAnalysedDocs>()?;
    m.add_class::<PyAnalyzer>()?;
    m.add_class::<PyLexicon>()?;
    m.add_class::<PyFilter>()?;
    m.add_class::<PyIndex>()?;
    m.add_class::<PySearcher>()?;
    m.add_class::<plain_search::PyPlainSearch>()?;
    m.add_class::<PyBoostRules>()?;
    m.add_function(wrap_pyfunction!(schema::tool_fields_packed, m)?)?;
    m.add_function(wrap_pyfunction!(copy::copy_json, m)?)?;
    m.add_function(wrap_pyfunction!(sort::sort_by_name, m)?)?;
    m.add_function(wrap_pyfunction!(reading::read_verb_names, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot::read_snapshot, m)?)?;
    Ok(())
}
