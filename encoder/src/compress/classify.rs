//! Sub-track classification: default, constant or animated, decided by the
//! object-space error each choice causes (not by local thresholds), and the choice
//! of rotation format (three components with `w` rebuilt, or all four).

use ossa_decoder::format::{SubTrackClass, SubTrackKind};
use rayon::prelude::*;

use super::reference::Reference;
use super::sub_track::{stored_form, SubTrack};
use super::values::Lane4;
use crate::error_metric::Affine;

/// Share of the precision a default or constant sub-track may use on its own; the
/// rest is left for the animated sub-tracks it combines with.
///
/// The totals barely depend on it: on the shared clips and their generalisation
/// variants (the `generalisation` command, README) at 0.1, 0.01 and 0.001, every
/// share from 0.3 to 0.7 gives totals within 0.07 % of those at 0.5.
pub const CLASS_BUDGET: f64 = 0.5;
/// Share of the precision that dropping `w` may cost a rotation on its own before it
/// is stored with all four components.
///
/// Swept the same way: from 0.02 to 0.2 every total stays within 0.5 % of the one at
/// 0.05 (0.02 costs 0.45–0.49 % at 0.001); 0.01 costs 2.3–2.8 % at 0.001.
pub const DROP_W_BUDGET: f64 = 0.05;

/// Builds every sub-track, in storage order (all rotations, translations, scales).
/// Sub-tracks are independent: they are classified on every core, and collected in
/// order (the same result whatever the number of threads).
pub fn classify(reference: &Reference, precision: f64) -> Vec<SubTrack> {
    let bones = reference.bone_count;
    (0..SubTrackKind::ALL.len() * bones)
        .into_par_iter()
        .map_init(Vec::new, |scratch: &mut Vec<Affine>, i| {
            classify_one(reference, SubTrackKind::ALL[i / bones], i % bones, precision, scratch)
        })
        .collect()
}

fn classify_one(
    reference: &Reference,
    kind: SubTrackKind,
    bone: usize,
    precision: f64,
    scratch: &mut Vec<Affine>,
) -> SubTrack {
    let part = kind as usize;
    let all = 0..reference.sample_count;
    let mut track = SubTrack::new(kind, bone, SubTrackClass::Animated);
    if kind == SubTrackKind::Rotation {
        let limit = precision * DROP_W_BUDGET;
        let dropped = reference
            .standalone_error(bone, part, all.clone(), limit, scratch, |s| track.to_local(track.stored(reference, s)));
        if dropped > limit {
            track.components = 4;
        }
    }

    let budget = precision * CLASS_BUDGET;
    // The identity, or the shared pose's value when the clip has one.
    let default = reference.default_of(bone, kind);
    let default_error = reference.standalone_error(bone, part, all.clone(), budget, scratch, |_| default);
    track.constant = stored_form(kind, constant_value(reference, kind, bone));
    track.constant_exact = track.constant;
    let constant = track.constant_local();
    let constant_error = reference.standalone_error(bone, part, all, budget, scratch, |_| constant);

    if default_error <= budget {
        track.class = SubTrackClass::Default;
        track.class_error = default_error;
        // A default rotation stores nothing, so it has no format.
        track.components = 3;
    } else if constant_error <= budget {
        track.class = SubTrackClass::Constant;
        track.class_error = constant_error;
    } else {
        track.class = SubTrackClass::Animated;
        track.compute_clip_range(reference);
    }
    track
}

/// The single value that best stands for every sample: the normalised mean
/// quaternion (signs aligned to the first), or the middle of each component's span.
pub(crate) fn constant_value(reference: &Reference, kind: SubTrackKind, bone: usize) -> Lane4 {
    let part = kind as usize;
    let raw = || (0..reference.sample_count).map(move |s| reference.local[reference.at(s, bone)].parts[part]);
    if kind == SubTrackKind::Rotation {
        let first = reference.local[reference.at(0, bone)].parts[part].map(f64::from);
        let mut sum = [0.0f64; 4];
        for q in raw() {
            let q = q.map(f64::from);
            let dot: f64 = (0..4).map(|i| q[i] * first[i]).sum();
            let sign = if dot < 0.0 { -1.0 } else { 1.0 };
            for i in 0..4 {
                sum[i] += q[i] * sign;
            }
        }
        let len = sum.iter().map(|v| v * v).sum::<f64>().sqrt();
        if len > 0.0 && len.is_finite() {
            return sum.map(|v| (v / len) as f32);
        }
        return first.map(|v| v as f32);
    }
    let mut out = [0.0f32; 4];
    for (c, o) in out.iter_mut().enumerate().take(3) {
        let (lo, hi) = raw()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| super::sub_track::span(lo, hi, f64::from(v[c])));
        *o = ((lo + hi) * 0.5) as f32;
    }
    out
}
