//! The trigram index of the vocabulary, for the typo fallback.

use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::consts::FUZZY_MIN_CHARS;
use crate::error::{to_u32, Error};
use crate::strtab::StrTable;

/// Trigram key of three code points.
#[inline]
pub(crate) fn gram_key(a: char, b: char, c: char) -> u64 {
    ((a as u64) << 42) | ((b as u64) << 21) | (c as u64)
}

/// The distinct trigrams of `" " + term + " "`, sorted, into `out`.
pub(crate) fn trigrams_into(term: &str, out: &mut Vec<u64>) {
    out.clear();
    let mut a = ' ';
    let mut b: Option<char> = None;
    for c in term.chars().chain(std::iter::once(' ')) {
        if let Some(bb) = b {
            out.push(gram_key(a, bb, c));
            a = bb;
        }
        b = Some(c);
    }
    out.sort_unstable();
    out.dedup();
}

pub(crate) type TrigramIndex = (Vec<u64>, Vec<u32>, Vec<u32>, Vec<u32>);

/// One run of consecutive terms of the trigram build.
struct TrigramRun {
    /// Each term's distinct trigrams, back to back.
    grams: Vec<u64>,
    /// Each term's number of them (0 for terms too short for the fallback).
    counts: Vec<u32>,
    /// The run's distinct trigrams.
    keys: FxHashSet<u64>,
}

/// The trigram index of the vocabulary: distinct trigrams ascending, their term ranges,
/// the terms (ascending ids), and each term's trigram count.
///
/// A counting sort in parallel over runs of terms, with no sort of the (trigram, term)
/// pairs and no single-threaded pass over them: a catalogue has few distinct trigrams (a few
/// for every thousand pairs), so each run collects its own in a small hash set that
/// stays in cache; the union, sorted, gives each trigram its rank; each run counts its
/// pairs per rank; the counts, summed run by run in term order, give each run its own
/// cursor per rank; and the runs then write their term ids to disjoint places of the array
/// at once (relaxed atomic stores: each place is written exactly once, and the array is
/// read only after the parallel loop has joined).
pub(crate) fn trigram_index(vocab: &StrTable) -> Result<TrigramIndex, Error> {
    trigram_index_within(vocab, None)
}

/// [`trigram_index`], its histograms allowed `hist_budget` counters in all (default: as many
/// as the pairs, and at least 2^20); past it, runs share histograms.
fn trigram_index_within(
    vocab: &StrTable,
    hist_budget: Option<usize>,
) -> Result<TrigramIndex, Error> {
    let v = vocab.len();
    let step = v
        .div_ceil(rayon::current_num_threads().max(1) * 4)
        .max(1024);
    let runs: Vec<TrigramRun> = (0..v.div_ceil(step))
        .into_par_iter()
        .map(|c| {
            let ids = c * step..((c + 1) * step).min(v);
            let mut run = TrigramRun {
                grams: Vec::with_capacity(ids.len() * 12),
                counts: Vec::with_capacity(ids.len()),
                keys: FxHashSet::default(),
            };
            let mut grams = Vec::new();
            for id in ids {
                let term = vocab.get(id);
                if term.chars().nth(FUZZY_MIN_CHARS - 1).is_some() {
                    trigrams_into(term, &mut grams);
                    run.counts.push(grams.len() as u32);
                    run.grams.extend_from_slice(&grams);
                    run.keys.extend(grams.iter().copied());
                } else {
                    run.counts.push(0);
                }
            }
            run
        })
        .collect();
    let total: usize = runs.iter().map(|r| r.grams.len()).sum();
    to_u32(total, "trigram postings")?;
    let mut tri_keys: Vec<u64> = {
        let mut all: FxHashSet<u64> = FxHashSet::default();
        for r in &runs {
            all.extend(r.keys.iter().copied());
        }
        all.into_iter().collect()
    };
    tri_keys.sort_unstable();
    let rank: FxHashMap<u64, u32> = tri_keys
        .iter()
        .enumerate()
        .map(|(r, &g)| (g, r as u32))
        .collect();
    let k = tri_keys.len();
    // A histogram per group of runs costs groups x k counters: a script with a large
    // alphabet (CJK) has millions of distinct trigrams, so past the budget (by default the
    // size of the pairs themselves) runs share histograms, down to one for all (the same
    // output, in term order, with less parallelism).
    let budget = hist_budget.unwrap_or_else(|| total.max(1 << 20));
    let groups = (budget / k.max(1)).clamp(1, runs.len().max(1));
    let per = runs.len().div_ceil(groups).max(1);
    let (tri_start, tri_terms) = trigram_scatter(&runs, &rank, k, total, step, per);
    let mut tri_count: Vec<u32> = Vec::with_capacity(v);
    for r in &runs {
        tri_count.extend_from_slice(&r.counts);
    }
    Ok((tri_keys, tri_start, tri_terms, tri_count))
}

