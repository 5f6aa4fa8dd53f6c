//! Typed errors: what was wrong with a buffer, with enough context to debug it.

use core::fmt;

/// A part of the buffer, named in errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// The 64-byte header.
    Header,
    /// The bone bit sets of the sub-track lists and their rank directories.
    Tracks,
    /// Constant sub-track values.
    Constants,
    /// Clip-wide ranges of animated sub-tracks.
    Ranges,
    /// The segment table.
    SegmentTable,
    /// One segment's data.
    Segment(u32),
    /// The optional metadata section.
    Metadata,
    /// The root-motion block after the header.
    RootMotion,
    /// The database reference after the header and root-motion block (3.1).
    ClipReference,
    /// A database index's header or the placement of its tables.
    DatabaseIndex,
    /// One entry of a database's clip table.
    DatabaseClip(u32),
    /// One entry of a database's chunk table (medium chunks first, then low).
    DatabaseChunk(u32),
    /// One entry of a database's segment table.
    DatabaseSegment(u32),
    /// One entry of a database's pose table, or its values.
    DatabasePose(u32),
    /// The values of a shared pose given to [`crate::SharedPose::from_bytes`].
    SharedPose,
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Section::Header => f.write_str("header"),
            Section::Tracks => f.write_str("track descriptions"),
            Section::Constants => f.write_str("constant values"),
            Section::Ranges => f.write_str("clip ranges"),
            Section::SegmentTable => f.write_str("segment table"),
            Section::Segment(i) => write!(f, "segment {i}"),
            Section::Metadata => f.write_str("metadata"),
            Section::RootMotion => f.write_str("root-motion block"),
            Section::ClipReference => f.write_str("database reference"),
            Section::DatabaseIndex => f.write_str("database index"),
            Section::DatabaseClip(i) => write!(f, "database clip {i}"),
            Section::DatabaseChunk(i) => write!(f, "database chunk {i}"),
            Section::DatabaseSegment(i) => write!(f, "database segment entry {i}"),
            Section::DatabasePose(i) => write!(f, "database shared pose {i}"),
            Section::SharedPose => f.write_str("shared pose"),
        }
    }
}

