//! Streaming while sampling, as `Residency`'s documentation and
//! format-spec/database.md (Streaming while sampling) describe it: a double buffer of
//! residencies swapped between frames. During a frame, sampler threads read the front
//! residency while a streaming thread binds and unbinds chunks in the back one; at the
//! frame's end they swap. Every pose must be the one its residency gives: for each
//! segment, the pose of the clip with that segment's medium and low chunks resident
//! or not, decoded fresh and into kept poses that live across frames. The database is the golden one (format-spec/golden/stream.ossadb), so this
//! needs no encoder and also runs under Miri (`MIRIFLAGS=-Zmiri-disable-isolation`).

use std::path::PathBuf;
use std::sync::{Barrier, RwLock};

use ossa_decoder::{Binding, Clip, Database, KeptPose, QuadPlan, Residency, Rounding, Sampler, Slot, Tier, Transform};

#[repr(C, align(16))]
#[derive(Clone)]
struct Aligned([u8; 4096]);

fn golden(name: &str) -> Box<(Aligned, usize)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../format-spec/golden").join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = Box::new((Aligned([0; 4096]), bytes.len()));
    buf.0 .0[..bytes.len()].copy_from_slice(&bytes);
    buf
}

/// The f32 bits of a pose.
fn bits(pose: &[Transform]) -> Vec<u32> {
    pose.iter()
        .flat_map(|t| t.rotation.to_array().into_iter().chain(t.translation.to_array()).chain(t.scale.to_array()))
        .map(f32::to_bits)
        .collect()
}

