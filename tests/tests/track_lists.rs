//! Scalar track lists (ACL's `track_list` files): every one of `../shared/clips`
//! compresses, and decodes at every sample within each track's own precision into
//! its output slot (checked here against the file's values, independently of the
//! encoder's own measurement); stripped tracks are not stored; the total size is at
//! most ACL's; and corrupted lists are refused or decoded without a panic.

mod common;

use ossa_decoder::{ScalarClip, ScalarSampler};
use ossa_encoder::compress::scalar::compress_tracks;
use ossa_encoder::formats::acl_text::read_track_list;
use ossa_encoder::raw_track_list::{RawTrackList, ScalarTrack, NO_OUTPUT};
use ossa_encoder::AlignedBytes;

/// ACL's sizes (`../shared/reference/acl.md`).
const ACL_BYTES: [(&str, usize); 6] =
    [("float1f", 193), ("float2f", 503), ("float3f", 719), ("float4f", 935), ("vector4f", 935), ("remap_output", 935)];

/// The largest error over every stored track, component and sample, relative to its
/// track's precision, decoding `bytes` at each sample time.
fn worst_ratio(list: &RawTrackList, bytes: &[u8]) -> f64 {
    let clip = ScalarClip::from_bytes_verified(bytes).unwrap();
    let c = list.track_type.components();
    assert_eq!(clip.track_type(), list.track_type);
    let mut sampler = ScalarSampler::new(clip);
    let mut out = vec![f32::NAN; clip.output_count() as usize * c];
    let mut worst = 0.0f64;
    for s in 0..list.sample_count {
        sampler.seek(s as f32 / clip.sample_rate());
        sampler.decompress_tracks(&mut out).unwrap();
        for track in list.tracks.iter().filter(|t| t.output_index != NO_OUTPUT) {
            for m in 0..c {
                let decoded = f64::from(out[track.output_index as usize * c + m]);
                let source = f64::from(track.values[s][m] as f32);
                worst = worst.max((decoded - source).abs() / track.precision);
            }
        }
    }
    worst
}

#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn every_shared_track_list_round_trips_within_each_tracks_precision_and_below_acls_size() {
    let Some(dir) = common::shared_clips() else { return };
    let (mut total, mut total_acl) = (0usize, 0usize);
    for (name, acl) in ACL_BYTES {
        let path = dir.join(format!("track_list_{name}.acl.sjson"));
        let list = read_track_list(&std::fs::read_to_string(&path).unwrap(), name).unwrap();
        let out = compress_tracks(&list, &Default::default()).unwrap();
        let ratio = worst_ratio(&list, &out.bytes);
        assert!(ratio <= 1.0, "{name}: an error of {ratio} times the precision");
        assert!(out.max_error_ratio <= 1.0);
        println!(
            "{name:<14} ossa {:>5} B   ACL {acl:>5} B   worst error {ratio:.3} of the precision",
            out.compressed_bytes
        );
        total += out.compressed_bytes;
        total_acl += acl;
    }
    println!("{:<14} ossa {total:>5} B   ACL {total_acl:>5} B", "total");
    assert!(total <= total_acl, "{total} B is more than ACL's {total_acl} B");
}

/// Output indices place each track in the caller's slice; a stripped track
/// (0xFFFFFFFF) is not stored at all.
#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn output_indices_place_tracks_and_stripped_tracks_are_not_stored() {
    let Some(dir) = common::shared_clips() else { return };
    let text = std::fs::read_to_string(dir.join("track_list_remap_output.acl.sjson")).unwrap();
    let list = read_track_list(&text, "remap").unwrap();
    assert_eq!(list.tracks.iter().map(|t| t.output_index).collect::<Vec<_>>(), [3, 0, 2, 1]);
    let out = compress_tracks(&list, &Default::default()).unwrap();
    let clip = ScalarClip::from_bytes(&out.bytes).unwrap();
    assert_eq!((0..4).map(|t| clip.output_index(t).unwrap()).collect::<Vec<_>>(), [3, 0, 2, 1]);
    assert!(worst_ratio(&list, &out.bytes) <= 1.0);

    let text = std::fs::read_to_string(dir.join("no_output_scalar_tracks.acl.sjson")).unwrap();
    let stripped = read_track_list(&text, "none").unwrap();
    let out = compress_tracks(&stripped, &Default::default()).unwrap();
    let clip = ScalarClip::from_bytes(&out.bytes).unwrap();
    assert_eq!((clip.track_count(), clip.output_count()), (0, 0));
}

