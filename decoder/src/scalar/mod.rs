//! Scalar track lists (format 2.1, header kind 1): tracks of one to four floats each
//! (blend-shape weights, IK weights, a camera's field of view…), compressed with the
//! same segments, bit rates and ranges as bone transforms, and sampled into a
//! caller's slice of floats, each track at its output index.
//!
//! [`ScalarClip`] validates once, like [`crate::Clip`]; [`ScalarSampler`] seeks like
//! [`crate::Sampler`] and decodes every track, walking them in order (bit offsets summed
//! as it goes). The values are decoded one component at a time with the encoder's
//! own arithmetic ([`crate::unpack::quantization`]), which is the decoder's on the portable
//! backend: a list holds few tracks, and every target gives the same bits.

pub(crate) mod metadata;

use zerocopy::FromBytes;

use crate::error::{Error, Section};
use crate::format::bytes::{aligned_section, f32_at, read_bits, u32_at};
use crate::format::clip::{read_header, validate_segments, SegmentShape};
use crate::format::{
    self, ClipHeader, Looping, ScalarDescription, FLAG_HAS_METADATA, FLAG_LOOP_WRAP, KIND_SCALAR_TRACKS, MAX_BONES,
    MAX_SAMPLES, MAX_SEGMENT_LEN, MINOR_METADATA_RECORDS, SCALAR_DESCRIPTION_SIZE, SCALAR_REMAP, SEGMENT_ENTRY_SIZE,
};
use crate::seek::{Key, Position};
use crate::unpack::quantization::decode_components;
use metadata::ScalarMetadata;

/// The kind of values a scalar track list holds (ACL's track types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// One float per track.
    Float1,
    /// Two floats.
    Float2,
    /// Three floats.
    Float3,
    /// Four floats.
    Float4,
    /// Four floats, a SIMD vector in ACL (decoded like [`ScalarType::Float4`]).
    Vector4,
}

impl ScalarType {
    /// The type stored as byte `value` (1 to 5).
    pub const fn from_byte(value: u8) -> Option<ScalarType> {
        match value {
            1 => Some(ScalarType::Float1),
            2 => Some(ScalarType::Float2),
            3 => Some(ScalarType::Float3),
            4 => Some(ScalarType::Float4),
            5 => Some(ScalarType::Vector4),
            _ => None,
        }
    }

    /// Its byte in the format.
    pub const fn to_byte(self) -> u8 {
        match self {
            ScalarType::Float1 => 1,
            ScalarType::Float2 => 2,
            ScalarType::Float3 => 3,
            ScalarType::Float4 => 4,
            ScalarType::Vector4 => 5,
        }
    }

    /// Floats per track.
    pub const fn components(self) -> usize {
        match self {
            ScalarType::Float1 => 1,
            ScalarType::Float2 => 2,
            ScalarType::Float3 => 3,
            ScalarType::Float4 | ScalarType::Vector4 => 4,
        }
    }

    /// Its name in ACL's text format: `float1f` … `float4f`, `vector4f`.
    pub const fn name(self) -> &'static str {
        match self {
            ScalarType::Float1 => "float1f",
            ScalarType::Float2 => "float2f",
            ScalarType::Float3 => "float3f",
            ScalarType::Float4 => "float4f",
            ScalarType::Vector4 => "vector4f",
        }
    }
}

/// A validated scalar track list borrowing the caller's bytes. Cheap to copy.
#[derive(Clone, Copy, Debug)]
pub struct ScalarClip<'a> {
    bytes: &'a [u8],
    header: ClipHeader,
    track_type: ScalarType,
    track_count: u32,
    output_count: u32,
    /// Offsets of the constant and animated bit sets, and of the output indices when
    /// the tracks are remapped.
    sets: usize,
    remap: Option<usize>,
    animated_count: u32,
    frame_directory_len: u32,
    metadata: Option<ScalarMetadata<'a>>,
}

