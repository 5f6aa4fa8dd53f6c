//! [`Clip`]: a validated, borrowed view over an `.ossa` buffer.
//!
//! `Clip::from_bytes` checks everything once, in time proportional to the metadata
//! (header, track descriptions, segment headers), never to the samples. Everything the
//! sampler later indexes has then been proven to lie inside the buffer.

use zerocopy::FromBytes;

use crate::error::{Error, Section};
use crate::format::additive::Additive;
use crate::format::bytes::{aligned_section, f32_at, u32_at};
use crate::format::database::PoseBone;
use crate::format::metadata::Metadata;
use crate::format::shared_pose::SharedPose;
use crate::format::track_lists::{popcount, TrackLists};
use crate::format::{
    self, ClipHeader, Looping, SegmentEntry, SubTrackClass, SubTrackKind, TrackList, ALIGNMENT, BITSET_COUNT,
    BIT_READ_SLACK, FLAG_HAS_METADATA, FRAME_BLOCK, GRID_SIZE, HEADER_SIZE, KIND_TRANSFORMS, MAGIC, MAX_BONES,
    MAX_SAMPLES, MAX_SEGMENT_LEN, QUAD_LANES, QUANTIZED_MAX, RANK_BLOCK_BITS, SEGMENT_ENTRY_SIZE, VERSION_MAJOR,
    VERSION_MINOR,
};
use crate::transform::Transform;

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
    /// `⌈2³² / segment_len⌉`: a sample's segment is `(sample · this) >> 32`, exact for
    /// every sample below [`MAX_SAMPLES`] (the error `sample / 2³²` stays below
    /// `1 / segment_len`), one multiplication where a division takes tens of cycles.
    pub(crate) segment_reciprocal: u64,
    /// The bone bit sets of the sub-track lists.
    pub(crate) lists: TrackLists<'a>,
    /// Start of the constants section (its grids, then the values).
    pub(crate) constants_offset: usize,
    /// Start of the clip-range values (after the section's grids): animated
    /// sub-track `i`'s `u16` minimums start `4 × P(i)` bytes after it.
    pub(crate) ranges_offset: usize,
    pub(crate) segments_offset: usize,
    /// Sub-tracks in each bit set ([`format::bitset_index`]).
    pub(crate) counts: [u32; BITSET_COUNT],
    /// Number of animated sub-tracks.
    pub(crate) animated_count: u32,
    /// Number of components over all animated sub-tracks.
    pub(crate) animated_components: u32,
    /// Bytes of each segment's frame directory.
    pub(crate) frame_directory_len: u32,
    /// Where each list's sub-tracks start ([`TrackList`] order), derived from the
    /// counts once at validation rather than per pose.
    pub(crate) starts: [ListStart; 4],
    pub(crate) metadata: Option<Metadata<'a>>,
    /// With [`format::FLAG_SHARED_POSE`], the values of its default sub-tracks, one
    /// per bone (validated: `bone_count` of them); empty otherwise (the identity).
    pub(crate) defaults: &'a [PoseBone],
    /// The static pose attached by [`Clip::with_static_pose`]: every bone's parts
    /// that do not change with time, finished (`bone_count` of them); empty when
    /// none is attached, and the poses decode those parts themselves.
    pub(crate) statics: &'a [Transform],
    /// The bone poses show in place ([`Clip::root_motion_in_place`]), `u32::MAX`
    /// when none: found at validation, so that a single bone's check is one
    /// comparison rather than a read of the root-motion block.
    pub(crate) in_place_bone: u32,
}

/// Where one list's data start, derived from the counts once at validation rather
/// than per pose.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ListStart {
    /// Buffer offset of the list's first constant.
    pub constant_at: u32,
    /// Buffer offset of the [`format::Grid`] of the list's quantised constants (0
    /// when it has none: a rotation list, a raw or an empty one).
    pub constant_grid: u32,
    /// Buffer offset of the [`format::Grid`] of the list's clip ranges (0 when it has
    /// none: a rotation list or one without animated sub-tracks).
    pub range_grid: u32,
    /// Index, among the animated sub-tracks, of its first animated one.
    pub animated_index: u32,
    /// Components stored by the animated sub-tracks before its first animated one.
    pub animated_components: u32,
    /// Quads (format-spec/segments.md) of the animated lists before it.
    pub quads_before: u32,
}

impl ListStart {
    /// The start of every list, from the sub-track counts of each bit set, the raw
    /// constant lists, the widths of packed constants (4.1: all zero without
    /// [`format::CONSTANT_WIDTHS`]) and the sections' offsets (at most 3 × 65,535
    /// sub-tracks of at most 4 components, in a buffer below 4 GiB: the sums fit in
    /// u32). Each section holds the grids of its quantised translation and scale
    /// lists, then the values; under [`format::CONSTANT_WIDTHS`] the constants
    /// section opens with the width table.
    fn all(
        counts: &[u32; BITSET_COUNT],
        raw_constants: u8,
        widths: [u8; 4],
        constants: u32,
        ranges: u32,
    ) -> [ListStart; 4] {
        let count =
            |animated: bool, list: TrackList| counts.get(format::bitset_index(animated, list)).copied().unwrap_or(0);
        let raw = |list: TrackList| raw_constants & (1 << list as u8) != 0;
        let grid_const = |list: TrackList| format::has_grid(list) && count(false, list) > 0 && !raw(list);
        let grid_range = |list: TrackList| format::has_grid(list) && count(true, list) > 0;
        let mut starts = [ListStart::default(); 4];
        let table = if raw_constants & format::CONSTANT_WIDTHS != 0 { format::CONSTANT_WIDTHS_SIZE as u32 } else { 0 };
        let (mut constant_grid, mut range_grid) = (constants.saturating_add(table), ranges);
        for (start, &list) in starts.iter_mut().zip(TrackList::ALL.iter()) {
            if grid_const(list) {
                start.constant_grid = constant_grid;
                constant_grid = constant_grid.saturating_add(GRID_SIZE as u32);
            }
            if grid_range(list) {
                start.range_grid = range_grid;
                range_grid = range_grid.saturating_add(GRID_SIZE as u32);
            }
        }
        let (mut constant_at, mut index, mut components, mut quads) = (constant_grid, 0u32, 0u32, 0u32);
        for ((start, &list), &width) in starts.iter_mut().zip(TrackList::ALL.iter()).zip(widths.iter()) {
            start.constant_at = constant_at;
            start.animated_index = index;
            start.animated_components = components;
            start.quads_before = quads;
            quads = quads.saturating_add(count(true, list).div_ceil(QUAD_LANES as u32));
            let size = constants_bytes(list, count(false, list), raw(list), width);
            constant_at = constant_at.saturating_add(u32::try_from(size).unwrap_or(u32::MAX));
            index = index.saturating_add(count(true, list));
            components = components.saturating_add(count(true, list).saturating_mul(list.components()));
        }
        starts
    }

