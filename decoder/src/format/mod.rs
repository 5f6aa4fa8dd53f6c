//! The binary layout of an `.ossa` buffer: header, constants and limits, and (in
//! the crate-private modules) its validation: the views that check a buffer once so
//! that nothing after them re-checks it.
//!
//! This module's public part is the only thing the encoder and the decoder share
//! (besides the dequantisation arithmetic in [`crate::quantization`]), in the spirit of
//! ACL's strict compression/decompression split. `format-spec/` is the normative text;
//! the constants here mirror it one for one.
//!
//! Inside: `bytes` reads little-endian values and bits; `clip` validates a transform
//! clip into its [`crate::Clip`] view; `track_lists` reads the bone bit sets;
//! `metadata` the optional tool-only section; `shared_pose` a database's default
//! values; `additive` the blend modes; `layout` how many bytes each part takes.

use zerocopy::little_endian::{F32, U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

pub(crate) mod additive;
pub(crate) mod bytes;
pub(crate) mod clip;
pub mod database;
pub(crate) mod layout;
pub(crate) mod metadata;
pub(crate) mod shared_pose;
pub(crate) mod track_lists;

/// The four bytes every `.ossa` buffer starts with.
pub const MAGIC: [u8; 4] = *b"OSSA";
/// The major version this crate reads and writes. Other majors are refused: 4.0 lays
/// animated sub-tracks out in quads of four and dequantises by reciprocals, which a
/// 3.x reader would misread (format-spec/README.md, Changes from version 3.2).
pub const VERSION_MAJOR: u16 = 4;
/// The newest minor version this crate knows. Newer minors are refused too, because a
/// minor version may add data this decoder would silently ignore. 4.0 defines
/// everything 3.2 did: wrapping loops, root motion, additive clips, scalar lists,
/// quantised constants and ranges, key frames left out, streaming databases
/// ([`FLAG_DATABASE`], [`FLAG_SHARED_POSE`]), metadata records
/// ([`METADATA_JOINT_ORDER`], [`METADATA_ROOT_PLACEMENTS`]) and scalar metadata.
/// 4.1 adds quantised constants of an even width from 2 to 24 bits
/// ([`CONSTANT_WIDTHS`]).
///
/// 4.2 stores only the bone bit sets that have a bone ([`STORED_SETS_SHIFT`]).
pub const VERSION_MINOR: u16 = 2;

/// Tag of the metadata record (3.2) that gives, for every bone, its index in the
/// source the clip was imported from (a glTF skin's joint order, when the importer
/// had to put parents first).
pub const METADATA_JOINT_ORDER: u16 = 1;
/// Tag of the metadata record (3.2) that gives the transforms above some of the
/// skeleton's roots in the source's scene (a glTF armature node's scale and
/// orientation): the error bound and the reported error are in the scene's units.
pub const METADATA_ROOT_PLACEMENTS: u16 = 2;
/// Bytes of a metadata record's header: `u16` tag, `u16` reserved, `u32` payload size.
pub const METADATA_RECORD_HEADER: usize = 8;
/// Bytes of one root placement: `u32` bone, then a 3 × 4 affine matrix of `f32`, row
/// by row.
pub const ROOT_PLACEMENT_SIZE: usize = 4 + 12 * 4;
/// The output index of a scalar track the source left out of the compressed data
/// (ACL's "no output"): only scalar metadata (3.2) names such a track.
pub const NO_OUTPUT: u32 = u32::MAX;
/// A buffer starts on this boundary and its size is a multiple of it, so clips packed
/// back to back stay aligned.
pub const ALIGNMENT: usize = 16;
/// Every section starts on this boundary (4.1; 16 before): its `u32` and `f32` fields
/// are then aligned, while a section ends at most 3 bytes before the next. The decoder
/// reads bit streams with unaligned loads, so no section needs more.
pub const SECTION_ALIGNMENT: usize = 4;

/// Bytes readable past the end of the last segment's samples. The bit reader loads 8
/// bytes at a time; this slack keeps every such load inside the buffer.
pub const BIT_READ_SLACK: usize = 8;

/// Samples per segment used by the encoder (the last segment takes the remainder,
/// so a segment holds at most `2 * len - 1` samples).
pub const DEFAULT_SEGMENT_LEN: u8 = 16;
/// The largest segment length the format allows: `2 * 16 - 1 = 31` samples fit the
/// 32-bit key-frame bit set of each segment.
pub const MAX_SEGMENT_LEN: u8 = 16;

/// The largest bone count the format supports.
pub const MAX_BONES: u32 = 65_535;
/// The largest sample count the format supports.
pub const MAX_SAMPLES: u32 = 1 << 24;

/// Header flag: an optional metadata section (names, parents, bind pose…) is present.
pub const FLAG_HAS_METADATA: u32 = 1 << 0;
/// Header flag (2.1): the clip loops by wrapping. Its repeated last sample is not
/// stored, and playback interpolates from the last stored sample back to the first
/// ([`Looping::Wrap`]).
pub const FLAG_LOOP_WRAP: u32 = 1 << 1;

/// Header flag (2.1): a [`RootMotionBlock`] follows the header at offset
/// [`HEADER_SIZE`]: the root-motion bone is not bone 0, or its motion plays in place,
/// or a wrapping loop keeps the root's dropped last sample.
pub const FLAG_ROOT_MOTION: u32 = 1 << 2;

/// Header flag (3.1): a [`database::ClipReference`] follows the header and the
/// root-motion block, if any: the clip belongs to a streaming database, which holds
/// some of the key frames its segments leave out (`format-spec/database.md`).
pub const FLAG_DATABASE: u32 = 1 << 3;

/// Header flag (3.1, only with [`FLAG_DATABASE`]): the clip's default sub-tracks (in
/// no list) take their values from a shared pose of its database
/// ([`database::ClipReference::shared_pose`]) instead of the identity: the constants
/// that clips of one skeleton have in common are stored once, in the database.
pub const FLAG_SHARED_POSE: u32 = 1 << 4;

/// The header flags a transform clip may use (4.0 defines all five); a decoder
/// refuses any other bit, but for the stored sets of a 4.2 file
/// ([`STORED_SETS_SHIFT`]).
pub const KNOWN_FLAGS: u32 = FLAG_HAS_METADATA | FLAG_LOOP_WRAP | FLAG_ROOT_MOTION | FLAG_DATABASE | FLAG_SHARED_POSE;

/// Header flags bits 8 to 15 (4.2): bit `8 + s` set when bone bit set `s`
/// ([`bitset_index`]) is stored in the track descriptions. A set left out has no bone
/// (a clip without scale, say, stores neither scale set), and its bytes and rank
/// directory are not written.
pub const STORED_SETS_SHIFT: u32 = 8;
/// The header flags of [`STORED_SETS_SHIFT`].
pub const STORED_SETS_FLAGS: u32 = 0xff << STORED_SETS_SHIFT;

/// The bit sets stored in a clip of minor version `minor` with header `flags`, bit `s`
/// for set `s`: all eight before 4.2.
#[inline]
pub const fn stored_sets(flags: u32, minor: u16) -> u8 {
    if minor >= 2 {
        (flags >> STORED_SETS_SHIFT) as u8
    } else {
        0xff
    }
}

/// How a clip's playback treats its ends (seed 000).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Looping {
    /// Both the first and the last sample are stored; sampling never interpolates
    /// between them, and the duration is `(sample_count - 1) / sample_rate`.
    #[default]
    Clamp,
    /// The last sample (a repeat of the first) is not stored: after the last stored
    /// sample, playback interpolates back to the first, and the duration is
    /// `sample_count / sample_rate` (one more interval than clamp).
    Wrap,
}

