//! The first-sentence cut of a description (docs/analysis.md, section 2), for the binding's
//! fast path of registering a tool.
//!
//! The reference is `python/toolsurface/retrieval/fields.py`, and its rules ask Python's
//! own character predicates (`isspace`, `isalpha`, `isupper`, `isdigit`) of a few characters:
//! those around a full stop and the first of a line. This module answers them exactly for
//! white space (Python's fixed list) and for the characters it knows (ASCII, the Latin-1
//! letters, basic Cyrillic: the same class in every Unicode version Python uses). Where a
//! decision turns on any other character, [`split_description`] returns `None` and the
//! caller takes the Python path, so the two never disagree.

use crate::pystr::{py_isspace as py_space, py_strip};

/// Words whose full stop never ends a sentence (lower-cased, dots inside kept).
const ABBREVIATIONS: [&str; 32] = [
    "e.g", "i.e", "eg", "ie", "vs", "cf", "approx", "incl", "esp", "fig", "vol", "mr", "mrs", "ms",
    "dr", "jr", "sr", "inc", "ltd", "corp", "т.е", "т.к", "т.н", "напр", "др", "см", "ср", "стр",
    "тыс", "млн", "млрд", "проф",
];
/// Abbreviations that end a sentence only when an upper-case letter starts the next one.
const SOFT_ABBREVIATIONS: [&str; 4] = ["etc", "т.д", "т.п", "и.т.д"];
/// Characters that, first on a line, make the line break before it end the sentence.
const BLOCK_STARTS: [char; 7] = ['-', '*', '•', '#', '>', '|', '`'];

/// A character's Python class where this module knows it: `(isalpha, isupper, isdigit)`.
fn known(c: char) -> Option<(bool, bool, bool)> {
    match c {
        'A'..='Z' => Some((true, true, false)),
        'a'..='z' => Some((true, false, false)),
        '0'..='9' => Some((false, false, true)),
        '\0'..='\u{7f}' => Some((false, false, false)),
        '\u{d7}' | '\u{f7}' => Some((false, false, false)),
        '\u{c0}'..='\u{de}' | '\u{400}'..='\u{42f}' => Some((true, true, false)),
        '\u{df}'..='\u{ff}' | '\u{430}'..='\u{45f}' => Some((true, false, false)),
        _ => None,
    }
}

/// The run of letters and dots ending at byte `end`, lower-cased, and whether the
/// character that stopped the run is one this module knows (`false`: Python might have
/// taken it as a letter and made a longer word).
fn word_before(text: &str, end: usize) -> (String, bool) {
    let head = &text[..end];
    let mut start = end;
    let mut sure = true;
    for (i, c) in head.char_indices().rev() {
        let letter = match known(c) {
            Some((alpha, _, _)) => alpha || c == '.',
            None if py_space(c) => false,
            None => {
                sure = false;
                false
            }
        };
        if !letter {
            break;
        }
        start = i;
    }
    (head[start..].to_lowercase(), sure)
}

/// Whether the line break at byte `pos` ends the first sentence; `None` when that turns on
/// a character this module does not know.
fn line_break_ends(text: &str, pos: usize, line_start: usize) -> Option<bool> {
    if py_strip(&text[line_start..pos]).is_empty() {
        return Some(false);
    }
    let rest = &text[pos + 1..];
    let next_line = rest.find('\n').map_or(rest, |e| &rest[..e]);
    let Some(first) = next_line.chars().find(|&c| !py_space(c)) else {
        return Some(true);
    };
    if BLOCK_STARTS.contains(&first) {
        return Some(true);
    }
    known(first).map(|(_, upper, digit)| upper || digit)
}

/// A wrapped first sentence with its line breaks folded into single spaces.
fn joined(summary: &str) -> String {
    if !summary.contains('\n') {
        return py_strip(summary).to_string();
    }
    let lines: Vec<&str> = summary
        .split('\n')
        .map(py_strip)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" ")
}

