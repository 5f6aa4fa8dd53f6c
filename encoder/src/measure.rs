//! Error measurement through the real decoder: decode a buffer at every original
//! sample time and compare every bone with the reference in object space.

use ossa_decoder::{Clip, Sampler, Transform};
use rayon::prelude::*;

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
///
/// The samples are measured in parallel, in runs of consecutive samples, each with
/// its own sampler; the runs' statistics are merged in sample order, so the result
/// (the worst bone and sample included) is the same whatever the thread count.
pub fn measure_clip<'b>(
    clip: Clip<'b>,
    reference: &Reference,
    precision: f64,
    bound_loop_end: bool,
    stripped: &[bool],
    playback: Playback<'_, 'b>,
) -> Result<ErrorStats, MeasureError> {
    let what = What { clip, reference, precision, bound_loop_end, stripped, playback };
    let (samples, bones) = (reference.sample_count, reference.bone_count);
    // Runs long enough that a sampler's set-up and a task's hand-over are small
    // beside them, and enough of them to keep every worker busy.
    let run = samples.div_ceil(4 * rayon::current_num_threads()).max(MIN_RUN);
    // Every error, for the 99th percentile (`f32` halves their memory and is ample
    // for a statistic; the maximum and the bound are checked in `f64`): each run
    // writes its own part of one buffer, so the memory is one pass's.
    let mut all: Vec<f32> =
        memory::filled(bones * samples, 0.0, "the error of every sample").map_err(MeasureError::OutOfMemory)?;
    let runs: Vec<Partial> = all
        .par_chunks_mut((run * bones).max(1))
        .enumerate()
        .map(|(i, errors)| {
            let samples = i * run..((i + 1) * run).min(samples);
            let mut pass = Pass::new(&what);
            pass.measure(samples, errors, &mut |_, _, _, _| {})?;
            Ok(pass.partial)
        })
        .collect::<Result<_, MeasureError>>()?;
    // The runs' counted errors moved together, in sample order.
    let mut merged = Partial::new(clip);
    for (i, partial) in runs.into_iter().enumerate() {
        let from = i * run * bones;
        all.copy_within(from..from + partial.counted, merged.counted);
        merged.absorb(partial);
    }
    Ok(merged.finish(&mut all))
}

/// Samples measured in one run at the least: a pose of a large skeleton takes a few
/// microseconds, a sampler's set-up and a task's hand-over about one.
const MIN_RUN: usize = 8;

/// [`measure_clip`], calling `visit(sample, bone, error, decoded object-space
/// transform)` for every bone at every source sample, in order (a report's plots
/// and skeletons): one thread.
pub fn measure_visiting<'b>(
    clip: Clip<'b>,
    reference: &Reference,
    precision: f64,
    bound_loop_end: bool,
    stripped: &[bool],
    playback: Playback<'_, 'b>,
    visit: &mut dyn FnMut(usize, usize, f64, &Affine),
) -> Result<ErrorStats, MeasureError> {
    let mut all: Vec<f32> =
        memory::filled(reference.bone_count * reference.sample_count, 0.0, "the error of every sample")
            .map_err(MeasureError::OutOfMemory)?;
    let what = What { clip, reference, precision, bound_loop_end, stripped, playback };
    let mut pass = Pass::new(&what);
    pass.measure(0..reference.sample_count, &mut all, visit)?;
    Ok(pass.partial.finish(&mut all))
}

/// The statistics of a run of samples, before they are merged.
struct Partial {
    stats: ErrorStats,
    /// How many errors counted in the statistics; they are the first ones of the
    /// run's part of the buffer of every error.
    counted: usize,
    /// How many of them are within the precision.
    within: usize,
}

impl Partial {
    fn new(clip: Clip<'_>) -> Partial {
        let stats = ErrorStats {
            segment_max: vec![0.0; clip.segment_count() as usize],
            within_precision: 1.0,
            ..ErrorStats::default()
        };
        Partial { stats, counted: 0, within: 0 }
    }

    /// Adds the statistics of the run that follows this one's samples.
    fn absorb(&mut self, later: Partial) {
        let (stats, theirs) = (&mut self.stats, later.stats);
        // The first largest error in sample order stays the worst, as in one pass.
        if theirs.worst.is_some() && (stats.worst.is_none() || theirs.max_error > stats.max_error) {
            stats.worst = theirs.worst;
        }
        stats.max_error = stats.max_error.max(theirs.max_error);
        for (mine, their) in stats.segment_max.iter_mut().zip(theirs.segment_max) {
            *mine = mine.max(their);
        }
        stats.loop_end_error = match (stats.loop_end_error, theirs.loop_end_error) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.counted += later.counted;
        self.within += later.within;
    }

