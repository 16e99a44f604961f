//! Python's string semantics the analysis mirrors: `str.isspace`, `str.strip()`,
//! `str.splitlines()` and `repr` (for error messages), so that both engines split, strip and
//! name text alike.

/// Python's `str.isspace` (used by `str.split()` and `str.strip()`).
#[inline]
pub(crate) fn py_isspace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{0b}'
            | '\u{0c}'
            | '\r'
            | '\u{1c}'..='\u{1f}'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python's `str.strip()` with no argument.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// Python's `str.splitlines()` (line breaks dropped).
pub(crate) fn py_splitlines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut iter = text.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\u{0b}'
                | '\u{0c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if !is_break {
            continue;
        }
        out.push(&text[start..i]);
        let mut end = i + c.len_utf8();
        if c == '\r' {
            if let Some(&(j, '\n')) = iter.peek() {
                iter.next();
                end = j + 1;
            }
        }
        start = end;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Python's `repr` of a string, closely enough for error messages: quotes chosen as Python
/// does, control, format and separator characters escaped.
pub(crate) fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || ('\u{7f}'..='\u{a0}').contains(&c) => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if matches!(
                c,
                '\u{ad}'
                    | '\u{1680}'
                    | '\u{2000}'..='\u{200f}'
                    | '\u{2028}'..='\u{202f}'
                    | '\u{205f}'..='\u{206f}'
                    | '\u{3000}'
                    | '\u{feff}'
                    | '\u{e000}'..='\u{f8ff}'
            ) =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_line_semantics() {
        assert_eq!(py_splitlines("a\r\nb\rc\nd"), vec!["a", "b", "c", "d"]);
        assert_eq!(py_splitlines("a\n\nb\n"), vec!["a", "", "b"]);
        assert_eq!(py_splitlines(""), Vec::<&str>::new());
        assert_eq!(py_strip("\u{1f} x \u{3000}"), "x");
        assert_eq!(py_repr("a'b"), "\"a'b\"");
        assert_eq!(py_repr("a\n\u{200b}\u{1}\\"), "'a\\n\\u200b\\x01\\\\'");
        assert_eq!(py_repr("ёлка"), "'ёлка'");
    }
}
