//! Strings kept in one arena, and an interning table over them.
//!
//! [`Arena`] stores strings back to back in one `String` with their end offsets (4 bytes a
//! string instead of a 24-byte `String` and a heap block each). [`StrTable`] adds an
//! open-addressing hash table of ids for lookups by text; callers pass the hash
//! ([`str_hash`]) so that one token hashed once can be looked up in several tables.

use std::hash::BuildHasher;

use crate::error::Error;

/// The hash every [`StrTable`] uses.
#[inline]
pub(crate) fn str_hash(s: &str) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(s)
}

/// Strings back to back, addressed by index.
#[derive(Clone, Debug, Default)]
pub(crate) struct Arena {
    text: String,
    /// `ends[i]` is the end offset of string `i` (its start is `ends[i - 1]`, or 0).
    ends: Vec<u32>,
}

impl Arena {
    /// Number of strings.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether string `i` is `s` (bytes compared eight at a time: no call, no UTF-8
    /// boundary checks).
    #[inline]
    pub(crate) fn eq(&self, i: usize, s: &str) -> bool {
        let end = self.ends[i] as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        let (a, b) = (&self.text.as_bytes()[start..end], s.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let (mut ca, mut cb) = (a.chunks_exact(8), b.chunks_exact(8));
        for (x, y) in (&mut ca).zip(&mut cb) {
            if x != y {
                return false;
            }
        }
        ca.remainder()
            .iter()
            .zip(cb.remainder())
            .all(|(x, y)| x == y)
    }

    /// String `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> &str {
        let end = self.ends[i] as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..end]
    }

    /// Append a string; its index is the previous [`Arena::len`].
    pub(crate) fn push(&mut self, s: &str) -> Result<(), Error> {
        let end = u32::try_from(self.text.len() + s.len()).map_err(|_| Error::TextLimit)?;
        self.text.push_str(s);
        self.ends.push(end);
        Ok(())
    }

    /// Release spare capacity.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    /// Heap bytes.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.text.capacity() + self.ends.capacity() * 4
    }
}

/// Interned strings: ids in insertion order, lookups by text.
#[derive(Clone, Debug, Default)]
pub(crate) struct StrTable {
    strings: Arena,
    /// 0 for an empty slot, else `(mix << 32) | (id + 1)`, where `mix` is the top 32 bits
    /// of the string's hash times [`MIX`]; a power of two long, at most half full.
    slots: Vec<u64>,
    /// `64 - log2(slots.len())`: a string's home slot is the top bits of its `mix`, so that
    /// growing the table places each slot again from the slot alone (no string is read or
    /// hashed again, which was a sizeable part of a large build's lookups: see
    /// docs/performance.md, "Measurements behind the core's constants").
    shift: u32,
}

const ID_MASK: u64 = 0xFFFF_FFFF;
/// The multiplier that spreads a hash's bits into its top ones (Fibonacci hashing).
pub(crate) const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// The top 32 bits of `h` times [`MIX`], in the low half.
#[inline]
fn mix(h: u64) -> u64 {
    h.wrapping_mul(MIX) >> 32
}

impl StrTable {
    /// Number of strings.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.strings.len()
    }

    /// String `id`.
    #[inline]
    pub(crate) fn get(&self, id: usize) -> &str {
        self.strings.get(id)
    }

    /// The home slot of a string whose [`mix`] is `m`: its top bits (the table has at most
    /// 2^32 slots: ids are below 2^32 and it is at most half full).
    #[inline]
    fn home(&self, m: u64) -> usize {
        ((m << 32) >> self.shift) as usize
    }

    /// The id of `s` (whose [`str_hash`] is `h`), if interned.
    #[inline]
    pub(crate) fn find(&self, s: &str, h: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let frag = mix(h);
        let mut i = self.home(frag);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot >> 32 == frag {
                let id = (slot & ID_MASK) as usize - 1;
                if self.strings.eq(id, s) {
                    return Some(id as u32);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of `s` (whose [`str_hash`] is `h`), interning it if new; and whether it was.
    pub(crate) fn insert(&mut self, s: &str, h: u64) -> Result<(u32, bool), Error> {
        if let Some(id) = self.find(s, h) {
            return Ok((id, false));
        }
        let id = self.strings.len();
        if id >= (u32::MAX - 1) as usize {
            return Err(Error::Limit {
                what: "vocabulary size",
                n: id,
                limit: u64::from(u32::MAX - 1),
            });
        }
        if (id + 1) * 2 > self.slots.len() {
            self.grow();
        }
        self.strings.push(s)?;
        self.place(h, id);
        Ok((id as u32, true))
    }

    fn place(&mut self, h: u64, id: usize) {
        self.place_slot((mix(h) << 32) | (id as u64 + 1));
    }

    /// Put a slot's value at the first free slot from its home.
    fn place_slot(&mut self, slot: u64) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(slot >> 32);
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(16);
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        self.shift = 64 - size.trailing_zeros();
        for slot in old {
            if slot != 0 {
                self.place_slot(slot);
            }
        }
    }

    /// Release spare capacity of the strings.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.strings.shrink_to_fit();
    }

    /// Bytes of string text held.
    pub(crate) fn text_len(&self) -> usize {
        self.strings.text.len()
    }

    /// Forget every string, keeping the allocations.
    pub(crate) fn clear(&mut self) {
        self.strings.text.clear();
        self.strings.ends.clear();
        self.slots.iter_mut().for_each(|s| *s = 0);
    }

    /// Heap bytes.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.strings.memory_bytes() + self.slots.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interns_and_finds() {
        let mut t = StrTable::default();
        assert_eq!(t.find("a", str_hash("a")), None);
        let words: Vec<String> = (0..1000).map(|i| format!("w{i}")).collect();
        for (i, w) in words.iter().enumerate() {
            assert_eq!(t.insert(w, str_hash(w)).unwrap(), (i as u32, true));
        }
        assert_eq!(t.insert("", str_hash("")).unwrap(), (1000, true));
        for (i, w) in words.iter().enumerate() {
            assert_eq!(t.insert(w, str_hash(w)).unwrap(), (i as u32, false));
            assert_eq!(t.find(w, str_hash(w)), Some(i as u32));
            assert_eq!(t.get(i), w);
        }
        assert_eq!(t.find("", str_hash("")), Some(1000));
        assert_eq!(t.get(1000), "");
        assert_eq!(t.find("w1000", str_hash("w1000")), None);
        assert_eq!(t.len(), 1001);
        assert!(t.memory_bytes() > 0);
        t.clear();
        assert_eq!((t.len(), t.text_len()), (0, 0));
        assert_eq!(t.find("w1", str_hash("w1")), None);
        assert_eq!(t.insert("w1", str_hash("w1")).unwrap(), (0, true));
        let mut a = Arena::default();
        a.push("x").unwrap();
        a.push("").unwrap();
        a.push("yz").unwrap();
        assert_eq!((a.get(0), a.get(1), a.get(2), a.len()), ("x", "", "yz", 3));
    }
}
