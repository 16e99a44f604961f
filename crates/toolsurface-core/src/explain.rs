//! Explanations: each matched term's contribution to a document's score, per field.

use crate::consts::N_FIELDS;
use crate::index::Index;
use crate::lexicon::Lexicon;
use crate::scoring::bm25f::{length_norms, tf_factor};
use crate::scoring::Settings;
use crate::search::scratch::with_scratch;

/// One matched term of an explanation: term, query weight, per-field contributions.
pub type Explanation = (String, f64, [f64; N_FIELDS]);

impl Index {
    /// Per matched term of `doc`: the term, its query weight and each field's contribution
    /// to the score (the fallback's terms when `fallback`).
    pub fn explain(
        &self,
        query: &str,
        doc: i64,
        settings: &Settings,
        lexicon: Option<&Lexicon>,
        fallback: bool,
    ) -> Result<Vec<Explanation>, String> {
        settings.validate()?;
        let doc = self.check_doc(doc)?;
        let terms = with_scratch(|sc| {
            self.analyse_query(query, sc);
            if fallback {
                self.fallback_terms(sc);
            } else {
                self.main_terms(sc, lexicon, settings.expansion_weight);
            }
            sc.terms.items.clone()
        });
        let norms = length_norms(&settings.b, &self.doc_len[doc], &self.avglen);
        let mut out = Vec::new();
        for (id, weight) in terms {
            let t = id as usize;
            let range = self.postings(t);
            let Ok(i) = self.post_doc[range.clone()].binary_search(&(doc as u32)) else {
                continue;
            };
            let tf = self.tf(range.start + i);
            let factor = tf_factor(settings, &tf, &norms);
            let total = (weight * self.idf[t]) * factor.sat;
            // A field's share of the term's part of the score: its share of `s`.
            let shares = factor.parts.map(|part| {
                if part > 0.0 {
                    total * (part / factor.sum)
                } else {
                    0.0
                }
            });
            out.push((self.vocab.get(t).to_string(), weight, shares));
        }
        Ok(out)
    }
}
