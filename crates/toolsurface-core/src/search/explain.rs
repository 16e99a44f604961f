//! Explanations: each matched term's contribution to a document's score, per field.

use crate::consts::N_FIELDS;
use crate::index::core::Index;
use crate::scoring::bm25f::{length_norms, tf_factor};
use crate::scoring::settings::Settings;

/// One matched term of an explanation: term, query weight, per-field contributions.
pub type Explanation = (String, f64, [f64; N_FIELDS]);

/// Per term of `terms` (vocabulary ids and query weights, in query order) that `doc` (a
/// valid id) has: the term, its weight and each field's part of its score, worked out with
/// the formulas a search's saturated weights come from, so the parts add up to the score.
pub(crate) fn explain_terms(
    index: &Index,
    terms: &[(u32, f64)],
    doc: usize,
    settings: &Settings,
) -> Vec<Explanation> {
    let norms = length_norms(&settings.b, &index.doc_len[doc], &index.avglen);
    let mut out = Vec::new();
    for &(id, weight) in terms {
        let t = id as usize;
        let range = index.postings(t);
        let Ok(i) = index.post_doc[range.clone()].binary_search(&(doc as u32)) else {
            continue;
        };
        let tf = index.tf(range.start + i);
        let factor = tf_factor(settings, &tf, &norms);
        let total = (weight * index.idf[t]) * factor.sat;
        // A field's share of the term's part of the score: its share of `s`.
        let shares = factor.parts.map(|part| {
            if part > 0.0 {
                total * (part / factor.sum)
            } else {
                0.0
            }
        });
        out.push((index.vocab.get(t).to_string(), weight, shares));
    }
    out
}
