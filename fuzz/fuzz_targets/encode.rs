//! The encoder on arbitrary raw clips: NaN, infinities, huge and tiny values,
//! degenerate quaternions, 0 and 1 samples, deep and wide hierarchies, several
//! roots. Either a clear error, or output that validates and decodes within the
//! precision at every sample of every bone, clamped, wrapped or either (`auto`, on
//! clips closed into loops too).
#![no_main]

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use ossa_encoder::compress::reference::Reference;
use ossa_encoder::{compress, Bone, BoneTrack, CompressError, LoopSetting, RawClip, RawTransform, Settings};

/// Numbers that break things, or any f64.
fn number(u: &mut Unstructured) -> Result<f64> {
    const SPECIAL: [f64; 14] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        1e-30,
        -1e-30,
        1e30,
        3.0e38,
        f64::NAN,
        f64::INFINITY,
        f64::MIN_POSITIVE,
        1e-310,
        100.0,
    ];
    Ok(match u.int_in_range(0..=3u8)? {
        0 => SPECIAL[usize::from(u.int_in_range(0..=13u8)?)],
        1 => f64::arbitrary(u)?,
        _ => f64::from(u.int_in_range(-1000i16..=1000)?) / 100.0,
    })
}

fn clip(u: &mut Unstructured) -> Result<(RawClip, f64)> {
    let bone_count = usize::from(u.int_in_range(0..=24u8)?);
    let samples = usize::from(u.int_in_range(0..=40u8)?);
    let shape = u.int_in_range(0..=3u8)?;
    let mut bones = Vec::new();
    let mut tracks = Vec::new();
    for b in 0..bone_count {
        let parent = match shape {
            0 => b.checked_sub(1),                             // deep chain
            1 => (b > 0).then_some(0),                         // wide
            2 => None,                                         // all roots
            _ => Option::<u8>::arbitrary(u)?.map(usize::from), // anything, even invalid
        };
        bones.push(Bone {
            name: format!("b{b}"),
            parent,
            shell_distance: if bool::arbitrary(u)? { 3.0 } else { number(u)? },
            bind_pose: RawTransform::IDENTITY,
        });
        let animated = bool::arbitrary(u)?;
        let mut track = BoneTrack::default();
        let base = [number(u)?, number(u)?, number(u)?, number(u)?];
        for _ in 0..samples {
            let mut q = base;
            let mut t = [base[0] * 10.0, base[1], base[2]];
            let mut s = [1.0, 1.0, 1.0];
            if animated {
                q = [number(u)?, number(u)?, number(u)?, number(u)?];
                t = [number(u)?, number(u)?, number(u)?];
                if bool::arbitrary(u)? {
                    s = [number(u)?, number(u)?, number(u)?];
                }
            }
            track.rotations.push(q);
            track.translations.push(t);
            track.scales.push(s);
        }
        tracks.push(track);
    }
    let sample_rate = if bool::arbitrary(u)? { 30.0 } else { number(u)? };
    let precision = [0.01, 0.001, 1.0, 1e-6, 100.0][usize::from(u.int_in_range(0..=4u8)?)];
    Ok((
        RawClip {
            name: "fuzz".into(),
            sample_rate,
            sample_count: samples,
            bones,
            tracks,
            additive: None,
            source: Default::default(),
        },
        precision,
    ))
}

/// The looping setting, and the clip closed into a loop (its first sample appended
/// as its last) one time in three, so that `auto` wraps it.
fn looping(u: &mut Unstructured, raw: &mut RawClip) -> Result<LoopSetting> {
    if u.ratio(1, 3)? && raw.sample_count > 0 {
        raw.sample_count += 1;
        for t in &mut raw.tracks {
            t.rotations.extend(t.rotations.first().copied());
            t.translations.extend(t.translations.first().copied());
            t.scales.extend(t.scales.first().copied());
        }
    }
    Ok([LoopSetting::Auto, LoopSetting::Clamp, LoopSetting::Wrap][usize::from(u.int_in_range(0..=2u8)?)])
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok((mut raw, precision)) = clip(&mut u) else { return };
    let Ok(looping) = looping(&mut u, &mut raw) else { return };
    // Key frames stripped beyond the bound one time in four (0 to 100 %).
    let strip_frames = match u.ratio(1, 4) {
        Ok(true) => f64::from(u.int_in_range(0..=100u8).unwrap_or(0)) / 100.0,
        _ => 0.0,
    };
    match compress(&raw, &Settings { precision, looping, strip_frames, ..Settings::default() }) {
        Ok(out) => {
            let clip = ossa_decoder::Clip::from_bytes_verified(&out.bytes).expect("output validates");
            assert_eq!(clip.bone_count() as usize, raw.bones.len());
            let mut valid = raw.clone();
            valid.validate().expect("compressed clips are valid");
            let reference = Reference::new(&valid).expect("the fuzzer's clips are small");
            // A forced wrap holds the bound at the stored samples; `auto` wraps only a
            // loop that closes, and holds it at the dropped last sample too.
            let bound_end = looping != LoopSetting::Wrap;
            // Stripped frames are beyond the bound: it holds at the others.
            let errors = ossa_encoder::measure::measure(&out.bytes, &reference, precision, bound_end, &[])
                .expect("output decodes");
            if out.stripped_frames == 0 {
                assert!(errors.max_error <= precision, "error {} above precision {precision}", errors.max_error);
            } else {
                let kept = out.errors.segment_max.iter().fold(0.0f64, |m, &e| m.max(e));
                assert!(kept <= precision, "error {kept} above precision {precision} at the frames kept");
            }
        }
        Err(CompressError::Internal(e)) => panic!("internal error: {e}"),
        Err(_) => {}
    }
});
