//! The scan: every query term's postings added into a block-local accumulator, then the
//! block's touched documents offered to the top-k.
//!
//! Documents go in blocks of [`SCAN_BLOCK`] ids, which all use one block's accumulator
//! slots (so they stay in cache); in a block every term, in query order, adds
//! `(qw * idf) * sat` into the dense accumulator (no branch per posting), then the block's
//! touched slots are read once each, zeroed for the next block, and offered to a bounded
//! top-k (a score below the k-th best is rejected with one comparison), the postings of the
//! terms of largest upper bound first, until the bounds of the terms left cannot reach the
//! k-th best (their slots are then only zeroed). Ties (equal score and name) are ordered by
//! first touch, worked out only when they occur.

use crate::index::core::Index;
use crate::index::filter::Filter;
use crate::query::term_list::TermList;
use crate::scoring::bm25f::SatTable;
use crate::search::boosted::{factor, Boost};
use crate::search::topk::{hit_order, offer, Hit, TOP_INSERT_MAX};

/// Documents scored together: their accumulator slots (8 bytes each) stay in a core's L2,
/// and every block reuses the same slots, so a cold query misses on one block's slots only.
/// A power of two (slots are `doc & (SCAN_BLOCK - 1)`), at least 64 (a block's bitset is
/// whole words). Smaller blocks have more block boundaries to find per term, larger ones
/// outgrow the cache (the sizes tried: docs/performance.md, "Measurements behind the core's
/// constants"). Unit tests use small values so that small catalogues
/// take the paths large ones do: the re-walk of one block, the sweep of one block of fewer
/// slots than `SCAN_BLOCK`, and the sweep of several blocks.
#[cfg(not(test))]
const SCAN_BLOCK: usize = 1 << 15;
#[cfg(test)]
const SCAN_BLOCK: usize = 128;
/// From this many documents, a block's touched documents are found by a bitset sweep.
#[cfg(not(test))]
const SWEEP_MIN_DOCS: usize = 1 << 13;
#[cfg(test)]
const SWEEP_MIN_DOCS: usize = 50;
// A slot is `doc & (slots - 1)` and a block's bitset is whole words; smaller catalogues
// re-walk a single block.
const _: () = assert!(SCAN_BLOCK.is_power_of_two() && SCAN_BLOCK >= 64);
const _: () = assert!(SWEEP_MIN_DOCS <= SCAN_BLOCK);

/// The light terms' slots of a block are cleared in one sweep of the block's slots when
/// their postings number more than a quarter of its documents (sequential stores beat
/// that many scattered ones), else one by one.
const ZERO_FILL_RATIO: usize = 4;

/// Score accumulator: a dense slot per document of one scan block (at most [`SCAN_BLOCK`]
/// slots, reused by each block in turn). Between blocks and searches every slot is 0.0 (the
/// collection pass restores that); `dirty` marks a search that did not finish (a panic),
/// so the next one clears all.
#[derive(Debug, Default)]
pub(crate) struct Accum {
    acc: Vec<f64>,
    dirty: bool,
    /// Per query term: (qw * idf, its postings not yet scanned).
    cursors: Vec<(f64, std::ops::Range<usize>)>,
    /// Documents of the current block touched (large catalogues).
    seen: Vec<u64>,
    pub(crate) top: Vec<Hit>,
    /// Small tops: per term its upper bound, the terms by bound (largest first), the sums
    /// of the bounds from each rank on, and each term's postings in the current block.
    ubs: Vec<f64>,
    rank: Vec<usize>,
    rest: Vec<f64>,
    spans: Vec<(usize, usize)>,
    /// Per term: how many of its postings left fall in the current block.
    ends: Vec<usize>,
}

