//! The C ABI's opaque structs (`OssaSampler`, `OssaDatabase`, `OssaResidency`,
//! `OssaKeptPose`, `OssaSubset`): storage the caller owns, which an `init` call fills
//! with a Rust value and marks with a tag, and which every other call reads back only
//! when the tag says it was filled. One implementation of that pattern, so that its
//! unsafe code is written once.
//!
//! A value that needs more than 8-byte alignment (an `OssaSubset`'s, 16) is only
//! aligned when the caller's struct is: every call checks where the storage lies and
//! refuses a misaligned one (`OssaStatus::Misaligned`) before touching it.

use core::mem::MaybeUninit;

use crate::OssaStatus;

/// A C struct of a `u64` tag and words of storage holding a [`Opaque::Value`] once an
/// `init` call succeeded.
///
/// # Safety
/// `parts` returns pointers to the struct's own tag and storage fields; the storage is
/// large enough for `Value` (each implementation checks it at compile time), and `TAG`
/// is a value no other opaque struct uses. Alignment is checked at run time, by [`put`]
/// and [`initialised`].
pub(crate) unsafe trait Opaque {
    /// What the storage holds once initialised.
    type Value;
    /// The tag's value once a `Value` was written.
    const TAG: u64;
    /// The status of a call given a struct of this type that no `init` call filled.
    const NOT_INITIALISED: OssaStatus;
    /// The tag and storage fields of `*this`.
    ///
    /// # Safety
    /// `this` is not null and points to a `Self`.
    unsafe fn parts(this: *mut Self) -> (*mut u64, *mut MaybeUninit<Self::Value>);
}

/// Writes `value` into `this` and marks it initialised; on an error, clears the tag
/// (the struct is then uninitialised) and returns the status.
///
/// # Safety
/// `this` is not null and points to writable storage for an `O`.
pub(crate) unsafe fn put<O: Opaque>(this: *mut O, value: Result<O::Value, OssaStatus>) -> OssaStatus {
    // SAFETY: not null and pointing to an `O` (the caller's contract).
    let (tag, storage) = unsafe { O::parts(this) };
    // A misaligned struct cannot hold the value: refused, and left uninitialised.
    let value = if storage.is_aligned() { value } else { Err(OssaStatus::Misaligned) };
    match value {
        Ok(value) => {
            // SAFETY: writable storage, large enough for the value (the trait's
            // contract) and aligned for it (checked above).
            unsafe {
                (*storage).write(value);
                tag.write(O::TAG);
            }
            OssaStatus::Ok
        }
        Err(status) => {
            // SAFETY: writable (the caller's contract).
            unsafe { tag.write(0) };
            status
        }
    }
}

/// The value behind `this`, when it is not null and was initialised.
///
/// # Safety
/// `this` is null or points to an `O`.
pub(crate) unsafe fn get<'s, O: Opaque>(this: *const O) -> Result<&'s O::Value, OssaStatus> {
    if this.is_null() {
        return Err(OssaStatus::NullPointer);
    }
    // SAFETY: not null and pointing to an `O`; the pointers are only read through.
    let storage = unsafe { initialised(this.cast_mut()) }?;
    // SAFETY: `put` wrote a value into the storage (the only writer of a non-zero
    // tag), and nothing has moved it out since; it is aligned (checked).
    Ok(unsafe { (*storage).assume_init_ref() })
}

/// [`get`], mutable.
///
/// # Safety
/// `this` is null or points to an `O` no one else uses during the call.
pub(crate) unsafe fn get_mut<'s, O: Opaque>(this: *mut O) -> Result<&'s mut O::Value, OssaStatus> {
    if this.is_null() {
        return Err(OssaStatus::NullPointer);
    }
    // SAFETY: not null and pointing to an `O`, used by this call alone.
    let storage = unsafe { initialised(this) }?;
    // SAFETY: as in `get`; the reference is unique by the caller's contract.
    Ok(unsafe { (*storage).assume_init_mut() })
}

/// The storage of `this` when it holds a value: the tag set by [`put`], the storage
/// aligned for the value (a struct initialised on a 16-byte boundary and copied
/// elsewhere may no longer be).
///
/// # Safety
/// `this` is not null and points to an `O`.
unsafe fn initialised<O: Opaque>(this: *mut O) -> Result<*mut core::mem::MaybeUninit<O::Value>, OssaStatus> {
    // SAFETY: not null and pointing to an `O` (the caller's contract).
    let (tag, storage) = unsafe { O::parts(this) };
    // SAFETY: the tag field of a live `O`.
    if unsafe { tag.read() } != O::TAG {
        return Err(O::NOT_INITIALISED);
    }
    if !storage.is_aligned() {
        return Err(OssaStatus::Misaligned);
    }
    Ok(storage)
}

/// Implements [`Opaque`] for a C struct with fields `tag: u64` and `storage: [u64; N]`,
/// checking at compile time that the value fits the storage, and that the storage is
/// placed so that it is aligned for the value whenever the struct lies on a boundary
/// of the value's alignment (always, for a value aligned to at most 8 bytes).
macro_rules! opaque {
    ($ty:ty, $value:ty, $tag:expr, $not_initialised:expr) => {
        const _: () = assert!(
            core::mem::size_of::<$value>() <= core::mem::size_of::<$ty>() - core::mem::offset_of!($ty, storage)
        );
        const _: () = assert!(core::mem::offset_of!($ty, storage) % core::mem::align_of::<$value>() == 0);
        // SAFETY: `parts` projects the struct's own fields; the assertions above check
        // the size; each use of the macro passes a tag of its own.
        unsafe impl $crate::opaque::Opaque for $ty {
            type Value = $value;
            const TAG: u64 = $tag;
            const NOT_INITIALISED: $crate::OssaStatus = $not_initialised;
            unsafe fn parts(this: *mut Self) -> (*mut u64, *mut core::mem::MaybeUninit<$value>) {
                // SAFETY: `this` points to a `Self` (the caller's contract): projecting
                // its fields creates no reference.
                unsafe {
                    (
                        core::ptr::addr_of_mut!((*this).tag),
                        core::ptr::addr_of_mut!((*this).storage).cast::<core::mem::MaybeUninit<$value>>(),
                    )
                }
            }
        }
    };
}
pub(crate) use opaque;
