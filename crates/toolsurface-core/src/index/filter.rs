//! The set of document ids a search may return, made from an index's ids.

use crate::error::{check_doc, Error};
use crate::index::core::Index;

/// The set of document ids a search may return (a bitset).
#[derive(Clone, Debug, Default)]
pub struct Filter {
    bits: Vec<u64>,
    count: usize,
}

impl Filter {
    /// Whether `doc` is admitted.
    #[inline]
    pub fn contains(&self, doc: usize) -> bool {
        self.bits
            .get(doc / 64)
            .is_some_and(|w| (w >> (doc % 64)) & 1 == 1)
    }

    /// Number of distinct admitted ids.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no id is admitted.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The ids both filters admit.
    pub fn and(&self, other: &Filter) -> Filter {
        let bits: Vec<u64> = self
            .bits
            .iter()
            .zip(&other.bits)
            .map(|(a, b)| a & b)
            .collect();
        let count = bits.iter().map(|w| w.count_ones() as usize).sum();
        Filter { bits, count }
    }

    /// Whether some id is admitted by both filters (no filter is made).
    pub fn intersects(&self, other: &Filter) -> bool {
        self.bits.iter().zip(&other.bits).any(|(a, b)| a & b != 0)
    }

    /// A filter over `n` documents admitting the ids of every list in `lists`; an id of
    /// `n` or more is left out (the caller checked them against its index).
    pub fn union_of<'a>(n: usize, lists: impl IntoIterator<Item = &'a [u32]>) -> Filter {
        let mut bits = vec![0u64; n.div_ceil(64)];
        let mut count = 0;
        for &d in lists.into_iter().flatten() {
            let d = d as usize;
            if d >= n {
                continue;
            }
            let (w, b) = (d / 64, d % 64);
            if (bits[w] >> b) & 1 == 0 {
                bits[w] |= 1 << b;
                count += 1;
            }
        }
        Filter { bits, count }
    }
}

impl Index {
    /// A filter admitting the given document ids; an id out of range is an error.
    pub fn make_filter(&self, ids: &[i64]) -> Result<Filter, Error> {
        let n = self.names.len();
        let mut bits = vec![0u64; n.div_ceil(64)];
        let mut count = 0;
        for &i in ids {
            let d = check_doc(i, n)?;
            let (w, b) = (d / 64, d % 64);
            if (bits[w] >> b) & 1 == 0 {
                bits[w] |= 1 << b;
                count += 1;
            }
        }
        Ok(Filter { bits, count })
    }
}
