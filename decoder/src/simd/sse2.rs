//! The x86_64 backend: SSE2 intrinsics, available on every x86_64 CPU. Compiled for
//! AVX2 (at run time by `avx2.rs`, or for a whole build with `-C
//! target-cpu=x86-64-v3`) the same intrinsics are encoded as VEX instructions; FMA is
//! never used, because a fused multiply-add rounds once where the other backends round
//! twice.

#![allow(unsafe_code)]

use core::arch::x86_64::*;

use glam::{Quat, Vec4};

use super::Lanes;

/// Prefetches the cache line holding `address` into every cache level.
#[inline(always)]
pub(crate) fn prefetch<T>(address: *const T) {
    // SAFETY: SSE (x86_64 baseline). A prefetch is a hint: it never faults, whatever
    // the address, and reads nothing architecturally.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>()) }
}

/// Four `f32` lanes in an SSE register.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub(crate) struct F32x4(pub(crate) __m128);

impl Lanes for F32x4 {
    type Pair = super::pair::Two<Self>;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        // SAFETY: SSE2 is part of the x86_64 baseline; register-only intrinsic.
        F32x4(unsafe { _mm_set1_ps(v) })
    }
    #[inline(always)]
    fn to_array(self) -> [f32; 4] {
        let mut out = [0.0f32; 4];
        // SAFETY: SSE2 baseline; `out` is 16 writable bytes (an unaligned store).
        unsafe { _mm_storeu_ps(out.as_mut_ptr(), self.0) };
        out
    }
    #[inline(always)]
    fn from_le_bytes(b: &[u8; 16]) -> Self {
        // SAFETY: SSE2 baseline; `b` is 16 readable bytes, loaded unaligned. x86 is
        // little-endian, so the lanes are the little-endian floats.
        F32x4(unsafe { _mm_loadu_ps(b.as_ptr().cast::<f32>()) })
    }
    #[inline(always)]
    fn from_le_bytes12(b: &[u8; 12]) -> Self {
        let [.., z0, z1, z2, z3] = *b;
        let z = i32::from_le_bytes([z0, z1, z2, z3]);
        // SAFETY: SSE2 baseline; `_mm_loadl_epi64` reads the first 8 of the 12
        // readable bytes (unaligned); the rest are register-only intrinsics.
        F32x4(unsafe {
            _mm_castsi128_ps(_mm_unpacklo_epi64(_mm_loadl_epi64(b.as_ptr().cast::<__m128i>()), _mm_cvtsi32_si128(z)))
        })
    }
    #[inline(always)]
    fn from_u32(q: [u32; 4]) -> Self {
        // SAFETY: SSE2 baseline; `q` is 16 readable bytes. The integers are below 2²⁴,
        // so reading them as i32 and converting is exact.
        F32x4(unsafe { _mm_cvtepi32_ps(_mm_loadu_si128(q.as_ptr().cast::<__m128i>())) })
    }
    #[inline(always)]
    fn from_bits(q: [u32; 4]) -> Self {
        // SAFETY: SSE2 baseline; `q` is 16 readable bytes.
        F32x4(unsafe { _mm_castsi128_ps(_mm_loadu_si128(q.as_ptr().cast::<__m128i>())) })
    }
    /// Each lane's place as a shift count (`_mm_srl_epi64` takes its count from a
    /// register's low 64 bits).
    type Places = [__m128i; 4];
    #[inline(always)]
    fn places(word: u32) -> [__m128i; 4] {
        // SAFETY: SSE2 baseline; register-only intrinsic.
        word.to_le_bytes().map(|p| unsafe { _mm_cvtsi32_si128(i32::from(p & 63)) })
    }
    #[inline(always)]
    fn fields(word: u64, places: [__m128i; 4], masks: Self) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsics. `_mm_srl_epi64` shifts the
        // 64-bit lanes by the count in the low 64 bits of its second operand (below
        // 64); only lane 0 (`word`) is used.
        unsafe {
            let w = _mm_cvtsi64_si128(word as i64);
            let [p0, p1, p2, p3] = places.map(|p| _mm_srl_epi64(w, p));
            // Low 32 bits of each shifted word, in lane order.
            let fields = _mm_unpacklo_epi64(_mm_unpacklo_epi32(p0, p1), _mm_unpacklo_epi32(p2, p3));
            F32x4(_mm_castsi128_ps(_mm_and_si128(fields, _mm_castps_si128(masks.0))))
        }
    }
    #[inline(always)]
    fn integers_to_floats(self) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsics. Integers below 2²⁴ are
        // positive as `i32` and convert exactly.
        F32x4(unsafe { _mm_cvtepi32_ps(_mm_castps_si128(self.0)) })
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsic.
        F32x4(unsafe { _mm_add_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsic.
        F32x4(unsafe { _mm_sub_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsic.
        F32x4(unsafe { _mm_mul_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsic (correctly rounded division).
        F32x4(unsafe { _mm_div_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsic (correctly rounded root).
        F32x4(unsafe { _mm_sqrt_ps(self.0) })
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsic.
        F32x4(unsafe { _mm_and_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsic.
        F32x4(unsafe { _mm_xor_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn gt(self, o: Self) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsic (ordered: false for NaN).
        F32x4(unsafe { _mm_cmpgt_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn lt(self, o: Self) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsic (ordered: false for NaN).
        F32x4(unsafe { _mm_cmplt_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn select(mask: Self, a: Self, b: Self) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsics: (a & m) | (b & !m).
        F32x4(unsafe { _mm_or_ps(_mm_and_ps(mask.0, a.0), _mm_andnot_ps(mask.0, b.0)) })
    }
    #[inline(always)]
    fn from_bytes(word: u32) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsics: bytes widened to 16, then
        // 32 bits with zeros, then converted (exact: 0 to 255).
        unsafe {
            let zero = _mm_setzero_si128();
            let b = _mm_cvtsi32_si128(word as i32);
            F32x4(_mm_cvtepi32_ps(_mm_unpacklo_epi16(_mm_unpacklo_epi8(b, zero), zero)))
        }
    }
    #[inline(always)]
    fn from_halves(word: u64) -> Self {
        // SAFETY: SSE2 baseline; register-only intrinsics: halves widened to 32 bits
        // with zeros, then converted (exact: 0 to 65535).
        unsafe {
            let h = _mm_cvtsi64_si128(word as i64);
            F32x4(_mm_cvtepi32_ps(_mm_unpacklo_epi16(h, _mm_setzero_si128())))
        }
    }
    #[inline(always)]
    fn transpose(rows: [Self; 4]) -> [Self; 4] {
        let [a, b, c, d] = rows.map(|r| r.0);
        // SAFETY: SSE2 baseline; register-only intrinsics (the classic 4×4 transpose).
        unsafe {
            let t0 = _mm_unpacklo_ps(a, b); // a0 b0 a1 b1
            let t1 = _mm_unpacklo_ps(c, d); // c0 d0 c1 d1
            let t2 = _mm_unpackhi_ps(a, b); // a2 b2 a3 b3
            let t3 = _mm_unpackhi_ps(c, d); // c2 d2 c3 d3
            [
                F32x4(_mm_movelh_ps(t0, t1)),
                F32x4(_mm_movehl_ps(t1, t0)),
                F32x4(_mm_movelh_ps(t2, t3)),
                F32x4(_mm_movehl_ps(t3, t2)),
            ]
        }
    }
    #[inline(always)]
    fn deinterleave3(v: [Self; 3]) -> [Self; 3] {
        let [a, b, c] = v.map(|v| v.0);
        // SAFETY: SSE2 baseline; register-only shuffles (lane selectors in the
        // comments, `a0` = lane 0 of `a`).
        unsafe {
            let bc = _mm_shuffle_ps::<0b00_01_00_10>(b, c); // b2 b0 c1 c0
            let x = _mm_shuffle_ps::<0b10_00_11_00>(a, bc); // a0 a3 b2 c1
            let ab = _mm_shuffle_ps::<0b00_00_00_01>(a, b); // a1 a0 b0 b0
            let bc = _mm_shuffle_ps::<0b00_10_00_11>(b, c); // b3 b0 c2 c0
            let y = _mm_shuffle_ps::<0b10_00_10_00>(ab, bc); // a1 b0 b3 c2
            let ab = _mm_shuffle_ps::<0b00_01_00_10>(a, b); // a2 a0 b1 b0
            let z = _mm_shuffle_ps::<0b11_00_10_00>(ab, c); // a2 b1 c0 c3
            [F32x4(x), F32x4(y), F32x4(z)]
        }
    }
    #[inline(always)]
    fn to_quat(self) -> Quat {
        Quat::from_vec4(Vec4::from(self.0))
    }
}