/// Why a buffer was refused by [`crate::Clip::from_bytes`], or why a request could not
/// be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The buffer is shorter than the header or than the size it declares.
    Truncated {
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// The buffer does not start on a 16-byte boundary.
    Misaligned,
    /// The first four bytes are not `OSSA`.
    BadMagic,
    /// A format version this decoder does not read.
    UnsupportedVersion {
        /// Major version found.
        major: u16,
        /// Minor version found.
        minor: u16,
    },
    /// The declared total size is smaller than the header or not a multiple of 16.
    BadTotalSize(u32),
    /// The stored checksum does not match the content: the buffer is corrupted.
    ChecksumMismatch {
        /// Checksum in the header.
        stored: u32,
        /// Checksum of the bytes.
        computed: u32,
    },
    /// Flag bits this version does not know.
    UnknownFlags(u32),
    /// A clip kind this version does not decode (scalar track lists come later).
    UnsupportedKind(u8),
    /// An additive mode this version does not decode.
    UnsupportedAdditive(u8),
    /// A reserved field or padding bit is not zero.
    NonZeroReserved(Section),
    /// Bone, sample or segment counts are out of the format's limits or inconsistent.
    BadCounts,
    /// The sample rate is not a finite positive number, or the duration it gives
    /// (`(sample_count - 1) / sample_rate` in `f32`) is not finite.
    BadSampleRate,
    /// A section lies outside the buffer.
    OutOfBounds(Section),
    /// A section does not start on a 16-byte boundary.
    SectionMisaligned(Section),
    /// A bone's sub-track is in more than one list (constant and animated, or stored
    /// with both three and four components).
    BadSubTrack {
        /// Bone index.
        bone: u32,
    },
    /// A stored value (constant, range, metadata float) is NaN, infinite or a
    /// negative extent.
    BadValue(Section),
    /// A segment uses a bit rate the format does not allow.
    BadBitRate {
        /// Segment index.
        segment: u32,
        /// Index of the animated sub-track.
        sub_track: u32,
        /// The bit rate found.
        bits: u8,
    },
    /// A segment's key-frame bit set or frame size disagrees with its bit rates.
    BadSegment(u32),
    /// An index directory (a rank directory of the track descriptions, or a segment's
    /// frame directory) disagrees with the data it indexes.
    BadDirectory(Section),
    /// The metadata section is malformed.
    BadMetadata,
    /// A bone index past the clip's bone count.
    BoneOutOfRange {
        /// Index asked for.
        index: u32,
        /// Bones in the clip.
        bone_count: u32,
    },
    /// The bones of a [`crate::Subset`] are not in strictly ascending order.
    BonesNotAscending {
        /// The first bone not above the one before it.
        index: u32,
    },
    /// More bones than a [`crate::Subset`] has room for.
    SubsetFull {
        /// Its capacity.
        capacity: u32,
    },
    /// A [`crate::Subset`] used with a clip other than the one it was built for.
    SubsetOfAnotherClip,
    /// The float slice given to [`crate::ScalarSampler::decompress_tracks`] is shorter
    /// than the list's output slots times its components.
    FloatOutputTooSmall {
        /// Floats provided.
        len: u32,
        /// Floats needed.
        needed: u32,
    },
    /// The output slice is shorter than the clip's bone count.
    OutputTooSmall {
        /// Slots provided.
        len: u32,
        /// Bones in the clip.
        bone_count: u32,
    },
    /// The first four bytes of a database index are not `OSDB`.
    NotADatabase,
    /// A database format version this decoder does not read.
    UnsupportedDatabaseVersion {
        /// Major version found.
        major: u16,
        /// Minor version found.
        minor: u16,
    },
    /// The clip cannot be bound to the database: why.
    NotInDatabase(Mismatch),
    /// What a database's tiers hold of a clip's segment contradicts the clip: a key
    /// frame in a tier that the clip stores, or past the segment's end, or its last
    /// frame, or tier data that does not fit its chunk.
    BadTierFrames {
        /// The clip's segment.
        segment: u32,
    },
    /// No chunk of that index in that tier of the database.
    NoSuchChunk {
        /// The tier (0 medium, 1 low).
        tier: u8,
        /// The chunk asked for.
        chunk: u32,
    },
    /// The bytes given for a chunk are fewer than the database says it holds.
    ChunkTooShort {
        /// The tier (0 medium, 1 low).
        tier: u8,
        /// The chunk.
        chunk: u32,
        /// Its size in the database.
        needed: u32,
        /// Bytes given.
        available: u64,
    },
    /// The bytes given for a chunk do not have its checksum.
    ChunkChecksumMismatch {
        /// The tier (0 medium, 1 low).
        tier: u8,
        /// The chunk.
        chunk: u32,
    },
    /// The database has more chunks than a [`crate::Residency`] has room for.
    TooManyChunks {
        /// Chunks over both tiers.
        chunks: u32,
        /// The residency's capacity.
        capacity: u32,
    },
    /// A [`crate::Binding`] or [`crate::Residency`] used with a clip or database other
    /// than its own.
    OtherClipOrDatabase,
    /// The clip's default sub-tracks take their values from its database's shared
    /// pose (flag SHARED_POSE): open it with [`crate::Database::open_clip`] or
    /// [`crate::Clip::from_bytes_with_pose`].
    NeedsSharedPose,
    /// The shared pose given for a clip has another bone count.
    SharedPoseMismatch {
        /// Bones in the pose.
        pose_bones: u32,
        /// Bones in the clip.
        bone_count: u32,
    },
}

