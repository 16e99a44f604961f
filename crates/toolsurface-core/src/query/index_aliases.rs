//! Group aliases resolved against one index's vocabulary, so that a search finds the groups
//! its query mentions (§8) from the terms it searches for, with no second pass over the
//! query's text.
//!
//! A group is mentioned when every term of one of its aliases is among the query's terms,
//! in the vocabulary or not (`aliases.rs`). An alias term in the index's vocabulary is
//! matched by id against the search's own terms ([`main_terms`](crate::query::terms)); one
//! outside it (the joined form `awseks` of `aws-eks`, a title word no tool uses) is looked
//! for among the query's tokens and lexicon targets by [`oov_terms`](crate::query::terms),
//! which only probes a table of those terms. The matched groups are those the text match
//! finds; only their order differs (a set is all a boost needs).

use rustc_hash::FxHashMap;

use crate::index::core::Index;
use crate::query::aliases::Aliases;
use crate::query::term_list::TermList;
use crate::strtab::StrTable;

/// One term of a resolved alias: a vocabulary id, or an id of the table of terms outside
/// the vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Term {
    Vocab(u32),
    Oov(u32),
}

/// A registry's aliases resolved against one index, kept flat as [`Aliases`] is (one
/// buffer of terms with end offsets, a group per alias; no allocation per alias).
#[derive(Clone, Debug, Default)]
pub(crate) struct IndexAliases {
    /// The distinct terms of every alias back to back, in the order given.
    terms: Vec<Term>,
    /// Per alias: the end of its terms in `terms` (its start is the previous alias's end).
    ends: Vec<u32>,
    /// Per alias: its group.
    groups: Vec<u32>,
    /// Per anchor term: the range of `anchored` holding the aliases it anchors (each
    /// alias's least shared term), to check only those a query can complete.
    anchors: FxHashMap<Term, (u32, u32)>,
    /// Alias numbers by anchor, each anchor's in the order given.
    anchored: Vec<u32>,
    /// The alias terms outside the vocabulary, numbered as [`Term::Oov`] says.
    pub(crate) oov: StrTable,
}