/// Per term, how many of its postings left (`cursors`, each a range of `post_doc`, ids
/// ascending) are below `block_end`, into `ends`: what `partition_point` gives, found with
/// fewer cold reads. A binary search's probes depend on each other and land all over a long
/// list (a cold miss each for a common term of a large catalogue, a noticeable part of a
/// cold query's scan). Instead, one pass reads every term's first and last id
/// (loads independent of each other, so their misses overlap) and guesses the boundary's
/// position by interpolation (ids are spread over the catalogue), and a second gallops from
/// the guess: its probes fall around the block's end, on lines the scan reads anyway.
fn block_ends(
    post_doc: &[u32],
    cursors: &[(f64, std::ops::Range<usize>)],
    block_end: usize,
    ends: &mut Vec<usize>,
) {
    ends.clear();
    ends.extend(cursors.iter().map(|(_, range)| {
        let docs = &post_doc[range.clone()];
        match (docs.first(), docs.last()) {
            (Some(&first), Some(&last)) if (first as usize) < block_end => {
                if (last as usize) < block_end {
                    docs.len()
                } else {
                    // first < block_end <= last, so the guess is in 0..len.
                    let (from, span) = (
                        (block_end - first as usize) as u64,
                        u64::from(last - first) + 1,
                    );
                    (from * docs.len() as u64 / span) as usize
                }
            }
            _ => 0,
        }
    }));
    for (end, (_, range)) in ends.iter_mut().zip(cursors) {
        let docs = &post_doc[range.clone()];
        // The guessed ones (their first and last ids, read above, are in cache now).
        if let (Some(&first), Some(&last)) = (docs.first(), docs.last()) {
            if (first as usize) < block_end && (last as usize) >= block_end {
                *end = gallop_partition(docs, *end, block_end);
            }
        }
    }
}

/// `docs.partition_point(|d| d < target)` for ascending `docs`, searching outwards from the
/// position `guess` (`guess < docs.len()`) in steps that double.
fn gallop_partition(docs: &[u32], guess: usize, target: usize) -> usize {
    debug_assert!(guess < docs.len());
    let below = |i: usize| (docs[i] as usize) < target;
    let (mut lo, mut hi);
    if below(guess) {
        // The boundary is after `guess`: find a `hi` at or past it.
        lo = guess + 1;
        hi = lo;
        let mut step = 1;
        while hi < docs.len() && below(hi) {
            lo = hi + 1;
            hi = lo + step;
            step <<= 1;
        }
        hi = hi.min(docs.len());
    } else {
        // The boundary is at or before `guess`: find a `lo` below it (or 0).
        hi = guess;
        lo = guess;
        let mut step = 1;
        while lo > 0 {
            let probe = lo.saturating_sub(step);
            if below(probe) {
                lo = probe;
                break;
            }
            hi = probe;
            lo = probe;
            step <<= 1;
        }
    }
    lo + docs[lo..hi].partition_point(|&d| (d as usize) < target)
}

/// The least positive float this thread does not read as zero: the least subnormal one,
/// or, where denormals are flushed to zero (a process may set that for its threads:
/// `torch.set_flush_denormal`, code built with `-ffast-math`), the least normal one. Then
/// `x >= fill_floor()` is `x > 0.0` for every `x`: in a thread that flushes, a subnormal
/// `x` reads as zero in both.
fn fill_floor() -> f64 {
    let least = f64::from_bits(1);
    // Asked of the hardware at run time (`black_box`): the compiler would fold it.
    if std::hint::black_box(least) * std::hint::black_box(1.0) > 0.0 {
        least
    } else {
        f64::MIN_POSITIVE
    }
}

