//! The track descriptions: eight bone bit sets (constant and animated, for each of
//! the four [`TrackList`]s) and their rank directories, read in place.
//!
//! From 4.2 only the sets with a bone are stored (format::STORED_SETS_SHIFT); a set
//! left out reads as empty.
//!
//! A bit set answers "is this bone's sub-track in this list" with one bit test, and
//! "how many earlier bones are" (its rank, which locates its data) with one directory
//! entry plus a popcount over at most [`RANK_BLOCK_BITS`] bits: constant time whatever
//! the bone index. Iterating a bit set visits only the bones in it, a 64-bit word at a
//! time, so a pose costs in proportion to the stored sub-tracks, not to every bone.

use crate::format::bytes::u16_at;
use crate::format::{self, TrackList, BITSET_COUNT, RANK_BLOCK_BITS};

/// A view over the track-description section of a validated clip.
///
/// It keeps the whole clip buffer, not just the section, so that a 64-bit word of a
/// bit set is one 8-byte load even when the set is shorter: the bytes past the set
/// (the next set, the directories, the next section) are masked off.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TrackLists<'a> {
    /// The whole clip.
    bytes: &'a [u8],
    /// Offset of the section in `bytes`.
    start: usize,
    bones: usize,
    set_len: usize,
    /// Per bit set, the number of stored sets before it (its place is that many
    /// sets into the section), or [`NOT_STORED`]. Eight bytes, which the view's
    /// alignment leaves free: it is part of every sampler, whose size the C ABI fixes.
    slots: [u8; BITSET_COUNT],
}

/// [`TrackLists::slots`] of a set that is not stored (4.2).
const NOT_STORED: u8 = u8::MAX;

/// The offset of a set that is not stored: far past any buffer, yet far enough from
/// `usize::MAX` that adding a section start and a byte index cannot wrap.
const ABSENT: usize = usize::MAX >> 2;

impl<'a> TrackLists<'a> {
    /// Views the track-description section at `start` in `bytes` of a clip of `bones`
    /// bones. Bytes missing from the buffer read as zero bits (validation checks the
    /// section is there).
    pub(crate) fn new(bytes: &'a [u8], start: usize, bones: usize, stored: u8) -> Self {
        let mut slots = [NOT_STORED; BITSET_COUNT];
        let mut next = 0u8;
        for (s, slot) in slots.iter_mut().enumerate() {
            if stored >> s & 1 != 0 {
                *slot = next;
                next = next.wrapping_add(1);
            }
        }
        TrackLists { bytes, start, bones, set_len: format::bitset_len(bones), slots }
    }

    /// The number of stored sets before set `index`, or `None` when it is not stored.
    #[inline(always)]
    fn slot(&self, index: usize) -> Option<usize> {
        match self.slots.get(index).copied() {
            Some(NOT_STORED) | None => None,
            Some(slot) => Some(usize::from(slot)),
        }
    }

    /// Offset inside the section of bit set `index` ([`ABSENT`] when not stored).
    #[inline(always)]
    fn place(&self, index: usize) -> usize {
        match self.slots.get(index).copied().unwrap_or(NOT_STORED) {
            NOT_STORED => ABSENT,
            slot => usize::from(slot).wrapping_mul(self.set_len),
        }
    }

    /// Offset of the section in the clip.
    #[inline(always)]
    pub(crate) fn start(&self) -> usize {
        self.start
    }

    /// Offset in the clip of byte `at` of the section.
    #[inline(always)]
    fn at(&self, at: usize) -> usize {
        self.start.wrapping_add(at)
    }

