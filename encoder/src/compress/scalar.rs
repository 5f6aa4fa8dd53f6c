//! Compression of scalar track lists (format 2.1, kind 1): each track's own precision
//! bounds the absolute error of every component at every sample, with the same
//! classes, clip ranges, segments and bit rates as bone sub-tracks. Tracks are
//! independent (no hierarchy), so each segment's search is per track: the lowest bit
//! rate whose decoded values, with the decoder's own arithmetic, are all within the
//! precision.

use ossa_decoder::format::{
    self, ClipHeader, ScalarDescription, FLAG_HAS_METADATA, HEADER_SIZE, KIND_SCALAR_TRACKS, MAGIC, SCALAR_REMAP,
    VERSION_MAJOR,
};
use ossa_decoder::quantization::decode_components;
use ossa_decoder::{ScalarClip, ScalarSampler};
use zerocopy::little_endian::{F32, U16, U32};
use zerocopy::IntoBytes;

use super::sub_track::{encode_samples, span, SegmentCode, LADDER};
use super::writer::{pad, pad_end, write_segments};
use super::CompressError;
use crate::aligned::AlignedBytes;
use crate::measure::sample_time;
use crate::raw_track_list::{RawTrackList, NO_OUTPUT};

/// A compressed track list and what was measured on it.
#[derive(Clone, Debug)]
pub struct CompressedTracks {
    /// The `.ossa` buffer (kind 1), 16-byte aligned.
    pub bytes: AlignedBytes,
    /// What a game ships: the buffer without its metadata section.
    pub compressed_bytes: usize,
    /// The largest error, relative to its track's precision (1 is the bound), over
    /// every stored track, component and sample.
    pub max_error_ratio: f64,
    /// The largest absolute error.
    pub max_error: f64,
}

/// A stored track's class and encoding.
enum Class {
    /// All components within the precision of 0: nothing stored, decodes as 0.
    Default,
    Constant([f32; 4]),
    Animated {
        min: [f32; 4],
        extent: [f32; 4],
    },
}

/// How to compress a track list.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackSettings {
    /// Samples per segment, 1 to [`format::MAX_SEGMENT_LEN`] (default 16).
    pub segment_len: u8,
    /// Write the metadata section (3.2): the list's name and every source track's
    /// name, precision and output index, so that the list is written back as it came
    /// in (default). Without it the file is what a game ships and nothing more.
    pub include_metadata: bool,
}

impl Default for TrackSettings {
    fn default() -> Self {
        TrackSettings { segment_len: format::DEFAULT_SEGMENT_LEN, include_metadata: true }
    }
}

/// Compresses `list`.
pub fn compress_tracks(list: &RawTrackList, settings: &TrackSettings) -> Result<CompressedTracks, CompressError> {
    let segment_len = settings.segment_len;
    list.check().map_err(|e| CompressError::InvalidTrackList(e.to_string()))?;
    if segment_len == 0 || segment_len > format::MAX_SEGMENT_LEN {
        return Err(CompressError::BadSegmentLen(segment_len));
    }
    let c = list.track_type.components();
    let stored: Vec<_> = list.tracks.iter().filter(|t| t.output_index != NO_OUTPUT).collect();
    let values: Vec<Vec<[f32; 4]>> =
        stored.iter().map(|t| t.values.iter().map(|v| v.map(|x| x as f32)).collect()).collect();
    let classes: Vec<Class> = stored.iter().zip(&values).map(|(t, v)| classify(v, c, t.precision)).collect();
    let sample_count = list.sample_count as u32;
    let segment_count = format::segment_count(sample_count, segment_len);
    let ranged = segment_count > 1;

    // Each segment: the lowest rate of every animated track that holds its precision.
    let mut codes: Vec<Vec<(u32, SegmentCode)>> = Vec::new();
    for s in 0..segment_count {
        let (start, count) = format::segment_span(s, sample_count, segment_len);
        let span = start as usize..(start + count) as usize;
        let mut segment = Vec::new();
        for ((track, v), class) in stored.iter().zip(&values).zip(&classes) {
            let Class::Animated { min, extent } = class else { continue };
            let samples = &v[span.clone()];
            let code = LADDER
                .iter()
                .map(|&bits| encode_samples(samples, c, *min, *extent, bits, ranged))
                .find(|code| within(code, samples, c, *min, *extent, ranged, track.precision))
                .unwrap_or_else(|| encode_samples(samples, c, *min, *extent, format::RAW_BITS, ranged));
            segment.push((c as u32, code));
        }
        codes.push(segment);
    }

    let (bytes, compressed_bytes) = write(list, &stored, &classes, &codes, segment_len, settings.include_metadata)?;
    let bytes = AlignedBytes::try_new(&bytes)?;
    let (max_error, max_error_ratio) = measure(&bytes, list)?;
    Ok(CompressedTracks { compressed_bytes, bytes, max_error_ratio, max_error })
}

