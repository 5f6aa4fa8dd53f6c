//! Streaming databases (seed 002, "Controlling animation quality through
//! streaming"): many clips compressed together, their least important key frames
//! moved out of the clips into two quality tiers that a game streams in and out.
//!
//! Each clip is compressed as on its own (the bound holds with every key frame
//! present), its stored key frames are ranked by the object-space error their removal
//! causes ([`crate::compress::Encoded::ranking`]), the tiers take the least important
//! shares over the whole database ([`partition`]), each tier's key frames are laid out
//! in chunks ([`chunks`]), and the clips are written again without them, each naming
//! the database ([`index`] writes the database itself). Clips of one skeleton share
//! their common constants through a shared pose of the database ([`poses`]), chosen
//! before they are compressed. Every clip is then measured through the decoder at the
//! three fidelities: the clip alone, with the medium tier, with both.

pub mod chunks;
pub mod index;
pub mod partition;
pub mod poses;

use std::fmt;
use std::sync::Arc;

use ossa_decoder::format::database::{fnv1a_64, TierSegment, DATABASE_LOW_STRIPPED, FNV64_OFFSET_BASIS};
use ossa_decoder::{Database, Residency, Slot, Tier};
use rayon::prelude::*;
use zerocopy::little_endian::U32;
use zerocopy::IntoBytes;

use crate::aligned::AlignedBytes;
use crate::compress::{encode, open, CompressError, Encoded, ErrorStats, Settings};
use crate::measure::{measure_clip, MeasureError};
use crate::memory::OutOfMemory;
use crate::playback::Playback;
use crate::raw_clip::RawClip;

/// How to build a database.
#[derive(Clone, Debug, PartialEq)]
pub struct DatabaseSettings {
    /// How each clip is compressed (its precision is the bound at the highest
    /// fidelity).
    pub compression: Settings,
    /// Share (0 to 1) of all stored key frames the medium tier receives.
    pub medium: f64,
    /// Share (0 to 1) of all stored key frames the low tier receives.
    pub low: f64,
    /// Chunk size as a power of two ([`ossa_decoder::format::database::MIN_CHUNK_SHIFT`]
    /// to `MAX_CHUNK_SHIFT`; default 20, 1 MiB).
    pub chunk_shift: u8,
    /// Leave the low tier out: its key frames are dropped, and the medium fidelity is
    /// the highest.
    pub strip_lowest: bool,
    /// When the constants that clips of one skeleton share are stored once, in a
    /// shared pose of the database ([`poses`]; by default when that saves bytes).
    /// Clips with a pose decode only with the database's index;
    /// [`poses::PosePolicy::Never`] keeps every clip decodable on its own.
    pub shared_poses: poses::PosePolicy,
}

impl Default for DatabaseSettings {
    fn default() -> Self {
        DatabaseSettings {
            compression: Settings::default(),
            medium: 0.25,
            low: 0.25,
            chunk_shift: ossa_decoder::format::database::DEFAULT_CHUNK_SHIFT,
            strip_lowest: false,
            shared_poses: poses::PosePolicy::Auto,
        }
    }
}

/// The three visual fidelities (seed 002).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fidelity {
    /// The clips alone.
    Lowest,
    /// The clips and the medium tier.
    Medium,
    /// The clips and every tier the database holds.
    Highest,
}

impl Fidelity {
    /// Lowest to highest.
    pub const ALL: [Fidelity; 3] = [Fidelity::Lowest, Fidelity::Medium, Fidelity::Highest];

    /// `"lowest"`, `"medium"` or `"highest"`.
    pub fn name(self) -> &'static str {
        match self {
            Fidelity::Lowest => "lowest",
            Fidelity::Medium => "medium",
            Fidelity::Highest => "highest",
        }
    }

    /// The tiers resident at this fidelity.
    pub fn tiers(self) -> &'static [Tier] {
        match self {
            Fidelity::Lowest => &[],
            Fidelity::Medium => &[Tier::Medium],
            Fidelity::Highest => &[Tier::Medium, Tier::Low],
        }
    }
}

