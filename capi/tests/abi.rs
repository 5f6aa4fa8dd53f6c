//! The C ABI called from Rust as C would call it: every golden clip decodes through it
//! bit for bit as through the decoder, and every misuse the header names is refused
//! by its status code.

mod common;

use std::mem::MaybeUninit;

use common::{aligned, golden, view};
use ossa_c::{
    ossa_sampler_bone, ossa_sampler_bone_count, ossa_sampler_duration, ossa_sampler_init, ossa_sampler_pose,
    ossa_sampler_seek, ossa_status_message, OssaRounding, OssaSampler, OssaStatus, OssaTransform,
};
use ossa_decoder::{Clip, Rounding, Sampler, Transform};

fn init(bytes: &[u8], verify: bool) -> (OssaStatus, Box<OssaSampler>) {
    let mut sampler: Box<MaybeUninit<OssaSampler>> = Box::new(MaybeUninit::zeroed());
    // SAFETY: writable storage for a sampler; `bytes` outlives the sampler (the test).
    let status = unsafe { ossa_sampler_init(sampler.as_mut_ptr(), bytes.as_ptr(), bytes.len(), verify) };
    // SAFETY: zeroed then written by init: every bit pattern of its u64 fields is valid.
    (status, unsafe { Box::from_raw(Box::into_raw(sampler).cast::<OssaSampler>()) })
}

/// `ossa_sampler_init` on the bytes of `bytes` with the length `len` (which may claim
/// more than there is: the call must refuse it before reading).
fn init_len(bytes: &[u8], len: usize) -> OssaStatus {
    let mut sampler: Box<MaybeUninit<OssaSampler>> = Box::new(MaybeUninit::zeroed());
    // SAFETY: writable storage for a sampler; the length is refused before any read.
    unsafe { ossa_sampler_init(sampler.as_mut_ptr(), bytes.as_ptr(), len, false) }
}

fn transform(t: Transform) -> OssaTransform {
    OssaTransform::from(t)
}

#[test]
fn golden_clips_decode_through_the_abi_as_through_the_decoder() {
    for name in ["wave.ossa", "cycle.ossa", "stride.ossa", "glide.ossa", "edges.ossa", "wave_additive.ossa"] {
        let file = golden(name);
        let words = aligned(&file);
        let bytes = view(&words, file.len());
        let (status, mut sampler) = init(bytes, true);
        assert_eq!(status, OssaStatus::Ok, "{name}");
        let clip = Clip::from_bytes(bytes).unwrap();
        let mut reference = Sampler::new(clip);
        // SAFETY: an initialised sampler.
        let bones = unsafe { ossa_sampler_bone_count(&*sampler) } as usize;
        assert_eq!(bones, clip.bone_count() as usize);
        assert_eq!(unsafe { ossa_sampler_duration(&*sampler) }, clip.duration());
        let mut out = vec![OssaTransform::default(); bones];
        let mut expected = vec![Transform::IDENTITY; bones];
        for k in 0..=40 {
            let time = clip.duration() * k as f32 / 40.0;
            for (mode, rounding) in [(OssaRounding::None, Rounding::None), (OssaRounding::Nearest, Rounding::Nearest)] {
                // SAFETY: an initialised sampler and an output of `bones` transforms.
                unsafe {
                    assert_eq!(ossa_sampler_seek(&mut *sampler, time, mode as u32), OssaStatus::Ok);
                    assert_eq!(ossa_sampler_pose(&*sampler, out.as_mut_ptr(), out.len()), OssaStatus::Ok);
                }
                reference.seek(time, rounding);
                reference.decompress_pose(&mut expected).unwrap();
                for (b, (o, e)) in out.iter().zip(&expected).enumerate() {
                    assert_eq!(o, &transform(*e), "{name} at {time}, bone {b}");
                    let mut one = OssaTransform::default();
                    // SAFETY: as above, one writable transform.
                    assert_eq!(unsafe { ossa_sampler_bone(&*sampler, b as u32, &mut one) }, OssaStatus::Ok);
                    assert_eq!(&one, o);
                }
            }
        }
    }
}

