//! Kept poses from C: `ossa_kept_pose_init` prepares an `OssaKeptPose`, then each
//! `ossa_sampler_kept_pose` decodes into the same `OssaTransform` array, writing the
//! whole pose when the clip (or the array) changed and only the animated sub-tracks
//! otherwise, as the crate's `KeptPose` does. `ossa_sampler_kept_pose_planned` also
//! keeps a plan in the caller's `OssaQuadPlan` array (`KeptPose::with_plan`).

use ossa_decoder::{KeptPose, KeptState, QuadPlan};

use crate::opaque::{get, get_mut, put};
use crate::{output, pose_through_buffer, sampler_of, OssaSampler, OssaStatus, OssaTransform};

/// 64-bit words of an `OssaKeptPose`'s storage.
pub const OSSA_KEPT_POSE_WORDS: usize = 12;

/// 64-bit words of an `OssaQuadPlan`.
pub const OSSA_QUAD_PLAN_WORDS: usize = 44;

/// Storage for one quad of a kept pose's plan (what the segment the keys lie in gives
/// up to four animated sub-tracks): an array of `ossa_sampler_quad_count` of them,
/// on a 16-byte boundary, is a plan for `ossa_sampler_kept_pose_planned`. Opaque;
/// any (initialised) contents, such as zeros.
#[repr(C)]
pub struct OssaQuadPlan {
    /// The plan's bytes.
    storage: [u64; OSSA_QUAD_PLAN_WORDS],
}

const _: () = assert!(core::mem::size_of::<OssaQuadPlan>() == core::mem::size_of::<QuadPlan>());

/// What a pose kept between calls remembers: which clip's static parts the array it
/// was last decoded into holds, and which array that was. Opaque: initialise it with
/// `ossa_kept_pose_init`. One per array the caller keeps (say, one per playing clip);
/// after the caller changes the array's contents itself, `ossa_kept_pose_forget`.
#[repr(C)]
pub struct OssaKeptPose {
    /// Set by `ossa_kept_pose_init`.
    tag: u64,
    /// The remembered state.
    storage: [u64; OSSA_KEPT_POSE_WORDS],
}

/// The state behind an [`OssaKeptPose`].
pub(crate) struct Kept {
    /// The decoder's state for the array at `out`, `len` long, and the plan at `plan`
    /// (0: none).
    state: KeptState,
    out: usize,
    len: usize,
    plan: usize,
}

crate::opaque::opaque!(OssaKeptPose, Kept, 0x6f73_7361_5f6b_6570, OssaStatus::NotInitialised);

/// Prepares `kept` for its first pose (which writes every bone).
///
/// # Safety
/// `kept` is null or points to writable storage for an `OssaKeptPose`.
#[no_mangle]
pub unsafe extern "C" fn ossa_kept_pose_init(kept: *mut OssaKeptPose) -> OssaStatus {
    if kept.is_null() {
        return OssaStatus::NullPointer;
    }
    // SAFETY: not null and pointing to writable storage (the contract above).
    unsafe { put(kept, Ok(Kept { state: KeptState::default(), out: 0, len: 0, plan: 0 })) }
}

/// Forgets what `kept` remembers: the next pose writes every bone. Call it after
/// changing the array's transforms (blending into it in place, say).
///
/// # Safety
/// `kept` is null or points to an `OssaKeptPose`.
#[no_mangle]
pub unsafe extern "C" fn ossa_kept_pose_forget(kept: *mut OssaKeptPose) -> OssaStatus {
    // SAFETY: forwarded contract.
    match unsafe { get_mut(kept) } {
        Ok(k) => {
            k.state = KeptState::default();
            OssaStatus::Ok
        }
        Err(status) => status,
    }
}

/// Decodes every bone at the sampler's position into `out[0 .. bone_count]`, the
/// same values as `ossa_sampler_pose`, writing only what changes with time when
/// `kept` says `out` already holds this clip's pose: the first call for a clip, or
/// with another array, writes them all. `out` must keep its contents between calls
/// (or `ossa_kept_pose_forget` be called). An array not on a 16-byte boundary is
/// written whole on every call.
///
/// # Safety
/// `sampler` is null or points to an `OssaSampler`; `kept` is null or points to an
/// `OssaKeptPose`; `out` is null or points to `out_len` writable `OssaTransform`s.
#[no_mangle]
pub unsafe extern "C" fn ossa_sampler_kept_pose(
    sampler: *const OssaSampler,
    kept: *mut OssaKeptPose,
    out: *mut OssaTransform,
    out_len: usize,
) -> OssaStatus {
    // SAFETY: forwarded contract (no plan).
    unsafe { ossa_sampler_kept_pose_planned(sampler, kept, out, out_len, core::ptr::null_mut(), 0) }
}

