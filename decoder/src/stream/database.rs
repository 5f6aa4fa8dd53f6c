//! [`Database`]: a validated, borrowed view of a streaming database's index
//! (`format-spec/database.md`), and [`Binding`]: one of its clips checked against it.
//!
//! A database holds the key frames its clips leave out, in two tiers laid out in
//! chunks. The index (this view) stays in memory; the chunks are handed to a
//! [`crate::Residency`] as the game reads them. Validation here and in
//! [`Database::bind`] proves, once, that every tier location a seek can meet lies in a
//! chunk of the right size, so sampling only looks locations up.

use zerocopy::FromBytes;

use crate::error::{Error, Mismatch, Section};
use crate::format::bytes::u16_at;
use crate::format::clip::Clip;
use crate::format::database::{
    ChunkEntry, ClipEntry, DatabaseHeader, PoseEntry, TierSegment, CHUNK_ENTRY_SIZE, CLIP_ENTRY_SIZE,
    DATABASE_HEADER_SIZE, DATABASE_KNOWN_FLAGS, DATABASE_LOW_STRIPPED, DATABASE_MAGIC, DATABASE_VERSION_MAJOR,
    DATABASE_VERSION_MINOR, MAX_CHUNK_SHIFT, MIN_CHUNK_SHIFT, POSE_BONE_SIZE, POSE_ENTRY_SIZE, TIER_COUNT, TIER_LOW,
    TIER_MEDIUM, TIER_SEGMENT_SIZE,
};
use crate::format::shared_pose::SharedPose;
use crate::format::{self, ALIGNMENT, BIT_READ_SLACK};

/// A quality tier of a database: the key frames of medium importance (resident for
/// medium and highest fidelity) or of low importance (highest fidelity).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tier {
    /// Medium-importance key frames.
    Medium,
    /// Low-importance key frames.
    Low,
}

impl Tier {
    /// Both tiers.
    pub const ALL: [Tier; 2] = [Tier::Medium, Tier::Low];

    /// The tier's index in the format's per-tier fields (0 medium, 1 low).
    pub const fn index(self) -> usize {
        match self {
            Tier::Medium => TIER_MEDIUM,
            Tier::Low => TIER_LOW,
        }
    }

    /// `"medium"` or `"low"`.
    pub const fn name(self) -> &'static str {
        format::database::tier_name(self.index())
    }
}

/// One chunk of a tier, as the index describes it: where to read it from the
/// database file, and what it must hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Offset of its bytes in the `.ossadb` file.
    pub file_offset: u64,
    /// Its size in bytes.
    pub size: u32,
    /// FNV-1a (32-bit) of its bytes.
    pub checksum: u32,
}

/// What one tier holds of a clip segment ([`Database::segment_tiers`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TierFrames {
    /// Bit `j`: the tier holds local key frame `j`.
    pub present: u32,
    /// The chunk holding them.
    pub chunk: u32,
}

/// A database's record of one clip, for tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatabaseClip<'d> {
    /// The clip's name (its file name without extension when the encoder built it).
    pub name: &'d str,
    /// The checksum of the clip the database was built with.
    pub checksum: u32,
    /// Its segments.
    pub segment_count: u32,
    /// Key frames each tier holds for it ([`Tier::index`] order).
    pub tier_frames: [u32; TIER_COUNT],
}

/// A validated view of a database index. Cheap to copy.
#[derive(Clone, Copy, Debug)]
pub struct Database<'d> {
    /// The index, cut to its declared size.
    index: &'d [u8],
    header: DatabaseHeader,
}

