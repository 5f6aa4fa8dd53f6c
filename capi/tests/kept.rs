//! Kept poses through the C ABI (`ossa_kept_pose_init`, `ossa_sampler_kept_pose`,
//! `ossa_kept_pose_forget`): the values of a fresh pose whatever happened between
//! calls (another clip, the array changed and forgotten), decoded in place into a
//! 16-byte aligned array and through a copy into any other, and misuse refused by
//! code. Small enough to run under Miri (CI does), which checks the in-place path's
//! cast of the caller's array.

mod common;

use std::mem::MaybeUninit;

use common::{aligned, golden, sampler as init, view};
use ossa_c::{ossa_sampler_bone_count, ossa_sampler_pose, ossa_sampler_seek, OssaSampler, OssaStatus, OssaTransform};

fn kept_init() -> Box<ossa_c::kept::OssaKeptPose> {
    let mut kept: Box<MaybeUninit<ossa_c::kept::OssaKeptPose>> = Box::new(MaybeUninit::zeroed());
    // SAFETY: writable storage for a kept pose.
    assert_eq!(unsafe { ossa_c::kept::ossa_kept_pose_init(kept.as_mut_ptr()) }, OssaStatus::Ok);
    // SAFETY: zeroed then written by init: every bit pattern of its u64 fields is valid.
    unsafe { Box::from_raw(Box::into_raw(kept).cast()) }
}

/// Transforms on a 16-byte boundary (`aligned`), or one `f32` past it.
#[repr(C, align(16))]
struct Poses([OssaTransform; 17]);

#[test]
fn kept_poses_through_the_abi_equal_fresh_ones_across_clips_arrays_and_forgetting() {
    use ossa_c::kept::{ossa_kept_pose_forget, ossa_sampler_kept_pose};
    let names = ["wave.ossa", "cycle.ossa", "stride.ossa", "wave_additive.ossa"];
    let files: Vec<Vec<u8>> = names.iter().map(|n| golden(n)).collect();
    let words: Vec<_> = files.iter().map(|f| aligned(f)).collect();
    let mut samplers: Vec<Box<OssaSampler>> = files.iter().zip(&words).map(|(f, w)| init(view(w, f.len()))).collect();
    let mut kept = kept_init();
    // One array on a 16-byte boundary (decoded in place) and one that is not
    // (through a copy), both kept.
    let mut storage = Box::new(Poses([OssaTransform::default(); 17]));
    let mut expected = [OssaTransform::default(); 16];
    let mut round = 0;
    for offset in [0usize, 1] {
        for turn in 0..if cfg!(miri) { 6 } else { 12 } {
            let c = turn % samplers.len();
            round += 1;
            let time = 0.037 * round as f32;
            let sampler: *mut OssaSampler = &mut *samplers[c];
            // SAFETY: an initialised sampler.
            let bones = unsafe { ossa_sampler_bone_count(sampler) } as usize;
            assert!(bones <= 16);
            // SAFETY: initialised samplers and kept pose; arrays of at least `bones`.
            unsafe {
                assert_eq!(ossa_sampler_seek(sampler, time, 0), OssaStatus::Ok);
                assert_eq!(ossa_sampler_pose(sampler, expected.as_mut_ptr(), bones), OssaStatus::Ok);
                // `offset` f32s past the boundary (never 16-byte aligned when 1).
                let out = storage.0.as_mut_ptr().cast::<f32>().add(offset).cast::<OssaTransform>();
                assert_eq!(ossa_sampler_kept_pose(sampler, &mut *kept, out, 16), OssaStatus::Ok);
                for (b, expected) in expected.iter().enumerate().take(bones) {
                    let got = out.add(b).read_unaligned();
                    assert_eq!(&got, expected, "{} round {round} offset {offset} bone {b}", names[c]);
                    assert_eq!(got.reserved, [0.0; 2], "the padding is defined, zero");
                }
                if round % 5 == 0 {
                    // The caller overwrote its array: forgetting makes the next call
                    // write it all.
                    for b in 0..16 {
                        out.add(b).write_unaligned(OssaTransform::default());
                    }
                    assert_eq!(ossa_kept_pose_forget(&mut *kept), OssaStatus::Ok);
                }
            }
        }
    }
    // Misuse: null pointers, an uninitialised kept pose, a short array.
    // SAFETY: pointers are null or to live storage of the right type.
    unsafe {
        let sampler = &*samplers[0];
        let out = storage.0.as_mut_ptr();
        let bones = ossa_sampler_bone_count(sampler) as usize;
        assert_eq!(ossa_sampler_kept_pose(sampler, std::ptr::null_mut(), out, 16), OssaStatus::NullPointer);
        assert_eq!(ossa_sampler_kept_pose(sampler, &mut *kept, std::ptr::null_mut(), 16), OssaStatus::NullPointer);
        assert_eq!(ossa_sampler_kept_pose(sampler, &mut *kept, out, bones - 1), OssaStatus::OutputTooSmall);
        let mut blank: Box<MaybeUninit<ossa_c::kept::OssaKeptPose>> = Box::new(MaybeUninit::zeroed());
        let blank = blank.as_mut_ptr();
        assert_eq!(ossa_sampler_kept_pose(sampler, blank, out, 16), OssaStatus::NotInitialised);
        assert_eq!(ossa_kept_pose_forget(blank), OssaStatus::NotInitialised);
    }
}

