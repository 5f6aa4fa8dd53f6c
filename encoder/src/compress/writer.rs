//! Lays a compressed clip out as an `.ossa` buffer (see `format-spec/`).

use ossa_decoder::format::database::ClipReference;
use ossa_decoder::format::{
    self, ClipHeader, Looping, RootEnd, RootInPlace, RootMotionBlock, SegmentEntry, SubTrackClass, TrackList,
    ALIGNMENT, BITSET_COUNT, BIT_READ_SLACK, FLAG_DATABASE, FLAG_HAS_METADATA, FLAG_LOOP_WRAP, FLAG_ROOT_MOTION,
    FRAME_BLOCK, HEADER_SIZE, KIND_TRANSFORMS, MAGIC, QUAD_LANES, RANK_BLOCK_BITS, VERSION_MAJOR,
};
use ossa_decoder::Additive;
use zerocopy::little_endian::{F32, U16, U32, U64};
use zerocopy::IntoBytes;

use super::grid::{Grids, ListGrid};
use super::sub_track::{SegmentCode, SubTrack};
use crate::memory::{self, OutOfMemory};
use crate::raw_clip::{normalize, RawClip};

/// The root-motion block and the optional parts its options announce.
#[derive(Clone, Debug)]
pub struct RootMotionParts {
    /// Bone and options.
    pub block: RootMotionBlock,
    /// The motion bone's ancestors, outermost first.
    pub chain: Vec<usize>,
    /// The root's dropped last sample (with `ROOT_END_STORED`).
    pub end: Option<RootEnd>,
    /// The in-place transform (with `ROOT_IN_PLACE`).
    pub in_place: Option<RootInPlace>,
}

/// Everything the writer needs besides the tracks.
#[derive(Clone)]
pub struct ClipShape {
    /// Samples stored (the source's, less the repeated last one of a wrapping loop).
    pub sample_count: u32,
    /// Clamp or wrap.
    pub looping: Looping,
    /// The root-motion block, when the clip needs one.
    pub root_motion: Option<RootMotionParts>,
    /// How the clip applies to a base pose, if it is additive.
    pub additive: Additive,
    /// Samples per second.
    pub sample_rate: f32,
    /// Samples per segment.
    pub segment_len: u8,
    /// The streaming database the clip belongs to: its id and the clip's index in it
    /// (3.1, `format-spec/database.md`).
    pub database: Option<(u64, u32)>,
    /// The database's shared pose giving the clip's default sub-tracks their values
    /// (flag SHARED_POSE). A clip with one names its database: until the database is
    /// known (while it is compressed), the reference holds id 0 and clip 0.
    pub shared_pose: Option<u32>,
}

