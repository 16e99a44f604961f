//! Building an index: chunks analysed in parallel, vocabularies merged, postings laid out.

use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::analysis::analyzer::Analyzer;
use crate::consts::N_FIELDS;
use crate::error::{to_u32, Error};
use crate::index::chunk::{analyse_chunk, AnalysedDocs, ChunkTerms};
use crate::index::core::{Index, TF_BIG};
use crate::index::sat_cache::SatCache;
use crate::index::trigram::trigram_index;
use crate::strtab::{str_hash, Arena, StrTable};

/// The next index's `uid` (unique in the process).
pub(crate) static NEXT_UID: AtomicU64 = AtomicU64::new(1);

/// Marks a global term a chunk does not have.
const NO_LOCAL: u32 = u32::MAX;

/// A chunk's postings sorted by term: the run of local term `l` is
/// `start[l]..start[l + 1]` of `docs` (global ids, ascending) and `tfs`.
struct ChunkRuns {
    start: Vec<u32>,
    docs: Vec<u32>,
    tfs: Vec<[u8; N_FIELDS]>,
    /// Position in `docs` -> exact counts, for the [`TF_BIG`] bytes of `tfs`.
    big: FxHashMap<u32, [u32; N_FIELDS]>,
    /// Global term id -> local id, or [`NO_LOCAL`].
    local: Vec<u32>,
}

