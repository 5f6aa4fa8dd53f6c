//! The portable backend: four `f32` in an array, one lane at a time. The native
//! backend of targets without SIMD (thumbv7em…), and the reference every SIMD
//! backend is tested against.

use glam::Quat;

use super::Lanes;

/// Four `f32` lanes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct F32x4([f32; 4]);

impl F32x4 {
    /// The little-endian `f32` of `b`, one per four bytes, in lanes `x, y, z, w`
    /// (lanes past them zero).
    #[inline(always)]
    fn from_le_floats(b: &[u8]) -> Self {
        let mut out = [0.0f32; 4];
        for (o, c) in out.iter_mut().zip(b.chunks_exact(4)) {
            let mut w = [0u8; 4];
            w.copy_from_slice(c);
            *o = f32::from_le_bytes(w);
        }
        F32x4(out)
    }

    #[inline(always)]
    fn map2(self, o: Self, f: impl Fn(f32, f32) -> f32) -> Self {
        let ([a0, a1, a2, a3], [b0, b1, b2, b3]) = (self.0, o.0);
        F32x4([f(a0, b0), f(a1, b1), f(a2, b2), f(a3, b3)])
    }
}

/// All ones for true, zero for false.
#[inline(always)]
fn mask(b: bool) -> f32 {
    f32::from_bits(if b { u32::MAX } else { 0 })
}

impl Lanes for F32x4 {
    type Pair = super::pair::Two<Self>;
    type Places = [u32; 4];
    #[inline(always)]
    fn places(word: u32) -> [u32; 4] {
        word.to_le_bytes().map(|p| u32::from(p) & 63)
    }
    #[inline(always)]
    fn fields(word: u64, places: [u32; 4], masks: Self) -> Self {
        let m = masks.0.map(f32::to_bits);
        let field = |i: usize| {
            let place = places.get(i).copied().unwrap_or(0) & 63;
            f32::from_bits((word >> place) as u32 & m.get(i).copied().unwrap_or(0))
        };
        F32x4([field(0), field(1), field(2), field(3)])
    }
    #[inline(always)]
    fn splat(v: f32) -> Self {
        F32x4([v; 4])
    }
    #[inline(always)]
    fn to_array(self) -> [f32; 4] {
        self.0
    }
    #[inline(always)]
    fn from_le_bytes(b: &[u8; 16]) -> Self {
        F32x4::from_le_floats(b)
    }
    #[inline(always)]
    fn from_le_bytes12(b: &[u8; 12]) -> Self {
        F32x4::from_le_floats(b)
    }
    #[inline(always)]
    fn from_u32(q: [u32; 4]) -> Self {
        F32x4(q.map(|v| v as f32))
    }
    #[inline(always)]
    fn from_bits(q: [u32; 4]) -> Self {
        F32x4(q.map(f32::from_bits))
    }
    #[inline(always)]
    fn integers_to_floats(self) -> Self {
        F32x4(self.0.map(|v| v.to_bits() as f32))
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self.map2(o, |a, b| a + b)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self.map2(o, |a, b| a - b)
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        self.map2(o, |a, b| a * b)
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        self.map2(o, |a, b| a / b)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        F32x4(self.0.map(libm::sqrtf))
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        self.map2(o, |a, b| f32::from_bits(a.to_bits() & b.to_bits()))
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        self.map2(o, |a, b| f32::from_bits(a.to_bits() ^ b.to_bits()))
    }
    #[inline(always)]
    fn gt(self, o: Self) -> Self {
        self.map2(o, |a, b| mask(a > b))
    }
    #[inline(always)]
    fn lt(self, o: Self) -> Self {
        self.map2(o, |a, b| mask(a < b))
    }
    #[inline(always)]
    fn select(mask: Self, a: Self, b: Self) -> Self {
        let pick = |m: f32, a: f32, b: f32| if m.to_bits() != 0 { a } else { b };
        let ([m0, m1, m2, m3], [a0, a1, a2, a3], [b0, b1, b2, b3]) = (mask.0, a.0, b.0);
        F32x4([pick(m0, a0, b0), pick(m1, a1, b1), pick(m2, a2, b2), pick(m3, a3, b3)])
    }
    #[inline(always)]
    fn from_bytes(word: u32) -> Self {
        F32x4(word.to_le_bytes().map(f32::from))
    }
    #[inline(always)]
    fn from_halves(word: u64) -> Self {
        let h = |i: u32| f32::from(word.checked_shr(i.wrapping_mul(16)).unwrap_or(0) as u16);
        F32x4([h(0), h(1), h(2), h(3)])
    }
    #[inline(always)]
    fn transpose(rows: [Self; 4]) -> [Self; 4] {
        let [a, b, c, d] = rows.map(|r| r.0);
        let column = |i: usize| {
            let get = |r: [f32; 4]| r.get(i).copied().unwrap_or(0.0);
            F32x4([get(a), get(b), get(c), get(d)])
        };
        [column(0), column(1), column(2), column(3)]
    }
    #[inline(always)]
    fn to_quat(self) -> Quat {
        Quat::from_array(self.0)
    }
}
