//! The decoding arithmetic of `format-spec/decoding.md`, written once over the
//! [`Lanes`] API so that every backend runs the same operations in the same order.
//!
//! A sub-track value travels in one four-lane vector: `x, y, z` (and `w` for
//! rotations), unused lanes zero. Rotations are finished four at a time, transposed
//! to one vector per component ("structure of arrays"), so rebuilding `w`, the
//! shorter-arc test, interpolation and normalisation are plain lane-wise operations
//! in the order the spec writes them.

use crate::bytes::read_bits;
use crate::format::RAW_BITS;
use crate::simd::Lanes;

/// Where one key frame of one animated sub-track is.
#[derive(Clone, Copy)]
pub(crate) struct KeyRef {
    /// Its bit rate in the key's segment.
    pub bits: u8,
    /// Bit offset (from the buffer start) of its first component.
    pub bit: u64,
    /// Offset of its `lo` segment-range bytes (`hi` follow after `components`), or
    /// `None` for a single-segment clip.
    pub segment_range: Option<usize>,
}

/// The `components` little-endian `f32` at `at` (zero lanes past them). A 16-byte
/// load when the buffer has the bytes, else one float at a time.
#[inline(always)]
pub(crate) fn load<V: Lanes>(bytes: &[u8], at: usize, components: u32) -> V {
    match bytes.get(at..).and_then(|b| b.first_chunk::<16>()) {
        Some(chunk) => {
            let v = V::from_le_bytes(chunk);
            if components == 4 {
                v
            } else {
                v.xyz0()
            }
        }
        None => {
            let mut out = [0.0f32; 4];
            for (c, o) in out.iter_mut().enumerate().take(components as usize) {
                *o = crate::bytes::f32_at(bytes, at.wrapping_add(c << 2)).unwrap_or(0.0);
            }
            V::from_array(out)
        }
    }
}

/// The segment-range bytes of a sub-track: `components` bytes `lo`, then as many
/// `hi`, as two little-endian words (bytes past `components` zero).
#[inline(always)]
fn range_bytes(bytes: &[u8], at: usize, components: u32) -> (u32, u32) {
    let word = match bytes.get(at..).and_then(|b| b.first_chunk::<8>()) {
        Some(b) => u64::from_le_bytes(*b),
        None => {
            let mut b = [0u8; 8];
            for (d, s) in b.iter_mut().zip(bytes.get(at..).unwrap_or(&[])) {
                *d = *s;
            }
            u64::from_le_bytes(b)
        }
    };
    if components == 4 {
        (word as u32, (word >> 32) as u32)
    } else {
        ((word & 0x00ff_ffff) as u32, ((word >> 24) & 0x00ff_ffff) as u32)
    }
}

/// The stored components of an animated sub-track at one key frame, with its clip
/// range `min`, `extent` applied.
#[inline(always)]
pub(crate) fn key_value<V: Lanes>(bytes: &[u8], key: &KeyRef, components: u32, min: V, extent: V) -> V {
    let bits = key.bits;
    if bits == RAW_BITS {
        let mut q = [0u32; 4];
        let mut bit = key.bit;
        for v in q.iter_mut().take(components as usize) {
            *v = read_bits(bytes, bit, 32);
            bit = bit.wrapping_add(32);
        }
        return V::from_bits(q);
    }
    let normalized = if bits == 0 {
        match key.segment_range {
            // The segment's constant: the u16 `lo | hi << 8` of each component, over 65535.
            Some(at) => {
                let (lo, hi) = range_bytes(bytes, at, components);
                V::from_bytes(lo).add(V::from_bytes(hi).mul(V::splat(256.0))).div(V::splat(65535.0))
            }
            None => V::splat(0.0),
        }
    } else {
        let mut q = [0u32; 4];
        let mut bit = key.bit;
        for v in q.iter_mut().take(components as usize) {
            *v = read_bits(bytes, bit, bits);
            bit = bit.wrapping_add(u64::from(bits));
        }
        // 1 ≤ bits ≤ 24: the divisor and the integers are exact in f32.
        let max = ((1u32 << (bits & 31)).wrapping_sub(1)) as f32;
        let n = V::from_u32(q).div(V::splat(max));
        match key.segment_range {
            Some(at) => {
                let (lo, hi) = range_bytes(bytes, at, components);
                let scale = V::splat(255.0);
                n.mul(V::from_bytes(hi).div(scale)).add(V::from_bytes(lo).div(scale))
            }
            None => n,
        }
    };
    normalized.mul(extent).add(min)
}