    /// Bytes of the constants section (width table, grids, values), given the
    /// starts.
    fn constants_len(
        starts: &[ListStart; 4],
        counts: &[u32; BITSET_COUNT],
        raw_constants: u8,
        widths: [u8; 4],
        at: u32,
    ) -> u64 {
        let last = TrackList::Scale;
        let start = starts.get(last as usize).copied().unwrap_or_default();
        let n = counts.get(format::bitset_index(false, last)).copied().unwrap_or(0);
        let width = widths.get(last as usize).copied().unwrap_or(0);
        let values = constants_bytes(last, n, raw_constants & (1 << last as u8) != 0, width);
        u64::from(start.constant_at.saturating_sub(at)).saturating_add(values)
    }
}

impl<'a> Clip<'a> {
    /// Validates `bytes` and returns a view over them, or says what is wrong.
    ///
    /// `bytes` must start on a 16-byte boundary and hold at least the size the header
    /// declares; bytes past it are ignored, so clips can be packed back to back. The
    /// content checksum is not verified here (it costs a pass over every byte); use
    /// [`Clip::from_bytes_verified`] for data from an untrusted store.
    ///
    /// A clip whose default sub-tracks take their values from its database (flag
    /// SHARED_POSE) is refused with [`Error::NeedsSharedPose`]: open it with
    /// [`crate::Database::open_clip`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        let clip = Self::parse(bytes, &mut 0)?;
        if clip.needs_shared_pose() {
            return Err(Error::NeedsSharedPose);
        }
        Ok(clip)
    }

    /// Validates like [`Clip::from_bytes`], giving a clip with flag SHARED_POSE the
    /// values of its default sub-tracks: `pose` must have its bone count (a clip
    /// without the flag ignores it). [`crate::Database::open_clip`] finds the clip's pose
    /// in its database; this is for a runtime that keeps poses elsewhere.
    pub fn from_bytes_with_pose(bytes: &'a [u8], pose: SharedPose<'a>) -> Result<Self, Error> {
        Self::parse(bytes, &mut 0)?.with_pose(pose)
    }

    /// The clip with `pose` giving its default sub-tracks their values, when it has
    /// flag SHARED_POSE (checked: the bone counts agree); unchanged otherwise.
    pub(crate) fn with_pose(mut self, pose: SharedPose<'a>) -> Result<Self, Error> {
        if self.header.flags.get() & format::FLAG_SHARED_POSE != 0 {
            if pose.bone_count() != self.bone_count {
                return Err(Error::SharedPoseMismatch { pose_bones: pose.bone_count(), bone_count: self.bone_count });
            }
            self.defaults = pose.bones();
            // A static pose holds the defaults it was built with: not these.
            self.statics = &[];
        }
        Ok(self)
    }

    /// Validates `bytes` like [`Clip::from_bytes`], leaving a clip with flag
    /// SHARED_POSE without its pose ([`Clip::with_pose`] gives it).
    pub(crate) fn parse_without_pose(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, &mut 0)
    }

    /// Whether the clip's default values are in a shared pose it was not given.
    fn needs_shared_pose(&self) -> bool {
        self.header.flags.get() & format::FLAG_SHARED_POSE != 0 && self.defaults.len() != self.bone_count as usize
    }

    /// Whether the clip's default sub-tracks take their values from its database's
    /// shared pose (flag SHARED_POSE), and which pose.
    pub fn shared_pose_index(&self) -> Option<u32> {
        if self.header.flags.get() & format::FLAG_SHARED_POSE == 0 {
            return None;
        }
        self.database_reference_block().map(|r| r.shared_pose.get())
    }

    /// Bone `bone`'s default values: the identity (scale 0 in an additive1 clip), or
    /// the shared pose's.
    #[inline(always)]
    pub(crate) fn default_transform(&self, bone: usize) -> Transform {
        if self.defaults.is_empty() {
            if self.additive() == crate::format::additive::Additive::Additive1 {
                Transform { scale: glam::Vec3::ZERO, ..Transform::IDENTITY }
            } else {
                Transform::IDENTITY
            }
        } else {
            self.defaults.get(bone).map_or(Transform::IDENTITY, crate::format::shared_pose::transform_of)
        }
    }

    /// Validates like [`Clip::from_bytes`] and counts the steps validation took (one
    /// per byte of bit set, float of constants or ranges, segment, bit rate and
    /// metadata record): the test that validation is linear in the metadata reads it.
    #[doc(hidden)]
    pub fn validation_work(bytes: &'a [u8]) -> (Result<Self, Error>, u64) {
        let mut work = 0;
        let result = Self::parse(bytes, &mut work);
        (result, work)
    }

    /// Verifies the content checksum (as [`Clip::from_bytes_verified`] does), for a
    /// clip opened another way ([`crate::Database::open_clip`]).
    pub fn verify_checksum(&self) -> Result<(), Error> {
        let stored = self.header.checksum.get();
        let computed = format::checksum(self.bytes);
        if stored != computed {
            return Err(Error::ChecksumMismatch { stored, computed });
        }
        Ok(())
    }

    fn parse(bytes: &'a [u8], work: &mut u64) -> Result<Self, Error> {
        let (header, bytes) = read_header(bytes)?;

        let flags = header.flags.get();
        let minor = header.version_minor.get();
        // 4.2: bits 8 to 15 say which bit sets are stored.
        let known = format::KNOWN_FLAGS | if minor >= 2 { format::STORED_SETS_FLAGS } else { 0 };
        if flags & !known != 0 {
            return Err(Error::UnknownFlags(flags & !known));
        }
        let looping = Looping::from_flags(flags);
        if header.kind != KIND_TRANSFORMS {
            return Err(Error::UnsupportedKind(header.kind));
        }
        // Additive clips are 2.1: a 2.0 file must say "not additive".
        match Additive::from_byte(header.additive) {
            Some(_) => {}
            None => return Err(Error::UnsupportedAdditive(header.additive)),
        }
        // Bit 4 (packed constants) exists from 4.1 on; bits 5 to 7 are reserved.
        let known = if header.version_minor.get() >= 1 {
            format::RAW_CONSTANTS_MASK | format::CONSTANT_WIDTHS
        } else {
            format::RAW_CONSTANTS_MASK
        };
        if header.raw_constants & !known != 0 {
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
        let duration = format::duration(sample_count, sample_rate, looping);
        if !(sample_rate.is_finite() && sample_rate > 0.0 && duration.is_finite()) {
            return Err(Error::BadSampleRate);
        }

        // Track descriptions: the stored bone bit sets (all eight before 4.2), then
        // their rank directories.
        let bones = bone_count as usize;
        let stored = format::stored_sets(flags, minor);
        // Checked in bounds and aligned; the view reads the section in place.
        let tracks_len = format::track_section_len(bones, stored) as u64;
        aligned_section(bytes, header.tracks_offset.get(), tracks_len, Section::Tracks)?;
        let lists = TrackLists::new(bytes, header.tracks_offset.get() as usize, bones, stored);
        let counts = validate_lists(&lists, work)?;
        let count = |animated: bool, list: TrackList| {
            u64::from(counts.get(format::bitset_index(animated, list)).copied().unwrap_or(0))
        };
        let components = |animated: bool| -> u64 {
            TrackList::ALL.iter().map(|&l| count(animated, l).saturating_mul(u64::from(l.components()))).sum()
        };

        // Constants and clip ranges: the grids of quantised translation and scale
        // lists, then the values (3.0).
        let raw_constants = header.raw_constants;
        let (constants_offset, ranges_offset) = (header.constants_offset.get(), header.ranges_offset.get());
        let widths = constant_widths(bytes, raw_constants, constants_offset, &counts)?;
        let starts = ListStart::all(&counts, raw_constants, widths, constants_offset, ranges_offset);
        let constants_len = ListStart::constants_len(&starts, &counts, raw_constants, widths, constants_offset);
        let constants = aligned_section(bytes, constants_offset, constants_len, Section::Constants)?;
        *work = work.saturating_add(constants.len() as u64 / 4);
        for list in TrackList::ALL {
            let start = starts.get(list as usize).copied().unwrap_or_default();
            // A packed list's integers reach `2^w − 1`, which may exceed 65535.
            let width = u32::from(widths.get(list as usize).copied().unwrap_or(0));
            let top = QUANTIZED_MAX.max((1u32 << (width & 31)).wrapping_sub(1));
            if start.constant_grid != 0 && !valid_grid(bytes, start.constant_grid, top) {
                return Err(Error::BadValue(Section::Constants));
            }
            if raw_constants & (1 << list as u8) != 0 {
                let len = count(false, list).saturating_mul(u64::from(list.components()).saturating_mul(4));
                let values = bytes.get(start.constant_at as usize..).and_then(|b| b.get(..len as usize)).unwrap_or(&[]);
                if values.chunks_exact(4).any(|c| !f32_from(c).is_finite()) {
                    return Err(Error::BadValue(Section::Constants));
                }
            }
        }

        // At most 3 × 65,535 sub-tracks of at most 4 components: these fit in u32.
        let animated_count = TrackList::ALL.iter().map(|&l| count(true, l)).sum::<u64>() as u32;
        let animated_components = components(true) as u32;
        let range_grids = (starts.iter().filter(|s| s.range_grid != 0).count() as u64).saturating_mul(GRID_SIZE as u64);
        let ranges_len = range_grids.saturating_add(components(true).saturating_mul(4));
        let ranges = aligned_section(bytes, ranges_offset, ranges_len, Section::Ranges)?;
        *work = work.saturating_add(ranges.len() as u64 / 4);
        if starts.iter().any(|s| s.range_grid != 0 && !valid_grid(bytes, s.range_grid, QUANTIZED_MAX)) {
            return Err(Error::BadValue(Section::Ranges));
        }

        let mut clip = Clip {
            bytes,
            header,
            bone_count,
            sample_count,
            sample_rate,
            segment_count,
            segment_len,
            segment_reciprocal: (1u64 << 32).div_ceil(u64::from(segment_len)),
            lists,
            constants_offset: constants_offset as usize,
            ranges_offset: (ranges_offset as u64).saturating_add(range_grids) as usize,
            segments_offset: header.segments_offset.get() as usize,
            counts,
            animated_count,
            animated_components,
            frame_directory_len: format::frame_directory_len(format::quad_count(
                TrackList::ALL.iter().map(|&l| count(true, l) as usize),
            )) as u32,
            starts,
            metadata: None,
            defaults: &[],
            statics: &[],
            in_place_bone: u32::MAX,
        };
        clip.validate_segments(work)?;

        if flags & format::FLAG_ROOT_MOTION != 0 {
            *work = work.saturating_add(1);
            validate_root_motion(bytes, bone_count, looping)?;
            clip.in_place_bone = clip.in_place().map_or(u32::MAX, |(bone, _)| bone as u32);
        }
        if flags & format::FLAG_DATABASE != 0 {
            *work = work.saturating_add(1);
            let reference = clip.database_reference_block().ok_or(Error::OutOfBounds(Section::ClipReference))?;
            if flags & format::FLAG_SHARED_POSE == 0 && reference.shared_pose.get() != 0 {
                return Err(Error::NonZeroReserved(Section::ClipReference));
            }
        } else if flags & format::FLAG_SHARED_POSE != 0 {
            // A shared pose is named by the database reference.
            return Err(Error::BadValue(Section::Header));
        }

        let (meta_offset, meta_size) = (header.metadata_offset.get(), header.metadata_size.get());
        if flags & FLAG_HAS_METADATA != 0 {
            let meta = aligned_section(bytes, meta_offset, u64::from(meta_size), Section::Metadata)?;
            *work = work.saturating_add(u64::from(bone_count));
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
        clip.verify_checksum()?;
        Ok(clip)
    }

    /// Checks the segment table and every segment's header (see [`validate_segments`]).
    fn validate_segments(&self, work: &mut u64) -> Result<(), Error> {
        let (rot4_start, rot4_end) = self.rotation4_span();
        let shape = SegmentShape {
            segments_offset: self.segments_offset as u32,
            segment_count: self.segment_count,
            sample_count: self.sample_count,
            segment_len: self.segment_len,
            animated_count: self.animated_count,
            list_counts: TrackList::ALL.map(|l| self.count(true, l)),
            frame_directory_len: self.frame_directory_len,
            header_len: self.segment_header_len(),
            holes: true,
        };
        validate_segments(
            self.bytes,
            &shape,
            |i| if (rot4_start..rot4_end).contains(&(i as u32)) { 4 } else { 3 },
            work,
        )
    }

    /// Bytes before a segment's samples: the frame directory, one bit rate per
    /// animated sub-track, then (with more than one segment) two range bytes per
    /// animated component.
    #[inline]
    pub(crate) fn segment_header_len(&self) -> u64 {
        let ranges = if self.segment_count > 1 { u64::from(self.animated_components).saturating_mul(2) } else { 0 };
        u64::from(self.frame_directory_len).saturating_add(u64::from(self.animated_count)).saturating_add(ranges)
    }

    /// Sub-tracks in the constant (or animated) bit set of `list`.
    #[inline]
    pub(crate) fn count(&self, animated: bool, list: TrackList) -> u32 {
        self.counts.get(format::bitset_index(animated, list)).copied().unwrap_or(0)
    }

    /// Indices `[start, end)`, among the animated sub-tracks, of the rotations stored
    /// with four components (the only list whose component count is not 3).
    #[inline]
    pub(crate) fn rotation4_span(&self) -> (u32, u32) {
        let start = self.count(true, TrackList::Rotation3);
        (start, start.saturating_add(self.count(true, TrackList::Rotation4)))
    }

    /// Components stored by the animated sub-tracks before animated sub-track `index`.
    #[inline]
    pub(crate) fn animated_components_before(&self, index: u32) -> u32 {
        let (start, end) = self.rotation4_span();
        // Bounded by 3 × 65,535 × 4: no overflow.
        index.saturating_mul(3).saturating_add(index.clamp(start, end).saturating_sub(start))
    }

    /// Quads (format-spec/segments.md) of the animated lists before `list`.
    #[inline]
    pub(crate) fn quads_before(&self, list: TrackList) -> u32 {
        self.start(list).quads_before
    }

    /// Index among the animated sub-tracks of the first of quad `quad` (the animated
    /// count past the last quad).
    #[inline]
    pub(crate) fn quad_first(&self, quad: u32) -> u32 {
        if quad == 0 {
            // The first quad of the first list that has one, or the count: 0 either way.
            return 0;
        }
        let mut left = quad;
        for list in TrackList::ALL {
            let quads = self.count(true, list).div_ceil(QUAD_LANES as u32);
            if left < quads {
                return self.animated_start(list).saturating_add(left.saturating_mul(QUAD_LANES as u32));
            }
            left = left.saturating_sub(quads);
        }
        self.animated_count
    }

    /// Where `list`'s sub-tracks start.
    #[inline]
    pub(crate) fn start(&self, list: TrackList) -> ListStart {
        self.starts.get(list as usize).copied().unwrap_or_default()
    }

    /// Index among the animated sub-tracks of the first one of `list`.
    #[inline]
    pub(crate) fn animated_start(&self, list: TrackList) -> u32 {
        self.start(list).animated_index
    }

    /// Bytes of the constants section: its width table (4.1), grids, then every
    /// list's values.
    pub(crate) fn constants_len(&self) -> u64 {
        let widths = TrackList::ALL.map(|list| self.constant_width(list));
        ListStart::constants_len(
            &self.starts,
            &self.counts,
            self.header.raw_constants,
            widths,
            self.constants_offset as u32,
        )
    }

    /// (4.1) Bits of each of `list`'s packed constant integers, from the section's
    /// width table (validated); 0 when the list's constants are raw, absent, or 16-bit
    /// words (a 4.0 layout). Read from the buffer rather than kept: one byte load, on
    /// paths that decode constants, where a field would grow every sampler.
    #[inline]
    pub(crate) fn constant_width(&self, list: TrackList) -> u8 {
        if self.header.raw_constants & format::CONSTANT_WIDTHS == 0 {
            return 0;
        }
        let at = self.constants_offset.wrapping_add(list as usize >> 1);
        let code = self.bytes.get(at).copied().unwrap_or(0) >> ((list as u8 & 1) << 2);
        (code & 15) << 1
    }

    /// Are `list`'s constants stored as raw `f32` (rather than quantised)?
    #[inline]
    pub(crate) fn raw_constants(&self, list: TrackList) -> bool {
        self.header.raw_constants & (1 << list as u8) != 0
    }

    /// The class and list of the `kind` sub-track of `bone`.
    #[inline]
    pub(crate) fn locate(&self, kind: SubTrackKind, bone: usize) -> (SubTrackClass, Option<TrackList>) {
        if let Some(list) = self.lists.list_of(true, kind, bone) {
            (SubTrackClass::Animated, Some(list))
        } else if let Some(list) = self.lists.list_of(false, kind, bone) {
            (SubTrackClass::Constant, Some(list))
        } else {
            (SubTrackClass::Default, None)
        }
    }

    /// The segment holding sample `sample` (below the sample count; validation
    /// guarantees a segment length of at least 1 and at least one segment).
    #[inline]
    pub(crate) fn segment_of(&self, sample: u32) -> u32 {
        // Samples are below MAX_SAMPLES after validation: the product fits in 64 bits.
        let segment = (u64::from(sample).wrapping_mul(self.segment_reciprocal) >> 32) as u32;
        segment.min(self.segment_count.saturating_sub(1))
    }

    /// The segment table entry of segment `index` (in range after validation): data
    /// offset, bits per key frame, key frames present.
    #[inline]
    pub(crate) fn segment(&self, index: u32) -> (usize, u32, u32) {
        let at = (index as usize).saturating_mul(SEGMENT_ENTRY_SIZE).saturating_add(self.segments_offset);
        // One bounds check for the three words.
        let entry = self.bytes.get(at..).and_then(|b| b.first_chunk::<12>()).copied().unwrap_or([0; 12]);
        let [o0, o1, o2, o3, f0, f1, f2, f3, p0, p1, p2, p3] = entry;
        let offset = u32::from_le_bytes([o0, o1, o2, o3]) as usize;
        (offset, u32::from_le_bytes([f0, f1, f2, f3]), u32::from_le_bytes([p0, p1, p2, p3]))
    }

    /// Number of bones.
    pub fn bone_count(&self) -> u32 {
        self.bone_count
    }

    /// How many [`crate::QuadPlan`]s a kept pose's plan needs for this clip
    /// ([`crate::KeptPose::with_plan`]): its animated sub-tracks in groups of four,
    /// list by list.
    pub fn quad_count(&self) -> usize {
        crate::pose::kept_plan::quad_count(self)
    }
    /// Number of stored samples (key frames). A clamped clip stores every sample of
    /// its source; a wrapping one all but the last, which repeated the first.
    pub fn sample_count(&self) -> u32 {
        self.sample_count
    }
    /// Number of samples of the source clip: [`Clip::sample_count`], plus one for a
    /// wrapping loop (the repeated first sample at the duration). Decoding at
    /// `i / sample_rate` for every `i` below it reproduces the source sample by sample.
    pub fn source_sample_count(&self) -> u32 {
        format::intervals(self.sample_count, self.looping()).saturating_add(1)
    }
    /// Samples per second.
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }
    /// Whether the clip is additive, and how its poses apply to a base pose
    /// ([`Additive::apply`]).
    #[inline]
    pub fn additive(&self) -> Additive {
        Additive::from_byte(self.header.additive).unwrap_or_default()
    }
    /// How playback treats the clip's ends: clamp or wrap.
    #[inline]
    pub fn looping(&self) -> Looping {
        Looping::from_flags(self.header.flags.get())
    }
    /// Duration in seconds: `(sample_count - 1) / sample_rate` when the clip clamps (0
    /// for a static pose), `sample_count / sample_rate` when it wraps.
    pub fn duration(&self) -> f32 {
        format::duration(self.sample_count, self.sample_rate, self.looping())
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
        (bone < self.bone_count).then(|| self.locate(kind, bone as usize).0)
    }
    /// Whether `bone`'s rotation stores all four quaternion components (rather than
    /// three with `w` rebuilt); `None` past the bone count.
    pub fn full_quaternion_rotation(&self, bone: u32) -> Option<bool> {
        (bone < self.bone_count)
            .then(|| self.locate(SubTrackKind::Rotation, bone as usize).1 == Some(TrackList::Rotation4))
    }
    /// Key frames stored over all segments: the sample count when none is left out
    /// (format-spec/segments.md), fewer when interpolation reproduces some.
    pub fn stored_key_frames(&self) -> u32 {
        (0..self.segment_count).fold(0u32, |sum, s| sum.saturating_add(self.segment(s).2.count_ones()))
    }

    /// The key frames segment `segment` stores (bit `j`: local key frame `j`), `None`
    /// past the last segment.
    pub fn segment_key_frames(&self, segment: u32) -> Option<u32> {
        (segment < self.segment_count).then(|| self.segment(segment).2)
    }

    /// The optional metadata (names, parents, shell distances, bind pose).
    pub fn metadata(&self) -> Option<Metadata<'a>> {
        self.metadata
    }

    /// The streaming database the clip belongs to (3.1): its id and the clip's index
    /// in it; `None` for a clip compressed on its own.
    pub fn database_reference(&self) -> Option<(u64, u32)> {
        self.database_reference_block().map(|r| (r.database_id.get(), r.clip_index.get()))
    }

    /// The [`format::database::ClipReference`] after the header and the root-motion
    /// block, when the header has [`format::FLAG_DATABASE`] and it lies in the buffer.
    fn database_reference_block(&self) -> Option<format::database::ClipReference> {
        let flags = self.header.flags.get();
        if flags & format::FLAG_DATABASE == 0 {
            return None;
        }
        let mut at = HEADER_SIZE;
        if flags & format::FLAG_ROOT_MOTION != 0 {
            let (block, _) = format::RootMotionBlock::read_from_prefix(self.bytes.get(HEADER_SIZE..)?).ok()?;
            at = at.saturating_add(format::root_motion_len(block.options.get(), block.chain_len.get()));
        }
        format::database::ClipReference::read_from_prefix(self.bytes.get(at..)?).ok().map(|(r, _)| r)
    }
}

