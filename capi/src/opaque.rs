//! The C ABI's opaque structs (`OssaSampler`, `OssaDatabase`, `OssaResidency`): storage
//! the caller owns, which an `init` call fills with a Rust value and marks with a tag,
//! and which every other call reads back only when the tag says it was filled. One
//! implementation of that pattern, so that its unsafe code is written once.

use core::mem::MaybeUninit;

use crate::OssaStatus;

/// A C struct of a `u64` tag and words of storage holding a [`Opaque::Value`] once an
/// `init` call succeeded.
///
/// # Safety
/// `parts` returns pointers to the struct's own tag and storage fields; the storage is
/// large and aligned enough for `Value` (each implementation checks it at compile
/// time), and `TAG` is a value no other opaque struct uses.
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
    match value {
        Ok(value) => {
            // SAFETY: writable storage, large and aligned enough for the value (the
            // trait's contract).
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
    let (tag, storage) = unsafe { O::parts(this.cast_mut()) };
    // SAFETY: the tag field of a live `O`.
    if unsafe { tag.read() } != O::TAG {
        return Err(O::NOT_INITIALISED);
    }
    // SAFETY: the tag says `put` wrote a value into the storage (the only writer of a
    // non-zero tag), and nothing has moved it out since.
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
    let (tag, storage) = unsafe { O::parts(this) };
    // SAFETY: the tag field of a live `O`.
    if unsafe { tag.read() } != O::TAG {
        return Err(O::NOT_INITIALISED);
    }
    // SAFETY: as in `get`; the reference is unique by the caller's contract.
    Ok(unsafe { (*storage).assume_init_mut() })
}

/// Implements [`Opaque`] for a C struct with fields `tag: u64` and `storage: [u64; N]`,
/// checking at compile time that the value fits the storage and its alignment.
macro_rules! opaque {
    ($ty:ty, $value:ty, $tag:expr, $not_initialised:expr) => {
        const _: () = assert!(core::mem::size_of::<$value>() <= core::mem::size_of::<$ty>() - 8);
        const _: () = assert!(core::mem::align_of::<$value>() <= core::mem::align_of::<u64>());
        // SAFETY: `parts` projects the struct's own fields; the assertions above check
        // size and alignment; each use of the macro passes a tag of its own.
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
