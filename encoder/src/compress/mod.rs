//! Compression: raw clip in, `.ossa` bytes out, with the accuracy bound held.
//!
//! The pipeline: build the `f32` reference ([`mod@reference`]), classify every
//! sub-track ([`classify`]), compute clip ranges, split into uniform segments and
//! search each segment's bit rates ([`bit_rates`]), lay the buffer out
//! ([`writer`]), then decode it with the real decoder at every original sample and
//! check every bone ([`crate::measure`]). Anything above the precision tightens that
//! segment's target and goes round again, so the bound is a measured fact, not a hope.

pub mod additive;
pub mod bit_rates;
pub mod classify;
pub mod compensation;
pub mod frame_set;
pub mod grid;
pub mod hierarchy;
pub mod key_frames;
pub mod memory_estimate;
pub mod reference;
pub mod root_motion;
pub mod scalar;
pub mod shared_pose;
pub mod sub_track;
pub mod values;
pub mod writer;

use std::fmt;

use ossa_decoder::format::{self, Looping, SubTrackClass, DEFAULT_SEGMENT_LEN};
use rayon::prelude::*;

use crate::aligned::AlignedBytes;
use crate::measure::measure_clip;
pub use crate::measure::ErrorStats;
use crate::memory::OutOfMemory;
use crate::message::{name as shown, number};
use crate::playback::Playback;
use crate::raw_clip::{ClipError, RawClip};
use reference::Reference;
use sub_track::SubTrack;

/// Compression settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The largest object-space error allowed on any virtual vertex (default 0.01), in
    /// the units the skeleton is seen in: the clip's own, or with root placements
    /// ([`crate::SourceSkeleton::root_placements`]) the scene's.
    pub precision: f64,
    /// Write the metadata section (names, parents, shell distances, bind pose).
    pub include_metadata: bool,
    /// Samples per segment, 1 to [`format::MAX_SEGMENT_LEN`] (default
    /// [`DEFAULT_SEGMENT_LEN`]). Shorter segments fit their ranges tighter and cost
    /// more range bytes; a decoder reads any length.
    pub segment_len: u8,
    /// Clamp, wrap, or decide from the clip (default).
    pub looping: LoopSetting,
    /// The root-motion bone, by name; `None`: the first root (bone 0). A bone with a
    /// parent has its motion composed through its ancestors.
    pub root_motion_bone: Option<String>,
    /// Take the root motion out of the poses: they show the root-motion bone at its
    /// first sample (in place), and its motion is read through the decoder's
    /// root-motion queries. A loop whose pose closes in place then wraps under
    /// [`LoopSetting::Auto`] even when its root travels, its last sample kept.
    pub extract_root_motion: bool,
    /// Leave out key frames that interpolation between the stored ones around them
    /// reproduces within the bound (default); `false` stores every sample.
    pub remove_key_frames: bool,
    /// Lossy, beyond the bound: the share of the clip's samples (0 to 1) whose key
    /// frames are left out whatever the error, the least important first (the error
    /// their removal causes in object space; never a segment's first or last). The
    /// bound then holds at the other samples; [`ErrorStats::max_error`] says what the
    /// stripped ones reach. 0 (the default) strips nothing.
    pub strip_frames: f64,
    /// A streaming database's shared pose (`None` by default): default sub-tracks
    /// take its values instead of the identity, so a sub-track that stays within its
    /// share of the bound of the pose's value stores nothing. The clip then decodes
    /// only with the pose ([`ossa_decoder::Database::open_clip`]).
    pub shared_pose: Option<std::sync::Arc<shared_pose::SharedPoseValues>>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            precision: 0.01,
            include_metadata: true,
            segment_len: DEFAULT_SEGMENT_LEN,
            looping: LoopSetting::Auto,
            root_motion_bone: None,
            extract_root_motion: false,
            remove_key_frames: true,
            strip_frames: 0.0,
            shared_pose: None,
        }
    }
}