fn f32_from(c: &[u8]) -> f32 {
    f32_at(c, 0).unwrap_or(f32::NAN)
}

/// The header checks every kind shares: alignment, magic, a version this decoder
/// reads, a total size that is a multiple of 16 and within `bytes`. Returns the
/// header and the buffer cut to its total size.
pub(crate) fn read_header(bytes: &[u8]) -> Result<(ClipHeader, &[u8]), Error> {
    if bytes.as_ptr() as usize % ALIGNMENT != 0 {
        return Err(Error::Misaligned);
    }
    // The magic first, on what there is of it: bytes that are not a clip are said to
    // be so, however few.
    if !bytes.iter().zip(MAGIC).all(|(&b, m)| b == m) {
        return Err(Error::BadMagic);
    }
    let (header, _) = ClipHeader::read_from_prefix(bytes)
        .map_err(|_| Error::Truncated { needed: HEADER_SIZE as u64, available: bytes.len() as u64 })?;
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
    Ok((header, bytes))
}

/// What segment validation needs to know of a clip (transform or scalar).
pub(crate) struct SegmentShape {
    pub segments_offset: u32,
    pub segment_count: u32,
    pub sample_count: u32,
    pub segment_len: u8,
    pub animated_count: u32,
    /// Animated sub-tracks of each list, in storage order (a scalar list has one):
    /// where the quads start.
    pub list_counts: [u32; 4],
    pub frame_directory_len: u32,
    /// Bytes before each segment's samples.
    pub header_len: u64,
    /// Whether segments may leave key frames out (transform clips, 3.0): each keeps
    /// its first and last; otherwise every key frame is stored.
    pub holes: bool,
}

