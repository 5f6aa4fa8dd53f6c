//! Memory: what a clip will cost before it is allocated, and allocations that fail
//! with an error instead of aborting the process.
//!
//! Rust aborts when an allocation fails. A tool in an asset pipeline must instead say
//! which file needed too much and go on (or stop) cleanly, so every buffer whose size
//! comes from a clip's declared counts is allocated here, fallibly. Before that, the
//! caller can compare [`compress_estimate`] with the memory it is willing to use and
//! refuse a clip up front.

use std::fmt;

/// An allocation the system refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutOfMemory {
    /// Bytes asked for.
    pub bytes: u64,
    /// What they were for.
    pub what: &'static str,
}

impl fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "out of memory: the system refused {} for {}", bytes(self.bytes), self.what)
    }
}

impl std::error::Error for OutOfMemory {}

/// An empty vector with room for `capacity` items, or an error if the system
/// refuses the memory.
pub fn with_capacity<T>(capacity: usize, what: &'static str) -> Result<Vec<T>, OutOfMemory> {
    let mut v = Vec::new();
    v.try_reserve_exact(capacity)
        .map_err(|_| OutOfMemory { bytes: (capacity as u64).saturating_mul(size_of::<T>() as u64), what })?;
    Ok(v)
}

/// `count` copies of `value`, or an error if the system refuses the memory.
pub fn filled<T: Clone>(count: usize, value: T, what: &'static str) -> Result<Vec<T>, OutOfMemory> {
    let mut v = with_capacity(count, what)?;
    v.resize(count, value);
    Ok(v)
}

/// `iter` collected into a vector of exactly `count` items allocated up front, or an
/// error if the system refuses the memory.
pub fn collect<T>(count: usize, iter: impl IntoIterator<Item = T>, what: &'static str) -> Result<Vec<T>, OutOfMemory> {
    let mut v = with_capacity(count, what)?;
    v.extend(iter.into_iter().take(count));
    Ok(v)
}

/// A byte count for people: `12.5 GiB`.
pub fn bytes(count: u64) -> String {
    bytesize::ByteSize::b(count).display().iec().to_string()
}

/// Bytes of the raw clip per transform sample: a quaternion and two vectors in `f64`.
const RAW: u64 = (size_of::<[f64; 4]>() + 2 * size_of::<[f64; 3]>()) as u64;
/// Bytes of the reference per transform sample: local values, their affine form,
/// object-space transforms, the reach of the descendants.
const REFERENCE: u64 = crate::compress::reference::BYTES_PER_TRANSFORM_SAMPLE;
/// Bytes of the search per bone and segment sample: the same transforms as the
/// reference without the reach, and the repair's next codes.
const SEARCH_BYTES_PER_SAMPLE: u64 = crate::compress::bit_rates::BYTES_PER_SEGMENT_SAMPLE;
const _: () = assert!(
    RAW == 80 && REFERENCE == 248 && SEARCH_BYTES_PER_SAMPLE == 288,
    "update the figures in the docs and README"
);

/// Bytes the compressor holds per transform sample (one bone at one sample), at
/// most: the raw clip in `f64` (80), the reference (248: local values, their affine
/// form, object-space transforms, reach), the segments' quantised values and tables (56:
/// up to three sub-tracks of 16 bytes, plus per-segment entries), the error of every
/// sample for the percentile (4), and the output and its aligned copy (80, when every
/// value is stored raw). Measured peaks are below it; see `tests/tests/memory.rs`.
pub const COMPRESS_BYTES_PER_TRANSFORM_SAMPLE: u64 = RAW + REFERENCE + 56 + 4 + 80;

/// Bytes held while reading a text clip, per transform sample: the raw clip (on top
/// of the text itself).
pub const READ_BYTES_PER_TRANSFORM_SAMPLE: u64 = RAW;

/// Bytes per bone besides its samples: name, hierarchy, sub-track descriptions,
/// lookup tables.
pub const BYTES_PER_BONE: u64 = 1024;

/// Each thread of the bit-rate search works on one segment at a time and holds the
/// same three transforms as the reference for each bone and segment sample, plus
/// per-bone scratch.
const SEARCH_BYTES_PER_BONE: u64 = 512;

/// Fixed costs: the program, thread stacks, buffers.
pub const BASE_BYTES: u64 = 16 << 20;

/// Peak memory of reading a text clip of `text_bytes` bytes that declares `bones`
/// bones and `samples` samples, and compressing it with `threads` threads: linear in
/// bones × samples, with no term in the depth of the hierarchy.
pub fn compress_estimate(bones: u64, samples: u64, text_bytes: u64, threads: u64) -> u64 {
    let n = bones.saturating_mul(samples);
    let reading = text_bytes.saturating_add(n.saturating_mul(READ_BYTES_PER_TRANSFORM_SAMPLE));
    let segment = samples.min(crate::compress::sub_track::MAX_SEGMENT_SAMPLES as u64);
    let search =
        threads.max(1).saturating_mul(bones).saturating_mul(segment * SEARCH_BYTES_PER_SAMPLE + SEARCH_BYTES_PER_BONE);
    let compressing = n.saturating_mul(COMPRESS_BYTES_PER_TRANSFORM_SAMPLE).saturating_add(search);
    reading.max(compressing).saturating_add(bones.saturating_mul(BYTES_PER_BONE)).saturating_add(BASE_BYTES)
}