/// `(summary, body)` of a description, as `fields.split_description` cuts it, or `None`
/// when the cut turns on a character whose Python class this module does not know.
pub fn split_description(description: &str) -> Option<(String, String)> {
    let text = py_strip(description);
    let mut depth = 0usize;
    let mut line_start = 0usize;
    // The last closing bracket, worked out when first needed: most descriptions never need it.
    let mut last_closer: Option<Option<usize>> = None;
    // Every mark is ASCII, so no byte of a multi-byte character matches one.
    for (i, &b) in text.as_bytes().iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' => {
                if line_break_ends(text, i, line_start)? {
                    return Some((joined(&text[..i]), py_strip(&text[i + 1..]).to_string()));
                }
                line_start = i + 1;
            }
            b'.' | b'!' | b'?' => {
                if text[i + 1..].chars().next().is_some_and(|c| !py_space(c)) {
                    continue;
                }
                if depth > 0 {
                    let closer = *last_closer.get_or_insert_with(|| {
                        [')', ']', '}'].iter().filter_map(|&c| text.rfind(c)).max()
                    });
                    if closer.is_some_and(|c| c > i) {
                        continue;
                    }
                }
                if b == b'.' {
                    let (word, sure) = word_before(text, i);
                    let hard = ABBREVIATIONS.contains(&word.as_str());
                    let soft = SOFT_ABBREVIATIONS.contains(&word.as_str());
                    if (hard || soft) && !sure {
                        return None;
                    }
                    if hard {
                        continue;
                    }
                    if soft {
                        let upper = match text[i + 1..].chars().find(|&c| !py_space(c)) {
                            None => false,
                            Some(c) => known(c)?.1,
                        };
                        if !upper {
                            continue;
                        }
                    }
                }
                return Some((joined(&text[..=i]), py_strip(&text[i + 1..]).to_string()));
            }
            _ => {}
        }
    }
    Some((joined(text), String::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(s: &str) -> (String, String) {
        split_description(s).expect("known characters only")
    }

    #[test]
    fn first_sentence_and_rest() {
        assert_eq!(
            cut("  List issues. Filters by state.  "),
            ("List issues.".into(), "Filters by state.".into())
        );
        assert_eq!(cut("No end here"), ("No end here".into(), String::new()));
        assert_eq!(cut(""), (String::new(), String::new()));
    }

    #[test]
    fn abbreviations_and_brackets_do_not_end_it() {
        assert_eq!(cut("Use e.g. this. Rest.").0, "Use e.g. this.");
        assert_eq!(
            cut("Move an issue (e.g. Done). Rest.").0,
            "Move an issue (e.g. Done)."
        );
        assert_eq!(cut("Open (never closed. Rest.").0, "Open (never closed.");
        assert_eq!(
            cut("Files, docs etc. and more. Rest.").0,
            "Files, docs etc. and more."
        );
        assert_eq!(cut("Files, docs etc. More here.").0, "Files, docs etc.");
        assert_eq!(
            cut("Найти файлы, т.е. документы. Ещё.").0,
            "Найти файлы, т.е. документы."
        );
    }

    #[test]
    fn line_breaks() {
        assert_eq!(
            cut("Get a file\nfrom the repo. Rest."),
            ("Get a file from the repo.".into(), "Rest.".into())
        );
        assert_eq!(
            cut("Get a file\nArgs: path"),
            ("Get a file".into(), "Args: path".into())
        );
        assert_eq!(
            cut("Get a file\n  • path"),
            ("Get a file".into(), "• path".into())
        );
        assert_eq!(
            cut("Get a file\n\n\nmore"),
            ("Get a file".into(), "more".into())
        );
        assert_eq!(cut("\u{3000}Get\u{1c}"), ("Get".into(), String::new()));
    }

    #[test]
    fn unknown_characters_at_a_decision_defer_to_python() {
        // The line after the break starts with a Greek letter: its case decides.
        assert_eq!(split_description("Get a file\nΣ rest"), None);
        // A soft abbreviation followed by a Greek letter.
        assert_eq!(split_description("Docs etc. Σ more"), None);
        // An unknown character before an abbreviation might be a letter of a longer word.
        assert_eq!(split_description("Use ǅe.g. this. Rest."), None);
        // Unknown characters elsewhere decide nothing.
        assert_eq!(
            cut("Σ list «files». Rest."),
            ("Σ list «files».".into(), "Rest.".into())
        );
    }
}
