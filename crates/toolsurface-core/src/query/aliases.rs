//! Group names and aliases as analysed terms, and which of them a query mentions.
//!
//! The rule is docs/analysis.md §8: a group is mentioned when every term of one of its
//! names or aliases is among the query's terms (its own tokens and the lexicon's
//! expansions, any weight, in or out of the index's vocabulary). Groups come back in the
//! order the query's terms first reach one of their aliases. The pure engine's twin is
//! `python/toolsurface/retrieval/alias_match.py`. The search layer builds the query's
//! terms (`Searcher::mentions`); this file holds the aliases and the match.
//!
//! A registry with a group per server has as many aliases as tools, so the table is kept
//! flat: each distinct term once in an interning table, every alias's term ids back to
//! back with their end offsets, and a group number per alias (no allocation per alias or
//! per term). Repeats are found by a hash of the whole alias, so building is linear in the
//! number of aliases however many share a word.

use rustc_hash::FxHashSet;

use crate::consts::ALIASES_PRUNED_UP_TO;
use crate::query::term_list::TermList;
use crate::strtab::{str_hash, StrTable};

/// The analysed names and aliases of a registry's groups, numbered by the caller.
#[derive(Clone, Debug, Default)]
pub struct Aliases {
    /// Every distinct term of the aliases, each once; aliases name their terms by id.
    terms: StrTable,
    /// Per term id: its [`str_hash`], for lookups in other tables.
    hashes: Vec<u64>,
    /// The term ids of every alias back to back, in the order given.
    ids: Vec<u32>,
    /// Per alias: the end of its terms in `ids` (its start is the previous alias's end).
    ends: Vec<u32>,
    /// Per alias: its group's number.
    groups: Vec<u32>,
    /// Per term id: the end of the aliases it begins in `by_first` (start: the previous
    /// term's end).
    first_ends: Vec<u32>,
    /// Alias numbers by first term, each term's in the order given.
    by_first: Vec<u32>,
}

impl Aliases {
    /// Aliases from `(group, terms)` pairs (terms already analysed); one with no terms is
    /// left out, and so is one that can never decide a mention ([`deciding`]): one equal to
    /// an earlier one (same group, same first term, same set of terms), or holding every
    /// term of another of its group's with the same first term.
    pub fn new(entries: Vec<(u32, Vec<String>)>) -> Self {
        let mut made = Aliases::default();
        let keep = deciding(&entries);
        // What makes an alias a repeat: its group, first term and set of terms.
        let mut seen: FxHashSet<(u32, Vec<u32>)> = FxHashSet::default();
        let mut start = 0usize;
        'entries: for (i, (group, terms)) in entries.into_iter().enumerate() {
            if terms.is_empty() || !keep[i] {
                continue;
            }
            for t in &terms {
                let h = str_hash(t);
                // Fails only past u32::MAX distinct terms or 4 GiB of them: the alias is
                // then left out.
                let Ok((id, new)) = made.terms.insert(t, h) else {
                    made.ids.truncate(start);
                    continue 'entries;
                };
                if new {
                    made.hashes.push(h);
                }
                made.ids.push(id);
            }
            let Ok(end) = u32::try_from(made.ids.len()) else {
                made.ids.truncate(start);
                continue;
            };
            // The first term, then the set of terms.
            let mut set = made.ids[start..].to_vec();
            set.sort_unstable();
            set.dedup();
            let mut key = Vec::with_capacity(set.len() + 1);
            key.push(made.ids[start]);
            key.extend(set);
            if seen.insert((group, key)) {
                made.ends.push(end);
                made.groups.push(group);
                start = made.ids.len();
            } else {
                made.ids.truncate(start);
            }
        }
        made.index_first_terms();
        made.terms.shrink_to_fit();
        made.ids.shrink_to_fit();
        made
    }

    /// Group the aliases by first term (a counting sort: each term's in the order given).
    fn index_first_terms(&mut self) {
        let mut counts = vec![0u32; self.terms.len()];
        for i in 0..self.len() {
            counts[self.term_ids(i)[0] as usize] += 1;
        }
        let mut end = 0u32;
        let mut next: Vec<u32> = Vec::with_capacity(counts.len());
        for c in &mut counts {
            next.push(end);
            end += *c;
            *c = end;
        }
        self.first_ends = counts;
        self.by_first = vec![0; end as usize];
        for i in 0..self.len() {
            let slot = &mut next[self.term_ids(i)[0] as usize];
            self.by_first[*slot as usize] = i as u32;
            *slot += 1;
        }
    }

    /// Whether there is no alias at all.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The number of aliases (repeats left out).
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Alias `i`'s group.
    pub(crate) fn group(&self, i: usize) -> u32 {
        self.groups[i]
    }

    /// Alias `i`'s term ids, in the order given.
    pub(crate) fn term_ids(&self, i: usize) -> &[u32] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.ids[start..self.ends[i] as usize]
    }

    /// The number of distinct terms (ids run from 0 to it).
    pub(crate) fn term_count(&self) -> usize {
        self.terms.len()
    }

    /// Term `id` and its [`str_hash`].
    pub(crate) fn term(&self, id: u32) -> (&str, u64) {
        (self.terms.get(id as usize), self.hashes[id as usize])
    }

    /// The aliases whose first term is `id`, in the order given.
    fn beginning_with(&self, id: u32) -> &[u32] {
        let id = id as usize;
        let start = if id == 0 {
            0
        } else {
            self.first_ends[id - 1] as usize
        };
        &self.by_first[start..self.first_ends[id] as usize]
    }

    /// Heap bytes.
    pub fn memory_bytes(&self) -> usize {
        self.terms.memory_bytes()
            + self.hashes.capacity() * 8
            + (self.ids.capacity()
                + self.ends.capacity()
                + self.groups.capacity()
                + self.first_ends.capacity()
                + self.by_first.capacity())
                * 4
    }
}