/// Writes the buffer. `metadata` (the source clip and the precision held) adds the
/// optional metadata section. The part before it is identical either way, so the
/// stripped size is the metadata offset.
pub fn write(
    shape: &ClipShape,
    tracks: &[SubTrack],
    grids: &Grids,
    segments: &[&[Option<SegmentCode>]],
    kept: &[u32],
    metadata: Option<(&RawClip, f32)>,
) -> Result<Vec<u8>, OutOfMemory> {
    let bones = tracks.len() / 3;
    let bound = size_bound(shape, tracks, segments, metadata);
    let raw_constants = super::grid::raw_lists(tracks);
    let raw = |list: TrackList| raw_constants & (1 << list as u8) != 0;
    let mut out = memory::with_capacity(bound, "the compressed clip")?;
    out.resize(HEADER_SIZE, 0);
    if let Some(root) = &shape.root_motion {
        out.extend_from_slice(root.block.as_bytes());
        for &bone in &root.chain {
            out.extend_from_slice(&(bone as u32).to_le_bytes());
        }
        // The chain is padded to 16 bytes within the block (root-motion.md).
        pad_end(&mut out);
        if let Some(end) = &root.end {
            out.extend_from_slice(end.as_bytes());
        }
        if let Some(in_place) = &root.in_place {
            out.extend_from_slice(in_place.as_bytes());
        }
        debug_assert_eq!(
            out.len() - HEADER_SIZE,
            format::root_motion_len(root.block.options.get(), root.chain.len() as u32)
        );
    }
    if shape.database.is_some() || shape.shared_pose.is_some() {
        let (database_id, clip_index) = shape.database.unwrap_or((0, 0));
        let reference = ClipReference {
            database_id: U64::new(database_id),
            clip_index: U32::new(clip_index),
            shared_pose: U32::new(shape.shared_pose.unwrap_or(0)),
        };
        out.extend_from_slice(reference.as_bytes());
    }

    // Track descriptions: the eight bone bit sets, then their rank directories.
    let tracks_offset = out.len();
    let set_len = format::bitset_len(bones);
    let mut sets = vec![vec![0u8; set_len]; BITSET_COUNT];
    for t in tracks.iter().filter(|t| t.class != SubTrackClass::Default) {
        let set = format::bitset_index(t.class == SubTrackClass::Animated, t.list());
        sets[set][t.bone / 8] |= 1 << (t.bone % 8);
    }
    // 4.2: only the sets with a bone are stored (header flags bits 8 to 15).
    let stored_sets = (0..BITSET_COUNT).filter(|&s| sets[s].iter().any(|&b| b != 0)).fold(0u8, |m, s| m | 1 << s);
    let sets: Vec<&Vec<u8>> =
        sets.iter().enumerate().filter(|&(s, _)| stored_sets >> s & 1 != 0).map(|(_, set)| set).collect();
    for set in &sets {
        out.extend_from_slice(set);
    }
    for set in &sets {
        let mut before = 0u32;
        for (block, bytes) in set.chunks(RANK_BLOCK_BITS / 8).enumerate() {
            if block > 0 {
                out.extend_from_slice(&(before as u16).to_le_bytes());
            }
            before += bytes.iter().map(|b| b.count_ones()).sum::<u32>();
        }
    }
    debug_assert_eq!(out.len() - tracks_offset, format::track_section_len(bones, stored_sets));
    pad(&mut out);

    // Constants and animated sub-tracks, list by list, each list in bone order.
    let stored = |class: SubTrackClass| storage_order(tracks, class);
    // Constants: the width table (4.1, when any list is quantised), the grids of
    // quantised translation and scale lists, then each list's values, raw `f32` or
    // integers of the list's width, each component of a quad from a byte boundary.
    let constants_offset = out.len();
    let constant = stored(SubTrackClass::Constant);
    let count = |order: &[usize], list: TrackList| order.iter().filter(|&&i| tracks[i].list() == list).count();
    let widths = TrackList::ALL.map(|list| {
        if count(&constant, list) > 0 && !raw(list) {
            grids.constant_widths[list as usize]
        } else {
            0
        }
    });
    let packed = widths.iter().any(|&w| w != 0);
    if packed {
        // A 4-bit code per list: its width over two.
        let code = |l: usize| widths[l] >> 1;
        out.extend_from_slice(&[code(0) | code(1) << 4, code(2) | code(3) << 4]);
    }
    for list in TrackList::ALL {
        if format::has_grid(list) && count(&constant, list) > 0 && !raw(list) {
            let grid = grids.constants[list as usize].expect("a quantised list without a grid");
            write_grid(&mut out, &grid);
        }
    }
    for list in TrackList::ALL {
        let members = constant.iter().map(|&i| &tracks[i]).filter(|t| t.list() == list);
        if raw(list) {
            for t in members {
                for c in &t.constant_exact[..t.components as usize] {
                    out.extend_from_slice(&c.to_le_bytes());
                }
            }
        } else {
            // By quads of four constants, component by component, each component
            // from a byte (4.1), as the animated samples are.
            let width = widths[list as usize];
            let values: Vec<[u32; 4]> =
                members.map(|t| t.constant_q.expect("a quantised list with a raw constant")).collect();
            for quad in values.chunks(format::QUAD_LANES) {
                for m in 0..list.components() as usize {
                    let mut bits = BitWriter::default();
                    for q in quad {
                        bits.push(q[m], width);
                    }
                    out.extend_from_slice(&bits.finish());
                }
            }
        }
    }
    pad(&mut out);

    // Clip ranges: the grids of translation and scale lists with animated sub-tracks,
    // then each animated sub-track's integers, minimums then extents.
    let ranges_offset = out.len();
    let animated = stored(SubTrackClass::Animated);
    for list in TrackList::ALL {
        if format::has_grid(list) && count(&animated, list) > 0 {
            write_grid(&mut out, &grids.ranges[list as usize].expect("an animated list without a grid"));
        }
    }
    // By quad (4.0): each component's minimums of the quad's lanes, then each
    // component's extents.
    let animated_counts = TrackList::ALL.map(|list| count(&animated, list));
    for (first, lanes) in quads(&animated_counts) {
        let quad = &animated[first..first + lanes];
        let c = tracks[quad[0]].components as usize;
        for m in 0..c {
            for &i in quad {
                out.extend_from_slice(&tracks[i].range_q[m].0.to_le_bytes());
            }
        }
        for m in 0..c {
            for &i in quad {
                out.extend_from_slice(&tracks[i].range_q[m].1.to_le_bytes());
            }
        }
    }
    pad(&mut out);

    let segment_codes: Vec<Vec<(u32, &SegmentCode)>> = segments
        .iter()
        .map(|codes| {
            animated
                .iter()
                .map(|&i| (tracks[i].components, codes[i].as_ref().expect("animated sub-track without code")))
                .collect()
        })
        .collect();
    let segments_offset =
        write_segments(&mut out, shape.sample_count, shape.segment_len, &animated_counts, &segment_codes, kept);
    // What a game ships ends on a multiple of 16 bytes, with or without metadata after.
    pad_end(&mut out);

    let (mut flags, mut metadata_offset, mut metadata_size) = (0u32, 0usize, 0usize);
    if let Some((clip, precision)) = metadata {
        flags |= FLAG_HAS_METADATA;
        metadata_offset = out.len();
        write_metadata(&mut out, clip, precision);
        pad_end(&mut out);
        metadata_size = out.len() - metadata_offset;
    }

    if shape.looping == Looping::Wrap {
        flags |= FLAG_LOOP_WRAP;
    }
    flags |= u32::from(stored_sets) << format::STORED_SETS_SHIFT;
    if shape.root_motion.is_some() {
        flags |= FLAG_ROOT_MOTION;
    }
    if shape.database.is_some() || shape.shared_pose.is_some() {
        flags |= FLAG_DATABASE;
    }
    if shape.shared_pose.is_some() {
        flags |= format::FLAG_SHARED_POSE;
    }
    let header = ClipHeader {
        magic: MAGIC,
        version_major: U16::new(VERSION_MAJOR),
        // 4.1: sections on 4-byte boundaries (and packed constants).
        version_minor: U16::new(format::VERSION_MINOR),
        total_size: U32::new(out.len() as u32),
        checksum: U32::new(0),
        flags: U32::new(flags),
        kind: KIND_TRANSFORMS,
        additive: shape.additive.to_byte(),
        segment_len: shape.segment_len,
        raw_constants: raw_constants & format::RAW_CONSTANTS_MASK | if packed { format::CONSTANT_WIDTHS } else { 0 },
        bone_count: U32::new(bones as u32),
        sample_count: U32::new(shape.sample_count),
        sample_rate: F32::new(shape.sample_rate),
        segment_count: U32::new(segments.len() as u32),
        tracks_offset: U32::new(tracks_offset as u32),
        constants_offset: U32::new(constants_offset as u32),
        ranges_offset: U32::new(ranges_offset as u32),
        segments_offset: U32::new(segments_offset as u32),
        metadata_offset: U32::new(metadata_offset as u32),
        metadata_size: U32::new(metadata_size as u32),
    };
    out[..HEADER_SIZE].copy_from_slice(header.as_bytes());
    let sum = format::checksum(&out);
    out[12..16].copy_from_slice(&sum.to_le_bytes());
    debug_assert!(out.len() <= bound, "size bound {bound} below the size {}", out.len());
    Ok(out)
}