impl Looping {
    /// The looping mode of a header's flags.
    #[inline]
    pub const fn from_flags(flags: u32) -> Looping {
        if flags & FLAG_LOOP_WRAP != 0 {
            Looping::Wrap
        } else {
            Looping::Clamp
        }
    }

    /// Its name in tools' output: `"clamp"` or `"wrap"`.
    pub const fn name(self) -> &'static str {
        match self {
            Looping::Clamp => "clamp",
            Looping::Wrap => "wrap",
        }
    }
}

/// `ClipHeader::kind`: a clip of bone transforms (rotation, translation, scale).
pub const KIND_TRANSFORMS: u8 = 0;
/// `ClipHeader::kind` (2.1): a list of scalar tracks ([`crate::ScalarClip`]).
pub const KIND_SCALAR_TRACKS: u8 = 1;

/// The head of a scalar track list's descriptions (8 bytes at `tracks_offset`), then
/// its constant and animated bit sets, then (with [`SCALAR_REMAP`]) one `u32` output
/// index per stored track.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct ScalarDescription {
    /// [`crate::ScalarType`] byte, 1 to 5.
    pub track_type: u8,
    /// `SCALAR_*` option bits.
    pub options: u8,
    /// Zero.
    pub reserved: U16,
    /// Output slots: at least one more than every output index.
    pub output_count: U32,
}

