//! The binary layout of a streaming database (`.ossadb`) and of the reference a clip
//! keeps to it (`format-spec/database.md` is the normative text).
//!
//! A database holds the key frames its clips leave out, in two quality tiers
//! ([`TIER_MEDIUM`], [`TIER_LOW`]), each laid out in chunks that a game streams in
//! bulk. The *index* (header, clip table, chunk table, segment table, shared poses,
//! names) stays in memory; the chunks follow it in the file and come and go at run
//! time. A *shared pose* holds, per bone, the values its clips' default sub-tracks
//! take ([`super::FLAG_SHARED_POSE`]): the constants clips of one skeleton have in
//! common, stored once.

use zerocopy::little_endian::{F32, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// The four bytes every database starts with.
pub const DATABASE_MAGIC: [u8; 4] = *b"OSDB";
/// The database format's major version. Other majors are refused.
pub const DATABASE_VERSION_MAJOR: u16 = 1;
/// The newest database minor version this crate knows (newer ones are refused).
pub const DATABASE_VERSION_MINOR: u16 = 0;

/// Tier index of the medium-importance key frames (streamed for medium and highest
/// fidelity).
pub const TIER_MEDIUM: usize = 0;
/// Tier index of the low-importance key frames (streamed for highest fidelity).
pub const TIER_LOW: usize = 1;
/// Number of tiers.
pub const TIER_COUNT: usize = 2;

/// [`DatabaseHeader::flags`]: the low tier was stripped when the database was built
/// (its key frames are gone; the highest fidelity is the medium one).
pub const DATABASE_LOW_STRIPPED: u32 = 1 << 0;
/// Every flag a 1.0 decoder knows.
pub const DATABASE_KNOWN_FLAGS: u32 = DATABASE_LOW_STRIPPED;

/// The smallest chunk size, as a power of two (256 bytes).
pub const MIN_CHUNK_SHIFT: u8 = 8;
/// The largest chunk size, as a power of two (1 GiB).
pub const MAX_CHUNK_SHIFT: u8 = 30;
/// The chunk size the encoder uses unless told otherwise (1 MiB).
pub const DEFAULT_CHUNK_SHIFT: u8 = 20;

/// The fixed 80-byte header at offset 0 of a database index.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct DatabaseHeader {
    /// [`DATABASE_MAGIC`].
    pub magic: [u8; 4],
    /// [`DATABASE_VERSION_MAJOR`].
    pub version_major: U16,
    /// [`DATABASE_VERSION_MINOR`].
    pub version_minor: U16,
    /// Bytes of the index (this header and every table, not the chunks), a multiple
    /// of 16.
    pub index_size: U32,
    /// FNV-1a (32-bit) of the index with this field read as zero.
    pub checksum: U32,
    /// Identifies the database; every clip of it stores the same value
    /// ([`ClipReference::database_id`]).
    pub database_id: U64,
    /// `DATABASE_*` flag bits.
    pub flags: U32,
    /// Number of clips.
    pub clip_count: U32,
    /// Number of entries of the segment table (the clips' segments, clip by clip).
    pub segment_count: U32,
    /// Chunk size `2^chunk_shift` bytes, [`MIN_CHUNK_SHIFT`] to [`MAX_CHUNK_SHIFT`].
    pub chunk_shift: u8,
    /// Zero.
    pub reserved: [u8; 3],
    /// Chunks of each tier ([`TIER_MEDIUM`], [`TIER_LOW`]).
    pub chunk_counts: [U32; TIER_COUNT],
    /// Offset of the clip table ([`ClipEntry`] per clip).
    pub clips_offset: U32,
    /// Offset of the chunk table ([`ChunkEntry`] per chunk: the medium tier's, then
    /// the low tier's).
    pub chunks_offset: U32,
    /// Offset of the segment table ([`TierSegment`] per segment).
    pub segments_offset: U32,
    /// Offset of the names section (to the end of the index).
    pub names_offset: U32,
    /// Number of shared poses.
    pub pose_count: U32,
    /// Offset of the pose table ([`PoseEntry`] per pose).
    pub poses_offset: U32,
    /// Zero.
    pub reserved_end: [u8; 8],
}

