//! Query tokenising: a query's tokens and the weight of each.

use crate::analysis::analyzer::{in_payload, Analyzer};
use crate::analysis::function_words::is_function_word;
use crate::analysis::language::{Lang, Signals, SEPARABLE_PARTICLES};
use crate::analysis::lexkey::lexicon_key;
use crate::consts::PAYLOAD_WEIGHT;
use crate::query::ask;
use crate::query::buffers::QueryBuffers;
use crate::query::memo::{
    IdentFacts, LangWord, MemoTok, QueryMemo, NOT_LOOKED_UP, QUERY_MEMO_BYTES, QUERY_MEMO_IDENTS,
};
use crate::strtab::str_hash;

/// The query weight of the tokens of `ident`, a slice of `query`: [`PAYLOAD_WEIGHT`] when
/// it starts inside one of the payload ranges `spans`, is a number or a file name
/// (`facts`, [`IdentFacts::payload_like`]) or a path's part ([`Analyzer::is_path_part`]),
/// else 1.
fn ident_weight(
    analyzer: &Analyzer,
    spans: &[(usize, usize)],
    query: &str,
    ident: &str,
    start: usize,
    facts: &IdentFacts,
) -> f64 {
    if in_payload(spans, start)
        || facts.payload_like
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
/// weigh [`PAYLOAD_WEIGHT`] at most. The request's language ([`Signals::language`] of its
/// identifiers outside the payload) goes into `bufs.lang`; when it is neither English nor
/// Russian, the tokens that are its function words are dropped and each token left gets
/// its lexicon word in it (docs/analysis.md §4a). Every path to a query's terms (search,
/// explain, `Searcher::query_terms`, mentions) tokenises here.
pub(crate) fn analyse_query(analyzer: &Analyzer, query: &str, bufs: &mut QueryBuffers) {
    let QueryBuffers {
        tok,
        memo,
        qtoks,
        qweights,
        spans,
        issue_keys,
        idents,
        clauses,
        joined,
        lang,
        ..
    } = bufs;
    let mut signals = Signals::default();
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
    clauses.clear();
    joined.clear();
    analyzer.payload_spans(query, spans);
    analyzer.for_each_identifier(query, |ident| {
        let start = ident.as_ptr() as usize - query.as_ptr() as usize;
        let (a, b, facts) = match memo.map.get(ident) {
            Some(&range) => range,
            None => {
                let a = memo.toks.len();
                let QueryMemo { text, toks, .. } = &mut *memo;
                analyzer.identifier_words(ident, tok, &mut |w: &str| {
                    let word = (text.len(), text.len() + w.len());
                    text.push_str(w);
                    let stop = analyzer.language_stop_mask(w);
                    let function = is_function_word(w);
                    analyzer.stem_memo(w, &mut |t: &str| {
                        let start = text.len();
                        text.push_str(t);
                        let end = text.len();
                        let key = lexicon_key(w, t);
                        text.push_str(&key);
                        toks.push(MemoTok {
                            start,
                            end,
                            hash: str_hash(t),
                            key_start: end,
                            key_end: text.len(),
                            key_hash: str_hash(&key),
                            function,
                            vocab_of: NOT_LOOKED_UP,
                            vocab_id: None,
                            lex_of: NOT_LOOKED_UP,
                            lex_id: 0,
                            lex_lang: 0,
                            word,
                            stop,
                        });
                    });
                });
                let sig = analyzer.identifier_signals(ident, tok);
                let range = (a, memo.toks.len(), IdentFacts::of(analyzer, ident, sig));
                memo.key_bytes += ident.len();
                memo.map.insert(ident.into(), range);
                range
            }
        };
        let w = ident_weight(analyzer, spans, query, ident, start, &facts);
        // A marker word inside the payload is the message's, no ask of the request.
        let outside = !in_payload(spans, start);
        let (code, subject) = if outside {
            (facts.ask_code, facts.subject)
        } else {
            (0, false)
        };
        idents.push((qtoks.len(), issue_keys.len(), code, subject));
        if facts.issue_key {
            issue_keys.push(w);
        }
        if outside {
            signals.add(&facts.signals);
        }
        let end = start + ident.len();
        clauses.push((
            qtoks.len(),
            qtoks.len() + (b - a),
            outside,
            end,
            facts.particle,
        ));
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
    *lang = signals.language();
    if *lang == Lang::De {
        separable_joins(analyzer, query, memo, clauses, qtoks, joined);
    }
    if *lang != Lang::En {
        language_words(analyzer, *lang, memo, qtoks, qweights, joined);
    }
}

/// For a German request `query`, per token of `qtoks` in `joined`: the lexicon word of its
/// separable verb made whole again, if any. A clause runs from the identifier after the
/// last one that ended a clause to one that ends it ([`Analyzer::ends_clause`]); when that
/// one is a separable-verb particle outside the payload, each token of the clause's first
/// two identifiers outside the payload (where its verb stands: first in an imperative or a
/// question, second in a statement) gets the particle before its word ("trag den Termin
/// ein": `eintrag`, `einden`, not `eintermin`; the lexicon says which is a word). A later
/// word is a noun or an object, and its own meaning stays.
fn separable_joins(
    analyzer: &Analyzer,
    query: &str,
    memo: &mut QueryMemo,
    clauses: &[(usize, usize, bool, usize, u8)],
    qtoks: &[usize],
    joined: &mut Vec<Option<LangWord>>,
) {
    joined.clear();
    joined.resize(qtoks.len(), None);
    let mut first = 0;
    for (n, &(_, _, outside, end, particle)) in clauses.iter().enumerate() {
        if !analyzer.ends_clause(query, end) {
            continue;
        }
        if outside && particle != 0 {
            let p = SEPARABLE_PARTICLES[usize::from(particle - 1)];
            for &(a, b, out, _, _) in &clauses[first..n.min(first + 2)] {
                if !out {
                    continue;
                }
                for j in a..b {
                    let t = memo.toks[qtoks[j]];
                    let whole = format!("{p}{}", &memo.text[t.word.0..t.word.1]);
                    joined[j] = analyzer.lexicon_word(Lang::De, &whole).map(|w| {
                        let start = memo.text.len();
                        memo.text.push_str(&w);
                        let form = analyzer.lexicon_form(Lang::De, &whole);
                        (start, memo.text.len(), str_hash(&w), form)
                    });
                }
            }
        }
        first = n + 1;
    }
}

/// For a request in `lang`: drop the tokens that are its function words when it drops
/// them ([`Lang::drops_function_words`]), and make each token's lexicon words in the
/// languages it looks up ([`Lang::lookups`], [`Analyzer::lexicon_word`]) and its fallbacks
/// in `lang` ([`Analyzer::lexicon_fallbacks`]), once per token and language.
fn language_words(
    analyzer: &Analyzer,
    lang: Lang,
    memo: &mut QueryMemo,
    qtoks: &mut Vec<usize>,
    qweights: &mut Vec<f64>,
    joined: &mut Vec<Option<LangWord>>,
) {
    let drop = lang.drops_function_words();
    let mut kept = 0;
    for j in 0..qtoks.len() {
        let i = qtoks[j];
        let t = memo.toks[i];
        if drop && t.stop & lang.bit() != 0 {
            continue;
        }
        qtoks[kept] = i;
        qweights[kept] = qweights[j];
        if !joined.is_empty() {
            joined[kept] = joined[j];
        }
        kept += 1;
        for l in lang.lookups().iter().flatten() {
            let key = (i as u32, *l as u8);
            if memo.lang_words.contains_key(&key) {
                continue;
            }
            let token = &memo.text[t.word.0..t.word.1];
            let word = analyzer
                .lexicon_word(*l, token)
                .map(|w| (w, analyzer.lexicon_form(*l, token)));
            let made = word.map(|(w, form)| {
                let a = memo.text.len();
                memo.text.push_str(&w);
                (a, memo.text.len(), str_hash(&w), form)
            });
            memo.lang_words.insert(key, made);
        }
        let key = (i as u32, lang as u8);
        if matches!(lang, Lang::De | Lang::Es | Lang::Latin)
            && !memo.lang_fallbacks.contains_key(&key)
        {
            let words = analyzer.lexicon_fallbacks(lang, &memo.text[t.word.0..t.word.1]);
            let made = words
                .iter()
                .map(|(w, form)| {
                    let a = memo.text.len();
                    memo.text.push_str(w);
                    (a, memo.text.len(), str_hash(w), *form)
                })
                .collect();
            memo.lang_fallbacks.insert(key, made);
        }
    }
    qtoks.truncate(kept);
    qweights.truncate(kept);
    if !joined.is_empty() {
        joined.truncate(kept);
    }
}
