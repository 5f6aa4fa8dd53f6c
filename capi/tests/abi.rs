//! The C ABI called from Rust as C would call it: every golden clip decodes through it
//! bit for bit as through the decoder, and every misuse the header names is refused
//! by its status code.

mod common;

use std::mem::MaybeUninit;

use common::{aligned, golden, view};
use ossa_c::{
    ossa_sampler_bone, ossa_sampler_bone_count, ossa_sampler_bones, ossa_sampler_duration, ossa_sampler_init,
    ossa_sampler_pose, ossa_sampler_seek, ossa_status_message, OssaRounding, OssaSampler, OssaStatus, OssaTransform,
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
                // Lists: each bone as in the pose.
                let check_list = |list: &[u32], what: &str| {
                    let mut some = vec![OssaTransform::default(); list.len()];
                    // SAFETY: `list` and `some` hold `list.len()` values each.
                    let status = unsafe {
                        ossa_sampler_bones(&*sampler, list.as_ptr(), list.len(), some.as_mut_ptr(), some.len())
                    };
                    assert_eq!(status, OssaStatus::Ok, "{name} at {time}, {what}");
                    for (o, &b) in some.iter().zip(list) {
                        assert_eq!(o, &out[b as usize], "{name} at {time}, bone {b} of {what}");
                    }
                };
                check_list(
                    &(0..bones as u32).rev().chain([0]).collect::<Vec<_>>(),
                    "a list in any order, with a repeat",
                );
                check_list(
                    &(0..300).map(|i| (i * 7 % bones) as u32).collect::<Vec<_>>(),
                    "a list longer than the groups the call decodes at once (128)",
                );
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
        // A list with an index out of range writes nothing.
        let list = [0u32, bones as u32, 1];
        let marker = OssaTransform { translation: [7.0; 3], ..OssaTransform::default() };
        let mut three = [marker; 3];
        let status = ossa_sampler_bones(&*sampler, list.as_ptr(), 3, three.as_mut_ptr(), 3);
        assert_eq!(status, OssaStatus::BoneOutOfRange);
        assert!(three.iter().all(|t| t == &marker));
        assert_eq!(ossa_sampler_bones(&*sampler, list.as_ptr(), 3, three.as_mut_ptr(), 2), OssaStatus::OutputTooSmall);
        assert_eq!(ossa_sampler_bones(&*sampler, std::ptr::null(), 3, three.as_mut_ptr(), 3), OssaStatus::NullPointer);
        assert_eq!(ossa_sampler_bones(&*sampler, list.as_ptr(), 1, std::ptr::null_mut(), 3), OssaStatus::NullPointer);
        assert_eq!(ossa_sampler_bones(&*sampler, std::ptr::null(), 0, three.as_mut_ptr(), 0), OssaStatus::Ok);
        assert_eq!(ossa_sampler_seek(&mut *sampler, 0.5, 9), OssaStatus::InvalidArgument);

        // Every status has its message; an unknown number too.
        let last = OssaStatus::SubsetOfAnotherClip as u32;
        for code in 0..=last + 1 {
            let text = std::ffi::CStr::from_ptr(ossa_status_message(code)).to_str().unwrap();
            assert!(!text.is_empty());
            assert_eq!(code == last + 1, text == "unknown status", "{code}: {text}");
        }
    }
}
