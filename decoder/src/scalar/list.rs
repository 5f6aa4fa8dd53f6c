//! [`ScalarClip`]: a scalar track list validated once, and what it says of itself.

use zerocopy::FromBytes;

use crate::error::{Error, Section};
use crate::format::bytes::{aligned_section, f32_at, u32_at};
use crate::format::clip::{read_header, validate_segments, SegmentShape};
use crate::format::{
    self, ClipHeader, Looping, ScalarDescription, FLAG_HAS_METADATA, FLAG_LOOP_WRAP, KIND_SCALAR_TRACKS, MAX_BONES,
    MAX_SAMPLES, MAX_SEGMENT_LEN, SCALAR_DESCRIPTION_SIZE, SCALAR_REMAP, SEGMENT_ENTRY_SIZE,
};
use crate::scalar::kind::ScalarType;
use crate::scalar::metadata::ScalarMetadata;
use crate::seek::Key;

/// A validated scalar track list borrowing the caller's bytes. Cheap to copy.
#[derive(Clone, Copy, Debug)]
pub struct ScalarClip<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) header: ClipHeader,
    pub(crate) track_type: ScalarType,
    pub(crate) track_count: u32,
    pub(crate) output_count: u32,
    /// Offsets of the constant and animated bit sets, and of the output indices when
    /// the tracks are remapped.
    sets: usize,
    remap: Option<usize>,
    pub(crate) animated_count: u32,
    frame_directory_len: u32,
    metadata: Option<ScalarMetadata<'a>>,
}

impl<'a> ScalarClip<'a> {
    /// Validates `bytes` (16-byte aligned) as a scalar track list, in time
    /// proportional to its metadata, or says what is wrong.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        let (header, bytes) = read_header(bytes)?;
        // Scalar track lists may wrap, and carry no root motion; metadata from 3.2.
        if header.kind != KIND_SCALAR_TRACKS {
            return Err(Error::UnsupportedKind(header.kind));
        }
        let flags = header.flags.get();
        let known = FLAG_LOOP_WRAP | FLAG_HAS_METADATA;
        if flags & !known != 0 {
            return Err(Error::UnknownFlags(flags & !known));
        }
        if header.additive != 0 {
            return Err(Error::UnsupportedAdditive(header.additive));
        }
        let (meta_offset, meta_size) = (header.metadata_offset.get(), header.metadata_size.get());
        let no_metadata = flags & FLAG_HAS_METADATA == 0;
        if header.raw_constants != 0 || (no_metadata && (meta_offset != 0 || meta_size != 0)) {
            return Err(Error::NonZeroReserved(Section::Header));
        }
        let (tracks, samples) = (header.bone_count.get(), header.sample_count.get());
        let (segment_len, segment_count) = (header.segment_len, header.segment_count.get());
        if tracks > MAX_BONES
            || samples == 0
            || samples > MAX_SAMPLES
            || segment_len == 0
            || segment_len > MAX_SEGMENT_LEN
            || segment_count != format::segment_count(samples, segment_len)
        {
            return Err(Error::BadCounts);
        }
        let rate = header.sample_rate.get();
        let looping = Looping::from_flags(flags);
        if !(rate.is_finite() && rate > 0.0 && format::duration(samples, rate, looping).is_finite()) {
            return Err(Error::BadSampleRate);
        }