/// Size of [`ScalarDescription`].
pub const SCALAR_DESCRIPTION_SIZE: usize = core::mem::size_of::<ScalarDescription>();
const _: () = assert!(SCALAR_DESCRIPTION_SIZE == 8);

/// [`ScalarDescription::options`]: the stored tracks have output indices of their own
/// (otherwise track `i` is output `i`).
pub const SCALAR_REMAP: u8 = 1;

/// Bytes of a scalar list's two bit sets for `tracks` tracks, padded to 4 bytes.
#[inline]
pub const fn scalar_sets_len(tracks: usize) -> usize {
    // At most 2 · 8192 + 3.
    #[allow(clippy::arithmetic_side_effects)]
    let len = (2 * bitset_len(tracks)).div_ceil(4) * 4;
    len
}

/// Bytes of a scalar list's descriptions.
#[inline]
pub const fn scalar_description_len(tracks: usize, remap: bool) -> usize {
    // At most 8 + 16,388 + 4 · 65,535.
    #[allow(clippy::arithmetic_side_effects)]
    let len = SCALAR_DESCRIPTION_SIZE + scalar_sets_len(tracks) + if remap { 4 * tracks } else { 0 };
    len
}
/// `ClipHeader::additive`: a normal (non-additive) clip. Values 1 to 3 (2.1) are the
/// additive modes of [`crate::Additive`].
pub const ADDITIVE_NONE: u8 = 0;

/// [`ClipHeader::raw_constants`]: the bits that may be set, one per list.
pub const RAW_CONSTANTS_MASK: u8 = 0x0f;
/// [`ClipHeader::raw_constants`] bit 4 (4.1): the constants section opens with a
/// width table, and each quantised list's constants are integers of its width,
/// packed by quads of four and by component ([`constant_width_step`]), instead of
/// 16-bit words. A constant then takes the bits its precision needs rather than 16
/// (format-spec/tracks.md).
pub const CONSTANT_WIDTHS: u8 = 0x10;
/// Bytes of the width table that opens the constants section under
/// [`CONSTANT_WIDTHS`]: a 4-bit code per list, `width / 2`.
pub const CONSTANT_WIDTHS_SIZE: usize = 2;
/// Widest packed constant integer (4.1): 24 bits, which `f32` holds exactly. Widths
/// are even, 2 to 24, so that every component of a full quad (`4 · width` bits)
/// starts on a byte.
pub const MAX_CONSTANT_WIDTH: u8 = 24;

/// The widths of the four lists from a width table (4.1): list `l`'s code is bits
/// `4·(l mod 2)` to `4·(l mod 2) + 3` of byte `l / 2`, its width twice the code.
#[inline]
pub fn constant_widths(table: [u8; 2]) -> [u8; 4] {
    let [a, b] = table;
    [(a & 15) << 1, (a >> 4) << 1, (b & 15) << 1, (b >> 4) << 1]
}