impl<'d> Database<'d> {
    /// Validates the index at the start of `bytes` (the whole `.ossadb` file, or only
    /// its first [`Database::index_size`] bytes) and returns a view over it, in time
    /// linear in the index. The chunks that follow are not read.
    pub fn from_bytes(bytes: &'d [u8]) -> Result<Self, Error> {
        // The magic first, on what there is of it (as a clip's).
        if !bytes.iter().zip(DATABASE_MAGIC).all(|(&b, m)| b == m) {
            return Err(Error::NotADatabase);
        }
        let (header, _) = DatabaseHeader::read_from_prefix(bytes)
            .map_err(|_| Error::Truncated { needed: DATABASE_HEADER_SIZE as u64, available: bytes.len() as u64 })?;
        let (major, minor) = (header.version_major.get(), header.version_minor.get());
        if major != DATABASE_VERSION_MAJOR || minor > DATABASE_VERSION_MINOR {
            return Err(Error::UnsupportedDatabaseVersion { major, minor });
        }
        let size = header.index_size.get();
        if (size as usize) < DATABASE_HEADER_SIZE || size as usize % ALIGNMENT != 0 {
            return Err(Error::BadTotalSize(size));
        }
        let index = bytes
            .get(..size as usize)
            .ok_or(Error::Truncated { needed: u64::from(size), available: bytes.len() as u64 })?;
        let flags = header.flags.get();
        if flags & !DATABASE_KNOWN_FLAGS != 0 {
            return Err(Error::UnknownFlags(flags & !DATABASE_KNOWN_FLAGS));
        }
        if header.reserved != [0; 3] {
            return Err(Error::NonZeroReserved(Section::DatabaseIndex));
        }
        let shift = header.chunk_shift;
        let counts = header.chunk_counts.map(|c| c.get());
        // Every location `at` is a u32: a tier has at most 2^(32 − shift) chunks.
        let max_chunks = 1u64 << 32u8.saturating_sub(shift).min(32);
        if !(MIN_CHUNK_SHIFT..=MAX_CHUNK_SHIFT).contains(&shift)
            || counts.iter().any(|&c| u64::from(c) > max_chunks)
            || (flags & DATABASE_LOW_STRIPPED != 0 && counts[TIER_LOW] != 0)
        {
            return Err(Error::BadValue(Section::DatabaseIndex));
        }
        let database = Database { index, header };
        let table = |offset: u32, count: u64, entry: usize| -> Result<&'d [u8], Error> {
            let len = count.saturating_mul(entry as u64);
            crate::format::bytes::aligned_section(index, offset, len, Section::DatabaseIndex)
        };
        let clips = table(header.clips_offset.get(), u64::from(header.clip_count.get()), CLIP_ENTRY_SIZE)?;
        let chunk_total = u64::from(counts[0]).saturating_add(u64::from(counts[1]));
        let chunks = table(header.chunks_offset.get(), chunk_total, CHUNK_ENTRY_SIZE)?;
        let segment_total = header.segment_count.get();
        let segments = table(header.segments_offset.get(), u64::from(segment_total), TIER_SEGMENT_SIZE)?;
        let names =
            index.get(header.names_offset.get() as usize..).ok_or(Error::OutOfBounds(Section::DatabaseIndex))?;
        let poses = table(header.poses_offset.get(), u64::from(header.pose_count.get()), POSE_ENTRY_SIZE)?;
        if header.reserved_end != [0; 8] {
            return Err(Error::NonZeroReserved(Section::DatabaseIndex));
        }
        for (i, raw) in poses.chunks_exact(POSE_ENTRY_SIZE).enumerate() {
            let bad = Error::BadValue(Section::DatabasePose(i as u32));
            let entry = PoseEntry::read_from_bytes(raw).map_err(|_| bad)?;
            let len = u64::from(entry.bone_count.get()).saturating_mul(POSE_BONE_SIZE as u64);
            let values = crate::format::bytes::aligned_section(
                index,
                entry.values_offset.get(),
                len,
                Section::DatabasePose(i as u32),
            )?;
            if entry.reserved != [zerocopy::little_endian::U32::ZERO; 2] {
                return Err(Error::NonZeroReserved(Section::DatabasePose(i as u32)));
            }
            SharedPose::from_bytes(values, entry.bone_count.get()).map_err(|_| bad)?;
        }