impl ChunkRuns {
    /// The chunk's pairs sorted by local term, of which there are `nl` (`c.terms` has been
    /// moved out to be merged); `local` is left empty (see [`ChunkRuns::map_terms`]).
    fn new(c: ChunkTerms, nl: usize, first_doc: u32) -> ChunkRuns {
        let mut start = vec![0u32; nl + 1];
        for &(l, _) in &c.pairs {
            start[l as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut cursor = start.clone();
        let mut docs = vec![0u32; c.pairs.len()];
        let mut tfs = vec![[0u8; N_FIELDS]; c.pairs.len()];
        let mut big = FxHashMap::default();
        let mut bigs = c.big.iter().peekable();
        let mut begin = 0;
        for (d, &end) in c.doc_ends.iter().enumerate() {
            for (k, &(l, tf)) in c.pairs[begin..end].iter().enumerate() {
                let p = cursor[l as usize] as usize;
                cursor[l as usize] += 1;
                docs[p] = first_doc + d as u32;
                tfs[p] = tf;
                if let Some(&(_, exact)) = bigs.next_if(|&&(at, _)| at as usize == begin + k) {
                    big.insert(p as u32, exact);
                }
            }
            begin = end;
        }
        ChunkRuns {
            start,
            docs,
            tfs,
            big,
            local: Vec::new(),
        }
    }

    /// Fill `local` from the chunk's local id -> global id map.
    fn map_terms(&mut self, map: &[u32], vocab_len: usize) {
        let mut local = vec![NO_LOCAL; vocab_len];
        for (l, &g) in map.iter().enumerate() {
            local[g as usize] = l as u32;
        }
        self.local = local;
    }
}

/// Merge the chunks' vocabularies (in document order): the merged vocabulary, and per
/// chunk its local id -> global id. The first chunk's is the start of the merged one as it
/// stands (its ids are the global ones): a quarter of the merge's lookups saved.
fn merge_vocabularies(terms: Vec<StrTable>) -> Result<(StrTable, Vec<Vec<u32>>), Error> {
    let mut terms = terms.into_iter();
    let mut vocab = terms.next().unwrap_or_default();
    let mut maps: Vec<Vec<u32>> = Vec::with_capacity(terms.len() + 1);
    maps.push((0..to_u32(vocab.len(), "vocabulary size")?).collect());
    for t in terms {
        let mut map = Vec::with_capacity(t.len());
        for local in 0..t.len() {
            let term = t.get(local);
            map.push(vocab.insert(term, str_hash(term))?.0);
        }
        maps.push(map);
    }
    vocab.shrink_to_fit();
    Ok((vocab, maps))
}

impl Index {
    /// Build the index of `names[i]` with the six field texts `fields[i]` (name,
    /// search_hint, summary, body, params, learned). Analysis runs in parallel.
    pub fn build(
        analyzer: Arc<Analyzer>,
        names: Vec<String>,
        fields: Vec<[String; N_FIELDS]>,
    ) -> Result<Index, Error> {
        Index::build_from(analyzer, &names, &fields)
    }

    /// [`Index::build`] from borrowed texts: a caller that borrows them (the Python binding
    /// borrows the Python strings) makes and frees no string per text.
    pub fn build_from<N: AsRef<str>, S: AsRef<str> + Sync>(
        analyzer: Arc<Analyzer>,
        names: &[N],
        fields: &[[S; N_FIELDS]],
    ) -> Result<Index, Error> {
        if names.len() != fields.len() {
            return Err(Error::LengthMismatch {
                names: names.len(),
                fields: fields.len(),
            });
        }
        let part = Index::analyse(&analyzer, fields)?;
        Index::assemble(analyzer, names, vec![part])
    }

    /// The documents `fields` analysed, in parallel, for [`Index::assemble`]: the first
    /// half of [`Index::build_from`], which a caller may run on each part of a catalogue
    /// as it makes the part's texts.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsurface_core::{Analyzer, CharTable, Index, Searcher, Settings};
    ///
    /// let table =
    ///     CharTable::parse(include_str!("../../../../python/toolsurface/data/chars.tsv"))?;
    /// let analyzer = Arc::new(Analyzer::new(table, ["the"]));
    /// let fields = [
    ///     ["list_issues", "", "Lists issues.", "", "", ""],
    ///     ["send_message", "", "Sends a message.", "", "", ""],
    /// ];
    /// let names = ["list_issues", "send_message"];
    /// let parts = vec![
    ///     Index::analyse(&analyzer, &fields[..1])?,
    ///     Index::analyse(&analyzer, &fields[1..])?,
    /// ];
    /// let index = Index::assemble(Arc::clone(&analyzer), &names, parts)?;
    /// let whole = Index::build_from(analyzer, &names, &fields)?;
    /// let settings = Settings::new([3.0, 2.5, 2.0, 1.0, 0.4, 1.0], [0.5; 6], 1.2, 0.6);
    /// let found = Searcher::new(&index).search("send a message", 10, &settings, None, None)?;
    /// let as_whole = Searcher::new(&whole).search("send a message", 10, &settings, None, None)?;
    /// assert_eq!((found.docs.clone(), found.scores), (as_whole.docs, as_whole.scores));
    /// assert_eq!(found.docs, [1]);
    /// # Ok::<(), toolsurface_core::Error>(())
    /// ```
    pub fn analyse<S: AsRef<str> + Sync>(
        analyzer: &Analyzer,
        fields: &[[S; N_FIELDS]],
    ) -> Result<AnalysedDocs, Error> {
        let n = fields.len();
        to_u32(n, "document count")?;
        // Few chunks: each has its own memo and vocabulary to merge; two a thread so that
        // one slow worker (a busy machine) does not hold the build up for long.
        let threads = rayon::current_num_threads().max(1);
        let chunk = n.div_ceil(threads * 2).max(256);
        let chunks: Vec<ChunkTerms> = fields
            .par_chunks(chunk)
            .map(|docs| analyse_chunk(analyzer, docs))
            .collect::<Result<_, Error>>()?;
        Ok(AnalysedDocs {
            analyser: analyzer.id(),
            chunks,
            docs: n,
        })
    }

    /// The index of `names`, whose documents `parts` holds in order (each made by
    /// [`Index::analyse`] with `analyzer`): the second half of [`Index::build_from`].
    pub fn assemble<N: AsRef<str>>(
        analyzer: Arc<Analyzer>,
        names: &[N],
        parts: Vec<AnalysedDocs>,
    ) -> Result<Index, Error> {
        let n = names.len();
        to_u32(n, "document count")?;
        let docs: usize = parts.iter().map(|p| p.docs).sum();
        if docs != n {
            return Err(Error::LengthMismatch {
                names: n,
                fields: docs,
            });
        }
        if parts.iter().any(|p| p.analyser != analyzer.id()) {
            return Err(Error::AnalyserMismatch);
        }
        let chunks: Vec<ChunkTerms> = parts.into_iter().flat_map(|p| p.chunks).collect();

        let (names, name_ordered) = name_arena(names)?;
        let (doc_len, first_doc, totals) = doc_lengths(&chunks, n);
        let (vocab, runs) = chunk_runs(chunks, &first_doc)?;
        let v = vocab.len();
        let (df, term_start, total) = postings_offsets(&runs, v)?;
        let (post_doc, post_tf, tf_big) = lay_out_postings(&runs, &term_start, total, v);
        drop(runs);
        let own_text = own_text_terms(&term_start, &post_tf);
        let avglen = average_lengths(&totals, n);
        let idf = idf(&df, n);
        drop(df);

        let (tri_keys, tri_start, tri_terms, tri_count) = trigram_index(&vocab)?;

        Ok(Index {
            uid: NEXT_UID.fetch_add(1, AtomicOrdering::Relaxed),
            analyzer,
            names,
            name_ordered,
            vocab,
            term_start,
            post_doc,
            post_tf,
            tf_big,
            doc_len,
            avglen,
            idf,
            own_text,
            tri_keys,
            tri_start,
            tri_terms,
            tri_count,
            cache: SatCache::default(),
        })
    }
}

/// The names in one arena, and whether they ascend strictly (byte order) with the ids.
fn name_arena<N: AsRef<str>>(names: &[N]) -> Result<(Arena, bool), Error> {
    let mut name_arena = Arena::default();
    let mut name_ordered = true;
    for name in names {
        name_arena.push(name.as_ref())?;
        let i = name_arena.len() - 1;
        if i > 0 && name_ordered {
            name_ordered = name_arena.get(i - 1).as_bytes() < name_arena.get(i).as_bytes();
        }
    }
    name_arena.shrink_to_fit();
    Ok((name_arena, name_ordered))
}

/// Per document its field lengths (the chunks' in order), each chunk's first document id,
/// and the field lengths' totals.
fn doc_lengths(
    chunks: &[ChunkTerms],
    n: usize,
) -> (Vec<[u32; N_FIELDS]>, Vec<u32>, [u64; N_FIELDS]) {
    let mut doc_len: Vec<[u32; N_FIELDS]> = Vec::with_capacity(n);
    let mut first_doc = Vec::with_capacity(chunks.len());
    for c in chunks {
        first_doc.push(doc_len.len() as u32);
        doc_len.extend_from_slice(&c.lens);
    }
    let totals = length_totals(&doc_len);
    (doc_len, first_doc, totals)
}

/// The field lengths' totals over the documents.
pub(crate) fn length_totals(doc_len: &[[u32; N_FIELDS]]) -> [u64; N_FIELDS] {
    let mut totals = [0u64; N_FIELDS];
    for lens in doc_len {
        for (total, &len) in totals.iter_mut().zip(lens) {
            *total += u64::from(len);
        }
    }
    totals
}

/// The merged vocabulary, and each chunk's postings as runs by term with its global id ->
/// local id map.
fn chunk_runs(
    mut chunks: Vec<ChunkTerms>,
    first_doc: &[u32],
) -> Result<(StrTable, Vec<ChunkRuns>), Error> {
    // At once: the vocabularies merged, on one thread, and each chunk's pairs sorted by
    // local term (counting sort: doc ids stay ascending within a term), in parallel;
    // the sort needs no global id, so it no longer waits for the merge.
    let terms: Vec<StrTable> = chunks
        .iter_mut()
        .map(|c| std::mem::take(&mut c.terms))
        .collect();
    let sizes: Vec<usize> = terms.iter().map(StrTable::len).collect();
    let (merged, mut runs) = rayon::join(
        || merge_vocabularies(terms),
        || {
            chunks
                .into_par_iter()
                .zip(sizes.par_iter())
                .zip(first_doc.par_iter())
                .map(|((c, &nl), &first)| ChunkRuns::new(c, nl, first))
                .collect::<Vec<ChunkRuns>>()
        },
    );
    let (vocab, maps) = merged?;
    let v = vocab.len();
    // Each chunk's global id -> local id, in parallel.
    runs.par_iter_mut()
        .zip(maps.par_iter())
        .for_each(|(r, map)| r.map_terms(map, v));
    drop(maps);
    Ok((vocab, runs))
}

/// Each term's document frequency, the start of its postings (one more, the end of the
/// last), and the number of postings.
fn postings_offsets(runs: &[ChunkRuns], v: usize) -> Result<(Vec<u32>, Vec<u32>, usize), Error> {
    let mut df = vec![0u32; v];
    for r in runs {
        for (g, &local) in r.local.iter().enumerate() {
            if local != NO_LOCAL {
                let l = local as usize;
                df[g] += r.start[l + 1] - r.start[l];
            }
        }
    }
    let mut term_start: Vec<u32> = Vec::with_capacity(v + 1);
    let mut total = 0usize;
    for &d in &df {
        term_start.push(to_u32(total, "postings count")?);
        total += d as usize;
    }
    term_start.push(to_u32(total, "postings count")?);
    Ok((df, term_start, total))
}

/// The postings' documents, counts, and exact counts of the [`TF_BIG`] ones (as in [`Index`]).
type Postings = (Vec<u32>, Vec<[u8; N_FIELDS]>, Vec<(u32, [u32; N_FIELDS])>);

/// The postings of the `v` terms (documents, counts and the exact counts of the
/// [`TF_BIG`] ones), laid out from the chunks' runs at `term_start`.
fn lay_out_postings(runs: &[ChunkRuns], term_start: &[u32], total: usize, v: usize) -> Postings {
    // Postings laid out in parallel over ranges of terms: each range's part of the
    // arrays is its own slice, filled from the chunks' runs in chunk (document) order.
    let mut post_doc = vec![0u32; total];
    let mut post_tf = vec![[0u8; N_FIELDS]; total];
    let parts = (rayon::current_num_threads().max(1) * 4).min(v.max(1));
    let mut pieces = Vec::with_capacity(parts);
    {
        let (mut docs_rest, mut tfs_rest) = (post_doc.as_mut_slice(), post_tf.as_mut_slice());
        let mut t0 = 0usize;
        for i in 1..=parts {
            // End at the term where the i-th share of the postings is reached.
            let goal = (total * i / parts) as u32;
            let t1 = if i == parts {
                v
            } else {
                term_start.partition_point(|&s| s < goal).clamp(t0, v)
            };
            let len = (term_start[t1] - term_start[t0]) as usize;
            let (d, dr) = docs_rest.split_at_mut(len);
            let (f, fr) = tfs_rest.split_at_mut(len);
            docs_rest = dr;
            tfs_rest = fr;
            pieces.push((t0..t1, d, f));
            t0 = t1;
        }
    }
    let bigs: Vec<Vec<(u32, [u32; N_FIELDS])>> = pieces
        .into_par_iter()
        .map(|(terms, docs, tfs)| {
            let base = term_start[terms.start] as usize;
            let mut at = 0usize;
            let mut big = Vec::new();
            for g in terms {
                for r in runs {
                    let local = r.local[g];
                    if local == NO_LOCAL {
                        continue;
                    }
                    let l = local as usize;
                    let run = r.start[l] as usize..r.start[l + 1] as usize;
                    let m = run.len();
                    docs[at..at + m].copy_from_slice(&r.docs[run.clone()]);
                    tfs[at..at + m].copy_from_slice(&r.tfs[run.clone()]);
                    if !r.big.is_empty() {
                        for (i, tf) in r.tfs[run.clone()].iter().enumerate() {
                            if !tf.contains(&TF_BIG) {
                                continue;
                            }
                            if let Some(&exact) = r.big.get(&((run.start + i) as u32)) {
                                big.push(((base + at + i) as u32, exact));
                            }
                        }
                    }
                    at += m;
                }
            }
            big
        })
        .collect();
    let mut tf_big: Vec<(u32, [u32; N_FIELDS])> = bigs.concat();
    tf_big.shrink_to_fit();
    (post_doc, post_tf, tf_big)
}

/// Average field lengths of `n` documents whose lengths total `totals` (0 for none).
pub(crate) fn average_lengths(totals: &[u64; N_FIELDS], n: usize) -> [f64; N_FIELDS] {
    let nf = n as f64;
    let mut avglen = [0.0f64; N_FIELDS];
    for f in 0..N_FIELDS {
        avglen[f] = if n > 0 { totals[f] as f64 / nf } else { 0.0 };
    }
    avglen
}

/// Each term's idf from its document frequency: `ln(1 + (n - df + 0.5) / (df + 0.5))`.
pub(crate) fn idf(df: &[u32], n: usize) -> Vec<f64> {
    let nf = n as f64;
    df.iter()
        .map(|&d| {
            let dff = f64::from(d);
            (1.0 + ((nf - dff) + 0.5) / (dff + 0.5)).ln()
        })
        .collect()
}

/// One bit a term: set when a posting of it counts the term in a field before the learned
/// one (the last), that is in the tool's own texts.
fn own_text_terms(term_start: &[u32], post_tf: &[[u8; N_FIELDS]]) -> Vec<u64> {
    let terms = term_start.len().saturating_sub(1);
    let mut bits = vec![0u64; terms.div_ceil(64)];
    for (t, span) in term_start.windows(2).enumerate() {
        let own = post_tf[span[0] as usize..span[1] as usize]
            .iter()
            .any(|tf| tf[..N_FIELDS - 1].iter().any(|&c| c != 0));
        if own {
            bits[t / 64] |= 1 << (t % 64);
        }
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    #[test]
    fn counts_of_255_and_more_are_exact_across_chunks() {
        // Several build chunks (256 documents at least each), counts either side of TF_BIG.
        let counts = |i: usize| -> [u32; N_FIELDS] {
            let big = |c: usize| if i % 7 == c { 250 + (i % 11) as u32 } else { 1 };
            [big(0), 0, 0, big(3), (i % 3) as u32, 0]
        };
        let mut names = Vec::new();
        let mut docs = Vec::new();
        for i in 0..900 {
            let c = counts(i);
            let text = |n: u32| "word ".repeat(n as usize);
            names.push(format!("t{i:04}"));
            docs.push([
                text(c[0]),
                String::new(),
                String::new(),
                text(c[3]),
                text(c[4]),
                String::new(),
            ]);
        }
        let idx = Index::build(analyzer(), names, docs).unwrap();
        let id = idx.vocab.find("word", str_hash("word")).unwrap() as usize;
        let got: Vec<(u32, [u32; N_FIELDS])> = idx
            .postings(id)
            .map(|p| (idx.post_doc[p], idx.tf(p)))
            .collect();
        let want: Vec<(u32, [u32; N_FIELDS])> = (0..900).map(|i| (i as u32, counts(i))).collect();
        assert_eq!(got, want);
        assert!(!idx.tf_big.is_empty());
    }

    /// Names ascend with the ids only when strictly ascending, in byte (code point) order.
    #[test]
    fn names_in_id_order_are_detected() {
        let a = the_analyzer();
        let cases: [(&[&str], bool); 6] = [
            (&[], true),
            (&["a"], true),
            (&["a", "ab", "b"], true),
            (&["a", "a"], false),
            (&["b", "a"], false),
            (&["z", "é"], true),
        ];
        for (names, ordered) in cases {
            let fields = vec![<[String; N_FIELDS]>::default(); names.len()];
            let owned = names.iter().map(|s| s.to_string()).collect();
            let idx = Index::build(Arc::clone(&a), owned, fields).unwrap();
            assert_eq!(idx.name_ordered, ordered, "{names:?}");
        }
    }

    #[test]
    fn own_text_marks_terms_outside_the_learned_field() {
        // Term 0 only in the learned field, term 1 in the name, term 2 in both.
        let starts = [0u32, 1, 2, 4];
        let mut tf = vec![[0u8; N_FIELDS]; 4];
        tf[0][N_FIELDS - 1] = 1;
        tf[1][0] = 1;
        tf[2][N_FIELDS - 1] = 2;
        tf[3][2] = 1;
        assert_eq!(own_text_terms(&starts, &tf), vec![0b110]);
    }
}
