//! What the C ABI's tests share: the golden files, in 16-byte aligned memory as the
//! decoder reads them in place.
// Each test binary uses its own share of these.
#![allow(dead_code)]

use std::mem::MaybeUninit;
use std::path::PathBuf;

use ossa_c::{ossa_sampler_init, OssaSampler, OssaStatus};

/// The path of golden file `name` (format-spec/golden).
pub fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../format-spec/golden").join(name)
}

/// The bytes of golden file `name`.
pub fn golden(name: &str) -> Vec<u8> {
    std::fs::read(golden_path(name)).unwrap()
}

/// Golden file `name` in aligned words, and its length (`view` gives its bytes).
pub fn golden_aligned(name: &str) -> (Vec<u128>, usize) {
    let file = golden(name);
    (aligned(&file), file.len())
}

/// A 16-byte aligned copy of `bytes`.
pub fn aligned(bytes: &[u8]) -> Vec<u128> {
    let mut words = vec![0u128; bytes.len().div_ceil(16)];
    for (i, b) in bytes.iter().enumerate() {
        words[i / 16] |= u128::from(*b) << (8 * (i % 16));
    }
    words
}

/// The first `len` bytes of `words`.
pub fn view(words: &[u128], len: usize) -> &[u8] {
    assert!(len <= words.len() * 16);
    // SAFETY: `words` holds at least `len` initialised bytes (checked above).
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), len) }
}

/// A sampler initialised (checksum verified) on `bytes`, which must outlive it; the
/// call must succeed.
pub fn sampler(bytes: &[u8]) -> Box<OssaSampler> {
    let mut sampler: Box<MaybeUninit<OssaSampler>> = Box::new(MaybeUninit::zeroed());
    // SAFETY: writable storage for a sampler; `bytes` outlives the sampler (the caller).
    let status = unsafe { ossa_sampler_init(sampler.as_mut_ptr(), bytes.as_ptr(), bytes.len(), true) };
    assert_eq!(status, OssaStatus::Ok);
    // SAFETY: zeroed then written by init: every bit pattern of its u64 fields is valid.
    unsafe { Box::from_raw(Box::into_raw(sampler).cast::<OssaSampler>()) }
}