        // Descriptions: type, options, output count, two bit sets, output indices.
        let set_len = format::bitset_len(tracks as usize);
        let remapped = {
            let head =
                aligned_section(bytes, header.tracks_offset.get(), SCALAR_DESCRIPTION_SIZE as u64, Section::Tracks)?;
            let d = ScalarDescription::read_from_bytes(head).map_err(|_| Error::OutOfBounds(Section::Tracks))?;
            if d.options & !SCALAR_REMAP != 0 || d.reserved.get() != 0 {
                return Err(Error::NonZeroReserved(Section::Tracks));
            }
            d
        };
        let track_type = ScalarType::from_byte(remapped.track_type).ok_or(Error::BadValue(Section::Tracks))?;
        let remap = remapped.options & SCALAR_REMAP != 0;
        let output_count = remapped.output_count.get();
        if (!remap && output_count != tracks) || output_count > MAX_BONES {
            return Err(Error::BadValue(Section::Tracks));
        }
        let len = format::scalar_description_len(tracks as usize, remap) as u64;
        let section = aligned_section(bytes, header.tracks_offset.get(), len, Section::Tracks)?;
        // Inside the section just checked: nothing wraps.
        let sets = (header.tracks_offset.get() as usize).saturating_add(SCALAR_DESCRIPTION_SIZE);
        let set = |i: usize| {
            let start = SCALAR_DESCRIPTION_SIZE.saturating_add(i.saturating_mul(set_len));
            section.get(start..start.saturating_add(set_len))
        };
        let (constant, animated) = (set(0).unwrap_or(&[]), set(1).unwrap_or(&[]));
        let tail = tracks % 8;
        for s in [constant, animated] {
            if tail != 0 && s.last().is_some_and(|&b| b >> tail != 0) {
                return Err(Error::NonZeroReserved(Section::Tracks));
            }
        }
        if constant.iter().zip(animated).any(|(a, b)| a & b != 0) {
            return Err(Error::BadValue(Section::Tracks));
        }
        let count = |s: &[u8]| s.iter().fold(0u32, |n, b| n.saturating_add(b.count_ones()));
        let (constant_count, animated_count) = (count(constant), count(animated));
        let remap_at = remap.then(|| sets.saturating_add(format::scalar_sets_len(tracks as usize)));
        if let Some(at) = remap_at {
            for t in 0..tracks as usize {
                if u32_at(bytes, at.saturating_add(t.saturating_mul(4))).is_none_or(|o| o >= output_count) {
                    return Err(Error::BadValue(Section::Tracks));
                }
            }
        }