impl<'a> ScalarClip<'a> {
    /// Validates `bytes` (16-byte aligned) as a scalar track list, in time
    /// proportional to its metadata, or says what is wrong.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        let (header, bytes) = read_header(bytes)?;
        // Scalar track lists may wrap, and carry no root motion; metadata from 3.2.
        if header.kind != KIND_SCALAR_TRACKS {
            return Err(Error::UnsupportedKind(header.kind));
        }
        let flags = header.flags.get();
        let minor = header.version_minor.get();
        let known = if minor >= MINOR_METADATA_RECORDS { FLAG_LOOP_WRAP | FLAG_HAS_METADATA } else { FLAG_LOOP_WRAP };
        if flags & !known != 0 {
            return Err(Error::UnknownFlags(flags & !known));
        }
        if header.additive != 0 {
            return Err(Error::UnsupportedAdditive(header.additive));
        }
        let (meta_offset, meta_size) = (header.metadata_offset.get(), header.metadata_size.get());
        let no_metadata = flags & FLAG_HAS_METADATA == 0;
        if header.raw_constants != 0 || (no_metadata && (meta_offset != 0 || meta_size != 0)) {
            return Err(Error::NonZeroReserved(Section::Header));
        }
        let (tracks, samples) = (header.bone_count.get(), header.sample_count.get());
        let (segment_len, segment_count) = (header.segment_len, header.segment_count.get());
        if tracks > MAX_BONES
            || samples == 0
            || samples > MAX_SAMPLES
            || segment_len == 0
            || segment_len > MAX_SEGMENT_LEN
            || segment_count != format::segment_count(samples, segment_len)
        {
            return Err(Error::BadCounts);
        }
        let rate = header.sample_rate.get();
        let looping = Looping::from_flags(flags);
        if !(rate.is_finite() && rate > 0.0 && format::duration(samples, rate, looping).is_finite()) {
            return Err(Error::BadSampleRate);
        }

        // Descriptions: type, options, output count, two bit sets, output indices.
        let set_len = format::bitset_len(tracks as usize);
        let remapped = {
            let head =
                aligned_section(bytes, header.tracks_offset.get(), SCALAR_DESCRIPTION_SIZE as u64, Section::Tracks)?;
            let d = ScalarDescription::read_from_bytes(head).map_err(|_| Error::OutOfBounds(Section::Tracks))?;
            if d.options & !SCALAR_REMAP != 0 || d.reserved.get() != 0 {
                return Err(Error::NonZeroReserved(Section::Tracks));
            }
            d
        };
        let track_type = ScalarType::from_byte(remapped.track_type).ok_or(Error::BadValue(Section::Tracks))?;
        let remap = remapped.options & SCALAR_REMAP != 0;
        let output_count = remapped.output_count.get();
        if (!remap && output_count != tracks) || output_count > MAX_BONES {
            return Err(Error::BadValue(Section::Tracks));
        }
        let len = format::scalar_description_len(tracks as usize, remap) as u64;
        let section = aligned_section(bytes, header.tracks_offset.get(), len, Section::Tracks)?;
        // Inside the section just checked: nothing wraps.
        let sets = (header.tracks_offset.get() as usize).saturating_add(SCALAR_DESCRIPTION_SIZE);
        let set = |i: usize| {
            let start = SCALAR_DESCRIPTION_SIZE.saturating_add(i.saturating_mul(set_len));
            section.get(start..start.saturating_add(set_len))
        };
        let (constant, animated) = (set(0).unwrap_or(&[]), set(1).unwrap_or(&[]));
        let tail = tracks % 8;
        for s in [constant, animated] {
            if tail != 0 && s.last().is_some_and(|&b| b >> tail != 0) {
                return Err(Error::NonZeroReserved(Section::Tracks));
            }
        }
        if constant.iter().zip(animated).any(|(a, b)| a & b != 0) {
            return Err(Error::BadValue(Section::Tracks));
        }
        let count = |s: &[u8]| s.iter().fold(0u32, |n, b| n.saturating_add(b.count_ones()));
        let (constant_count, animated_count) = (count(constant), count(animated));
        let remap_at = remap.then(|| sets.saturating_add(format::scalar_sets_len(tracks as usize)));
        if let Some(at) = remap_at {
            for t in 0..tracks as usize {
                if u32_at(bytes, at.saturating_add(t.saturating_mul(4))).is_none_or(|o| o >= output_count) {
                    return Err(Error::BadValue(Section::Tracks));
                }
            }
        }

