//! Golden files (`format-spec/golden/`): the encoder must reproduce each `.ossa`
//! byte for byte from its source clip, and the decoder must reproduce the expected
//! decoded values bit for bit. Regenerate deliberately, after a format change, with
//! `OSSA_BLESS=1 cargo test -p ossa-tests --test golden`.

mod common;

use std::fmt::Write as _;
use std::path::PathBuf;

use ossa_decoder::{Clip, Rounding, Sampler, Transform};
use ossa_encoder::{compress, AlignedBytes, Settings};

const GOLDEN: &[&str] = &["wave", "pose"];

fn golden_dir() -> PathBuf {
    common::repo_root().join("format-spec/golden")
}

fn bless() -> bool {
    std::env::var("OSSA_BLESS").is_ok_and(|v| v == "1")
}

/// Decoded values at a fixed set of times (every sample and the points half way),
/// some with every rounding mode, as hexadecimal `f32` bits.
fn expected_values(bytes: &[u8]) -> String {
    let clip = Clip::from_bytes_verified(bytes).expect("golden file validates");
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
    let mut out = String::from("# time rounding bone: rotation xyzw, translation xyz, scale xyz (f32 bits)\n");
    let steps = 2 * clip.sample_count();
    let modes = [
        ("none", Rounding::None),
        ("floor", Rounding::Floor),
        ("ceil", Rounding::Ceil),
        ("nearest", Rounding::Nearest),
    ];
    for k in 0..=steps {
        let time = clip.duration() * k as f32 / steps as f32;
        // Every time interpolated; every fifth time with each rounding mode too.
        let count = if k % 5 == 1 { 4 } else { 1 };
        for &(name, r) in &modes[..count] {
            sampler.seek(time, r);
            sampler.decompress_pose(&mut pose).unwrap();
            for (b, t) in pose.iter().enumerate() {
                let _ = write!(out, "{:08x} {name} {b}:", time.to_bits());
                for v in t.rotation.to_array().into_iter().chain(t.translation.to_array()).chain(t.scale.to_array()) {
                    let _ = write!(out, " {:08x}", v.to_bits());
                }
                out.push('\n');
            }
        }
    }
    out
}

#[test]
fn golden_files_encode_and_decode_bit_for_bit() {
    for name in GOLDEN {
        let source = common::repo_root().join(format!("examples/{name}.acl.sjson"));
        let raw = common::load(&source);
        let encoded = compress(&raw, &Settings::default()).unwrap().bytes;
        let ossa_path = golden_dir().join(format!("{name}.ossa"));
        let values_path = golden_dir().join(format!("{name}.expected.txt"));
        if bless() {
            std::fs::create_dir_all(golden_dir()).unwrap();
            std::fs::write(&ossa_path, &*encoded).unwrap();
            std::fs::write(&values_path, expected_values(&encoded)).unwrap();
        }
        let golden = AlignedBytes::new(&std::fs::read(&ossa_path).expect("golden .ossa present"));
        assert!(golden[..] == encoded[..], "{name}: the encoder no longer reproduces {}", ossa_path.display());
        let expected = std::fs::read_to_string(&values_path).expect("golden values present");
        assert!(expected == expected_values(&golden), "{name}: decoded values differ from {}", values_path.display());
    }
}
