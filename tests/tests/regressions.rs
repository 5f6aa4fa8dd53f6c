//! Inputs found by fuzzing, kept as regression tests.

use ossa_encoder::{compress, Bone, BoneTrack, CompressError, RawClip, RawTransform, Settings};

fn one_bone(sample_rate: f64, translation: [f64; 3]) -> RawClip {
    RawClip {
        name: "regression".into(),
        sample_rate,
        sample_count: 2,
        bones: vec![Bone { name: "b".into(), parent: None, shell_distance: 3.0, bind_pose: RawTransform::IDENTITY }],
        tracks: vec![BoneTrack {
            rotations: vec![[0.0, 0.0, 0.0, 1.0]; 2],
            translations: vec![translation; 2],
            scales: vec![[1.0; 3]; 2],
        }],
        additive: None,
    }
}

/// fuzz/encode: a positive sample rate that rounds to zero in `f32` produced a file
/// the decoder refused. It is now refused up front.
#[test]
fn a_sample_rate_that_vanishes_in_f32_is_refused() {
    for rate in [1e-310, 1e-46] {
        match compress(&one_bone(rate, [0.0; 3]), &Settings::default()) {
            Err(CompressError::InvalidClip(e)) => assert!(e.to_string().contains("sample_rate"), "{e}"),
            other => panic!("rate {rate}: expected a refusal, got {other:?}"),
        }
    }
    // Tiny but representable rates still compress.
    assert!(compress(&one_bone(1e-30, [0.0; 3]), &Settings::default()).is_ok());
}

/// Values beyond f32 are refused with a message rather than written as infinities.
#[test]
fn values_beyond_single_precision_are_refused() {
    match compress(&one_bone(30.0, [1e39, 0.0, 0.0]), &Settings::default()) {
        Err(CompressError::InvalidClip(e)) => assert!(e.to_string().contains("single-precision"), "{e}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}