/// Checks the segment table and each segment's frame directory and bit rates, and
/// that its samples (plus the read slack) lie inside the buffer; `components(i)` is
/// the component count of animated sub-track `i`. Segments' data lie in increasing
/// order without overlap, so the bit rates read are distinct bytes of the buffer:
/// validation stays linear in its size.
pub(crate) fn validate_segments(
    bytes: &[u8],
    shape: &SegmentShape,
    components: impl Fn(usize) -> u64,
    work: &mut u64,
) -> Result<(), Error> {
    let mut previous_end = 0u64;
    let table_len = u64::from(shape.segment_count).saturating_mul(SEGMENT_ENTRY_SIZE as u64);
    let table = aligned_section(bytes, shape.segments_offset, table_len, Section::SegmentTable)?;
    for (index, raw) in table.chunks_exact(SEGMENT_ENTRY_SIZE).enumerate() {
        let index = index as u32;
        let entry = SegmentEntry::read_from_bytes(raw).map_err(|_| Error::OutOfBounds(Section::SegmentTable))?;
        let (_, samples) = format::segment_span(index, shape.sample_count, shape.segment_len);
        let full_mask = if samples >= 32 { u32::MAX } else { (1u32 << samples).wrapping_sub(1) };
        let present = entry.frames_present.get();
        // The first and the last key frame of the segment (bits 0 and `samples − 1`).
        let ends = 1u32 | 1u32.checked_shl(samples.saturating_sub(1)).unwrap_or(0);
        let valid =
            if shape.holes { present & !full_mask == 0 && present & ends == ends } else { present == full_mask };
        if !valid {
            return Err(Error::BadSegment(index));
        }
        let stored = present.count_ones();
        *work = work.saturating_add(1).saturating_add(u64::from(shape.animated_count));
        if u64::from(entry.data_offset.get()) < previous_end {
            return Err(Error::OutOfBounds(Section::Segment(index)));
        }
        let data = aligned_section(bytes, entry.data_offset.get(), shape.header_len, Section::Segment(index))?;
        let (directory, rates) = data.split_at((shape.frame_directory_len as usize).min(data.len()));
        // One pass over the rates: each allowed, each directory entry the bit offset of
        // the first quad of its block (quads start every four sub-tracks of a list).
        let mut frame_bits: u64 = 0;
        let mut lists = shape.list_counts.iter().map(|&n| n as usize);
        let (mut list_start, mut list_end) = (0usize, lists.next().unwrap_or(0));
        let mut quad = 0usize;
        for (i, &bits) in rates.iter().enumerate().take(shape.animated_count as usize) {
            if !format::is_valid_bit_rate(bits) {
                return Err(Error::BadBitRate { segment: index, sub_track: i as u32, bits });
            }
            while i >= list_end {
                list_start = list_end;
                list_end = list_end.saturating_add(lists.next().unwrap_or(usize::MAX));
            }
            if i.wrapping_sub(list_start) % QUAD_LANES == 0 {
                if quad > 0 && quad % FRAME_BLOCK == 0 {
                    let entry = u32_at(directory, (quad / FRAME_BLOCK).saturating_sub(1).saturating_mul(4));
                    if entry.map(u64::from) != Some(frame_bits) {
                        return Err(Error::BadDirectory(Section::Segment(index)));
                    }
                }
                quad = quad.saturating_add(1);
            }
            // At most 3 × 65,535 sub-tracks × 4 components × 32 bits: no overflow.
            frame_bits = frame_bits.saturating_add(u64::from(bits).saturating_mul(components(i)));
        }
        if frame_bits != u64::from(entry.frame_bits.get()) {
            return Err(Error::BadSegment(index));
        }
        let sample_bytes = frame_bits.saturating_mul(u64::from(stored)).div_ceil(8);
        let end = u64::from(entry.data_offset.get())
            .saturating_add(shape.header_len)
            .saturating_add(sample_bytes)
            .saturating_add(BIT_READ_SLACK as u64);
        if end > bytes.len() as u64 {
            return Err(Error::OutOfBounds(Section::Segment(index)));
        }
        // The slack may be shared: the next segment starts after the samples.
        previous_end = end.saturating_sub(BIT_READ_SLACK as u64);
    }
    Ok(())
}