/// An upper bound of the buffer's size, so that it is allocated once, fallibly.
fn size_bound(
    shape: &ClipShape,
    tracks: &[SubTrack],
    segments: &[&[Option<SegmentCode>]],
    metadata: Option<(&RawClip, f32)>,
) -> usize {
    let bones = tracks.len() / 3;
    let pad = ALIGNMENT - 1;
    let components =
        |class| -> usize { tracks.iter().filter(|t| t.class == class).map(|t| t.components as usize).sum() };
    let animated = tracks.iter().filter(|t| t.class == SubTrackClass::Animated).count();
    let mut size = HEADER_SIZE
        + format::database::CLIP_REFERENCE_SIZE
        + format::root_motion_len(format::ROOT_KNOWN_OPTIONS, format::MAX_ROOT_CHAIN)
        + format::track_section_len(bones, 0xff)
        + pad
        + 4 * format::GRID_SIZE
        + format::CONSTANT_WIDTHS_SIZE
        + components(SubTrackClass::Constant) * 4
        + pad
        + components(SubTrackClass::Animated) * 8
        + pad
        + segments.len() * format::SEGMENT_ENTRY_SIZE
        + pad
        + BIT_READ_SLACK;
    for (index, codes) in segments.iter().enumerate() {
        let (_, samples) = format::segment_span(index as u32, shape.sample_count, shape.segment_len);
        let frame_bits: usize = tracks
            .iter()
            .zip(codes.iter())
            .filter_map(|(t, c)| c.as_ref().map(|c| usize::from(c.bits) * t.components as usize))
            .sum();
        size += format::frame_directory_len(animated.div_ceil(QUAD_LANES) + 4)
            + animated
            + components(SubTrackClass::Animated) * 2
            + (frame_bits * samples as usize).div_ceil(8)
            + pad;
    }
    if let Some((clip, _)) = metadata {
        size += 12 + clip.name.len() + pad;
        size += clip.bones.iter().map(|b| 4 + 4 * 11 + 2 + b.name.len()).sum::<usize>();
        size += 2 * format::METADATA_RECORD_HEADER + 4 * clip.source.joint_order.len() + 4;
        size += clip.source.root_placements.len() * format::ROOT_PLACEMENT_SIZE;
    }
    size
}

