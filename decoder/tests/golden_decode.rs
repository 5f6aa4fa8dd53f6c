//! The decoder alone against the golden files: validation, sampling at the golden
//! times, and every single-byte corruption of the small golden file. Needs no encoder,
//! so it also runs under Miri (`cargo +nightly miri test -p ossa-decoder`, with
//! `MIRIFLAGS=-Zmiri-disable-isolation` to read the files).

use std::fmt::Write as _;
use std::path::PathBuf;

use ossa_decoder::{Clip, Rounding, Sampler, Transform};

#[repr(C, align(16))]
struct Aligned([u8; 1 << 15]);

fn golden(name: &str) -> (Box<Aligned>, usize) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../format-spec/golden").join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = Box::new(Aligned([0; 1 << 15]));
    buf.0[..bytes.len()].copy_from_slice(&bytes);
    (buf, bytes.len())
}

fn line(out: &mut String, time: f32, mode: &str, bone: usize, t: &Transform) {
    let _ = write!(out, "{:08x} {mode} {bone}:", time.to_bits());
    for v in t.rotation.to_array().into_iter().chain(t.translation.to_array()).chain(t.scale.to_array()) {
        let _ = write!(out, " {:08x}", v.to_bits());
    }
    out.push('\n');
}

#[test]
fn golden_values_decode_bit_for_bit() {
    // Under Miri, one file and every expected line of it; natively, all of them.
    let names: &[&str] = if cfg!(miri) {
        &["pose", "crafted"]
    } else {
        &[
            "pose",
            "wave",
            "edges",
            "blink",
            "unnormalised",
            "degenerate",
            "cycle",
            "in_place",
            "skinned",
            "wide",
            "crafted",
        ]
    };
    for name in names {
        let (buf, len) = golden(&format!("{name}.ossa"));
        let clip = Clip::from_bytes_verified(&buf.0[..len]).unwrap();
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../format-spec/golden/{name}.expected.txt"));
        let expected = std::fs::read_to_string(path).unwrap();
        let mut sampler = Sampler::new(clip);
        let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
        let mut got = String::new();
        let mut decoded = None;
        for l in expected.lines().filter(|l| !l.starts_with('#')) {
            let mut parts = l.split_whitespace();
            let time = f32::from_bits(u32::from_str_radix(parts.next().unwrap(), 16).unwrap());
            let mode = parts.next().unwrap();
            let bone: usize = parts.next().unwrap().trim_end_matches(':').parse().unwrap();
            let rounding = match mode {
                "none" => Rounding::None,
                "floor" => Rounding::Floor,
                "ceil" => Rounding::Ceil,
                _ => Rounding::Nearest,
            };
            // The lines of one time and mode are one pose: decoded once (under
            // Miri, decoding it per line was most of the test's time).
            if decoded != Some((time.to_bits(), rounding)) {
                sampler.seek(time, rounding);
                sampler.decompress_pose(&mut pose).unwrap();
                decoded = Some((time.to_bits(), rounding));
            }
            line(&mut got, time, mode, bone, &pose[bone]);
            assert_eq!(sampler.decompress_bone(bone as u32).unwrap(), pose[bone]);
        }
        let expected_lines: String =
            expected.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{l}\n")).collect();
        assert!(got == expected_lines, "{name}: decoded values differ from the golden file");
    }
}

#[test]
fn single_byte_corruptions_are_refused_or_sample_safely() {
    let (buf, len) = golden("pose.ossa");
    let step = if cfg!(miri) { 7 } else { 1 };
    // One copy, each corruption undone after its check: under Miri, copying the
    // 16 KiB buffer for every corruption was most of the test's time.
    let mut copy = Box::new(Aligned([0; 1 << 15]));
    copy.0[..len].copy_from_slice(&buf.0[..len]);
    for i in (0..len).step_by(step) {
        for mask in [0x01u8, 0x80, 0xff] {
            copy.0[i] ^= mask;
            let bytes = &copy.0[..len];
            assert!(Clip::from_bytes_verified(bytes).is_err(), "byte {i} ^ {mask:#x} not detected");
            if let Ok(clip) = Clip::from_bytes(bytes) {
                let mut sampler = Sampler::new(clip);
                let mut pose = [Transform::IDENTITY; 4];
                for t in [0.0, 1.0, f32::NAN] {
                    sampler.seek(t, Rounding::None);
                    let _ = sampler.decompress_pose(&mut pose);
                    let _ = sampler.decompress_bone(1);
                }
            }
            copy.0[i] ^= mask;
        }
    }
}

