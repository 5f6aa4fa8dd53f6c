//! The optional metadata section of a scalar track list (3.2): the list's name and,
//! for every track of the source in its order, its name, precision and output index,
//! the tracks the source left out of the compressed data ([`NO_OUTPUT`]) included.
//!
//! Like a transform clip's metadata it is not needed to sample; tools use it to write
//! the list back as it came in (`ossa decompress`).

use crate::error::Error;
use crate::format::bytes::{f32_at, str_at, u16_at, u32_at};
use crate::format::{MAX_BONES, NO_OUTPUT};

/// Size of one track record before its name: output index, precision, name length.
const TRACK_RECORD: usize = 4 + 4 + 2;

/// Validated view of a scalar list's metadata section.
#[derive(Clone, Copy, Debug)]
pub struct ScalarMetadata<'a> {
    bytes: &'a [u8],
    track_count: u32,
    list_name: &'a str,
    tracks_offset: usize,
}

/// What the metadata says about one track of the source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackInfo<'a> {
    /// The track's name (may be empty).
    pub name: &'a str,
    /// The largest error the encoder allowed on any of its components.
    pub precision: f32,
    /// Where the decoder writes the track; `None`: the source left it out (ACL's
    /// output index `0xFFFFFFFF`), and it is not stored.
    pub output_index: Option<u32>,
}

impl<'a> ScalarMetadata<'a> {
    /// Validates the section of a list whose stored track `t` (of `stored`) has output
    /// index `output_of(t)`: the source's tracks with an output are the stored ones,
    /// in the same order.
    pub(crate) fn parse(bytes: &'a [u8], stored: u32, output_of: impl Fn(u32) -> u32) -> Result<Self, Error> {
        let track_count = u32_at(bytes, 0).ok_or(Error::BadMetadata)?;
        let name_len = u32_at(bytes, 4).ok_or(Error::BadMetadata)? as usize;
        if track_count > MAX_BONES || track_count < stored {
            return Err(Error::BadMetadata);
        }
        let name_end = 8usize.checked_add(name_len).ok_or(Error::BadMetadata)?;
        let list_name = str_at(bytes, 8, name_end).ok_or(Error::BadMetadata)?;
        let meta = ScalarMetadata { bytes, track_count, list_name, tracks_offset: name_end };
        let (mut at, mut next_stored) = (name_end, 0u32);
        for _ in 0..track_count {
            let (track, next) = meta.track_at(at)?;
            if !(track.precision.is_finite() && track.precision > 0.0) {
                return Err(Error::BadMetadata);
            }
            if let Some(output) = track.output_index {
                if next_stored >= stored || output != output_of(next_stored) {
                    return Err(Error::BadMetadata);
                }
                next_stored = next_stored.saturating_add(1);
            }
            at = next;
        }
        // Every stored track named, and only zero padding after the last record.
        if next_stored != stored || bytes.get(at..).is_none_or(|rest| rest.len() >= 16 || rest.iter().any(|&b| b != 0))
        {
            return Err(Error::BadMetadata);
        }
        Ok(meta)
    }

    /// Reads the track record at `at`; returns it and the offset of the next one.
    fn track_at(&self, at: usize) -> Result<(TrackInfo<'a>, usize), Error> {
        let b = self.bytes;
        let output = u32_at(b, at).ok_or(Error::BadMetadata)?;
        let precision = f32_at(b, at.saturating_add(4)).ok_or(Error::BadMetadata)?;
        let name_len = u16_at(b, at.saturating_add(8)).ok_or(Error::BadMetadata)? as usize;
        let start = at.saturating_add(TRACK_RECORD);
        let end = start.saturating_add(name_len);
        let name = str_at(b, start, end).ok_or(Error::BadMetadata)?;
        Ok((TrackInfo { name, precision, output_index: (output != NO_OUTPUT).then_some(output) }, end))
    }

    /// The list's name.
    pub fn list_name(&self) -> &'a str {
        self.list_name
    }

    /// The number of tracks the source had, those left out included.
    pub fn track_count(&self) -> u32 {
        self.track_count
    }

    /// The source's tracks, in its order.
    pub fn tracks(&self) -> TrackIter<'a> {
        TrackIter { meta: *self, at: self.tracks_offset, remaining: self.track_count }
    }
}

/// Iterator over [`TrackInfo`] records.
#[derive(Clone, Debug)]
pub struct TrackIter<'a> {
    meta: ScalarMetadata<'a>,
    at: usize,
    remaining: u32,
}

impl<'a> Iterator for TrackIter<'a> {
    type Item = TrackInfo<'a>;
    fn next(&mut self) -> Option<TrackInfo<'a>> {
        if self.remaining == 0 {
            return None;
        }
        // Validated in `parse`, so this cannot fail; stop cleanly if it ever did.
        let (track, next) = self.meta.track_at(self.at).ok()?;
        self.at = next;
        self.remaining = self.remaining.saturating_sub(1);
        Some(track)
    }
}