/// Step of a rotation component quantised on `width` bits (4.1, 1 to
/// [`MAX_CONSTANT_WIDTH`]): `2 / (2^width − 1)` rounded to `f32` (one correctly
/// rounded `f32` division), over `[-1, 1]`. Width 16 gives [`ROTATION_STEP`].
#[inline]
pub fn constant_width_step(width: u8) -> f32 {
    // `width` is 2 to 24 in a validated clip; the mask keeps any other value from
    // overflowing the shift.
    2.0 / ((1u32 << (width & 31)).wrapping_sub(1)) as f32
}

/// Largest 16-bit quantised value: constants and clip ranges (3.0) are stored as
/// integers `q` in `0 ..= QUANTIZED_MAX` and decode as `q · step + base` (`f32`
/// multiplication, then addition).
pub const QUANTIZED_MAX: u32 = 65_535;
/// Step of a quantised rotation component (lists 0 and 1): `2 / 65535` rounded to
/// `f32`. Rotation components lie in `[-1, 1]`.
pub const ROTATION_STEP: f32 = 2.0 / 65_535.0;
/// Base of a quantised rotation component.
pub const ROTATION_BASE: f32 = -1.0;

/// The grid of a quantised translation or scale list (3.0): three `f32` bases, then
/// three `f32` steps; component `m` of a stored integer `q` decodes as
/// `q · step[m] + base[m]`.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct Grid {
    /// Value of integer 0, per component.
    pub base: [F32; 3],
    /// Distance between consecutive integers, per component (finite, at least 0).
    pub step: [F32; 3],
}

/// Size of [`Grid`].
pub const GRID_SIZE: usize = core::mem::size_of::<Grid>();
const _: () = assert!(GRID_SIZE == 24);

/// Does a list of `list`'s kind need a stored [`Grid`] when quantised? Rotations use
/// the fixed [`ROTATION_STEP`] and [`ROTATION_BASE`].
#[inline]
pub const fn has_grid(list: TrackList) -> bool {
    matches!(list, TrackList::Translation | TrackList::Scale)
}

/// Bytes of one constant of `list`: `c` raw `f32`, or `c` quantised `u16` (without
/// [`CONSTANT_WIDTHS`]).
#[inline]
pub const fn constant_size(list: TrackList, raw: bool) -> usize {
    // At most 4 · 4.
    #[allow(clippy::arithmetic_side_effects)]
    let size = list.components() as usize * if raw { 4 } else { 2 };
    size
}

/// Bit rates a segment may give an animated sub-track: 0 (constant within the
/// segment), 1 to 24 (quantised) or 32 (raw `f32`).
pub const MAX_QUANTIZED_BITS: u8 = 24;
/// The bit rate meaning "raw IEEE-754 single precision, no range reduction".
pub const RAW_BITS: u8 = 32;

/// The mask of a field `rate` bits wide, `2^rate − 1`: 0 for rate 0, every bit for
/// 32 (a raw `f32`) or more.
#[inline(always)]
pub const fn field_mask(rate: u32) -> u32 {
    match rate {
        0 => 0,
        1..=31 => u32::MAX >> (32u32.wrapping_sub(rate) & 31),
        _ => u32::MAX,
    }
}

/// The number of sample intervals a clip of `sample_count` stored samples plays:
/// `sample_count - 1` when it clamps, `sample_count` when it wraps (the interval from
/// the last stored sample back to the first).
#[inline]
pub const fn intervals(sample_count: u32, looping: Looping) -> u32 {
    match looping {
        Looping::Clamp => sample_count.saturating_sub(1),
        Looping::Wrap => sample_count,
    }
}