/// How to choose a clip's [`Looping`] mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoopSetting {
    /// Wrap when the clip's last sample repeats its first within the precision for
    /// every bone in object space (so no bone, the root included, travels over the
    /// loop and dropping the last sample loses nothing); clamp otherwise.
    #[default]
    Auto,
    /// Store every sample; playback stops at the last.
    Clamp,
    /// Drop the last sample and interpolate from the one before it back to the first,
    /// whatever the clip holds (a clip of one sample cannot wrap). When the last
    /// sample is not within the precision of the first, the bound holds at the other
    /// samples and the error there is reported ([`ErrorStats::loop_end_error`]).
    Wrap,
}

/// A compressed clip and what was measured on it.
#[derive(Clone, Debug)]
pub struct Compressed {
    /// The `.ossa` buffer (with metadata unless stripped), 16-byte aligned.
    pub bytes: AlignedBytes,
    /// Bytes a game ships: the buffer without the metadata section.
    pub compressed_bytes: usize,
    /// Where the bytes go, part by part.
    pub layout: ossa_decoder::Layout,
    /// Error measured by decoding `bytes` at every sample of every bone.
    pub errors: ErrorStats,
    /// The looping mode written.
    pub looping: Looping,
    /// Key frames stripped beyond the bound ([`Settings::strip_frames`]).
    pub stripped_frames: usize,
    /// How big the skeleton is, in the units of the precision and the errors
    /// ([`Reference::skeleton_size`]): an error as a share of it says how visible it is.
    pub skeleton_size: f64,
}

/// Why a clip could not be compressed.
#[derive(Clone, Debug, PartialEq)]
pub enum CompressError {
    /// The clip itself is invalid.
    InvalidClip(ClipError),
    /// The precision is not a finite positive number.
    BadPrecision(f64),
    /// The segment length is outside 1 to [`format::MAX_SEGMENT_LEN`].
    BadSegmentLen(u8),
    /// Wrapping was asked for a clip of a single sample, which has no last sample
    /// to drop.
    CannotWrap,
    /// No bone has the root-motion bone's name.
    NoSuchBone(String),
    /// The scalar track list is invalid.
    InvalidTrackList(String),
    /// The shared pose has another number of bones than the clip.
    SharedPoseMismatch {
        /// Bones in the pose.
        pose_bones: usize,
        /// Bones in the clip.
        bone_count: usize,
    },
    /// The root-motion bone named has more ancestors than the format's limit.
    RootChainTooDeep {
        /// The bone named.
        bone: String,
        /// Its number of ancestors.
        depth: usize,
    },
    /// Even raw single-precision floats cannot hold the precision (values so large,
    /// or hierarchies so deep, that `f32` rounding alone exceeds it). No output is
    /// produced rather than one above the bound.
    PrecisionUnreachable {
        /// The bone with the largest error.
        bone: String,
        /// Its sample.
        sample: usize,
        /// The smallest error reached.
        error: f64,
        /// The precision asked for.
        precision: f64,
        /// How far the bone's virtual vertices are from the origin there: `f32`
        /// numbers that large are `ulp(magnitude)` apart.
        magnitude: f64,
    },
    /// The system refused memory the compression needed.
    OutOfMemory(OutOfMemory),
    /// A bug: the encoder produced something its own decoder refuses.
    Internal(String),
}

impl From<OutOfMemory> for CompressError {
    fn from(e: OutOfMemory) -> CompressError {
        CompressError::OutOfMemory(e)
    }
}

