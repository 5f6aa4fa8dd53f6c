//! Key-frame removal (seed 003, whole key frames): a segment leaves out the samples
//! that interpolation between the stored frames around them reproduces within an
//! error budget for every bone in object space. One search then finds the two keys of
//! every sub-track (the decoder's two bit scans, `decoding.md`), and the bit-rate
//! search sees the interpolated values, so the bound holds at every sample.
//!
//! The choice is greedy, as seed 002 ranks frames for streaming: each step removes
//! the frame whose removal (with those already removed) causes the smallest error,
//! until the smallest is above the budget. A segment keeps its first and last frame,
//! so a segment never depends on another's frames.

use ossa_decoder::format::{SubTrackClass, SubTrackKind};
use ossa_decoder::interpolation::{interpolate_rotation, interpolate_vector, weight_between};
use rayon::prelude::*;

use super::frame_set::{all_kept, around};
use super::reference::Reference;
use super::sub_track::SubTrack;
use super::values::LocalValues;
use crate::error_metric::Affine;

/// The key frames to store of the segment of `count` samples from `start`, given the
/// frames `stripped` beyond the bound (`--strip-frames`): every other frame whose
/// removal keeps every bone within `budget` of the reference at every sample not
/// stripped, chosen greedily (the cheapest removal first). `tracks` decides which
/// sub-tracks vary (the others decode the same at every sample).
pub fn choose(
    reference: &Reference,
    tracks: &[SubTrack],
    start: usize,
    count: usize,
    budget: f64,
    stripped: u32,
) -> u32 {
    let kept = all_kept(count) & !stripped;
    if count < 3 || budget <= 0.0 {
        return kept;
    }
    let bounded = all_kept(count) & !stripped;
    let animated: Vec<usize> = (0..tracks.len()).filter(|&t| tracks[t].class == SubTrackClass::Animated).collect();
    if animated.is_empty() {
        // Nothing varies: every interior frame goes.
        return 1 | 1 << (count - 1);
    }
    search(reference, tracks, &animated, start, count, kept, budget, bounded).0
}

/// The interior key frames of the segment of `count` samples from `start`, least
/// important first, each with the error its removal causes (with those before it
/// removed): the order `--strip-frames` strips them in (seed 002's ranking).
pub fn ranking(reference: &Reference, tracks: &[SubTrack], start: usize, count: usize) -> Vec<(usize, f64)> {
    if count < 3 {
        return Vec::new();
    }
    let animated: Vec<usize> = (0..tracks.len()).filter(|&t| tracks[t].class == SubTrackClass::Animated).collect();
    let all = all_kept(count);
    search(reference, tracks, &animated, start, count, all, f64::INFINITY, all).1
}

/// The key frames of `kept` (the stored frames of the segment of `count` samples from
/// `start`) other than its first and last, least important first, each with the
/// error its removal causes with those before it removed (at every sample of the
/// segment): how a streaming database ranks what a clip stores.
pub fn ranking_from(
    reference: &Reference,
    tracks: &[SubTrack],
    start: usize,
    count: usize,
    kept: u32,
) -> Vec<(usize, f64)> {
    if count < 3 {
        return Vec::new();
    }
    let animated: Vec<usize> = (0..tracks.len()).filter(|&t| tracks[t].class == SubTrackClass::Animated).collect();
    search(reference, tracks, &animated, start, count, kept & all_kept(count), f64::INFINITY, all_kept(count)).1
}

