//! An index with its learned field replaced, the tools' own five fields taken from its
//! postings rather than analysed again: a learned hint changes only the last field, and
//! the registry keeps no copy of the tools' texts to build from (the index is that copy).
//!
//! The result equals a build of the same texts in everything a search reads (postings and
//! counts by term, lengths, idf, trigrams, names); only the vocabulary's ids may come in
//! another order, which no ranking depends on (ties between terms are broken by the term's
//! text, between documents by score, name and first touch).

use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;

use rayon::prelude::*;

use crate::consts::N_FIELDS;
use crate::error::{to_u32, Error};
use crate::index::build::{average_lengths, idf, length_totals, NEXT_UID};
use crate::index::core::{Index, TF_BIG};
use crate::index::sat_cache::SatCache;
use crate::index::trigram::{trigram_index_kept, DROPPED};
use crate::strtab::{str_hash, StrTable};

/// Marks a merged term that one of the two sides does not have.
const NONE: u32 = u32::MAX;

/// The postings being laid out, with the exact counts of those that do not fit a byte.
#[derive(Default)]
struct Laid {
    docs: Vec<u32>,
    tfs: Vec<[u8; N_FIELDS]>,
    big: Vec<(u32, [u32; N_FIELDS])>,
}

impl Laid {
    fn push(&mut self, doc: u32, tf: [u32; N_FIELDS]) -> Result<(), Error> {
        if tf.iter().any(|&c| c >= u32::from(TF_BIG)) {
            self.big
                .push((to_u32(self.docs.len(), "postings count")?, tf));
        }
        self.docs.push(doc);
        self.tfs.push(tf.map(|c| c.min(u32::from(TF_BIG)) as u8));
        Ok(())
    }
}

impl Index {
    /// This index with document `d`'s learned field (the last) made of `learned[d]`, as a
    /// build of the tools' own texts and `learned` would make it.
    pub fn with_learned<S: AsRef<str> + Sync>(&self, learned: &[S]) -> Result<Index, Error> {
        let n = self.len();
        if learned.len() != n {
            return Err(Error::LengthMismatch {
                names: n,
                fields: learned.len(),
            });
        }
        let names: Vec<&str> = (0..n).map(|d| self.names.get(d)).collect();
        let docs: Vec<[&str; N_FIELDS]> = learned
            .iter()
            .map(|text| {
                let mut doc = [""; N_FIELDS];
                doc[N_FIELDS - 1] = text.as_ref();
                doc
            })
            .collect();
        // The learned texts alone, analysed as a build analyses them.
        let part = Index::build_from(Arc::clone(&self.analyzer), &names, &docs)?;
        let (vocab, from_own, from_part) = self.merged_vocabulary(&part)?;
        let own_terms = from_own.iter().take_while(|&&t| t != NONE).count();

        // Runs of merged terms in parallel, each into postings of its own, then joined.
        let v = vocab.len();
        let step = v
            .div_ceil(rayon::current_num_threads().max(1) * 16)
            .max(1024);
        let runs: Vec<(Laid, Vec<u32>)> = (0..v.div_ceil(step))
            .into_par_iter()
            .map(|c| {
                let terms = c * step..((c + 1) * step).min(v);
                let mut laid = Laid::default();
                let mut df = Vec::with_capacity(terms.len());
                for t in terms {
                    let start = laid.docs.len();
                    self.merge_postings(&part, from_own[t], from_part[t], &mut laid)?;
                    df.push(to_u32(laid.docs.len() - start, "postings count")?);
                }
                Ok((laid, df))
            })
            .collect::<Result<_, Error>>()?;
        let total: usize = runs.iter().map(|(l, _)| l.docs.len()).sum();
        let mut laid = Laid {
            docs: Vec::with_capacity(total),
            tfs: Vec::with_capacity(total),
            big: Vec::new(),
        };
        let mut term_start = Vec::with_capacity(v + 1);
        let mut df = Vec::with_capacity(v);
        for (run, counts) in runs {
            let base = laid.docs.len();
            let mut at = base;
            for &d in &counts {
                term_start.push(to_u32(at, "postings count")?);
                at += d as usize;
            }
            let base = to_u32(base, "postings count")?;
            laid.docs.extend_from_slice(&run.docs);
            laid.tfs.extend_from_slice(&run.tfs);
            laid.big
                .extend(run.big.iter().map(|&(at, tf)| (base + at, tf)));
            df.extend_from_slice(&counts);
        }
        term_start.push(to_u32(laid.docs.len(), "postings count")?);

        let doc_len: Vec<[u32; N_FIELDS]> = self
            .doc_len
            .iter()
            .zip(&part.doc_len)
            .map(|(own, part)| {
                let mut lens = *own;
                lens[N_FIELDS - 1] = part[N_FIELDS - 1];
                lens
            })
            .collect();
        let totals = length_totals(&doc_len);
        let mut own_text = vec![0u64; vocab.len().div_ceil(64)];
        for t in 0..own_terms {
            own_text[t / 64] |= 1 << (t % 64);
        }
        // The own terms' trigrams are the index's: only the learned-only terms' are new.
        let mut new_id = vec![DROPPED; self.vocab.len()];
        for (n, &t) in from_own[..own_terms].iter().enumerate() {
            new_id[t as usize] = n as u32;
        }
        let old_tri = (
            &self.tri_keys[..],
            &self.tri_start[..],
            &self.tri_terms[..],
            &self.tri_count[..],
        );
        let (tri_keys, tri_start, tri_terms, tri_count) =
            trigram_index_kept(old_tri, &new_id, &vocab, own_terms)?;
        laid.docs.shrink_to_fit();
        laid.tfs.shrink_to_fit();
        laid.big.shrink_to_fit();
        Ok(Index {
            uid: NEXT_UID.fetch_add(1, AtomicOrdering::Relaxed),
            analyzer: Arc::clone(&self.analyzer),
            names: self.names.clone(),
            name_ordered: self.name_ordered,
            vocab,
            term_start,
            post_doc: laid.docs,
            post_tf: laid.tfs,
            tf_big: laid.big,
            doc_len,
            avglen: average_lengths(&totals, n),
            idf: idf(&df, n),
            own_text,
            tri_keys,
            tri_start,
            tri_terms,
            tri_count,
            cache: SatCache::default(),
        })
    }