#[test]
fn misuse_is_refused_by_code() {
    let file = golden("wave.ossa");
    let words = aligned(&file);
    let bytes = view(&words, file.len());
    // SAFETY (every call below): pointers are null or to live storage of the right type.
    unsafe {
        assert_eq!(
            ossa_sampler_init(std::ptr::null_mut(), bytes.as_ptr(), bytes.len(), false),
            OssaStatus::NullPointer
        );
        let (status, mut sampler) = init(&bytes[..0], false);
        assert_eq!(status, OssaStatus::Truncated);
        // A failed init leaves the sampler unusable.
        assert_eq!(ossa_sampler_seek(&mut *sampler, 0.0, 0), OssaStatus::NotInitialised);
        assert_eq!(ossa_sampler_bone_count(&*sampler), 0);
        assert_eq!(ossa_sampler_seek(std::ptr::null_mut(), 0.0, 0), OssaStatus::NullPointer);

        // Misaligned, truncated, not a clip, corrupted.
        let shifted = aligned(&[&[0u8][..], &file[..]].concat());
        let shifted = view(&shifted, file.len() + 1);
        assert_eq!(init(&shifted[1..], false).0, OssaStatus::Misaligned);
        assert_eq!(init(&bytes[..bytes.len() - 16], false).0, OssaStatus::Truncated);
        // A length no buffer can have (SIZE_MAX from C) is refused, not read.
        assert_eq!(init_len(bytes, usize::MAX), OssaStatus::InvalidArgument);
        assert_eq!(init_len(bytes, isize::MAX as usize + 1), OssaStatus::InvalidArgument);
        // Sixteen zero bytes are not a clip, rather than a short one.
        let zeros = aligned(&[0u8; 16]);
        assert_eq!(init(view(&zeros, 16), false).0, OssaStatus::NotAClip);
        let mut other = file.clone();
        other[0] = b'X';
        let other_words = aligned(&other);
        assert_eq!(init(view(&other_words, other.len()), false).0, OssaStatus::NotAClip);
        let mut corrupted = file.clone();
        let last = corrupted.len() - 40;
        corrupted[last] ^= 0x55;
        let corrupted_words = aligned(&corrupted);
        assert_eq!(init(view(&corrupted_words, corrupted.len()), true).0, OssaStatus::ChecksumMismatch);
        // A scalar track list, and a clip that needs its database.
        let weights = golden("weights.ossa");
        let weights_words = aligned(&weights);
        assert_eq!(init(view(&weights_words, weights.len()), true).0, OssaStatus::NotTransforms);
        let stride = golden("stream_stride.ossa");
        let stride_words = aligned(&stride);
        assert_eq!(init(view(&stride_words, stride.len()), true).0, OssaStatus::NeedsDatabase);

        let (status, mut sampler) = init(bytes, true);
        assert_eq!(status, OssaStatus::Ok);
        let bones = ossa_sampler_bone_count(&*sampler) as usize;
        let mut out = vec![OssaTransform::default(); bones];
        assert_eq!(ossa_sampler_pose(&*sampler, out.as_mut_ptr(), bones - 1), OssaStatus::OutputTooSmall);
        assert_eq!(ossa_sampler_pose(&*sampler, std::ptr::null_mut(), bones), OssaStatus::NullPointer);
        assert_eq!(ossa_sampler_bone(&*sampler, bones as u32, out.as_mut_ptr()), OssaStatus::BoneOutOfRange);
        assert_eq!(ossa_sampler_bone(&*sampler, 0, std::ptr::null_mut()), OssaStatus::NullPointer);
        assert_eq!(ossa_sampler_seek(&mut *sampler, 0.5, 9), OssaStatus::InvalidArgument);

        // Every status has its message; an unknown number too.
        let last = OssaStatus::ResidencyNotInitialised as u32;
        for code in 0..=last + 1 {
            let text = std::ffi::CStr::from_ptr(ossa_status_message(code)).to_str().unwrap();
            assert!(!text.is_empty());
            assert_eq!(code == last + 1, text == "unknown status", "{code}: {text}");
        }
    }
}

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
    let samplers: Vec<Box<OssaSampler>> =
        files.iter().zip(&words).map(|(f, w)| init(view(w, f.len()), true).1).collect();
    let mut kept = kept_init();
    // One array on a 16-byte boundary (decoded in place) and one that is not
    // (through a copy), both kept.
    let mut storage = Box::new(Poses([OssaTransform::default(); 17]));
    let mut expected = [OssaTransform::default(); 16];
    let mut round = 0;
    for offset in [0usize, 1] {
        for (c, sampler) in samplers.iter().enumerate().cycle().take(12) {
            round += 1;
            let time = 0.037 * round as f32;
            let bones = unsafe { ossa_sampler_bone_count(&**sampler) } as usize;
            assert!(bones <= 16);
            // SAFETY: initialised samplers and kept pose; arrays of at least `bones`.
            unsafe {
                let sampler = &**sampler as *const OssaSampler as *mut OssaSampler;
                assert_eq!(ossa_sampler_seek(sampler, time, 0), OssaStatus::Ok);
                assert_eq!(ossa_sampler_pose(sampler, expected.as_mut_ptr(), bones), OssaStatus::Ok);
                // `offset` f32s past the boundary (never 16-byte aligned when 1).
                let out = storage.0.as_mut_ptr().cast::<f32>().add(offset).cast::<OssaTransform>();
                assert_eq!(ossa_sampler_kept_pose(sampler, &mut *kept, out, 16), OssaStatus::Ok);
                for (b, expected) in expected.iter().enumerate().take(bones) {
                    let got = out.add(b).read_unaligned();
                    assert_eq!(&got, expected, "{} round {round} offset {offset} bone {b}", names[c]);
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
