//! What compressing a clip will cost in memory, known from its declared counts before
//! anything is allocated: the caller compares it with the memory it is willing to use
//! and refuses a clip up front (`tests/tests/memory.rs` measures the real peak against
//! it).

/// Bytes of the raw clip per transform sample: a quaternion and two vectors in `f64`.
const RAW: u64 = (size_of::<[f64; 4]>() + 2 * size_of::<[f64; 3]>()) as u64;
/// Bytes of the reference per transform sample: local values, their affine form,
/// object-space transforms, the reach of the descendants.
const REFERENCE: u64 = super::reference::BYTES_PER_TRANSFORM_SAMPLE;
/// Bytes of the search per bone and segment sample: the same transforms as the
/// reference without the reach, and the repair's candidates.
const SEARCH_BYTES_PER_SAMPLE: u64 = super::bit_rates::BYTES_PER_SEGMENT_SAMPLE;
const _: () = assert!(
    RAW == 80 && REFERENCE == 248 && SEARCH_BYTES_PER_SAMPLE == 624,
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
    let segment = samples.min(super::sub_track::MAX_SEGMENT_SAMPLES as u64);
    let search =
        threads.max(1).saturating_mul(bones).saturating_mul(segment * SEARCH_BYTES_PER_SAMPLE + SEARCH_BYTES_PER_BONE);
    let compressing = n.saturating_mul(COMPRESS_BYTES_PER_TRANSFORM_SAMPLE).saturating_add(search);
    reading.max(compressing).saturating_add(bones.saturating_mul(BYTES_PER_BONE)).saturating_add(BASE_BYTES)
}