/// Why a clip is not part of a database ([`Error::NotInDatabase`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// The clip has no database reference (it was compressed on its own).
    NoReference,
    /// The clip names another database (its id is not this one's).
    OtherDatabase,
    /// The clip's index is past the database's clip count.
    IndexOutOfRange,
    /// The clip's checksum or segment count differs from the database's record: one
    /// of the two was rebuilt without the other.
    Rebuilt,
    /// The clip's shared pose is past the database's pose count.
    PoseOutOfRange,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mismatch::NoReference => "the clip has no database reference (it was compressed on its own)",
            Mismatch::OtherDatabase => "the clip belongs to another database",
            Mismatch::IndexOutOfRange => "the clip's index is past the database's clip count",
            Mismatch::Rebuilt => {
                "the clip differs from the database's record of it (one was rebuilt without the other)"
            }
            Mismatch::PoseOutOfRange => "the clip's shared pose is past the database's pose count",
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::Truncated { needed, available } => {
                write!(f, "truncated: {needed} bytes needed, {available} available")
            }
            Error::Misaligned => f.write_str("buffer does not start on a 16-byte boundary"),
            Error::BadMagic => f.write_str("not an ossa clip (bad magic)"),
            Error::UnsupportedVersion { major, minor } if major < crate::format::VERSION_MAJOR => write!(
                f,
                "format version {major}.{minor} is older than this decoder reads ({}.0 to {}.{}): compress the \
                 source clip again",
                crate::format::VERSION_MAJOR,
                crate::format::VERSION_MAJOR,
                crate::format::VERSION_MINOR
            ),
            Error::UnsupportedVersion { major, minor } => write!(
                f,
                "unsupported format version {major}.{minor} (this decoder reads {}.0 to {}.{}): a newer ossa \
                 wrote it",
                crate::format::VERSION_MAJOR,
                crate::format::VERSION_MAJOR,
                crate::format::VERSION_MINOR
            ),
            Error::BadTotalSize(s) => write!(f, "bad total size {s}"),
            Error::ChecksumMismatch { stored, computed } => {
                write!(f, "corrupted: checksum {computed:#010x} does not match stored {stored:#010x}")
            }
            Error::UnknownFlags(x) => write!(f, "unknown flags {x:#x}"),
            Error::UnsupportedKind(k) => write!(f, "unsupported clip kind {k}"),
            Error::UnsupportedAdditive(k) => write!(f, "unsupported additive mode {k}"),
            Error::NonZeroReserved(s) => write!(f, "reserved bits set in {s}"),
            Error::BadCounts => f.write_str("bone, sample or segment counts are invalid"),
            Error::BadSampleRate => {
                f.write_str("sample rate is not a finite positive number, or so small that the duration overflows")
            }
            Error::OutOfBounds(s) => write!(f, "{s} lies outside the buffer"),
            Error::SectionMisaligned(s) => write!(f, "{s} is not 16-byte aligned"),
            Error::BadSubTrack { bone } => write!(f, "invalid sub-track description for bone {bone}"),
            Error::BadValue(s) => write!(f, "non-finite or invalid value in {s}"),
            Error::BadBitRate { segment, sub_track, bits } => {
                write!(f, "segment {segment}: animated sub-track {sub_track} has invalid bit rate {bits}")
            }
            Error::BadSegment(i) => write!(f, "segment {i}: key frames or frame size are inconsistent"),
            Error::BadDirectory(s) => write!(f, "the index directory of {s} disagrees with its data"),
            Error::BadMetadata => f.write_str("malformed metadata section"),
            Error::BoneOutOfRange { index, bone_count } => {
                write!(f, "bone {index} out of range (clip has {bone_count} bones)")
            }
            Error::BonesNotAscending { index } => {
                write!(f, "subset bones not in strictly ascending order at bone {index}")
            }
            Error::SubsetFull { capacity } => write!(f, "more bones than the subset's capacity of {capacity}"),
            Error::SubsetOfAnotherClip => f.write_str("the subset was built for another clip"),
            Error::FloatOutputTooSmall { len, needed } => {
                write!(f, "output holds {len} floats, the track list needs {needed}")
            }
            Error::OutputTooSmall { len, bone_count } => {
                write!(f, "output holds {len} transforms, clip has {bone_count} bones")
            }
            Error::NotADatabase => f.write_str("not an ossa database (bad magic)"),
            Error::UnsupportedDatabaseVersion { major, minor } => write!(
                f,
                "unsupported database version {major}.{minor} (this decoder reads {}.0 to {}.{})",
                crate::format::database::DATABASE_VERSION_MAJOR,
                crate::format::database::DATABASE_VERSION_MAJOR,
                crate::format::database::DATABASE_VERSION_MINOR
            ),
            Error::NotInDatabase(why) => write!(f, "clip not in this database: {why}"),
            Error::BadTierFrames { segment } => {
                write!(f, "segment {segment}: the database's tiers contradict the clip's key frames")
            }
            Error::NoSuchChunk { tier, chunk } => {
                write!(f, "the {} tier has no chunk {chunk}", crate::format::database::tier_name(tier as usize))
            }
            Error::ChunkTooShort { tier, chunk, needed, available } => write!(
                f,
                "{} chunk {chunk}: {available} bytes given, the database says it holds {needed}",
                crate::format::database::tier_name(tier as usize)
            ),
            Error::ChunkChecksumMismatch { tier, chunk } => write!(
                f,
                "{} chunk {chunk} is corrupted: its checksum differs from the database's",
                crate::format::database::tier_name(tier as usize)
            ),
            Error::TooManyChunks { chunks, capacity } => {
                write!(f, "the database has {chunks} chunks, the residency has room for {capacity}")
            }
            Error::OtherClipOrDatabase => f.write_str("binding or residency of another clip or database"),
            Error::NeedsSharedPose => f.write_str(
                "the clip's default values are in its database's shared pose: it decodes only with its database",
            ),
            Error::SharedPoseMismatch { pose_bones, bone_count } => {
                write!(f, "the shared pose has {pose_bones} bones, the clip {bone_count}")
            }
        }
    }
}

impl core::error::Error for Error {}
