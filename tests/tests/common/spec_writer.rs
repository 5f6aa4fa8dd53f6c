//! A writer of transform clips from `format-spec/` alone, for golden files the
//! reference encoder never writes but a decoder must read: every constant list raw or
//! quantised as byte 23 says (the encoder keeps list 0 quantised and list 1 raw), raw
//! (bit rate 32) samples of any bits (`−0.0`, keys at right angles), bit-rate-0 segment
//! bytes of any value. It writes what it is told, in the layout of tracks.md and
//! segments.md; the decoder's validation checks it.

// Lists are numbered 0 to 3 in the spec, and looped over by number here.
#![allow(clippy::needless_range_loop)]

/// Components per list (tracks.md).
const COMPONENTS: [usize; 4] = [3, 4, 3, 3];

/// One of a bone's sub-tracks.
#[derive(Clone, Debug)]
pub enum Part {
    /// Not stored.
    Default,
    /// A constant in `list`, raw `f32` components.
    Raw { list: usize, values: Vec<f32> },
    /// A constant in `list`, integers on the list's grid.
    Quantised { list: usize, values: Vec<u16> },
    /// Animated in `list`: its clip range integers (minimums, extents) and, per
    /// segment, its data.
    Animated { list: usize, q_min: Vec<u16>, q_extent: Vec<u16>, segments: Vec<Segment> },
}

/// An animated sub-track's data in one segment.
#[derive(Clone, Debug)]
pub enum Segment {
    /// Bit rate 32: each stored frame's components.
    Raw(Vec<Vec<f32>>),
    /// Bit rate 0: the segment bytes `lo`, `hi` of each component.
    Zero { lo: Vec<u8>, hi: Vec<u8> },
}

/// A clip to write: `samples` stored samples (every key frame stored, clamped, no
/// metadata) in segments of `segment_len`, and per bone its rotation, translation
/// and scale.
pub struct Crafted {
    pub sample_rate: f32,
    pub samples: u32,
    pub segment_len: u8,
    pub bones: Vec<[Part; 3]>,
    /// The stored grid (bases, then steps) of lists 2 and 3, for their quantised
    /// constants and for their clip ranges alike.
    pub grid: [[f32; 3]; 2],
}

fn list_of(part: &Part) -> Option<(usize, bool)> {
    match part {
        Part::Default => None,
        Part::Raw { list, .. } | Part::Quantised { list, .. } => Some((*list, false)),
        Part::Animated { list, .. } => Some((*list, true)),
    }
}

fn pad(out: &mut Vec<u8>) {
    while out.len() % 16 != 0 {
        out.push(0);
    }
}