/// Bytes of `count` constants of `list`: packed on `width` bits (4.1), or else 16-bit
/// words or `f32` (`raw`) each.
fn constants_bytes(list: TrackList, count: u32, raw: bool, width: u8) -> u64 {
    if width != 0 {
        packed_len(count, list.components(), width)
    } else {
        u64::from(count).saturating_mul(format::constant_size(list, raw) as u64)
    }
}

/// Bytes of `count` constants of `components` integers of `width` bits packed by
/// quads (4.1): every component of a quad of `q` lanes takes `ceil(q · width / 8)`
/// bytes.
fn packed_len(count: u32, components: u32, width: u8) -> u64 {
    let quad_len =
        |lanes: u64| (lanes.saturating_mul(u64::from(width))).div_ceil(8).saturating_mul(u64::from(components));
    let (full, rest) = (u64::from(count >> 2), u64::from(count & 3));
    full.saturating_mul(quad_len(QUAD_LANES as u64)).saturating_add(quad_len(rest))
}

/// The width table of a constants section under [`format::CONSTANT_WIDTHS`] (4.1),
/// checked: a list with quantised constants has a width of 2 to
/// [`format::MAX_CONSTANT_WIDTH`] bits, any other list 0. All zero without the flag.
fn constant_widths(bytes: &[u8], raw_constants: u8, at: u32, counts: &[u32; BITSET_COUNT]) -> Result<[u8; 4], Error> {
    if raw_constants & format::CONSTANT_WIDTHS == 0 {
        return Ok([0; 4]);
    }
    let table = aligned_section(bytes, at, format::CONSTANT_WIDTHS_SIZE as u64, Section::Constants)?;
    let widths = format::constant_widths(table.first_chunk::<2>().copied().unwrap_or([0; 2]));
    for (&width, &list) in widths.iter().zip(TrackList::ALL.iter()) {
        let constants = counts.get(format::bitset_index(false, list)).copied().unwrap_or(0);
        let quantised = constants > 0 && raw_constants & (1 << list as u8) == 0;
        let valid = if quantised { (2..=format::MAX_CONSTANT_WIDTH).contains(&width) } else { width == 0 };
        if !valid {
            return Err(Error::BadValue(Section::Constants));
        }
    }
    Ok(widths)
}

