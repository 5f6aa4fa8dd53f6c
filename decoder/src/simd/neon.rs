//! The aarch64 backend: NEON intrinsics, available on every aarch64 CPU. Every
//! operation is the IEEE-754 one (`vdivq_f32`, `vsqrtq_f32` are correctly rounded),
//! never the estimate instructions (`vrecpeq`, `vrsqrteq`) and never fused.

#![allow(unsafe_code)]

use core::arch::aarch64::*;

use glam::{Quat, Vec4};

use super::Lanes;

/// Prefetches the cache line holding `address` into the level 1 data cache.
#[inline(always)]
pub(crate) fn prefetch<T>(address: *const T) {
    // SAFETY: `prfm` is a hint that never faults, whatever the address, and changes no
    // architectural state (no memory read or written, no flags, no stack).
    unsafe { core::arch::asm!("prfm pldl1keep, [{0}]", in(reg) address, options(nostack, readonly, preserves_flags)) };
}

/// Four `f32` lanes in a NEON register.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub(crate) struct F32x4(float32x4_t);

/// A lane mask as bits.
#[inline(always)]
fn bits(v: float32x4_t) -> uint32x4_t {
    // SAFETY: NEON is part of the aarch64 baseline; register-only intrinsic.
    unsafe { vreinterpretq_u32_f32(v) }
}

/// Bits as lanes.
#[inline(always)]
fn lanes(v: uint32x4_t) -> F32x4 {
    // SAFETY: NEON baseline; register-only intrinsic.
    F32x4(unsafe { vreinterpretq_f32_u32(v) })
}