/// One clip of a built database.
#[derive(Clone, Debug)]
pub struct DatabaseClipResult {
    /// Its name (unique in the database).
    pub name: String,
    /// The clip's `.ossa` bytes, naming the database.
    pub bytes: AlignedBytes,
    /// Bytes a game ships (without the metadata section).
    pub compressed_bytes: usize,
    /// The size of the same clip compressed on its own: every key frame in it, and
    /// its constants in it rather than in a shared pose (what it would cost outside
    /// the database).
    pub standalone_bytes: usize,
    /// The shared pose its default sub-tracks take their values from, if any.
    pub shared_pose: Option<u32>,
    /// Key frames stored over the clip and every tier (what it stores on its own).
    pub stored_frames: usize,
    /// Key frames the clip keeps.
    pub clip_frames: usize,
    /// Key frames each tier holds (medium, low; the low ones are dropped with
    /// [`DatabaseSettings::strip_lowest`]).
    pub tier_frames: [usize; 2],
    /// The error at each fidelity ([`Fidelity::ALL`] order), measured through the
    /// decoder at every sample of every bone.
    pub errors: [ErrorStats; 3],
}

/// What one tier holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TierSummary {
    /// Key frames over every clip.
    pub frames: usize,
    /// Bytes of its chunks.
    pub bytes: usize,
    /// Chunks.
    pub chunks: usize,
    /// Whether it was stripped (its key frames dropped).
    pub stripped: bool,
}

/// A built database.
#[derive(Clone, Debug)]
pub struct BuiltDatabase {
    /// The clips, in input order.
    pub clips: Vec<DatabaseClipResult>,
    /// The `.ossadb` file: index, then chunks.
    pub file: Vec<u8>,
    /// Bytes of its index (what stays in memory).
    pub index_size: usize,
    /// The medium and low tiers.
    pub tiers: [TierSummary; 2],
    /// The shared poses: how many, and their bytes in the index (values only).
    pub poses: usize,
    /// See [`BuiltDatabase::poses`].
    pub pose_bytes: usize,
    /// The database's id.
    pub id: u64,
}

/// Why a database could not be built.
#[derive(Debug)]
pub enum DatabaseError {
    /// No clip was given.
    NoClips,
    /// Two clips have the same name (their output files would collide).
    DuplicateName(String),
    /// A tier share is not a number from 0 to 1, or the two add up to more than 1.
    BadShares {
        /// Medium share.
        medium: f64,
        /// Low share.
        low: f64,
    },
    /// The chunk size is outside the format's range.
    BadChunkSize(u8),
    /// A clip could not be compressed.
    Clip {
        /// Its name.
        name: String,
        /// Why.
        error: CompressError,
    },
    /// A clip segment's key frames of a tier do not fit in one chunk.
    ChunkTooSmall {
        /// The clip.
        clip: String,
        /// The segment.
        segment: usize,
        /// Bytes it needs (with the read slack).
        needed: usize,
        /// The chunk size.
        chunk_size: usize,
    },
    /// A tier is larger than its 32-bit locations address (4 GiB).
    TierTooLarge(Tier),
    /// The system refused memory.
    OutOfMemory(OutOfMemory),
    /// A bug: the decoder refused what was built.
    Internal(String),
}

impl fmt::Display for DatabaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatabaseError::NoClips => f.write_str("a database needs at least one clip"),
            DatabaseError::DuplicateName(name) => {
                write!(f, "two clips are named '{}': their output files would collide", crate::message::name(name))
            }
            DatabaseError::BadShares { medium, low } => write!(
                f,
                "tier shares medium={} low={} are not valid: each must be from 0 to 1, and together at most 1",
                crate::message::number(*medium),
                crate::message::number(*low)
            ),
            DatabaseError::BadChunkSize(shift) => write!(
                f,
                "chunk size 2^{shift} is not valid: it must be a power of two from {} B to {} GiB",
                1u32 << ossa_decoder::format::database::MIN_CHUNK_SHIFT,
                1u32 << (ossa_decoder::format::database::MAX_CHUNK_SHIFT - 30)
            ),
            DatabaseError::Clip { name, error } => write!(f, "{}: {error}", crate::message::name(name)),
            DatabaseError::ChunkTooSmall { clip, segment, needed, chunk_size } => write!(
                f,
                "{}: segment {segment} puts {needed} bytes in one tier, more than a chunk of {chunk_size} bytes; \
                 use a larger --chunk-size",
                crate::message::name(clip)
            ),
            DatabaseError::TierTooLarge(tier) => {
                write!(f, "the {} tier exceeds 4 GiB; split the clips into several databases", tier.name())
            }
            DatabaseError::OutOfMemory(e) => e.fmt(f),
            DatabaseError::Internal(e) => write!(f, "internal error (please report): {e}"),
        }
    }
}

