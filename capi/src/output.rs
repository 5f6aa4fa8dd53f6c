//! The caller's `OssaTransform` array as the decoder's `Transform`s: the two share one
//! layout (48 bytes: rotation at 0, translation at 16, scale at 28), so a pose decodes
//! straight into the caller's memory, with no copy, when the array starts on the
//! boundary `Transform` needs (16 bytes where glam uses SIMD). Otherwise — a
//! misaligned array, or a glam built with `scalar-math`, whose `Transform` is smaller —
//! the pose goes through a buffer on the stack, as the same values.
//!
//! A `Transform` written whole leaves its padding undefined, which is the
//! `OssaTransform`'s `reserved` field: [`clear_reserved`] sets it to zero again after
//! every decode that wrote whole transforms, so that the caller never reads undefined
//! bytes.

use core::mem::{offset_of, size_of};

use ossa_decoder::Transform;

use crate::OssaTransform;

/// Whether `Transform` and `OssaTransform` lay their fields out alike, checked at
/// compile time on every target.
const SAME_LAYOUT: bool = size_of::<Transform>() == size_of::<OssaTransform>()
    && offset_of!(Transform, rotation) == offset_of!(OssaTransform, rotation)
    && offset_of!(Transform, translation) == offset_of!(OssaTransform, translation)
    && offset_of!(Transform, scale) == offset_of!(OssaTransform, scale);

/// Sets the `reserved` field of the `len` transforms at `out` to zero, touching no
/// other field.
///
/// # Safety
/// `out` is not null and points to `len` writable `OssaTransform`s that no reference
/// borrows during the call.
pub(crate) unsafe fn clear_reserved(out: *mut OssaTransform, len: usize) {
    for i in 0..len {
        // SAFETY: transform `i` of `len` writable ones (the contract above); writing
        // through a raw pointer to the field creates no reference to the rest, whose
        // padding may be undefined.
        unsafe { core::ptr::addr_of_mut!((*out.add(i)).reserved).write([0.0; 2]) };
    }
}

/// The `len` transforms at `out` as `Transform`s, when the layouts match and `out` is
/// aligned for them.
///
/// # Safety
/// `out` is not null and points to `len` writable `OssaTransform`s that no one else
/// uses for the lifetime `'o`.
pub(crate) unsafe fn as_transforms<'o>(out: *mut OssaTransform, len: usize) -> Option<&'o mut [Transform]> {
    if !SAME_LAYOUT || !out.cast::<Transform>().is_aligned() {
        return None;
    }
    // SAFETY: `len` writable `OssaTransform`s (the caller's contract) are `len`
    // `Transform`s of the same size whose fields lie where `Transform`'s do (checked
    // above), made of `f32`s for which every bit pattern is valid (the padding is the
    // reserved field's, whose value is unspecified); the pointer is aligned for
    // `Transform` (checked above) and used by no one else for `'o`.
    Some(unsafe { core::slice::from_raw_parts_mut(out.cast::<Transform>(), len) })
}
