//! Looping (seed 000): clamp and wrap on real clips. A looping variant of every shared
//! clip (its first sample appended as its last) must be detected as a wrapping loop by
//! `--loop auto`, be smaller than its clamped encoding, and hold the precision at
//! every source sample, the appended one included (decoded at the duration from the
//! first key frame), measured with the independent metric of `common`. A variant
//! whose root travels over the loop, or turns, must stay clamped, and so must the
//! clips themselves, which do not loop.

mod common;

use common::quat_mul;

use ossa_decoder::format::Looping;
use ossa_decoder::{Clip, Rounding, Sampler, Transform};
use ossa_encoder::{compress, LoopSetting, RawClip, Settings};

/// `clip` with its first sample appended as its last: a loop that closes exactly.
fn closed_loop(clip: &RawClip) -> RawClip {
    let mut looped = clip.clone();
    looped.sample_count += 1;
    for track in &mut looped.tracks {
        track.rotations.push(track.rotations[0]);
        track.translations.push(track.translations[0]);
        track.scales.push(track.scales[0]);
    }
    looped
}

/// The first root bone (the default root-motion bone).
fn root(clip: &RawClip) -> usize {
    clip.bones.iter().position(|b| b.parent.is_none()).expect("a clip has a root")
}

fn settings(looping: LoopSetting) -> Settings {
    Settings { looping, ..Settings::default() }
}

#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn looping_variants_of_the_shared_clips_wrap_are_smaller_and_hold_the_precision() {
    let Some(dir) = common::shared_clips() else { return };
    let (mut total_wrap, mut total_clamp) = (0usize, 0usize);
    for path in common::transform_clips(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().replace(".acl.sjson", "");
        let raw = common::load(&path);
        let looped = closed_loop(&raw);
        let wrapped = compress(&looped, &Settings::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(wrapped.looping, Looping::Wrap, "{name}: a closed loop is detected as wrapping");
        let clamped = compress(&looped, &settings(LoopSetting::Clamp)).unwrap();
        assert_eq!(clamped.looping, Looping::Clamp);

        let clip = Clip::from_bytes(&wrapped.bytes).unwrap();
        assert_eq!(clip.looping(), Looping::Wrap);
        assert_eq!(clip.sample_count() as usize, raw.sample_count, "{name}: the repeated sample is not stored");
        assert_eq!(clip.source_sample_count() as usize, looped.sample_count);
        assert_eq!(clip.duration(), raw.sample_count as f32 / clip.sample_rate(), "{name}: duration N / rate");
        assert_eq!(clip.version(), (4, 2));

        // Every source sample, the appended one included, within the precision.
        let (error, bone, sample) = common::max_error(&looped, &wrapped.bytes);
        assert!(error <= 0.01, "{name}: error {error} at bone {bone}, sample {sample}");
        // A clip of a few samples may save less than the 16 bytes sections are aligned
        // to (81_16 is two samples of 18 animated sub-tracks at a few bits: one key
        // frame is under 16 bytes); from a segment's worth of samples on, wrapping
        // must show.
        let long = raw.sample_count >= 16;
        assert!(
            wrapped.compressed_bytes < clamped.compressed_bytes || !long,
            "{name}: wrapped {} B is not smaller than clamped {} B",
            wrapped.compressed_bytes,
            clamped.compressed_bytes
        );
        assert!(wrapped.compressed_bytes <= clamped.compressed_bytes);
        println!(
            "{name:<26} wrap {:>6} B  clamp {:>6} B  ({:+} B)  max error {error:.5}",
            wrapped.compressed_bytes,
            clamped.compressed_bytes,
            wrapped.compressed_bytes as i64 - clamped.compressed_bytes as i64
        );
        total_wrap += wrapped.compressed_bytes;
        total_clamp += clamped.compressed_bytes;

        // The clip itself does not loop: its root travels or its pose ends elsewhere.
        let plain = compress(&raw, &Settings::default()).unwrap();
        assert_eq!(plain.looping, Looping::Clamp, "{name}: a clip that does not loop stays clamped");
    }
    println!("{:<26} wrap {total_wrap:>6} B  clamp {total_clamp:>6} B", "total");
    assert!(total_wrap < total_clamp);
}