impl fmt::Display for CompressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompressError::InvalidClip(e) => e.fmt(f),
            CompressError::BadPrecision(p) => match precision_problem(*p) {
                Some(problem) => f.write_str(&problem),
                None => write!(f, "precision {} is not valid", number(*p)),
            },
            CompressError::BadSegmentLen(n) => {
                write!(f, "segment length {n} is not valid: it must be 1 to {}", format::MAX_SEGMENT_LEN)
            }
            CompressError::SharedPoseMismatch { pose_bones, bone_count } => {
                write!(f, "the shared pose has {pose_bones} bones, the clip {bone_count}")
            }
            CompressError::CannotWrap => {
                f.write_str("a clip of a single sample cannot wrap: it has no repeated last sample to drop")
            }
            CompressError::InvalidTrackList(e) => f.write_str(e),
            CompressError::NoSuchBone(name) => write!(f, "no bone is named '{}' (root-motion bone)", shown(name)),
            CompressError::RootChainTooDeep { bone, depth } => write!(
                f,
                "root-motion bone '{}' has {depth} ancestors; the format composes root motion through at most {}",
                shown(bone),
                format::MAX_ROOT_CHAIN
            ),
            CompressError::PrecisionUnreachable { bone, sample, error, precision, magnitude } => write!(
                f,
                "precision {} cannot be held: bone '{}' at sample {sample} stays {} off even with its whole chain \
                 stored at full single precision (its virtual vertices are {} units from the origin, where 32-bit \
                 floats are {} apart); use a --precision of at least {}",
                number(*precision),
                shown(bone),
                approx(*error),
                approx(*magnitude),
                approx(f64::from(ulp(*magnitude as f32))),
                approx(*error)
            ),
            CompressError::OutOfMemory(e) => e.fmt(f),
            CompressError::Internal(e) => write!(f, "internal error (please report): {e}"),
        }
    }
}

impl std::error::Error for CompressError {}

/// What is wrong with `precision` as a compression precision, if anything: it must
/// be a positive number that single precision holds (it is stored as an `f32` in
/// the metadata, and errors below the smallest normal `f32` cannot be measured).
pub fn precision_problem(precision: f64) -> Option<String> {
    let shown = number(precision);
    if precision.is_nan() {
        Some("precision is not a number (NaN)".into())
    } else if precision.is_infinite() || precision <= 0.0 {
        Some(format!("precision {shown} is not a positive number"))
    } else if precision > f64::from(f32::MAX) {
        Some(format!("precision {shown} exceeds the single-precision range (about 3.4e38)"))
    } else if precision < f64::from(f32::MIN_POSITIVE) {
        Some(format!("precision {shown} is below the single-precision range (about 1.2e-38)"))
    } else {
        None
    }
}

/// A computed quantity for a message: three significant digits.
fn approx(v: f64) -> String {
    let rounded: f64 = format!("{v:.2e}").parse().unwrap_or(v);
    number(rounded).to_string()
}

/// The gap between `x` and the next `f32` away from zero.
fn ulp(x: f32) -> f32 {
    let x = x.abs();
    if x.is_finite() {
        f32::from_bits(x.to_bits() + 1) - x
    } else {
        f32::INFINITY
    }
}

/// Safety margin under the precision for the search, so that rounding in the final
/// decode does not push a bone over.
const TARGET_MARGIN: f64 = 0.999;
/// Shares of a segment's target that leaving key frames out may use (the rest is left
/// for quantisation), each tried on every segment where it leaves out other frames
/// than the shares before it: the segment keeps the one whose samples take the fewest
/// bits. Interpolating frames uses error that quantising would otherwise use, and
/// which way pays depends on the motion (smooth or not, sampled often or not), so it
/// is measured: none, or nearly all of the target (the bit-rate search's last step
/// takes back what the frames left out do not need). Other sets change little: on
/// the generalisation variants at 0.1 (README), {0, 0.9} gives 288,784 bytes, {0.5,
/// 0.75, 0.9} 288,736, {0.5, 0.75, 0.9, 0.97} 288,352, {0.75} 290,464 and a fixed
/// half 293,856; at 0.01 and 0.001 no set leaves a frame out of those clips.
const KEY_FRAME_SHARES: [f64; 2] = [0.0, 0.9];
/// How much a segment's target tightens when its decoded error is still too high.
const TIGHTEN: f64 = 0.8;
/// Rounds of tightening before giving up (reached only when `f32` itself cannot hold
/// the precision, e.g. astronomically large values).
const MAX_ROUNDS: usize = 40;

/// Bits a segment's samples take with `result`'s codes and key frames (a result with
/// a bone stuck above the target counts as the most).
fn sample_bits(result: &bit_rates::SegmentResult, tracks: &[sub_track::SubTrack]) -> u64 {
    if result.stuck_bone.is_some() {
        return u64::MAX;
    }
    let frame: u64 = result
        .codes
        .iter()
        .zip(tracks)
        .filter_map(|(code, track)| code.as_ref().map(|c| u64::from(c.bits) * u64::from(track.components)))
        .sum();
    frame * u64::from(result.kept.count_ones())
}

