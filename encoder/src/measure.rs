//! Error measurement through the real decoder: decode a buffer at every original
//! sample time and compare every bone with the reference in object space.

use ossa_decoder::{Clip, Sampler, Transform};

use crate::compress::reference::Reference;
use crate::compress::values::LocalValues;
use crate::error_metric::Affine;
use crate::memory::{self, OutOfMemory};
use crate::playback::Playback;

/// Why a buffer could not be measured.
#[derive(Clone, Debug, PartialEq)]
pub enum MeasureError {
    /// The decoder refused the buffer.
    Decoder(ossa_decoder::Error),
    /// The system refused memory for the per-sample errors.
    OutOfMemory(OutOfMemory),
}

impl From<ossa_decoder::Error> for MeasureError {
    fn from(e: ossa_decoder::Error) -> MeasureError {
        MeasureError::Decoder(e)
    }
}

impl std::fmt::Display for MeasureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MeasureError::Decoder(e) => e.fmt(f),
            MeasureError::OutOfMemory(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for MeasureError {}

/// What the decoded clip's errors look like.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ErrorStats {
    /// Largest error over every bone and sample.
    pub max_error: f64,
    /// 99th percentile of the per-(bone, sample) errors.
    pub p99_error: f64,
    /// Share of (bone, sample) pairs within the precision (0 to 1; 1 for a clip
    /// without bones, where no pair is outside it).
    pub within_precision: f64,
    /// The bone and sample of the largest error.
    pub worst: Option<(usize, usize)>,
    /// Largest error in each segment (at the samples held to the bound).
    pub segment_max: Vec<f64>,
    /// For a wrapping loop, the largest error at its source's last sample, which is
    /// not stored and decodes as the first: how far the loop is from closing.
    pub loop_end_error: Option<f64>,
}

/// The time of original sample `i`, as a player would compute it.
pub fn sample_time(i: usize, sample_rate: f32) -> f32 {
    i as f32 / sample_rate
}

/// Decodes `bytes` at every sample and measures against `reference`.
///
/// For a wrapping loop, `bound_loop_end` says whether the source's last sample (not
/// stored: it decodes as the first) counts in the statistics like the others, as it
/// does when the loop closes within the precision; otherwise (wrapping was forced on
/// a clip whose ends differ) its error is only reported, in
/// [`ErrorStats::loop_end_error`]. Samples whose `stripped` flag is set (key frames
/// stripped beyond the bound) count in every statistic but the segments' maxima,
/// which the encoder holds to the bound.
pub fn measure(
    bytes: &[u8],
    reference: &Reference,
    precision: f64,
    bound_loop_end: bool,
    stripped: &[bool],
) -> Result<ErrorStats, MeasureError> {
    measure_clip(Clip::from_bytes(bytes)?, reference, precision, bound_loop_end, stripped, Playback::Alone)
}

/// [`measure`] of a clip already opened (one of a streaming database, given its
/// shared pose), sampled as `playback` says (with its database's resident tiers).
pub fn measure_clip<'b>(
    clip: Clip<'b>,
    reference: &Reference,
    precision: f64,
    bound_loop_end: bool,
    stripped: &[bool],
    playback: Playback<'_, 'b>,
) -> Result<ErrorStats, MeasureError> {
    measure_visiting(clip, reference, precision, bound_loop_end, stripped, playback, &mut |_, _, _, _| {})
}

/// [`measure_clip`], calling `visit(sample, bone, error, decoded object-space
/// transform)` for every bone at every source sample (a report's plots and
/// skeletons).
pub fn measure_visiting<'b>(
    clip: Clip<'b>,
    reference: &Reference,
    precision: f64,
    bound_loop_end: bool,
    stripped: &[bool],
    playback: Playback<'_, 'b>,
    visit: &mut dyn FnMut(usize, usize, f64, &Affine),
) -> Result<ErrorStats, MeasureError> {
    let bones = reference.bone_count;
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; bones];
    let in_place = clip.root_motion_bone().filter(|_| clip.root_motion_in_place()).map(|b| b as usize);
    let mut object: Vec<Affine> = vec![Affine::IDENTITY; bones];
    // The 99th percentile needs every error; `f32` halves their memory and is ample
    // for a statistic (the maximum and the bound are checked in `f64`).
    let mut all: Vec<f32> = memory::with_capacity(bones * reference.sample_count, "the error of every sample")
        .map_err(MeasureError::OutOfMemory)?;
    let mut within = 0usize;
    let mut stats = ErrorStats {
        segment_max: vec![0.0; clip.segment_count() as usize],
        within_precision: 1.0,
        ..ErrorStats::default()
    };
    for s in 0..reference.sample_count {
        let time = sample_time(s, clip.sample_rate());
        playback.seek(&mut sampler, time)?;
        sampler.decompress_pose(&mut pose)?;
        // An in-place root shows its first sample; the game moves the character by the
        // root motion, so what it sees is the root's own (local) track.
        if let Some(root) = in_place {
            pose[root] = playback.root_local(&clip, time)?;
        }
        // The stored key frame this sample decodes from: itself, except the last
        // sample of a wrapping loop, which is the first again.
        let stored = (s as u32) < clip.sample_count();
        let key = if stored { s as u32 } else { 0 };
        let segment = (key / u32::from(clip.segment_len())).min(clip.segment_count() - 1) as usize;
        let counted = stored || bound_loop_end;
        for b in 0..bones {
            let t = &pose[b];
            // What the game sees: the decoded transform, or for an additive clip the
            // base with it applied.
            let [tx, ty, tz] = t.translation.to_array();
            let [sx, sy, sz] = t.scale.to_array();
            let values = LocalValues { parts: [t.rotation.to_array(), [tx, ty, tz, 0.0], [sx, sy, sz, 0.0]] };
            let local = reference.affine_of(s, b, &values);
            object[b] = match reference.parent(b) {
                Some(p) => object[p].then(&local),
                None => reference.root_object(b, local),
            };
            let e = reference.error(s, b, &object[b]);
            visit(s, b, e, &object[b]);
            if !stored {
                stats.loop_end_error = Some(stats.loop_end_error.unwrap_or(0.0).max(e));
            }
            if !counted {
                continue;
            }
            if e > stats.max_error || stats.worst.is_none() {
                stats.max_error = stats.max_error.max(e);
                stats.worst = Some((b, s));
            }
            if !stripped.get(s).copied().unwrap_or(false) {
                stats.segment_max[segment] = stats.segment_max[segment].max(e);
            }
            within += usize::from(e <= precision);
            all.push(e as f32);
        }
    }
    if !all.is_empty() {
        stats.within_precision = within as f64 / all.len() as f64;
        let rank = (((all.len() as f64) * 0.99).ceil() as usize).clamp(1, all.len());
        let (_, p99, _) = all.select_nth_unstable_by(rank - 1, f32::total_cmp);
        stats.p99_error = f64::from(*p99);
    }
    Ok(stats)
}