impl Crafted {
    /// The clip's bytes, checksum included.
    pub fn write(&self) -> Vec<u8> {
        let bones = self.bones.len();
        let w = bones.div_ceil(8);
        let r = bones.div_ceil(256).saturating_sub(1);
        let mut sets = vec![vec![0u8; w]; 8];
        for (b, parts) in self.bones.iter().enumerate() {
            for part in parts {
                if let Some((list, animated)) = list_of(part) {
                    sets[4 * usize::from(animated) + list][b / 8] |= 1 << (b % 8);
                }
            }
        }
        // Every sub-track of a list in storage order: list by list, bones ascending.
        let in_list = |list: usize, animated: bool| -> Vec<&Part> {
            let mut out = Vec::new();
            for parts in &self.bones {
                for part in parts {
                    if list_of(part) == Some((list, animated)) {
                        out.push(part);
                    }
                }
            }
            out
        };
        let mut raw_constants = 0u8;
        for list in 0..4 {
            for part in in_list(list, false) {
                if matches!(part, Part::Raw { .. }) {
                    raw_constants |= 1 << list;
                }
            }
        }
        let mut out = vec![0u8; 64];
        let tracks_offset = out.len();
        for set in &sets {
            out.extend_from_slice(set);
        }
        for set in &sets {
            for j in 0..r {
                let count: u32 =
                    (0..256 * (j + 1)).filter(|&b| b < bones && set[b / 8] >> (b % 8) & 1 == 1).count() as u32;
                out.extend_from_slice(&(count as u16).to_le_bytes());
            }
        }
        pad(&mut out);

        // Constants: the grids of quantised lists 2 and 3 with constants, then values.
        let constants_offset = out.len();
        for list in 2..4 {
            if !in_list(list, false).is_empty() && raw_constants & (1 << list) == 0 {
                self.grid_bytes(&mut out);
            }
        }
        for list in 0..4 {
            for part in in_list(list, false) {
                match part {
                    Part::Raw { values, .. } => {
                        assert_eq!(values.len(), COMPONENTS[list]);
                        values.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
                    }
                    Part::Quantised { values, .. } => {
                        assert_eq!(values.len(), COMPONENTS[list]);
                        values.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
                    }
                    _ => unreachable!(),
                }
            }
        }
        pad(&mut out);

        // Clip ranges: the grids of lists 2 and 3 with animated sub-tracks, then each
        // animated sub-track's minimums and extents.
        let ranges_offset = out.len();
        for list in 2..4 {
            if !in_list(list, true).is_empty() {
                self.grid_bytes(&mut out);
            }
        }
        let animated: Vec<(usize, &Part)> =
            (0..4).flat_map(|l| in_list(l, true).into_iter().map(move |p| (l, p))).collect();
        // Quads (segments.md, 4.0): four sub-tracks at a time within each list.
        let mut quads: Vec<(usize, usize)> = Vec::new();
        let mut first = 0;
        for list in 0..4 {
            let count = in_list(list, true).len();
            for start in (0..count).step_by(4) {
                quads.push((first + start, (count - start).min(4)));
            }
            first += count;
        }
        // By quad: each component's minimums of the lanes, then their extents.
        for &(first, lanes) in &quads {
            let quad = &animated[first..first + lanes];
            let c = COMPONENTS[quad[0].0];
            let integers = |part: &Part| {
                let Part::Animated { q_min, q_extent, .. } = part else { unreachable!() };
                assert_eq!((q_min.len(), q_extent.len()), (c, c));
                (q_min.clone(), q_extent.clone())
            };
            for m in 0..c {
                quad.iter().for_each(|(_, p)| out.extend_from_slice(&integers(p).0[m].to_le_bytes()));
            }
            for m in 0..c {
                quad.iter().for_each(|(_, p)| out.extend_from_slice(&integers(p).1[m].to_le_bytes()));
            }
        }
        pad(&mut out);

        // Segment table, then each segment's data.
        let segment_count = (self.samples / u32::from(self.segment_len)).max(1);
        let table = out.len();
        out.resize(out.len() + 12 * segment_count as usize, 0);
        pad(&mut out);
        let f = quads.len().div_ceil(64).saturating_sub(1);
        for s in 0..segment_count as usize {
            let start = s * usize::from(self.segment_len);
            let count = if s + 1 == segment_count as usize {
                self.samples as usize - start
            } else {
                usize::from(self.segment_len)
            };
            let segment = |part: &Part| -> Segment {
                let Part::Animated { segments, .. } = part else { unreachable!() };
                segments[s].clone()
            };
            let rate = |part: &Part| match segment(part) {
                Segment::Raw(_) => 32u32,
                Segment::Zero { .. } => 0,
            };
            let bits_of: Vec<usize> = animated.iter().map(|(l, p)| rate(p) as usize * COMPONENTS[*l]).collect();
            let frame_bits: usize = bits_of.iter().sum();
            let data = out.len();
            // The frame directory: the bit offset of every 64th quad.
            for j in 0..f {
                let offset: usize = bits_of[..quads[64 * (j + 1)].0].iter().sum();
                out.extend_from_slice(&(offset as u32).to_le_bytes());
            }
            animated.iter().for_each(|(_, p)| out.push(rate(p) as u8));
            if segment_count > 1 {
                // By quad: each component's `lo` bytes of the lanes, then their `hi`.
                for &(first, lanes) in &quads {
                    let quad = &animated[first..first + lanes];
                    let c = COMPONENTS[quad[0].0];
                    let bytes = |part: &Part, high: bool, m: usize| match segment(part) {
                        Segment::Zero { lo, hi } => (if high { hi } else { lo })[m],
                        Segment::Raw(_) => 0,
                    };
                    for high in [false, true] {
                        for m in 0..c {
                            quad.iter().for_each(|(_, p)| out.push(bytes(p, high, m)));
                        }
                    }
                }
            }
            // Samples: key frame after key frame; in each, quad after quad, component
            // after component, the lanes' values.
            let mut bits: Vec<bool> = Vec::new();
            for k in 0..count {
                for &(first, lanes) in &quads {
                    let quad = &animated[first..first + lanes];
                    for m in 0..COMPONENTS[quad[0].0] {
                        for (_, part) in quad {
                            if let Segment::Raw(frames) = segment(part) {
                                assert_eq!(frames.len(), count, "a raw segment gives every frame");
                                let v = frames[k][m].to_bits();
                                bits.extend((0..32).map(|i| v >> i & 1 == 1));
                            }
                        }
                    }
                }
            }
            let mut bytes = vec![0u8; bits.len().div_ceil(8)];
            for (i, bit) in bits.iter().enumerate() {
                bytes[i / 8] |= u8::from(*bit) << (i % 8);
            }
            out.extend_from_slice(&bytes);
            let entry = table + 12 * s;
            out[entry..entry + 4].copy_from_slice(&(data as u32).to_le_bytes());
            out[entry + 4..entry + 8].copy_from_slice(&(frame_bits as u32).to_le_bytes());
            out[entry + 8..entry + 12].copy_from_slice(&(((1u64 << count) - 1) as u32).to_le_bytes());
            if s + 1 == segment_count as usize {
                out.extend_from_slice(&[0u8; 8]);
            }
            pad(&mut out);
        }

        // Header (header.md).
        let total = out.len() as u32;
        out[0..4].copy_from_slice(b"OSSA");
        out[4..6].copy_from_slice(&4u16.to_le_bytes());
        out[6..8].copy_from_slice(&0u16.to_le_bytes());
        out[8..12].copy_from_slice(&total.to_le_bytes());
        out[20] = 0;
        out[22] = self.segment_len;
        out[23] = raw_constants;
        out[24..28].copy_from_slice(&(bones as u32).to_le_bytes());
        out[28..32].copy_from_slice(&self.samples.to_le_bytes());
        out[32..36].copy_from_slice(&self.sample_rate.to_le_bytes());
        out[36..40].copy_from_slice(&segment_count.to_le_bytes());
        for (at, offset) in [(40, tracks_offset), (44, constants_offset), (48, ranges_offset), (52, table)] {
            out[at..at + 4].copy_from_slice(&(offset as u32).to_le_bytes());
        }
        let sum = checksum(&out);
        out[12..16].copy_from_slice(&sum.to_le_bytes());
        out
    }

    /// The stored grid (of list 2 or 3: every one is [`Crafted::grid`]): three bases,
    /// then three steps.
    fn grid_bytes(&self, out: &mut Vec<u8>) {
        for v in self.grid[0].iter().chain(&self.grid[1]) {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// FNV-1a of the buffer with bytes 12 to 15 read as zero (header.md, Checksum).
pub fn checksum(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for (i, &b) in bytes.iter().enumerate() {
        let b = if (12..16).contains(&i) { 0 } else { b };
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h
}