/// The native SIMD backend of this build against the portable scalar one, bit for
/// bit, on every golden file at many times and every rounding mode, for whole poses
/// and for single bones. (The shared-clip version runs in `tests/tests/backends.rs`;
/// this one needs no encoder, so it also runs on aarch64 under qemu.)
#[test]
fn native_backend_matches_the_scalar_reference_on_golden_files() {
    for name in ["pose", "wave", "cycle", "stride", "wave_additive"] {
        let (buf, len) = golden(&format!("{name}.ossa"));
        let clip = Clip::from_bytes(&buf.0[..len]).unwrap();
        let mut sampler = Sampler::new(clip);
        let bones = clip.bone_count() as usize;
        let (mut native, mut scalar) = (vec![Transform::IDENTITY; bones], vec![Transform::IDENTITY; bones]);
        let steps = if cfg!(miri) { 4 } else { 7 * clip.sample_count() };
        for k in 0..=steps {
            let time = clip.duration() * k as f32 / steps as f32;
            for rounding in [Rounding::None, Rounding::Floor, Rounding::Ceil, Rounding::Nearest] {
                sampler.seek(time, rounding);
                sampler.decompress_pose(&mut native).unwrap();
                sampler.decompress_pose_scalar(&mut scalar).unwrap();
                for bone in 0..bones {
                    let single = sampler.decompress_bone(bone as u32).unwrap();
                    let single_scalar = sampler.decompress_bone_scalar(bone as u32).unwrap();
                    for t in [&scalar[bone], &single, &single_scalar] {
                        assert!(
                            same_bits(&native[bone], t),
                            "{name} ({}) t={time} {rounding:?} bone {bone}: {:?} vs {t:?}",
                            Sampler::backend(),
                            native[bone]
                        );
                    }
                }
            }
        }
    }
}

fn same_bits(a: &Transform, b: &Transform) -> bool {
    let bits = |t: &Transform| -> Vec<u32> {
        t.rotation
            .to_array()
            .into_iter()
            .chain(t.translation.to_array())
            .chain(t.scale.to_array())
            .map(f32::to_bits)
            .collect()
    };
    bits(a) == bits(b)
}

/// The sampler is a small value on the caller's stack; its doc states the size.
#[test]
fn sampler_size_is_as_documented() {
    if cfg!(target_pointer_width = "64") {
        assert_eq!(core::mem::size_of::<Clip<'static>>(), CLIP_BYTES);
        assert_eq!(core::mem::size_of::<Sampler<'static>>(), SAMPLER_BYTES);
        assert_eq!(core::mem::size_of::<ossa_decoder::Subset<16>>(), SUBSET_16_BYTES);
    }
}
/// Documented in `Sampler`'s doc comment: keep them in step.
const CLIP_BYTES: usize = 416;
const SAMPLER_BYTES: usize = 520;
/// Documented in `Subset`'s doc comment.
const SUBSET_16_BYTES: usize = 14_976;

/// The scalar track list golden file decodes bit for bit (every line under Miri
/// too: the list is small).
#[test]
fn scalar_golden_values_decode_bit_for_bit() {
    use ossa_decoder::{ScalarClip, ScalarSampler};
    let (buf, len) = golden("weights.ossa");
    let clip = ScalarClip::from_bytes_verified(&buf.0[..len]).unwrap();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../format-spec/golden/weights.expected.txt");
    let expected = std::fs::read_to_string(path).unwrap();
    let mut sampler = ScalarSampler::new(clip);
    let mut out = vec![f32::NAN; clip.output_count() as usize * clip.track_type().components()];
    for l in expected.lines().filter(|l| !l.starts_with('#')) {
        let (time, values) = l.split_once(':').unwrap();
        out.fill(f32::NAN);
        sampler.seek(f32::from_bits(u32::from_str_radix(time, 16).unwrap()));
        sampler.decompress_tracks(&mut out).unwrap();
        let want: Vec<u32> = values.split_whitespace().map(|v| u32::from_str_radix(v, 16).unwrap()).collect();
        let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "t = {time}");
    }
}

/// A file of an older major version (3.x laid animated sub-tracks out one by one) is
/// refused, with a message that names its version and the one this decoder reads and
/// says to compress the source again; a newer one says a newer ossa wrote it.
#[test]
fn other_major_versions_are_refused_by_name() {
    let (buf, len) = golden("pose.ossa");
    for (major, minor, says) in [(3u16, 2u16, "compress the source clip again"), (5, 0, "a newer ossa wrote it")] {
        let mut copy = Box::new(Aligned([0; 1 << 15]));
        copy.0[..len].copy_from_slice(&buf.0[..len]);
        copy.0[4..6].copy_from_slice(&major.to_le_bytes());
        copy.0[6..8].copy_from_slice(&minor.to_le_bytes());
        let sum = ossa_decoder::format::checksum(&copy.0[..len]);
        copy.0[12..16].copy_from_slice(&sum.to_le_bytes());
        let error = Clip::from_bytes(&copy.0[..len]).unwrap_err();
        assert_eq!(error, ossa_decoder::Error::UnsupportedVersion { major, minor });
        let message = error.to_string();
        assert!(message.contains(&format!("{major}.{minor}")) && message.contains("4.0"), "{message}");
        assert!(message.contains(says), "{message}");
    }
}
