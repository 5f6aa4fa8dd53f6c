//! Writes a database file: the index (header, clip table, chunk table, segment
//! table, pose table and shared poses, names), then the chunks
//! (`format-spec/database.md`).

use ossa_decoder::format::database::{
    index_checksum, ChunkEntry, ClipEntry, DatabaseHeader, PoseEntry, TierSegment, DATABASE_HEADER_SIZE,
    DATABASE_MAGIC, DATABASE_VERSION_MAJOR, DATABASE_VERSION_MINOR, POSE_BONE_SIZE, TIER_COUNT,
};
use ossa_decoder::format::ALIGNMENT;
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::IntoBytes;

/// One clip's record.
pub struct ClipRecord<'a> {
    /// Its name.
    pub name: &'a str,
    /// The checksum of its final bytes.
    pub checksum: u32,
    /// Its segments.
    pub segment_count: u32,
    /// Its first entry in the segment table.
    pub first_segment: u32,
}

/// Everything the index holds.
pub struct Contents<'a> {
    /// The database's id.
    pub database_id: u64,
    /// `DATABASE_*` flags.
    pub flags: u32,
    /// Chunk size as a power of two.
    pub chunk_shift: u8,
    /// The clips, in index order.
    pub clips: Vec<ClipRecord<'a>>,
    /// Each tier's chunks.
    pub chunks: [&'a [Vec<u8>]; TIER_COUNT],
    /// The segment table.
    pub segments: &'a [TierSegment],
    /// The shared poses' values ([`POSE_BONE_SIZE`] bytes per bone), in pose order.
    pub poses: Vec<&'a [u8]>,
}

/// The names section: each clip's name as a `u16` length and its bytes, and each
/// name's offset in it.
pub fn names(names: &[&str]) -> (Vec<u8>, Vec<u32>) {
    let mut section = Vec::new();
    let mut offsets = Vec::with_capacity(names.len());
    for name in names {
        offsets.push(section.len() as u32);
        // Names longer than a u16 counts are cut at a character boundary.
        let mut len = name.len().min(u16::MAX as usize);
        while !name.is_char_boundary(len) {
            len -= 1;
        }
        section.extend_from_slice(&(len as u16).to_le_bytes());
        section.extend_from_slice(&name.as_bytes()[..len]);
    }
    (section, offsets)
}

/// The whole database file, and the size of its index.
pub fn write(contents: &Contents<'_>) -> (Vec<u8>, usize) {
    let align = |n: usize| n.next_multiple_of(ALIGNMENT);
    let chunk_total: usize = contents.chunks.iter().map(|c| c.len()).sum();
    let clips_offset = DATABASE_HEADER_SIZE;
    let chunks_offset = align(clips_offset + contents.clips.len() * size_of::<ClipEntry>());
    let segments_offset = align(chunks_offset + chunk_total * size_of::<ChunkEntry>());
    let poses_offset = align(segments_offset + size_of_val(contents.segments));
    // Each pose's values after the pose table, 16-byte aligned.
    let mut pose_values = Vec::with_capacity(contents.poses.len());
    let mut end = align(poses_offset + contents.poses.len() * size_of::<PoseEntry>());
    for values in &contents.poses {
        pose_values.push(end);
        end = align(end + values.len());
    }
    let names_offset = end;
    let (names, name_offsets) = names(&contents.clips.iter().map(|c| c.name).collect::<Vec<_>>());
    let index_size = align(names_offset + names.len());

    let mut out = vec![0u8; index_size];
    let mut at = clips_offset;
    for (clip, &name_at) in contents.clips.iter().zip(&name_offsets) {
        let entry = ClipEntry {
            clip_checksum: U32::new(clip.checksum),
            segment_count: U32::new(clip.segment_count),
            first_segment: U32::new(clip.first_segment),
            name_at: U32::new(name_at),
        };
        out[at..at + size_of::<ClipEntry>()].copy_from_slice(entry.as_bytes());
        at += size_of::<ClipEntry>();
    }
    let mut file_offset = index_size as u64;
    let mut at = chunks_offset;
    for chunk in contents.chunks.iter().flat_map(|c| c.iter()) {
        let entry = ChunkEntry {
            file_offset: U64::new(file_offset),
            size: U32::new(chunk.len() as u32),
            checksum: U32::new(ossa_decoder::chunk_checksum(chunk)),
        };
        out[at..at + size_of::<ChunkEntry>()].copy_from_slice(entry.as_bytes());
        at += size_of::<ChunkEntry>();
        file_offset += align(chunk.len()) as u64;
    }
    let table = contents.segments.as_bytes();
    out[segments_offset..segments_offset + table.len()].copy_from_slice(table);
    let mut at = poses_offset;
    for (values, &values_offset) in contents.poses.iter().zip(&pose_values) {
        let entry = PoseEntry {
            values_offset: U32::new(values_offset as u32),
            bone_count: U32::new((values.len() / POSE_BONE_SIZE) as u32),
            reserved: [U32::new(0); 2],
        };
        out[at..at + size_of::<PoseEntry>()].copy_from_slice(entry.as_bytes());
        at += size_of::<PoseEntry>();
        out[values_offset..values_offset + values.len()].copy_from_slice(values);
    }
    out[names_offset..names_offset + names.len()].copy_from_slice(&names);

    let header = DatabaseHeader {
        magic: DATABASE_MAGIC,
        version_major: U16::new(DATABASE_VERSION_MAJOR),
        version_minor: U16::new(DATABASE_VERSION_MINOR),
        index_size: U32::new(index_size as u32),
        checksum: U32::new(0),
        database_id: U64::new(contents.database_id),
        flags: U32::new(contents.flags),
        clip_count: U32::new(contents.clips.len() as u32),
        segment_count: U32::new(contents.segments.len() as u32),
        chunk_shift: contents.chunk_shift,
        reserved: [0; 3],
        chunk_counts: contents.chunks.map(|c| U32::new(c.len() as u32)),
        clips_offset: U32::new(clips_offset as u32),
        chunks_offset: U32::new(chunks_offset as u32),
        segments_offset: U32::new(segments_offset as u32),
        names_offset: U32::new(names_offset as u32),
        pose_count: U32::new(contents.poses.len() as u32),
        poses_offset: U32::new(poses_offset as u32),
        reserved_end: [0; 8],
    };
    out[..DATABASE_HEADER_SIZE].copy_from_slice(header.as_bytes());
    let sum = index_checksum(&out);
    out[12..16].copy_from_slice(&sum.to_le_bytes());
    for chunk in contents.chunks.iter().flat_map(|c| c.iter()) {
        out.extend_from_slice(chunk);
        out.resize(align(out.len()), 0);
    }
    (out, index_size)
}