/// Deterministic pseudo-random numbers (xorshift).
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn streaming_in_and_out_between_frames_while_threads_sample() {
    let file = golden("stream.ossadb");
    let file = &file.0 .0[..file.1];
    let database = Database::from_bytes_verified(file).unwrap();
    let clip_files: Vec<_> =
        ["wave", "glide", "stride", "cycle"].iter().map(|n| golden(&format!("stream_{n}.ossa"))).collect();
    // Opened through the database: `stride` and `cycle` take their default values
    // from its shared pose.
    let clips: Vec<Clip<'_>> = clip_files.iter().map(|b| database.open_clip(&b.0 .0[..b.1]).unwrap()).collect();
    let bindings: Vec<Binding<'_>> = clips.iter().map(|c| database.bind(c).unwrap()).collect();
    let chunk = |tier: Tier, i: u32| {
        let c = database.chunk(tier, i).unwrap();
        &file[c.file_offset as usize..][..c.size as usize]
    };
    let times_per_clip = if cfg!(miri) { 3 } else { 40 };
    let times = |clip: &Clip<'_>| -> Vec<f32> {
        (0..times_per_clip).map(|k| clip.duration() * k as f32 / (times_per_clip - 1) as f32).collect()
    };

    // The pose of every clip at every time with the medium and the low tier each
    // wholly resident or not: [medium][low][clip][time].
    let mut expected = vec![vec![Vec::new(); 2]; 2];
    for (m, by_low) in expected.iter_mut().enumerate() {
        for (l, table) in by_low.iter_mut().enumerate() {
            let mut r = Residency::new(&database, vec![None; database.chunk_slots() as usize]).unwrap();
            for (tier, on) in [(Tier::Medium, m == 1), (Tier::Low, l == 1)] {
                for i in (0..database.chunk_count(tier)).filter(|_| on) {
                    r.bind(&database, tier, i, chunk(tier, i)).unwrap();
                }
            }
            *table = clips
                .iter()
                .zip(&bindings)
                .map(|(clip, binding)| {
                    let mut sampler = Sampler::new(*clip);
                    let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
                    times(clip)
                        .into_iter()
                        .map(|t| {
                            sampler.seek_streamed(t, Rounding::None, binding, &r).unwrap();
                            sampler.decompress_pose(&mut pose).unwrap();
                            bits(&pose)
                        })
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>();
        }
    }
    // What a residency gives clip `c` at time index `k`: the segment of the key the
    // time falls on decides which chunks matter.
    let expect = |r: &Residency<'_, Vec<Slot<'_>>>, c: usize, k: usize| -> &Vec<u32> {
        let clip = &clips[c];
        let time = times(clip)[k];
        // The sample the time falls on, snapped as seeking snaps (decoding.md, Seeking).
        let p = time * clip.sample_rate();
        let nearest = p.round();
        let p = if (p - nearest).abs() <= nearest * 4.0 * f32::EPSILON { nearest } else { p };
        let sample = (p as u32).min(clip.sample_count() - 1);
        let segment = (sample / u32::from(clip.segment_len())).min(clip.segment_count() - 1);
        let tiers = database.segment_tiers(c as u32, segment).unwrap();
        let on = |t: Tier| usize::from(tiers[t.index()].present != 0 && r.is_resident(t, tiers[t.index()].chunk));
        &expected[on(Tier::Medium)][on(Tier::Low)][c][k]
    };

    let frames = if cfg!(miri) { 3 } else { 60 };
    let samplers = 2;
    let empty = || Residency::new(&database, vec![None; database.chunk_slots() as usize]).unwrap();
    // The double buffer: the front is read by the samplers during a frame, the back
    // changed by the streamer; swapped by the streamer between frames. (The locks
    // are how safe Rust lends one buffer to readers and the other to the writer; each
    // is taken once per frame, never waited on, and sampling itself takes none.)
    let buffers = [RwLock::new(empty()), RwLock::new(empty())];
    let front = std::sync::atomic::AtomicUsize::new(0);
    let barrier = Barrier::new(samplers + 1);
    let checked = std::sync::atomic::AtomicUsize::new(0);
    let failure = std::sync::Mutex::new(None::<String>);
    std::thread::scope(|scope| {
        for id in 0..samplers {
            let (buffers, front, barrier, checked, clips, bindings, failure) =
                (&buffers, &front, &barrier, &checked, &clips, &bindings, &failure);
            let expect = &expect;
            scope.spawn(move || {
                let mut rng = Rng(0x9e37_79b9 + id as u64);
                // Kept poses live across frames and residency changes: one per clip,
                // and one every clip decodes into in turn (rewritten when it switches),
                // also with a plan (made again when it switches).
                let most = clips.iter().map(|c| c.bone_count() as usize).max().unwrap_or(0);
                let mut storage: Vec<Vec<Transform>> = vec![vec![Transform::IDENTITY; most]; clips.len() + 2];
                let (planned, storage) = storage.split_last_mut().unwrap();
                let mut plan = vec![QuadPlan::EMPTY; clips.iter().map(Clip::quad_count).max().unwrap_or(0)];
                let mut planned = KeptPose::with_plan(planned, &mut plan);
                let (shared, own) = storage.split_last_mut().unwrap();
                let mut shared = KeptPose::new(shared);
                let mut own: Vec<KeptPose<'_>> = own.iter_mut().map(|s| KeptPose::new(s)).collect();
                // Each clip with its static pose attached too: streamed key frames and
                // the copied static parts give the same pose.
                let mut statics: Vec<Vec<Transform>> = vec![vec![Transform::IDENTITY; most]; clips.len()];
                let fixed: Vec<Clip<'_>> =
                    clips.iter().zip(&mut statics).map(|(c, s)| c.with_static_pose(s).unwrap()).collect();
                for _ in 0..frames {
                    // The whole frame reads the front buffer, which no one changes
                    // until every sampler has passed the barrier below.
                    let r = buffers[front.load(std::sync::atomic::Ordering::Acquire)].read().unwrap();
                    for _ in 0..if cfg!(miri) { 2 } else { 30 } {
                        let c = rng.below(clips.len() as u64) as usize;
                        let k = rng.below(times_per_clip as u64) as usize;
                        let clip = clips[c];
                        let mut sampler = Sampler::new(clip);
                        sampler.seek_streamed(times(&clip)[k], Rounding::None, &bindings[c], &*r).unwrap();
                        let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
                        sampler.decompress_pose(&mut pose).unwrap();
                        // A failure is recorded, not panicked on: a panicking thread
                        // would leave the others waiting at the barrier forever.
                        let fail = |what: &str| {
                            failure.lock().unwrap().get_or_insert_with(|| format!("clip {c}, time {k} ({what})"));
                        };
                        if &bits(&pose) != expect(&r, c, k) {
                            fail("fresh pose");
                        }
                        let mut with_statics = Sampler::new(fixed[c]);
                        with_statics.seek_streamed(times(&clip)[k], Rounding::None, &bindings[c], &*r).unwrap();
                        with_statics.decompress_pose(&mut pose).unwrap();
                        if &bits(&pose) != expect(&r, c, k) {
                            fail("fresh pose with a static pose");
                        }
                        let n = pose.len();
                        for kept in [&mut own[c], &mut shared, &mut planned] {
                            sampler.decompress_kept_pose(kept).unwrap();
                            if &bits(&kept.transforms()[..n]) != expect(&r, c, k) {
                                fail("kept pose");
                            }
                        }
                        checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    drop(r);
                    barrier.wait(); // frame end: the streamer swaps
                    barrier.wait(); // the new front is published
                }
            });
        }
        // The streamer: each frame, streams chunks in and out of the back buffer while
        // the samplers read the front, then swaps them between frames.
        let mut rng = Rng(42);
        for _ in 0..frames {
            let back = 1 - front.load(std::sync::atomic::Ordering::Acquire);
            {
                let mut r = buffers[back].write().unwrap();
                for _ in 0..4 {
                    let tier = if rng.below(2) == 0 { Tier::Medium } else { Tier::Low };
                    let i = rng.below(u64::from(database.chunk_count(tier))) as u32;
                    if r.is_resident(tier, i) {
                        assert!(r.unbind(tier, i).is_some());
                    } else {
                        assert!(r.bind(&database, tier, i, chunk(tier, i)).unwrap().is_none());
                    }
                }
            }
            barrier.wait(); // every sampler is done with the front
            front.store(back, std::sync::atomic::Ordering::Release);
            // The old front becomes the back: it starts from the state just published.
            let published = buffers[back].read().unwrap().clone();
            *buffers[1 - back].write().unwrap() = published;
            barrier.wait();
        }
    });
    if let Some(failure) = failure.into_inner().unwrap() {
        panic!("a pose differs from the one its residency gives: {failure}");
    }
    assert_eq!(checked.into_inner(), samplers * frames * if cfg!(miri) { 2 } else { 30 });
}
