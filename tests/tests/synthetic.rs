//! Clips unlike the shared ones, made here: deep and wide hierarchies, long clips,
//! other sample rates and units, large root motion, animated negative scale. The
//! bound must hold on all of them (checked with the independent metric).

mod common;

use common::Rng;
use ossa_encoder::{compress, Bone, BoneTrack, RawClip, RawTransform, Settings};

/// A smooth signal: a few sines of random frequency and phase.
fn signal(rng: &mut Rng, amplitude: f64) -> impl Fn(f64) -> f64 {
    let waves: Vec<(f64, f64, f64)> =
        (0..3).map(|_| (0.2 + rng.next() * 3.0, rng.next() * std::f64::consts::TAU, rng.next())).collect();
    move |t| amplitude * waves.iter().map(|(f, p, a)| a * (f * t + p).sin()).sum::<f64>()
}

fn axis_angle(axis: [f64; 3], angle: f64) -> [f64; 4] {
    let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    let s = (angle / 2.0).sin() / n;
    [axis[0] * s, axis[1] * s, axis[2] * s, (angle / 2.0).cos()]
}

struct Spec {
    bones: usize,
    samples: usize,
    rate: f64,
    /// Parent of bone `b` (b ≥ 1).
    parent: fn(usize) -> usize,
    bone_length: f64,
    shell: f64,
    rotation_amplitude: f64,
    root_travel: f64,
    animated_scale: bool,
}

fn make(spec: &Spec, seed: u64) -> RawClip {
    let mut rng = Rng(seed);
    let mut bones = Vec::new();
    let mut tracks = Vec::new();
    for b in 0..spec.bones {
        let parent = (b > 0).then(|| (spec.parent)(b));
        bones.push(Bone {
            name: format!("b{b}"),
            parent,
            shell_distance: spec.shell,
            bind_pose: RawTransform::IDENTITY,
        });
        let axis = [rng.next() - 0.5, rng.next() - 0.5, rng.next() - 0.5 + 1e-3];
        let base = rng.next() * 6.0;
        let angle = signal(&mut rng, spec.rotation_amplitude);
        let bob = signal(&mut rng, spec.bone_length * 0.05);
        let scale = signal(&mut rng, 0.3);
        let mut track = BoneTrack::default();
        for s in 0..spec.samples {
            let t = s as f64 / spec.rate;
            track.rotations.push(axis_angle(axis, base + angle(t)));
            let translation = if b == 0 {
                [spec.root_travel * t / (spec.samples as f64 / spec.rate), bob(t), 0.0]
            } else if b % 7 == 3 {
                [spec.bone_length + bob(t), 0.0, 0.0]
            } else {
                [spec.bone_length, 0.0, 0.0]
            };
            track.translations.push(translation);
            let sc =
                if spec.animated_scale && b % 5 == 2 { [1.0 + scale(t), 1.0, -1.0 - scale(t) * 0.5] } else { [1.0; 3] };
            track.scales.push(sc);
        }
        tracks.push(track);
    }
    RawClip {
        name: "synthetic".into(),
        sample_rate: spec.rate,
        sample_count: spec.samples,
        bones,
        tracks,
        additive: None,
        source: Default::default(),
    }
}

fn check(name: &str, spec: &Spec, precision: f64) {
    let raw = make(spec, 0x9e37_79b9_7f4a_7c15 ^ spec.bones as u64);
    let started = std::time::Instant::now();
    let out = compress(&raw, &Settings { precision, include_metadata: false, ..Settings::default() }).unwrap();
    let (err, bone, sample) = common::max_error(&raw, &out.bytes);
    println!(
        "{name}: {} bones × {} samples: {} B (raw {}), max error {err:.6}, {:.2} s",
        spec.bones,
        spec.samples,
        out.compressed_bytes,
        raw.raw_bytes(),
        started.elapsed().as_secs_f64()
    );
    assert!(err <= precision, "{name}: error {err} at bone {bone}, sample {sample} exceeds {precision}");
}

#[test]
fn deep_chain() {
    let spec = Spec {
        bones: 64,
        samples: 90,
        rate: 30.0,
        parent: |b| b - 1,
        bone_length: 8.0,
        shell: 3.0,
        rotation_amplitude: 0.3,
        root_travel: 0.0,
        animated_scale: false,
    };
    check("deep chain", &spec, 0.01);
}

#[test]
fn wide_skeleton_at_60_hz_with_negative_scale() {
    let spec = Spec {
        bones: 300,
        samples: 61,
        rate: 60.0,
        parent: |b| if b < 10 { 0 } else { b % 10 },
        bone_length: 20.0,
        shell: 5.0,
        rotation_amplitude: 0.8,
        root_travel: 50.0,
        animated_scale: true,
    };
    check("wide", &spec, 0.01);
}

#[test]
fn long_clip_in_metres_with_large_root_motion() {
    let spec = Spec {
        bones: 6,
        samples: 3001,
        rate: 120.0,
        parent: |b| b - 1,
        bone_length: 0.3,
        shell: 0.03,
        rotation_amplitude: 1.5,
        root_travel: 10_000.0,
        animated_scale: false,
    };
    check("long, metres", &spec, 0.0001);
}

#[test]
fn tight_and_loose_precisions() {
    let spec = Spec {
        bones: 20,
        samples: 40,
        rate: 24.0,
        parent: |b| (b - 1) / 2,
        bone_length: 15.0,
        shell: 3.0,
        rotation_amplitude: 1.0,
        root_travel: 100.0,
        animated_scale: true,
    };
    for precision in [1e-5, 0.001, 1.0] {
        check(&format!("precision {precision}"), &spec, precision);
    }
}

#[test]
fn more_than_65535_samples_round_trip() {
    let spec = Spec {
        bones: 3,
        samples: 70_001,
        rate: 30.0,
        parent: |b| b - 1,
        bone_length: 10.0,
        shell: 3.0,
        rotation_amplitude: 0.5,
        root_travel: 300.0,
        animated_scale: false,
    };
    check("70,001 samples", &spec, 0.01);
}

#[test]
fn a_thousand_bones_round_trip() {
    let spec = Spec {
        bones: 1_200,
        samples: 5,
        rate: 30.0,
        parent: |b| if b < 40 { b - 1 } else { b % 40 },
        bone_length: 5.0,
        shell: 3.0,
        rotation_amplitude: 0.4,
        root_travel: 10.0,
        animated_scale: true,
    };
    check("1,200 bones", &spec, 0.01);
}
