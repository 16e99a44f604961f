//! Function words (docs/analysis.md §4): the closed-class words the stopword lists keep,
//! question words, indefinite pronouns, the parts of contractions, modal verbs and
//! prepositions, in English and Russian. They stay terms of a request and weigh as any, but
//! a request whose only terms in the index are theirs (and their expansions') matches
//! nothing: "what's it?" or "когда?" answers as an empty request does, not with the tools
//! that happen to contain the word.

/// The function words, folded (`ё` written `е`), sorted by code point ([`is_function_word`]
/// searches them).
pub const FUNCTION_WORDS: [&str; 131] = [
    "although",
    "anybody",
    "anyone",
    "anything",
    "anywhere",
    "aren",
    "arent",
    "cannot",
    "cant",
    "couldn",
    "didn",
    "didnt",
    "doesn",
    "doesnt",
    "don",
    "dont",
    "either",
    "else",
    "ever",
    "everybody",
    "everyone",
    "everything",
    "everywhere",
    "hadn",
    "hasn",
    "haven",
    "hence",
    "heres",
    "however",
    "hows",
    "im",
    "isn",
    "isnt",
    "ive",
    "ll",
    "might",
    "must",
    "neither",
    "nobody",
    "nothing",
    "nowhere",
    "onto",
    "shall",
    "shouldn",
    "somebody",
    "someone",
    "something",
    "somewhere",
    "thats",
    "therefore",
    "theres",
    "theyre",
    "though",
    "thus",
    "unless",
    "upon",
    "ve",
    "wasn",
    "wasnt",
    "weren",
    "werent",
    "whatever",
    "whats",
    "whenever",
    "whens",
    "whereas",
    "wheres",
    "wherever",
    "whether",
    "whichever",
    "whoever",
    "whos",
    "whose",
    "whys",
    "within",
    "wouldn",
    "yet",
    "youre",
    "без",
    "будет",
    "будут",
    "есть",
    "затем",
    "зачем",
    "какая",
    "какие",
    "каким",
    "какими",
    "каких",
    "какое",
    "какой",
    "каком",
    "какую",
    "кем",
    "когда",
    "кое",
    "кому",
    "кроме",
    "куда",
    "либо",
    "между",
    "может",
    "можно",
    "над",
    "нечто",
    "никто",
    "ничего",
    "ничто",
    "около",
    "откуда",
    "перед",
    "под",
    "после",
    "потом",
    "почему",
    "сам",
    "сама",
    "сами",
    "само",
    "сколько",
    "среди",
    "такая",
    "такие",
    "такое",
    "такой",
    "тогда",
    "чей",
    "чему",
    "чье",
    "чьи",
    "чья",
];

/// Whether a folded word (before stemming) is one of [`FUNCTION_WORDS`].
pub fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.binary_search(&word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    #[test]
    fn the_list_is_sorted_distinct_and_searched() {
        assert!(FUNCTION_WORDS.windows(2).all(|w| w[0] < w[1]));
        for w in FUNCTION_WORDS {
            assert!(is_function_word(w), "{w}");
        }
        for w in ["list", "issue", "count", "задача", "what"] {
            assert!(!is_function_word(w), "{w}");
        }
    }

    /// A request whose only match is a function word finds nothing and has no content; with
    /// a word of content, the function word still weighs.
    #[test]
    fn function_words_alone_match_nothing() {
        let a = the_analyzer();
        let idx = Index::build(
            Arc::clone(&a),
            vec!["docs__whatever".to_string(), "team__members".to_string()],
            vec![
                doc("docs__whatever", "", "Anything and something.", "", ""),
                doc(
                    "team__members",
                    "",
                    "List members, whatever their role.",
                    "",
                    "",
                ),
            ],
        )
        .unwrap();
        let s = settings();
        let lex = Lexicon::new(&a, &[("сколько".to_string(), "members".to_string())]).unwrap();
        let search = Searcher::new(&idx);
        for q in ["whatever", "something anything?", "сколько", "когда"] {
            let r = search.search(q, 5, &s, Some(&lex), None).unwrap();
            assert!(r.docs.is_empty() && r.fallback, "{q}: {r:?}");
            assert!(!search.has_content(q, Some(&lex), 0.6), "{q}");
            assert!(!search.query_terms(q, Some(&lex), 0.6).is_empty(), "{q}");
        }
        let r = search
            .search("members whatever", 5, &s, Some(&lex), None)
            .unwrap();
        assert_eq!(r.docs[0], 1);
        assert!(!r.fallback && search.has_content("members whatever", None, 0.6));
        // A word of content that matches nothing: the fallback reads it, not the function word.
        let r = search.search("whatever membrs", 5, &s, None, None).unwrap();
        assert!(r.fallback && r.docs == [1], "{r:?}");
    }
}
