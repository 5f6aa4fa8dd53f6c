//! Benchmarks: `decompress_pose` (warm cache, forward playback over 100 evenly spaced
//! times, interpolating) and compression, on 49_15 and 81_18 from `../shared/clips`.
//!
//! `cargo bench -p ossa-encoder --bench ossa`. Compare runs side by side on one
//! machine; on the shared 2-core machines prefer callgrind instruction counts.

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use ossa_decoder::{Clip, Rounding, Sampler, Transform};
use ossa_encoder::formats::acl_text;
use ossa_encoder::{compress, RawClip, Settings};

const CLIPS: [&str; 2] = ["49_15", "81_18"];

fn load(name: &str) -> Option<RawClip> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../shared/clips/{name}.acl.sjson"));
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipping {name}: {} not found", path.display());
        return None;
    };
    Some(acl_text::read_clip(&text, name).expect("shared clip parses"))
}

fn decompress_pose(c: &mut Criterion) {
    for name in CLIPS {
        let Some(raw) = load(name) else { continue };
        let compressed = compress(&raw, &Settings { include_metadata: false, ..Settings::default() }).unwrap();
        let clip = Clip::from_bytes(&compressed.bytes).unwrap();
        let times: Vec<f32> = (0..100).map(|i| clip.duration() * i as f32 / 99.0).collect();
        let mut pose = vec![Transform::IDENTITY; raw.bones.len()];
        let mut sampler = Sampler::new(clip);
        let mut next = 0usize;
        c.bench_function(&format!("decompress_pose/{name}"), |b| {
            b.iter(|| {
                sampler.seek(times[next], Rounding::None);
                sampler.decompress_pose(black_box(&mut pose)).unwrap();
                next = if next == 99 { 0 } else { next + 1 };
            })
        });
        c.bench_function(&format!("decompress_bone/{name}"), |b| {
            b.iter(|| {
                sampler.seek(times[next], Rounding::None);
                for bone in 0..clip.bone_count() {
                    black_box(sampler.decompress_bone(bone).unwrap());
                }
                next = if next == 99 { 0 } else { next + 1 };
            })
        });
    }
}

fn compression(c: &mut Criterion) {
    let mut group = c.benchmark_group("compress");
    group.sample_size(20);
    for name in CLIPS {
        let Some(raw) = load(name) else { continue };
        let settings = Settings { include_metadata: false, ..Settings::default() };
        group.bench_function(name, |b| b.iter(|| compress(black_box(&raw), &settings).unwrap()));
    }
    group.finish();
}

criterion_group!(benches, decompress_pose, compression);
criterion_main!(benches);
