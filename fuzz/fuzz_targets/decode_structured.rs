//! Structure-aware decoding: a valid encoded clip plus a list of mutations aimed at
//! what validation checks (header fields, offsets, counts, the root-motion block,
//! segment entries, bit rates, range bytes, bone bit sets, sample bits), with the checksum fixed up half of
//! the time, so the fuzzer gets past the first checks. Whatever validates must sample
//! without crashing.
//!
//! Input: `[L: u16 LE][L bytes for the mutations][clip bytes]`. Seeds (L = 0, valid
//! clips) come from `cargo run -p ossa-encoder --example fuzz_seeds`.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use ossa_decoder::format::{self, HEADER_SIZE, SEGMENT_ENTRY_SIZE};
use ossa_decoder::{Clip, Rounding, Sampler, Transform};

#[derive(Arbitrary, Debug)]
enum Mutation {
    /// One of the header's 32-bit fields (size, flags, counts, rate, offsets).
    HeaderWord { field: u8, value: u32 },
    /// Any header byte (magic, version, kind, segment length…).
    HeaderByte { index: u8, value: u8 },
    /// A word of a segment table entry (data offset, frame bits, frames present).
    SegmentWord { segment: u16, field: u8, value: u32 },
    /// A byte at the start of a segment's data (bit rates, then range bytes).
    SegmentByte { segment: u16, index: u16, value: u8 },
    /// A byte of the bone bit sets, rank directories, constants or clip ranges.
    TableByte { index: u16, value: u8 },
    /// Flips bits in the sample stream of a segment.
    SampleBits { segment: u16, bit: u16, mask: u32 },
    /// A word of the root-motion block after the header (bone, options, chain length,
    /// chain entries, end and in-place values), when there is one.
    RootMotionWord { index: u8, value: u32 },
    /// Cuts the buffer.
    Truncate { len: u16 },
}

#[derive(Arbitrary, Debug)]
struct Plan {
    mutations: Vec<Mutation>,
    fix_checksum: bool,
    time: f32,
    rounding: u8,
    bone: u16,
    wraps: i32,
}

#[repr(C, align(16))]
struct Aligned([u8; 1 << 17]);