/// Score the documents of `index` having any of `terms` and keep the best `k` hits (score > 0,
/// admitted by `allowed`) in `accum.top`, best first. Returns whether there is any hit.
///
/// With `boosts`, a document's score is its sum times the product of the factors of the
/// boosts that hold it ([`factor`], the same operations in the same order as the pure
/// engine), applied as it is collected: the bounds below are scaled by the product of all
/// factors, so a skipped document could not have reached the top boosted either.
///
/// Documents go in blocks of [`SCAN_BLOCK`] ids, so that the accumulator slots a block
/// touches stay in the core's cache. In each block, every term in query order adds
/// `(qw * idf) * sat` of its postings in the block (a document's sum is built in query
/// order, whatever the blocking, so every score is the pure engine's bit for bit).
///
/// Then, for a top of at most [`TOP_INSERT_MAX`] (the usual case), the block's postings
/// are walked term by term, the term of largest upper bound first (a term's bound is
/// `qw * idf` times its largest saturated weight): each visit reads the slot and zeroes
/// it, so that the first visit of a document sees its score and a later one sees 0,
/// which no hit has; a score at least the current k-th best is offered to the top.
/// A document not met yet has only the terms left, so its score is at most the sum of
/// their bounds: once that sum is below the k-th best, the walk stops and the slots of
/// the terms left are only zeroed. The heavy terms are the rare ones, so most of the
/// common terms' postings are never offered. The stop is exact: the sum of bounds is
/// scaled up by `margin`, which covers the rounding of two sums of at most `m`
/// non-negative terms taken in different orders, so a skipped document scores below
/// the k-th best, and one equal to it (which its name could still put first) is never
/// skipped. Ties are ordered by [`offer`], a total order, so the order in which
/// documents are offered does not matter.
///
/// A larger top collects every hit (large catalogues sweep a bitset of the block's
/// touched documents in id order; small ones walk the block's postings again) and
/// selects the best.
///
/// One function of some 200 lines on purpose: the block loop's state (the slots, the
/// cursors, the bounds, the floor and the top) lives in locals that its three ways of
/// adding postings and three ways of collecting hits share, and `consider!` is expanded
/// into each collection loop; cut into functions, each would take a dozen borrows and
/// the floor would travel through memory in the innermost loops. [`block_ends`] and
/// [`offer`] are the parts that stand alone.
pub(crate) fn scan(
    index: &Index,
    terms: &TermList,
    table: &SatTable,
    k: usize,
    allowed: Option<&Filter>,
    boosts: &[Boost<'_>],
    accum: &mut Accum,
) -> bool {
    let sat = &table.sat[..];
    let n = index.names.len();
    if accum.dirty {
        accum.acc.iter_mut().for_each(|x| *x = 0.0);
    }
    // One block's slots, reused by every block: a power of two long (at least one slot),
    // and blocks start at multiples of it, so `doc & mask` is `doc - block_start` and
    // indexes it without a bounds check. A large catalogue's query touches nearly every
    // slot, so one block's worth (warm after the first block) instead of one slot per
    // document saves most of a cold query's accumulator misses.
    let slots = n.next_power_of_two().clamp(1, SCAN_BLOCK);
    if accum.acc.len() < slots {
        accum.acc.resize(slots, 0.0);
    }
    accum.dirty = true;
    let Accum {
        acc,
        top,
        cursors,
        seen,
        ubs,
        rank,
        rest,
        spans,
        ends,
        ..
    } = accum;
    let acc = &mut acc[..slots];
    let mask = acc.len() - 1;
    // Per term: its weight, then its postings not yet scanned.
    cursors.clear();
    cursors.extend(terms.items.iter().map(|&(id, weight)| {
        let t = id as usize;
        (weight * index.idf[t], index.postings(t))
    }));
    // Terms from this one on are weak (docs/analysis.md §4): they add only to a document
    // the strong ones (scanned before them in each block) scored above 0.
    let strong = terms.strong_count();
    let small = k <= TOP_INSERT_MAX;
    // A small top skips the documents that cannot enter it (see below): terms by
    // upper bound (`qw * idf` times the term's largest saturated weight), largest
    // first, and the sums of the bounds from each on.
    let bounded = small && k > 0;
    let m = cursors.len();
    // The most any document's score is multiplied by (factors are at least 1), and the
    // rounding of that product and of a score's (a few ulps, covered by `4 * EPSILON`).
    let most: f64 = boosts.iter().map(|b| b.factor).product();
    let scale = if boosts.is_empty() {
        1.0
    } else {
        most * (1.0 + 4.0 * f64::EPSILON)
    };
    let margin = (1.0 + (m as f64 + 2.0) * 8.0 * f64::EPSILON) * scale;
    if bounded {
        ubs.clear();
        ubs.extend(
            terms
                .items
                .iter()
                .zip(cursors.iter())
                .map(|(&(id, _), &(q, _))| q * table.term_max[id as usize]),
        );
        rank.clear();
        rank.extend(0..m);
        rank.sort_unstable_by(|&a, &b| ubs[b].total_cmp(&ubs[a]).then(a.cmp(&b)));
        rest.clear();
        rest.resize(m + 1, 0.0);
        for r in (0..m).rev() {
            rest[r] = rest[r + 1] + ubs[rank[r]];
        }
        spans.clear();
        spans.resize(m, (0, 0));
    }
    top.clear();
    let mut found = false;
    // Scores below this cannot enter a full top (the k-th best); while it fills, the least
    // positive float that is not zero here, so that `score >= floor` is `score > 0.0`.
    let mut floor = fill_floor();
    // Large catalogues mark the documents each block touches in a bitset and sweep it
    // in id order (sequential slots, no second random walk); small ones walk the
    // block's postings again (fewer instructions when everything is in cache).
    let sweep = n >= SWEEP_MIN_DOCS;
    if sweep {
        seen.clear();
        seen.resize(SCAN_BLOCK / 64, 0);
    }
    // Offer document `d` with `score` (its slot just read): the branches are taken
    // rarely once the top is full, so the many documents below it (or seen already,
    // reading 0) cost no misprediction. A macro, to be inlined in both loops.
    macro_rules! consider {
        ($d:expr, $score:expr) => {{
            let (d, summed): (usize, f64) = ($d, $score);
            // One comparison rejects most documents: `summed * scale` is at least any
            // boosted score (see `scale`), and `floor` is positive (a hit's score, or
            // `fill_floor()`), so 0.0 (no term, or a slot already read) fails.
            if summed * scale >= floor {
                let score = if boosts.is_empty() {
                    summed
                } else {
                    summed * factor(d as u32, boosts)
                };
                if score >= floor && allowed.is_none_or(|f| f.contains(d)) {
                    found = true;
                    let hit = Hit {
                        score,
                        doc: d as u32,
                    };
                    if !small {
                        top.push(hit);
                    } else if k > 0 && offer(index, top, k, hit, terms) {
                        floor = top[k - 1].score;
                    }
                }
            }
        }};
    }
    let mut block_start = 0usize;
    while block_start < n {
        let block_end = (block_start + SCAN_BLOCK).min(n);
        let last = block_end == n;
        if !last {
            block_ends(&index.post_doc, cursors, block_end, ends);
        }
        for (i, (q, range)) in cursors.iter_mut().enumerate() {
            let docs = &index.post_doc[range.clone()];
            let m = if last { docs.len() } else { ends[i] };
            let q = *q;
            let sats = &sat[range.start..range.start + m];
            if i >= strong {
                if bounded {
                    spans[i] = (range.start, range.start + m);
                }
                // Scores are positive: a slot at 0 has no strong term, and stays 0.
                for (&doc, &s) in docs[..m].iter().zip(sats) {
                    let slot = &mut acc[doc as usize & mask];
                    if *slot != 0.0 {
                        *slot += q * f64::from(s);
                    }
                }
            } else if bounded {
                spans[i] = (range.start, range.start + m);
                // Four postings a step (a term has a document once, so the order of
                // its postings changes no sum).
                let (d4, s4) = (docs[..m].chunks_exact(4), sats.chunks_exact(4));
                let (dr, sr) = (d4.remainder(), s4.remainder());
                for (d, s) in d4.zip(s4) {
                    acc[d[0] as usize & mask] += q * f64::from(s[0]);
                    acc[d[1] as usize & mask] += q * f64::from(s[1]);
                    acc[d[2] as usize & mask] += q * f64::from(s[2]);
                    acc[d[3] as usize & mask] += q * f64::from(s[3]);
                }
                for (&doc, &s) in dr.iter().zip(sr) {
                    acc[doc as usize & mask] += q * f64::from(s);
                }
            } else if sweep {
                for (&doc, &s) in docs[..m].iter().zip(sats) {
                    let b = doc as usize & mask;
                    acc[b] += q * f64::from(s);
                    seen[b >> 6] |= 1u64 << (b & 63);
                }
            } else {
                for (&doc, &s) in docs[..m].iter().zip(sats) {
                    acc[doc as usize & mask] += q * f64::from(s);
                }
            }
            range.start += m;
        }
        if bounded {
            // The block's documents, through the terms of largest bound first: each
            // document is read (and its slot zeroed) at its first visit; once the
            // bounds of the terms left sum below the k-th best, the documents having
            // only those cannot enter the top, and their slots are only zeroed.
            let mut done = rank.len();
            for (r, &i) in rank.iter().enumerate() {
                if rest[r] * margin < floor {
                    done = r;
                    break;
                }
                let (a, b) = spans[i];
                // No branch on the slot: a document met again reads 0.0, which
                // `consider!` rejects with the comparison it makes anyway.
                for &doc in &index.post_doc[a..b] {
                    let slot = doc as usize & mask;
                    let score = acc[slot];
                    acc[slot] = 0.0;
                    consider!(doc as usize, score);
                }
            }
            let light: usize = rank[done..].iter().map(|&i| spans[i].1 - spans[i].0).sum();
            if light * ZERO_FILL_RATIO > block_end - block_start {
                // Every slot the walk left set is a light term's (ZERO_FILL_RATIO).
                acc[..block_end - block_start].fill(0.0);
            } else {
                for &i in &rank[done..] {
                    let (a, b) = spans[i];
                    let d4 = index.post_doc[a..b].chunks_exact(4);
                    let dr = d4.remainder();
                    for d in d4 {
                        acc[d[0] as usize & mask] = 0.0;
                        acc[d[1] as usize & mask] = 0.0;
                        acc[d[2] as usize & mask] = 0.0;
                        acc[d[3] as usize & mask] = 0.0;
                    }
                    for &doc in dr {
                        acc[doc as usize & mask] = 0.0;
                    }
                }
            }
        } else if sweep {
            for (w, word) in seen.iter_mut().enumerate() {
                let mut bits = std::mem::take(word);
                while bits != 0 {
                    let b = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let score = acc[b];
                    acc[b] = 0.0;
                    consider!(block_start + b, score);
                }
            }
        } else {
            // Only catalogues below SWEEP_MIN_DOCS re-walk, and they are a single block
            // (SWEEP_MIN_DOCS <= SCAN_BLOCK): each term's postings up to its cursor.
            debug_assert_eq!(block_start, 0);
            for (&(id, _), (_, rest)) in terms.items.iter().zip(cursors.iter()) {
                for &doc in &index.post_doc[index.postings(id as usize).start..rest.start] {
                    let slot = doc as usize & mask;
                    let score = acc[slot];
                    acc[slot] = 0.0;
                    consider!(doc as usize, score);
                }
            }
        }
        block_start = block_end;
    }
    accum.dirty = false;
    if !small {
        let cmp = |a: &Hit, b: &Hit| hit_order(index, a, b, terms);
        if k < top.len() {
            top.select_nth_unstable_by(k - 1, cmp);
            top.truncate(k);
        }
        top.sort_unstable_by(cmp);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    /// The galloping search from any guess, and the interpolated guesses of `block_ends`,
    /// give exactly `partition_point`, on dense, sparse and clustered id lists.
    #[test]
    fn block_boundaries_are_partition_points() {
        let mut next = lcg(5);
        for case in 0..300 {
            let len = 1 + next() % 200;
            let gap = 1 + case % 7 * (1 + next() % 50);
            let mut docs = Vec::with_capacity(len);
            let mut d = next() % 10;
            for _ in 0..len {
                docs.push(d as u32);
                // Mostly small steps with a rare jump: clustered ids defeat interpolation.
                d += 1 + if next() % 16 == 0 {
                    gap * 20
                } else {
                    next() % gap
                };
            }
            let top = d + 5;
            for target in (0..top).step_by(1 + top / 97) {
                let want = docs.partition_point(|&x| (x as usize) < target);
                for guess in 0..len {
                    assert_eq!(
                        gallop_partition(&docs, guess, target),
                        want,
                        "{docs:?} {guess} {target}"
                    );
                }
                let lo = next() % len;
                let cursors = [(1.0, lo..len), (1.0, 0..len), (1.0, len..len)];
                let mut ends = Vec::new();
                block_ends(&docs, &cursors, target, &mut ends);
                let part = |r: &std::ops::Range<usize>| {
                    docs[r.clone()].partition_point(|&x| (x as usize) < target)
                };
                let wanted: Vec<usize> = cursors.iter().map(|(_, r)| part(r)).collect();
                assert_eq!(ends, wanted, "{docs:?} {target} from {lo}");
            }
        }
    }

    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Naming {
        Shuffled,
        Ordered,
        Repeated,
    }

    #[test]
    fn every_scan_path_ranks_as_the_definition() {
        let a = the_analyzer();
        let words = [
            "alpha", "beta", "gamma", "delta", "omega", "sigma", "pi", "rho",
        ];
        let s = Settings::new(
            [1.0, 0.5, 2.0, 0.25, 1.5, 0.75],
            [0.75, 0.2, 0.5, 1.0, 0.0, 0.4],
            1.2,
            0.7,
        );
        // One block (re-walk), one block of 64 slots (sweep), several blocks (sweep); names
        // with duplicates and out of id order, ascending with the ids (ties by id), and
        // ascending with duplicates (ties by first touch).
        let namings = [Naming::Shuffled, Naming::Ordered, Naming::Repeated];
        for (n, naming) in [40usize, 60, 150, 333]
            .into_iter()
            .flat_map(|n| namings.map(|m| (n, m)))
        {
            let mut next = lcg(99 + n as u64);
            let mut names = Vec::new();
            let mut fields = Vec::new();
            for i in 0..n {
                let mut f: [String; N_FIELDS] = Default::default();
                for field in f.iter_mut() {
                    for _ in 0..next() % 4 {
                        field.push_str(words[next() % words.len()]);
                        field.push(' ');
                    }
                }
                // Duplicate names and identical documents make exact ties.
                names.push(match naming {
                    Naming::Shuffled => format!("tool{}", (i * 7) % (n / 3 + 1)),
                    Naming::Ordered => format!("tool{i:04}"),
                    Naming::Repeated => format!("tool{:04}", i / 2),
                });
                fields.push(f);
            }
            let idx = Index::build(Arc::clone(&a), names, fields).unwrap();
            assert_eq!(idx.name_ordered, naming == Naming::Ordered);
            let queries = [
                "alpha",
                "beta gamma",
                "omega pi rho alpha",
                "sigma delta beta alpha",
            ];
            let ks = [0, 1, 2, 3, 5, 10, 17, 64, 65, 100, n, n + 5];
            assert_ranks_as_naive(&idx, &s, &queries, &ks, 3, 1);
        }
    }

    /// Rare heavy terms and common light ones (the case where the walk stops early), with
    /// many exact ties around the k-th best: every top must be the definition's.
    #[test]
    fn skipping_light_terms_keeps_the_ranking() {
        let a = the_analyzer();
        let s = Settings::new([5.0, 2.5, 1.25, 0.4, 0.4, 1.0], [0.5; N_FIELDS], 2.0, 1.0);
        for n in [60usize, 300, 900] {
            let mut next = lcg(7 + n as u64);
            let mut names = Vec::new();
            let mut fields = Vec::new();
            for i in 0..n {
                let mut f: [String; N_FIELDS] = Default::default();
                // "list" and "get" nearly everywhere, "slack" and "calendar" rarely;
                // every fifth document a copy of the one before (equal scores).
                if i % 5 == 4 {
                    f = fields.last().cloned().expect("a document before");
                } else {
                    for (field, text) in f.iter_mut().enumerate() {
                        for w in ["list", "get", "item", "slack", "calendar", "event"] {
                            let p = match w {
                                "list" | "get" => 2,
                                "item" | "event" => 6,
                                _ => 25,
                            };
                            if next() % p == 0 {
                                text.push_str(w);
                                text.push(' ');
                                if field > 2 && next() % 2 == 0 {
                                    text.push_str(w);
                                    text.push(' ');
                                }
                            }
                        }
                    }
                }
                names.push(format!("t{:03}", (i * 37) % (n / 2 + 1)));
                fields.push(f);
            }
            let idx = Index::build(Arc::clone(&a), names, fields).unwrap();
            let queries = [
                "slack list",
                "list get slack",
                "calendar event list get item",
                "get list",
                "item calendar",
            ];
            assert_ranks_as_naive(&idx, &s, &queries, &[1, 2, 3, 4, 5, 7, 10, 20, 64], 4, 2);
        }
    }
}
