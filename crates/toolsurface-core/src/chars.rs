//! The shared character table (`python/toolsurface/data/chars.tsv`): classes and folds.
//!
//! Both engines read the same table so that they agree on one Unicode version whatever
//! interpreter or Rust toolchain runs them. The parser mirrors `CharTable.parse` of the
//! pure engine (`retrieval/analysis.py`): Python's `str.splitlines` line breaks, Python's
//! whitespace for splitting a line into fields, and the same validity rules.

use rustc_hash::FxHashMap;

use crate::error::{CharTableProblem, Error};
use crate::pystr::{py_isspace, py_splitlines};

/// Class of a code point in the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// `U`: upper-case or title-case letter.
    Upper,
    /// `L`: lower-case letter.
    Lower,
    /// `O`: other letter (modifier letters, letters without case).
    Other,
    /// `M`: combining mark.
    Mark,
    /// `N`: number.
    Number,
    /// `I`: ignorable (format characters), removed before analysis.
    Ignore,
    /// Not in the table: separates words.
    Sep,
}

impl Class {
    /// A letter: upper, lower or other.
    #[inline]
    pub fn is_letter(self) -> bool {
        matches!(self, Class::Upper | Class::Lower | Class::Other)
    }

    /// A base character of an identifier: a letter or a number.
    #[inline]
    pub fn is_base(self) -> bool {
        matches!(
            self,
            Class::Upper | Class::Lower | Class::Other | Class::Number
        )
    }

    fn from_letter(s: &str) -> Option<Class> {
        Some(match s {
            "U" => Class::Upper,
            "L" => Class::Lower,
            "O" => Class::Other,
            "M" => Class::Mark,
            "N" => Class::Number,
            "I" => Class::Ignore,
            _ => return None,
        })
    }
}

/// Code points below this bound have their class and fold in dense tables
/// (Latin, Greek, Cyrillic and their neighbours).
const DENSE: u32 = 0x800;

/// Character classes and lower-case folds parsed from `chars.tsv`.
#[derive(Clone, Debug)]
pub struct CharTable {
    starts: Vec<u32>,
    ends: Vec<u32>,
    classes: Vec<Class>,
    dense_class: Vec<Class>,
    dense_fold: Vec<char>,
    folds: FxHashMap<u32, char>,
}

fn parse_hex(s: &str) -> Result<u32, CharTableProblem> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(CharTableProblem::InvalidHex(s.to_string()));
    }
    u32::from_str_radix(digits, 16).map_err(|_| CharTableProblem::HexOutOfRange(s.to_string()))
}