/// The class of a track of `c` components with values `v` and precision `precision`.
fn classify(v: &[[f32; 4]], c: usize, precision: f64) -> Class {
    let error = |value: [f32; 4]| {
        v.iter().flat_map(|s| (0..c).map(move |m| (f64::from(s[m]) - f64::from(value[m])).abs())).fold(0.0, f64::max)
    };
    if error([0.0; 4]) <= precision {
        return Class::Default;
    }
    let mut lo = [0.0f32; 4];
    let mut hi = [0.0f32; 4];
    for m in 0..c {
        (lo[m], hi[m]) = v.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), s| span(lo, hi, s[m]));
    }
    let middle: [f32; 4] = std::array::from_fn(|m| if m < c { lo[m] + (hi[m] - lo[m]) * 0.5 } else { 0.0 });
    if error(middle) <= precision {
        return Class::Constant(middle);
    }
    let extent: [f32; 4] = std::array::from_fn(|m| if m < c { hi[m] - lo[m] } else { 0.0 });
    if extent.iter().all(|e| e.is_finite()) {
        // `+ 0.0` turns a -0.0 minimum into +0.0 on every target.
        Class::Animated { min: std::array::from_fn(|m| if m < c { lo[m] + 0.0 } else { 0.0 }), extent }
    } else {
        // A span too wide for `f32`: raw samples (bit rate 32) need no range.
        Class::Animated { min: [0.0; 4], extent: [0.0; 4] }
    }
}

/// Whether `code` decodes every sample of `samples` within `precision`.
fn within(
    code: &SegmentCode,
    samples: &[[f32; 4]],
    c: usize,
    min: [f32; 4],
    extent: [f32; 4],
    ranged: bool,
    precision: f64,
) -> bool {
    let segment = ranged.then_some(code.range_bytes);
    samples.iter().zip(&code.values).all(|(s, q)| {
        let d = decode_components(code.bits, *q, segment, min, extent);
        (0..c).all(|m| (f64::from(d[m]) - f64::from(s[m])).abs() <= precision)
    })
}