/// Writes a grid: three bases, then three steps.
fn write_grid(out: &mut Vec<u8>, grid: &ListGrid) {
    for v in grid.base[..3].iter().chain(&grid.step[..3]) {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Writes the metadata section (without its padding): names, parents, bind pose,
/// then the records of the source's joint order and root placements, if any.
fn write_metadata(out: &mut Vec<u8>, clip: &RawClip, precision: f32) {
    out.extend_from_slice(&(clip.bones.len() as u32).to_le_bytes());
    out.extend_from_slice(&precision.to_le_bytes());
    out.extend_from_slice(&(clip.name.len() as u32).to_le_bytes());
    out.extend_from_slice(clip.name.as_bytes());
    for bone in &clip.bones {
        let parent = bone.parent.map_or(u32::MAX, |p| p as u32);
        out.extend_from_slice(&parent.to_le_bytes());
        let b = &bone.bind_pose;
        // `RawClip::check` proved the rotation normalisable.
        let rotation = normalize(b.rotation).unwrap_or([0.0, 0.0, 0.0, 1.0]);
        let floats = std::iter::once(bone.shell_distance).chain(rotation).chain(b.translation).chain(b.scale);
        for v in floats {
            out.extend_from_slice(&(v as f32).to_le_bytes());
        }
        // `RawClip::validate` refuses names longer than a u16 can count.
        out.extend_from_slice(&(bone.name.len() as u16).to_le_bytes());
        out.extend_from_slice(bone.name.as_bytes());
    }
    let source = &clip.source;
    let record = |out: &mut Vec<u8>, tag: u16, size: usize| {
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&(size as u32).to_le_bytes());
    };
    if !source.joint_order.is_empty() {
        record(out, format::METADATA_JOINT_ORDER, 4 * source.joint_order.len());
        for &j in &source.joint_order {
            out.extend_from_slice(&(j as u32).to_le_bytes());
        }
    }
    if !source.root_placements.is_empty() {
        let count = source.root_placements.len();
        record(out, format::METADATA_ROOT_PLACEMENTS, 4 + count * format::ROOT_PLACEMENT_SIZE);
        out.extend_from_slice(&(count as u32).to_le_bytes());
        for p in &source.root_placements {
            out.extend_from_slice(&(p.bone as u32).to_le_bytes());
            for v in p.matrix {
                out.extend_from_slice(&(v as f32).to_le_bytes());
            }
        }
    }
}

/// Writes the segment table and every segment's data (frame directory, bit rates,
/// segment ranges, samples), then the read slack, each part padded: `segments[s]`
/// lists segment `s`'s animated sub-tracks in storage order, each as its component
/// count and code. Returns the table's offset.
pub fn write_segments(
    out: &mut Vec<u8>,
    sample_count: u32,
    segment_len: u8,
    list_counts: &[usize],
    segments: &[Vec<(u32, &SegmentCode)>],
    kept: &[u32],
) -> usize {
    let segments_offset = out.len();
    out.resize(out.len() + segments.len() * format::SEGMENT_ENTRY_SIZE, 0);
    pad(out);
    let ranged = segments.len() > 1;
    let quads = quads(list_counts);
    let mut entries = Vec::with_capacity(segments.len());
    for (index, animated_codes) in segments.iter().enumerate() {
        let data_offset = out.len();
        let (_, samples) = format::segment_span(index as u32, sample_count, segment_len);
        // The frame directory: the bit offset of every FRAME_BLOCK-th quad.
        let mut offset = 0u32;
        for (q, &(first, lanes)) in quads.iter().enumerate() {
            if q > 0 && q % FRAME_BLOCK == 0 {
                out.extend_from_slice(&offset.to_le_bytes());
            }
            offset +=
                animated_codes[first..first + lanes].iter().map(|(c, code)| u32::from(code.bits) * c).sum::<u32>();
        }
        for (_, code) in animated_codes {
            out.push(code.bits);
        }
        if ranged {
            // By quad: each component's `lo` bytes of the lanes, then their `hi`.
            for &(first, lanes) in &quads {
                let quad = &animated_codes[first..first + lanes];
                let c = quad[0].0 as usize;
                for m in 0..c {
                    out.extend(quad.iter().map(|(_, code)| code.range_bytes[m].0));
                }
                for m in 0..c {
                    out.extend(quad.iter().map(|(_, code)| code.range_bytes[m].1));
                }
            }
        }
        let frame_bits: u32 = animated_codes.iter().map(|(c, code)| u32::from(code.bits) * c).sum();
        let full_mask = if samples >= 32 { u32::MAX } else { (1u32 << samples) - 1 };
        let present = kept.get(index).copied().unwrap_or(full_mask) & full_mask;
        out.extend_from_slice(&sample_stream(animated_codes, &quads, samples as usize, present));
        entries.push(SegmentEntry {
            data_offset: U32::new(data_offset as u32),
            frame_bits: U32::new(frame_bits),
            frames_present: U32::new(present),
        });
        if index + 1 == segments.len() {
            out.resize(out.len() + BIT_READ_SLACK, 0);
        }
        pad(out);
    }
    for (i, e) in entries.iter().enumerate() {
        let at = segments_offset + i * format::SEGMENT_ENTRY_SIZE;
        out[at..at + format::SEGMENT_ENTRY_SIZE].copy_from_slice(e.as_bytes());
    }
    segments_offset
}

/// The quads of lists of `list_counts` animated sub-tracks (format-spec/segments.md,
/// Quads): each quad's first sub-track (storage order) and its lanes, four but for
/// the last of a list.
pub fn quads(list_counts: &[usize]) -> Vec<(usize, usize)> {
    let mut quads = Vec::with_capacity(format::quad_count(list_counts.iter().copied()));
    let mut first = 0;
    for &count in list_counts {
        for start in (0..count).step_by(QUAD_LANES) {
            quads.push((first + start, (count - start).min(QUAD_LANES)));
        }
        first += count;
    }
    quads
}

/// The sample bit stream of the key frames `present` of a segment of `samples`
/// samples whose animated sub-tracks (storage order) are `animated_codes`, in
/// `quads`: key frame after key frame; in each, quad after quad; in each, component
/// after component; in each, the lanes' values at their bit rates, least significant
/// bit first. Rounded up to whole bytes.
fn sample_stream(
    animated_codes: &[(u32, &SegmentCode)],
    quads: &[(usize, usize)],
    samples: usize,
    present: u32,
) -> Vec<u8> {
    let mut bits = BitWriter::default();
    for i in (0..samples).filter(|&i| present >> i & 1 != 0) {
        for &(first, lanes) in quads {
            let quad = &animated_codes[first..first + lanes];
            for m in 0..quad[0].0 as usize {
                for (_, code) in quad {
                    if code.bits > 0 {
                        bits.push(code.values[i][m], code.bits);
                    }
                }
            }
        }
    }
    bits.finish()
}

/// The sample bits of key frames `frames` of a segment of `samples` samples whose
/// codes (by sub-track) are `codes`, as the segment would store them: what a
/// streaming database tier holds of it.
pub fn frame_stream(tracks: &[SubTrack], codes: &[Option<SegmentCode>], samples: usize, frames: u32) -> Vec<u8> {
    let animated = storage_order(tracks, SubTrackClass::Animated);
    let animated_codes: Vec<(u32, &SegmentCode)> =
        animated.iter().filter_map(|&i| codes[i].as_ref().map(|c| (tracks[i].components, c))).collect();
    let counts = TrackList::ALL.map(|list| animated.iter().filter(|&&i| tracks[i].list() == list).count());
    sample_stream(&animated_codes, &quads(&counts), samples, frames)
}

/// The sub-tracks of `class` in storage order: list by list, each in bone order.
fn storage_order(tracks: &[SubTrack], class: SubTrackClass) -> Vec<usize> {
    let mut order: Vec<usize> = (0..tracks.len()).filter(|&i| tracks[i].class == class).collect();
    order.sort_by_key(|&i| (tracks[i].list(), tracks[i].bone));
    order
}

/// Pads `out` to the format's alignment with zeros.
pub fn pad(out: &mut Vec<u8>) {
    let len = out.len().next_multiple_of(format::SECTION_ALIGNMENT);
    out.resize(len, 0);
}

/// Zeros up to a multiple of [`ALIGNMENT`]: a buffer's end, and the root-motion chain.
pub fn pad_end(out: &mut Vec<u8>) {
    let len = out.len().next_multiple_of(ALIGNMENT);
    out.resize(len, 0);
}

/// Packs values least significant bit first.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    /// Bits not yet in `bytes`, the first one lowest: fewer than 8 between pushes.
    pending: u64,
    pending_bits: u32,
}