/// Duration in seconds of a clip of `sample_count` stored samples at `sample_rate`, as
/// every reader computes it: [`intervals`] converted to `f32`, divided by the rate
/// (0 for a single clamped sample). A header whose duration is not finite is invalid.
#[inline]
pub fn duration(sample_count: u32, sample_rate: f32, looping: Looping) -> f32 {
    intervals(sample_count, looping) as f32 / sample_rate
}

/// Is `bits` a bit rate the format allows?
#[inline]
pub const fn is_valid_bit_rate(bits: u8) -> bool {
    bits <= MAX_QUANTIZED_BITS || bits == RAW_BITS
}

/// The fixed 64-byte header at offset 0. All fields little-endian.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct ClipHeader {
    /// [`MAGIC`].
    pub magic: [u8; 4],
    /// [`VERSION_MAJOR`].
    pub version_major: U16,
    /// [`VERSION_MINOR`].
    pub version_minor: U16,
    /// Size of the whole buffer in bytes, a multiple of [`ALIGNMENT`].
    pub total_size: U32,
    /// FNV-1a (32-bit) of the whole buffer with this field read as zero.
    pub checksum: U32,
    /// `FLAG_*` bits.
    pub flags: U32,
    /// `KIND_*`.
    pub kind: u8,
    /// `ADDITIVE_*`.
    pub additive: u8,
    /// Samples per segment (1 to [`MAX_SEGMENT_LEN`]).
    pub segment_len: u8,
    /// (3.0) Bit `l` set: the constants of list `l` are raw `f32`; clear: quantised
    /// on 16 bits ([`RAW_CONSTANTS_MASK`]), or (4.1) on the list's width when bit 4
    /// ([`CONSTANT_WIDTHS`]) is set. Zero for a scalar track list.
    pub raw_constants: u8,
    /// Number of bones (transform tracks).
    pub bone_count: U32,
    /// Number of stored samples (at least 1): the original clip's, less the repeated
    /// last sample of a wrapping loop.
    pub sample_count: U32,
    /// Samples per second (finite, > 0).
    pub sample_rate: F32,
    /// Number of segments: `max(1, sample_count / segment_len)`.
    pub segment_count: U32,
    /// Offset of the track descriptions (bone bit sets and rank directories).
    pub tracks_offset: U32,
    /// Offset of the constant sub-track values.
    pub constants_offset: U32,
    /// Offset of the clip-wide ranges of animated sub-tracks.
    pub ranges_offset: U32,
    /// Offset of the segment table.
    pub segments_offset: U32,
    /// Offset of the metadata section, 0 when absent.
    pub metadata_offset: U32,
    /// Size of the metadata section, 0 when absent.
    pub metadata_size: U32,
}

/// Size of [`ClipHeader`] in bytes.
pub const HEADER_SIZE: usize = core::mem::size_of::<ClipHeader>();
const _: () = assert!(HEADER_SIZE == 64);

/// [`RootMotionBlock::options`]: the root's last source sample, dropped from a
/// wrapping loop's samples, is kept in the block's `end_*` fields, so that root motion
/// over the last interval and over whole loops is not lost. Only with [`FLAG_LOOP_WRAP`].
pub const ROOT_END_STORED: u32 = 1 << 0;
/// [`RootMotionBlock::options`]: the motion bone's pose plays in place: poses give it
/// the block's `in_place_*` transform (its first source sample), and its track is
/// the motion, read through the root-motion queries.
pub const ROOT_IN_PLACE: u32 = 1 << 1;
/// Every option bit a 2.1 decoder knows.
pub const ROOT_KNOWN_OPTIONS: u32 = ROOT_END_STORED | ROOT_IN_PLACE;

