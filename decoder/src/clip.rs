//! [`Clip`]: a validated, borrowed view over an `.ossa` buffer.
//!
//! `Clip::from_bytes` checks everything once, in time proportional to the metadata
//! (header, track descriptions, segment headers), never to the samples. Everything the
//! sampler later indexes has then been proven to lie inside the buffer.

use zerocopy::FromBytes;

use crate::bytes::{aligned_section, f32_at, u32_at};
use crate::error::{Error, Section};
use crate::format::{
    self, ClipHeader, SegmentEntry, SubTrackClass, SubTrackKind, ADDITIVE_NONE, ALIGNMENT, BIT_READ_SLACK,
    FLAG_HAS_METADATA, HEADER_SIZE, KIND_TRANSFORMS, KNOWN_FLAGS, MAGIC, MAX_BONES, MAX_SAMPLES, MAX_SEGMENT_LEN,
    SEGMENT_ENTRY_SIZE, VERSION_MAJOR, VERSION_MINOR,
};
use crate::metadata::Metadata;
use crate::track_table::TrackTable;

/// A validated compressed clip borrowing the caller's bytes. Cheap to copy.
#[derive(Clone, Copy, Debug)]
pub struct Clip<'a> {
    /// The buffer, cut to its declared total size.
    pub(crate) bytes: &'a [u8],
    pub(crate) header: ClipHeader,
    pub(crate) bone_count: u32,
    pub(crate) sample_count: u32,
    pub(crate) sample_rate: f32,
    pub(crate) segment_count: u32,
    pub(crate) segment_len: u8,
    /// Sub-track classes and rotation formats.
    pub(crate) tracks: TrackTable<'a>,
    pub(crate) constants_offset: usize,
    pub(crate) ranges_offset: usize,
    pub(crate) segments_offset: usize,
    /// Number of animated sub-tracks.
    pub(crate) animated_count: u32,
    /// Number of components over all animated sub-tracks.
    pub(crate) animated_components: u32,
    pub(crate) metadata: Option<Metadata<'a>>,
}

/// Counts gathered while walking the track descriptions.
struct TrackCounts {
    constant_components: u64,
    animated_count: u32,
    animated_components: u32,
}