/// The trigram index of a vocabulary made of an old one's terms (in its order) and new
/// terms after them, from the old one's trigram index: what [`trigram_index`] makes of
/// `vocab`, with only the new terms' trigrams found anew.
///
/// `new_id[t]` is old term `t`'s id in `vocab`, or [`DROPPED`]; the kept terms' new ids
/// ascend with their old ones and are all below `first_new`, the first id of a new term.
pub(crate) fn trigram_index_kept(
    old: (&[u64], &[u32], &[u32], &[u32]),
    new_id: &[u32],
    vocab: &StrTable,
    first_new: usize,
) -> Result<TrigramIndex, Error> {
    let (keys, starts, terms, counts) = old;
    let mut tri_count = vec![0u32; vocab.len()];
    for (&n, &count) in new_id.iter().zip(counts) {
        if n != DROPPED {
            tri_count[n as usize] = count;
        }
    }
    let mut added: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    let mut grams = Vec::new();
    for (id, count) in tri_count.iter_mut().enumerate().skip(first_new) {
        let term = vocab.get(id);
        if term.chars().nth(FUZZY_MIN_CHARS - 1).is_some() {
            trigrams_into(term, &mut grams);
            *count = to_u32(grams.len(), "trigram count")?;
            for &g in &grams {
                added
                    .entry(g)
                    .or_default()
                    .push(to_u32(id, "vocabulary size")?);
            }
        }
    }
    let mut added_keys: Vec<u64> = added.keys().copied().collect();
    added_keys.sort_unstable();
    let mut tri_keys = Vec::with_capacity(keys.len() + added_keys.len());
    let mut tri_start = Vec::with_capacity(keys.len() + added_keys.len() + 1);
    let mut tri_terms = Vec::with_capacity(terms.len());
    let (mut i, mut j) = (0, 0);
    // A key is below 2^63 (three 21-bit code points): u64::MAX marks a list's end.
    while i < keys.len() || j < added_keys.len() {
        let (a, b) = (
            keys.get(i).copied().unwrap_or(u64::MAX),
            added_keys.get(j).copied().unwrap_or(u64::MAX),
        );
        let key = a.min(b);
        let begin = tri_terms.len();
        if a == key {
            let old_terms = &terms[starts[i] as usize..starts[i + 1] as usize];
            tri_terms.extend(
                old_terms
                    .iter()
                    .map(|&t| new_id[t as usize])
                    .filter(|&n| n != DROPPED),
            );
            i += 1;
        }
        if b == key {
            tri_terms.extend_from_slice(&added[&key]);
            j += 1;
        }
        // A trigram only dropped terms had is not in the new vocabulary's index.
        if tri_terms.len() > begin {
            tri_keys.push(key);
            tri_start.push(to_u32(begin, "trigram postings")?);
        }
    }
    tri_start.push(to_u32(tri_terms.len(), "trigram postings")?);
    Ok((tri_keys, tri_start, tri_terms, tri_count))
}

/// A term of the old vocabulary that [`trigram_index_kept`]'s new one does not keep.
pub(crate) const DROPPED: u32 = u32::MAX;

