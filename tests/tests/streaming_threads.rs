//! Streaming in and out while threads sample, without any lock on the sampling path:
//! the residency is published through an atomic pointer swap (`arc-swap`), which is
//! one of the ways format-spec/database.md (Streaming while sampling) allows. Sampler
//! threads load the current residency before each seek; a streaming thread publishes a
//! new one after every change, at any moment. Every pose must be the one the residency
//! it was sampled with gives. Built from the shared clips with 1 KiB chunks, so that
//! residencies differ segment by segment.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use ossa_decoder::{Clip, Database, Residency, Rounding, Sampler, Slot, Tier, Transform};
use ossa_encoder::database::{build, DatabaseSettings};

type Shared = Residency<'static, Vec<Slot<'static>>>;

fn bits(pose: &[Transform]) -> Vec<u32> {
    pose.iter().flat_map(common::transform_bits).collect()
}

#[test]
#[cfg_attr(shared_clips_missing, ignore = "skipped: ../shared/clips not found")]
fn chunks_stream_in_and_out_while_threads_sample_lock_free() {
    let Some(dir) = common::shared_clips() else { return };
    let clips: Vec<(String, ossa_encoder::RawClip)> = ["81_18", "49_15", "127_14"]
        .iter()
        .map(|n| (n.to_string(), common::load(&dir.join(format!("{n}.acl.sjson")))))
        .collect();
    let settings = DatabaseSettings { chunk_shift: 10, medium: 0.3, low: 0.3, ..DatabaseSettings::default() };
    let built = build(&clips, &settings).unwrap();
    // The chunks' memory outlives every residency: here, for the whole test.
    let file: &'static [u8] = Box::leak(built.file.clone().into_boxed_slice());
    let database = Database::from_bytes(file).unwrap();
    let chunk = |tier: Tier, i: u32| -> &'static [u8] {
        let c = database.chunk(tier, i).unwrap();
        &file[c.file_offset as usize..][..c.size as usize]
    };
    let clip_bytes: Vec<&'static [u8]> = built.clips.iter().map(|c| &**Box::leak(Box::new(c.bytes.clone()))).collect();
    let clips: Vec<Clip<'static>> = clip_bytes.iter().map(|b| Clip::from_bytes(b).unwrap()).collect();
    let bindings: Vec<_> = clips.iter().map(|c| database.bind(c).unwrap()).collect();
    let times: Vec<Vec<f32>> =
        clips.iter().map(|c| (0..=60).map(|k| c.duration() * k as f32 / 60.0).collect()).collect();
    // [medium][low][clip][time]: each tier wholly resident or not.
    let mut expected = vec![vec![Vec::new(); 2]; 2];
    for (m, by_low) in expected.iter_mut().enumerate() {
        for (l, table) in by_low.iter_mut().enumerate() {
            let mut r: Shared = Residency::new(&database, vec![None; database.chunk_slots() as usize]).unwrap();
            for (tier, on) in [(Tier::Medium, m == 1), (Tier::Low, l == 1)] {
                for i in (0..database.chunk_count(tier)).filter(|_| on) {
                    r.bind(&database, tier, i, chunk(tier, i)).unwrap();
                }
            }
            *table = (0..clips.len())
                .map(|c| {
                    let mut sampler = Sampler::new(clips[c]);
                    let mut pose = vec![Transform::IDENTITY; clips[c].bone_count() as usize];
                    times[c]
                        .iter()
                        .map(|&t| {
                            sampler.seek_streamed(t, Rounding::None, &bindings[c], &r).unwrap();
                            sampler.decompress_pose(&mut pose).unwrap();
                            bits(&pose)
                        })
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>();
        }
    }
    let expect = |r: &Shared, c: usize, k: usize| -> &Vec<u32> {
        let clip = &clips[c];
        let p = times[c][k] * clip.sample_rate();
        let nearest = p.round();
        let p = if (p - nearest).abs() <= nearest * 4.0 * f32::EPSILON { nearest } else { p };
        let sample = (p as u32).min(clip.sample_count() - 1);
        let segment = (sample / u32::from(clip.segment_len())).min(clip.segment_count() - 1);
        let tiers = database.segment_tiers(c as u32, segment).unwrap();
        let on = |t: Tier| usize::from(tiers[t.index()].present != 0 && r.is_resident(t, tiers[t.index()].chunk));
        &expected[on(Tier::Medium)][on(Tier::Low)][c][k]
    };

    let current: ArcSwap<Shared> =
        ArcSwap::from_pointee(Residency::new(&database, vec![None; database.chunk_slots() as usize]).unwrap());
    let done = AtomicBool::new(false);
    let (poses, publications) = (AtomicUsize::new(0), AtomicUsize::new(0));
    std::thread::scope(|scope| {
        for id in 0..3u64 {
            let (current, done, poses, clips, bindings, times, expect) =
                (&current, &done, &poses, &clips, &bindings, &times, &expect);
            scope.spawn(move || {
                let mut rng = common::Rng(id + 11);
                let mut samplers: Vec<Sampler<'static>> = clips.iter().map(|c| Sampler::new(*c)).collect();
                let mut pose = Vec::new();
                while !done.load(Ordering::Relaxed) {
                    let c = (rng.next() * clips.len() as f64) as usize;
                    let k = (rng.next() * times[c].len() as f64) as usize;
                    // Lock-free: a reference count taken, the residency read, released.
                    let r = current.load();
                    samplers[c].seek_streamed(times[c][k], Rounding::None, &bindings[c], &r).unwrap();
                    pose.resize(clips[c].bone_count() as usize, Transform::IDENTITY);
                    samplers[c].decompress_pose(&mut pose).unwrap();
                    assert_eq!(&bits(&pose), expect(&r, c, k), "clip {c}, time index {k}");
                    poses.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        // The streamer: one chunk in or out at a time, each change published at once,
        // until it has published 2,000 residencies and the samplers checked 3,000 poses
        // (however the threads are scheduled).
        let mut rng = common::Rng(5);
        while publications.load(Ordering::Relaxed) < 2000 || poses.load(Ordering::Relaxed) < 3000 {
            let mut next: Shared = (**current.load()).clone();
            let tier = if rng.next() < 0.5 { Tier::Medium } else { Tier::Low };
            let i = (rng.next() * f64::from(database.chunk_count(tier))) as u32;
            if next.is_resident(tier, i) {
                next.unbind(tier, i);
            } else {
                next.bind(&database, tier, i, chunk(tier, i)).unwrap();
            }
            current.store(Arc::new(next));
            publications.fetch_add(1, Ordering::Relaxed);
            std::thread::yield_now();
        }
        done.store(true, Ordering::Relaxed);
    });
    let (poses, publications) = (poses.into_inner(), publications.into_inner());
    println!("{poses} poses checked while {publications} residencies were published");
    assert!(poses >= 3000 && publications >= 2000);
}
