//! Root motion across loops (seed 000), against values computed from the raw clip in
//! `f64`: the displacement between two times over 0, 1, 2 and 5 wraps, forwards and
//! backwards, in both looping modes, with the motion in the pose or extracted (poses in
//! place); and a game's per-frame accumulation over several loops landing where the raw
//! motion says.

mod common;

use common::{normalize, quat_mul, rotate};

use ossa_decoder::format::Looping;
use ossa_decoder::{Clip, Displacement, Rounding, Sampler, Transform};
use ossa_encoder::{compress, LoopSetting, RawClip, Settings};

/// A rigid transform in `f64`: `p' = q · p + t`.
#[derive(Clone, Copy, Debug)]
struct Rigid {
    q: [f64; 4],
    t: [f64; 3],
}

impl Rigid {
    const IDENTITY: Rigid = Rigid { q: [0.0, 0.0, 0.0, 1.0], t: [0.0; 3] };

    fn then(self, next: Rigid) -> Rigid {
        let r = rotate(self.q, next.t);
        Rigid { q: normalize(quat_mul(self.q, next.q)), t: [r[0] + self.t[0], r[1] + self.t[1], r[2] + self.t[2]] }
    }

    fn inverse(self) -> Rigid {
        let q = [-self.q[0], -self.q[1], -self.q[2], self.q[3]];
        let t = rotate(q, self.t);
        Rigid { q, t: [-t[0], -t[1], -t[2]] }
    }

    fn pow(self, n: i32) -> Rigid {
        let base = if n < 0 { self.inverse() } else { self };
        (0..n.unsigned_abs()).fold(Rigid::IDENTITY, |acc, _| acc.then(base))
    }

    fn lerp(self, other: Rigid, a: f64) -> Rigid {
        let dot: f64 = (0..4).map(|i| self.q[i] * other.q[i]).sum();
        let s = if dot < 0.0 { -1.0 } else { 1.0 };
        Rigid {
            q: normalize(std::array::from_fn(|i| self.q[i] + (s * other.q[i] - self.q[i]) * a)),
            t: std::array::from_fn(|i| self.t[i] + (other.t[i] - self.t[i]) * a),
        }
    }

    /// The decoder's displacement, its rotation renormalised in `f64`: an `f32` unit
    /// quaternion's length is 1 only within about 1e-7, which `distance` would read
    /// as a rotation of 1e-3 rad.
    fn of(d: &Displacement) -> Rigid {
        Rigid { q: normalize(d.rotation.to_array().map(f64::from)), t: d.translation.to_array().map(f64::from) }
    }

    /// Distance between the two motions: translation gap plus how far the rotation
    /// gap moves a point `reach` units away (twice the sine of half the angle).
    fn distance(self, other: Rigid, reach: f64) -> f64 {
        let dt = (0..3).map(|i| (self.t[i] - other.t[i]).powi(2)).sum::<f64>().sqrt();
        let dot: f64 = (0..4).map(|i| self.q[i] * other.q[i]).sum::<f64>().abs().min(1.0);
        dt + 2.0 * (1.0 - dot * dot).max(0.0).sqrt() * reach
    }
}

/// The motion bone's object-space transform at source sample `s` from the raw values
/// (rounded to `f32`, as the encoder's reference), composed down its chain as the
/// decoder composes (the raw clips' scales along it are 1).
fn raw_motion(clip: &RawClip, bone: usize, s: usize) -> Rigid {
    let local = |b: usize| {
        let t = &clip.tracks[b];
        Rigid {
            q: normalize(t.rotations[s].map(|v| f64::from(v as f32))),
            t: t.translations[s].map(|v| f64::from(v as f32)),
        }
    };
    match clip.bones[bone].parent {
        Some(p) => raw_motion(clip, p, s).then(local(bone)),
        None => local(bone),
    }
}

