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
        source: Default::default(),
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

/// fuzz/decode (a 3.0 buffer, its version made 4.0): a crafted buffer whose clip
/// ranges start at offset 0 (over the
/// header, which the format allows: sections may overlap). The whole pose read them
/// with a 16-byte load, single-bone decoding assumed two readable bytes before them
/// and read zeros: the two disagreed. Both now read the same integers.
#[test]
fn sections_at_offset_zero_decode_the_same_whole_and_bone_by_bone() {
    use ossa_decoder::{Clip, Rounding, Sampler, Transform};
    const HEX: [&str; 7] = [
        "4f5353410400000020010000d14139610000000000001006020000000a0000000000f041010000004000000050000000",
        "00000000b000000000000000000000000000020003000001000000000000000000000000000040400000004100000000",
        "00000000000000000000000000000000000000000000204300000000000000009a98193600000000ff7fff0100000000",
        "0001b000ff7fff7fff7ffc47010001000100010001000000fdff000000000000c000000039000000ff03000000000000",
        "0707053fc00ff0fb01007e951febf70303fc543fe9ef070ef8f57eeddf0f28f07bfef8bf1f70e0e7fdfd7f3f10c16ffd",
        "abff7ea0825ffdf7fdfd00063ffb0effaf7efef701dfe4f7031f000000000000000000000000000000006e0000000000",
        "00",
    ];
    let hex: String = HEX.concat();
    let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    let bytes = ossa_encoder::AlignedBytes::new(&bytes);
    let clip = Clip::from_bytes(&bytes).unwrap();
    assert_eq!(u32::from_le_bytes(bytes[48..52].try_into().unwrap()), 0, "clip ranges at offset 0");
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
    for k in 0..=20 {
        sampler.seek(clip.duration() * k as f32 / 20.0, Rounding::None);
        sampler.decompress_pose(&mut pose).unwrap();
        for (b, t) in pose.iter().enumerate() {
            assert_eq!(*t, sampler.decompress_bone(b as u32).unwrap(), "time {k}/20, bone {b}");
        }
    }
}
