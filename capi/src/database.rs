//! Streaming databases through the C ABI (format-spec/database.md): a validated
//! database index ([`OssaDatabase`]), the chunks of its tiers that are in memory
//! ([`OssaResidency`], in slot storage the caller gives), and samplers of its clips
//! that seek with a residency's chunks (`ossa_sampler_init_in_database`,
//! `ossa_sampler_seek_streamed`).
//!
//! Nothing here allocates or locks. A residency is read by `ossa_sampler_seek_streamed`
//! and changed only by `ossa_residency_bind` and `ossa_residency_unbind`: to stream
//! while other threads sample, keep two residencies (each with its own slots), change
//! the one no sampler reads, and swap them between frames; a chunk's memory may be
//! freed once no sampler can still be reading a residency that holds it.

use core::mem::{align_of, size_of};

use ossa_decoder::{Database, Residency, Sampler, Slot, Tier};

use crate::opaque::{get, get_mut, opaque, put};
use crate::{borrowed, rounding_of, Inner, OssaSampler, OssaStatus};

/// 64-bit words of an `OssaDatabase`'s storage: room for the decoder's database view
/// on every target.
pub const OSSA_DATABASE_WORDS: usize = 16;

/// 64-bit words of an `OssaResidency`'s storage.
pub const OSSA_RESIDENCY_WORDS: usize = 8;

/// A validated view of a database index. Opaque: initialise it with
/// `ossa_database_init`; copy it freely afterwards (it points to the index's bytes,
/// which must outlive it and every sampler opened in it).
#[repr(C)]
pub struct OssaDatabase {
    /// Set by `ossa_database_init` when it succeeds, cleared when it fails.
    tag: u64,
    /// The decoder's database view.
    storage: [u64; OSSA_DATABASE_WORDS],
}

/// Which chunks of a database's tiers are resident. Opaque: initialise it with
/// `ossa_residency_init`. Do not copy it: it owns the use of the slots it was given
/// (two copies would share them); make another with slots of its own instead.
#[repr(C)]
pub struct OssaResidency {
    /// Set by `ossa_residency_init` when it succeeds, cleared when it fails.
    tag: u64,
    /// The decoder's residency over the caller's slots.
    storage: [u64; OSSA_RESIDENCY_WORDS],
}

/// Storage for one chunk's slot in a residency: give `ossa_residency_init` an array of
/// at least `ossa_database_chunk_slots` of them, which it initialises. Opaque (a
/// pointer and a length inside); the residency alone writes them.
#[repr(C)]
pub struct OssaChunkSlot {
    /// Opaque.
    a: *const u8,
    /// Opaque.
    b: usize,
}

/// A database's quality tiers: the key frames of medium importance and of low.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OssaTier {
    /// The key frames of medium importance (medium fidelity with this tier resident).
    Medium = 0,
    /// The key frames of least importance (highest fidelity with both tiers).
    Low = 1,
}

/// One chunk of a tier, as the index describes it: where to read it in the `.ossadb`
/// file and what it must hold.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OssaChunk {
    /// Offset of its bytes in the `.ossadb` file.
    pub file_offset: u64,
    /// Its size in bytes.
    pub size: u32,
    /// FNV-1a (32-bit) of its bytes.
    pub checksum: u32,
}