impl IndexAliases {
    /// `aliases` resolved against `index`'s vocabulary.
    pub(crate) fn new(aliases: &Aliases, index: &Index) -> Self {
        let mut made = IndexAliases::default();
        // Each distinct alias term resolved once (`None`: not yet, or not resolvable).
        let mut resolved_terms: Vec<Option<Term>> = vec![None; aliases.term_count()];
        let mut resolve = |id: u32, oov: &mut StrTable| -> Option<Term> {
            if let Some(term) = resolved_terms[id as usize] {
                return Some(term);
            }
            let (t, h) = aliases.term(id);
            let term = match index.vocab.find(t, h) {
                Some(v) => Term::Vocab(v),
                // Fails only past u32::MAX distinct terms: the alias is then left out.
                None => Term::Oov(oov.insert(t, h).ok()?.0),
            };
            resolved_terms[id as usize] = Some(term);
            Some(term)
        };
        'aliases: for i in 0..aliases.len() {
            let start = made.terms.len();
            for &id in aliases.term_ids(i) {
                let Some(term) = resolve(id, &mut made.oov) else {
                    made.terms.truncate(start);
                    continue 'aliases;
                };
                if !made.terms[start..].contains(&term) {
                    made.terms.push(term);
                }
            }
            match u32::try_from(made.terms.len()) {
                Ok(end) if end as usize > start => {
                    made.ends.push(end);
                    made.groups.push(aliases.group(i));
                }
                _ => made.terms.truncate(start),
            }
        }
        made.anchor();
        made.terms.shrink_to_fit();
        made
    }

    /// Anchor each alias at its term that the fewest aliases share, so a common word
    /// ("github" of `github-1` ... `github-500`) leads a query to few checks; of equally
    /// shared terms, its first.
    fn anchor(&mut self) {
        let mut shared: FxHashMap<Term, u32> = FxHashMap::default();
        for &t in &self.terms {
            *shared.entry(t).or_default() += 1;
        }
        let picked: Vec<Term> = (0..self.groups.len())
            .map(|i| {
                let terms = self.terms_of(i);
                *terms.iter().min_by_key(|t| shared[t]).unwrap_or(&terms[0])
            })
            .collect();
        // A counting sort by anchor, each anchor's aliases in the order given.
        let mut counts: FxHashMap<Term, (u32, u32)> = FxHashMap::default();
        for &a in &picked {
            counts.entry(a).or_default().1 += 1;
        }
        let mut end = 0u32;
        for range in counts.values_mut() {
            range.0 = end;
            end += range.1;
            range.1 = range.0;
        }
        self.anchored = vec![0; end as usize];
        for (i, a) in picked.iter().enumerate() {
            let range = counts.get_mut(a).expect("every anchor is counted");
            self.anchored[range.1 as usize] = i as u32;
            range.1 += 1;
        }
        self.anchors = counts;
    }

    /// Alias `i`'s distinct terms.
    fn terms_of(&self, i: usize) -> &[Term] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.terms[start..self.ends[i] as usize]
    }

    /// Whether there is no alias.
    pub(crate) fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The groups mentioned by a query whose search terms are `vocab` (vocabulary ids) and
    /// whose terms outside the vocabulary found in the table `oov` are `oov`, each once.
    pub(crate) fn mentioned(&self, vocab: &TermList, oov: &[u32]) -> Vec<u32> {
        let has = |t: &Term| match *t {
            Term::Vocab(id) => vocab.items.iter().any(|&(v, _)| v == id),
            Term::Oov(id) => oov.contains(&id),
        };
        let present = vocab
            .items
            .iter()
            .map(|&(id, _)| Term::Vocab(id))
            .chain(oov.iter().map(|&id| Term::Oov(id)));
        let mut found: Vec<u32> = Vec::new();
        for term in present {
            let Some(&(start, end)) = self.anchors.get(&term) else {
                continue;
            };
            for &i in &self.anchored[start as usize..end as usize] {
                let group = self.groups[i as usize];
                if !found.contains(&group) && self.terms_of(i as usize).iter().all(has) {
                    found.push(group);
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexicon::Lexicon;
    use crate::query::buffers::QueryBuffers;
    use crate::query::terms::{main_terms, table_terms};
    use crate::query::tokens::analyse_query;
    use crate::search::searcher::Searcher;
    use crate::test_support::*;

    /// The groups the resolved aliases find, as the search finds them: the probe of the
    /// terms outside the vocabulary, then the search terms.
    fn resolved(idx: &Index, aliases: &IndexAliases, q: &str, lex: Option<&Lexicon>) -> Vec<u32> {
        let mut bufs = QueryBuffers::default();
        analyse_query(&idx.analyzer, q, &mut bufs);
        table_terms(&mut bufs, lex, 0.6, &aliases.oov);
        let oov: Vec<u32> = bufs.terms.items.iter().map(|&(id, _)| id).collect();
        main_terms(idx, &mut bufs, lex, 0.6);
        let mut found = aliases.mentioned(&bufs.terms, &oov);
        found.sort_unstable();
        found
    }

    #[test]
    fn resolved_aliases_find_the_groups_the_text_match_finds() {
        let idx = catalogue();
        let an = analyzer();
        let aliases = Aliases::new(vec![
            (0, an.tokens("github")),
            (0, an.tokens("git-hub")), // joined form outside the vocabulary
            (1, an.tokens("slack")),
            (1, an.tokens("slack chat")),
            (2, an.tokens("google calendar")), // "google" is outside the vocabulary
            (3, an.tokens("zulip")),           // wholly outside
            (4, an.tokens("pull")),
        ]);
        let entries = [
            ("слак".to_string(), "slack".to_string()),
            ("гугл".to_string(), "google".to_string()),
            ("зулип".to_string(), "zulip".to_string()),
        ];
        let lex = Lexicon::new(idx.analyzer(), &entries).unwrap();
        let resolved_aliases = IndexAliases::new(&aliases, &idx);
        assert!(resolved_aliases.oov.len() >= 3);
        let queries = [
            "list pull requests on github",
            "post it in git-hub",
            "send to slack",
            "напиши в слак",
            "add to google calendar",
            "добавь в гугл calendar",
            "calendar only",
            "zulip message",
            "зулип",
            "",
            "github slack google calendar zulip pull",
        ];
        let find = |q, lexicon| resolved(&idx, &resolved_aliases, q, lexicon);
        assert_eq!(find("post it in git-hub", None), [0]);
        assert_eq!(find("напиши в слак", Some(&lex)), [1]);
        assert!(find("напиши в слак", None).is_empty());
        assert_eq!(find("добавь в гугл calendar", Some(&lex)), [2]);
        assert_eq!(find("зулип", Some(&lex)), [3]);
        assert!(find("calendar only", Some(&lex)).is_empty());
        for q in queries {
            for lexicon in [None, Some(&lex)] {
                let mut text = Searcher::new(&idx).mentions(q, lexicon, 0.6, &aliases);
                text.sort_unstable();
                assert_eq!(resolved(&idx, &resolved_aliases, q, lexicon), text, "{q:?}");
            }
        }
    }
}