/// The parallel scatter of [`trigram_index`], over groups of `per` consecutive runs: each
/// group counts its pairs per trigram rank, the counts summed group by group in term order
/// give each group its own cursor per rank, and the groups then write their term ids to
/// disjoint places at once. Returns each rank's start and the term ids.
fn trigram_scatter(
    runs: &[TrigramRun],
    rank: &FxHashMap<u64, u32>,
    k: usize,
    total: usize,
    step: usize,
    per: usize,
) -> (Vec<u32>, Vec<u32>) {
    let mut ranked: Vec<(Vec<u32>, Vec<u32>)> = runs
        .par_chunks(per)
        .map(|group| {
            let mut hist = vec![0u32; k];
            let ranks: Vec<u32> = group
                .iter()
                .flat_map(|r| r.grams.iter())
                .map(|g| {
                    let x = rank[g];
                    hist[x as usize] += 1;
                    x
                })
                .collect();
            (ranks, hist)
        })
        .collect();
    // Rank `r`'s terms start at `tri_start[r]`; within them, group by group: each group's
    // count becomes its cursor.
    let mut tri_start = Vec::with_capacity(k + 1);
    let mut at = 0u32;
    for x in 0..k {
        tri_start.push(at);
        for (_, hist) in ranked.iter_mut() {
            let n = hist[x];
            hist[x] = at;
            at += n;
        }
    }
    tri_start.push(at);
    let slots: Vec<AtomicU32> = (0..total).map(|_| AtomicU32::new(0)).collect();
    runs.par_chunks(per)
        .zip(ranked.par_iter_mut())
        .enumerate()
        .for_each(|(g, (group, (ranks, cursor)))| {
            let mut at = 0usize;
            for (j, run) in group.iter().enumerate() {
                let c = g * per + j;
                for (i, &n) in run.counts.iter().enumerate() {
                    let id = (c * step + i) as u32;
                    for &x in &ranks[at..at + n as usize] {
                        let p = &mut cursor[x as usize];
                        slots[*p as usize].store(id, AtomicOrdering::Relaxed);
                        *p += 1;
                    }
                    at += n as usize;
                }
            }
        });
    let tri_terms = slots.into_iter().map(AtomicU32::into_inner).collect();
    (tri_start, tri_terms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    #[test]
    fn trigram_index_matches_a_naive_one_over_many_runs() {
        // Enough terms for several runs of the parallel build, with shared and rare grams.
        let mut vocab = StrTable::default();
        let mut x = 7u64;
        for i in 0..9000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = 1 + (x >> 60) as usize;
            let term: String = (0..len)
                .map(|j| {
                    let c = ((x >> (j * 5 % 50)) % 7) as u8;
                    if i % 11 == 0 && j == 1 {
                        'ж'
                    } else {
                        char::from(b'a' + c)
                    }
                })
                .collect();
            vocab.insert(&term, str_hash(&term)).unwrap();
        }
        // A histogram per run (default budget), runs sharing them, one for all (no budget).
        for budget in [None, Some(1000), Some(0)] {
            check_trigrams(&vocab, trigram_index_within(&vocab, budget).unwrap());
        }
    }

    fn check_trigrams(vocab: &StrTable, built: TrigramIndex) {
        let (keys, start, terms, count) = built;
        let mut naive: std::collections::BTreeMap<u64, Vec<u32>> = Default::default();
        let mut g = Vec::new();
        for (id, &n) in count.iter().enumerate() {
            let term = vocab.get(id);
            if term.chars().count() >= FUZZY_MIN_CHARS {
                trigrams_into(term, &mut g);
                assert_eq!(n as usize, g.len());
                for &k in &g {
                    naive.entry(k).or_default().push(id as u32);
                }
            } else {
                assert_eq!(n, 0);
            }
        }
        assert_eq!(count.len(), vocab.len());
        assert_eq!(keys, naive.keys().copied().collect::<Vec<_>>());
        assert_eq!(start.len(), keys.len() + 1);
        for (i, ids) in naive.values().enumerate() {
            assert_eq!(
                &terms[start[i] as usize..start[i + 1] as usize],
                ids.as_slice()
            );
        }
    }

    #[test]
    fn trigrams() {
        let mut g = Vec::new();
        trigrams_into("abc", &mut g);
        assert_eq!(g.len(), 3);
        trigrams_into("aaaa", &mut g);
        assert_eq!(g.len(), 3); // " aa", "aaa", "aa "
        trigrams_into("x", &mut g);
        assert_eq!(g, vec![gram_key(' ', 'x', ' ')]);
    }
}