impl<'a> Clip<'a> {
    /// Validates `bytes` and returns a view over them, or says what is wrong.
    ///
    /// `bytes` must start on a 16-byte boundary and hold at least the size the header
    /// declares; bytes past it are ignored, so clips can be packed back to back. The
    /// content checksum is not verified here (it costs a pass over every byte); use
    /// [`Clip::from_bytes_verified`] for data from an untrusted store.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        if bytes.as_ptr() as usize % ALIGNMENT != 0 {
            return Err(Error::Misaligned);
        }
        let (header, _) = ClipHeader::read_from_prefix(bytes)
            .map_err(|_| Error::Truncated { needed: HEADER_SIZE as u64, available: bytes.len() as u64 })?;
        if header.magic != MAGIC {
            return Err(Error::BadMagic);
        }
        let (major, minor) = (header.version_major.get(), header.version_minor.get());
        if major != VERSION_MAJOR || minor > VERSION_MINOR {
            return Err(Error::UnsupportedVersion { major, minor });
        }
        let total = header.total_size.get();
        if (total as usize) < HEADER_SIZE || total as usize % ALIGNMENT != 0 {
            return Err(Error::BadTotalSize(total));
        }
        let bytes = bytes
            .get(..total as usize)
            .ok_or(Error::Truncated { needed: u64::from(total), available: bytes.len() as u64 })?;

        let flags = header.flags.get();
        if flags & !KNOWN_FLAGS != 0 {
            return Err(Error::UnknownFlags(flags & !KNOWN_FLAGS));
        }
        if header.kind != KIND_TRANSFORMS {
            return Err(Error::UnsupportedKind(header.kind));
        }
        if header.additive != ADDITIVE_NONE {
            return Err(Error::UnsupportedAdditive(header.additive));
        }
        if header.reserved0 != 0 {
            return Err(Error::NonZeroReserved(Section::Header));
        }
        let bone_count = header.bone_count.get();
        let sample_count = header.sample_count.get();
        let segment_len = header.segment_len;
        let segment_count = header.segment_count.get();
        if bone_count > MAX_BONES
            || sample_count == 0
            || sample_count > MAX_SAMPLES
            || segment_len == 0
            || segment_len > MAX_SEGMENT_LEN
            || segment_count != format::segment_count(sample_count, segment_len)
        {
            return Err(Error::BadCounts);
        }
        let sample_rate = header.sample_rate.get();
        // A rate so small that the clip's duration overflows `f32` (a subnormal rate,
        // say) would put every sample after the first at t = ∞: refused, so that every
        // sample time `i / sample_rate` a player computes is finite.
        let duration = format::duration(sample_count, sample_rate);
        if !(sample_rate.is_finite() && sample_rate > 0.0 && duration.is_finite()) {
            return Err(Error::BadSampleRate);
        }

        // Track descriptions: two-bit classes, then one-bit rotation formats.
        let bones = bone_count as usize;
        let class_len = format::class_table_len(bones);
        let format_len = format::rotation_format_table_len(bones);
        let tracks = aligned_section(
            bytes,
            header.tracks_offset.get(),
            class_len.saturating_add(format_len) as u64,
            Section::Tracks,
        )?;
        let tracks = TrackTable::new(tracks, bones);
        let counts = count_tracks(&tracks, bones)?;

        let constants = aligned_section(
            bytes,
            header.constants_offset.get(),
            counts.constant_components.saturating_mul(4),
            Section::Constants,
        )?;
        if constants.chunks_exact(4).any(|c| !f32_from(c).is_finite()) {
            return Err(Error::BadValue(Section::Constants));
        }

        let ranges = aligned_section(
            bytes,
            header.ranges_offset.get(),
            u64::from(counts.animated_components) * 8,
            Section::Ranges,
        )?;
        validate_ranges(ranges, &tracks)?;

        let mut clip = Clip {
            bytes,
            header,
            bone_count,
            sample_count,
            sample_rate,
            segment_count,
            segment_len,
            tracks,
            constants_offset: header.constants_offset.get() as usize,
            ranges_offset: header.ranges_offset.get() as usize,
            segments_offset: header.segments_offset.get() as usize,
            animated_count: counts.animated_count,
            animated_components: counts.animated_components,
            metadata: None,
        };
        clip.validate_segments()?;

        let (meta_offset, meta_size) = (header.metadata_offset.get(), header.metadata_size.get());
        if flags & FLAG_HAS_METADATA != 0 {
            let meta = aligned_section(bytes, meta_offset, u64::from(meta_size), Section::Metadata)?;
            clip.metadata = Some(Metadata::parse(meta, bone_count)?);
        } else if meta_offset != 0 || meta_size != 0 {
            return Err(Error::NonZeroReserved(Section::Header));
        }
        Ok(clip)
    }

    /// Like [`Clip::from_bytes`], and also verifies the content checksum, so that a
    /// corrupted buffer is reported as corrupted rather than decoded as garbage.
    pub fn from_bytes_verified(bytes: &'a [u8]) -> Result<Self, Error> {
        let clip = Self::from_bytes(bytes)?;
        let stored = clip.header.checksum.get();
        let computed = format::checksum(clip.bytes);
        if stored != computed {
            return Err(Error::ChecksumMismatch { stored, computed });
        }
        Ok(clip)
    }

    fn validate_segments(&self) -> Result<(), Error> {
        let table_len = u64::from(self.segment_count).saturating_mul(SEGMENT_ENTRY_SIZE as u64);
        let table = aligned_section(self.bytes, self.segments_offset as u32, table_len, Section::SegmentTable)?;
        for (index, raw) in table.chunks_exact(SEGMENT_ENTRY_SIZE).enumerate() {
            let index = index as u32;
            let entry = SegmentEntry::read_from_bytes(raw).map_err(|_| Error::OutOfBounds(Section::SegmentTable))?;
            let (_, samples) = format::segment_span(index, self.sample_count, self.segment_len);
            let full_mask = if samples >= 32 { u32::MAX } else { (1u32 << samples).wrapping_sub(1) };
            if entry.frames_present.get() != full_mask {
                return Err(Error::BadSegment(index));
            }
            let header_len = self.segment_header_len();
            let data = aligned_section(self.bytes, entry.data_offset.get(), header_len, Section::Segment(index))?;
            // Every bit rate must be valid and the frame size must match them.
            let mut frame_bits: u64 = 0;
            let mut animated = 0u32;
            for (components, &bits) in self.tracks.animated().zip(data) {
                if !format::is_valid_bit_rate(bits) {
                    return Err(Error::BadBitRate { segment: index, sub_track: animated, bits });
                }
                // At most 3 × 65,535 sub-tracks × 4 components × 32 bits: no overflow.
                frame_bits = frame_bits.saturating_add(u64::from(bits).saturating_mul(u64::from(components)));
                animated = animated.saturating_add(1);
            }
            if frame_bits != u64::from(entry.frame_bits.get()) {
                return Err(Error::BadSegment(index));
            }
            let sample_bytes = frame_bits.saturating_mul(u64::from(samples)).div_ceil(8);
            let end = u64::from(entry.data_offset.get())
                .saturating_add(header_len)
                .saturating_add(sample_bytes)
                .saturating_add(BIT_READ_SLACK as u64);
            if end > self.bytes.len() as u64 {
                return Err(Error::OutOfBounds(Section::Segment(index)));
            }
        }
        Ok(())
    }

    /// Bytes before a segment's samples: one bit rate per animated sub-track, then
    /// (with more than one segment) two range bytes per animated component.
    #[inline]
    pub(crate) fn segment_header_len(&self) -> u64 {
        let ranges = if self.segment_count > 1 { u64::from(self.animated_components).saturating_mul(2) } else { 0 };
        u64::from(self.animated_count).saturating_add(ranges)
    }

    /// The class of one sub-track (validated, so never the invalid code).
    #[inline]
    pub(crate) fn class(&self, kind: SubTrackKind, bone: usize) -> SubTrackClass {
        self.tracks.class(kind, bone)
    }

    /// Components stored for one sub-track: 4 for a full-quaternion rotation, else 3.
    #[inline]
    pub(crate) fn components(&self, kind: SubTrackKind, bone: usize) -> u32 {
        self.tracks.components(kind, bone)
    }

    /// The segment table entry of segment `index` (in range after validation).
    #[inline]
    pub(crate) fn segment(&self, index: u32) -> (usize, u32) {
        let at = (index as usize).saturating_mul(SEGMENT_ENTRY_SIZE).saturating_add(self.segments_offset);
        let offset = u32_at(self.bytes, at).unwrap_or(0) as usize;
        let frame_bits = u32_at(self.bytes, at.saturating_add(4)).unwrap_or(0);
        (offset, frame_bits)
    }

    /// Number of bones.
    pub fn bone_count(&self) -> u32 {
        self.bone_count
    }
    /// Number of samples of the original clip.
    pub fn sample_count(&self) -> u32 {
        self.sample_count
    }
    /// Samples per second.
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }
    /// Duration in seconds: `(sample_count - 1) / sample_rate` (0 for a static pose).
    pub fn duration(&self) -> f32 {
        format::duration(self.sample_count, self.sample_rate)
    }
    /// Number of segments.
    pub fn segment_count(&self) -> u32 {
        self.segment_count
    }
    /// Samples per segment (the last segment also takes the remainder).
    pub fn segment_len(&self) -> u8 {
        self.segment_len
    }
    /// Format version `(major, minor)`.
    pub fn version(&self) -> (u16, u16) {
        (self.header.version_major.get(), self.header.version_minor.get())
    }
    /// Header flags.
    pub fn flags(&self) -> u32 {
        self.header.flags.get()
    }
    /// The stored content checksum.
    pub fn checksum(&self) -> u32 {
        self.header.checksum.get()
    }
    /// Total size of the buffer in bytes.
    pub fn total_size(&self) -> u32 {
        self.header.total_size.get()
    }
    /// Number of animated sub-tracks.
    pub fn animated_sub_tracks(&self) -> u32 {
        self.animated_count
    }
    /// The class of the `kind` sub-track of `bone`, `None` past the bone count.
    pub fn sub_track_class(&self, kind: SubTrackKind, bone: u32) -> Option<SubTrackClass> {
        (bone < self.bone_count).then(|| self.class(kind, bone as usize))
    }
    /// Whether `bone`'s rotation stores all four quaternion components (rather than
    /// three with `w` rebuilt); `None` past the bone count.
    pub fn full_quaternion_rotation(&self, bone: u32) -> Option<bool> {
        (bone < self.bone_count).then(|| self.tracks.full_quaternion(bone as usize))
    }
    /// The optional metadata (names, parents, shell distances, bind pose).
    pub fn metadata(&self) -> Option<Metadata<'a>> {
        self.metadata
    }
    /// Byte counts of the parts of the buffer, for tools.
    pub fn layout(&self) -> Layout {
        let meta = self.header.metadata_size.get();
        // Saturating throughout: these are only reported sizes, of a validated buffer.
        let segment_table = self.segment_count.saturating_mul(SEGMENT_ENTRY_SIZE as u32);
        let segments_start = (self.segments_offset as u32).saturating_add(segment_table);
        let segments_end =
            if self.header.metadata_offset.get() != 0 { self.header.metadata_offset.get() } else { self.total_size() };
        let segment_headers = self.segment_count.saturating_mul(self.segment_header_len() as u32);
        Layout {
            header: HEADER_SIZE as u32,
            clip_metadata: (self.segments_offset as u32).saturating_sub(HEADER_SIZE as u32),
            segment_metadata: segment_table.saturating_add(segment_headers),
            samples: segments_end.saturating_sub(segments_start).saturating_sub(segment_headers),
            metadata: meta,
            total: self.total_size(),
        }
    }
}

