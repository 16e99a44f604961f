//! Per thread, the vocabulary ids of one lexicon's targets in one index.

use crate::lexicon::Lexicon;

/// Per target of one lexicon ([`Lexicon::target_count`]), its id in one index's vocabulary
/// once looked up: a Russian request expands to a dozen English targets or more, and looking
/// each up by its text again for every request was a sizeable part of the request's cost.
/// A search of
/// another index or with another lexicon moves the stamp, which makes every slot unknown
/// without touching them (a thread alternating between registries pays no clearing).
#[derive(Debug, Default)]
pub(crate) struct TargetIds {
    /// The uids of the index and lexicon the table is for (an index's uid is never 0, so a
    /// new table is for none).
    index: u64,
    lexicon: u64,
    /// A slot is known when its stamp is this one.
    stamp: u32,
    /// Per target: (its stamp, its id or [`TargetIds::ABSENT`]).
    slots: Vec<(u32, u32)>,
}

impl TargetIds {
    /// Not in the vocabulary (whose ids are below `u32::MAX - 1`: the string table refuses
    /// more).
    pub(crate) const ABSENT: u32 = u32::MAX;

    /// The slots for `index`'s vocabulary and `lex`'s targets, and the stamp of the known.
    pub(crate) fn table(&mut self, index: u64, lex: &Lexicon) -> (&mut [(u32, u32)], u32) {
        let n = lex.target_count();
        if self.index != index || self.lexicon != lex.uid() || self.slots.len() != n {
            self.index = index;
            self.lexicon = lex.uid();
            self.stamp = self.stamp.wrapping_add(1);
            if self.stamp == 0 || self.slots.len() != n {
                // Another length, or the stamp come round: every slot unknown again.
                self.slots.clear();
                self.slots.resize(n, (0, 0));
                self.stamp = 1;
            }
        }
        (&mut self.slots, self.stamp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    /// A lexicon target's id is known for the index and lexicon it was looked up in only,
    /// also after the stamp comes round (every slot is then cleared, not taken as known).
    #[test]
    fn target_ids_are_known_only_for_their_index_and_lexicon() {
        let a = the_analyzer();
        let e = |x: &str, y: &str| (x.to_string(), y.to_string());
        let lex = Lexicon::new(&a, &[e("zeta", "gamma delta")]).unwrap();
        let other = Lexicon::new(&a, &[e("zeta", "gamma"), e("eta", "delta")]).unwrap();
        assert_eq!((lex.target_count(), other.target_count()), (2, 2));
        let mut t = TargetIds::default();
        let (slots, stamp) = t.table(7, &lex);
        assert!(slots.iter().all(|s| s.0 != stamp));
        slots[0] = (stamp, 3);
        let (slots, again) = t.table(7, &lex);
        assert_eq!((again, slots[0]), (stamp, (stamp, 3)));
        for (index, lexicon) in [(8, &lex), (7, &other), (7, &lex)] {
            let (slots, now) = t.table(index, lexicon);
            assert!(slots.iter().all(|s| s.0 != now), "{index}");
        }
        // A slot stamped long ago, and the stamp about to come round.
        t.slots[1] = (1, 9);
        t.stamp = u32::MAX;
        let (slots, now) = t.table(9, &lex);
        assert!(slots.iter().all(|s| s.0 != now));
    }
}