/// Checks the track descriptions in one pass over their bytes: padding bits zero, no
/// bone in two lists of one kind, every rank directory entry equal to the bits set
/// before its block. Returns the number of sub-tracks in each bit set.
fn validate_lists(lists: &TrackLists<'_>, work: &mut u64) -> Result<[u32; BITSET_COUNT], Error> {
    let bones = lists.bone_count();
    let mut counts = [0u32; BITSET_COUNT];
    for (index, count) in counts.iter_mut().enumerate() {
        let set = lists.set(index);
        // Bits past the last bone must be zero.
        if bones % 8 != 0 && set.last().is_some_and(|&b| b >> (bones % 8) != 0) {
            return Err(Error::NonZeroReserved(Section::Tracks));
        }
        *work = work.saturating_add(set.len() as u64);
        for (block, bytes) in set.chunks(RANK_BLOCK_BITS / 8).enumerate() {
            if let Some(entry) = block.checked_sub(1) {
                if lists.directory_entry(index, entry).map(u32::from) != Some(*count) {
                    return Err(Error::BadDirectory(Section::Tracks));
                }
            }
            *count = count.saturating_add(popcount(bytes));
        }
    }
    // A sub-track is in at most one list: the bit sets of one kind are disjoint.
    let kinds: [&[TrackList]; 3] = [&TrackList::ALL[..2], &TrackList::ALL[2..3], &TrackList::ALL[3..]];
    *work = work.saturating_add(format::bitset_len(bones) as u64);
    for byte in 0..format::bitset_len(bones) {
        for lists_of_kind in kinds {
            let mut seen = 0u8;
            for &list in lists_of_kind {
                for animated in [false, true] {
                    let b = lists.set(format::bitset_index(animated, list)).get(byte).copied().unwrap_or(0);
                    if seen & b != 0 {
                        let bone = byte.saturating_mul(8).saturating_add((seen & b).trailing_zeros() as usize);
                        return Err(Error::BadSubTrack { bone: bone as u32 });
                    }
                    seen |= b;
                }
            }
        }
    }
    Ok(counts)
}