/// Where a clip's bytes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The fixed header.
    pub header: u32,
    /// Track descriptions, constants and clip ranges (with alignment padding).
    pub clip_metadata: u32,
    /// Segment table, bit rates and segment ranges.
    pub segment_metadata: u32,
    /// Animated samples (with padding and slack).
    pub samples: u32,
    /// The optional metadata section (names, parents, bind pose).
    pub metadata: u32,
    /// Everything.
    pub total: u32,
}

fn f32_from(c: &[u8]) -> f32 {
    f32_at(c, 0).unwrap_or(f32::NAN)
}

/// Walks the class table: refuses invalid codes, non-zero padding bits and rotation
/// formats set on default rotations; counts stored components.
fn count_tracks(tracks: &TrackTable<'_>, bones: usize) -> Result<TrackCounts, Error> {
    let mut counts = TrackCounts { constant_components: 0, animated_count: 0, animated_components: 0 };
    for kind in SubTrackKind::ALL {
        for bone in 0..bones {
            let bad = Error::BadSubTrack { bone: bone as u32 };
            let class = SubTrackClass::from_code(tracks.code(kind, bone)).ok_or(bad)?;
            if kind == SubTrackKind::Rotation && tracks.full_quaternion(bone) && class == SubTrackClass::Default {
                return Err(bad);
            }
            // Bounded by 3 × 65,535 sub-tracks × 4 components: no overflow.
            let components = tracks.components(kind, bone);
            match class {
                SubTrackClass::Default => {}
                SubTrackClass::Constant => {
                    counts.constant_components = counts.constant_components.saturating_add(u64::from(components));
                }
                SubTrackClass::Animated => {
                    counts.animated_count = counts.animated_count.saturating_add(1);
                    counts.animated_components = counts.animated_components.saturating_add(components);
                }
            }
        }
    }
    if tracks.padding_set() {
        return Err(Error::NonZeroReserved(Section::Tracks));
    }
    Ok(counts)
}

/// Clip ranges: per animated sub-track, `components` minimums then `components`
/// extents, all finite, extents non-negative.
fn validate_ranges(ranges: &[u8], tracks: &TrackTable<'_>) -> Result<(), Error> {
    if ranges.chunks_exact(4).any(|c| !f32_from(c).is_finite()) {
        return Err(Error::BadValue(Section::Ranges));
    }
    let mut at = 0usize;
    for components in tracks.animated() {
        let components = components as usize;
        let extents = at.saturating_add(components.saturating_mul(4));
        for c in 0..components {
            let extent = f32_at(ranges, extents.saturating_add(c.saturating_mul(4))).unwrap_or(f32::NAN);
            if extent.is_nan() || extent < 0.0 {
                return Err(Error::BadValue(Section::Ranges));
            }
        }
        at = at.saturating_add(components.saturating_mul(8));
    }
    Ok(())
}