        // At most 65,535 tracks of 4 components: no product below overflows.
        let c = track_type.components() as u64;
        let constants = aligned_section(
            bytes,
            header.constants_offset.get(),
            u64::from(constant_count).saturating_mul(c.saturating_mul(4)),
            Section::Constants,
        )?;
        if constants.chunks_exact(4).any(|v| !f32_at(v, 0).is_some_and(f32::is_finite)) {
            return Err(Error::BadValue(Section::Constants));
        }
        let range_len = c.saturating_mul(8) as usize;
        let ranges = aligned_section(
            bytes,
            header.ranges_offset.get(),
            u64::from(animated_count).saturating_mul(range_len as u64),
            Section::Ranges,
        )?;
        for range in ranges.chunks_exact(range_len) {
            let value = |i: usize| f32_at(range, i.saturating_mul(4)).unwrap_or(f32::NAN);
            let components = c as usize;
            let bad_min = (0..components).any(|i| !value(i).is_finite());
            let bad_extent =
                (components..components.saturating_mul(2)).any(|i| !value(i).is_finite() || value(i) < 0.0);
            if bad_min || bad_extent {
                return Err(Error::BadValue(Section::Ranges));
            }
        }
        let frame_directory_len = format::frame_directory_len(animated_count as usize) as u32;
        let ranged = if segment_count > 1 { u64::from(animated_count).saturating_mul(c.saturating_mul(2)) } else { 0 };
        let shape = SegmentShape {
            segments_offset: header.segments_offset.get(),
            segment_count,
            sample_count: samples,
            segment_len,
            animated_count,
            frame_directory_len,
            header_len: u64::from(frame_directory_len).saturating_add(u64::from(animated_count)).saturating_add(ranged),
            holes: false,
        };
        validate_segments(bytes, &shape, |_| c, &mut 0)?;
        let mut clip = ScalarClip {
            bytes,
            header,
            track_type,
            track_count: tracks,
            output_count,
            sets,
            remap: remap_at,
            animated_count,
            frame_directory_len,
            metadata: None,
        };
        if !no_metadata {
            let meta = aligned_section(bytes, meta_offset, u64::from(meta_size), Section::Metadata)?;
            clip.metadata = Some(ScalarMetadata::parse(meta, tracks, |t| clip.output_index(t).unwrap_or(u32::MAX))?);
        }
        Ok(clip)
    }

    /// The optional metadata (3.2): the list's name, and every source track's name,
    /// precision and output index.
    pub fn metadata(&self) -> Option<ScalarMetadata<'a>> {
        self.metadata
    }

    /// The type of every track.
    pub fn track_type(&self) -> ScalarType {
        self.track_type
    }
    /// Tracks stored (those the source did not strip).
    pub fn track_count(&self) -> u32 {
        self.track_count
    }
    /// Output slots: the slice [`ScalarSampler::decompress_tracks`] fills holds this
    /// many tracks of [`ScalarType::components`] floats.
    pub fn output_count(&self) -> u32 {
        self.output_count
    }
    /// The output index of stored track `track` (below the track count).
    pub fn output_index(&self, track: u32) -> Option<u32> {
        if track >= self.track_count {
            return None;
        }
        match self.remap {
            Some(at) => u32_at(self.bytes, at.saturating_add((track as usize).saturating_mul(4))),
            None => Some(track),
        }
    }
    /// Stored samples.
    pub fn sample_count(&self) -> u32 {
        self.header.sample_count.get()
    }
    /// Samples per second.
    pub fn sample_rate(&self) -> f32 {
        self.header.sample_rate.get()
    }
    /// Clamp or wrap.
    pub fn looping(&self) -> Looping {
        Looping::from_flags(self.header.flags.get())
    }
    /// Duration in seconds, as for a transform clip.
    pub fn duration(&self) -> f32 {
        format::duration(self.sample_count(), self.sample_rate(), self.looping())
    }
    /// Source samples (one more than stored for a wrapping list).
    pub fn source_sample_count(&self) -> u32 {
        format::intervals(self.sample_count(), self.looping()).saturating_add(1)
    }
    /// Number of segments.
    pub fn segment_count(&self) -> u32 {
        self.header.segment_count.get()
    }
    /// Animated tracks.
    pub fn animated_tracks(&self) -> u32 {
        self.animated_count
    }
    /// Format version.
    pub fn version(&self) -> (u16, u16) {
        (self.header.version_major.get(), self.header.version_minor.get())
    }
    /// Total size in bytes.
    pub fn total_size(&self) -> u32 {
        self.header.total_size.get()
    }
    /// The stored checksum.
    pub fn checksum(&self) -> u32 {
        self.header.checksum.get()
    }

    /// Like [`ScalarClip::from_bytes`], and also verifies the checksum.
    pub fn from_bytes_verified(bytes: &'a [u8]) -> Result<Self, Error> {
        let clip = Self::from_bytes(bytes)?;
        let (stored, computed) = (clip.header.checksum.get(), format::checksum(clip.bytes));
        if stored != computed {
            return Err(Error::ChecksumMismatch { stored, computed });
        }
        Ok(clip)
    }

    /// Is track `t` in set `set` (0 constant, 1 animated)?
    fn in_set(&self, set: usize, t: usize) -> bool {
        let at = self.sets.saturating_add(set.saturating_mul(format::bitset_len(self.track_count as usize)));
        self.bytes.get(at.saturating_add(t >> 3)).is_some_and(|b| (b >> (t & 7)) & 1 == 1)
    }

    /// Where key frame `sample` is (as [`crate::Sampler`] finds it). Offsets lie in
    /// the validated buffer: the sums cannot overflow.
    fn key(&self, sample: u32) -> Key<'a> {
        let len = u32::from(self.header.segment_len);
        let segment = sample.checked_div(len).unwrap_or(0).min(self.segment_count().saturating_sub(1));
        let at = (self.header.segments_offset.get() as usize)
            .saturating_add((segment as usize).saturating_mul(SEGMENT_ENTRY_SIZE));
        let data = u32_at(self.bytes, at).unwrap_or(0) as usize;
        let frame_bits = u32_at(self.bytes, at.saturating_add(4)).unwrap_or(0);
        let local = sample.saturating_sub(segment.saturating_mul(len));
        let rates = data.saturating_add(self.frame_directory_len as usize);
        let segment_ranges = rates.saturating_add(self.animated_count as usize);
        let c = self.track_type.components() as u64;
        let ranged = if self.segment_count() > 1 {
            u64::from(self.animated_count).saturating_mul(c.saturating_mul(2))
        } else {
            0
        };
        let samples = (segment_ranges as u64).saturating_add(ranged);
        let frame_bit =
            samples.saturating_mul(8).saturating_add(u64::from(local).saturating_mul(u64::from(frame_bits)));
        Key { samples: self.bytes, directory: data, rates, segment_ranges, frame_bit }
    }
}