    /// The bytes of bit set `index` ([`format::bitset_index`]).
    #[inline]
    pub(crate) fn set(&self, index: usize) -> &'a [u8] {
        let start = self.at(self.place(index));
        self.bytes.get(start..start.saturating_add(self.set_len)).unwrap_or(&[])
    }

    /// Number of 64-bit words of a bit set.
    #[inline(always)]
    pub(crate) fn words(&self) -> usize {
        self.set_len.div_ceil(8)
    }

    /// Word `word` of bit set `index`: bones `64·word …`, least significant bit first,
    /// bits past the set zero.
    #[inline(always)]
    pub(crate) fn word(&self, index: usize, word: usize) -> u64 {
        let first = word.wrapping_mul(8);
        let left = self.set_len.saturating_sub(first);
        let at = self.at(self.place(index).wrapping_add(first));
        let raw = match self.bytes.get(at..).and_then(|b| b.first_chunk::<8>()) {
            Some(b) => u64::from_le_bytes(*b),
            None => {
                let mut w = [0u8; 8];
                for (d, s) in w.iter_mut().zip(self.set(index).get(first..).unwrap_or(&[])) {
                    *d = *s;
                }
                u64::from_le_bytes(w)
            }
        };
        if left >= 8 {
            raw
        } else {
            raw & (1u64 << (left << 3)).wrapping_sub(1)
        }
    }

    /// The bones of bit set `index`, ascending: a word at a time, one bit scan per
    /// bone.
    #[inline(always)]
    pub(crate) fn bones(&self, index: usize) -> Bones<'_, 'a> {
        Bones { lists: self, index, word: 0, base: 0, next: 0, words: self.stored_words(index) }
    }

    /// [`TrackLists::words`] for a stored set, 0 for one that is not (4.2): iterating
    /// it then reads nothing.
    #[inline(always)]
    fn stored_words(&self, index: usize) -> usize {
        if self.slot(index).is_some() {
            self.words()
        } else {
            0
        }
    }

    /// Calls `f` with each bone of bit set `index`, ascending, until it returns
    /// `false`: a word at a time, one bit scan per bone (a tighter loop than the
    /// [`Bones`] iterator where nothing else has to advance in step).
    #[inline(always)]
    pub(crate) fn for_each_bone(&self, index: usize, mut f: impl FnMut(usize) -> bool) {
        for w in 0..self.stored_words(index) {
            let mut word = self.word(index, w);
            let base = w.wrapping_mul(64);
            while word != 0 {
                let bone = base.wrapping_add(word.trailing_zeros() as usize);
                word &= word.wrapping_sub(1);
                if !f(bone) {
                    return;
                }
            }
        }
    }

    /// Is `bone` in bit set `index`?
    #[inline(always)]
    pub(crate) fn contains(&self, index: usize, bone: usize) -> bool {
        let at = self.at(self.place(index).wrapping_add(bone >> 3));
        bone < self.bones && (self.bytes.get(at).copied().unwrap_or(0) >> (bone & 7)) & 1 != 0
    }

    /// The lists in which `bone` has an animated sub-track, bit `list as usize` for
    /// each (0 for a bone out of range): one bit test per animated set (a set not
    /// stored reads as empty).
    #[inline(always)]
    pub(crate) fn animated_lists(&self, bone: usize) -> u8 {
        let bit = |list: TrackList| u8::from(self.contains(format::bitset_index(true, list), bone));
        bit(TrackList::Rotation3)
            | bit(TrackList::Rotation4) << 1
            | bit(TrackList::Translation) << 2
            | bit(TrackList::Scale) << 3
    }

    /// The list holding the `animated` (or constant) sub-track of `kind` of `bone`.
    #[inline]
    pub(crate) fn list_of(&self, animated: bool, kind: format::SubTrackKind, bone: usize) -> Option<TrackList> {
        TrackList::of_kind(kind).iter().copied().find(|&list| self.contains(format::bitset_index(animated, list), bone))
    }

    /// Number of bones before `bone` in bit set `index`: one directory entry and the
    /// popcount of at most [`RANK_BLOCK_BITS`] / 64 words.
    #[inline(always)]
    pub(crate) fn rank(&self, index: usize, bone: usize) -> u32 {
        let block = bone / RANK_BLOCK_BITS;
        let mut rank = match block.checked_sub(1) {
            None => 0,
            Some(entry) => u32::from(self.directory_entry(index, entry).unwrap_or(0)),
        };
        let last = bone / 64;
        let mut w = block.wrapping_mul(RANK_BLOCK_BITS / 64);
        while w < last {
            rank = rank.wrapping_add(self.word(index, w).count_ones());
            w = w.wrapping_add(1);
        }
        let below = (1u64 << (bone & 63)).wrapping_sub(1);
        rank.wrapping_add((self.word(index, last) & below).count_ones())
    }

    /// Number of bones in the clip.
    pub(crate) fn bone_count(&self) -> usize {
        self.bones
    }

    /// The `u16` rank directory entry `entry` of bit set `index`: the bits set in
    /// blocks `0 ..= entry`.
    #[inline]
    pub(crate) fn directory_entry(&self, index: usize, entry: usize) -> Option<u16> {
        let stored = self.slots.iter().filter(|&&s| s != NOT_STORED).count();
        let entries = format::rank_entries(self.bones);
        let slot = self.slot(index)?;
        let directory = stored.checked_mul(self.set_len)?.checked_add(slot.checked_mul(entries)?.checked_mul(2)?)?;
        u16_at(self.bytes, self.at(directory.checked_add(entry.checked_mul(2)?)?))
    }
}

/// Set bits in `bytes`.
#[inline]
pub(crate) fn popcount(bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(8);
    let mut n = 0u32;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        n = n.wrapping_add(u64::from_le_bytes(w).count_ones());
    }
    chunks.remainder().iter().fold(n, |n, b| n.wrapping_add(b.count_ones()))
}

/// Iterator over the bones of a bit set, ascending.
pub(crate) struct Bones<'l, 'a> {
    lists: &'l TrackLists<'a>,
    index: usize,
    /// The bits of the current word not yet visited.
    word: u64,
    /// The bone of the current word's bit 0.
    base: usize,
    /// The next word to load, and the number of words.
    next: usize,
    words: usize,
}