impl CharTable {
    /// Parse the table's text; a malformed line is an error naming its number.
    pub fn parse(text: &str) -> Result<CharTable, Error> {
        let mut starts: Vec<u32> = Vec::new();
        let mut ends: Vec<u32> = Vec::new();
        let mut classes: Vec<Class> = Vec::new();
        let mut folds: FxHashMap<u32, char> = FxHashMap::default();
        for (idx, line) in py_splitlines(text).into_iter().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parse_line = || -> Result<(), CharTableProblem> {
                let parts: Vec<&str> = line.split(py_isspace).filter(|p| !p.is_empty()).collect();
                match parts.as_slice() {
                    ["C", first, last, class] => {
                        let class = Class::from_letter(class)
                            .ok_or_else(|| CharTableProblem::UnknownClass(class.to_string()))?;
                        let (first, last) = (parse_hex(first)?, parse_hex(last)?);
                        if first > last || ends.last().is_some_and(|&e| first <= e) {
                            return Err(CharTableProblem::Overlap);
                        }
                        starts.push(first);
                        ends.push(last);
                        classes.push(class);
                        Ok(())
                    }
                    ["F", cp, folded] => {
                        let (cp, folded) = (parse_hex(cp)?, parse_hex(folded)?);
                        let folded =
                            char::from_u32(folded).ok_or(CharTableProblem::FoldTarget(folded))?;
                        folds.insert(cp, folded);
                        Ok(())
                    }
                    _ => Err(CharTableProblem::Shape),
                }
            };
            parse_line().map_err(|problem| Error::CharTable {
                line: idx + 1,
                text: line.to_string(),
                problem,
            })?;
        }
        let mut table = CharTable {
            starts,
            ends,
            classes,
            dense_class: Vec::new(),
            dense_fold: Vec::new(),
            folds,
        };
        let dense_class: Vec<Class> = (0..DENSE).map(|cp| table.class_slow(cp)).collect();
        let dense_fold: Vec<char> = (0..DENSE)
            .map(|cp| {
                let c = char::from_u32(cp).unwrap_or('\0');
                table.folds.get(&cp).copied().unwrap_or(c)
            })
            .collect();
        table.dense_class = dense_class;
        table.dense_fold = dense_fold;
        Ok(table)
    }

    fn class_slow(&self, cp: u32) -> Class {
        // The last range whose start is <= cp (bisect_right - 1).
        let i = self.starts.partition_point(|&s| s <= cp);
        if i > 0 && cp <= self.ends[i - 1] {
            self.classes[i - 1]
        } else {
            Class::Sep
        }
    }

    /// Class of a character; code points the table does not cover separate words.
    #[inline]
    pub fn class(&self, c: char) -> Class {
        let cp = c as u32;
        match self.dense_class.get(cp as usize) {
            Some(&cl) => cl,
            None => self.class_slow(cp),
        }
    }

    /// Lower-case fold of a character (unchanged when the table has no fold for it).
    #[inline]
    pub fn fold(&self, c: char) -> char {
        let cp = c as u32;
        match self.dense_fold.get(cp as usize) {
            Some(&f) => f,
            None => self.folds.get(&cp).copied().unwrap_or(c),
        }
    }

    /// Fold every character of `text`.
    pub fn fold_str(&self, text: &str) -> String {
        text.chars().map(|c| self.fold(c)).collect()
    }

    /// Approximate heap bytes held by the table.
    pub fn memory_bytes(&self) -> usize {
        self.starts.capacity() * 4
            + self.ends.capacity() * 4
            + self.classes.capacity() * std::mem::size_of::<Class>()
            + self.dense_class.capacity() * std::mem::size_of::<Class>()
            + self.dense_fold.capacity() * 4
            + self.folds.capacity() * (4 + 4 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_classifies() {
        let t = CharTable::parse(
            "# comment\nC 30 39 N\nC 41 5A U\nC 61 7A L\nC 300 36F M\nC 200B 200F I\n\
             C 10000 1000B O\nF 41 61\nF 10000 10001\n",
        )
        .unwrap();
        assert_eq!(t.class('5'), Class::Number);
        assert_eq!(t.class('A'), Class::Upper);
        assert_eq!(t.class('z'), Class::Lower);
        assert_eq!(t.class('_'), Class::Sep);
        assert_eq!(t.class('\u{301}'), Class::Mark);
        assert_eq!(t.class('\u{200D}'), Class::Ignore);
        assert_eq!(t.class('\u{10005}'), Class::Other);
        assert_eq!(t.class('\u{1000C}'), Class::Sep);
        assert_eq!(t.class('\u{10FFFF}'), Class::Sep);
        assert_eq!(t.fold('A'), 'a');
        assert_eq!(t.fold('B'), 'B');
        assert_eq!(t.fold('\u{10000}'), '\u{10001}');
        assert_eq!(t.fold('\u{10002}'), '\u{10002}');
    }

    #[test]
    fn errors_name_the_line() {
        let e = CharTable::parse("C 30 39 N\n\nC 20 25 U\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("chars.tsv line 3:"), "{e}");
        let e = CharTable::parse("C 30 39 X\n").unwrap_err().to_string();
        assert!(e.starts_with("chars.tsv line 1:"), "{e}");
        let e = CharTable::parse("# x\nF 41\n").unwrap_err().to_string();
        assert!(e.starts_with("chars.tsv line 2:"), "{e}");
        let e = CharTable::parse("F 41 D800\n").unwrap_err().to_string();
        assert!(e.starts_with("chars.tsv line 1:"), "{e}");
        let e = CharTable::parse("C zz 39 N\n").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
        let e = CharTable::parse("   \n").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }
}