impl BitWriter {
    /// Appends the low `bits` bits of `value` (`bits` ≤ 32).
    fn push(&mut self, value: u32, bits: u8) {
        let bits = u32::from(bits).min(32);
        let mask = if bits == 32 { u64::from(u32::MAX) } else { (1u64 << bits) - 1 };
        self.pending |= (u64::from(value) & mask) << self.pending_bits;
        self.pending_bits += bits;
        while self.pending_bits >= 8 {
            self.bytes.push(self.pending as u8);
            self.pending >>= 8;
            self.pending_bits -= 8;
        }
    }

    /// The bytes, the last one padded with zero bits.
    fn finish(mut self) -> Vec<u8> {
        if self.pending_bits > 0 {
            self.bytes.push(self.pending as u8);
        }
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::BitWriter;

    /// Whole values at once give the bits that writing them bit by bit gives.
    #[test]
    fn values_pack_as_their_bits_one_by_one() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200 {
            let mut writer = BitWriter::default();
            let (mut expected, mut at) = (Vec::<u8>::new(), 0usize);
            for _ in 0..(next() % 40) {
                let r = next();
                let bits = [0u8, 1, 3, 7, 8, 9, 16, 17, 24, 31, 32][(r % 11) as usize];
                let value = (r >> 8) as u32;
                writer.push(value, bits);
                for k in 0..usize::from(bits) {
                    if at / 8 == expected.len() {
                        expected.push(0);
                    }
                    expected[at / 8] |= (((value >> k) & 1) as u8) << (at % 8);
                    at += 1;
                }
            }
            assert_eq!(writer.finish(), expected);
        }
    }
}