/// The residency of the C ABI: the caller's slots, borrowed for as long as the header's
/// contract says (the 'static lifetime stands for that promise).
type CResidency = Residency<'static, &'static mut [Slot<'static>]>;

// The views fit their opaque storage, aligned (checked by the macro); a slot is a
// pointer and a length.
opaque!(OssaDatabase, Database<'static>, 0x6f73_7361_5f64_6262, OssaStatus::DatabaseNotInitialised);
opaque!(OssaResidency, CResidency, 0x6f73_7361_5f72_6573, OssaStatus::ResidencyNotInitialised);
const _: () = assert!(size_of::<Slot<'static>>() == size_of::<OssaChunkSlot>());
const _: () = assert!(align_of::<Slot<'static>>() <= align_of::<OssaChunkSlot>());

/// The tier numbered `tier` (an `OssaTier` value), when it is one.
fn tier_of(tier: u32) -> Option<Tier> {
    match tier {
        t if t == OssaTier::Medium as u32 => Some(Tier::Medium),
        t if t == OssaTier::Low as u32 => Some(Tier::Low),
        _ => None,
    }
}

/// Validates the database index at the start of `bytes[0 .. len]` (the whole `.ossadb`
/// file, or its first `ossa_database_index_size` bytes; 16-byte aligned; with
/// `verify_checksum`, the index checksum too) and makes `database` a view of it. The
/// bytes must stay valid and unchanged while the database, or a sampler opened in it,
/// is used. On failure the database is left uninitialised.
///
/// # Safety
/// `database` is null or points to writable storage for an `OssaDatabase`; `bytes` is
/// null or points to `len` readable bytes that outlive every use of the database and
/// of the samplers opened in it.
#[no_mangle]
pub unsafe extern "C" fn ossa_database_init(
    database: *mut OssaDatabase,
    bytes: *const u8,
    len: usize,
    verify_checksum: bool,
) -> OssaStatus {
    if database.is_null() {
        return OssaStatus::NullPointer;
    }
    // SAFETY: forwarded contract.
    let bytes = match unsafe { borrowed(bytes, len) } {
        Ok(bytes) => bytes,
        Err(status) => return status,
    };
    // The index is 16-byte aligned, as the header promises callers it must be.
    if bytes.as_ptr() as usize % 16 != 0 {
        // SAFETY: `database` is not null and points to writable storage.
        return unsafe { put(database, Err::<Database<'static>, _>(OssaStatus::Misaligned)) };
    }
    let view = if verify_checksum { Database::from_bytes_verified(bytes) } else { Database::from_bytes(bytes) };
    // SAFETY: `database` is not null and points to writable storage.
    unsafe { put(database, view.map_err(OssaStatus::from)) }
}

/// The size of the database's index in bytes: the part of the file to keep in memory
/// (0 for a null or uninitialised database).
///
/// # Safety
/// `database` is null or points to an `OssaDatabase`.
#[no_mangle]
pub unsafe extern "C" fn ossa_database_index_size(database: *const OssaDatabase) -> u32 {
    // SAFETY: forwarded contract.
    unsafe { get(database) }.map_or(0, |d| d.index_size())
}

/// How many `OssaChunkSlot`s a residency of this database needs (0 for a null or
/// uninitialised database).
///
/// # Safety
/// `database` is null or points to an `OssaDatabase`.
#[no_mangle]
pub unsafe extern "C" fn ossa_database_chunk_slots(database: *const OssaDatabase) -> u32 {
    // SAFETY: forwarded contract.
    unsafe { get(database) }.map_or(0, |d| d.chunk_slots())
}

/// How many chunks tier `tier` (an `OssaTier` value) has (0 for another number, or a
/// null or uninitialised database).
///
/// # Safety
/// `database` is null or points to an `OssaDatabase`.
#[no_mangle]
pub unsafe extern "C" fn ossa_database_chunk_count(database: *const OssaDatabase, tier: u32) -> u32 {
    // SAFETY: forwarded contract.
    let Ok(d) = (unsafe { get(database) }) else { return 0 };
    tier_of(tier).map_or(0, |t| d.chunk_count(t))
}

/// Writes into `*out` where chunk `chunk` of tier `tier` is in the `.ossadb` file, its
/// size and its checksum.
///
/// # Safety
/// `database` is null or points to an `OssaDatabase`; `out` is null or points to a
/// writable `OssaChunk`.
#[no_mangle]
pub unsafe extern "C" fn ossa_database_chunk(
    database: *const OssaDatabase,
    tier: u32,
    chunk: u32,
    out: *mut OssaChunk,
) -> OssaStatus {
    // SAFETY: forwarded contract.
    let d = match unsafe { get(database) } {
        Ok(d) => d,
        Err(status) => return status,
    };
    // SAFETY: null or pointing to a writable OssaChunk, by the contract above.
    let Some(out) = (unsafe { out.as_mut() }) else { return OssaStatus::NullPointer };
    match tier_of(tier).and_then(|t| d.chunk(t, chunk)) {
        Some(c) => {
            *out = OssaChunk { file_offset: c.file_offset, size: c.size, checksum: c.checksum };
            OssaStatus::Ok
        }
        None => OssaStatus::NoSuchChunk,
    }
}

/// Checks `bytes[0 .. len]` against the checksum the index records for chunk `chunk`
/// of tier `tier` (a pass over the chunk: for bytes from an untrusted store; binding
/// does not look at a chunk's content, and any bits decode without harm).
///
/// # Safety
/// `database` is null or points to an `OssaDatabase`; `bytes` is null or points to
/// `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ossa_database_verify_chunk(
    database: *const OssaDatabase,
    tier: u32,
    chunk: u32,
    bytes: *const u8,
    len: usize,
) -> OssaStatus {
    // SAFETY: forwarded contract.
    let d = match unsafe { get(database) } {
        Ok(d) => d,
        Err(status) => return status,
    };
    // SAFETY: forwarded contract (the bytes are read during this call only).
    let bytes = match unsafe { borrowed(bytes, len) } {
        Ok(bytes) => bytes,
        Err(status) => return status,
    };
    let Some(tier) = tier_of(tier) else { return OssaStatus::NoSuchChunk };
    match d.verify_chunk(tier, chunk, bytes) {
        Ok(()) => OssaStatus::Ok,
        Err(e) => e.into(),
    }
}

/// Makes `residency` an empty residency of `database` (no chunk resident: its clips
/// play from their own key frames, the lowest fidelity) over `slots[0 .. slot_count]`,
/// which it initialises and uses from then on: the slots must stay valid, and
/// untouched by the caller, while the residency is used. Refused with
/// `OSSA_STATUS_TOO_FEW_SLOTS` when `slot_count` is below `ossa_database_chunk_slots`.
///
/// # Safety
/// `residency` is null or points to writable storage for an `OssaResidency`;
/// `database` is null or points to an `OssaDatabase`; `slots` is null or points to
/// `slot_count` writable `OssaChunkSlot`s that outlive every use of the residency and
/// are used by no other residency.
#[no_mangle]
pub unsafe extern "C" fn ossa_residency_init(
    residency: *mut OssaResidency,
    database: *const OssaDatabase,
    slots: *mut OssaChunkSlot,
    slot_count: usize,
) -> OssaStatus {
    if residency.is_null() || slots.is_null() {
        return OssaStatus::NullPointer;
    }
    // SAFETY: forwarded contract.
    let d = match unsafe { get(database) } {
        Ok(d) => d,
        Err(status) => return status,
    };
    let slots = slots.cast::<Slot<'static>>();
    for i in 0..slot_count {
        // SAFETY: `slots` points to `slot_count` writable slots, each the size of a
        // `Slot` and aligned for one (checked at compile time above): each gets a valid
        // value (empty) before the slice below is made over them.
        unsafe { slots.add(i).write(None) };
    }
    // SAFETY: `slot_count` initialised slots, outliving the residency and used by it
    // alone (the contract above).
    let slots: &'static mut [Slot<'static>] = unsafe { core::slice::from_raw_parts_mut(slots, slot_count) };
    // SAFETY: `residency` is not null and points to writable storage.
    unsafe { put(residency, Residency::new(d, slots).map_err(OssaStatus::from)) }
}

/// Makes `bytes[0 .. len]` (read from the `.ossadb` file at the chunk's `file_offset`)
/// chunk `chunk` of tier `tier` in `residency`, replacing the bytes bound before, if
/// any. Checks that the chunk exists and that `len` is at least its size; the content
/// is not checked (see `ossa_database_verify_chunk`). The bytes must stay valid and
/// unchanged while the residency holds them, and while a sampler may still be reading
/// a residency that held them.
///
/// # Safety
/// `residency` is null or points to an `OssaResidency` no one else uses during the
/// call; `database` is null or points to an `OssaDatabase`; `bytes` is null or points
/// to `len` readable bytes that outlive their use, as above.
#[no_mangle]
pub unsafe extern "C" fn ossa_residency_bind(
    residency: *mut OssaResidency,
    database: *const OssaDatabase,
    tier: u32,
    chunk: u32,
    bytes: *const u8,
    len: usize,
) -> OssaStatus {
    // SAFETY: forwarded contract.
    let r = match unsafe { get_mut(residency) } {
        Ok(r) => r,
        Err(status) => return status,
    };
    // SAFETY: forwarded contract.
    let d = match unsafe { get(database) } {
        Ok(d) => d,
        Err(status) => return status,
    };
    // SAFETY: forwarded contract.
    let bytes = match unsafe { borrowed(bytes, len) } {
        Ok(bytes) => bytes,
        Err(status) => return status,
    };
    let Some(tier) = tier_of(tier) else { return OssaStatus::NoSuchChunk };
    match r.bind(d, tier, chunk, bytes) {
        Ok(_) => OssaStatus::Ok,
        Err(e) => e.into(),
    }
}

/// Takes chunk `chunk` of tier `tier` out of `residency` (its key frames are no longer
/// sampled through it); nothing happens when it was not resident. Its bytes are the
/// caller's again once no sampler can still be reading this residency.
///
/// # Safety
/// `residency` is null or points to an `OssaResidency` no one else uses during the call.
#[no_mangle]
pub unsafe extern "C" fn ossa_residency_unbind(residency: *mut OssaResidency, tier: u32, chunk: u32) -> OssaStatus {
    // SAFETY: forwarded contract.
    let r = match unsafe { get_mut(residency) } {
        Ok(r) => r,
        Err(status) => return status,
    };
    let Some(tier) = tier_of(tier) else { return OssaStatus::NoSuchChunk };
    r.unbind(tier, chunk);
    OssaStatus::Ok
}

/// How many chunks of tier `tier` are resident (0 for another number, or a null or
/// uninitialised residency).
///
/// # Safety
/// `residency` is null or points to an `OssaResidency`.
#[no_mangle]
pub unsafe extern "C" fn ossa_residency_resident_chunks(residency: *const OssaResidency, tier: u32) -> u32 {
    // SAFETY: forwarded contract.
    let Ok(r) = (unsafe { get(residency) }) else { return 0 };
    tier_of(tier).map_or(0, |t| r.resident_chunks(t))
}

/// Validates the clip in `bytes[0 .. len]` as a clip of `database` (16-byte aligned;
/// with `verify_checksum`, its checksum too), gives it its shared pose if it takes
/// one, checks it against the database's record, and makes `sampler` sample it from
/// time 0. Seek it with `ossa_sampler_seek_streamed` to use a residency's chunks
/// (`ossa_sampler_seek` plays it from its own key frames). The clip's bytes and the
/// database's index must stay valid and unchanged while the sampler is used. On
/// failure the sampler is left uninitialised.
///
/// # Safety
/// `sampler` is null or points to writable storage for an `OssaSampler`; `database` is
/// null or points to an `OssaDatabase`; `bytes` is null or points to `len` readable
/// bytes that outlive every use of the sampler.
#[no_mangle]
pub unsafe extern "C" fn ossa_sampler_init_in_database(
    sampler: *mut OssaSampler,
    database: *const OssaDatabase,
    bytes: *const u8,
    len: usize,
    verify_checksum: bool,
) -> OssaStatus {
    if sampler.is_null() {
        return OssaStatus::NullPointer;
    }
    let opened = (|| {
        // SAFETY: forwarded contract.
        let d = unsafe { get(database) }?;
        // SAFETY: forwarded contract.
        let bytes = unsafe { borrowed(bytes, len) }?;
        let clip = d.open_clip(bytes)?;
        if verify_checksum {
            clip.verify_checksum()?;
        }
        let binding = d.bind(&clip)?;
        Ok::<_, OssaStatus>(Inner { sampler: Sampler::new(clip), binding: Some(binding) })
    })();
    // SAFETY: `sampler` is not null and points to writable storage.
    unsafe { put(sampler, opened) }
}

/// Moves the sampler to `time` seconds like `ossa_sampler_seek`, counting the key
/// frames of the chunks `residency` holds as present: the sampler must have been
/// opened by `ossa_sampler_init_in_database` in the residency's database
/// (`OSSA_STATUS_NOT_IN_DATABASE`, `OSSA_STATUS_OTHER_DATABASE` otherwise). The
/// residency is read, never changed; the sampler reads the chunks it holds until its
/// next seek.
///
/// # Safety
/// `sampler` is null or points to an `OssaSampler` no one else uses during the call;
/// `residency` is null or points to an `OssaResidency` no one changes during the call
/// (nor, while the sampler decodes from its chunks, the chunks' bytes).
#[no_mangle]
pub unsafe extern "C" fn ossa_sampler_seek_streamed(
    sampler: *mut OssaSampler,
    time: f32,
    rounding: u32,
    residency: *const OssaResidency,
) -> OssaStatus {
    let Some(rounding) = rounding_of(rounding) else { return OssaStatus::InvalidArgument };
    // SAFETY: forwarded contract.
    let s = match unsafe { get_mut(sampler) } {
        Ok(s) => s,
        Err(status) => return status,
    };
    // SAFETY: forwarded contract.
    let r = match unsafe { get(residency) } {
        Ok(r) => r,
        Err(status) => return status,
    };
    let Some(binding) = &s.binding else { return OssaStatus::NotInDatabase };
    match s.sampler.seek_streamed(time, rounding, binding, r) {
        Ok(()) => OssaStatus::Ok,
        Err(e) => e.into(),
    }
}
