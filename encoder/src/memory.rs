//! Allocations that fail with an error instead of aborting the process.
//!
//! Rust aborts when an allocation fails. A tool in an asset pipeline must instead say
//! which file needed too much and go on (or stop) cleanly, so every buffer whose size
//! comes from a clip's declared counts is allocated here, fallibly. Before that, the
//! caller can compare [`crate::compress::memory_estimate::compress_estimate`] with the
//! memory it is willing to use and refuse a clip up front.

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

/// [`filled`], the memory first touched by every worker thread at once: fresh pages
/// cost a page fault each (microseconds on a virtual machine), so a large buffer
/// filled by one thread costs milliseconds that several share.
pub fn filled_in_parallel<T: Clone + Send + Sync>(
    count: usize,
    value: T,
    what: &'static str,
) -> Result<Vec<T>, OutOfMemory> {
    use rayon::prelude::*;
    let mut v = with_capacity(count, what)?;
    // Indexed: rayon writes each part in place, within the capacity reserved.
    v.par_extend(rayon::iter::repeat_n(value, count));
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
