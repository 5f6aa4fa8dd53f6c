//! The track descriptions: eight bone bit sets (constant and animated, for each of
//! the four [`TrackList`]s) and their rank directories, read in place.
//!
//! A bit set answers "is this bone's sub-track in this list" with one bit test, and
//! "how many earlier bones are" (its rank, which locates its data) with one directory
//! entry plus a popcount over at most [`RANK_BLOCK_BITS`] bits: constant time whatever
//! the bone index. Iterating a bit set visits only the bones in it, a 64-bit word at a
//! time, so a pose costs in proportion to the stored sub-tracks, not to every bone.

use crate::bytes::u16_at;
use crate::format::{self, TrackList, BITSET_COUNT, RANK_BLOCK_BITS};

/// A view over the track-description section of a validated clip.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TrackLists<'a> {
    section: &'a [u8],
    bones: usize,
    set_len: usize,
    directory: usize,
}

impl<'a> TrackLists<'a> {
    /// Views `section` (the whole track-description section) of a clip of `bones`
    /// bones. A short section reads as zero bits (validation checks its length).
    pub(crate) fn new(section: &'a [u8], bones: usize) -> Self {
        let set_len = format::bitset_len(bones);
        TrackLists { section, bones, set_len, directory: set_len.saturating_mul(BITSET_COUNT) }
    }

    /// The bytes of bit set `index` ([`format::bitset_index`]).
    #[inline]
    pub(crate) fn set(&self, index: usize) -> &'a [u8] {
        let start = index.saturating_mul(self.set_len);
        self.section.get(start..start.saturating_add(self.set_len)).unwrap_or(&[])
    }

    /// Is `bone` in bit set `index`?
    #[inline]
    pub(crate) fn contains(&self, index: usize, bone: usize) -> bool {
        (self.set(index).get(bone >> 3).copied().unwrap_or(0) >> (bone & 7)) & 1 != 0
    }

    /// The list holding the `animated` (or constant) sub-track of `kind` of `bone`.
    #[inline]
    pub(crate) fn list_of(&self, animated: bool, kind: format::SubTrackKind, bone: usize) -> Option<TrackList> {
        TrackList::of_kind(kind).iter().copied().find(|&list| self.contains(format::bitset_index(animated, list), bone))
    }

    /// Number of bones before `bone` in bit set `index`: one directory entry and a
    /// popcount of at most [`RANK_BLOCK_BITS`] bits.
    #[inline]
    pub(crate) fn rank(&self, index: usize, bone: usize) -> u32 {
        let block = bone / RANK_BLOCK_BITS;
        let before = match block.checked_sub(1) {
            None => 0,
            Some(entry) => u32::from(self.directory_entry(index, entry).unwrap_or(0)),
        };
        let set = self.set(index);
        let first = block.saturating_mul(RANK_BLOCK_BITS / 8);
        let whole = set.get(first..(bone >> 3).min(set.len())).unwrap_or(&[]);
        let partial = set.get(bone >> 3).map_or(0, |&b| (b & (1u8 << (bone & 7)).wrapping_sub(1)).count_ones());
        before.saturating_add(popcount(whole)).saturating_add(partial)
    }

    /// The bones of bit set `index`, ascending.
    #[inline]
    pub(crate) fn bones(&self, index: usize) -> Bones<'a> {
        Bones { words: self.set(index).chunks(8), word: 0, base: 0, next_base: 0 }
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
        u16_at(self.section, at)
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

/// Iterator over the set bits of a bit set, ascending, a 64-bit word at a time.
pub(crate) struct Bones<'a> {
    words: core::slice::Chunks<'a, u8>,
    word: u64,
    base: usize,
    next_base: usize,
}

impl Iterator for Bones<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.word == 0 {
            let chunk = self.words.next()?;
            let mut w = [0u8; 8];
            for (d, s) in w.iter_mut().zip(chunk) {
                *d = *s;
            }
            self.word = u64::from_le_bytes(w);
            self.base = self.next_base;
            self.next_base = self.next_base.wrapping_add(64);
        }
        let bit = self.word.trailing_zeros() as usize;
        // Clear the lowest set bit.
        self.word &= self.word.wrapping_sub(1);
        Some(self.base.wrapping_add(bit))
    }
}