impl Lanes for F32x4 {
    type Pair = super::pair::Two<Self>;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        // SAFETY: NEON baseline; register-only intrinsic.
        F32x4(unsafe { vdupq_n_f32(v) })
    }
    #[inline(always)]
    fn to_array(self) -> [f32; 4] {
        let mut out = [0.0f32; 4];
        // SAFETY: NEON baseline; `out` is 16 writable bytes.
        unsafe { vst1q_f32(out.as_mut_ptr(), self.0) };
        out
    }
    #[inline(always)]
    fn from_le_bytes(b: &[u8; 16]) -> Self {
        // SAFETY: NEON baseline; `b` is 16 readable bytes, loaded as bytes (no
        // alignment needed) and reinterpreted: aarch64 Linux and bare-metal targets
        // are little-endian.
        F32x4(unsafe { vreinterpretq_f32_u8(vld1q_u8(b.as_ptr())) })
    }
    #[inline(always)]
    fn from_le_bytes12(b: &[u8; 12]) -> Self {
        let [.., z0, z1, z2, z3] = *b;
        let z = f32::from_le_bytes([z0, z1, z2, z3]);
        // SAFETY: NEON baseline; `vld1_u8` reads the first 8 of the 12 readable bytes
        // (no alignment needed, little-endian target); the rest are register-only.
        F32x4(unsafe { vcombine_f32(vreinterpret_f32_u8(vld1_u8(b.as_ptr())), vset_lane_f32::<0>(z, vdup_n_f32(0.0))) })
    }
    #[inline(always)]
    fn from_u32(q: [u32; 4]) -> Self {
        // SAFETY: NEON baseline; `q` is 16 readable bytes. Integers below 2²⁴ convert exactly.
        F32x4(unsafe { vcvtq_f32_u32(vld1q_u32(q.as_ptr())) })
    }
    #[inline(always)]
    fn from_bits(q: [u32; 4]) -> Self {
        // SAFETY: NEON baseline; `q` is 16 readable bytes.
        lanes(unsafe { vld1q_u32(q.as_ptr()) })
    }
    /// Each lane's place as a negative shift count (`vshlq_u64` shifts right by
    /// negative counts), lanes 0 and 1, then 2 and 3.
    type Places = [int64x2_t; 2];
    #[inline(always)]
    fn places(word: u32) -> [int64x2_t; 2] {
        let [p0, p1, p2, p3] = word.to_le_bytes().map(|p| i64::from(p & 63).wrapping_neg());
        // SAFETY: NEON baseline; register-only intrinsics.
        unsafe {
            [
                vcombine_s64(vcreate_s64(p0 as u64), vcreate_s64(p1 as u64)),
                vcombine_s64(vcreate_s64(p2 as u64), vcreate_s64(p3 as u64)),
            ]
        }
    }
    #[inline(always)]
    fn fields(word: u64, places: [int64x2_t; 2], masks: Self) -> Self {
        let [p01, p23] = places;
        // SAFETY: NEON baseline; register-only intrinsics. `vshlq_u64` shifts each
        // 64-bit lane by a signed count, negative counts shifting right;
        // `vuzp1q_u32` keeps the low 32 bits of each lane.
        lanes(unsafe {
            let w = vdupq_n_u64(word);
            let fields = vuzp1q_u32(vreinterpretq_u32_u64(vshlq_u64(w, p01)), vreinterpretq_u32_u64(vshlq_u64(w, p23)));
            vandq_u32(fields, bits(masks.0))
        })
    }
    #[inline(always)]
    fn rate_masks(rates: u32) -> Self {
        // SAFETY: NEON baseline; register-only intrinsics: bytes widened to 32 bits;
        // all ones shifted by `r − 32` (a right shift by `32 − r`; 0 for 32 or more,
        // which `vshlq_u32` gives for r = 0) is `2^r − 1` for r from 0 to 32.
        lanes(unsafe {
            let b = vcreate_u8(u64::from(rates));
            let r = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(b))));
            vshlq_u32(vdupq_n_u32(u32::MAX), vsubq_s32(r, vdupq_n_s32(32)))
        })
    }
    #[inline(always)]
    fn integers_to_floats(self) -> Self {
        // SAFETY: NEON baseline; register-only intrinsic (integers below 2²⁴ convert
        // exactly).
        F32x4(unsafe { vcvtq_f32_u32(bits(self.0)) })
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        // SAFETY: NEON baseline; register-only intrinsic.
        F32x4(unsafe { vaddq_f32(self.0, o.0) })
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        // SAFETY: NEON baseline; register-only intrinsic.
        F32x4(unsafe { vsubq_f32(self.0, o.0) })
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        // SAFETY: NEON baseline; register-only intrinsic (not fused).
        F32x4(unsafe { vmulq_f32(self.0, o.0) })
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        // SAFETY: NEON baseline; register-only intrinsic (correctly rounded division).
        F32x4(unsafe { vdivq_f32(self.0, o.0) })
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        // SAFETY: NEON baseline; register-only intrinsic (correctly rounded root).
        F32x4(unsafe { vsqrtq_f32(self.0) })
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        // SAFETY: NEON baseline; register-only intrinsic.
        lanes(unsafe { vandq_u32(bits(self.0), bits(o.0)) })
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        // SAFETY: NEON baseline; register-only intrinsic.
        lanes(unsafe { veorq_u32(bits(self.0), bits(o.0)) })
    }
    #[inline(always)]
    fn gt(self, o: Self) -> Self {
        // SAFETY: NEON baseline; register-only intrinsic (false for NaN).
        lanes(unsafe { vcgtq_f32(self.0, o.0) })
    }
    #[inline(always)]
    fn lt(self, o: Self) -> Self {
        // SAFETY: NEON baseline; register-only intrinsic (false for NaN).
        lanes(unsafe { vcltq_f32(self.0, o.0) })
    }
    #[inline(always)]
    fn select(mask: Self, a: Self, b: Self) -> Self {
        // SAFETY: NEON baseline; register-only intrinsic (bitwise select).
        F32x4(unsafe { vbslq_f32(bits(mask.0), a.0, b.0) })
    }
    #[inline(always)]
    fn from_bytes(word: u32) -> Self {
        // SAFETY: NEON baseline; register-only intrinsics: bytes widened to 16, then
        // 32 bits, then converted (exact: 0 to 255).
        F32x4(unsafe {
            let b = vcreate_u8(u64::from(word));
            vcvtq_f32_u32(vmovl_u16(vget_low_u16(vmovl_u8(b))))
        })
    }
    #[inline(always)]
    fn from_halves(word: u64) -> Self {
        // SAFETY: NEON baseline; register-only intrinsics: halves widened to 32 bits,
        // then converted (exact: 0 to 65535).
        F32x4(unsafe { vcvtq_f32_u32(vmovl_u16(vcreate_u16(word))) })
    }
    #[inline(always)]
    fn transpose(rows: [Self; 4]) -> [Self; 4] {
        let [a, b, c, d] = rows.map(|r| r.0);
        // SAFETY: NEON baseline; register-only intrinsics (two rounds of zips).
        unsafe {
            let t0 = vzip1q_f32(a, c); // a0 c0 a1 c1
            let t1 = vzip2q_f32(a, c); // a2 c2 a3 c3
            let t2 = vzip1q_f32(b, d); // b0 d0 b1 d1
            let t3 = vzip2q_f32(b, d); // b2 d2 b3 d3
            [F32x4(vzip1q_f32(t0, t2)), F32x4(vzip2q_f32(t0, t2)), F32x4(vzip1q_f32(t1, t3)), F32x4(vzip2q_f32(t1, t3))]
        }
    }
    #[inline(always)]
    fn to_quat(self) -> Quat {
        Quat::from_vec4(Vec4::from(self.0))
    }
}