/// Plan storage on a 16-byte boundary, with room to start it one `u64` past it.
#[repr(C, align(16))]
struct Plans([ossa_c::kept::OssaQuadPlan; 9]);

#[test]
fn planned_poses_through_the_abi_equal_fresh_ones_with_any_plan_storage() {
    use ossa_c::kept::{ossa_sampler_kept_pose_planned, ossa_sampler_quad_count, OssaQuadPlan};
    let names = ["wave.ossa", "cycle.ossa", "stride.ossa"];
    let files: Vec<Vec<u8>> = names.iter().map(|n| golden(n)).collect();
    let words: Vec<_> = files.iter().map(|f| aligned(f)).collect();
    let mut samplers: Vec<Box<OssaSampler>> = files.iter().zip(&words).map(|(f, w)| init(view(w, f.len()))).collect();
    let quads: Vec<usize> = samplers.iter().map(|s| unsafe { ossa_sampler_quad_count(&**s) }).collect();
    assert!(quads.iter().all(|&q| (1..=8).contains(&q)), "quads {quads:?}");
    // SAFETY: every byte pattern is a plan's (zeros included).
    let mut plans: Box<Plans> = Box::new(unsafe { std::mem::zeroed() });
    let mut kept = kept_init();
    let mut storage = Box::new(Poses([OssaTransform::default(); 17]));
    let mut expected = [OssaTransform::default(); 16];
    // The plan on its boundary (used), one u64 past it (not used), one quad short of
    // the clip's (not used), and none: always the fresh pose's values.
    for way in 0..4 {
        for turn in 0..if cfg!(miri) { 4 } else { 12 } {
            let c = turn % samplers.len();
            let time = 0.041 * (turn + 1) as f32;
            let sampler: *mut OssaSampler = &mut *samplers[c];
            let base: *mut OssaQuadPlan = plans.0.as_mut_ptr();
            let (plan, len) = match way {
                // SAFETY: inside `plans`, 8 whole plans from there.
                1 => (unsafe { base.cast::<u64>().add(1).cast::<OssaQuadPlan>() }, 8),
                2 => (base, quads[c] - 1),
                3 => (std::ptr::null_mut(), 0),
                _ => (base, 8),
            };
            // SAFETY: initialised sampler and kept pose; arrays of at least `bones`;
            // `plan` is null or inside `plans` with `len` plans after it.
            unsafe {
                let bones = ossa_sampler_bone_count(sampler) as usize;
                assert_eq!(ossa_sampler_seek(sampler, time, 0), OssaStatus::Ok);
                assert_eq!(ossa_sampler_pose(sampler, expected.as_mut_ptr(), bones), OssaStatus::Ok);
                let out = storage.0.as_mut_ptr();
                assert_eq!(ossa_sampler_kept_pose_planned(sampler, &mut *kept, out, 16, plan, len), OssaStatus::Ok);
                for (b, expected) in expected.iter().enumerate().take(bones) {
                    assert_eq!(&*out.add(b), expected, "{} way {way} turn {turn} bone {b}", names[c]);
                }
            }
        }
    }
}