/// Compresses `clip`. The clip is validated first (rotations are normalised).
pub fn compress(clip: &RawClip, settings: &Settings) -> Result<Compressed, CompressError> {
    encode(clip, settings).map(|encoded| encoded.compressed)
}

/// A compressed clip with what produced it: what a streaming database needs to rank
/// its key frames, move some of them out and write the clip again without them
/// ([`crate::database`]).
pub struct Encoded<'c> {
    /// The source clip.
    pub clip: &'c RawClip,
    /// Its `f32` reference.
    pub reference: Reference,
    /// Every sub-track, classified and quantised.
    pub tracks: Vec<SubTrack>,
    /// The lists' grids.
    pub grids: grid::Grids,
    /// What the writer needs besides the tracks.
    pub shape: writer::ClipShape,
    /// Each segment's first sample and sample count.
    pub spans: Vec<(usize, usize)>,
    /// Each segment's codes, by sub-track (`None` for the sub-tracks not animated).
    pub codes: Vec<Vec<Option<sub_track::SegmentCode>>>,
    /// Each segment's stored key frames.
    pub kept: Vec<u32>,
    /// The precision held.
    pub precision: f64,
    /// Whether the dropped last sample of a wrapping loop is held to the bound.
    pub closes: bool,
    /// Samples stripped beyond the bound (`--strip-frames`).
    pub stripped_samples: Vec<bool>,
    /// Whether the metadata section is written.
    pub include_metadata: bool,
    /// The shared pose its default sub-tracks take their values from, if any.
    pub shared_pose: Option<std::sync::Arc<shared_pose::SharedPoseValues>>,
    /// The result.
    pub compressed: Compressed,
}

impl Encoded<'_> {
    /// Writes the clip again with segment `s` storing the key frames `kept[s]` (a
    /// subset of what it stores) and, when given, a reference to its streaming
    /// database (its id and the clip's index in it).
    pub fn write(&self, kept: &[u32], database: Option<(u64, u32)>) -> Result<Vec<u8>, OutOfMemory> {
        let shape = writer::ClipShape { database, ..self.shape.clone() };
        let codes: Vec<&[Option<sub_track::SegmentCode>]> = self.codes.iter().map(|c| &c[..]).collect();
        let metadata = self.include_metadata.then_some((self.clip, self.precision as f32));
        writer::write(&shape, &self.tracks, &self.grids, &codes, kept, metadata)
    }

    /// The sample bits of the key frames `frames` of segment `segment`, as the clip's
    /// segment would store them (`format-spec/segments.md`, Samples): what a database
    /// tier holds for it.
    pub fn frame_bits(&self, segment: usize, frames: u32) -> Vec<u8> {
        writer::frame_stream(&self.tracks, &self.codes[segment], self.spans[segment].1, frames)
    }

    /// Each segment's stored key frames other than its first and last, least
    /// important first, each with the error its removal causes in object space (with
    /// those before it removed): seed 002's ranking, from what the clip stores.
    pub fn ranking(&self) -> Vec<Vec<(usize, f64)>> {
        self.spans
            .par_iter()
            .zip(&self.kept)
            .map(|(&(start, count), &kept)| key_frames::ranking_from(&self.reference, &self.tracks, start, count, kept))
            .collect()
    }
}

/// Opens compressed `bytes` through the decoder, with `pose` when the clip uses one.
pub fn open<'b>(
    bytes: &'b [u8],
    pose: Option<&'b shared_pose::SharedPoseValues>,
) -> Result<ossa_decoder::Clip<'b>, ossa_decoder::Error> {
    match pose {
        Some(pose) => ossa_decoder::Clip::from_bytes_with_pose(bytes, pose.view()?),
        None => ossa_decoder::Clip::from_bytes(bytes),
    }
}

