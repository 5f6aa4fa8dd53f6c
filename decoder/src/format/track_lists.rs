//! The track descriptions: eight bone bit sets (constant and animated, for each of
//! the four [`TrackList`]s) and their rank directories, read in place.
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
    /// Offset of the rank directories inside the section.
    directory: usize,
}

impl<'a> TrackLists<'a> {
    /// Views the track-description section at `start` in `bytes` of a clip of `bones`
    /// bones. Bytes missing from the buffer read as zero bits (validation checks the
    /// section is there).
    pub(crate) fn new(bytes: &'a [u8], start: usize, bones: usize) -> Self {
        let set_len = format::bitset_len(bones);
        TrackLists { bytes, start, bones, set_len, directory: set_len.saturating_mul(BITSET_COUNT) }
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
        let start = self.at(index.saturating_mul(self.set_len));
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
        let at = self.at(index.wrapping_mul(self.set_len).wrapping_add(first));
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
        Bones { lists: self, index, word: 0, base: 0, next: 0, words: self.words() }
    }

    /// Calls `f` with each bone of bit set `index`, ascending, until it returns
    /// `false`: a word at a time, one bit scan per bone (a tighter loop than the
    /// [`Bones`] iterator where nothing else has to advance in step).
    #[inline(always)]
    pub(crate) fn for_each_bone(&self, index: usize, mut f: impl FnMut(usize) -> bool) {
        for w in 0..self.words() {
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
        let at = self.at(index.wrapping_mul(self.set_len).wrapping_add(bone >> 3));
        bone < self.bones && (self.bytes.get(at).copied().unwrap_or(0) >> (bone & 7)) & 1 != 0
    }

    /// The lists in which `bone` has an animated sub-track, bit `list as usize` for
    /// each (0 for a bone out of range): the four animated bit sets follow each
    /// other, one byte of each, so that a single-bone decode tests them once. The
    /// span from the first byte to the last is checked once, up front (cheaper than
    /// a check with a fallback per byte).
    #[inline(always)]
    pub(crate) fn animated_lists(&self, bone: usize) -> u8 {
        let first = self.at(format::bitset_index(true, TrackList::Rotation3).wrapping_mul(self.set_len));
        let first = first.wrapping_add(bone >> 3);
        let step = self.set_len;
        let last = step.wrapping_mul(3);
        let bytes = match self.bytes.get(first..).and_then(|b| b.get(..=last)) {
            Some(bytes) if bone < self.bones => bytes,
            _ => return 0,
        };
        let bit = |at: usize| (bytes.get(at).copied().unwrap_or(0) >> (bone & 7)) & 1;
        bit(0) | bit(step) << 1 | bit(step.wrapping_mul(2)) << 2 | bit(last) << 3
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
        let entries = format::rank_entries(self.bones);
        let at = self.directory.checked_add(index.checked_mul(entries)?.checked_add(entry)?.checked_mul(2)?)?;
        u16_at(self.bytes, self.at(at))
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

    /// The four animated bits of a bone, read with one bounds check, are each list's
    /// own bit ([`TrackLists::contains`]), for every bone of skeletons whose bit sets
    /// end inside a byte and on one; past the bones, and when the buffer stops before
    /// the last set's byte, they read as none (never out of bounds).
    #[test]
    fn animated_lists_are_each_lists_bit() {
        for bones in [1usize, 7, 8, 9, 44, 64, 130] {
            let len = bitset_len(bones);
            let start = 3;
            let all: [u8; 160] = core::array::from_fn(|i| (i as u8).wrapping_mul(0x9d).wrapping_add(0x35));
            let bytes = &all[..start + len * BITSET_COUNT];
            let lists = TrackLists::new(bytes, start, bones);
            for bone in 0..bones + 9 {
                let want = TrackList::ALL
                    .iter()
                    .enumerate()
                    .map(|(k, &list)| u8::from(lists.contains(bitset_index(true, list), bone)) << k)
                    .fold(0, |a, b| a | b);
                assert_eq!(lists.animated_lists(bone), want, "{bones} bones, bone {bone}");
            }
            // The buffer cut inside the last animated set: the bones whose byte is
            // gone read as in no list.
            let cut = &bytes[..bytes.len() - 1];
            let lists = TrackLists::new(cut, start, bones);
            for bone in (len - 1) * 8..bones {
                assert_eq!(lists.animated_lists(bone), 0, "{bones} bones, bone {bone}, cut");
            }
        }
    }
}
