//! Which tools only read, by name: the first verb of a tool's own name (the pure engine's
//! `retrieval/analysis/reading.py`, whose module text says why). The registry asks for the
//! verb of every tool without a read-only hint when it builds an index: at 100,000 tools a
//! regular expression per name in Python took a tenth of a second of the build.

/// Verbs that open the name of a tool that only looks.
pub const READ_VERBS: [&str; 14] = [
    "get", "list", "search", "find", "read", "describe", "fetch", "show", "view", "query",
    "retrieve", "lookup", "inspect", "count",
];

/// Verbs that open the name of a tool that changes something.
pub const WRITE_VERBS: [&str; 43] = [
    "create", "delete", "update", "remove", "set", "add", "put", "post", "patch", "run", "start",
    "stop", "send", "edit", "write", "move", "rename", "merge", "approve", "close", "open", "push",
    "pull", "build", "deploy", "execute", "cancel", "trigger", "apply", "manage", "upload",
    "import", "block", "mute", "pin", "unpin", "mark", "restart", "rerun", "fork", "assign",
    "invite", "kill",
];

/// A name is read on its first characters only (a hostile name costs no more).
pub const MAX_NAME_CHARS: usize = 256;

/// The first word of `name`, past its group prefix (the last `__`), that either verb list
/// holds: words are runs of capitals not followed by a small letter, a capital and small
/// letters, small letters, or digits (ASCII; any other character separates them), read in
/// small letters.
pub fn name_verb(name: &str) -> Option<&'static str> {
    let head = match name.char_indices().nth(MAX_NAME_CHARS) {
        Some((end, _)) => &name[..end],
        None => name,
    };
    let own = match head.rfind("__") {
        Some(at) => &head[at + 2..],
        None => head,
    };
    let bytes = own.as_bytes();
    let mut word = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let (start, end) = match next_word(bytes, i) {
            Some(span) => span,
            None => break,
        };
        word.clear();
        word.extend(
            bytes[start..end]
                .iter()
                .map(|b| b.to_ascii_lowercase() as char),
        );
        if let Some(verb) = READ_VERBS
            .iter()
            .chain(WRITE_VERBS.iter())
            .find(|v| **v == word)
        {
            return Some(verb);
        }
        i = end;
    }
    None
}

/// The next word at or after `from` as a byte span, as Python's
/// `re.finditer(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")` finds it (leftmost, the first
/// alternative that matches, backtracking as that engine does).
fn next_word(bytes: &[u8], from: usize) -> Option<(usize, usize)> {
    let run = |mut j: usize, class: fn(&u8) -> bool| {
        while j < bytes.len() && class(&bytes[j]) {
            j += 1;
        }
        j
    };
    let mut i = from;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_uppercase() {
            let upper_end = run(i, u8::is_ascii_uppercase);
            let small_next = upper_end < bytes.len() && bytes[upper_end].is_ascii_lowercase();
            if !small_next {
                return Some((i, upper_end)); // capitals not followed by a small letter
            }
            if upper_end - i >= 2 {
                return Some((i, upper_end - 1)); // the last capital opens the next word
            }
            return Some((i, run(i + 1, u8::is_ascii_lowercase))); // a capital and small letters
        }
        if c.is_ascii_lowercase() {
            return Some((i, run(i, u8::is_ascii_lowercase)));
        }
        if c.is_ascii_digit() {
            return Some((i, run(i, u8::is_ascii_digit)));
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_verb_past_the_prefix() {
        assert_eq!(name_verb("notion__API-post-search"), Some("post"));
        assert_eq!(name_verb("github__getPullRequestFiles"), Some("get"));
        assert_eq!(name_verb("docker__list_containers"), Some("list"));
        assert_eq!(name_verb("cf__r2_list_objects"), Some("list"));
        assert_eq!(name_verb("x__HTTPGetThing"), Some("get"));
        assert_eq!(name_verb("x__LISTthings"), None); // "LIS", "Tthings"
        assert_eq!(name_verb("plain"), None);
        assert_eq!(name_verb(""), None);
    }

    #[test]
    fn a_long_name_is_read_on_its_first_characters() {
        let long = format!("{}__list_things", "é".repeat(MAX_NAME_CHARS));
        assert_eq!(name_verb(&long), None);
    }
}