/// The raw motion at time `time` (in samples: `position`), in `[0, intervals]`:
/// interpolated between the source samples around it.
fn raw_motion_at(clip: &RawClip, bone: usize, position: f64) -> Rigid {
    let k = (position.floor() as usize).min(clip.sample_count - 1);
    let a = position - k as f64;
    if a == 0.0 || k + 1 >= clip.sample_count {
        raw_motion(clip, bone, k)
    } else {
        raw_motion(clip, bone, k).lerp(raw_motion(clip, bone, k + 1), a)
    }
}

/// The raw displacement from `previous` to `current` over `wraps` loops (positions in
/// samples), by seed 000's rule generalised to rigid motions.
fn raw_displacement(clip: &RawClip, bone: usize, previous: f64, current: f64, wraps: i32) -> Rigid {
    let start = raw_motion(clip, bone, 0);
    let end = raw_motion(clip, bone, clip.sample_count - 1);
    let one_loop = end.then(start.inverse());
    let at = |p: f64| raw_motion_at(clip, bone, p);
    start.then(at(previous).inverse()).then(one_loop.pow(wraps)).then(at(current)).then(start.inverse())
}

/// `name` with its first sample appended as its last, its motion bone `bone` carried
/// forward by its own travel (so the pose closes but the motion does not): a looping
/// walk, as a technical animator would export one.
fn walk_loop(clip: &RawClip, bone: usize) -> RawClip {
    let mut looped = clip.clone();
    looped.sample_count += 1;
    let travel = {
        let t = &clip.tracks[bone].translations;
        let (a, b) = (t[0], t[t.len() - 1]);
        [b[0] - a[0], b[1] - a[1], b[2] - a[2]]
    };
    for (b, track) in looped.tracks.iter_mut().enumerate() {
        track.rotations.push(track.rotations[0]);
        let mut t0 = track.translations[0];
        if b == bone {
            t0 = [t0[0] + travel[0] * 1.02, t0[1] + travel[1] * 1.02, t0[2] + travel[2] * 1.02];
        }
        track.translations.push(t0);
        track.scales.push(track.scales[0]);
    }
    looped
}

struct Case {
    name: String,
    raw: RawClip,
    bone: usize,
    settings: Settings,
    looping: Looping,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let Some(dir) = common::shared_clips() else { return out };
    for name in ["81_18", "49_15"] {
        let raw = common::load(&dir.join(format!("{name}.acl.sjson")));
        let hip = raw.bones.iter().position(|b| b.name == "hip").expect("CMU clips have a hip");
        let looped = walk_loop(&raw, hip);
        for extract in [false, true] {
            let settings = |looping| Settings {
                looping,
                root_motion_bone: Some("hip".into()),
                extract_root_motion: extract,
                ..Settings::default()
            };
            // The clip as it is: it does not loop, so it clamps.
            out.push(Case {
                name: format!("{name} clamp extract={extract}"),
                raw: raw.clone(),
                bone: hip,
                settings: settings(LoopSetting::Auto),
                looping: Looping::Clamp,
            });
            // A walk loop: its root travels, so `auto` clamps it unless the motion is
            // extracted (the in-place pose closes); forced, it wraps and keeps its end.
            out.push(Case {
                name: format!("{name} walk loop extract={extract}"),
                raw: looped.clone(),
                bone: hip,
                settings: settings(LoopSetting::Auto),
                looping: if extract { Looping::Wrap } else { Looping::Clamp },
            });
            out.push(Case {
                name: format!("{name} walk loop forced wrap extract={extract}"),
                raw: looped.clone(),
                bone: hip,
                settings: settings(LoopSetting::Wrap),
                looping: Looping::Wrap,
            });
        }
    }
    out
}

/// Bound on the distance between decoded and raw displacements: each of the four
/// motions read (previous, current, start, end) is within the precision in object
/// space, and the whole loops repeat the end's error.
fn tolerance(precision: f64, wraps: i32) -> f64 {
    precision * (6.0 + 3.0 * f64::from(wraps.unsigned_abs()))
}