        for (i, raw) in chunks.chunks_exact(CHUNK_ENTRY_SIZE).enumerate() {
            let chunk = ChunkEntry::read_from_bytes(raw).map_err(|_| Error::OutOfBounds(Section::DatabaseIndex))?;
            let size = chunk.size.get();
            let offset = chunk.file_offset.get();
            if u64::from(size) > database.chunk_size() as u64
                || (size as usize) < BIT_READ_SLACK
                || offset < u64::from(index.len() as u32)
                || offset.checked_add(u64::from(size)).is_none()
            {
                return Err(Error::BadValue(Section::DatabaseChunk(i as u32)));
            }
        }
        for (i, raw) in clips.chunks_exact(CLIP_ENTRY_SIZE).enumerate() {
            let clip = ClipEntry::read_from_bytes(raw).map_err(|_| Error::OutOfBounds(Section::DatabaseIndex))?;
            let end = u64::from(clip.first_segment.get()).saturating_add(u64::from(clip.segment_count.get()));
            if clip.segment_count.get() == 0
                || end > u64::from(segment_total)
                || name_at(names, clip.name_at.get()).is_none()
            {
                return Err(Error::BadValue(Section::DatabaseClip(i as u32)));
            }
        }
        for (i, raw) in segments.chunks_exact(TIER_SEGMENT_SIZE).enumerate() {
            let entry = TierSegment::read_from_bytes(raw).map_err(|_| Error::OutOfBounds(Section::DatabaseIndex))?;
            let present = entry.present.map(|p| p.get());
            let valid = present[0] & present[1] == 0
                && (present[0] | present[1]) & 1 == 0
                && entry.at.iter().zip(present).zip(counts).all(|((at, held), count)| {
                    let at = at.get();
                    if held == 0 {
                        at == 0
                    } else {
                        at >> shift < count
                    }
                });
            if !valid {
                return Err(Error::BadValue(Section::DatabaseSegment(i as u32)));
            }
        }
        Ok(database)
    }

    /// Like [`Database::from_bytes`], and also verifies the index checksum.
    pub fn from_bytes_verified(bytes: &'d [u8]) -> Result<Self, Error> {
        let database = Self::from_bytes(bytes)?;
        let stored = database.header.checksum.get();
        let computed = format::database::index_checksum(database.index);
        if stored != computed {
            return Err(Error::ChecksumMismatch { stored, computed });
        }
        Ok(database)
    }

    /// The database's id, which each of its clips stores.
    pub fn id(&self) -> u64 {
        self.header.database_id.get()
    }

    /// Format version `(major, minor)` of the database.
    pub fn version(&self) -> (u16, u16) {
        (self.header.version_major.get(), self.header.version_minor.get())
    }

    /// Bytes of the index: what stays in memory. The chunks follow it in the file.
    pub fn index_size(&self) -> u32 {
        self.header.index_size.get()
    }

    /// Number of clips.
    pub fn clip_count(&self) -> u32 {
        self.header.clip_count.get()
    }

    /// Size of a chunk in bytes (a power of two; a tier's last chunk may be shorter).
    pub fn chunk_size(&self) -> u32 {
        1u32.checked_shl(u32::from(self.header.chunk_shift)).unwrap_or(0)
    }

    /// Chunks in `tier`.
    pub fn chunk_count(&self, tier: Tier) -> u32 {
        self.header.chunk_counts.get(tier.index()).map_or(0, |c| c.get())
    }

    /// Chunks over both tiers: the slots a [`crate::Residency`] needs.
    pub fn chunk_slots(&self) -> u32 {
        self.chunk_count(Tier::Medium).saturating_add(self.chunk_count(Tier::Low))
    }

    /// Whether the low tier was stripped when the database was built: its key frames
    /// are gone, and the medium fidelity is the highest.
    pub fn low_stripped(&self) -> bool {
        self.header.flags.get() & DATABASE_LOW_STRIPPED != 0
    }

    /// Chunk `index` of `tier`: where it is in the file, its size and checksum.
    pub fn chunk(&self, tier: Tier, index: u32) -> Option<Chunk> {
        if index >= self.chunk_count(tier) {
            return None;
        }
        let slot = match tier {
            Tier::Medium => index,
            Tier::Low => self.chunk_count(Tier::Medium).saturating_add(index),
        };
        let at =
            (self.header.chunks_offset.get() as usize).saturating_add((slot as usize).saturating_mul(CHUNK_ENTRY_SIZE));
        let (entry, _) = ChunkEntry::read_from_prefix(self.index.get(at..)?).ok()?;
        Some(Chunk { file_offset: entry.file_offset.get(), size: entry.size.get(), checksum: entry.checksum.get() })
    }

    /// Checks that `bytes` are chunk `index` of `tier` (size and checksum): for chunks
    /// read from an untrusted store. [`crate::Residency::bind`] checks the size only.
    pub fn verify_chunk(&self, tier: Tier, index: u32, bytes: &[u8]) -> Result<(), Error> {
        let chunk = self.chunk(tier, index).ok_or(Error::NoSuchChunk { tier: tier.index() as u8, chunk: index })?;
        let data = bytes.get(..chunk.size as usize).ok_or(Error::ChunkTooShort {
            tier: tier.index() as u8,
            chunk: index,
            needed: chunk.size,
            available: bytes.len() as u64,
        })?;
        if chunk_checksum(data) != chunk.checksum {
            return Err(Error::ChunkChecksumMismatch { tier: tier.index() as u8, chunk: index });
        }
        Ok(())
    }

    /// The database's record of clip `index`.
    pub fn clip(&self, index: u32) -> Option<DatabaseClip<'d>> {
        let entry = self.clip_entry(index)?;
        let names = self.index.get(self.header.names_offset.get() as usize..)?;
        let mut tier_frames = [0u32; TIER_COUNT];
        for s in 0..entry.segment_count.get() {
            let segment = self.tier_segment(entry.first_segment.get().saturating_add(s))?;
            for (frames, present) in tier_frames.iter_mut().zip(segment.present) {
                *frames = frames.saturating_add(present.get().count_ones());
            }
        }
        Some(DatabaseClip {
            name: name_at(names, entry.name_at.get())?,
            checksum: entry.clip_checksum.get(),
            segment_count: entry.segment_count.get(),
            tier_frames,
        })
    }

    /// What each tier holds of segment `segment` of clip `clip` ([`Tier::index`]
    /// order): the local key frames, and the chunk they are in (meaningful when some
    /// are held). Tools use it to say which chunks a clip needs.
    pub fn segment_tiers(&self, clip: u32, segment: u32) -> Option<[TierFrames; TIER_COUNT]> {
        let entry = self.clip_entry(clip)?;
        if segment >= entry.segment_count.get() {
            return None;
        }
        let tiers = self.tier_segment(entry.first_segment.get().saturating_add(segment))?;
        let shift = u32::from(self.header.chunk_shift);
        Some([0, 1].map(|t| TierFrames {
            present: tiers.present.get(t).map_or(0, |p| p.get()),
            chunk: tiers.at.get(t).map_or(0, |a| a.get()).checked_shr(shift).unwrap_or(0),
        }))
    }

    fn clip_entry(&self, index: u32) -> Option<ClipEntry> {
        if index >= self.clip_count() {
            return None;
        }
        let at =
            (self.header.clips_offset.get() as usize).saturating_add((index as usize).saturating_mul(CLIP_ENTRY_SIZE));
        ClipEntry::read_from_prefix(self.index.get(at..)?).ok().map(|(e, _)| e)
    }

    fn tier_segment(&self, index: u32) -> Option<TierSegment> {
        let at = (self.header.segments_offset.get() as usize)
            .saturating_add((index as usize).saturating_mul(TIER_SEGMENT_SIZE));
        TierSegment::read_from_prefix(self.index.get(at..)?).ok().map(|(e, _)| e)
    }

    /// Number of shared poses.
    pub fn pose_count(&self) -> u32 {
        self.header.pose_count.get()
    }

    /// Shared pose `index`: the values its clips' default sub-tracks take.
    pub fn shared_pose(&self, index: u32) -> Option<SharedPose<'d>> {
        if index >= self.pose_count() {
            return None;
        }
        let at =
            (self.header.poses_offset.get() as usize).saturating_add((index as usize).saturating_mul(POSE_ENTRY_SIZE));
        let (entry, _) = PoseEntry::read_from_prefix(self.index.get(at..)?).ok()?;
        let values = self.index.get(entry.values_offset.get() as usize..)?;
        SharedPose::from_bytes(values, entry.bone_count.get()).ok()
    }

    /// Validates `bytes` as a clip of this database (like [`Clip::from_bytes`]) and,
    /// when its default sub-tracks take their values from a shared pose (flag
    /// SHARED_POSE), gives it that pose: the way to open a database's clips. Refuses a
    /// clip with a shared pose that names another database or a pose it does not
    /// have; a clip without one opens as [`Clip::from_bytes`] opens it, whatever
    /// database it names ([`Database::bind`] checks that).
    pub fn open_clip<'a>(&self, bytes: &'a [u8]) -> Result<Clip<'a>, Error>
    where
        'd: 'a,
    {
        let clip = Clip::parse_without_pose(bytes)?;
        let Some(index) = clip.shared_pose_index() else { return Ok(clip) };
        match clip.database_reference() {
            Some((id, _)) if id == self.id() => {}
            _ => return Err(Error::NotInDatabase(Mismatch::OtherDatabase)),
        }
        let pose = self.shared_pose(index).ok_or(Error::NotInDatabase(Mismatch::PoseOutOfRange))?;
        clip.with_pose(pose)
    }

    /// Checks `clip` against the database, in time linear in its segments, and returns
    /// what sampling it with tiers needs ([`crate::Sampler::seek_streamed`]).
    ///
    /// The clip must name this database and match its record (checksum, segments);
    /// every key frame a tier holds of a segment must be one the clip leaves out, and
    /// neither its first nor its last; and the tier's bytes for the segment, plus the
    /// read slack, must fit in their chunk.
    pub fn bind<'a>(&self, clip: &Clip<'a>) -> Result<Binding<'d>, Error> {
        let (id, index) = clip.database_reference().ok_or(Error::NotInDatabase(Mismatch::NoReference))?;
        if id != self.id() {
            return Err(Error::NotInDatabase(Mismatch::OtherDatabase));
        }
        let entry = self.clip_entry(index).ok_or(Error::NotInDatabase(Mismatch::IndexOutOfRange))?;
        if entry.clip_checksum.get() != clip.checksum() || entry.segment_count.get() != clip.segment_count() {
            return Err(Error::NotInDatabase(Mismatch::Rebuilt));
        }
        let first = entry.first_segment.get() as usize;
        let count = entry.segment_count.get() as usize;
        let at = (self.header.segments_offset.get() as usize).saturating_add(first.saturating_mul(TIER_SEGMENT_SIZE));
        // Inside the validated segment table.
        let segments = self
            .index
            .get(at..at.saturating_add(count.saturating_mul(TIER_SEGMENT_SIZE)))
            .ok_or(Error::OutOfBounds(Section::DatabaseIndex))?;
        let shift = u32::from(self.header.chunk_shift);
        let mask = self.chunk_size().wrapping_sub(1);
        for (s, raw) in segments.chunks_exact(TIER_SEGMENT_SIZE).enumerate() {
            let segment = s as u32;
            let bad = Error::BadTierFrames { segment };
            let tiers = TierSegment::read_from_bytes(raw).map_err(|_| bad)?;
            let (_, frame_bits, present) = clip.segment(segment);
            let (_, samples) = format::segment_span(segment, clip.sample_count(), clip.segment_len());
            // Frames the tiers may hold: inside the segment, before its last frame.
            let movable = (1u32 << (samples.saturating_sub(1) & 31)).wrapping_sub(1);
            for tier in Tier::ALL {
                let t = tier.index();
                let held = tiers.present.get(t).map_or(0, |p| p.get());
                if held == 0 {
                    continue;
                }
                if held & present != 0 || held & !movable != 0 {
                    return Err(bad);
                }
                let location = tiers.at.get(t).map_or(0, |a| a.get());
                let chunk = self.chunk(tier, location >> shift).ok_or(bad)?;
                let bytes = u64::from(held.count_ones()).saturating_mul(u64::from(frame_bits)).div_ceil(8);
                let end = u64::from(location & mask).saturating_add(bytes).saturating_add(BIT_READ_SLACK as u64);
                if end > u64::from(chunk.size) {
                    return Err(bad);
                }
            }
        }
        Ok(Binding {
            segments,
            clip: (clip.bytes.as_ptr() as usize, clip.bytes.len()),
            database_id: self.id(),
            chunk_shift: shift,
        })
    }
}

