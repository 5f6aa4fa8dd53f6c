//! Planned subsets from C: `ossa_subset_init` builds an `OssaSubset` for up to
//! [`OSSA_SUBSET_BONES`] bones of the sampler's clip (the crate's `Subset`: their
//! parts that do not change with time finished once, their animated sub-tracks
//! gathered four to a vector), then every `ossa_sampler_subset` decodes those bones
//! at the sampler's position for a cost that follows them, as a level of detail or a
//! masked layer wants each frame. `ossa_sampler_bones` decodes any list without a
//! plan; the values are the same.

use ossa_decoder::{Subset, Transform};

use crate::opaque::{get_mut, put};
use crate::{output, sampler_of, OssaSampler, OssaStatus, OssaTransform};

/// The most bones an `OssaSubset` plans for.
pub const OSSA_SUBSET_BONES: usize = 16;

/// 64-bit words of an `OssaSubset`'s storage.
pub const OSSA_SUBSET_WORDS: usize = 1872;

/// The crate's plan behind an [`OssaSubset`].
type Plan = Subset<OSSA_SUBSET_BONES>;

/// The plan for decoding the same bones of one clip every frame. Opaque: initialise
/// it with `ossa_subset_init`. It must lie on a 16-byte boundary (`aligned_alloc(16,
/// …)`, `alignas(16)`, or `malloc` on 64-bit systems), or every call refuses it as
/// misaligned; it may be copied to another such place. About 15 KB: keep it with the
/// playing clip, not on a small stack.
#[repr(C)]
pub struct OssaSubset {
    /// Set by `ossa_subset_init` when it succeeds, cleared when it fails.
    tag: u64,
    /// Unused: puts the storage 16 bytes from the start, so that it is on a 16-byte
    /// boundary when the struct is.
    reserved: u64,
    /// The plan.
    storage: [u64; OSSA_SUBSET_WORDS],
}

crate::opaque::opaque!(OssaSubset, Plan, 0x6f73_7361_5f73_7562, OssaStatus::SubsetNotInitialised);

/// Builds in `subset` the plan for decoding `bones[0 .. count]` (strictly ascending,
/// each below the bone count, at most `OSSA_SUBSET_BONES`) of the sampler's clip;
/// `ossa_sampler_subset` then writes bone `bones[i]` to `out[i]`. Costs about one
/// `ossa_sampler_bone` per bone: call it when the bones change, not every frame. On
/// failure the subset is left uninitialised.
///
/// # Safety
/// `subset` is null or points to writable storage for an `OssaSubset`; `sampler` is
/// null or points to an `OssaSampler`; `bones` is null or points to `count` readable
/// `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn ossa_subset_init(
    subset: *mut OssaSubset,
    sampler: *const OssaSampler,
    bones: *const u32,
    count: usize,
) -> OssaStatus {
    if subset.is_null() {
        return OssaStatus::NullPointer;
    }
    // SAFETY: forwarded contract.
    let plan = match unsafe { sampler_of(sampler) } {
        Ok(_) if bones.is_null() && count > 0 => Err(OssaStatus::NullPointer),
        Ok(_) if count > OSSA_SUBSET_BONES => Err(OssaStatus::SubsetFull),
        Ok(sampler) => {
            // SAFETY: `count` readable indices by the contract (none when null and 0).
            let bones = if count == 0 { &[][..] } else { unsafe { core::slice::from_raw_parts(bones, count) } };
            Plan::new(sampler.clip(), bones).map_err(OssaStatus::from)
        }
        Err(status) => Err(status),
    };
    // SAFETY: `subset` is not null and points to writable storage.
    unsafe { put(subset, plan) }
}

/// Decodes the bones of `subset` (a plan built for the sampler's clip) at the
/// sampler's position: the `i`-th bone it was built with into `out[i]`, the values
/// `ossa_sampler_bones` gives them. Only their animated sub-tracks are decoded; the
/// plan also keeps what the last keys' segments gave them, so that it must not be
/// used by two calls at once.
///
/// # Safety
/// `sampler` is null or points to an `OssaSampler`; `subset` is null or points to an
/// `OssaSubset` that no other call uses at the same time; `out` is null or points to
/// `out_len` writable `OssaTransform`s.
#[no_mangle]
pub unsafe extern "C" fn ossa_sampler_subset(
    sampler: *const OssaSampler,
    subset: *mut OssaSubset,
    out: *mut OssaTransform,
    out_len: usize,
) -> OssaStatus {
    // SAFETY: forwarded contract.
    let sampler = match unsafe { sampler_of(sampler) } {
        Ok(s) => s,
        Err(status) => return status,
    };
    // SAFETY: forwarded contract.
    let plan = match unsafe { get_mut(subset) } {
        Ok(p) => p,
        Err(status) => return status,
    };
    if out.is_null() {
        return OssaStatus::NullPointer;
    }
    let bones = plan.len();
    if out_len < bones {
        return OssaStatus::OutputTooSmall;
    }
    // SAFETY: `out` is not null and points to `out_len` writable transforms.
    if let Some(direct) = unsafe { output::as_transforms(out, out_len) } {
        if let Err(e) = sampler.decompress_subset(plan, direct) {
            return e.into();
        }
        // SAFETY: `out` points to `out_len` ≥ `bones` writable transforms, and the
        // slice over them is no longer used.
        unsafe { output::clear_reserved(out, bones) };
        return OssaStatus::Ok;
    }
    // A misaligned array: decoded on the stack, then converted.
    let mut buffer = [Transform::IDENTITY; OSSA_SUBSET_BONES];
    if let Err(e) = sampler.decompress_subset(plan, &mut buffer) {
        return e.into();
    }
    // SAFETY: not null, `out_len` ≥ `bones` writable transforms (the contract).
    let out = unsafe { core::slice::from_raw_parts_mut(out, bones) };
    for (o, t) in out.iter_mut().zip(buffer.iter()) {
        *o = (*t).into();
    }
    OssaStatus::Ok
}
