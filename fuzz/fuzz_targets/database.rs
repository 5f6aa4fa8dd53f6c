//! A clip and a streaming database from the input → `Database::from_bytes`, the
//! database's tables and shared poses read, the clip opened through the database
//! (with its shared pose, if it has one) and bound, then a sequence of operations from the
//! rest of the input: chunks bound (from the database file, at their offsets, or cut
//! short) and unbound, residencies cloned, seeks and poses, single bones and
//! subsets. Must never crash, and:
//! - with none of the clip's chunks resident (the others all are), a streamed seek
//!   decodes as the plain one;
//! - the native and the scalar backends decode the same bits;
//! - each bone decoded alone, and a subset, equal the whole pose's.
//!
//! Input: `u32` clip length, `u32` database length, the clip, the database, then
//! four-byte operations. `cargo +nightly fuzz run database` from `fuzz/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ossa_decoder::{Clip, Database, Residency, Rounding, Sampler, Slot, Subset, Tier, Transform};

/// 16-byte aligned storage for the clip, as the decoder requires.
#[repr(C, align(16))]
struct Aligned([u8; 1 << 15]);

const MAX_CHUNKS: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let word = |at: usize| data.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let (Some(clip_len), Some(db_len)) = (word(0), word(4)) else { return };
    if clip_len > 1 << 15 || db_len > 1 << 16 || data.len() < 8 + clip_len + db_len {
        return;
    }
    let mut storage = Box::new(Aligned([0; 1 << 15]));
    storage.0[..clip_len].copy_from_slice(&data[8..8 + clip_len]);
    let clip_bytes = &storage.0[..clip_len];
    let file = &data[8 + clip_len..8 + clip_len + db_len];
    let ops = &data[8 + clip_len + db_len..];

    // The database view, and everything tools read of it.
    let _ = Database::from_bytes_verified(file);
    let Ok(database) = Database::from_bytes(file) else { return };
    let _ = (database.id(), database.index_size(), database.chunk_size(), database.low_stripped());
    for c in 0..database.clip_count().min(256) {
        if let Some(record) = database.clip(c) {
            for s in 0..record.segment_count.min(64) {
                let _ = database.segment_tiers(c, s);
            }
        }
    }
    let chunk = |tier: Tier, i: u32| -> &[u8] {
        match database.chunk(tier, i) {
            Some(c) => {
                let start = (c.file_offset as usize).min(file.len());
                &file[start..(start.saturating_add(c.size as usize)).min(file.len())]
            }
            None => &[],
        }
    };
    for tier in Tier::ALL {
        for i in 0..database.chunk_count(tier).min(64) {
            let _ = database.verify_chunk(tier, i, chunk(tier, i));
        }
    }
    if database.chunk_slots() as usize > MAX_CHUNKS {
        return;
    }
    for p in 0..database.pose_count().min(16) {
        if let Some(pose) = database.shared_pose(p) {
            let _ = (pose.transform(0), pose.transform(pose.bone_count()));
            let _ = Clip::from_bytes_with_pose(clip_bytes, pose);
        }
    }
    let Ok(clip) = database.open_clip(clip_bytes) else { return };
    let Ok(binding) = database.bind(&clip) else { return };

    let slots: Vec<Slot<'_>> = vec![None; database.chunk_slots() as usize];
    let mut residency = Residency::new(&database, slots).expect("room for every chunk");
    // Every chunk but those holding this clip's key frames: the tier path runs (when
    // the database has other chunks) and must give the clip alone.
    let (_, index) = clip.database_reference().expect("bound");
    let mut others = Residency::new(&database, vec![None; database.chunk_slots() as usize]).expect("room");
    for tier in Tier::ALL {
        for i in 0..database.chunk_count(tier) {
            let needed = (0..clip.segment_count()).any(|s| {
                database.segment_tiers(index, s).is_some_and(|t| {
                    let t = t[tier.index()];
                    t.present != 0 && t.chunk == i
                })
            });
            if !needed {
                let _ = others.bind(&database, tier, i, chunk(tier, i));
            }
        }
    }
    let mut sampler = Sampler::new(clip);
    let mut plain = Sampler::new(clip);
    let bones = clip.bone_count() as usize;
    let mut pose = vec![Transform::IDENTITY; bones];
    let mut scalar = vec![Transform::IDENTITY; bones];
    for op in ops.chunks_exact(4).take(64) {
        let (kind, a, b, c) = (op[0] % 8, op[1], op[2], op[3]);
        let tier = if a & 1 == 0 { Tier::Medium } else { Tier::Low };
        let count = database.chunk_count(tier).max(1);
        let index = u32::from(b) % count;
        match kind {
            0 | 1 => {
                // Bound whole, or cut short (refused), or a chunk that does not exist.
                let bytes = chunk(tier, index);
                let bytes = if kind == 1 { &bytes[..bytes.len().saturating_sub(usize::from(c))] } else { bytes };
                let index = if a & 2 != 0 { index.saturating_add(count) } else { index };
                let _ = residency.bind(&database, tier, index, bytes);
            }
            2 => {
                let _ = residency.unbind(tier, index);
            }
            3 => residency.unbind_all(),
            _ => {
                let time = clip.duration() * f32::from(b) / 255.0 + f32::from(c as i8) * 1e-3;
                let rounding = match a & 3 {
                    0 => Rounding::None,
                    1 => Rounding::Floor,
                    2 => Rounding::Ceil,
                    _ => Rounding::Nearest,
                };
                // A clone of the residency samples as the original.
                let cloned;
                let r = if kind == 5 {
                    cloned = residency.clone();
                    &cloned
                } else {
                    &residency
                };
                sampler.seek_streamed(time, rounding, &binding, r).expect("its own binding and residency");
                if sampler.decompress_pose(&mut pose).is_err() {
                    continue;
                }
                if sampler.decompress_pose_scalar(&mut scalar).is_ok() {
                    for (x, y) in pose.iter().zip(&scalar) {
                        assert_eq!(bits(x), bits(y), "native and scalar backends differ");
                    }
                }
                for bone in 0..bones.min(32) {
                    let alone = sampler.decompress_bone(bone as u32).expect("bone in range");
                    assert_eq!(bits(&alone), bits(&pose[bone]), "bone {bone} alone differs from the pose");
                }
                let list: Vec<u32> = (0..bones.min(4) as u32).collect();
                if let Ok(mut subset) = Subset::<4>::new(&clip, &list) {
                    let mut partial = [Transform::IDENTITY; 4];
                    sampler.decompress_subset(&mut subset, &mut partial).expect("its own clip");
                    for (t, &b) in partial.iter().zip(&list) {
                        assert_eq!(bits(t), bits(&pose[b as usize]), "subset differs from the pose");
                    }
                }
                // None of the clip's chunks resident: the clip alone.
                sampler.seek_streamed(time, rounding, &binding, &others).expect("its own binding");
                plain.seek(time, rounding);
                let _ = sampler.decompress_pose(&mut pose);
                let _ = plain.decompress_pose(&mut scalar);
                for (x, y) in pose.iter().zip(&scalar) {
                    assert_eq!(bits(x), bits(y), "nothing resident differs from the clip alone");
                }
            }
        }
    }
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
