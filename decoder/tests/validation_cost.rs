//! Validation costs time in proportion to the bytes of metadata, whatever the shape:
//! crafted valid files with 65,535 default bones and tens of thousands of segments
//! (which took minutes in format 1.0, where the class table was walked once per
//! segment) are checked here by counting validation's steps, not by timing it.

use ossa_decoder::format::{self, ClipHeader, SegmentEntry, MAGIC, VERSION_MAJOR, VERSION_MINOR};
use ossa_decoder::{Clip, Rounding, Sampler, Transform};
use zerocopy::little_endian::{F32, U16, U32};
use zerocopy::IntoBytes;

fn pad(out: &mut Vec<u8>) {
    out.resize(out.len().next_multiple_of(16), 0);
}

/// A valid clip of `bones` bones (all default but the last bone's translation, which
/// is animated at bit rate 0) and `segments` segments of 16 samples.
fn craft(bones: usize, segments: usize) -> Vec<u8> {
    let mut out = vec![0u8; format::HEADER_SIZE];
    let tracks = out.len();
    let set_len = format::bitset_len(bones);
    let mut sets = vec![0u8; set_len * format::BITSET_COUNT];
    let animated_translations = format::bitset_index(true, format::TrackList::Translation);
    let last = bones - 1;
    sets[animated_translations * set_len + last / 8] |= 1 << (last % 8);
    out.extend_from_slice(&sets);
    // Rank directories: the only set bit is in the last block, so every entry is 0.
    out.resize(out.len() + 16 * format::rank_entries(bones), 0);
    pad(&mut out);
    let constants = out.len();
    let ranges = out.len();
    // The translation list's grid (bases 0, 1, 2; steps 1), then the sub-track's
    // integers: minimums 0, extents 1.
    for v in [0.0f32, 1.0, 2.0, 1.0, 1.0, 1.0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for q in [0u16, 0, 0, 1, 1, 1] {
        out.extend_from_slice(&q.to_le_bytes());
    }
    pad(&mut out);
    let table = out.len();
    out.resize(table + segments * format::SEGMENT_ENTRY_SIZE, 0);
    pad(&mut out);
    for i in 0..segments {
        let data = out.len();
        // Bit rate 0, then the six segment-range bytes.
        out.extend_from_slice(&[0, 10, 20, 30, 1, 2, 3]);
        pad(&mut out);
        let entry = SegmentEntry {
            data_offset: U32::new(data as u32),
            frame_bits: U32::new(0),
            frames_present: U32::new(0xffff),
        };
        let at = table + i * format::SEGMENT_ENTRY_SIZE;
        out[at..at + format::SEGMENT_ENTRY_SIZE].copy_from_slice(entry.as_bytes());
    }
    out.resize(out.len() + format::BIT_READ_SLACK, 0);
    pad(&mut out);
    let header = ClipHeader {
        magic: MAGIC,
        version_major: U16::new(VERSION_MAJOR),
        version_minor: U16::new(VERSION_MINOR),
        total_size: U32::new(out.len() as u32),
        checksum: U32::new(0),
        // All eight bit sets stored, as laid out above (4.2).
        flags: U32::new(format::STORED_SETS_FLAGS),
        kind: format::KIND_TRANSFORMS,
        additive: format::ADDITIVE_NONE,
        segment_len: 16,
        raw_constants: 0,
        bone_count: U32::new(bones as u32),
        sample_count: U32::new(16 * segments as u32),
        sample_rate: F32::new(30.0),
        segment_count: U32::new(segments as u32),
        tracks_offset: U32::new(tracks as u32),
        constants_offset: U32::new(constants as u32),
        ranges_offset: U32::new(ranges as u32),
        segments_offset: U32::new(table as u32),
        metadata_offset: U32::new(0),
        metadata_size: U32::new(0),
    };
    out[..format::HEADER_SIZE].copy_from_slice(header.as_bytes());
    out
}

/// `bytes` copied to a 16-byte aligned buffer.
fn aligned(bytes: &[u8]) -> Vec<u128> {
    let mut buf = vec![0u128; bytes.len().div_ceil(16)];
    buf.as_mut_bytes()[..bytes.len()].copy_from_slice(bytes);
    buf
}

fn as_bytes(buf: &[u128], len: usize) -> &[u8] {
    &buf.as_bytes()[..len]
}

#[test]
#[cfg_attr(miri, ignore = "minutes under Miri; the same code runs natively")]
fn validation_work_is_linear_in_the_metadata_bytes() {
    let mut rows = Vec::new();
    for (bones, segments) in
        [(1, 100), (65_535, 100), (65_535, 1_000), (65_535, 10_000), (65_535, 40_000), (300, 40_000)]
    {
        let file = craft(bones, segments);
        let buf = aligned(&file);
        let bytes = as_bytes(&buf, file.len());
        let (clip, work) = Clip::validation_work(bytes);
        let clip = clip.unwrap_or_else(|e| panic!("{bones} bones, {segments} segments: {e}"));
        // The file is valid and decodes.
        let mut sampler = Sampler::new(clip);
        sampler.seek(clip.duration() * 0.7, Rounding::None);
        let mut pose = vec![Transform::IDENTITY; bones];
        sampler.decompress_pose(&mut pose).unwrap();
        // Bit rate 0: (lo + 256·hi) / 65535 of the clip range (min 0, 1, 2; extent 1).
        let t = pose[bones - 1].translation;
        assert_eq!((t.x, t.y), (266.0f32 / 65535.0, 532.0f32 / 65535.0 + 1.0));
        rows.push((bones, segments, file.len(), work));
        // At most two steps per byte of the file (every byte of it is metadata here;
        // the bit sets are read twice, once for counts and once for overlaps).
        assert!(
            work <= 2 * file.len() as u64,
            "{bones} bones, {segments} segments: {work} steps for {} bytes",
            file.len()
        );
    }
    for (bones, segments, len, work) in &rows {
        eprintln!("{bones:>6} bones {segments:>6} segments: {len:>8} bytes, {work:>8} validation steps");
    }
    // Format 1.0 walked the 65,535 bones once per segment: 40,000 segments were 2.6
    // billion steps. Here the segments add the same few steps each, whatever the bones.
    let per_segment = |a: usize, b: usize| (rows[b].3 - rows[a].3) as f64 / (rows[b].1 - rows[a].1) as f64;
    assert!(per_segment(2, 4) < 4.0, "{} steps per segment", per_segment(2, 4));
    assert!((per_segment(2, 4) - (rows[5].3 - rows[0].3) as f64 / 39_900.0).abs() < 0.5);
}