/// The root-motion block (2.1), at offset [`HEADER_SIZE`] when the header has
/// [`FLAG_ROOT_MOTION`]: these 16 bytes; the ancestor chain (`chain_len` `u32` bone
/// indices, outermost first, zero-padded to a multiple of four); a [`RootEnd`] with
/// [`ROOT_END_STORED`]; a [`RootInPlace`] with [`ROOT_IN_PLACE`]. Without it, the
/// root-motion bone is bone 0 (always a root: parents come before their children), its
/// pose is not in place, and a wrapping loop's motion ends where it started.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RootMotionBlock {
    /// The bone whose track is the root motion (below the bone count).
    pub motion_bone: U32,
    /// `ROOT_*` option bits.
    pub options: U32,
    /// Ancestors of the motion bone the motion is composed through (0 for a root, at
    /// most [`MAX_ROOT_CHAIN`]).
    pub chain_len: U32,
    /// Zero.
    pub reserved: U32,
}

/// The longest ancestor chain a root-motion bone may have: root-motion queries decode
/// one bone per ancestor, so their cost stays bounded.
pub const MAX_ROOT_CHAIN: u32 = 64;

/// The root's dropped last sample of a wrapping loop (32 bytes).
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RootEnd {
    /// Rotation `x, y, z, w` (finite, of positive finite squared length).
    pub rotation: [F32; 4],
    /// Translation (finite).
    pub translation: [F32; 3],
    /// Zero.
    pub reserved: U32,
}

/// The transform poses give an in-place root-motion bone (48 bytes).
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RootInPlace {
    /// Rotation `x, y, z, w` (finite, of positive finite squared length).
    pub rotation: [F32; 4],
    /// Translation (finite).
    pub translation: [F32; 3],
    /// Scale (finite).
    pub scale: [F32; 3],
    /// Zero.
    pub reserved: [U32; 2],
}

const _: () = assert!(core::mem::size_of::<RootMotionBlock>() == 16);
const _: () = assert!(core::mem::size_of::<RootEnd>() == 32);
const _: () = assert!(core::mem::size_of::<RootInPlace>() == 48);

/// Bytes of the root-motion block with option bits `options` and a chain of
/// `chain_len` ancestors (at most [`MAX_ROOT_CHAIN`]).
#[inline]
pub const fn root_motion_len(options: u32, chain_len: u32) -> usize {
    let end = if options & ROOT_END_STORED != 0 { core::mem::size_of::<RootEnd>() } else { 0 };
    let in_place = if options & ROOT_IN_PLACE != 0 { core::mem::size_of::<RootInPlace>() } else { 0 };
    // At most 16 + 4 · 64 + 32 + 48.
    #[allow(clippy::arithmetic_side_effects)]
    let len = core::mem::size_of::<RootMotionBlock>() + root_chain_len(chain_len) + end + in_place;
    len
}

/// Bytes of an ancestor chain of `chain_len` bones: four bytes each, padded to 16.
#[inline]
pub const fn root_chain_len(chain_len: u32) -> usize {
    let len = if chain_len > MAX_ROOT_CHAIN { MAX_ROOT_CHAIN } else { chain_len };
    // At most 4 · 64.
    #[allow(clippy::arithmetic_side_effects)]
    let bytes = (len as usize).div_ceil(4) * 16;
    bytes
}

/// One entry of the segment table.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct SegmentEntry {
    /// Offset of the segment's data (16-byte aligned).
    pub data_offset: U32,
    /// Bits of one key frame: the sum over animated sub-tracks of bit rate times
    /// component count. Redundant with the bit rates (and checked against them) so
    /// that seeking does not walk every sub-track.
    pub frame_bits: U32,
    /// Bit `i` set: key frame `i` of the segment is stored. Version 2.0 stores every
    /// key frame, so this is `(1 << samples_in_segment) - 1`; key-frame stripping and
    /// streaming tiers will clear bits.
    pub frames_present: U32,
}

/// Size of [`SegmentEntry`] in bytes.
pub const SEGMENT_ENTRY_SIZE: usize = core::mem::size_of::<SegmentEntry>();

/// The three sub-tracks of a bone. Their data is stored by [`TrackList`], which
/// follows this order (rotations, then translations, then scales).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SubTrackKind {
    /// Quaternion rotation.
    Rotation = 0,
    /// 3-D translation.
    Translation = 1,
    /// 3-D scale.
    Scale = 2,
}