/// The root-motion block after the header ([`format::RootMotionBlock`]): inside the
/// buffer, a bone in range, known options (a kept end only for a wrapping loop),
/// reserved fields zero, stored values finite and stored rotations of positive finite
/// squared length.
fn validate_root_motion(bytes: &[u8], bone_count: u32, looping: Looping) -> Result<(), Error> {
    use format::{RootEnd, RootInPlace, RootMotionBlock, ROOT_END_STORED, ROOT_IN_PLACE, ROOT_KNOWN_OPTIONS};
    let head = bytes.get(HEADER_SIZE..).ok_or(Error::OutOfBounds(Section::RootMotion))?;
    let (block, rest) = RootMotionBlock::read_from_prefix(head).map_err(|_| Error::OutOfBounds(Section::RootMotion))?;
    let options = block.options.get();
    if options & !ROOT_KNOWN_OPTIONS != 0 || block.reserved.get() != 0 {
        return Err(Error::NonZeroReserved(Section::RootMotion));
    }
    let (motion_bone, chain_len) = (block.motion_bone.get(), block.chain_len.get());
    if motion_bone >= bone_count
        || chain_len > format::MAX_ROOT_CHAIN
        || (options & ROOT_END_STORED != 0 && looping != Looping::Wrap)
    {
        return Err(Error::BadValue(Section::RootMotion));
    }
    // The chain: bones in range other than the motion bone, then zero padding.
    let chain_bytes = format::root_chain_len(chain_len);
    let (chain, rest) = rest.split_at_checked(chain_bytes).ok_or(Error::OutOfBounds(Section::RootMotion))?;
    for (i, entry) in chain.chunks_exact(4).enumerate() {
        let bone = u32_at(entry, 0).unwrap_or(u32::MAX);
        if (i as u32) < chain_len {
            if bone >= bone_count || bone == motion_bone {
                return Err(Error::BadValue(Section::RootMotion));
            }
        } else if bone != 0 {
            return Err(Error::NonZeroReserved(Section::RootMotion));
        }
    }
    let get = |v: &zerocopy::little_endian::F32| v.get();
    let valid = |rotation: [f32; 4], others: &[f32]| {
        let d = ((rotation[0] * rotation[0] + rotation[1] * rotation[1]) + rotation[2] * rotation[2])
            + rotation[3] * rotation[3];
        d > 0.0 && d.is_finite() && others.iter().all(|v| v.is_finite())
    };
    let mut rest = rest;
    if options & ROOT_END_STORED != 0 {
        let (end, after) = RootEnd::read_from_prefix(rest).map_err(|_| Error::OutOfBounds(Section::RootMotion))?;
        if end.reserved.get() != 0 {
            return Err(Error::NonZeroReserved(Section::RootMotion));
        }
        if !valid(end.rotation.each_ref().map(get), &end.translation.each_ref().map(get)) {
            return Err(Error::BadValue(Section::RootMotion));
        }
        rest = after;
    }
    if options & ROOT_IN_PLACE != 0 {
        let (t, _) = RootInPlace::read_from_prefix(rest).map_err(|_| Error::OutOfBounds(Section::RootMotion))?;
        if t.reserved.iter().any(|r| r.get() != 0) {
            return Err(Error::NonZeroReserved(Section::RootMotion));
        }
        let [tx, ty, tz] = t.translation.each_ref().map(get);
        let [sx, sy, sz] = t.scale.each_ref().map(get);
        if !valid(t.rotation.each_ref().map(get), &[tx, ty, tz, sx, sy, sz]) {
            return Err(Error::BadValue(Section::RootMotion));
        }
    }
    Ok(())
}

