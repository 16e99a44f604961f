//! Query expansion lexicon: analysed source phrases -> analysed target terms.

use rustc_hash::FxHashMap;

use crate::analysis::Analyzer;
use crate::chars::py_repr;

/// Source phrase (a sequence of terms) -> target terms, both analysed by one analyzer.
#[derive(Debug, Default, Clone)]
pub struct Lexicon {
    map: FxHashMap<Vec<String>, Vec<String>>,
    max_key_len: usize,
}

fn push_unique(out: &mut Vec<String>, t: String) {
    if !out.contains(&t) {
        out.push(t);
    }
}

impl Lexicon {
    /// Build from `(source phrase, target text)` entries. A source or target without index
    /// terms is an error naming the entry; entries with the same key merge their targets
    /// (first-occurrence order).
    pub fn new(analyzer: &Analyzer, entries: &[(String, String)]) -> Result<Lexicon, String> {
        let mut map: FxHashMap<Vec<String>, Vec<String>> = FxHashMap::default();
        let mut max_key_len = 0;
        for (i, (source, target)) in entries.iter().enumerate() {
            let key = analyzer.tokens(source);
            if key.is_empty() {
                return Err(format!(
                    "lexicon entry {i} ({}): source has no index terms",
                    py_repr(source)
                ));
            }
            let targets = analyzer.tokens(target);
            if targets.is_empty() {
                return Err(format!(
                    "lexicon entry {i} ({}): target {} has no terms",
                    py_repr(source),
                    py_repr(target)
                ));
            }
            max_key_len = max_key_len.max(key.len());
            let slot = map.entry(key).or_default();
            for t in targets {
                push_unique(slot, t);
            }
        }
        Ok(Lexicon { map, max_key_len })
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Length (in terms) of the longest key.
    pub fn max_key_len(&self) -> usize {
        self.max_key_len
    }

    /// Targets of the key `terms`, if it is one.
    pub fn get(&self, terms: &[String]) -> Option<&[String]> {
        self.map.get(terms).map(Vec::as_slice)
    }

    /// Walk `toks` left to right taking the longest key at each position and call `add`
    /// with every target of each key found (the expansion of the query terms).
    pub fn expand<'a>(&'a self, toks: &[String], mut add: impl FnMut(&'a str)) {
        let mut i = 0;
        while i < toks.len() {
            let longest = self.max_key_len.min(toks.len() - i);
            let found = (1..=longest)
                .rev()
                .find_map(|l| self.map.get(&toks[i..i + l]).map(|t| (l, t)));
            match found {
                Some((l, targets)) => {
                    for t in targets {
                        add(t);
                    }
                    i += l;
                }
                None => i += 1,
            }
        }
    }

    /// Approximate heap bytes.
    pub fn memory_bytes(&self) -> usize {
        let strings: usize = self
            .map
            .iter()
            .map(|(k, v)| {
                k.capacity() * std::mem::size_of::<String>()
                    + k.iter().map(String::capacity).sum::<usize>()
                    + v.capacity() * std::mem::size_of::<String>()
                    + v.iter().map(String::capacity).sum::<usize>()
            })
            .sum();
        strings + self.map.capacity() * (2 * std::mem::size_of::<Vec<String>>() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chars::CharTable;

    fn analyzer() -> Analyzer {
        let table = CharTable::parse(include_str!("../../../python/toolsurface/data/chars.tsv"))
            .expect("table");
        Analyzer::new(
            table,
            include_str!("../../../python/toolsurface/data/stopwords_en.txt").lines(),
        )
    }

    fn e(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }

    #[test]
    fn builds_merges_and_expands() {
        let a = analyzer();
        let lex = Lexicon::new(
            &a,
            &[
                e("pr", "pull request"),
                e("pull request", "merge"),
                e("PR", "review pull"),
                e("repo", "repository"),
            ],
        )
        .unwrap();
        assert_eq!(lex.len(), 3);
        assert_eq!(lex.max_key_len(), 2);
        let key = vec!["pr".to_string()];
        assert_eq!(
            lex.get(&key).unwrap(),
            ["pull", "request", "review"].map(String::from)
        );
        let toks = a.tokens("open pull request in repo");
        let mut got = Vec::new();
        lex.expand(&toks, |t| got.push(t.to_string()));
        assert_eq!(got, ["merg", "repositori"]);
    }

    #[test]
    fn empty_source_or_target_is_an_error() {
        let a = analyzer();
        let err = Lexicon::new(&a, &[e("x", "y"), e("the", "thing")]).unwrap_err();
        assert!(err.contains("entry 0"), "{err}");
        let err = Lexicon::new(&a, &[e("thing", "stuff"), e("pr", "a")]).unwrap_err();
        assert!(err.contains("entry 1") && err.contains("target"), "{err}");
    }
}