/// A long list (several segments, so segment ranges), every class (default,
/// constant, animated, a span only raw samples hold), mixed precisions and a
/// stripped track in the middle: within each precision.
#[test]
fn a_long_list_of_every_class_holds_each_precision() {
    let samples = 200;
    let wave = |k: f64, s: usize| (s as f64 * k).sin();
    let track = |name: &str, precision: f64, output: u32, f: &dyn Fn(usize) -> [f64; 4]| ScalarTrack {
        name: name.into(),
        precision,
        output_index: output,
        values: (0..samples).map(f).collect(),
    };
    let list = RawTrackList {
        name: "mixed".into(),
        sample_rate: 30.0,
        sample_count: samples,
        track_type: ossa_decoder::ScalarType::Float3,
        tracks: vec![
            track("zero", 1e-3, 4, &|_| [1e-4, 0.0, -1e-4, 0.0]),
            track("still", 1e-4, 0, &|_| [0.25, -3.0, 7.5, 0.0]),
            track("weights", 1e-4, 2, &|s| [wave(0.1, s).abs(), wave(0.05, s) * 0.5 + 0.5, 1.0, 0.0]),
            track("gone", 1e-4, NO_OUTPUT, &|s| [s as f64, 0.0, 0.0, 0.0]),
            track("fov", 1e-2, 1, &|s| [60.0 + 10.0 * wave(0.02, s), 1.0, 0.0, 0.0]),
            track("wild", 1e-6, 3, &|s| [if s % 2 == 0 { 3e38 } else { -3e38 }, 1e-7 * s as f64, 0.0, 0.0]),
        ],
    };
    let out = compress_tracks(&list, &Default::default()).unwrap();
    let clip = ScalarClip::from_bytes(&out.bytes).unwrap();
    assert!(clip.segment_count() > 1);
    assert_eq!((clip.track_count(), clip.output_count()), (5, 5));
    assert!(clip.animated_tracks() >= 3);
    let ratio = worst_ratio(&list, &out.bytes);
    assert!(ratio <= 1.0, "{ratio}");
}

/// Every single-byte corruption of a list is refused by the checksum, and whatever
/// the structure accepts decodes without a panic.
#[test]
fn corrupted_track_lists_are_refused_or_decode_without_a_panic() {
    let path = common::repo_root().join("examples/weights.acl.sjson");
    let list = read_track_list(&std::fs::read_to_string(path).unwrap(), "weights").unwrap();
    let bytes = compress_tracks(&list, &Default::default()).unwrap().bytes;
    let mut accepted = 0;
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.to_vec();
            b[i] ^= mask;
            let b = AlignedBytes::new(&b);
            assert!(ScalarClip::from_bytes_verified(&b).is_err(), "byte {i} ^ {mask:#x} not detected");
            if let Ok(clip) = ScalarClip::from_bytes(&b) {
                accepted += 1;
                let mut sampler = ScalarSampler::new(clip);
                let mut out = vec![0.0f32; 64];
                for t in [0.0, 0.5, clip.duration(), -1.0, f32::NAN, 1e9] {
                    sampler.seek(t);
                    let _ = sampler.decompress_tracks(&mut out);
                }
            }
        }
    }
    assert!(accepted > 0);
    // A transform clip is not a track list, and the other way round.
    let clip = common::load(&common::repo_root().join("examples/wave.acl.sjson"));
    let wave = ossa_encoder::compress(&clip, &ossa_encoder::Settings::default()).unwrap().bytes;
    assert!(ScalarClip::from_bytes(&wave).is_err());
    assert!(ossa_decoder::Clip::from_bytes(&bytes).is_err());
}

/// A slice too small for the list's output slots is an error, not a partial write.
#[test]
fn a_short_output_slice_is_refused() {
    let path = common::repo_root().join("examples/weights.acl.sjson");
    let list = read_track_list(&std::fs::read_to_string(path).unwrap(), "weights").unwrap();
    let bytes = compress_tracks(&list, &Default::default()).unwrap().bytes;
    let sampler = ScalarSampler::new(ScalarClip::from_bytes(&bytes).unwrap());
    let mut out = [7.0f32; 11];
    let e = sampler.decompress_tracks(&mut out).unwrap_err();
    assert_eq!(e, ossa_decoder::Error::FloatOutputTooSmall { len: 11, needed: 12 });
    assert_eq!(out, [7.0; 11]);
}

/// A list may not declare more output slots than a list can have tracks, however its
/// output indices are remapped: what a decoder must hold stays bounded.
#[test]
fn an_output_count_beyond_the_track_limit_is_refused() {
    let path = common::repo_root().join("examples/weights.acl.sjson");
    let list = read_track_list(&std::fs::read_to_string(path).unwrap(), "weights").unwrap();
    let bytes = compress_tracks(&list, &Default::default()).unwrap().bytes;
    let descriptions = u32::from_le_bytes(bytes[40..44].try_into().unwrap()) as usize;
    let mut b = bytes.to_vec();
    b[descriptions + 4..descriptions + 8].copy_from_slice(&65_536u32.to_le_bytes());
    assert!(ScalarClip::from_bytes(&AlignedBytes::new(&b)).is_err());
    b[descriptions + 4..descriptions + 8].copy_from_slice(&65_535u32.to_le_bytes());
    assert!(ScalarClip::from_bytes(&AlignedBytes::new(&b)).is_ok(), "remapped lists may leave slots unused");
}