        // At most 65,535 tracks of 4 components: no product below overflows.
        let c = track_type.components() as u64;
        let constants = aligned_section(
            bytes,
            header.constants_offset.get(),
            u64::from(constant_count).saturating_mul(c.saturating_mul(4)),
            Section::Constants,
        )?;
        if constants.chunks_exact(4).any(|v| !f32_at(v, 0).is_some_and(f32::is_finite)) {
            return Err(Error::BadValue(Section::Constants));
        }
        let range_len = c.saturating_mul(8) as usize;
        let ranges = aligned_section(
            bytes,
            header.ranges_offset.get(),
            u64::from(animated_count).saturating_mul(range_len as u64),
            Section::Ranges,
        )?;
        for range in ranges.chunks_exact(range_len) {
            let value = |i: usize| f32_at(range, i.saturating_mul(4)).unwrap_or(f32::NAN);
            let components = c as usize;
            let bad_min = (0..components).any(|i| !value(i).is_finite());
            let bad_extent =
                (components..components.saturating_mul(2)).any(|i| !value(i).is_finite() || value(i) < 0.0);
            if bad_min || bad_extent {
                return Err(Error::BadValue(Section::Ranges));
            }
        }
        let frame_directory_len = format::frame_directory_len(format::quad_count([animated_count as usize])) as u32;
        let ranged = if segment_count > 1 { u64::from(animated_count).saturating_mul(c.saturating_mul(2)) } else { 0 };
        let shape = SegmentShape {
            segments_offset: header.segments_offset.get(),
            segment_count,
            sample_count: samples,
            segment_len,
            animated_count,
            list_counts: [animated_count, 0, 0, 0],
            frame_directory_len,
            header_len: u64::from(frame_directory_len).saturating_add(u64::from(animated_count)).saturating_add(ranged),
            holes: false,
        };
        validate_segments(bytes, &shape, |_| c, &mut 0)?;
        let mut clip = ScalarClip {
            bytes,
            header,
            track_type,
            track_count: tracks,
            output_count,
            sets,
            remap: remap_at,
            animated_count,
            frame_directory_len,
            metadata: None,
        };
        if !no_metadata {
            let meta = aligned_section(bytes, meta_offset, u64::from(meta_size), Section::Metadata)?;
            clip.metadata = Some(ScalarMetadata::parse(meta, tracks, |t| clip.output_index(t).unwrap_or(u32::MAX))?);
        }
        Ok(clip)
    }

    /// The optional metadata (3.2): the list's name, and every source track's name,
    /// precision and output index.
    pub fn metadata(&self) -> Option<ScalarMetadata<'a>> {
        self.metadata
    }

    /// The type of every track.
    pub fn track_type(&self) -> ScalarType {
        self.track_type
    }
    /// Tracks stored (those the source did not strip).
    pub fn track_count(&self) -> u32 {
        self.track_count
    }
    /// Output slots: the slice [`crate::ScalarSampler::decompress_tracks`] fills holds this
    /// many tracks of [`ScalarType::components`] floats.
    pub fn output_count(&self) -> u32 {
        self.output_count
    }
    /// The output index of stored track `track` (below the track count).
    pub fn output_index(&self, track: u32) -> Option<u32> {
        if track >= self.track_count {
            return None;
        }
        match self.remap {
            Some(at) => u32_at(self.bytes, at.saturating_add((track as usize).saturating_mul(4))),
            None => Some(track),
        }
    }
    /// Stored samples.
    pub fn sample_count(&self) -> u32 {
        self.header.sample_count.get()
    }
    /// Samples per second.
    pub fn sample_rate(&self) -> f32 {
        self.header.sample_rate.get()
    }
    /// Clamp or wrap.
    pub fn looping(&self) -> Looping {
        Looping::from_flags(self.header.flags.get())
    }
    /// Duration in seconds, as for a transform clip.
    pub fn duration(&self) -> f32 {
        format::duration(self.sample_count(), self.sample_rate(), self.looping())
    }
    /// Source samples (one more than stored for a wrapping list).
    pub fn source_sample_count(&self) -> u32 {
        format::intervals(self.sample_count(), self.looping()).saturating_add(1)
    }
    /// Number of segments.
    pub fn segment_count(&self) -> u32 {
        self.header.segment_count.get()
    }
    /// Animated tracks.
    pub fn animated_tracks(&self) -> u32 {
        self.animated_count
    }
    /// Format version.
    pub fn version(&self) -> (u16, u16) {
        (self.header.version_major.get(), self.header.version_minor.get())
    }
    /// Total size in bytes.
    pub fn total_size(&self) -> u32 {
        self.header.total_size.get()
    }
    /// The stored checksum.
    pub fn checksum(&self) -> u32 {
        self.header.checksum.get()
    }

    /// Like [`ScalarClip::from_bytes`], and also verifies the checksum.
    pub fn from_bytes_verified(bytes: &'a [u8]) -> Result<Self, Error> {
        let clip = Self::from_bytes(bytes)?;
        let (stored, computed) = (clip.header.checksum.get(), format::checksum(clip.bytes));
        if stored != computed {
            return Err(Error::ChecksumMismatch { stored, computed });
        }
        Ok(clip)
    }

    /// Is track `t` in set `set` (0 constant, 1 animated)?
    pub(crate) fn in_set(&self, set: usize, t: usize) -> bool {
        let at = self.sets.saturating_add(set.saturating_mul(format::bitset_len(self.track_count as usize)));
        self.bytes.get(at.saturating_add(t >> 3)).is_some_and(|b| (b >> (t & 7)) & 1 == 1)
    }

    /// Where key frame `sample` is (as [`crate::Sampler`] finds it). Offsets lie in
    /// the validated buffer: the sums cannot overflow.
    pub(crate) fn key(&self, sample: u32) -> Key<'a> {
        let len = u32::from(self.header.segment_len);
        let segment = sample.checked_div(len).unwrap_or(0).min(self.segment_count().saturating_sub(1));
        let at = (self.header.segments_offset.get() as usize)
            .saturating_add((segment as usize).saturating_mul(SEGMENT_ENTRY_SIZE));
        let data = u32_at(self.bytes, at).unwrap_or(0) as usize;
        let frame_bits = u32_at(self.bytes, at.saturating_add(4)).unwrap_or(0);
        let local = sample.saturating_sub(segment.saturating_mul(len));
        let rates = data.saturating_add(self.frame_directory_len as usize);
        let segment_ranges = rates.saturating_add(self.animated_count as usize);
        let c = self.track_type.components() as u64;
        let ranged = if self.segment_count() > 1 {
            u64::from(self.animated_count).saturating_mul(c.saturating_mul(2))
        } else {
            0
        };
        let samples = (segment_ranges as u64).saturating_add(ranged);
        let frame_bit =
            samples.saturating_mul(8).saturating_add(u64::from(local).saturating_mul(u64::from(frame_bits)));
        Key { samples: self.bytes, directory: data, rates, segment_ranges, frame_bit }
    }
}