/// [`compress`], keeping what produced the result.
pub fn encode<'c>(clip: &'c RawClip, settings: &Settings) -> Result<Encoded<'c>, CompressError> {
    let precision = settings.precision;
    if precision_problem(precision).is_some() {
        return Err(CompressError::BadPrecision(precision));
    }
    let segment_len = settings.segment_len;
    if segment_len == 0 || segment_len > format::MAX_SEGMENT_LEN {
        return Err(CompressError::BadSegmentLen(segment_len));
    }
    clip.check().map_err(CompressError::InvalidClip)?;
    let mut reference = Reference::new(clip)?;
    let shared_pose = settings.shared_pose.clone();
    if let Some(pose) = &shared_pose {
        if pose.bones.len() != clip.bones.len() {
            return Err(CompressError::SharedPoseMismatch {
                pose_bones: pose.bones.len(),
                bone_count: clip.bones.len(),
            });
        }
        reference.defaults = Some(pose.bones.clone());
    }
    let motion_bone = root_motion::motion_bone(clip, settings.root_motion_bone.as_deref())?;
    let declared = settings.root_motion_bone.is_some() || settings.extract_root_motion;
    root_motion::hold_motion_bone(&mut reference, motion_bone, declared);
    let mut tracks = classify::classify(&reference, precision);

    let in_place = motion_bone.filter(|_| settings.extract_root_motion);
    let closes = root_motion::closes(&reference, precision, in_place);
    let looping = match settings.looping {
        LoopSetting::Clamp => Looping::Clamp,
        LoopSetting::Wrap if clip.sample_count < 2 => return Err(CompressError::CannotWrap),
        LoopSetting::Wrap => Looping::Wrap,
        LoopSetting::Auto if closes => Looping::Wrap,
        LoopSetting::Auto => Looping::Clamp,
    };
    // A wrapping loop stores every sample but the last, which decodes as the first.
    let sample_count = match looping {
        Looping::Clamp => clip.sample_count as u32,
        Looping::Wrap => clip.sample_count as u32 - 1,
    };
    let segment_count = format::segment_count(sample_count, segment_len);
    let spans: Vec<(usize, usize)> = (0..segment_count)
        .map(|i| {
            let (s, n) = format::segment_span(i, sample_count, segment_len);
            (s as usize, n as usize)
        })
        .collect();
    let ranged = segment_count > 1;
    let (mut grids, mut checkpoints) = quantize_constants_measured(&reference, &mut tracks, precision, &spans);
    let root_motion = root_motion::block(clip, &reference, motion_bone, looping, in_place.is_some());
    let additive = clip.additive.as_ref().map_or(ossa_decoder::Additive::None, |b| b.format);
    let shape = writer::ClipShape {
        sample_count,
        looping,
        root_motion,
        additive,
        sample_rate: clip.sample_rate as f32,
        segment_len,
        database: None,
        shared_pose: shared_pose.as_ref().map(|p| p.index),
    };
    let mut targets = vec![precision * TARGET_MARGIN; spans.len()];
    // Key frames stripped beyond the bound, per segment, and per source sample.
    let stripped = if settings.strip_frames > 0.0 {
        key_frames::strip(&reference, &tracks, &spans, settings.strip_frames.min(1.0))
    } else {
        vec![0; spans.len()]
    };
    let stripped_samples: Vec<bool> = (0..clip.sample_count)
        .map(|s| {
            let segment = (s / usize::from(segment_len)).min(spans.len().saturating_sub(1));
            spans.get(segment).is_some_and(|&(start, _)| s >= start && stripped[segment] >> (s - start) & 1 != 0)
        })
        .collect();
    let metadata = settings.include_metadata.then_some((clip, precision as f32));

    // Each segment's search result, kept until its target or the sub-tracks change:
    // a round after a measurement searches again only the segments it tightened.
    let mut results: Vec<Option<bit_rates::SegmentResult>> = (0..spans.len()).map(|_| None).collect();
    // Promotions change a sub-track's class and restart the search; there are at most
    // four per bone (three classes and one rotation format), so this terminates.
    let mut round = 0;
    loop {
        // One segment per task, the longest first (a search's cost grows with its
        // samples; a segment going on from its estimate has little left), each taken
        // by the next free thread: their costs differ by several times, and a long
        // one started last leaves the other cores idle.
        let mut order: Vec<usize> = (0..spans.len()).filter(|&i| results[i].is_none()).collect();
        order.sort_by_key(|&i| {
            (
                checkpoints.get(i).is_some_and(|c| c.as_ref().is_some_and(bit_rates::Checkpoint::repaired)),
                std::cmp::Reverse(spans[i].1),
            )
        });
        let searched: Vec<(usize, bit_rates::SegmentResult)> = order
            .into_iter()
            .par_bridge()
            .map(|i| {
                let (start, count) = spans[i];
                let bounded = frame_set::all_kept(count) & !stripped[i];
                let shares = if settings.remove_key_frames { &KEY_FRAME_SHARES[..] } else { &KEY_FRAME_SHARES[..1] };
                let kept_with =
                    |share: f64| key_frames::choose(&reference, &tracks, start, count, targets[i] * share, stripped[i]);
                // The sampled segments go on from their estimate, where it applies.
                let from = checkpoints.get(i).and_then(Option::as_ref);
                let search = |kept: u32| {
                    let question = bit_rates::Question {
                        reference: &reference,
                        tracks: &tracks,
                        start,
                        count,
                        ranged,
                        target: targets[i],
                        kept,
                        bounded,
                    };
                    bit_rates::optimize_segment(&question, bit_rates::Depth::Full, from).0
                };
                // The first share (none), then each other that leaves out other frames.
                let first = kept_with(KEY_FRAME_SHARES[0]);
                let mut tried = vec![first];
                let result = search(first);
                let mut best = (sample_bits(&result, &tracks), result);
                for &share in &shares[1..] {
                    let kept = kept_with(share);
                    if tried.contains(&kept) {
                        continue;
                    }
                    tried.push(kept);
                    let result = search(kept);
                    let cost = sample_bits(&result, &tracks);
                    if cost < best.0 {
                        best = (cost, result);
                    }
                }
                (i, best.1)
            })
            .collect();
        for (i, result) in searched {
            results[i] = Some(result);
        }
        // The estimates' checkpoints hold for the first searches only: a later one
        // has another target or other sub-tracks.
        checkpoints.clear();
        let stuck = results.iter().flatten().find_map(|r| r.stuck_bone);
        if let Some(bone) = stuck {
            if grid::unquantize_chain(&reference, &mut tracks, &mut grids, bone)
                || promote(&mut tracks, &reference, bone)
            {
                grid::quantize_ranges(&mut tracks, &mut grids);
                results.iter_mut().for_each(|r| *r = None);
                continue;
            }
        }
        round += 1;
        // Every segment has its result here.
        let codes: Vec<&[Option<sub_track::SegmentCode>]> =
            results.iter().map(|r| r.as_ref().map_or(&[][..], |r| &r.codes[..])).collect();
        let kept: Vec<u32> = results.iter().map(|r| r.as_ref().map_or(u32::MAX, |r| r.kept)).collect();
        let bytes = AlignedBytes::try_new(&writer::write(&shape, &tracks, &grids, &codes, &kept, metadata)?)?;
        // The dropped last sample of a loop that closes is held to the bound like the
        // others; of a forced wrap whose ends differ, it is only reported.
        let refused = |e| CompressError::Internal(format!("the decoder refused the encoder's output: {e}"));
        let decoded = open(&bytes, shared_pose.as_deref()).map_err(refused)?;
        let errors =
            measure_clip(decoded, &reference, precision, closes, &stripped_samples, Playback::Alone).map_err(|e| {
                match e {
                    crate::measure::MeasureError::Decoder(e) => refused(e),
                    crate::measure::MeasureError::OutOfMemory(e) => CompressError::OutOfMemory(e),
                }
            })?;
        let mut tightened = false;
        for (segment, target) in targets.iter_mut().enumerate() {
            if errors.segment_max.get(segment).is_some_and(|&e| e > precision) {
                *target *= TIGHTEN;
                results[segment] = None;
                tightened = true;
            }
        }
        if !tightened {
            let layout = decoded.layout();
            let compressed_bytes = layout.compressed() as usize;
            let stripped_frames = stripped_samples.iter().filter(|&&s| s).count();
            let skeleton_size = reference.skeleton_size();
            let compressed =
                Compressed { bytes, compressed_bytes, layout, errors, looping, stripped_frames, skeleton_size };
            let (codes, kept) =
                results.into_iter().map(|r| r.map_or((Vec::new(), u32::MAX), |r| (r.codes, r.kept))).unzip();
            return Ok(Encoded {
                clip,
                reference,
                tracks,
                grids,
                shape,
                spans,
                codes,
                kept,
                precision,
                closes,
                stripped_samples,
                include_metadata: settings.include_metadata,
                shared_pose,
                compressed,
            });
        }
        // Everything on the chain already raw and still above: tightening cannot help.
        if stuck.is_some() || round >= MAX_ROUNDS {
            let (bone, sample) = errors.worst.unwrap_or((0, 0));
            let magnitude = reference.vertices(sample, bone).iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
            return Err(CompressError::PrecisionUnreachable {
                bone: clip.bones.get(bone).map(|b| b.name.clone()).unwrap_or_default(),
                sample,
                error: errors.max_error,
                precision,
                magnitude,
            });
        }
    }
}

