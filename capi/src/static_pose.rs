//! A clip's static pose from C: `ossa_sampler_use_static_pose` decodes the parts of
//! every bone that do not change with time once into an array the caller gives, and
//! the sampler (and every copy made of it afterwards) copies them where it would
//! decode them, as the crate's `Clip::with_static_pose` does.

use ossa_decoder::Sampler;

use crate::opaque::get_mut;
use crate::{output, OssaSampler, OssaStatus, OssaTransform};

/// Decodes the parts of every bone that do not change with time (defaults and
/// constant sub-tracks) into `storage[0 .. bone_count]` and makes `sampler` copy them
/// from there instead of decoding them in every pose and bone: a fresh pose then costs
/// one copy of the array plus its animated sub-tracks. The values decoded are the
/// same, bit for bit. The sampler goes back to time 0.
///
/// `storage` must start on a 16-byte boundary (`OSSA_STATUS_MISALIGNED` otherwise),
/// hold at least `bone_count` transforms (`OSSA_STATUS_OUTPUT_TOO_SMALL`), and stay
/// valid and unchanged for as long as the sampler or a copy of it is used: its
/// contents are the sampler's (their `reserved` fields are left unspecified). Copy a
/// sampler after this call to share one static pose between samplers of a clip.
///
/// # Safety
/// `sampler` is null or points to an `OssaSampler`; `storage` is null or points to
/// `len` writable `OssaTransform`s that outlive every use of the sampler and that
/// nothing writes while it is used.
#[no_mangle]
pub unsafe extern "C" fn ossa_sampler_use_static_pose(
    sampler: *mut OssaSampler,
    storage: *mut OssaTransform,
    len: usize,
) -> OssaStatus {
    // SAFETY: forwarded contract.
    let inner = match unsafe { get_mut(sampler) } {
        Ok(inner) => inner,
        Err(status) => return status,
    };
    if storage.is_null() {
        return OssaStatus::NullPointer;
    }
    let clip = *inner.sampler.clip();
    let bones = clip.bone_count() as usize;
    if len < bones {
        return OssaStatus::OutputTooSmall;
    }
    // SAFETY: `storage` is not null and points to `len` writable transforms that
    // outlive every use of the sampler, which is what the 'static lifetime stands for
    // (the contract above).
    let Some(transforms) = (unsafe { output::as_transforms::<'static>(storage, bones) }) else {
        return OssaStatus::Misaligned;
    };
    match clip.with_static_pose(transforms) {
        Ok(fixed) => {
            inner.sampler = Sampler::new(fixed);
            OssaStatus::Ok
        }
        Err(e) => e.into(),
    }
}