/// Is the [`format::Grid`] at `at` valid: bases finite, steps finite and at least 0,
/// and the largest integer's value `top · step + base` finite (so every value of the
/// grid is): `top` is 65535, or `2^w − 1` for constants packed on `w > 16` bits.
fn valid_grid(bytes: &[u8], at: u32, top: u32) -> bool {
    let Some((grid, _)) = bytes.get(at as usize..).and_then(|b| format::Grid::read_from_prefix(b).ok()) else {
        return false;
    };
    grid.base.iter().zip(&grid.step).all(|(base, step)| {
        let (base, step) = (base.get(), step.get());
        base.is_finite() && step.is_finite() && step >= 0.0 && (top as f32 * step + base).is_finite()
    })
}

#[cfg(test)]
mod tests {
    use crate::format::{MAX_SAMPLES, MAX_SEGMENT_LEN};

    /// The segment reciprocal divides exactly: every sample a clip can have, for every
    /// segment length (the last 2²⁰ samples below the limit and the first 2²⁰, and
    /// every 97th between; under Miri, a few of each).
    #[test]
    fn segment_reciprocal_divides_exactly() {
        let step = if cfg!(miri) { 1 << 18 } else { 1 };
        for d in 1..=u32::from(MAX_SEGMENT_LEN) {
            let reciprocal = (1u64 << 32).div_ceil(u64::from(d));
            let samples = (0..1 << 20)
                .step_by(step)
                .chain((MAX_SAMPLES - (1 << 20)..MAX_SAMPLES).step_by(step))
                .chain((0..MAX_SAMPLES).step_by(97 * step));
            for k in samples {
                assert_eq!(((u64::from(k) * reciprocal) >> 32) as u32, k / d, "{k} / {d}");
            }
        }
    }
}