/// Which of `entries` can decide a mention. A group is mentioned at the first query term
/// that is the first term of one of its complete aliases (`Aliases::mentioned`), so an
/// alias holding every term of another of its group's with the same first term decides
/// nothing: whenever it is complete the other is too, found at the same query term. Such an
/// alias is left out (of two with the same terms, the later), and the table mentions the
/// same groups in the same order. A server's group, named `aws-eks` (`aws`, `eks`, `awseks`)
/// with the alias "aws eks" (`aws`, `eks`), keeps the alias alone: half the table for a
/// registry with a group per server. Found by sorting the entries by group and first term,
/// with no allocation per entry.
fn deciding(entries: &[(u32, Vec<String>)]) -> Vec<bool> {
    let mut keep = vec![true; entries.len()];
    let mut order: Vec<usize> = (0..entries.len())
        .filter(|&i| !entries[i].1.is_empty())
        .collect();
    let key = |i: usize| (entries[i].0, entries[i].1[0].as_str());
    order.sort_by(|&a, &b| key(a).cmp(&key(b)).then(a.cmp(&b)));
    let holds = |outer: &[String], inner: &[String]| inner.iter().all(|t| outer.contains(t));
    for run in order.chunk_by(|&a, &b| key(a) == key(b)) {
        // Past a declared group's names, repeats alone (`Aliases::new`): linear work.
        if run.len() < 2 || run.len() > ALIASES_PRUNED_UP_TO {
            continue;
        }
        for &i in run {
            let terms = &entries[i].1;
            // Another alias of the run below this one: fewer terms, all of them here; or
            // the same set, given earlier (`run` is in the order given).
            keep[i] = !run.iter().any(|&j| {
                j != i && holds(terms, &entries[j].1) && (!holds(&entries[j].1, terms) || j < i)
            });
        }
    }
    keep
}

