//! Static poses through the C ABI (`ossa_sampler_use_static_pose`): a sampler that
//! copies its clip's static parts from the caller's array decodes the values of one
//! that decodes them, in whole poses and single bones, and copies of it share the
//! array; misuse is refused by code. Small enough to run under Miri (CI does), which
//! checks the cast of the caller's array.

mod common;

use std::mem::MaybeUninit;

use common::{aligned, golden, sampler as init, view};
use ossa_c::static_pose::ossa_sampler_use_static_pose;
use ossa_c::{
    ossa_sampler_bone, ossa_sampler_bone_count, ossa_sampler_pose, ossa_sampler_seek, OssaSampler, OssaStatus,
    OssaTransform,
};

/// Transforms on a 16-byte boundary.
#[repr(C, align(16))]
struct Poses([OssaTransform; 17]);

#[test]
fn samplers_with_a_static_pose_decode_the_same_values() {
    for name in ["wave.ossa", "cycle.ossa", "stride.ossa", "wave_additive.ossa"] {
        let file = golden(name);
        let words = aligned(&file);
        let mut plain = init(view(&words, file.len()));
        let mut fixed = init(view(&words, file.len()));
        let mut statics = Box::new(Poses([OssaTransform::default(); 17]));
        // SAFETY: initialised samplers; `statics` outlives them and is not written
        // while they are used; every array holds at least `bones` transforms.
        unsafe {
            let bones = ossa_sampler_bone_count(&*plain) as usize;
            assert!(bones <= 16);
            let status = ossa_sampler_use_static_pose(&mut *fixed, statics.0.as_mut_ptr(), 17);
            assert_eq!(status, OssaStatus::Ok, "{name}");
            // A copy of the sampler shares the static pose. (Copied as bytes, as C's
            // assignment copies it: the sampler's padding is not a value.)
            let mut copy = MaybeUninit::<OssaSampler>::uninit();
            std::ptr::copy_nonoverlapping(&*fixed, copy.as_mut_ptr(), 1);
            let copy = copy.as_mut_ptr();
            let (mut expected, mut got) = ([OssaTransform::default(); 16], [OssaTransform::default(); 16]);
            for step in 0..if cfg!(miri) { 3 } else { 20 } {
                let time = 0.043 * step as f32;
                for sampler in [&mut *plain as *mut OssaSampler, &mut *fixed, copy] {
                    assert_eq!(ossa_sampler_seek(sampler, time, 0), OssaStatus::Ok);
                }
                assert_eq!(ossa_sampler_pose(&*plain, expected.as_mut_ptr(), bones), OssaStatus::Ok);
                for sampler in [&*fixed as *const OssaSampler, copy] {
                    assert_eq!(ossa_sampler_pose(sampler, got.as_mut_ptr(), bones), OssaStatus::Ok);
                    assert_eq!(got[..bones], expected[..bones], "{name} at {time}");
                    for (b, expected) in expected.iter().enumerate().take(bones) {
                        let mut one = OssaTransform::default();
                        assert_eq!(ossa_sampler_bone(sampler, b as u32, &mut one), OssaStatus::Ok);
                        assert_eq!(&one, expected, "{name} at {time}, bone {b}");
                    }
                }
            }
        }
    }
}

#[test]
fn misuse_of_a_static_pose_is_refused() {
    let file = golden("wave.ossa");
    let words = aligned(&file);
    let mut sampler = init(view(&words, file.len()));
    let mut statics = Box::new(Poses([OssaTransform::default(); 17]));
    // SAFETY: pointers are null or to live storage of the right type and length.
    unsafe {
        let bones = ossa_sampler_bone_count(&*sampler) as usize;
        let storage = statics.0.as_mut_ptr();
        assert_eq!(ossa_sampler_use_static_pose(&mut *sampler, std::ptr::null_mut(), 16), OssaStatus::NullPointer);
        assert_eq!(ossa_sampler_use_static_pose(std::ptr::null_mut(), storage, 16), OssaStatus::NullPointer);
        assert_eq!(ossa_sampler_use_static_pose(&mut *sampler, storage, bones - 1), OssaStatus::OutputTooSmall);
        // One f32 past the boundary.
        let shifted = storage.cast::<f32>().add(1).cast::<OssaTransform>();
        assert_eq!(ossa_sampler_use_static_pose(&mut *sampler, shifted, 16), OssaStatus::Misaligned);
        let mut blank: Box<MaybeUninit<OssaSampler>> = Box::new(MaybeUninit::zeroed());
        assert_eq!(ossa_sampler_use_static_pose(blank.as_mut_ptr(), storage, 16), OssaStatus::NotInitialised);
        // The refusals left the sampler as it was: it still decodes.
        let mut pose = [OssaTransform::default(); 16];
        assert_eq!(ossa_sampler_pose(&*sampler, pose.as_mut_ptr(), bones), OssaStatus::Ok);
    }
}