/// The name at `at` in the names section: a `u16` length, then that many bytes of
/// UTF-8.
fn name_at(names: &[u8], at: u32) -> Option<&str> {
    let at = at as usize;
    let len = u16_at(names, at)? as usize;
    let start = at.checked_add(2)?;
    core::str::from_utf8(names.get(start..start.checked_add(len)?)?).ok()
}

/// FNV-1a (32-bit) of a chunk's bytes.
pub fn chunk_checksum(bytes: &[u8]) -> u32 {
    const PRIME: u32 = 0x0100_0193;
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(PRIME))
}

/// A clip checked against its database ([`Database::bind`]): where the tiers hold its
/// segments' key frames. Cheap to copy; valid for that clip and database only, which
/// [`crate::Sampler::seek_streamed`] checks.
#[derive(Clone, Copy, Debug)]
pub struct Binding<'d> {
    /// The clip's entries of the database's segment table.
    segments: &'d [u8],
    /// The clip's bytes (address and length): its identity.
    clip: (usize, usize),
    database_id: u64,
    chunk_shift: u32,
}

impl Binding<'_> {
    /// Refuses to serve a clip other than the one it was made for (the same bytes),
    /// or a residency of another database (`database_id`).
    #[inline]
    pub(crate) fn check(&self, clip: &Clip<'_>, database_id: u64) -> Result<(), Error> {
        if self.clip == (clip.bytes.as_ptr() as usize, clip.bytes.len()) && self.database_id == database_id {
            Ok(())
        } else {
            Err(Error::OtherClipOrDatabase)
        }
    }

    /// The database's id.
    pub fn database_id(&self) -> u64 {
        self.database_id
    }

    /// What the tiers hold of segment `segment` (below the clip's segment count):
    /// per tier, the key frames present and their location.
    #[inline(always)]
    pub(crate) fn segment(&self, segment: u32) -> ([u32; TIER_COUNT], [u32; TIER_COUNT]) {
        let at = (segment as usize).wrapping_mul(TIER_SEGMENT_SIZE);
        // One bounds check for the four words.
        let raw = self.segments.get(at..).and_then(|b| b.first_chunk::<16>()).copied().unwrap_or([0; 16]);
        let [m0, m1, m2, m3, l0, l1, l2, l3, a0, a1, a2, a3, b0, b1, b2, b3] = raw;
        let word = u32::from_le_bytes;
        ([word([m0, m1, m2, m3]), word([l0, l1, l2, l3])], [word([a0, a1, a2, a3]), word([b0, b1, b2, b3])])
    }

    /// The chunk and byte of a tier location.
    #[inline(always)]
    pub(crate) fn locate(&self, at: u32) -> (u32, usize) {
        let mask = 1u32.wrapping_shl(self.chunk_shift).wrapping_sub(1);
        (at.wrapping_shr(self.chunk_shift), (at & mask) as usize)
    }
}
