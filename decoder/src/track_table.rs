//! The track descriptions: a two-bit class per sub-track and a one-bit rotation
//! format per bone, read in place.

use crate::format::{self, SubTrackClass, SubTrackKind};

/// A view over the class table and the rotation-format table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TrackTable<'a> {
    classes: &'a [u8],
    formats: &'a [u8],
    bones: usize,
}

impl<'a> TrackTable<'a> {
    /// Splits the track-description section of a clip of `bones` bones. A short
    /// section reads as zero bits (validation has checked its length).
    pub(crate) fn new(section: &'a [u8], bones: usize) -> Self {
        let (classes, formats) = section.split_at(format::class_table_len(bones).min(section.len()));
        TrackTable { classes, formats, bones }
    }

    /// The raw two-bit class code (3 is invalid).
    #[inline]
    pub(crate) fn code(&self, kind: SubTrackKind, bone: usize) -> u8 {
        let index = format::class_index(kind, bone, self.bones);
        (self.classes.get(index / 4).copied().unwrap_or(0) >> ((index & 3) << 1)) & 3
    }

    /// The class; the invalid code reads as default (validation refuses it).
    #[inline]
    pub(crate) fn class(&self, kind: SubTrackKind, bone: usize) -> SubTrackClass {
        SubTrackClass::from_code(self.code(kind, bone)).unwrap_or(SubTrackClass::Default)
    }

    /// Does this bone's rotation store all four quaternion components?
    #[inline]
    pub(crate) fn full_quaternion(&self, bone: usize) -> bool {
        (self.formats.get(bone / 8).copied().unwrap_or(0) >> (bone & 7)) & 1 != 0
    }

    /// Components stored for a sub-track: 4 for a full-quaternion rotation, else 3.
    #[inline]
    pub(crate) fn components(&self, kind: SubTrackKind, bone: usize) -> u32 {
        if kind == SubTrackKind::Rotation && self.full_quaternion(bone) {
            4
        } else {
            3
        }
    }

    /// Component counts of the animated sub-tracks, in storage order.
    pub(crate) fn animated(&self) -> impl Iterator<Item = u32> + '_ {
        SubTrackKind::ALL.into_iter().flat_map(move |kind| {
            (0..self.bones)
                .filter(move |&bone| self.class(kind, bone) == SubTrackClass::Animated)
                .map(move |bone| self.components(kind, bone))
        })
    }

    /// Are padding bits after the last class or format bit set?
    pub(crate) fn padding_set(&self) -> bool {
        padding_bits_set(self.classes, self.bones.saturating_mul(6)) || padding_bits_set(self.formats, self.bones)
    }
}

fn padding_bits_set(table: &[u8], used_bits: usize) -> bool {
    if used_bits % 8 == 0 {
        return false;
    }
    let last = table.get(used_bits / 8).copied().unwrap_or(0);
    last >> (used_bits & 7) != 0
}