impl Iterator for Bones<'_, '_> {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.word == 0 {
            if self.next >= self.words {
                return None;
            }
            self.word = self.lists.word(self.index, self.next);
            self.base = self.next.wrapping_mul(64);
            self.next = self.next.wrapping_add(1);
        }
        let bone = self.base.wrapping_add(self.word.trailing_zeros() as usize);
        // Clear the lowest set bit.
        self.word &= self.word.wrapping_sub(1);
        Some(bone)
    }
}

#[cfg(test)]
mod tests {
    use super::TrackLists;
    use crate::format::{bitset_index, bitset_len, TrackList, BITSET_COUNT};

    /// A section that stores only some sets (4.2) answers every question as the
    /// section with all eight, the others zero, does: membership, words, ranks with
    /// their directories, animated lists.
    #[test]
    fn stored_sets_read_as_all_eight_with_the_others_empty() {
        for bones in [5usize, 44, 300, 600] {
            let (len, entries) = (bitset_len(bones), crate::format::rank_entries(bones));
            for stored in [0xffu8, 0b0101_0101, 0b0010_0110, 0b1000_0000, 0] {
                // Sets: pseudo-random bits below the bone count where stored, else zero.
                let sets: [[u8; 80]; BITSET_COUNT] = core::array::from_fn(|s| {
                    core::array::from_fn(|i| {
                        let byte = (i as u8).wrapping_mul(0x9d).wrapping_add(0x35 ^ s as u8);
                        let keep = if (i + 1) * 8 <= bones { 0xff } else { (1u16 << (bones % 8)) as u8 - 1 };
                        if stored >> s & 1 == 1 && i < len {
                            byte & keep
                        } else {
                            0
                        }
                    })
                });
                let section = |only: u8| {
                    let mut out = [0u8; 1024];
                    let mut at = 0;
                    for s in (0..BITSET_COUNT).filter(|&s| only >> s & 1 == 1) {
                        out[at..at + len].copy_from_slice(&sets[s][..len]);
                        at += len;
                    }
                    for s in (0..BITSET_COUNT).filter(|&s| only >> s & 1 == 1) {
                        let mut before = 0u16;
                        for block in 0..=entries {
                            if block > 0 {
                                out[at..at + 2].copy_from_slice(&before.to_le_bytes());
                                at += 2;
                            }
                            let bytes = &sets[s][(block * 32).min(len)..((block + 1) * 32).min(len)];
                            before += bytes.iter().map(|b| b.count_ones() as u16).sum::<u16>();
                        }
                    }
                    out
                };
                let (full, sparse) = (section(0xff), section(stored));
                let (a, b) = (TrackLists::new(&full, 0, bones, 0xff), TrackLists::new(&sparse, 0, bones, stored));
                for s in 0..BITSET_COUNT {
                    for w in 0..a.words() {
                        assert_eq!(a.word(s, w), b.word(s, w), "{bones} bones, stored {stored:#x}, set {s}");
                    }
                    for bone in (0..bones + 3).step_by(7) {
                        assert_eq!(a.contains(s, bone), b.contains(s, bone));
                        if bone < bones {
                            assert_eq!(a.rank(s, bone), b.rank(s, bone), "{bones} bones, set {s}, bone {bone}");
                        }
                    }
                }
                for bone in 0..bones {
                    assert_eq!(a.animated_lists(bone), b.animated_lists(bone));
                }
            }
        }
    }

    /// The four animated bits of a bone are each list's own bit
    /// ([`TrackLists::contains`]), for every bone of skeletons whose bit sets end
    /// inside a byte and on one; past the bones they read as none, and when the
    /// buffer stops before the last set's byte, that set's bit reads as clear.
    #[test]
    fn animated_lists_are_each_lists_bit() {
        for bones in [1usize, 7, 8, 9, 44, 64, 130] {
            let len = bitset_len(bones);
            let start = 3;
            let all: [u8; 160] = core::array::from_fn(|i| (i as u8).wrapping_mul(0x9d).wrapping_add(0x35));
            let bytes = &all[..start + len * BITSET_COUNT];
            let lists = TrackLists::new(bytes, start, bones, 0xff);
            for bone in 0..bones + 9 {
                let want = TrackList::ALL
                    .iter()
                    .enumerate()
                    .map(|(k, &list)| u8::from(lists.contains(bitset_index(true, list), bone)) << k)
                    .fold(0, |a, b| a | b);
                assert_eq!(lists.animated_lists(bone), want, "{bones} bones, bone {bone}");
            }
            // The buffer cut inside the last animated set: the bones whose byte is
            // gone read as not in that list (never out of bounds), the others as
            // before.
            let cut = &bytes[..bytes.len() - 1];
            let cut_lists = TrackLists::new(cut, start, bones, 0xff);
            for bone in (len - 1) * 8..bones {
                let scale = 1u8 << TrackList::Scale as u8;
                assert_eq!(cut_lists.animated_lists(bone), lists.animated_lists(bone) & !scale, "{bones} bones, cut");
            }
        }
    }
}