impl SubTrackKind {
    /// The three kinds, in the order of their lists.
    pub const ALL: [SubTrackKind; 3] = [Self::Rotation, Self::Translation, Self::Scale];
}

/// How a sub-track is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SubTrackClass {
    /// Nothing stored: identity rotation, zero translation, unit scale.
    Default = 0,
    /// One value stored for the whole clip.
    Constant = 1,
    /// Stored per sample, range reduced and quantised per segment.
    Animated = 2,
}

/// The four lists sub-tracks are stored in, each in ascending bone order: rotations
/// stored with three components (`w` rebuilt), rotations stored with four,
/// translations, scales. Every list has a fixed component count, so a decoder knows
/// where the data of the `i`-th stored sub-track starts without looking at the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrackList {
    /// Rotations stored as `x, y, z` with `w >= 0` rebuilt.
    Rotation3 = 0,
    /// Rotations stored as `x, y, z, w`.
    Rotation4 = 1,
    /// Translations (`x, y, z`).
    Translation = 2,
    /// Scales (`x, y, z`).
    Scale = 3,
}

impl TrackList {
    /// The lists in storage order.
    pub const ALL: [TrackList; 4] = [Self::Rotation3, Self::Rotation4, Self::Translation, Self::Scale];

    /// The list numbered `index` (`TrackList as usize`; 3 and above give `Scale`):
    /// lets a list be a const generic parameter.
    #[inline]
    pub const fn from_index(index: usize) -> TrackList {
        match index {
            0 => Self::Rotation3,
            1 => Self::Rotation4,
            2 => Self::Translation,
            _ => Self::Scale,
        }
    }

    /// Components stored per sub-track of this list.
    #[inline]
    pub const fn components(self) -> u32 {
        match self {
            Self::Rotation4 => 4,
            _ => 3,
        }
    }

    /// The kind of sub-track this list holds.
    #[inline]
    pub const fn kind(self) -> SubTrackKind {
        match self {
            Self::Rotation3 | Self::Rotation4 => SubTrackKind::Rotation,
            Self::Translation => SubTrackKind::Translation,
            Self::Scale => SubTrackKind::Scale,
        }
    }

    /// The list of a sub-track of `kind` stored with `components` components.
    #[inline]
    pub const fn of(kind: SubTrackKind, components: u32) -> TrackList {
        match kind {
            SubTrackKind::Rotation if components == 4 => Self::Rotation4,
            SubTrackKind::Rotation => Self::Rotation3,
            SubTrackKind::Translation => Self::Translation,
            SubTrackKind::Scale => Self::Scale,
        }
    }

    /// The lists that can hold a sub-track of `kind`.
    #[inline]
    pub const fn of_kind(kind: SubTrackKind) -> &'static [TrackList] {
        match kind {
            SubTrackKind::Rotation => &[Self::Rotation3, Self::Rotation4],
            SubTrackKind::Translation => &[Self::Translation],
            SubTrackKind::Scale => &[Self::Scale],
        }
    }
}

/// Number of bone bit sets in the track descriptions: one per class stored (constant,
/// animated) and list, constant ones first.
pub const BITSET_COUNT: usize = 8;

/// Index of the bit set of `class` (constant or animated) and `list`.
#[inline]
pub const fn bitset_index(animated: bool, list: TrackList) -> usize {
    ((animated as usize) << 2) | list as usize
}

/// Bytes of one bone bit set: one bit per bone.
#[inline]
pub const fn bitset_len(bone_count: usize) -> usize {
    bone_count.div_ceil(8)
}

/// Bones per block of the rank directory: the number of set bits before a bone is a
/// directory entry plus a count over at most this many bits.
pub const RANK_BLOCK_BITS: usize = 256;

/// Entries of the rank directory of one bit set (blocks after the first).
#[inline]
pub const fn rank_entries(bone_count: usize) -> usize {
    bone_count.div_ceil(RANK_BLOCK_BITS).saturating_sub(1)
}

