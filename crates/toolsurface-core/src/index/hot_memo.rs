//! The small set-associative cache in front of a build's identifier memo.

use crate::strtab::MIX;

/// Bytes of identifier a [`HotMemo`] entry holds inline (one more byte holds the length).
const HOT_KEY_BYTES: usize = 23;
/// Bounds of log2 of the [`HotMemo`]'s sets of two entries: 4,096 sets of 64 bytes (256 KiB,
/// within a core's L2) for a chunk of up to 4,096 documents, up to 16,384 sets (1 MiB) for
/// 8,192 and more. Its lines are read a field's identifiers at a time, their misses
/// overlapping, so that the larger table's higher hit rate pays for its fewer L2 hits
/// (measured: docs/performance.md, "Measurements behind the core's constants").
const HOT_BITS: (u32, u32) = (12, 14);

/// One inline identifier of a [`HotMemo`]: `(key, (a, b))`, the key's first byte is the
/// identifier's length (0: empty entry), then its bytes, zero padded; `a..b` is its range
/// of the memo's ids.
type HotEntry = ([u64; 3], (u32, u32));

/// Two entries in one cache line: the newest first.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct HotSet([HotEntry; 2]);

/// A small two-way set-associative cache in front of a build's identifier memo, for the
/// identifiers met most: their text inline (up to [`HOT_KEY_BYTES`] bytes), so that a hit
/// costs one cache line of a table that stays in cache instead of the memo's misses (its
/// slot, the arena's offsets and text, its range). On catalogue text a few thousand
/// identifiers make most of the occurrences; two ways, read in the
/// one line, keep two identifiers of the same set where a direct-mapped table kept one.
pub(crate) struct HotMemo {
    sets: Vec<HotSet>,
    /// `64 - log2(sets.len())`.
    shift: u32,
}

impl HotMemo {
    /// A cache sized for a chunk of `docs` documents (see [`HOT_BITS`]).
    pub(crate) fn new(docs: usize) -> HotMemo {
        let bits = docs
            .next_power_of_two()
            .trailing_zeros()
            .clamp(HOT_BITS.0, HOT_BITS.1);
        HotMemo {
            sets: vec![HotSet([([0; 3], (0, 0)); 2]); 1 << bits],
            shift: 64 - bits,
        }
    }

    /// The inline key of `s`, or `None` when it is too long to be held.
    #[inline]
    pub(crate) fn key(s: &str) -> Option<[u64; 3]> {
        let b = s.as_bytes();
        if b.len() > HOT_KEY_BYTES {
            return None;
        }
        let mut k = [0u8; 24];
        k[0] = b.len() as u8;
        k[1..=b.len()].copy_from_slice(b);
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&k[i * 8..i * 8 + 8]);
            u64::from_ne_bytes(w)
        };
        Some([word(0), word(1), word(2)])
    }

    /// The set of `key`: a hash of its three words (cheaper than hashing the text byte by
    /// byte, which is then needed only when the cache misses).
    #[inline]
    pub(crate) fn set(&self, key: &[u64; 3]) -> usize {
        let h = (key[0].wrapping_mul(MIX).rotate_left(26) ^ key[1]).wrapping_mul(MIX);
        let h = (h.rotate_left(26) ^ key[2]).wrapping_mul(MIX);
        (h >> self.shift) as usize
    }

    /// The range remembered for `key` (whose set is `set`), if it is in the cache.
    #[inline]
    pub(crate) fn get(&self, set: usize, key: &[u64; 3]) -> Option<(u32, u32)> {
        let [first, second] = &self.sets[set].0;
        if first.0 == *key {
            Some(first.1)
        } else if second.0 == *key {
            Some(second.1)
        } else {
            None
        }
    }

    /// A word of `set`, read to bring the set's line into cache.
    #[inline]
    pub(crate) fn touch(&self, set: usize) -> u64 {
        self.sets[set].0[0].0[0]
    }

    /// Remember `range` for `key` as its set's (`set`) newest entry; the set's oldest goes.
    #[inline]
    pub(crate) fn put(&mut self, set: usize, key: [u64; 3], range: (u32, u32)) {
        let set = &mut self.sets[set].0;
        set[1] = set[0];
        set[0] = (key, range);
    }

    /// Forget everything (the memo it stands in front of started over).
    pub(crate) fn clear(&mut self) {
        self.sets.fill(HotSet([([0; 3], (0, 0)); 2]));
    }
}