/// The number of `OssaQuadPlan`s a plan for the sampler's clip needs (0 for a null
/// or uninitialised sampler).
///
/// # Safety
/// `sampler` is null or points to an `OssaSampler`.
#[no_mangle]
pub unsafe extern "C" fn ossa_sampler_quad_count(sampler: *const OssaSampler) -> usize {
    // SAFETY: forwarded contract.
    unsafe { get(sampler) }.map_or(0, |s| s.sampler.clip().quad_count())
}

/// `ossa_sampler_kept_pose`, keeping in `plan` (`plan_len` entries, on a 16-byte
/// boundary) what the segment the keys lie in gives each quad of animated
/// sub-tracks, so that later calls in the same segment decode only their bits: the
/// same values, for less. `plan` must keep its contents between calls, like `out`.
/// A null `plan`, one not on a 16-byte boundary or shorter than
/// `ossa_sampler_quad_count` entries is not used (the pose is decoded as without).
///
/// # Safety
/// As `ossa_sampler_kept_pose`; `plan` is null or points to `plan_len` initialised,
/// writable `OssaQuadPlan`s that no other call uses at the same time.
#[no_mangle]
pub unsafe extern "C" fn ossa_sampler_kept_pose_planned(
    sampler: *const OssaSampler,
    kept: *mut OssaKeptPose,
    out: *mut OssaTransform,
    out_len: usize,
    plan: *mut OssaQuadPlan,
    plan_len: usize,
) -> OssaStatus {
    // SAFETY: forwarded contract.
    let sampler = match unsafe { sampler_of(sampler) } {
        Ok(s) => s,
        Err(status) => return status,
    };
    // SAFETY: forwarded contract.
    let kept = match unsafe { get_mut(kept) } {
        Ok(k) => k,
        Err(status) => return status,
    };
    if out.is_null() {
        return OssaStatus::NullPointer;
    }
    let bones = sampler.clip().bone_count() as usize;
    if out_len < bones {
        return OssaStatus::OutputTooSmall;
    }
    // The remembered state is true only of the array and plan it was taken with.
    if (kept.out, kept.len, kept.plan) != (out.addr(), out_len, plan.addr()) {
        kept.state = KeptState::default();
    }
    // SAFETY: `out` is not null and points to `out_len` writable transforms.
    let Some(direct) = (unsafe { output::as_transforms(out, out_len) }) else {
        kept.state = KeptState::default();
        // SAFETY: as above; `bones` ≤ `out_len`.
        return pose_through_buffer(sampler, unsafe { core::slice::from_raw_parts_mut(out, bones) });
    };
    let quads: &mut [QuadPlan] = match plan_len.checked_mul(size_of::<QuadPlan>()) {
        Some(len) if !plan.is_null() => {
            // SAFETY: not null, pointing to `plan_len` initialised, writable plans of
            // `size_of::<QuadPlan>()` bytes each that nothing else uses during the
            // call (the contract); every byte pattern is a `QuadPlan`, and the cast
            // checks the alignment (a misaligned plan is not used).
            let bytes = unsafe { core::slice::from_raw_parts_mut(plan.cast::<u8>(), len) };
            QuadPlan::slice_from_bytes(bytes).unwrap_or_default()
        }
        _ => &mut [],
    };
    let before = kept.state;
    let mut pose = KeptPose::from_parts_with_plan(direct, quads, before);
    let status = match sampler.decompress_kept_pose(&mut pose) {
        Ok(()) => OssaStatus::Ok,
        Err(e) => e.into(),
    };
    let (_, state) = pose.into_parts();
    if !state.same_static_parts(&before) {
        // Whole transforms were written (the static parts): their padding is the
        // reserved field, zeroed again. Later calls write fields only.
        // SAFETY: `out` points to `out_len` ≥ `bones` writable transforms, and the
        // slice over them is no longer used.
        unsafe { output::clear_reserved(out, bones) };
    }
    *kept = Kept { state, out: out.addr(), len: out_len, plan: plan.addr() };
    status
}