impl Aliases {
    /// The groups whose aliases the query's `terms` (ids of the text table `text`, as
    /// `terms::text_terms` makes them) mention (§8), each once, in the order the terms
    /// first reach one of their aliases.
    pub(crate) fn mentioned(&self, text: &StrTable, terms: &TermList) -> Vec<u32> {
        let mut found: Vec<u32> = Vec::new();
        for &(id, _) in &terms.items {
            let word = text.get(id as usize);
            let Some(first) = self.terms.find(word, str_hash(word)) else {
                continue;
            };
            for &i in self.beginning_with(first) {
                let group = self.groups[i as usize];
                if !found.contains(&group)
                    && self.term_ids(i as usize).iter().all(|&t| {
                        let (t, h) = self.term(t);
                        text.find(t, h).is_some()
                    })
                {
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
    use crate::test_support::*;

    #[test]
    fn an_alias_holding_another_of_its_groups_with_its_first_term_is_left_out() {
        let idx = catalogue();
        let an = analyzer();
        let kept = vec![
            (0, an.tokens("github pull")),
            (1, an.tokens("slack pull")),
            // The same terms as slack's other alias under another first term: kept.
            (1, an.tokens("pull slack")),
        ];
        // Every term of "github pull" and the same first term: it decides nothing.
        let decides_nothing = (0, an.tokens("github-pull requests"));
        let full = Aliases::new([vec![decides_nothing], kept.clone()].concat());
        let lean = Aliases::new(kept);
        assert_eq!((full.len(), lean.len()), (3, 3));
        let s = Searcher::new(&idx);
        for q in [
            "github pull",
            "pull on github, then slack",
            "github-pull requests",
            "githubpull requests",
            "pull slack then github",
            "requests",
        ] {
            let got = s.mentions(q, None, 0.6, &full);
            assert_eq!(got, s.mentions(q, None, 0.6, &lean), "{q:?}");
        }
        assert_eq!(
            s.mentions("pull on github, then slack", None, 0.6, &full),
            [1, 0]
        );
    }

    #[test]
    fn every_term_of_an_alias_is_needed_and_duplicates_are_one() {
        let idx = catalogue();
        let an = analyzer();
        let aliases = Aliases::new(vec![
            (0, an.tokens("github pull")),
            (0, an.tokens("github pull github")),
            (0, an.tokens("pull github")),
            (1, an.tokens("slack")),
            (2, Vec::new()),
        ]);
        // The second is the first's set under the same first term: one alias.
        assert_eq!(aliases.len(), 3);
        assert_eq!(
            Searcher::new(&idx).mentions("list pull requests on github", None, 0.6, &aliases),
            [0]
        );
        assert!(Searcher::new(&idx)
            .mentions("list pull requests", None, 0.6, &aliases)
            .is_empty());
        assert_eq!(
            Searcher::new(&idx).mentions("slack and github pulls", None, 0.6, &aliases),
            [1, 0]
        );
        assert!(Searcher::new(&idx)
            .mentions("slack", None, 0.6, &Aliases::default())
            .is_empty());
    }

    /// Many aliases sharing a first word: each kept once, a repeat found wherever it comes,
    /// and the same set under another group or another first word is another alias.
    #[test]
    fn repeats_are_found_among_many_aliases_that_share_a_word() {
        let an = analyzer();
        // A word of its own per group: letters only, so that the analyser keeps it whole.
        let word = |g: u32| {
            format!(
                "zq{}{}",
                (b'a' + (g / 26) as u8) as char,
                (b'a' + (g % 26) as u8) as char
            )
        };
        let mut entries = Vec::new();
        for g in 0..500u32 {
            entries.push((g, an.tokens(&format!("github {}", word(g)))));
        }
        for g in (0..500u32).step_by(7) {
            entries.push((g, an.tokens(&format!("github {} github", word(g)))));
            entries.push((g + 1, an.tokens(&format!("github {}", word(g)))));
            entries.push((g, an.tokens(&format!("{} github", word(g)))));
        }
        let aliases = Aliases::new(entries);
        let extra = (0..500u32).step_by(7).count();
        assert_eq!(aliases.len(), 500 + 2 * extra);
        let kept = |i: usize| -> (u32, Vec<String>) {
            let terms = aliases
                .term_ids(i)
                .iter()
                .map(|&t| aliases.term(t).0.to_string());
            (aliases.group(i), terms.collect())
        };
        assert_eq!(kept(0), (0, an.tokens(&format!("github {}", word(0)))));
        assert_eq!(kept(500), (1, an.tokens(&format!("github {}", word(0)))));
        assert_eq!(kept(501), (0, an.tokens(&format!("{} github", word(0)))));
        // Each distinct term once, however many aliases use it.
        assert!(aliases.term_count() <= 501);
        assert!(aliases.memory_bytes() > 0);
    }
}