/// Samples a [`ScalarClip`]: seek, then decode every track into a slice of floats.
#[derive(Clone, Copy, Debug)]
pub struct ScalarSampler<'a> {
    clip: ScalarClip<'a>,
    keys: [Key<'a>; 2],
    alpha: f32,
}

impl<'a> ScalarSampler<'a> {
    /// A sampler at time 0.
    pub fn new(clip: ScalarClip<'a>) -> Self {
        let mut sampler = ScalarSampler { clip, keys: [Key::default(); 2], alpha: 0.0 };
        sampler.seek(0.0);
        sampler
    }

    /// The list being sampled.
    pub fn clip(&self) -> &ScalarClip<'a> {
        &self.clip
    }

    /// Moves to `time` seconds, interpolating between samples (times outside
    /// `[0, duration]` are clamped, NaN reads as 0), as a transform clip seeks.
    pub fn seek(&mut self, time: f32) {
        let clip = &self.clip;
        let p = Position::at(clip.sample_count(), clip.sample_rate(), clip.looping(), time);
        self.keys = [clip.key(p.k0), clip.key(p.k1)];
        self.alpha = p.fraction;
    }

    /// Decodes every stored track: the components of the track with output index
    /// `o` go to `out[o·c .. o·c + c]` (`c` floats per track); slots of no stored
    /// track are left as they are. `out` must hold [`ScalarClip::output_count`] tracks.
    pub fn decompress_tracks(&self, out: &mut [f32]) -> Result<(), Error> {
        let clip = &self.clip;
        self.decode_into(out, clip.output_count, |t| clip.output_index(t).unwrap_or(0))
    }

    /// Decodes every stored track by its place among the stored tracks rather than
    /// its output index: stored track `t` goes to `out[t·c .. t·c + c]`. `out` must
    /// hold [`ScalarClip::track_count`] tracks. (Tools that write every track out,
    /// two of one output index included, use this.)
    pub fn decompress_stored_tracks(&self, out: &mut [f32]) -> Result<(), Error> {
        self.decode_into(out, self.clip.track_count, |t| t)
    }

    /// Decodes every stored track `t` into slot `slot(t)` of `out`, which must hold
    /// `slots` tracks.
    fn decode_into(&self, out: &mut [f32], slots: u32, slot: impl Fn(u32) -> u32) -> Result<(), Error> {
        let clip = &self.clip;
        let c = clip.track_type.components();
        let needed = (slots as usize).saturating_mul(c);
        if out.len() < needed {
            return Err(Error::FloatOutputTooSmall { len: out.len() as u32, needed: needed as u32 });
        }
        let bytes = clip.bytes;
        // Every offset below lies in a section validation checked: nothing wraps.
        let (mut constant_at, mut range_at) =
            (clip.header.constants_offset.get() as usize, clip.header.ranges_offset.get() as usize);
        let mut animated = 0usize;
        let [key0, key1] = &self.keys;
        let mut bits = [key0.frame_bit, key1.frame_bit];
        let ranged = clip.segment_count() > 1;
        for t in 0..clip.track_count as usize {
            let mut value = [0.0f32; 4];
            if clip.in_set(0, t) {
                for (m, v) in value.iter_mut().enumerate().take(c) {
                    *v = f32_at(bytes, constant_at.saturating_add(m << 2)).unwrap_or(0.0);
                }
                constant_at = constant_at.saturating_add(c << 2);
            } else if clip.in_set(1, t) {
                let component = |i: usize| f32_at(bytes, range_at.saturating_add(i << 2)).unwrap_or(0.0);
                let min: [f32; 4] = core::array::from_fn(|m| if m < c { component(m) } else { 0.0 });
                let extent: [f32; 4] =
                    core::array::from_fn(|m| if m < c { component(c.saturating_add(m)) } else { 0.0 });
                range_at = range_at.saturating_add(c << 3);
                let mut keys = [[0.0f32; 4]; 2];
                for ((key, bit), v) in [key0, key1].into_iter().zip(bits.iter_mut()).zip(keys.iter_mut()) {
                    let rate = bytes.get(key.rates.saturating_add(animated)).copied().unwrap_or(0);
                    let segment = ranged.then(|| {
                        let at = key.segment_ranges.saturating_add(animated.saturating_mul(c << 1));
                        let byte = |i: usize| bytes.get(at.saturating_add(i)).copied().unwrap_or(0);
                        core::array::from_fn(|m| if m < c { (byte(m), byte(c.saturating_add(m))) } else { (0, 0) })
                    });
                    let stored: [u32; 4] = core::array::from_fn(|m| {
                        if m < c && rate != 0 {
                            read_bits(bytes, bit.saturating_add((m as u64).saturating_mul(u64::from(rate))), rate)
                        } else {
                            0
                        }
                    });
                    *v = decode_components(rate, stored, segment, min, extent);
                    *bit = bit.saturating_add(u64::from(rate).saturating_mul(c as u64));
                }
                let [v0, v1] = keys;
                for ((v, a), b) in value.iter_mut().zip(v0).zip(v1).take(c) {
                    *v = if self.alpha == 0.0 { a } else { a + (b - a) * self.alpha };
                }
                animated = animated.saturating_add(1);
            }
            let output = (slot(t as u32) as usize).saturating_mul(c);
            if let (Some(slot), Some(v)) = (out.get_mut(output..output.saturating_add(c)), value.get(..c)) {
                slot.copy_from_slice(v);
            }
        }
        Ok(())
    }
}