impl std::error::Error for DatabaseError {}

impl From<OutOfMemory> for DatabaseError {
    fn from(e: OutOfMemory) -> Self {
        DatabaseError::OutOfMemory(e)
    }
}

/// One clip of a database to build, with its own compression settings.
#[derive(Clone, Copy, Debug)]
pub struct ClipInput<'a> {
    /// Its name (unique in the database).
    pub name: &'a str,
    /// The clip.
    pub clip: &'a RawClip,
    /// How it is compressed (root-motion bone, looping…; its precision is its bound
    /// at the highest fidelity).
    pub settings: &'a Settings,
}

/// Builds a database from `clips` (name and clip each), every clip compressed with
/// `settings.compression`.
pub fn build(clips: &[(String, RawClip)], settings: &DatabaseSettings) -> Result<BuiltDatabase, DatabaseError> {
    let inputs: Vec<ClipInput<'_>> =
        clips.iter().map(|(name, clip)| ClipInput { name, clip, settings: &settings.compression }).collect();
    build_each(&inputs, settings)
}

/// Builds a database from `clips`, each compressed with its own settings
/// (`settings.compression` is not used).
pub fn build_each(clips: &[ClipInput<'_>], settings: &DatabaseSettings) -> Result<BuiltDatabase, DatabaseError> {
    check(clips, settings)?;
    let plan = poses::choose(clips, settings.shared_poses)?;
    // Every clip compressed as on its own (with its shared pose), and its stored key
    // frames ranked.
    // A clip with a shared pose is also compressed without it, for its size on its
    // own.
    let encoded: Vec<(Encoded<'_>, Vec<partition::Ranking>, usize)> = clips
        .par_iter()
        .zip(&plan.of_clip)
        .map(|(input, pose)| {
            let failed = |error| DatabaseError::Clip { name: input.name.to_owned(), error };
            let (encoded, alone) = match pose {
                Some(pose) => {
                    let own = Settings { shared_pose: Some(Arc::clone(pose)), ..input.settings.clone() };
                    let alone = crate::compress(input.clip, input.settings).map_err(failed)?.compressed_bytes;
                    (encode(input.clip, &own).map_err(failed)?, alone)
                }
                None => {
                    let encoded = encode(input.clip, input.settings).map_err(failed)?;
                    let alone = encoded.compressed.compressed_bytes;
                    (encoded, alone)
                }
            };
            let ranking = encoded.ranking();
            Ok((encoded, ranking, alone))
        })
        .collect::<Result<_, DatabaseError>>()?;
    let stored: usize = encoded.iter().flat_map(|(e, _, _)| e.kept.iter()).map(|k| k.count_ones() as usize).sum();
    let rankings: Vec<Vec<partition::Ranking>> = encoded.iter().map(|(_, r, _)| r.clone()).collect();
    let assignment = partition::assign(&rankings, stored, settings.medium, settings.low);

    // Each tier's pieces (clip by clip, segment by segment), laid out in chunks.
    let tiers_kept = if settings.strip_lowest { 1 } else { 2 };
    let mut packed: Vec<chunks::Packed> = Vec::new();
    for t in 0..2 {
        let pieces: Vec<Option<Vec<u8>>> = encoded
            .iter()
            .zip(&assignment)
            .flat_map(|((e, _, _), segments)| {
                segments
                    .iter()
                    .enumerate()
                    .map(move |(s, tiers)| (t < tiers_kept && tiers[t] != 0).then(|| e.frame_bits(s, tiers[t])))
            })
            .collect();
        let tier = Tier::ALL[t];
        packed.push(chunks::pack(&pieces, settings.chunk_shift).map_err(|e| match e {
            chunks::PackError::PieceTooLarge { index, needed } => {
                let (clip, segment) = locate_piece(&assignment, index);
                DatabaseError::ChunkTooSmall {
                    clip: clips[clip].name.to_owned(),
                    segment,
                    needed,
                    chunk_size: 1 << settings.chunk_shift,
                }
            }
            chunks::PackError::TooManyChunks => DatabaseError::TierTooLarge(tier),
        })?);
    }

    // The segment table, clip by clip.
    let mut segments: Vec<TierSegment> = Vec::new();
    for segment_tiers in assignment.iter().flatten() {
        let i = segments.len();
        let present = |t: usize| if t < tiers_kept { segment_tiers[t] } else { 0 };
        segments.push(TierSegment {
            present: [U32::new(present(0)), U32::new(present(1))],
            at: [U32::new(packed[0].locations[i]), U32::new(packed[1].locations[i])],
        });
    }
    let names: Vec<&str> = clips.iter().map(|c| c.name).collect();
    let (name_bytes, _) = index::names(&names);
    let id = packed
        .iter()
        .flat_map(|p| p.chunks.iter())
        .map(|c| &c[..])
        .chain([segments.as_bytes()])
        .chain(plan.poses.iter().map(|p| p.bytes()))
        .chain([&name_bytes[..]])
        .fold(FNV64_OFFSET_BASIS, |h, part| fnv1a_64(part, h));

    // The clips again, each keeping what no tier took and naming the database.
    let written: Vec<AlignedBytes> = encoded
        .par_iter()
        .zip(&assignment)
        .enumerate()
        .map(|(i, ((e, _, _), tiers))| {
            let kept: Vec<u32> = e.kept.iter().zip(tiers).map(|(&k, t)| k & !(t[0] | t[1])).collect();
            Ok(AlignedBytes::try_new(&e.write(&kept, Some((id, i as u32)))?)?)
        })
        .collect::<Result<_, DatabaseError>>()?;

    let mut records = Vec::with_capacity(clips.len());
    let mut first_segment = 0u32;
    for ((input, bytes), (e, _, _)) in clips.iter().zip(&written).zip(&encoded) {
        let clip = open(bytes, e.shared_pose.as_deref()).map_err(|e| DatabaseError::Internal(e.to_string()))?;
        records.push(index::ClipRecord {
            name: input.name,
            checksum: clip.checksum(),
            segment_count: clip.segment_count(),
            first_segment,
        });
        first_segment += clip.segment_count();
    }
    let chunk_lists: [&[Vec<u8>]; 2] = [&packed[0].chunks, &packed[1].chunks];
    let (file, index_size) = index::write(&index::Contents {
        database_id: id,
        flags: if settings.strip_lowest { DATABASE_LOW_STRIPPED } else { 0 },
        chunk_shift: settings.chunk_shift,
        clips: records,
        chunks: chunk_lists,
        segments: &segments,
        poses: plan.poses.iter().map(|p| p.bytes()).collect(),
    });

    // Every clip measured at the three fidelities, through the decoder.
    let database = Database::from_bytes_verified(&file).map_err(|e| DatabaseError::Internal(e.to_string()))?;
    let [lowest, medium, highest] = Fidelity::ALL.map(|f| resident(&database, &file, f));
    let residencies = [lowest?, medium?, highest?];
    let results: Vec<DatabaseClipResult> = encoded
        .par_iter()
        .zip(&written)
        .zip(&assignment)
        .zip(clips)
        .map(|((((e, _, alone), bytes), tiers), input)| {
            let errors = residencies.each_ref().map(|r| measure_at(e, bytes, &database, r));
            let [lowest, medium, highest] = errors;
            let errors = [lowest?, medium?, highest?];
            let clip = database.open_clip(bytes).map_err(|e| DatabaseError::Internal(e.to_string()))?;
            let count = |t: usize| tiers.iter().map(|s| s[t].count_ones() as usize).sum::<usize>();
            Ok(DatabaseClipResult {
                name: input.name.to_owned(),
                bytes: bytes.clone(),
                compressed_bytes: clip.layout().compressed() as usize,
                standalone_bytes: *alone,
                shared_pose: clip.shared_pose_index(),
                stored_frames: e.kept.iter().map(|k| k.count_ones() as usize).sum(),
                clip_frames: clip.stored_key_frames() as usize,
                tier_frames: [count(0), count(1)],
                errors,
            })
        })
        .collect::<Result<_, DatabaseError>>()?;
    let tiers = [0, 1].map(|t| TierSummary {
        frames: results.iter().map(|c| c.tier_frames[t]).sum(),
        bytes: packed[t].chunks.iter().map(Vec::len).sum(),
        chunks: packed[t].chunks.len(),
        stripped: t >= tiers_kept,
    });
    let pose_bytes = plan.poses.iter().map(|p| p.bytes().len()).sum();
    Ok(BuiltDatabase { clips: results, file, index_size, tiers, poses: plan.poses.len(), pose_bytes, id })
}

/// Refuses settings and inputs that cannot make a database.
fn check(clips: &[ClipInput<'_>], settings: &DatabaseSettings) -> Result<(), DatabaseError> {
    if clips.is_empty() {
        return Err(DatabaseError::NoClips);
    }
    let mut seen = std::collections::HashSet::new();
    for input in clips {
        if !seen.insert(input.name) {
            return Err(DatabaseError::DuplicateName(input.name.to_owned()));
        }
    }
    let (medium, low) = (settings.medium, settings.low);
    let share = |x: f64| (0.0..=1.0).contains(&x);
    if !share(medium) || !share(low) || medium + low > 1.0 {
        return Err(DatabaseError::BadShares { medium, low });
    }
    let shift = settings.chunk_shift;
    use ossa_decoder::format::database::{MAX_CHUNK_SHIFT, MIN_CHUNK_SHIFT};
    if !(MIN_CHUNK_SHIFT..=MAX_CHUNK_SHIFT).contains(&shift) {
        return Err(DatabaseError::BadChunkSize(shift));
    }
    Ok(())
}

/// The clip and segment of piece `index` (pieces run clip by clip, segment by
/// segment).
fn locate_piece(assignment: &partition::Assignment, mut index: usize) -> (usize, usize) {
    for (clip, segments) in assignment.iter().enumerate() {
        if index < segments.len() {
            return (clip, index);
        }
        index -= segments.len();
    }
    (0, 0)
}

/// The residency of the tiers of `fidelity`, their chunks read from the database
/// `file`.
fn resident<'f>(
    database: &Database<'_>,
    file: &'f [u8],
    fidelity: Fidelity,
) -> Result<Residency<'f, Vec<Slot<'f>>>, DatabaseError> {
    let internal = |e: ossa_decoder::Error| DatabaseError::Internal(e.to_string());
    let slots: Vec<Slot<'_>> = vec![None; database.chunk_slots() as usize];
    let mut residency = Residency::new(database, slots).map_err(internal)?;
    for &tier in fidelity.tiers() {
        for i in 0..database.chunk_count(tier) {
            let chunk = database.chunk(tier, i).ok_or_else(|| DatabaseError::Internal("chunk missing".into()))?;
            let start = chunk.file_offset as usize;
            let data = file
                .get(start..start + chunk.size as usize)
                .ok_or_else(|| DatabaseError::Internal("chunk outside the file".into()))?;
            residency.bind(database, tier, i, data).map_err(internal)?;
        }
    }
    Ok(residency)
}

/// The error of clip `bytes` (of `encoded`) with `residency`'s chunks resident.
fn measure_at<'f>(
    encoded: &Encoded<'_>,
    bytes: &'f [u8],
    database: &Database<'f>,
    residency: &Residency<'f, Vec<Slot<'f>>>,
) -> Result<ErrorStats, DatabaseError> {
    let internal = |e: ossa_decoder::Error| DatabaseError::Internal(e.to_string());
    let clip = database.open_clip(bytes).map_err(internal)?;
    let binding = database.bind(&clip).map_err(internal)?;
    let playback = Playback::Streamed { binding: &binding, residency };
    measure_clip(clip, &encoded.reference, encoded.precision, encoded.closes, &encoded.stripped_samples, playback)
        .map_err(|e| match e {
            MeasureError::Decoder(e) => internal(e),
            MeasureError::OutOfMemory(e) => DatabaseError::OutOfMemory(e),
        })
}