/// A loop whose pose closes but whose root ends elsewhere (it travelled, or it
/// turned) is never wrapped by `auto`: dropping the last sample would lose the root
/// motion of the last interval. Forced, wrap is still possible.
#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn a_closed_pose_whose_root_travels_or_turns_stays_clamped() {
    let Some(dir) = common::shared_clips() else { return };
    for name in ["09_02", "81_16", "103_01"] {
        let raw = common::load(&dir.join(format!("{name}.acl.sjson")));
        let r = root(&raw);
        let looped = closed_loop(&raw);
        let last = looped.sample_count - 1;

        let mut travels = looped.clone();
        // As far as the root really travels over the clip, or 0.5 units when it stays.
        let (a, b) = (raw.tracks[r].translations[0], raw.tracks[r].translations[raw.sample_count - 1]);
        let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let d = if d.iter().map(|x| x * x).sum::<f64>().sqrt() > 0.5 { d } else { [0.5, 0.0, 0.0] };
        let t = &mut travels.tracks[r].translations[last];
        *t = [t[0] + d[0], t[1] + d[1], t[2] + d[2]];

        let mut turns = looped.clone();
        // A quarter turn about the vertical axes of both conventions.
        let q = turns.tracks[r].rotations[last];
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let yaw = [0.0, h * 0.1, h * 0.1, (1.0f64 - 0.01).sqrt()];
        turns.tracks[r].rotations[last] = quat_mul(yaw, q);

        for (what, clip) in [("travels", &travels), ("turns", &turns)] {
            let out = compress(clip, &Settings::default()).unwrap();
            assert_eq!(out.looping, Looping::Clamp, "{name}: a root that {what} over the loop is not wrapped");
            let (error, ..) = common::max_error(clip, &out.bytes);
            assert!(error <= 0.01, "{name} ({what}): {error}");
            // Forced, it wraps: the bound holds at the stored samples, and the error
            // at the dropped one (the root's motion over the loop) is reported.
            let forced = compress(clip, &settings(LoopSetting::Wrap)).unwrap();
            assert_eq!(forced.looping, Looping::Wrap, "{name}: --loop wrap is obeyed");
            assert!(forced.errors.max_error <= 0.01);
            let end = forced.errors.loop_end_error.expect("a wrapping clip reports its loop end");
            assert!(end > 0.01, "{name} ({what}): the root's end is {end} from its start");
        }
    }
}

/// Bit-for-bit equality of two poses.
fn same_pose(a: &[Transform], b: &[Transform]) -> bool {
    let bits = |t: &Transform| -> Vec<u32> {
        t.rotation
            .to_array()
            .into_iter()
            .chain(t.translation.to_array())
            .chain(t.scale.to_array())
            .map(f32::to_bits)
            .collect()
    };
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| bits(x) == bits(y))
}

/// The sampling rules of a wrapping clip (seed 000, decoding.md): the last interval
/// runs from the last stored sample back to the first; the duration and any time past
/// it decode the first sample; a clamped encoding of the same clip decodes its last.
#[test]
fn a_wrapping_clip_samples_by_the_rules_of_seed_000() {
    let raw = common::load(&common::repo_root().join("examples/cycle.acl.sjson"));
    let wrapped = compress(&raw, &Settings::default()).unwrap();
    assert_eq!(wrapped.looping, Looping::Wrap, "examples/cycle loops");
    let clip = Clip::from_bytes(&wrapped.bytes).unwrap();
    let n = clip.sample_count();
    let rate = clip.sample_rate();
    let bones = clip.bone_count() as usize;
    let mut sampler = Sampler::new(clip);
    let mut pose = |time: f32, rounding: Rounding| {
        let mut out = vec![Transform::IDENTITY; bones];
        sampler.seek(time, rounding);
        sampler.decompress_pose(&mut out).unwrap();
        out
    };
    let first = pose(0.0, Rounding::None);
    let last_stored = pose((n - 1) as f32 / rate, Rounding::None);
    assert!(!same_pose(&first, &last_stored));
    for time in [clip.duration(), clip.duration() + 0.5, 1e9, f32::INFINITY] {
        assert!(same_pose(&pose(time, Rounding::None), &first), "t = {time} decodes the first sample");
    }
    // Inside the last interval: floor is the last stored sample, ceil the first, and
    // the interpolated pose lies between them (not equal to either).
    let inside = ((n - 1) as f32 + 0.5) / rate;
    assert!(same_pose(&pose(inside, Rounding::Floor), &last_stored));
    assert!(same_pose(&pose(inside, Rounding::Ceil), &first));
    assert!(same_pose(&pose(inside, Rounding::Nearest), &first));
    let between = pose(inside, Rounding::None);
    assert!(!same_pose(&between, &first) && !same_pose(&between, &last_stored));
    for b in 0..bones {
        for axis in 0..3 {
            let (a, c, m) =
                (last_stored[b].translation[axis], first[b].translation[axis], between[b].translation[axis]);
            assert!(m >= a.min(c) && m <= a.max(c), "bone {b}: {m} between {a} and {c}");
        }
    }

    // The same clip clamped: one more sample stored, the same duration, and the
    // duration decodes its own last sample (equal to the first within the precision).
    let clamped = compress(&raw, &settings(LoopSetting::Clamp)).unwrap();
    let clamped_clip = Clip::from_bytes(&clamped.bytes).unwrap();
    assert_eq!(clamped_clip.sample_count(), n + 1);
    assert_eq!(clamped_clip.duration(), clip.duration());
    assert!(clamped.compressed_bytes > wrapped.compressed_bytes);
}

/// `--loop wrap` cannot apply to a single sample; auto leaves it clamped.
#[test]
fn a_single_sample_cannot_wrap() {
    let raw = common::load(&common::repo_root().join("examples/pose.acl.sjson"));
    let e = compress(&raw, &settings(LoopSetting::Wrap)).unwrap_err();
    assert!(e.to_string().contains("single sample"), "{e}");
    assert_eq!(compress(&raw, &Settings::default()).unwrap().looping, Looping::Clamp);
}