/// Lays the list out (see `format-spec/scalar-tracks.md`); returns the buffer and
/// its size without metadata.
fn write(
    list: &RawTrackList,
    stored: &[&crate::raw_track_list::ScalarTrack],
    classes: &[Class],
    codes: &[Vec<(u32, SegmentCode)>],
    segment_len: u8,
    include_metadata: bool,
) -> Result<(Vec<u8>, usize), CompressError> {
    let c = list.track_type.components();
    let t = stored.len();
    let mut out = vec![0u8; HEADER_SIZE];
    let tracks_offset = out.len();
    let remap = stored.iter().enumerate().any(|(i, s)| s.output_index as usize != i);
    let output_count = if remap { stored.iter().map(|s| s.output_index + 1).max().unwrap_or(0) } else { t as u32 };
    let description = ScalarDescription {
        track_type: list.track_type.to_byte(),
        options: if remap { SCALAR_REMAP } else { 0 },
        reserved: U16::new(0),
        output_count: U32::new(output_count),
    };
    out.extend_from_slice(description.as_bytes());
    let set_len = format::bitset_len(t);
    let mut sets = vec![0u8; format::scalar_sets_len(t)];
    for (i, class) in classes.iter().enumerate() {
        match class {
            Class::Constant(_) => sets[i / 8] |= 1 << (i % 8),
            Class::Animated { .. } => sets[set_len + i / 8] |= 1 << (i % 8),
            Class::Default => {}
        }
    }
    out.extend_from_slice(&sets);
    if remap {
        for s in stored {
            out.extend_from_slice(&s.output_index.to_le_bytes());
        }
    }
    pad(&mut out);
    let constants_offset = out.len();
    for class in classes {
        if let Class::Constant(v) = class {
            for x in &v[..c] {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    pad(&mut out);
    let ranges_offset = out.len();
    for class in classes {
        if let Class::Animated { min, extent } = class {
            for x in min[..c].iter().chain(&extent[..c]) {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    pad(&mut out);
    let segments: Vec<Vec<(u32, &SegmentCode)>> =
        codes.iter().map(|s| s.iter().map(|(n, code)| (*n, code)).collect()).collect();
    // One list: the animated tracks, in quads of four.
    let animated = segments.first().map_or(0, Vec::len);
    let segments_offset = write_segments(&mut out, list.sample_count as u32, segment_len, &[animated], &segments, &[]);
    // What a game ships ends on a multiple of 16 bytes, with or without metadata after.
    pad_end(&mut out);
    let shipped = out.len();
    let (mut flags, mut metadata_offset, mut metadata_size) = (0, 0, 0);
    if include_metadata {
        (flags, metadata_offset) = (FLAG_HAS_METADATA, out.len());
        write_metadata(&mut out, list);
        pad_end(&mut out);
        metadata_size = out.len() - metadata_offset;
    }
    let header = ClipHeader {
        magic: MAGIC,
        version_major: U16::new(VERSION_MAJOR),
        version_minor: U16::new(format::VERSION_MINOR),
        total_size: U32::new(out.len() as u32),
        checksum: U32::new(0),
        flags: U32::new(flags),
        kind: KIND_SCALAR_TRACKS,
        additive: 0,
        segment_len,
        raw_constants: 0,
        bone_count: U32::new(t as u32),
        sample_count: U32::new(list.sample_count as u32),
        sample_rate: F32::new(list.sample_rate as f32),
        segment_count: U32::new(codes.len() as u32),
        tracks_offset: U32::new(tracks_offset as u32),
        constants_offset: U32::new(constants_offset as u32),
        ranges_offset: U32::new(ranges_offset as u32),
        segments_offset: U32::new(segments_offset as u32),
        metadata_offset: U32::new(metadata_offset as u32),
        metadata_size: U32::new(metadata_size as u32),
    };
    out[..HEADER_SIZE].copy_from_slice(header.as_bytes());
    let sum = format::checksum(&out);
    out[12..16].copy_from_slice(&sum.to_le_bytes());
    Ok((out, shipped))
}

/// Writes the metadata section (`format-spec/scalar-tracks.md`, Metadata) without its
/// padding: the list's name, then every track of the source in its order, those
/// without an output included. (`RawTrackList::check` keeps names within a `u16`.)
fn write_metadata(out: &mut Vec<u8>, list: &RawTrackList) {
    out.extend_from_slice(&(list.tracks.len() as u32).to_le_bytes());
    out.extend_from_slice(&(list.name.len() as u32).to_le_bytes());
    out.extend_from_slice(list.name.as_bytes());
    for track in &list.tracks {
        out.extend_from_slice(&track.output_index.to_le_bytes());
        out.extend_from_slice(&(track.precision as f32).to_le_bytes());
        out.extend_from_slice(&(track.name.len() as u16).to_le_bytes());
        out.extend_from_slice(track.name.as_bytes());
    }
}

/// Decodes `bytes` at every sample with the real decoder; the largest absolute error
/// and the largest relative to its track's precision.
fn measure(bytes: &[u8], list: &RawTrackList) -> Result<(f64, f64), CompressError> {
    let clip = ScalarClip::from_bytes(bytes)
        .map_err(|e| CompressError::Internal(format!("the decoder refused the encoder's track list: {e}")))?;
    let c = list.track_type.components();
    let mut sampler = ScalarSampler::new(clip);
    let mut out = vec![0.0f32; clip.output_count() as usize * c];
    let (mut worst, mut worst_ratio) = (0.0f64, 0.0f64);
    for s in 0..list.sample_count {
        sampler.seek(sample_time(s, clip.sample_rate()));
        sampler.decompress_tracks(&mut out).map_err(|e| CompressError::Internal(e.to_string()))?;
        for track in list.tracks.iter().filter(|t| t.output_index != NO_OUTPUT) {
            let o = track.output_index as usize * c;
            for m in 0..c {
                let e = (f64::from(out[o + m]) - f64::from(track.values[s][m] as f32)).abs();
                worst = worst.max(e);
                worst_ratio = worst_ratio.max(e / track.precision);
            }
        }
    }
    Ok((worst, worst_ratio))
}
