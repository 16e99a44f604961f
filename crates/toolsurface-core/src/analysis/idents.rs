//! Kinds of request identifier the query analysis weighs apart (docs/analysis.md §4): issue
//! keys, file names, path parts, and the words of the ask and subject markers.

use crate::analysis::analyzer::Analyzer;
use crate::analysis::language::{
    CLAUSE_ENDS, CLAUSE_SPACES, CLOSING_BRACKETS, SEPARABLE_PARTICLES,
};
use crate::chars::Class;

/// Words that open the ask of a request after its context (docs/analysis.md §4): what
/// comes before the first of them, past the request's first word, is what the user tells
/// about, not what they ask for ("the checks are green and Sam approved it, go ahead and
/// merge it"). Each is a sequence of whole identifiers, compared folded.
pub const ASK_MARKERS: [&str; 6] = [
    "can you",
    "could you",
    "would you",
    "go ahead and",
    "можешь",
    "сможешь",
];
/// Words that open the subject of a search (docs/analysis.md §4): what follows the first of
/// them, past the request's first word and its ask, is what the items sought are about
/// ("find the notion page about our hiring process"), not the action or its tool. Each is
/// one identifier, compared folded (so `насчёт` is written `насчет`).
pub const SUBJECT_MARKERS: [&str; 6] = [
    "about",
    "mentioning",
    "regarding",
    "containing",
    "про",
    "насчет",
];
/// The extensions that make an identifier a file name ([`Analyzer::is_file_name`]): the
/// common ones of documents, data, configuration and code. Not `js`: `Node.js`, `Next.js`
/// and `Vue.js` name products.
pub const FILE_EXTENSIONS: [&str; 51] = [
    "txt", "md", "rst", "json", "yaml", "yml", "toml", "ini", "cfg", "conf", "csv", "tsv", "sql",
    "log", "py", "ts", "tsx", "jsx", "go", "rs", "java", "kt", "rb", "php", "c", "h", "cpp", "cs",
    "swift", "sh", "xml", "html", "css", "env", "lock", "pdf", "doc", "docx", "xls", "xlsx", "ppt",
    "pptx", "png", "jpg", "jpeg", "gif", "svg", "zip", "gz", "tar", "tgz",
];

impl Analyzer {
    /// The separable-verb particle `ident` folds to, as its position in
    /// [`SEPARABLE_PARTICLES`] plus one; 0 for none.
    pub(crate) fn particle_code(&self, ident: &str) -> u8 {
        SEPARABLE_PARTICLES
            .iter()
            .position(|p| self.folds_to(ident, p))
            .map_or(0, |i| u8::try_from(i + 1).unwrap_or(0))
    }

    /// Whether the word ending at byte `end` of `text` ends a clause: the next character
    /// that is neither white space ([`CLAUSE_SPACES`]), a closing bracket
    /// ([`CLOSING_BRACKETS`]) nor of class I is one of [`CLAUSE_ENDS`], or there is none.
    pub(crate) fn ends_clause(&self, text: &str, end: usize) -> bool {
        text.get(end..)
            .unwrap_or("")
            .chars()
            .find(|&c| {
                !CLAUSE_SPACES.contains(&c)
                    && !CLOSING_BRACKETS.contains(&c)
                    && self.table().class(c) != Class::Ignore
            })
            .is_none_or(|c| CLAUSE_ENDS.contains(&c))
    }

    /// Whether `ident` folds to `word` (class-I characters aside): the identifier is that
    /// word, in any case.
    pub(crate) fn folds_to(&self, ident: &str, word: &str) -> bool {
        let mut want = word.chars();
        for c in ident.chars() {
            if self.table().class(c) == Class::Ignore {
                continue;
            }
            if want.next() != Some(self.table().fold(c)) {
                return false;
            }
        }
        want.next().is_none()
    }

    /// Whether an identifier is an issue key, class-I characters aside: an ASCII upper-case
    /// letter, one to nine more upper-case letters or digits, one hyphen, then ASCII digits
    /// (`ENG-1423`, `K8S-7`; not `eng-1423`, `A-1`, `ENG-14a`). Trackers (Jira, Linear,
    /// YouTrack) name issues so; a request that writes one is about an issue.
    pub fn is_issue_key(&self, ident: &str) -> bool {
        let mut chars = ident
            .chars()
            .filter(|&c| self.table().class(c) != Class::Ignore);
        if !chars.next().is_some_and(|c| c.is_ascii_uppercase()) {
            return false;
        }
        let mut prefix = 1;
        for c in chars.by_ref() {
            match c {
                '-' if prefix >= 2 => break,
                c if (c.is_ascii_uppercase() || c.is_ascii_digit()) && prefix < 10 => prefix += 1,
                _ => return false,
            }
        }
        let mut digits = 0;
        for c in chars {
            if !c.is_ascii_digit() {
                return false;
            }
            digits += 1;
        }
        digits > 0
    }