fn word(buf: &[u8], at: usize) -> usize {
    buf.get(at..at + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

fn put(buf: &mut [u8], at: usize, value: u32) {
    if let Some(b) = buf.get_mut(at..at + 4) {
        b.copy_from_slice(&value.to_le_bytes());
    }
}

fn set(buf: &mut [u8], at: usize, value: u8) {
    if let Some(b) = buf.get_mut(at) {
        *b = value;
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let split = usize::from(u16::from_le_bytes([data[0], data[1]])).min(data.len() - 2);
    let (plan_bytes, clip_bytes) = data[2..].split_at(split);
    if clip_bytes.len() > 1 << 17 {
        return;
    }
    let Ok(plan) = Plan::arbitrary(&mut Unstructured::new(plan_bytes)) else { return };
    let mut storage = Box::new(Aligned([0; 1 << 17]));
    let mut len = clip_bytes.len();
    let buf = &mut storage.0[..];
    buf[..len].copy_from_slice(clip_bytes);

    // Locations come from the unmutated header, so mutations land on structure.
    let segments_offset = word(buf, 52);
    let segment_count = word(buf, 36).min(4096);
    let tracks_offset = word(buf, 40);
    for m in plan.mutations.iter().take(8) {
        match *m {
            Mutation::HeaderWord { field, value } => {
                const WORDS: [usize; 14] = [8, 12, 16, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 4];
                put(buf, WORDS[usize::from(field) % WORDS.len()], value);
            }
            Mutation::HeaderByte { index, value } => set(buf, usize::from(index) % HEADER_SIZE, value),
            Mutation::SegmentWord { segment, field, value } => {
                let s = usize::from(segment) % segment_count.max(1);
                put(buf, segments_offset + s * SEGMENT_ENTRY_SIZE + 4 * (usize::from(field) % 3), value);
            }
            Mutation::SegmentByte { segment, index, value } => {
                let s = usize::from(segment) % segment_count.max(1);
                let data_offset = word(buf, segments_offset + s * SEGMENT_ENTRY_SIZE);
                set(buf, data_offset + usize::from(index) % 256, value);
            }
            Mutation::TableByte { index, value } => set(buf, tracks_offset + usize::from(index), value),
            Mutation::SampleBits { segment, bit, mask } => {
                let s = usize::from(segment) % segment_count.max(1);
                let data_offset = word(buf, segments_offset + s * SEGMENT_ENTRY_SIZE);
                let at = data_offset + usize::from(bit) / 8;
                if let Some(b) = buf.get_mut(at..at + 4) {
                    let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) ^ mask;
                    b.copy_from_slice(&v.to_le_bytes());
                }
            }
            Mutation::RootMotionWord { index, value } => put(buf, HEADER_SIZE + 4 * (usize::from(index) % 48), value),
            Mutation::Truncate { len: l } => len = len.min(usize::from(l)),
        }
    }
    let bytes = &storage.0[..len];
    if plan.fix_checksum && len >= HEADER_SIZE {
        let total = word(bytes, 8).min(len);
        let sum = format::checksum(&bytes[..total]);
        put(&mut storage.0[..], 12, sum);
    }
    let bytes = &storage.0[..len];
    let _ = Clip::from_bytes_verified(bytes);
    if let Ok(list) = ossa_decoder::ScalarClip::from_bytes(bytes) {
        let mut sampler = ossa_decoder::ScalarSampler::new(list);
        let mut out = [0.0f32; 256];
        for t in [plan.time, 0.0, list.duration()] {
            sampler.seek(t);
            let _ = sampler.decompress_tracks(&mut out);
            let _ = sampler.decompress_stored_tracks(&mut out);
        }
        if let Some(meta) = list.metadata() {
            // (3.2) The tracks with an output are the stored ones.
            let stored = meta.tracks().filter(|t| t.output_index.is_some()).count();
            assert_eq!(stored, list.track_count() as usize);
        }
        return;
    }
    let Ok(clip) = Clip::from_bytes(bytes) else { return };
    let rounding = match plan.rounding & 3 {
        0 => Rounding::None,
        1 => Rounding::Floor,
        2 => Rounding::Ceil,
        _ => Rounding::Nearest,
    };
    let mut sampler = Sampler::new(clip);
    let mut pose = [Transform::IDENTITY; 128];
    let mut scalar = [Transform::IDENTITY; 128];
    for t in [plan.time, 0.0, clip.duration(), clip.duration() * 0.37] {
        sampler.seek(t, rounding);
        let _ = sampler.decompress_pose(&mut pose);
        // Every backend decodes the same bits, corrupted input included.
        if sampler.decompress_pose_scalar(&mut scalar).is_ok() {
            for (a, b) in pose.iter().zip(&scalar).take(clip.bone_count() as usize) {
                assert_eq!(bits(a), bits(b), "native and scalar backends differ");
            }
        }
        let _ = sampler.decompress_bone(u32::from(plan.bone));
        let _ = sampler.decompress_bone(0);
    }
    let d = clip.root_motion(plan.time, clip.duration() * 0.37, plan.wraps);
    let _ = d.transform_point(ossa_decoder::glam::Vec3::ONE);
    let _ = clip.root_transform(plan.time);
    if let Some(meta) = clip.metadata() {
        for (b, bone) in meta.bones().enumerate() {
            let _ = bone.name.len();
            // (3.2) Every bone's source joint is in range.
            assert!(meta.source_index(b as u32).is_some_and(|j| j < clip.bone_count()));
        }
        for p in meta.root_placements() {
            assert!(p.bone < clip.bone_count() && p.matrix.iter().all(|v| v.is_finite()));
        }
    }
    let _ = clip.layout();
});

/// A transform's bits, NaNs compared as NaNs (their payload is not part of the contract).
fn bits(t: &Transform) -> [u32; 10] {
    let mut out = [0u32; 10];
    let values = t.rotation.to_array().into_iter().chain(t.translation.to_array()).chain(t.scale.to_array());
    for (o, v) in out.iter_mut().zip(values) {
        *o = if v.is_nan() { f32::NAN.to_bits() } else { v.to_bits() };
    }
    out
}