#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn root_motion_over_0_1_2_and_5_wraps_forwards_and_backwards_matches_the_raw_clip() {
    for case in cases() {
        let out = compress(&case.raw, &case.settings).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(out.looping, case.looping, "{}", case.name);
        let clip = Clip::from_bytes(&out.bytes).unwrap();
        assert_eq!(clip.root_motion_bone(), Some(case.bone as u32));
        assert_eq!(clip.root_motion_in_place(), case.settings.extract_root_motion, "{}", case.name);
        assert_eq!(
            clip.root_end_stored(),
            case.looping == Looping::Wrap,
            "{}: a travelling root keeps its end",
            case.name
        );
        let rate = clip.sample_rate();
        let intervals = (case.raw.sample_count - 1) as f64;
        let mut worst = 0.0f64;
        // Pairs of positions (in samples): inside one loop, across the loop point,
        // at its ends, and inside the last interval (where a wrapping clip's motion
        // runs to the kept end).
        let pairs = [(3.0, 17.0), (17.0, 3.0), (intervals - 2.0, 1.0), (0.0, intervals), (intervals - 0.5, 2.5)];
        for (p, c) in pairs {
            for wraps in [0, 1, 2, 5, -1, -2, -5] {
                let got = clip.root_motion((p / f64::from(rate)) as f32, (c / f64::from(rate)) as f32, wraps);
                let want = raw_displacement(&case.raw, case.bone, p, c, wraps);
                let d = Rigid::of(&got).distance(want, 100.0);
                worst = worst.max(d / tolerance(0.01, wraps));
                assert!(
                    d <= tolerance(0.01, wraps),
                    "{}: {p} -> {c} over {wraps} wraps: {got:?} vs raw {want:?} ({d})",
                    case.name
                );
            }
        }
        println!("{:<40} worst error {:.3} of the tolerance", case.name, worst);
    }
}

/// A game plays the clip at 60 frames per second for five and a third loops, wrapping
/// its own time and counting wraps, and moves the character by each frame's
/// displacement; then plays it back in reverse. The character lands where the raw
/// motion puts it, and the poses it shows are in place when the motion is extracted.
#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn a_game_accumulating_frame_displacements_lands_where_the_raw_motion_says() {
    for case in cases() {
        let out = compress(&case.raw, &case.settings).unwrap();
        let clip = Clip::from_bytes(&out.bytes).unwrap();
        let duration = clip.duration();
        let rate = f64::from(clip.sample_rate());
        let frames = (5.33 * f64::from(duration) * 60.0) as usize;
        for direction in [1.0f32, -1.0] {
            let (mut time, mut total_wraps) = (if direction > 0.0 { 0.0f32 } else { duration }, 0i32);
            let mut character = Rigid::IDENTITY;
            let mut sampler = Sampler::new(clip);
            let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
            for frame in 0..frames {
                let step = direction * (1.0 / 60.0) * if frame % 7 == 3 { 2.5 } else { 1.0 };
                let mut next = time + step;
                let mut wraps = 0;
                while next >= duration {
                    next -= duration;
                    wraps += 1;
                }
                while next < 0.0 {
                    next += duration;
                    wraps -= 1;
                }
                character = character.then(Rigid::of(&clip.root_motion(time, next, wraps)));
                time = next;
                total_wraps += wraps;
                if case.settings.extract_root_motion && frame % 50 == 0 {
                    sampler.seek(time, Rounding::None);
                    sampler.decompress_pose(&mut pose).unwrap();
                    let first = case.raw.tracks[case.bone].translations[0].map(|v| v as f32);
                    assert_eq!(pose[case.bone].translation.to_array(), first, "{}: in place", case.name);
                }
            }
            let start = if direction > 0.0 { 0.0 } else { f64::from(duration) * rate };
            let want = raw_displacement(&case.raw, case.bone, start, f64::from(time) * rate, total_wraps);
            let d = character.distance(want, 100.0);
            // Every frame's error adds up: the bound grows with the frames played.
            let bound = tolerance(0.01, total_wraps) + 2e-5 * frames as f64;
            println!("{:<40} {direction:+} {total_wraps:+} wraps, off by {d:.5} (bound {bound:.4})", case.name);
            assert!(d <= bound, "{}: {character:?} vs {want:?}", case.name);
        }
    }
}
