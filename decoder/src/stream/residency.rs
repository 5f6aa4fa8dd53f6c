//! [`Residency`]: which chunks of a database's tiers are in memory, as slices the
//! caller owns.
//!
//! A residency is plain data: binding and unbinding a chunk take `&mut self`,
//! sampling takes `&self`, and it holds nothing but the slices it was given. Streaming
//! while other threads sample therefore needs no lock on the sampling path: keep two
//! (or more) residencies, change the one no sampler reads, and publish it the way the
//! engine publishes any frame state (an atomic pointer swap, a per-frame double
//! buffer). A chunk's memory may be reused once no sampler can still be reading a
//! residency that holds it (for a double buffer: after the next swap). Rust's borrow
//! rules enforce the first half (the chunks outlive every residency holding them);
//! the engine's frame structure provides the second. `format-spec/database.md`,
//! Streaming, states the same contract for other languages.

use crate::error::Error;
use crate::format::database::{TIER_COUNT, TIER_MEDIUM};
use crate::stream::database::{Database, Tier};

/// One chunk's slot: its bytes when resident.
pub type Slot<'c> = Option<&'c [u8]>;

/// The chunks of one database's tiers that are in memory, in slot storage `S` the
/// caller provides: an array (`[None; 64]`, for a runtime without a heap, which
/// fixes the largest database it takes), a `Vec` in a tool, any slice of at least
/// [`Database::chunk_slots`] slots. Clone it to prepare the next state while
/// samplers read this one.
#[derive(Clone, Debug)]
pub struct Residency<'c, S> {
    database_id: u64,
    /// Chunks per tier.
    counts: [u32; TIER_COUNT],
    /// One slot per chunk, the medium tier's first, then the low tier's (slots past
    /// the database's chunks are unused).
    slots: S,
    /// Chunks bound, per tier.
    resident: [u32; TIER_COUNT],
    _chunks: core::marker::PhantomData<Slot<'c>>,
}

impl<'c, S: AsRef<[Slot<'c>]> + AsMut<[Slot<'c>]>> Residency<'c, S> {
    /// An empty residency for `database` in `slots` (no chunk resident: clips play at
    /// the lowest fidelity). Fails when `slots` has fewer than
    /// [`Database::chunk_slots`] slots.
    pub fn new(database: &Database<'_>, mut slots: S) -> Result<Self, Error> {
        let counts = Tier::ALL.map(|t| database.chunk_count(t));
        let chunks = database.chunk_slots();
        let capacity = slots.as_ref().len();
        if (capacity as u64) < u64::from(chunks) {
            return Err(Error::TooManyChunks { chunks, capacity: capacity.min(u32::MAX as usize) as u32 });
        }
        for slot in slots.as_mut().iter_mut() {
            *slot = None;
        }
        Ok(Residency {
            database_id: database.id(),
            counts,
            slots,
            resident: [0; TIER_COUNT],
            _chunks: core::marker::PhantomData,
        })
    }

    /// Makes `bytes` chunk `chunk` of `tier` (read from the database file at
    /// [`crate::Chunk::file_offset`]). Checks that the chunk exists and that `bytes`
    /// holds at least its size; the content is not checked (any bits decode: use
    /// [`Database::verify_chunk`] for an untrusted store). Returns the slice bound
    /// before, if any, for the caller to release.
    pub fn bind(
        &mut self,
        database: &Database<'_>,
        tier: Tier,
        chunk: u32,
        bytes: &'c [u8],
    ) -> Result<Option<&'c [u8]>, Error> {
        if database.id() != self.database_id {
            return Err(Error::OtherClipOrDatabase);
        }
        let info = database.chunk(tier, chunk).ok_or(Error::NoSuchChunk { tier: tier.index() as u8, chunk })?;
        if (bytes.len() as u64) < u64::from(info.size) {
            return Err(Error::ChunkTooShort {
                tier: tier.index() as u8,
                chunk,
                needed: info.size,
                available: bytes.len() as u64,
            });
        }
        let slot = self.slot_mut(tier, chunk).ok_or(Error::NoSuchChunk { tier: tier.index() as u8, chunk })?;
        let before = slot.replace(bytes);
        if before.is_none() {
            self.count_mut(tier, 1);
        }
        Ok(before)
    }

    /// Takes chunk `chunk` of `tier` out (its key frames are no longer sampled) and
    /// gives its bytes back; `None` when it was not resident.
    pub fn unbind(&mut self, tier: Tier, chunk: u32) -> Option<&'c [u8]> {
        let before = self.slot_mut(tier, chunk)?.take();
        if before.is_some() {
            self.count_mut(tier, -1);
        }
        before
    }

    /// Takes every chunk out: clips play at the lowest fidelity.
    pub fn unbind_all(&mut self) {
        for slot in self.slots.as_mut().iter_mut() {
            *slot = None;
        }
        self.resident = [0; TIER_COUNT];
    }

    fn slot_mut(&mut self, tier: Tier, chunk: u32) -> Option<&mut Option<&'c [u8]>> {
        let counts = self.counts;
        if chunk >= counts.get(tier.index()).copied().unwrap_or(0) {
            return None;
        }
        let slot = match tier {
            Tier::Medium => chunk,
            Tier::Low => counts[0].wrapping_add(chunk),
        };
        self.slots.as_mut().get_mut(slot as usize)
    }

    fn count_mut(&mut self, tier: Tier, change: i32) {
        if let Some(count) = self.resident.get_mut(tier.index()) {
            *count = count.wrapping_add_signed(change);
        }
    }
}

impl<'c, S: AsRef<[Slot<'c>]>> Residency<'c, S> {
    /// Whether chunk `chunk` of `tier` is resident.
    pub fn is_resident(&self, tier: Tier, chunk: u32) -> bool {
        self.chunk(tier.index(), chunk).is_some()
    }

    /// Chunks of `tier` resident.
    pub fn resident_chunks(&self, tier: Tier) -> u32 {
        self.resident.get(tier.index()).copied().unwrap_or(0)
    }

    /// Whether no chunk is resident: clips play from their own key frames.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.resident == [0; TIER_COUNT]
    }

    /// Whether every chunk of `tier` is resident.
    pub fn is_complete(&self, tier: Tier) -> bool {
        self.resident_chunks(tier) == self.counts.get(tier.index()).copied().unwrap_or(0)
    }

    /// The id of the database this residency belongs to.
    pub fn database_id(&self) -> u64 {
        self.database_id
    }
    /// The bytes of chunk `chunk` of tier `tier` (a [`Tier::index`]), if resident.
    #[inline(always)]
    pub(crate) fn chunk(&self, tier: usize, chunk: u32) -> Option<&'c [u8]> {
        // A chunk index past its tier would name a slot of the other tier: checked.
        // (A binding of the same database only holds indices in range.)
        let [medium, low] = self.counts;
        let (count, base) = if tier == TIER_MEDIUM { (medium, 0) } else { (low, medium) };
        if chunk >= count {
            return None;
        }
        self.slots.as_ref().get(base.wrapping_add(chunk) as usize).copied().flatten()
    }
}
