//! [`Chunks`]: a batch of searches handed out a chunk of queries at a time, to any thread
//! that asks, so a consumer that must take the results in order (a binding converting them
//! under the interpreter's lock) can score a chunk itself whenever it has nothing to
//! convert, instead of waiting beside the pool's threads.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

use crate::error::Error;
use crate::index::core::Index;
use crate::index::filter::Filter;
use crate::lexicon::Lexicon;
use crate::scoring::bm25f::SatTable;
use crate::scoring::settings::Settings;
use crate::search::request::{Request, SearchResult};
use crate::search::rules::BoostRules;
use crate::search::scratch::with_scratch;
use crate::search::searcher::{search_in, search_ruled_in};

/// The searches of `queries`, `chunk` at a time: [`Chunks::take`] claims the next chunk
/// (from one counter, so chunks are claimed in order) and scores it on the calling thread.
/// Each query's result is [`Searcher::search_ruled`](crate::Searcher::search_ruled)'s
/// ranking (or, without rules, [`Searcher::search`](crate::Searcher::search)'s), the
/// factors left out.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use toolsurface_core::{Analyzer, CharTable, Chunks, Index, Settings};
///
/// let table =
///     CharTable::parse(include_str!("../../../../python/toolsurface/data/chars.tsv"))?;
/// let analyzer = Arc::new(Analyzer::new(table, ["the"]));
/// let doc = |name: &str, summary: &str| [name, "", summary, "", "", ""].map(String::from);
/// let fields = vec![doc("list_issues", "Lists issues."), doc("send_message", "Sends a message.")];
/// let names = fields.iter().map(|f| f[0].clone()).collect();
/// let index = Arc::new(Index::build(analyzer, names, fields)?);
/// let settings = Settings::new([3.0, 2.5, 2.0, 1.0, 0.4, 1.0], [0.5; 6], 1.2, 0.6);
/// let queries: Vec<String> = ["list issues", "send a message", "issues"].map(String::from).into();
///
/// let chunks = Chunks::new(Arc::clone(&index), queries.clone(), 2, 10, &settings, None, None, None)?;
/// assert_eq!(chunks.count(), 2);
/// let (first, results) = chunks.take().unwrap();
/// assert_eq!((first, results.iter().map(|r| r.docs[0]).collect::<Vec<_>>()), (0, vec![0, 1]));
///
/// // Or every chunk on the rayon pool, each handed to a consumer as it is done.
/// let got = Mutex::new(Vec::new());
/// Chunks::new(index, queries, 2, 10, &settings, None, None, None)?.run(|i, rs| {
///     got.lock().unwrap().push((i, rs.iter().map(|r| r.docs[0]).collect::<Vec<_>>()));
///     true
/// });
/// let mut got = got.into_inner().unwrap();
/// got.sort();
/// assert_eq!(got, vec![(0, vec![0, 1]), (1, vec![0])]);
/// # Ok::<(), toolsurface_core::Error>(())
/// ```
pub struct Chunks<Q> {
    index: Arc<Index>,
    queries: Vec<Q>,
    chunk: usize,
    count: usize,
    k: usize,
    settings: Settings,
    sat: Arc<SatTable>,
    lexicon: Option<Arc<Lexicon>>,
    allowed: Option<Arc<Filter>>,
    rules: Option<Arc<BoostRules>>,
    /// The next chunk to claim (past `count`: none is left).
    next: AtomicUsize,
    /// Set by [`Chunks::stop`]: no chunk is claimed after it.
    stopped: AtomicBool,
}

impl<Q: AsRef<str> + Sync> Chunks<Q> {
    /// The batch of `queries` over `index`, `chunk` queries a chunk (at least one), `k`
    /// hits each. It owns what it reads, so the threads that make its chunks may outlive
    /// the caller's frame. Invalid `settings`, or `rules` made for another index, are an
    /// error before any query is scored.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        index: Arc<Index>,
        queries: Vec<Q>,
        chunk: usize,
        k: usize,
        settings: &Settings,
        lexicon: Option<Arc<Lexicon>>,
        allowed: Option<Arc<Filter>>,
        rules: Option<Arc<BoostRules>>,
    ) -> Result<Self, Error> {
        settings.validate()?;
        if let Some(rules) = &rules {
            rules.check(&index)?;
        }
        let chunk = chunk.max(1);
        let count = queries.len().div_ceil(chunk);
        let sat = index.sat_table(settings);
        Ok(Chunks {
            index,
            queries,
            chunk,
            count,
            k,
            settings: *settings,
            sat,
            lexicon,
            allowed,
            rules,
            next: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
        })
    }

    /// How many chunks the batch has.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Claim the next chunk and score it here: its number and its queries' results, or
    /// `None` when every chunk is claimed or the batch was stopped.
    pub fn take(&self) -> Option<(usize, Vec<SearchResult>)> {
        if self.stopped.load(AtomicOrdering::Relaxed) {
            return None;
        }
        let i = self.next.fetch_add(1, AtomicOrdering::Relaxed);
        if i >= self.count {
            return None;
        }
        let part = &self.queries[i * self.chunk..((i + 1) * self.chunk).min(self.queries.len())];
        let req = Request::new(
            self.k,
            &self.settings,
            &self.sat,
            self.lexicon.as_deref(),
            self.allowed.as_deref(),
        );
        let index = &*self.index;
        let results = part
            .iter()
            .map(|q| {
                with_scratch(|sc| match self.rules.as_deref() {
                    Some(rules) => search_ruled_in(index, q.as_ref(), &req, rules, sc).0,
                    None => search_in(index, q.as_ref(), &req, &[], sc),
                })
            })
            .collect();
        Some((i, results))
    }

    /// Claim no more chunks (one being scored is finished).
    pub fn stop(&self) {
        self.stopped.store(true, AtomicOrdering::Relaxed);
    }

    /// Every chunk scored on the threads of the rayon pool and handed to `each` with its
    /// number as it is done (in about their order: they are claimed in order); `each`
    /// returning `false` stops the batch. A consumer that also scores (see the module's
    /// note) spawns its own workers that [`take`](Chunks::take) instead.
    pub fn run(&self, each: impl Fn(usize, Vec<SearchResult>) -> bool + Sync) {
        rayon::scope(|s| {
            for _ in 0..rayon::current_num_threads().min(self.count) {
                s.spawn(|_| {
                    while let Some((i, results)) = self.take() {
                        if !each(i, results) {
                            self.stop();
                        }
                    }
                });
            }
        });
    }
}
