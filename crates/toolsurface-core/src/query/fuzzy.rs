//! The fallback's terms: vocabulary terms near a query token by trigram Dice similarity.

use rustc_hash::FxHashSet;

use crate::consts::{FUZZY_MIN_CHARS, FUZZY_MIN_SIMILARITY, FUZZY_PER_TOKEN};
use crate::index::core::Index;
use crate::index::trigram::trigrams_into;
use crate::query::buffers::{FuzzyScratch, QueryBuffers};
use crate::query::term_list::TermList;

/// Start a new generation of a stamped scratch array of `n` slots.
fn next_generation(stamp: &mut Vec<u32>, gen: &mut u32, n: usize) {
    if stamp.len() < n {
        stamp.resize(n, 0);
    }
    *gen = gen.wrapping_add(1);
    if *gen == 0 {
        stamp.iter_mut().for_each(|s| *s = 0);
        *gen = 1;
    }
}

/// The fallback's terms in `index` of the query analysed into `bufs`
/// (`tokens::analyse_query`), into `bufs.terms` (see [`fuzzy_terms`]).
pub(crate) fn fallback_terms(index: &Index, bufs: &mut QueryBuffers) {
    let QueryBuffers {
        memo,
        qtoks,
        terms,
        fuzzy,
        ..
    } = bufs;
    // Function words are no request's content: they reach no term here either.
    let toks: Vec<&str> = qtoks
        .iter()
        .filter(|&&i| !memo.toks[i].function)
        .map(|&i| memo.token(&memo.toks[i]))
        .collect();
    fuzzy_terms(index, &toks, fuzzy, terms);
}

/// Fallback terms: for each distinct query token of >= 3 chars (function words left out), the best 3 vocabulary
/// terms of `index` by trigram Dice similarity (>= 0.5), weighted by that similarity.
fn fuzzy_terms(index: &Index, toks: &[&str], fz: &mut FuzzyScratch, out: &mut TermList) {
    out.clear();
    let mut seen: FxHashSet<&str> = FxHashSet::default();
    let vocab_n = index.vocab.len();
    for &tok in toks {
        if !seen.insert(tok) || tok.chars().count() < FUZZY_MIN_CHARS {
            continue;
        }
        trigrams_into(tok, &mut fz.grams);
        next_generation(&mut fz.stamp, &mut fz.gen, vocab_n);
        if fz.count.len() < vocab_n {
            fz.count.resize(vocab_n, 0);
        }
        fz.touched.clear();
        for g in &fz.grams {
            let Ok(i) = index.tri_keys.binary_search(g) else {
                continue;
            };
            let range = index.tri_start[i] as usize..index.tri_start[i + 1] as usize;
            for &id in &index.tri_terms[range] {
                let i = id as usize;
                if fz.stamp[i] != fz.gen {
                    fz.stamp[i] = fz.gen;
                    fz.count[i] = 0;
                    fz.touched.push(id);
                }
                fz.count[i] += 1;
            }
        }
        let nq = fz.grams.len();
        let mut best: Vec<(f64, u32)> = Vec::with_capacity(FUZZY_PER_TOKEN + 1);
        for &id in &fz.touched {
            let i = id as usize;
            let dice = (2.0 * f64::from(fz.count[i])) / ((nq + index.tri_count[i] as usize) as f64);
            if dice >= FUZZY_MIN_SIMILARITY {
                let term = index.vocab.get(i);
                let better = |x: &(f64, u32)| {
                    dice > x.0 || (dice == x.0 && term < index.vocab.get(x.1 as usize))
                };
                let at = best.iter().position(better).unwrap_or(best.len());
                if at < FUZZY_PER_TOKEN {
                    best.insert(at, (dice, id));
                    best.truncate(FUZZY_PER_TOKEN);
                }
            }
        }
        for (dice, id) in best {
            out.add(id, dice);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    #[test]
    fn fallback_finds_typos() {
        let idx = catalogue();
        let s = settings();
        let r = Searcher::new(&idx)
            .search("calendr mesage", 10, &s, None, None)
            .unwrap();
        assert!(r.fallback);
        let names: Vec<&str> = r.docs.iter().map(|&d| idx.name(d as usize)).collect();
        assert!(names.contains(&"calendar__create_event"), "{names:?}");
        assert!(names.contains(&"slack__send_message"), "{names:?}");
        let ex = Searcher::new(&idx)
            .explain("calendr", 4, &s, None, true)
            .unwrap();
        assert_eq!(ex[0].0, "calendar");
        assert!(ex[0].1 >= 0.5 && ex[0].1 < 1.0);
        // Nothing at all: fallback ran, found nothing.
        let r = Searcher::new(&idx)
            .search("zzzzqqq", 10, &s, None, None)
            .unwrap();
        assert!(r.fallback && r.docs.is_empty());
        let r = Searcher::new(&idx).search("", 10, &s, None, None).unwrap();
        assert!(r.fallback && r.docs.is_empty());
    }
}