/// Up to four rotations being finished together.
pub(crate) struct Rotations<V: Lanes> {
    /// Key 0 and key 1 of each, `x, y, z, w` (w zero when it is to be rebuilt).
    keys: [[V; 4]; 2],
    /// The bone each belongs to.
    pub bones: [usize; 4],
    /// How many of the four are in use.
    pub len: usize,
}

impl<V: Lanes> Rotations<V> {
    pub(crate) fn new() -> Self {
        Rotations { keys: [[V::splat(0.0); 4]; 2], bones: [0; 4], len: 0 }
    }

    /// Adds a rotation; true when the batch is full.
    #[inline(always)]
    pub(crate) fn push(&mut self, bone: usize, q0: V, q1: V) -> bool {
        let [k0, k1] = &mut self.keys;
        if let (Some(a), Some(b), Some(slot)) =
            (k0.get_mut(self.len), k1.get_mut(self.len), self.bones.get_mut(self.len))
        {
            *a = q0;
            *b = q1;
            *slot = bone;
            self.len = self.len.wrapping_add(1);
        }
        self.len >= 4
    }

    /// The finished rotations (in the order pushed; lanes past `len` are meaningless):
    /// `w` rebuilt when `rebuild`, key 1 negated when the dot product is negative,
    /// interpolated by `alpha` (key 0 alone when it is 0), normalised.
    #[inline(always)]
    pub(crate) fn finish(&mut self, rebuild: bool, alpha: f32) -> [V; 4] {
        self.len = 0;
        let [k0, k1] = self.keys;
        let [x0, y0, z0, w0] = V::transpose(k0);
        let w0 = if rebuild { rebuild_w(x0, y0, z0) } else { w0 };
        let (x, y, z, w) = if alpha == 0.0 {
            (x0, y0, z0, w0)
        } else {
            let [x1, y1, z1, w1] = V::transpose(k1);
            let w1 = if rebuild { rebuild_w(x1, y1, z1) } else { w1 };
            // Shorter arc: key 1's sign bits flipped where the dot product is negative.
            let dot = x0.mul(x1).add(y0.mul(y1)).add(z0.mul(z1)).add(w0.mul(w1));
            let flip = dot.lt(V::splat(0.0)).and(V::splat(-0.0));
            let a = V::splat(alpha);
            let lerp = |v0: V, v1: V| v0.add(v1.xor(flip).sub(v0).mul(a));
            (lerp(x0, x1), lerp(y0, y1), lerp(z0, z1), lerp(w0, w1))
        };
        // Normalise: multiply by 1 / sqrt(d) where d is positive and finite, else the
        // identity.
        let d = x.mul(x).add(y.mul(y)).add(z.mul(z)).add(w.mul(w));
        let ok = d.gt(V::splat(0.0)).and(d.lt(V::splat(f32::INFINITY)));
        let inv = V::splat(1.0).div(d.sqrt());
        let zero = V::splat(0.0);
        V::transpose([
            V::select(ok, x.mul(inv), zero),
            V::select(ok, y.mul(inv), zero),
            V::select(ok, z.mul(inv), zero),
            V::select(ok, w.mul(inv), V::splat(1.0)),
        ])
    }
}

/// `w = sqrt(1 − ((x·x + y·y) + z·z))` where that argument is positive, else 0.
#[inline(always)]
fn rebuild_w<V: Lanes>(x: V, y: V, z: V) -> V {
    let t = V::splat(1.0).sub(x.mul(x).add(y.mul(y)).add(z.mul(z)));
    t.sqrt().and(t.gt(V::splat(0.0)))
}

/// `v0 + (v1 − v0) · α`, lane by lane.
#[inline(always)]
pub(crate) fn lerp<V: Lanes>(v0: V, v1: V, alpha: f32) -> V {
    v0.add(v1.sub(v0).mul(V::splat(alpha)))
}
