//! Validation and sampling allocate nothing: a counting global allocator watches the
//! current thread while the decoder works on a real compressed clip.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use ossa_decoder::{Clip, Rounding, Sampler, Transform};
use ossa_encoder::{compress, Settings};

mod common;

struct Counting;

thread_local! {
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counter
// only reads and writes const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if WATCHING.with(Cell::get) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if WATCHING.with(Cell::get) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations made on this thread while `f` runs.
fn allocations(f: impl FnOnce()) -> usize {
    COUNT.with(|c| c.set(0));
    WATCHING.with(|w| w.set(true));
    f();
    WATCHING.with(|w| w.set(false));
    COUNT.with(Cell::get)
}

#[test]
fn validation_and_sampling_allocate_nothing() {
    let raw = common::load(&common::repo_root().join("examples/wave.acl.sjson"));
    let out = compress(&raw, &Settings::default()).unwrap();
    let bytes = &out.bytes;
    let mut pose = vec![Transform::IDENTITY; raw.bones.len()];
    // The counter works: a Vec allocates.
    assert_eq!(allocations(|| drop(std::hint::black_box(vec![1u8; 16]))), 1);
    let n = allocations(|| {
        let clip = Clip::from_bytes_verified(bytes).unwrap();
        let clip = Clip::from_bytes(bytes).unwrap_or(clip);
        let mut sampler = Sampler::new(clip);
        for k in 0..=200 {
            let t = clip.duration() * k as f32 / 200.0;
            for r in [Rounding::None, Rounding::Floor, Rounding::Ceil, Rounding::Nearest] {
                sampler.seek(t, r);
                sampler.decompress_pose(&mut pose).unwrap();
                for b in 0..clip.bone_count() {
                    std::hint::black_box(sampler.decompress_bone(b).unwrap());
                }
            }
        }
        if let Some(meta) = clip.metadata() {
            for bone in meta.bones() {
                std::hint::black_box(bone.name);
            }
        }
        std::hint::black_box(clip.layout());
        // Refusals allocate nothing either.
        std::hint::black_box(Clip::from_bytes(&bytes[..100]).unwrap_err());
    });
    assert_eq!(n, 0, "the decoder allocated {n} times");
}

/// The playback features allocate nothing either: root motion across loops, in-place
/// poses, partial decoding plans, kept poses with their plans, additive application
/// and scalar track lists.
#[test]
fn root_motion_subsets_additive_and_track_lists_allocate_nothing() {
    use ossa_decoder::{KeptPose, QuadPlan, ScalarClip, ScalarSampler, Subset};
    let raw = common::load(&common::repo_root().join("examples/stride.acl.sjson"));
    let settings = Settings { root_motion_bone: Some("hips".into()), extract_root_motion: true, ..Settings::default() };
    let stride = compress(&raw, &settings).unwrap().bytes;
    let text = std::fs::read_to_string(common::repo_root().join("examples/weights.acl.sjson")).unwrap();
    let list = ossa_encoder::formats::acl_text::read_track_list(&text, "weights").unwrap();
    let weights = ossa_encoder::compress::scalar::compress_tracks(&list, &Default::default()).unwrap().bytes;
    let mut pose = vec![Transform::IDENTITY; raw.bones.len()];
    let mut kept = vec![Transform::IDENTITY; raw.bones.len()];
    let mut plan = [QuadPlan::EMPTY; 32];
    let mut floats = [0.0f32; 64];
    let n = allocations(|| {
        let clip = Clip::from_bytes(&stride).unwrap();
        let mut subset = Subset::<8>::new(&clip, &[0, 1, 3]).unwrap();
        assert!(clip.quad_count() <= plan.len());
        let mut kept = KeptPose::with_plan(&mut kept, &mut plan);
        let mut sampler = Sampler::new(clip);
        let mut part = [Transform::IDENTITY; 3];
        for k in 0..=50 {
            let t = clip.duration() * k as f32 / 50.0;
            sampler.seek(t, Rounding::None);
            sampler.decompress_pose(&mut pose).unwrap();
            sampler.decompress_subset(&mut subset, &mut part).unwrap();
            sampler.decompress_bones(&[2, 0], &mut part).unwrap();
            sampler.decompress_kept_pose(&mut kept).unwrap();
            std::hint::black_box(clip.root_motion(t * 0.5, t, k % 5 - 2));
            std::hint::black_box(clip.root_transform(t));
            std::hint::black_box(ossa_decoder::Additive::Additive1.apply(&pose[0], &pose[1]));
        }
        let list = ScalarClip::from_bytes_verified(&weights).unwrap();
        let mut sampler = ScalarSampler::new(list);
        for k in 0..=50 {
            sampler.seek(list.duration() * k as f32 / 50.0);
            sampler.decompress_tracks(&mut floats).unwrap();
        }
    });
    assert_eq!(n, 0, "the decoder allocated {n} times");
}