/// Segments whose bit rates the choice of the constants' share estimates on a long
/// clip (a clip with at most this many has them all), spread over it. Each costs a
/// step-2 search per share, of which the winner's goes on into the full search.
///
/// Total bytes by the number of segments (`generalisation 0.1 0.01 0.001`: the 18
/// shared clips / their 108 variants):
///
/// | segments | 0.1              | 0.01             | 0.001            |
/// |----------|------------------|------------------|------------------|
/// | 1        | 37,168 / 259,808 | 51,680 / 438,832 | 67,408 / 598,448 |
/// | 2        | 37,168 / 259,088 | 51,680 / 438,064 | 67,312 / 598,960 |
/// | 3        | 37,168 / 258,784 | 51,680 / 437,968 | 67,392 / 598,432 |
///
/// At each precision the three are within 0.35 % of each other (1 against 3 at 0.1,
/// clips and variants together; 0.13 % over all three precisions), while each segment
/// more costs 3.4 % of the instructions of compressing 49_15 (146.0 M with one, 151.2 M
/// with two): one, the middle one.
const SHARE_SAMPLE_SEGMENTS: usize = 1;

/// Quantises the constants of `tracks` (and the clip ranges) on the share of the
/// precision ([`grid::CONSTANT_SHARES`]) that measures best for this clip: for each
/// share, the constants are quantised and the bit rates of up to
/// [`SHARE_SAMPLE_SEGMENTS`] segments spread over the clip searched with every key
/// frame kept; the share with the fewest constant bits plus sample bits (scaled to
/// every segment) wins, and its quantised tracks are kept. The clip is then searched
/// in full, the sampled segments going on from where the winner's estimate stands
/// (the returned checkpoints, by segment).
///
/// Step 1 of the search reads only the animated sub-tracks and their clip ranges,
/// which every share leaves as they are: it runs once per segment, for all shares,
/// beside the constants' quantisation, and every segment's search goes on from it.
fn quantize_constants_measured(
    reference: &Reference,
    tracks: &mut Vec<sub_track::SubTrack>,
    precision: f64,
    spans: &[(usize, usize)],
) -> (grid::Grids, Vec<Option<bit_rates::Checkpoint>>) {
    let shares = grid::CONSTANT_SHARES;
    let ranged = spans.len() > 1;
    let target = precision * TARGET_MARGIN;
    // The clip ranges are the animated sub-tracks', which no share changes: they are
    // quantised once, before the shares copy the tracks.
    let mut ranges = grid::Grids::default();
    grid::quantize_ranges(tracks, &mut ranges);
    let tracks_in: &[sub_track::SubTrack] = tracks;
    // Step 1 of every segment runs beside the constants' quantisation: it reads only
    // the animated sub-tracks and their clip ranges.
    let (mut trials, first) = rayon::join(
        || {
            let mut trials = grid::quantize_constants(reference, tracks_in, precision, &shares);
            for (_, grids) in &mut trials {
                grids.ranges = ranges.ranges;
            }
            trials
        },
        || {
            spans
                .par_iter()
                .with_max_len(1)
                .map(|&(start, count)| {
                    let kept = frame_set::all_kept(count);
                    let question = bit_rates::Question {
                        reference,
                        tracks: tracks_in,
                        start,
                        count,
                        ranged,
                        target,
                        kept,
                        bounded: kept,
                    };
                    bit_rates::first_rates(&question)
                })
                .collect::<Vec<_>>()
        },
    );
    // Without constants (or segments) every share gives the same tracks: the first,
    // every segment going on from its step 1.
    let with_constants = tracks.iter().any(|t| t.class == SubTrackClass::Constant);
    if !with_constants || spans.is_empty() || trials.len() < 2 {
        let checkpoints = first.into_iter().map(Some).collect();
        let Some((trial, grids)) = trials.into_iter().next() else { return (ranges, checkpoints) };
        *tracks = trial;
        return (grids, checkpoints);
    }
    let sampled: Vec<usize> = if spans.len() <= SHARE_SAMPLE_SEGMENTS {
        (0..spans.len()).collect()
    } else {
        (0..SHARE_SAMPLE_SEGMENTS).map(|k| (2 * k + 1) * spans.len() / (2 * SHARE_SAMPLE_SEGMENTS)).collect()
    };
    // Each share's estimate of each sampled segment, all in one batch (their costs
    // differ by several times): its sample bits and where its search stands.
    let pairs: Vec<(usize, usize)> = (0..trials.len()).flat_map(|k| (0..sampled.len()).map(move |j| (k, j))).collect();
    let mut estimates: Vec<(u64, Option<bit_rates::Checkpoint>)> = pairs
        .par_iter()
        .with_max_len(1)
        .map(|&(k, j)| {
            let trial = &trials[k].0;
            let (start, count) = spans[sampled[j]];
            let kept = frame_set::all_kept(count);
            let question =
                bit_rates::Question { reference, tracks: trial, start, count, ranged, target, kept, bounded: kept };
            let (result, checkpoint) =
                bit_rates::optimize_segment(&question, bit_rates::Depth::Estimate, first.get(sampled[j]));
            (sample_bits(&result, trial), checkpoint)
        })
        .collect();
    let cost = |k: usize| {
        let (trial, grids) = &trials[k];
        let row = &estimates[k * sampled.len()..(k + 1) * sampled.len()];
        let samples: u128 = row.iter().map(|(bits, _)| u128::from(*bits)).sum();
        let scaled = samples * spans.len() as u128 / sampled.len().max(1) as u128;
        scaled + u128::from(grid::constant_bits(trial, grids))
    };
    // The first of the cheapest (there are at least two).
    let best = (0..trials.len()).min_by_key(|&k| cost(k)).unwrap_or(0);
    // Every segment goes on from its step 1, a sampled one from the winner's estimate
    // where it has one (a repair that got stuck leaves none).
    let mut checkpoints: Vec<Option<bit_rates::Checkpoint>> = first.into_iter().map(Some).collect();
    let row = estimates.drain(best * sampled.len()..(best + 1) * sampled.len());
    for (&i, (_, checkpoint)) in sampled.iter().zip(row) {
        if checkpoint.is_some() {
            checkpoints[i] = checkpoint;
        }
    }
    let (trial, grids) = trials.swap_remove(best);
    *tracks = trial;
    (grids, checkpoints)
}

/// Makes a bone that bit rates cannot fix fixable: promotes the constant or default
/// sub-track on its chain with the largest error to animated, or else stores a
/// rotation on the chain with all four components. Returns false when nothing is
/// left to promote.
fn promote(tracks: &mut [SubTrack], reference: &Reference, bone: usize) -> bool {
    let bones = reference.bone_count;
    let candidate = reference
        .hierarchy
        .chain(bone)
        .flat_map(|a| [a, bones + a, 2 * bones + a])
        .filter(|&t| tracks[t].class != SubTrackClass::Animated)
        .max_by(|&a, &b| tracks[a].class_error.total_cmp(&tracks[b].class_error));
    if let Some(t) = candidate {
        let track = &mut tracks[t];
        track.class = SubTrackClass::Animated;
        track.compute_clip_range(reference);
        return true;
    }
    let rotation = reference.hierarchy.chain(bone).find(|&a| tracks[a].components == 3);
    if let Some(t) = rotation {
        tracks[t].components = 4;
        tracks[t].compute_clip_range(reference);
        return true;
    }
    false
}
