//! The bounded cache of saturated-weight tables, one per scoring settings value.

use std::sync::{Arc, RwLock};

use crate::consts::SETTINGS_CACHE;
use crate::scoring::bm25f::SatTable;
use crate::scoring::settings::ScoringKey;

/// Bounded LRU of saturated-weight tables, keyed by the bits of the scoring settings.
///
/// A search with the most recently used settings (the usual case) takes only the read lock;
/// the write lock is for reordering and inserting.
#[derive(Debug, Default)]
pub(crate) struct SatCache {
    // Most recently used last.
    entries: RwLock<Vec<(ScoringKey, Arc<SatTable>)>>,
}

impl SatCache {
    pub(crate) fn get(&self, key: &ScoringKey) -> Option<Arc<SatTable>> {
        {
            let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
            match entries.last() {
                Some((k, table)) if k == key => return Some(Arc::clone(table)),
                _ => {}
            }
            if !entries.iter().any(|(k, _)| k == key) {
                return None;
            }
        }
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        // Another thread may have evicted it meanwhile.
        let pos = entries.iter().position(|(k, _)| k == key)?;
        let entry = entries.remove(pos);
        let table = Arc::clone(&entry.1);
        entries.push(entry);
        Some(table)
    }

    pub(crate) fn insert(&self, key: ScoringKey, table: Arc<SatTable>) -> Arc<SatTable> {
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        if let Some(pos) = entries.iter().position(|(k, _)| *k == key) {
            // Another thread computed it meanwhile: keep one copy.
            let entry = entries.remove(pos);
            let existing = Arc::clone(&entry.1);
            entries.push(entry);
            return existing;
        }
        entries.push((key, Arc::clone(&table)));
        while entries.len() > SETTINGS_CACHE {
            entries.remove(0);
        }
        table
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.read().unwrap_or_else(|e| e.into_inner()).len()
    }
}