/// The greedy removal both [`choose`] and [`ranking`] run: from `kept`, remove the
/// frame whose removal causes the smallest error (at the `bounded` samples) while
/// that error is at most `ceiling`; returns what is kept and the removals in order.
#[allow(clippy::too_many_arguments)]
fn search(
    reference: &Reference,
    tracks: &[SubTrack],
    animated: &[usize],
    start: usize,
    count: usize,
    mut kept: u32,
    ceiling: f64,
    bounded: u32,
) -> (u32, Vec<(usize, f64)>) {
    let mut scratch = Scratch::default();
    let mut removed = Vec::new();
    loop {
        let mut best: Option<(f64, usize)> = None;
        for f in 1..count - 1 {
            if kept >> f & 1 == 0 {
                continue;
            }
            let trial = kept & !(1 << f);
            // Only the samples between the frames around `f` change.
            let (lo, hi) = around(trial, f);
            let limit = best.map_or(ceiling, |(e, _)| e);
            let error = gap_error(reference, tracks, animated, start, bounded, lo, hi, limit, &mut scratch);
            if error <= limit && best.is_none_or(|(e, _)| error < e) {
                best = Some((error, f));
            }
        }
        match best {
            Some((error, f)) => {
                kept &= !(1 << f);
                removed.push((f, error));
            }
            None => return (kept, removed),
        }
    }
}

/// Chooses the key frames `--strip-frames` removes: `fraction` of the clip's samples
/// (at most every interior frame), the least important over all `segments` (first
/// sample and count each) first. Returns the stripped frames of each segment.
pub fn strip(reference: &Reference, tracks: &[SubTrack], segments: &[(usize, usize)], fraction: f64) -> Vec<u32> {
    let rankings: Vec<Vec<(usize, f64)>> =
        segments.par_iter().map(|&(start, count)| ranking(reference, tracks, start, count)).collect();
    let total: usize = segments.iter().map(|&(_, n)| n).sum();
    let mut left = ((fraction * total as f64).round() as usize).min(rankings.iter().map(Vec::len).sum());
    let mut next = vec![0usize; rankings.len()];
    let mut stripped = vec![0u32; segments.len()];
    // The segments' orders merged: each step takes the cheapest next removal.
    while left > 0 {
        let pick = (0..rankings.len())
            .filter(|&s| next[s] < rankings[s].len())
            .min_by(|&a, &b| rankings[a][next[a]].1.total_cmp(&rankings[b][next[b]].1));
        let Some(s) = pick else { break };
        stripped[s] |= 1 << rankings[s][next[s]].0;
        next[s] += 1;
        left -= 1;
    }
    stripped
}

#[derive(Default)]
struct Scratch {
    local: Vec<LocalValues>,
    object: Vec<Affine>,
}

/// The largest error of any bone at the `bounded` samples strictly between stored
/// frames `lo` and `hi` when they are interpolated from the reference's values at
/// `lo` and `hi` (stopping early once above `limit`).
#[allow(clippy::too_many_arguments)]
fn gap_error(
    reference: &Reference,
    tracks: &[SubTrack],
    animated: &[usize],
    start: usize,
    bounded: u32,
    lo: usize,
    hi: usize,
    limit: f64,
    scratch: &mut Scratch,
) -> f64 {
    let bones = reference.bone_count;
    let mut worst = 0.0f64;
    for i in (lo + 1..hi).filter(|&i| bounded >> i & 1 != 0) {
        let alpha = weight_between((i - lo) as u32, (hi - lo) as u32, 0.0);
        let s = start + i;
        scratch.local.clear();
        scratch.local.extend_from_slice(&reference.local[reference.at(s, 0)..reference.at(s, 0) + bones]);
        for &t in animated {
            let track = &tracks[t];
            let stored = |k: usize| track.stored(reference, start + k);
            let value = match track.kind {
                SubTrackKind::Rotation => {
                    let q = interpolate_rotation(stored(lo), stored(hi), track.components, alpha);
                    [q.x, q.y, q.z, q.w]
                }
                _ => interpolate_vector(stored(lo), stored(hi), alpha),
            };
            scratch.local[track.bone].parts[track.part()] = value;
        }
        scratch.object.clear();
        for b in 0..bones {
            let l = reference.affine_of(s, b, &scratch.local[b]);
            let o = match reference.parent(b) {
                Some(p) => scratch.object[p].then(&l),
                None => reference.root_object(b, l),
            };
            scratch.object.push(o);
            worst = worst.max(reference.error(s, b, &o));
            if worst > limit {
                return worst;
            }
        }
    }
    worst
}