/// Size of [`DatabaseHeader`] in bytes.
pub const DATABASE_HEADER_SIZE: usize = core::mem::size_of::<DatabaseHeader>();
const _: () = assert!(DATABASE_HEADER_SIZE == 80);

/// One clip of a database.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct ClipEntry {
    /// The clip's header checksum: binding refuses a clip rebuilt since.
    pub clip_checksum: U32,
    /// The clip's segment count.
    pub segment_count: U32,
    /// Index of its first entry in the segment table.
    pub first_segment: U32,
    /// Offset, inside the names section, of its name (`u16` length, then UTF-8).
    pub name_at: U32,
}

/// One chunk of a tier.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct ChunkEntry {
    /// Where the chunk's bytes start in the database file (after the index).
    pub file_offset: U64,
    /// Its size in bytes (at most the chunk size; its last 8 bytes are read slack).
    pub size: U32,
    /// FNV-1a (32-bit) of its bytes.
    pub checksum: U32,
}

/// What the tiers hold of one segment of a clip.
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct TierSegment {
    /// Per tier, bit `j`: the tier holds local key frame `j` of the segment.
    pub present: [U32; TIER_COUNT],
    /// Per tier, where its key frames of the segment start in the tier: chunk
    /// `at >> chunk_shift`, byte `at & (2^chunk_shift − 1)` of it (0 when none).
    pub at: [U32; TIER_COUNT],
}

/// One shared pose of a database: where its values are.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct PoseEntry {
    /// Offset in the index of its values: [`POSE_BONE_SIZE`] bytes per bone.
    pub values_offset: U32,
    /// The bones it has values for (the bone count of the clips using it).
    pub bone_count: U32,
    /// Zero.
    pub reserved: [U32; 2],
}

/// One bone's values in a shared pose: what its default sub-tracks decode to.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct PoseBone {
    /// Rotation `x, y, z, w`.
    pub rotation: [F32; 4],
    /// Translation `x, y, z`.
    pub translation: [F32; 3],
    /// Scale `x, y, z`.
    pub scale: [F32; 3],
}

/// Bytes of one bone's values in a shared pose ([`PoseBone`]).
pub const POSE_BONE_SIZE: usize = core::mem::size_of::<PoseBone>();
const _: () = assert!(POSE_BONE_SIZE == 40);

/// Size of the per-entry records.
pub const CLIP_ENTRY_SIZE: usize = core::mem::size_of::<ClipEntry>();
/// See [`CLIP_ENTRY_SIZE`].
pub const CHUNK_ENTRY_SIZE: usize = core::mem::size_of::<ChunkEntry>();
/// See [`CLIP_ENTRY_SIZE`].
pub const TIER_SEGMENT_SIZE: usize = core::mem::size_of::<TierSegment>();
/// See [`CLIP_ENTRY_SIZE`].
pub const POSE_ENTRY_SIZE: usize = core::mem::size_of::<PoseEntry>();

/// The reference a clip of a database keeps (3.1, [`super::FLAG_DATABASE`]): 16 bytes
/// after the header and the root-motion block.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct ClipReference {
    /// [`DatabaseHeader::database_id`] of its database.
    pub database_id: U64,
    /// Its index in the database's clip table.
    pub clip_index: U32,
    /// With [`super::FLAG_SHARED_POSE`], the index of the database's shared pose that
    /// gives its default sub-tracks their values; zero without it.
    pub shared_pose: U32,
}

/// Size of [`ClipReference`] in bytes.
pub const CLIP_REFERENCE_SIZE: usize = core::mem::size_of::<ClipReference>();

/// FNV-1a, 64-bit, of `bytes` (the reference encoder's database id).
pub fn fnv1a_64(bytes: &[u8], mut hash: u64) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    for &b in bytes {
        hash = (hash ^ u64::from(b)).wrapping_mul(PRIME);
    }
    hash
}

/// FNV-1a 64's starting value.
pub const FNV64_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// The database index's checksum: FNV-1a (32-bit) with bytes 12..16 read as zero (the
/// same function as a clip's, [`super::checksum`]).
pub fn index_checksum(index: &[u8]) -> u32 {
    super::checksum(index)
}

/// Name for a tier index, in messages.
pub const fn tier_name(tier: usize) -> &'static str {
    if tier == TIER_MEDIUM {
        "medium"
    } else {
        "low"
    }
}