    /// The statistics, given the buffer whose first [`Partial::counted`] errors are
    /// the ones counted.
    fn finish(self, errors: &mut [f32]) -> ErrorStats {
        let mut stats = self.stats;
        let all = &mut errors[..self.counted];
        if !all.is_empty() {
            stats.within_precision = self.within as f64 / all.len() as f64;
            let rank = (((all.len() as f64) * 0.99).ceil() as usize).clamp(1, all.len());
            let (_, p99, _) = all.select_nth_unstable_by(rank - 1, f32::total_cmp);
            stats.p99_error = f64::from(*p99);
        }
        stats
    }
}

/// What is measured, and against what (the arguments of [`measure_clip`]).
struct What<'p, 'b> {
    clip: Clip<'b>,
    reference: &'p Reference,
    precision: f64,
    bound_loop_end: bool,
    stripped: &'p [bool],
    playback: Playback<'p, 'b>,
}

/// One sampler measuring a run of samples.
struct Pass<'w, 'p, 'b> {
    what: &'w What<'p, 'b>,
    sampler: Sampler<'b>,
    pose: Vec<Transform>,
    object: Vec<Affine>,
    in_place: Option<usize>,
    partial: Partial,
}

impl<'w, 'p, 'b> Pass<'w, 'p, 'b> {
    fn new(what: &'w What<'p, 'b>) -> Pass<'w, 'p, 'b> {
        let (clip, bones) = (what.clip, what.reference.bone_count);
        Pass {
            what,
            sampler: Sampler::new(clip),
            pose: vec![Transform::IDENTITY; bones],
            object: vec![Affine::IDENTITY; bones],
            in_place: clip.root_motion_bone().filter(|_| clip.root_motion_in_place()).map(|b| b as usize),
            partial: Partial::new(clip),
        }
    }

    fn measure(
        &mut self,
        samples: std::ops::Range<usize>,
        errors: &mut [f32],
        visit: &mut dyn FnMut(usize, usize, f64, &Affine),
    ) -> Result<(), MeasureError> {
        let what = self.what;
        let (clip, reference) = (what.clip, what.reference);
        let bones = reference.bone_count;
        let Partial { stats, counted, within } = &mut self.partial;
        for s in samples {
            let time = sample_time(s, clip.sample_rate());
            what.playback.seek(&mut self.sampler, time)?;
            self.sampler.decompress_pose(&mut self.pose)?;
            // An in-place root shows its first sample; the game moves the character by
            // the root motion, so what it sees is the root's own (local) track.
            if let Some(root) = self.in_place {
                self.pose[root] = what.playback.root_local(&clip, time)?;
            }
            // The stored key frame this sample decodes from: itself, except the last
            // sample of a wrapping loop, which is the first again.
            let stored = (s as u32) < clip.sample_count();
            let key = if stored { s as u32 } else { 0 };
            let segment = (key / u32::from(clip.segment_len())).min(clip.segment_count() - 1) as usize;
            let in_stats = stored || what.bound_loop_end;
            for b in 0..bones {
                let t = &self.pose[b];
                // What the game sees: the decoded transform, or for an additive clip
                // the base with it applied.
                let [tx, ty, tz] = t.translation.to_array();
                let [sx, sy, sz] = t.scale.to_array();
                let values = LocalValues { parts: [t.rotation.to_array(), [tx, ty, tz, 0.0], [sx, sy, sz, 0.0]] };
                let local = reference.affine_of(s, b, &values);
                self.object[b] = match reference.parent(b) {
                    Some(p) => self.object[p].then(&local),
                    None => reference.root_object(b, local),
                };
                let e = reference.error(s, b, &self.object[b]);
                visit(s, b, e, &self.object[b]);
                if !stored {
                    stats.loop_end_error = Some(stats.loop_end_error.unwrap_or(0.0).max(e));
                }
                if !in_stats {
                    continue;
                }
                if e > stats.max_error || stats.worst.is_none() {
                    stats.max_error = stats.max_error.max(e);
                    stats.worst = Some((b, s));
                }
                if !what.stripped.get(s).copied().unwrap_or(false) {
                    stats.segment_max[segment] = stats.segment_max[segment].max(e);
                }
                *within += usize::from(e <= what.precision);
                // At most one error per bone and sample of the run: the run's part
                // of the buffer has room for all of them.
                errors[*counted] = e as f32;
                *counted += 1;
            }
        }
        Ok(())
    }
}