    /// Whether an identifier is a file name, class-I characters aside: its text after the
    /// last `.` is one of [`FILE_EXTENSIONS`], ASCII letters and digits, letters in any
    /// case (`notes.txt`, `docker-compose.YML`; not `v1.2`, `node.js`). In a request it names an argument's
    /// value, the file the action is given, and is weighed like the payload.
    pub fn is_file_name(&self, ident: &str) -> bool {
        let Some(dot) = ident.rfind('.') else {
            return false;
        };
        // The extension, lower-cased into a small buffer (the query path allocates nothing).
        let mut ext = [0u8; 8];
        let mut len = 0;
        for c in ident[dot + 1..].chars() {
            if self.table().class(c) == Class::Ignore {
                continue;
            }
            if !c.is_ascii_alphanumeric() || len == ext.len() {
                return false;
            }
            ext[len] = c.to_ascii_lowercase() as u8;
            len += 1;
        }
        FILE_EXTENSIONS.iter().any(|e| e.as_bytes() == &ext[..len])
    }

    /// Whether the identifier `text[start..end]` is a part of a path, class-I characters
    /// aside: it holds an ASCII lower-case letter, and a `/` stands right before it with an
    /// ASCII letter or digit right before that, or right after it with one right after
    /// (`platform/api`, `src/auth/session.ts`; not `CI/CD`, `/tmp`). A path names what an
    /// action is given (a repository, a branch, a folder), not the action.
    pub fn is_path_part(&self, text: &str, start: usize, end: usize) -> bool {
        let ident = &text[start..end];
        if !ident.bytes().any(|b| b.is_ascii_lowercase()) {
            return false;
        }
        let seen = |c: &char| self.table().class(*c) != Class::Ignore;
        let mut before = text[..start].chars().rev().filter(seen);
        let mut after = text[end..].chars().filter(seen);
        let joined = |slash: Option<char>, other: Option<char>| {
            slash == Some('/') && other.is_some_and(|c| c.is_ascii_alphanumeric())
        };
        joined(before.next(), before.next()) || joined(after.next(), after.next())
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::analyzer;

    #[test]
    fn file_names() {
        let a = analyzer();
        for f in [
            "notes.txt",
            "docker-compose.YML",
            "dump.sql",
            "a.b.json",
            "r.p\u{200b}df",
        ] {
            assert!(a.is_file_name(f), "{f}");
        }
        for f in [
            "notes",
            "node.js",
            "v1.2",
            "notes.txtx",
            "x.тхт",
            "1.8.2",
            "a.k8s",
            "",
        ] {
            assert!(!a.is_file_name(f), "{f}");
        }
    }

    /// White space of any kind, class-I characters and closing brackets stand between a
    /// word and what ends its clause; a word or an opening bracket does not end it.
    #[test]
    fn clause_ends() {
        let a = analyzer();
        let ends = |text: &str| a.ends_clause(text, "trag ihn ein".len());
        for text in [
            "trag ihn ein",
            "trag ihn ein.",
            "trag ihn ein , bitte",
            "trag ihn ein\u{a0}",
            "trag ihn ein\u{202f}.",
            "trag ihn ein\u{3000}!",
            "trag ihn ein)",
            "trag ihn ein) .",
            "trag ihn ein\u{2009}]\u{200b}}?",
        ] {
            assert!(ends(text), "{text:?}");
        }
        for text in [
            "trag ihn ein und",
            "trag ihn ein) bitte",
            "trag ihn ein (bitte)",
            "trag ihn ein\u{a0}x",
        ] {
            assert!(!ends(text), "{text:?}");
        }
    }

    #[test]
    fn path_parts() {
        let a = analyzer();
        let parts = |text: &str| -> Vec<String> {
            let mut out = Vec::new();
            a.for_each_identifier(text, |ident| {
                let start = ident.as_ptr() as usize - text.as_ptr() as usize;
                if a.is_path_part(text, start, start + ident.len()) {
                    out.push(ident.to_string());
                }
            });
            out
        };
        assert_eq!(parts("mrs in platform/api on gitlab"), ["platform", "api"]);
        assert_eq!(parts("read ./dist/worker.js now"), ["dist", "worker.js"]);
        assert_eq!(parts("src/\u{200b}auth"), ["src", "auth"]);
        assert!(parts("CI/CD of orders").is_empty());
        assert!(parts("clean /tmp and a / b").is_empty());
        assert_eq!(parts("acme/API"), ["acme"]);
    }

    #[test]
    fn issue_keys() {
        let a = analyzer();
        for k in [
            "ENG-1423",
            "PROJ-7",
            "K8S-2",
            "ABCDEFGHIJ-1",
            "E\u{200b}NG-1",
            "AB-0",
        ] {
            assert!(a.is_issue_key(k), "{k}");
        }
        let not = [
            "eng-1423",
            "Eng-1",
            "A-1",
            "ABCDEFGHIJK-1",
            "ENG-",
            "ENG",
            "ENG-14a",
            "ENG--1",
            "ENG-1-2",
            "ENG_12",
            "1ENG-2",
            "ЕНГ-1",
            "ENG-\u{663}",
            "",
        ];
        for k in not {
            assert!(!a.is_issue_key(k), "{k}");
        }
    }
}
