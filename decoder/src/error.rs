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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::Truncated { needed, available } => {
                write!(f, "truncated: {needed} bytes needed, {available} available")
            }
            Error::Misaligned => f.write_str("buffer does not start on a 16-byte boundary"),
            Error::BadMagic => f.write_str("not an ossa clip (bad magic)"),
            Error::UnsupportedVersion { major, minor } => write!(
                f,
                "unsupported format version {major}.{minor} (this decoder reads {}.0 to {}.{})",
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
        }
    }
}

impl core::error::Error for Error {}
