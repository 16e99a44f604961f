//! A tool's field texts packed into one `bytes` object, the form the native engine makes
//! and indexes them in (`retrieval/packed_fields.py` is the same format in Python).
//!
//! The layout: the byte lengths of the search hint, summary, body and parameters texts,
//! each a little-endian `u32`, then those four texts' UTF-8, in that order. The name, the
//! first field, is the tool's own and not repeated. One object of about the texts' size
//! replaces a tuple of five strings (about 290 bytes a tool of headers), and an index build
//! reads its UTF-8 where it lies, where a non-ASCII string would have CPython cache a UTF-8
//! copy inside it for its whole life.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The texts a packed object holds: every field but the name.
pub(crate) const PACKED: usize = 4;

/// The lengths before the texts.
const HEADER: usize = 4 * PACKED;

/// `texts` packed as a `bytes` object; `None` when one is 4 GiB or longer, which the field
/// cap (`FIELD_MAX_CHARS` characters) rules out for the texts of a tool.
pub(crate) fn pack<'py>(
    py: Python<'py>,
    texts: [&str; PACKED],
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let mut lens = [0u32; PACKED];
    for (len, text) in lens.iter_mut().zip(texts) {
        let Ok(n) = u32::try_from(text.len()) else {
            return Ok(None);
        };
        *len = n;
    }
    let size = HEADER + texts.iter().map(|t| t.len()).sum::<usize>();
    let mut at = HEADER;
    let made = PyBytes::new_with(py, size, |buf| {
        for (slot, len) in buf.chunks_exact_mut(4).zip(lens) {
            slot.copy_from_slice(&len.to_le_bytes());
        }
        for text in texts {
            buf[at..at + text.len()].copy_from_slice(text.as_bytes());
            at += text.len();
        }
        Ok(())
    })?;
    Ok(Some(made))
}

/// The four texts of a packed object, borrowed from it, or `None` when `packed` is not of
/// the layout above: a short header, lengths that do not add up to what follows, a text
/// that is not UTF-8.
pub(crate) fn unpack(packed: &[u8]) -> Option<[&str; PACKED]> {
    let (header, mut rest) = packed.split_at_checked(HEADER)?;
    let mut texts = [""; PACKED];
    for (text, len) in texts.iter_mut().zip(header.chunks_exact(4)) {
        let len = u32::from_le_bytes(len.try_into().ok()?) as usize;
        let (bytes, after) = rest.split_at_checked(len)?;
        *text = std::str::from_utf8(bytes).ok()?;
        rest = after;
    }
    rest.is_empty().then_some(texts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpack_refuses_what_pack_cannot_make() {
        let past_end = [8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(unpack(&past_end), None, "a length past the end");
        let mut ok = vec![2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0];
        ok.extend_from_slice(b"hix");
        assert_eq!(unpack(&ok), Some(["hi", "", "", "x"]));
        ok.push(b'!');
        assert_eq!(unpack(&ok), None, "bytes left over");
        let mut bad = vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        bad.push(0xff);
        assert_eq!(unpack(&bad), None, "not UTF-8");
        assert_eq!(unpack(&[0; 15]), None, "a short header");
        assert_eq!(unpack(&[0; 16]), Some(["", "", "", ""]));
    }
}