/// Bytes of the track-description section: the stored bit sets (`stored`, bit `s` for
/// set `s`: [`stored_sets`]), then their rank directories (`u16` each entry).
#[inline]
pub const fn track_section_len(bone_count: usize, stored: u8) -> usize {
    let n = stored.count_ones() as usize;
    let sets = bitset_len(bone_count).saturating_mul(n);
    sets.saturating_add(rank_entries(bone_count).saturating_mul(2).saturating_mul(n))
}

/// Animated sub-tracks per quad (4.0): a list's animated sub-tracks are stored four
/// at a time, each component of the four together, so that one load reads a
/// component of all four (format-spec/segments.md, Quads).
pub const QUAD_LANES: usize = 4;

/// Quads per block of a segment's frame directory: the bit offset of a quad in a key
/// frame is a directory entry plus a sum over the quads before it in its block.
pub const FRAME_BLOCK: usize = 64;

/// Number of quads of lists holding `counts` animated sub-tracks (each list's last
/// quad holds the one to four left).
#[inline]
pub fn quad_count(counts: impl IntoIterator<Item = usize>) -> usize {
    counts.into_iter().fold(0usize, |n, count| n.saturating_add(count.div_ceil(QUAD_LANES)))
}

/// Bytes of a segment's frame directory (`u32` entries, blocks after the first) for
/// `quads` quads.
#[inline]
pub const fn frame_directory_len(quads: usize) -> usize {
    quads.div_ceil(FRAME_BLOCK).saturating_sub(1).saturating_mul(4)
}

/// Number of segments of a clip: `max(1, sample_count / segment_len)`. Segment `i`
/// starts at sample `i * segment_len`; the last one also takes the remainder.
#[inline]
pub const fn segment_count(sample_count: u32, segment_len: u8) -> u32 {
    match sample_count.checked_div(segment_len as u32) {
        None => 0,
        Some(0) => 1,
        Some(n) => n,
    }
}

/// First sample and sample count of segment `index`.
#[inline]
pub const fn segment_span(index: u32, sample_count: u32, segment_len: u8) -> (u32, u32) {
    let count = segment_count(sample_count, segment_len);
    // Saturating: for a valid index every value is at most `sample_count`.
    let start = index.saturating_mul(segment_len as u32);
    let end = if index.saturating_add(1) >= count { sample_count } else { start.saturating_add(segment_len as u32) };
    (start, end.saturating_sub(start))
}

/// FNV-1a over `bytes`, with the header's checksum field (bytes 12..16) read as zero.
pub fn checksum(bytes: &[u8]) -> u32 {
    const OFFSET_BASIS: u32 = 0x811c_9dc5;
    const PRIME: u32 = 0x0100_0193;
    let mut hash = OFFSET_BASIS;
    for (i, &b) in bytes.iter().enumerate() {
        let b = if (12..16).contains(&i) { 0 } else { b };
        hash = (hash ^ u32::from(b)).wrapping_mul(PRIME);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cover_every_sample_once_with_at_most_31() {
        for n in 1..200u32 {
            let count = segment_count(n, DEFAULT_SEGMENT_LEN);
            let mut next = 0;
            for i in 0..count {
                let (start, len) = segment_span(i, n, DEFAULT_SEGMENT_LEN);
                assert_eq!(start, next);
                assert!((1..=31).contains(&len), "n={n} segment {i} has {len}");
                next += len;
            }
            assert_eq!(next, n);
        }
    }

    #[test]
    fn checksum_ignores_its_own_field_and_sees_every_byte() {
        let mut a = [7u8; 40];
        let base = checksum(&a);
        a[13] = 99;
        assert_eq!(checksum(&a), base);
        a[20] ^= 1;
        assert_ne!(checksum(&a), base);
        // FNV-1a of the empty input is the offset basis.
        assert_eq!(checksum(&[]), 0x811c_9dc5);
    }
}
