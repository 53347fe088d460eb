//! `quarry._native`: the Rust side of the Python package. Each function takes plain values and
//! answers JSON text, or raises the `quarry.errors` class named after the failure's row in the
//! error-code table; `python/quarry/` turns the JSON into Python values and types. Work that
//! takes time runs with the GIL released.

mod errors;
mod extractor;
mod grounding;
mod parsing;
mod skill;
mod text;

use pyo3::prelude::*;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(skill::extract, module)?)?;
    module.add_function(wrap_pyfunction!(skill::check, module)?)?;
    module.add_function(wrap_pyfunction!(skill::scan, module)?)?;
    module.add_function(wrap_pyfunction!(grounding::ground, module)?)?;
    module.add_function(wrap_pyfunction!(parsing::parse_json, module)?)?;
    module.add_function(wrap_pyfunction!(errors::error_codes, module)?)?;
    module.add_class::<extractor::NativeExtractor>()?;
    module.add_class::<extractor::CancelToken>()?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
