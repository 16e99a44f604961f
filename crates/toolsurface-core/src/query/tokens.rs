//! Query tokenising: a query's tokens and the weight of each.

use crate::analysis::analyzer::{in_payload, Analyzer};
use crate::analysis::function_words::is_function_word;
use crate::analysis::lexkey::lexicon_key;
use crate::consts::PAYLOAD_WEIGHT;
use crate::query::ask;
use crate::query::buffers::QueryBuffers;
use crate::query::memo::{MemoTok, QueryMemo, NOT_LOOKED_UP, QUERY_MEMO_BYTES, QUERY_MEMO_IDENTS};
use crate::strtab::str_hash;

/// The query weight of the tokens of `ident`, a slice of `query`: [`PAYLOAD_WEIGHT`] when
/// it starts inside one of the payload ranges `spans`, is a number
/// ([`Analyzer::is_number`]), a file name ([`Analyzer::is_file_name`]) or a path's part
/// ([`Analyzer::is_path_part`]), else 1.
fn ident_weight(
    analyzer: &Analyzer,
    spans: &[(usize, usize)],
    query: &str,
    ident: &str,
    start: usize,
) -> f64 {
    if in_payload(spans, start)
        || analyzer.is_number(ident)
        || analyzer.is_file_name(ident)
        || analyzer.is_path_part(query, start, start + ident.len())
    {
        PAYLOAD_WEIGHT
    } else {
        1.0
    }
}

/// Cap each weight of `ws` at [`PAYLOAD_WEIGHT`]: context and subject weigh as the payload.
fn cap_at_payload<'w>(ws: impl Iterator<Item = &'w mut f64>) {
    for w in ws {
        *w = w.min(PAYLOAD_WEIGHT);
    }
}

/// Analyse `query` with `analyzer` (the index's) into `bufs.qtoks` through the caller's
/// identifier memo, and the weight of each token into `bufs.qweights`: [`PAYLOAD_WEIGHT`] for those of an
/// identifier in the request's payload ([`Analyzer::payload_spans`]), of a number
/// ([`Analyzer::is_number`]), of a file name ([`Analyzer::is_file_name`]) or of a path's
/// part ([`Analyzer::is_path_part`]), else 1; the weight of each issue-key identifier
/// ([`Analyzer::is_issue_key`]) into `bufs.issue_keys`; then the identifiers before the
/// request's ask ([`ask::ask_start`]) and those of its subject ([`ask::subject_start`])
/// weigh [`PAYLOAD_WEIGHT`] at most. Every path to a query's terms (search, explain,
/// `Searcher::query_terms`, mentions) tokenises here.
pub(crate) fn analyse_query(analyzer: &Analyzer, query: &str, bufs: &mut QueryBuffers) {
    let QueryBuffers {
        tok,
        memo,
        qtoks,
        qweights,
        spans,
        issue_keys,
        idents,
        ..
    } = bufs;
    let owner = analyzer.id();
    if memo.owner != owner
        || memo.map.len() >= QUERY_MEMO_IDENTS
        || memo.text.len() + memo.key_bytes >= QUERY_MEMO_BYTES
    {
        // Start over only between queries, so that the ranges in `qtoks` stay valid.
        memo.reset(owner);
    }
    qtoks.clear();
    qweights.clear();
    issue_keys.clear();
    idents.clear();
    analyzer.payload_spans(query, spans);
    analyzer.for_each_identifier(query, |ident| {
        let start = ident.as_ptr() as usize - query.as_ptr() as usize;
        let w = ident_weight(analyzer, spans, query, ident, start);
        // A marker word inside the payload is the message's, no ask of the request.
        let (code, subject) = if in_payload(spans, start) {
            (0, false)
        } else {
            (
                ask::word_code(analyzer, ident),
                ask::is_subject_marker(analyzer, ident),
            )
        };
        idents.push((qtoks.len(), issue_keys.len(), code, subject));
        if analyzer.is_issue_key(ident) {
            issue_keys.push(w);
        }
        let (a, b) = match memo.map.get(ident) {
            Some(&range) => range,
            None => {
                let a = memo.toks.len();
                let QueryMemo { text, toks, .. } = &mut *memo;
                analyzer.identifier_tokens_worded(ident, tok, &mut |t: &str, word: &str| {
                    let start = text.len();
                    text.push_str(t);
                    let end = text.len();
                    let key = lexicon_key(word, t);
                    text.push_str(&key);
                    toks.push(MemoTok {
                        start,
                        end,
                        hash: str_hash(t),
                        key_start: end,
                        key_end: text.len(),
                        key_hash: str_hash(&key),
                        function: is_function_word(word),
                        vocab_of: NOT_LOOKED_UP,
                        vocab_id: None,
                        lex_of: NOT_LOOKED_UP,
                        lex_id: 0,
                    });
                });
                let range = (a, memo.toks.len());
                memo.key_bytes += ident.len();
                memo.map.insert(ident.into(), range);
                range
            }
        };
        qtoks.extend(a..b);
        qweights.extend(std::iter::repeat_n(w, b - a));
    });
    // The context before the ask, and the subject after it, weigh as the payload does.
    let ask = ask::ask_start(idents.len(), |i| idents[i].2);
    if let Some(i) = ask {
        let (toks, keys, _, _) = idents[i];
        cap_at_payload(qweights[..toks].iter_mut().chain(&mut issue_keys[..keys]));
    }
    if let Some(i) = ask::subject_start(idents.len(), ask, |i| idents[i].3) {
        let (toks, keys, _, _) = idents[i];
        cap_at_payload(qweights[toks..].iter_mut().chain(&mut issue_keys[keys..]));
    }
}