    /// The terms of the tools' own texts (this index's order), then the learned texts'
    /// other terms (`part`'s order); per merged term its id here and in `part`, or [`NONE`].
    fn merged_vocabulary(&self, part: &Index) -> Result<(StrTable, Vec<u32>, Vec<u32>), Error> {
        let mut vocab = StrTable::default();
        let (mut from_own, mut from_part) = (Vec::new(), Vec::new());
        for t in 0..self.vocab.len() as u32 {
            if self.in_own_text(t) {
                let term = self.vocab.get(t as usize);
                vocab.insert(term, str_hash(term))?;
                from_own.push(t);
                from_part.push(NONE);
            }
        }
        for u in 0..part.vocab.len() as u32 {
            let term = part.vocab.get(u as usize);
            match vocab.insert(term, str_hash(term))? {
                (id, false) => from_part[id as usize] = u,
                (_, true) => {
                    from_own.push(NONE);
                    from_part.push(u);
                }
            }
        }
        vocab.shrink_to_fit();
        Ok((vocab, from_own, from_part))
    }

    /// The postings of one merged term, by document: its own-field counts here (term `t`),
    /// its learned counts in `part` (term `u`); a document with neither has no posting.
    fn merge_postings(&self, part: &Index, t: u32, u: u32, laid: &mut Laid) -> Result<(), Error> {
        let own = if t == NONE {
            0..0
        } else {
            self.postings(t as usize)
        };
        let learned = if u == NONE {
            0..0
        } else {
            part.postings(u as usize)
        };
        let (mut p, mut q) = (own.start, learned.start);
        while p < own.end || q < learned.end {
            let dp = if p < own.end {
                self.post_doc[p]
            } else {
                u32::MAX
            };
            let dq = if q < learned.end {
                part.post_doc[q]
            } else {
                u32::MAX
            };
            if dp < dq {
                // The usual posting: counts in the tools' own fields only, each under a
                // byte, and no learned count for this document: taken as it is.
                let small = self.post_tf[p];
                if small[N_FIELDS - 1] == 0 && !small.contains(&TF_BIG) {
                    laid.docs.push(dp);
                    laid.tfs.push(small);
                    p += 1;
                    continue;
                }
            }
            let mut tf = [0u32; N_FIELDS];
            if dp <= dq {
                tf = self.tf(p);
                tf[N_FIELDS - 1] = 0;
                p += 1;
            }
            if dq <= dp {
                tf[N_FIELDS - 1] = part.tf(q)[N_FIELDS - 1];
                q += 1;
            }
            if tf.iter().any(|&c| c != 0) {
                laid.push(dp.min(dq), tf)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use std::collections::BTreeMap;

    /// A term's idf bits, whether it is in a tool's own texts, its trigram count and its
    /// postings.
    type TermCanon = (u64, bool, u32, Vec<(u32, [u32; N_FIELDS])>);

    /// Everything a search reads, keyed by term text rather than id.
    type Canon = (
        BTreeMap<String, TermCanon>,
        BTreeMap<u64, Vec<String>>,
        Vec<[u32; N_FIELDS]>,
        [u64; N_FIELDS],
        Vec<String>,
    );

    fn canon(idx: &Index) -> Canon {
        let mut terms = BTreeMap::new();
        for t in 0..idx.vocab.len() {
            let postings = idx
                .postings(t)
                .map(|p| (idx.post_doc[p], idx.tf(p)))
                .collect();
            let own = idx.in_own_text(t as u32);
            let entry = (idx.idf[t].to_bits(), own, idx.tri_count[t], postings);
            terms.insert(idx.vocab.get(t).to_string(), entry);
        }
        let mut grams = BTreeMap::new();
        for (i, &key) in idx.tri_keys.iter().enumerate() {
            let ids = &idx.tri_terms[idx.tri_start[i] as usize..idx.tri_start[i + 1] as usize];
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "a trigram's terms ascend"
            );
            let mut texts: Vec<String> = ids
                .iter()
                .map(|&t| idx.vocab.get(t as usize).into())
                .collect();
            texts.sort();
            grams.insert(key, texts);
        }
        let names = (0..idx.len()).map(|d| idx.name(d).to_string()).collect();
        (
            terms,
            grams,
            idx.doc_len.clone(),
            idx.avglen.map(f64::to_bits),
            names,
        )
    }

    fn docs(learned: &[&str]) -> (Vec<String>, Vec<[String; N_FIELDS]>) {
        let own = [
            ("calendar__create_event", "Create an event in the calendar."),
            ("files__read_file", "Read a file from disk. Reads it whole."),
            ("slack__send_message", "Send a message to a channel."),
            ("zoom__schedule", "Schedule a meeting for later."),
        ];
        let names = own.iter().map(|(n, _)| n.to_string()).collect();
        let fields = own
            .iter()
            .zip(learned)
            .map(|((n, d), l)| {
                let text = |s: &str| s.to_string();
                [text(n), text(""), text(d), text(""), text("path"), text(l)]
            })
            .collect();
        (names, fields)
    }

    #[test]
    fn replacing_the_learned_field_equals_a_build() {
        let (names, before) = docs(&["book a call", "", "ping the team", ""]);
        let old = Index::build(analyzer(), names.clone(), before).unwrap();
        let cases: [[&str; 4]; 4] = [
            ["", "", "", ""],
            ["book a call", "", "ping the team", ""],
            ["meeting tomorrow", "open the notes notes", "", "video call"],
            [&"word ".repeat(300), "calendar", "message message", "zzz"],
        ];
        for learned in cases {
            let (_, fields) = docs(&learned);
            let built = Index::build(analyzer(), names.clone(), fields).unwrap();
            let merged = old.with_learned(&learned).unwrap();
            assert_eq!(canon(&merged), canon(&built), "{learned:?}");
            // Twice in a row: the result is itself a good base.
            assert_eq!(
                canon(&merged.with_learned(&learned).unwrap()),
                canon(&built)
            );
            let s = settings();
            for query in ["book a call", "message", "calendr", "word", "notes"] {
                let a = Searcher::new(&merged)
                    .search(query, 4, &s, None, None)
                    .unwrap();
                let b = Searcher::new(&built)
                    .search(query, 4, &s, None, None)
                    .unwrap();
                assert_eq!(
                    (a.docs, a.scores, a.fallback),
                    (b.docs, b.scores, b.fallback)
                );
            }
        }
        assert!(old.with_learned(&["only one"]).is_err());
    }

    /// A word of letters only, one per `i` (digits would be split off as words of their own).
    fn word(mut i: usize) -> String {
        let mut w = String::from("zq");
        loop {
            w.push((b'a' + (i % 26) as u8) as char);
            i /= 26;
            if i == 0 {
                return w;
            }
        }
    }

    #[test]
    fn many_terms_merged_in_runs_keep_their_exact_counts() {
        // Thousands of terms (several parallel runs), counts of 255 and more in both the
        // own and the learned fields, learned terms new and old.
        let n = 1500;
        let names: Vec<String> = (0..n).map(|i| format!("t{i:05}")).collect();
        let own = |i: usize| -> [String; N_FIELDS] {
            let body = if i % 97 == 0 {
                format!("{} ", word(i)).repeat(260)
            } else {
                format!("{} {} shared", word(i), word(i + n))
            };
            let name = names[i].clone();
            [
                name,
                String::new(),
                word(3 * n + i),
                body,
                String::new(),
                String::new(),
            ]
        };
        let learned: Vec<String> = (0..n)
            .map(|i| match i % 5 {
                0 => format!("{} ", word(i + n)).repeat(300),
                1 => format!("{} {} shared", word(5 * n + i), word(i)),
                _ => String::new(),
            })
            .collect();
        let before: Vec<[String; N_FIELDS]> = (0..n).map(own).collect();
        let after: Vec<[String; N_FIELDS]> = (0..n)
            .map(|i| {
                let mut doc = own(i);
                doc[N_FIELDS - 1] = learned[i].clone();
                doc
            })
            .collect();
        let old = Index::build(analyzer(), names.clone(), before).unwrap();
        let built = Index::build(analyzer(), names, after).unwrap();
        assert!(built.vocabulary_size() > 4 * 1024 && !built.tf_big.is_empty());
        let merged = old.with_learned(&learned).unwrap();
        assert_eq!(canon(&merged), canon(&built));
        assert_eq!(
            canon(&merged.with_learned(&learned).unwrap()),
            canon(&built)
        );
    }
}
