//! Borrowing a Python string's UTF-8 without copying it.
//!
//! CPython keeps a UTF-8 copy of a `str` once it has been asked for one, and
//! `PyUnicode_AsUTF8AndSize` returns it; a text passed to several calls (one per target, say) is
//! encoded once. It is in the limited API only from 3.10, but every CPython 3 exports it, so the
//! abi3 wheel for 3.9 declares it here rather than copy the text on every call (PyO3's `String`
//! extraction under `abi3-py39` encodes into a new bytes object each time: on an 8 MiB text that
//! costs more than finding its emails).

use pyo3::exceptions::PyUnicodeEncodeError;
use pyo3::ffi::{Py_ssize_t, PyObject};
use pyo3::prelude::*;
use pyo3::types::PyString;
use quarry_core::ErrorCode;

use crate::errors::raised;

unsafe extern "C" {
    fn PyUnicode_AsUTF8AndSize(unicode: *mut PyObject, size: *mut Py_ssize_t) -> *const u8;
}

/// The UTF-8 of `text`, valid while `text` is. A string holding a lone surrogate (which no
/// UTF-8 can carry) is `InvalidUtf8`.
pub fn utf8<'a>(text: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    let mut size: Py_ssize_t = 0;
    // SAFETY: `text` is a live `str` (the GIL is held, the Bound keeps it alive); the call
    // returns a pointer to its cached UTF-8 of `size` bytes, owned by the object, or NULL with
    // an exception set.
    let data = unsafe { PyUnicode_AsUTF8AndSize(text.as_ptr(), &mut size) };
    if data.is_null() {
        let error = PyErr::fetch(text.py());
        if error.is_instance_of::<PyUnicodeEncodeError>(text.py()) {
            return Err(raised(
                ErrorCode::InvalidUtf8,
                format!(
                    "the text cannot be encoded as UTF-8 ({error}); remove lone surrogates, e.g. \
                     text.encode('utf-8', 'replace').decode()"
                ),
            ));
        }
        return Err(error);
    }
    let length = usize::try_from(size).expect("a string's size is never negative");
    // SAFETY: CPython guarantees `length` bytes of valid UTF-8 at `data` for the object's life,
    // which outlives the returned borrow ('a).
    let bytes = unsafe { std::slice::from_raw_parts(data, length) };
    // SAFETY: CPython produced it as UTF-8 (its encoder refuses surrogates, handled above).
    Ok(unsafe { std::str::from_utf8_unchecked(bytes) })
}
