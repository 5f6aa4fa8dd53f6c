//! The x86_64 backend for CPUs with AVX2, chosen at run time: the SSE2 backend's code
//! compiled a second time with AVX2 (and BMI1, BMI2, POPCNT) enabled, so that the
//! compiler encodes it with VEX instructions (three operands, fewer moves) and uses
//! the bit instructions those extensions add, and a quad's lanes placed by AVX2's
//! per-lane shifts ([`F32x4::fields`]). The arithmetic is the same IEEE-754
//! operations in the same order (FMA stays off), so the bits are the SSE2 backend's.
//!
//! Which CPU runs is known only at run time: [`detect`] asks CPUID once (cached) and
//! gives a proof, [`Detected`], without which [`run`] cannot be called.

#![allow(unsafe_code)]

use core::arch::x86_64::*;

use glam::Quat;

use super::pair::{fields_apart, Pair};
use super::{sse2, Job, Lanes};

#[cfg(not(miri))]
cpufeatures::new!(cpuid_avx2, "avx2", "bmi1", "bmi2", "popcnt");

/// Proof that this CPU (and its operating system) runs AVX2, BMI1, BMI2 and POPCNT
/// code: only [`detect`] makes one, after asking CPUID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Detected(());

/// A [`Detected`] when this CPU runs AVX2, BMI1, BMI2 and POPCNT code.
#[inline]
pub(crate) fn detect() -> Option<Detected> {
    // Miri does not interpret CPUID: it runs the SSE2 backend.
    #[cfg(miri)]
    return None;
    #[cfg(not(miri))]
    cpuid_avx2::get().then_some(Detected(()))
}

/// Runs `job` with code compiled for AVX2, on a CPU `detected` to run it.
#[inline(always)]
pub(crate) fn run<J: Job>(detected: Detected, job: J) -> J::Output {
    let Detected(()) = detected;
    // SAFETY: a `Detected` exists only when `detect` confirmed, through CPUID and the
    // OS's saved state (XGETBV), that this CPU executes AVX2, BMI1, BMI2 and POPCNT
    // instructions.
    unsafe { run_avx2(job) }
}

/// `job` inlined into a function compiled for AVX2.
///
/// # Safety
/// The CPU supports AVX2, BMI1, BMI2 and POPCNT.
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
unsafe fn run_avx2<J: Job>(job: J) -> J::Output {
    job.run::<F32x4>()
}

/// [`Lanes::fields_at`] when a field lies in the last eight bytes of `samples` (or
/// past them, in a crafted buffer): a load per field, each checked. Out of line and
/// cold: a valid clip's samples end with slack that keeps its fields off this path.
#[cold]
#[inline(never)]
fn fields_near_end<const R: usize>(samples: &[u8], first: u64, starts: &[[u32; 4]; 4], masks: F32x4) -> [F32x4; 4] {
    <sse2::F32x4 as Lanes>::fields_at::<R>(samples, first, starts, masks.0).map(F32x4)
}

/// The SSE2 backend's vectors, with the operations AVX2 does better. Only
/// [`run_avx2`] decodes with them, so their AVX2 instructions only ever run on a CPU
/// [`detect`] confirmed.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub(crate) struct F32x4(sse2::F32x4);

impl Lanes for F32x4 {
    type Pair = F32x8;
    /// Each lane's place in a 64-bit lane of a 256-bit register, for
    /// `_mm256_srlv_epi64`.
    type Places = __m256i;
    #[inline(always)]
    fn places(word: u32) -> __m256i {
        // SAFETY: these vectors are used only inside `run_avx2`, which runs only on a
        // CPU `detect` confirmed to execute AVX2; register-only intrinsics (bytes
        // widened to 64-bit lanes, then kept below 64).
        unsafe { _mm256_and_si256(_mm256_cvtepu8_epi64(_mm_cvtsi32_si128(word as i32)), _mm256_set1_epi64x(63)) }
    }
    #[inline(always)]
    fn fields(word: u64, places: __m256i, masks: Self) -> Self {
        // SAFETY: as in `places` (AVX2, inside `run_avx2` only); register-only
        // intrinsics. `_mm256_srlv_epi64` shifts each 64-bit lane by its own count;
        // the permutation gathers the low 32 bits of each lane into the low half.
        F32x4(sse2::F32x4(unsafe {
            let shifted = _mm256_srlv_epi64(_mm256_set1_epi64x(word as i64), places);
            let low = _mm256_permutevar8x32_epi32(shifted, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
            _mm_and_ps(_mm_castsi128_ps(_mm256_castsi256_si128(low)), masks.0 .0)
        }))
    }
    #[inline(always)]
    fn fields_at<const R: usize>(samples: &[u8], first: u64, starts: &[[u32; 4]; 4], masks: Self) -> [Self; 4] {
        // SAFETY: as in `places` (AVX2, inside `run_avx2` only). Each gather reads the
        // eight bytes at `samples[byte..]` for each lane's `byte`, and the gathers run
        // only when every such `byte` is at most `samples.len() − 8` (checked before,
        // on the same vectors): every byte read is inside `samples`. A `byte` is a bit
        // offset (below 2^64) shifted right by 3, below 2^61: positive as the `i64`
        // the comparison takes.
        unsafe {
            let first_bits = _mm256_set1_epi64x(first as i64);
            let bits: [__m256i; 4] = core::array::from_fn(|r| {
                let row = starts.get(r).copied().unwrap_or([0; 4]);
                _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm_loadu_si128(row.as_ptr().cast())), first_bits)
            });
            let bytes = bits.map(|b| _mm256_srli_epi64(b, 3));
            let Some(last) = samples.len().checked_sub(8).and_then(|l| i64::try_from(l).ok()) else {
                return fields_near_end::<R>(samples, first, starts, masks);
            };
            let last = _mm256_set1_epi64x(last);
            let mut beyond = _mm256_setzero_si256();
            for b in bytes.iter().take(R) {
                beyond = _mm256_or_si256(beyond, _mm256_cmpgt_epi64(*b, last));
            }
            if _mm256_testz_si256(beyond, beyond) == 0 {
                return fields_near_end::<R>(samples, first, starts, masks);
            }
            let seven = _mm256_set1_epi64x(7);
            let low = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
            let row = |r: usize, b: __m256i, at: __m256i| {
                if r >= R {
                    return F32x4::splat(0.0);
                }
                let words = _mm256_i64gather_epi64::<1>(samples.as_ptr().cast(), at);
                let shifted = _mm256_srlv_epi64(words, _mm256_and_si256(b, seven));
                let fields = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(shifted, low));
                F32x4(sse2::F32x4(_mm_and_ps(_mm_castsi128_ps(fields), masks.0 .0)))
            };
            let ([b0, b1, b2, b3], [a0, a1, a2, a3]) = (bits, bytes);
            [row(0, b0, a0), row(1, b1, a1), row(2, b2, a2), row(3, b3, a3)]
        }
    }
    #[inline(always)]
    fn select(mask: Self, a: Self, b: Self) -> Self {
        // SAFETY: as in `places`; register-only intrinsic (SSE4.1, which AVX2 CPUs
        // have). It takes each lane's top bit: the same lanes as the bitwise select
        // for the masks `select` is given, all ones or zero in every lane.
        F32x4(sse2::F32x4(unsafe { _mm_blendv_ps(b.0 .0, a.0 .0, mask.0 .0) }))
    }
    #[inline(always)]
    fn rate_masks(rates: u32) -> Self {
        // SAFETY: as in `places`; register-only intrinsics. `_mm_srlv_epi32` gives 0
        // for a count of 32 or more: all ones shifted right by `32 − r` is `2^r − 1`
        // for every r from 0 to 32.
        F32x4(sse2::F32x4(unsafe {
            let r = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(rates as i32));
            let shift = _mm_sub_epi32(_mm_set1_epi32(32), r);
            _mm_castsi128_ps(_mm_srlv_epi32(_mm_set1_epi32(-1), shift))
        }))
    }
    #[inline(always)]
    fn splat(v: f32) -> Self {
        F32x4(sse2::F32x4::splat(v))
    }
    #[inline(always)]
    fn to_array(self) -> [f32; 4] {
        self.0.to_array()
    }
    #[inline(always)]
    fn from_le_bytes(b: &[u8; 16]) -> Self {
        F32x4(sse2::F32x4::from_le_bytes(b))
    }
    #[inline(always)]
    fn from_le_bytes12(b: &[u8; 12]) -> Self {
        F32x4(sse2::F32x4::from_le_bytes12(b))
    }
    #[inline(always)]
    fn from_u32(q: [u32; 4]) -> Self {
        F32x4(sse2::F32x4::from_u32(q))
    }
    #[inline(always)]
    fn from_bits(q: [u32; 4]) -> Self {
        F32x4(sse2::F32x4::from_bits(q))
    }
    #[inline(always)]
    fn integers_to_floats(self) -> Self {
        F32x4(self.0.integers_to_floats())
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        F32x4(self.0.add(o.0))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        F32x4(self.0.sub(o.0))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        F32x4(self.0.mul(o.0))
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        F32x4(self.0.div(o.0))
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        F32x4(self.0.sqrt())
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        F32x4(self.0.and(o.0))
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        F32x4(self.0.xor(o.0))
    }
    #[inline(always)]
    fn gt(self, o: Self) -> Self {
        F32x4(self.0.gt(o.0))
    }
    #[inline(always)]
    fn lt(self, o: Self) -> Self {
        F32x4(self.0.lt(o.0))
    }
    #[inline(always)]
    fn from_bytes(word: u32) -> Self {
        F32x4(sse2::F32x4::from_bytes(word))
    }
    #[inline(always)]
    fn from_halves(word: u64) -> Self {
        F32x4(sse2::F32x4::from_halves(word))
    }
    #[inline(always)]
    fn transpose(rows: [Self; 4]) -> [Self; 4] {
        sse2::F32x4::transpose(rows.map(|r| r.0)).map(F32x4)
    }
    #[inline(always)]
    fn deinterleave3(v: [Self; 3]) -> [Self; 3] {
        sse2::F32x4::deinterleave3(v.map(|r| r.0)).map(F32x4)
    }
    #[inline(always)]
    fn to_quat(self) -> Quat {
        self.0.to_quat()
    }
}

/// Two of the AVX2 backend's vectors in one 256-bit register (half 0 in the low 128
/// bits), for [`Pair`]: both keys' rows read by one gather and worked on by one
/// instruction per step.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub(crate) struct F32x8(__m256);

impl Pair for F32x8 {
    type Half = F32x4;
    #[inline(always)]
    fn new(a: F32x4, b: F32x4) -> Self {
        // SAFETY: as in `F32x4::places` (AVX2, inside `run_avx2` only); register-only.
        F32x8(unsafe { _mm256_set_m128(b.0 .0, a.0 .0) })
    }
    #[inline(always)]
    fn halves(self) -> (F32x4, F32x4) {
        let half = |v: __m128| F32x4(sse2::F32x4(v));
        // SAFETY: as in `new`.
        unsafe { (half(_mm256_castps256_ps128(self.0)), half(_mm256_extractf128_ps::<1>(self.0))) }
    }
    #[inline(always)]
    fn fields_at<const R: usize>(
        samples: [&[u8]; 2],
        first: [u64; 2],
        starts: [&[[u32; 4]; 4]; 2],
        masks: Self,
        narrow: bool,
    ) -> [Self; 4] {
        // One 32-bit gather per row reads both keys' fields when they lie in the same
        // bytes, each field fits in the 32 bits loaded at its byte (`narrow`: rates up
        // to 25, shifted by up to 7) and every bit offset fits in 31 bits (samples
        // shorter than 2^28 bytes: a valid clip's fields lie below `8 · len`).
        // Otherwise each key is read as [`Lanes::fields_at`] reads it.
        let [s0, s1] = samples;
        let same = core::ptr::eq(s0, s1);
        let short = s0.len() >= 4 && s0.len() < (1 << 28);
        let firsts = u32::try_from(first[0]).ok().zip(u32::try_from(first[1]).ok());
        let Some((f0, f1)) = firsts.filter(|_| same && short && narrow) else {
            return fields_apart::<F32x8, R>(samples, first, starts, masks);
        };
        // SAFETY: as in `new` (AVX2, inside `run_avx2` only). Each gather reads the
        // four bytes at `s0[byte..]` for each lane's `byte`, and the gathers run only
        // when every such `byte` is at most `s0.len() − 4` (checked before, on the
        // same vectors, as signed 32-bit numbers: the length is below 2^28 and each
        // `byte` is a 32-bit sum shifted right by 3, below 2^29). A sum that wrapped
        // (not in a valid clip) reads the wrong field, never outside `s0`.
        unsafe {
            let firsts = _mm256_set_m128i(_mm_set1_epi32(f1 as i32), _mm_set1_epi32(f0 as i32));
            let [a, b] = starts;
            let bits: [__m256i; 4] = core::array::from_fn(|r| {
                let (a, b) = (a.get(r).copied().unwrap_or([0; 4]), b.get(r).copied().unwrap_or([0; 4]));
                let both = _mm256_set_m128i(_mm_loadu_si128(b.as_ptr().cast()), _mm_loadu_si128(a.as_ptr().cast()));
                _mm256_add_epi32(both, firsts)
            });
            let bytes = bits.map(|b| _mm256_srli_epi32::<3>(b));
            let last = _mm256_set1_epi32(s0.len().wrapping_sub(4) as i32);
            let mut beyond = _mm256_setzero_si256();
            for b in bytes.iter().take(R) {
                beyond = _mm256_or_si256(beyond, _mm256_cmpgt_epi32(*b, last));
            }
            if _mm256_testz_si256(beyond, beyond) == 0 {
                return fields_apart::<F32x8, R>(samples, first, starts, masks);
            }
            let seven = _mm256_set1_epi32(7);
            let masks = _mm256_castps_si256(masks.0);
            let row = |r: usize, b: __m256i, at: __m256i| {
                if r >= R {
                    return F32x8(_mm256_setzero_ps());
                }
                let words = _mm256_i32gather_epi32::<1>(s0.as_ptr().cast(), at);
                let fields = _mm256_and_si256(_mm256_srlv_epi32(words, _mm256_and_si256(b, seven)), masks);
                F32x8(_mm256_castsi256_ps(fields))
            };
            let ([b0, b1, b2, b3], [a0, a1, a2, a3]) = (bits, bytes);
            [row(0, b0, a0), row(1, b1, a1), row(2, b2, a2), row(3, b3, a3)]
        }
    }
    #[inline(always)]
    fn integers_to_floats(self) -> Self {
        // SAFETY: as in `new`; register-only. Integers below 2²⁴ are positive as `i32`
        // and convert exactly.
        F32x8(unsafe { _mm256_cvtepi32_ps(_mm256_castps_si256(self.0)) })
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        // SAFETY: as in `new`; register-only.
        F32x8(unsafe { _mm256_add_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        // SAFETY: as in `new`; register-only.
        F32x8(unsafe { _mm256_sub_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        // SAFETY: as in `new`; register-only.
        F32x8(unsafe { _mm256_mul_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        // SAFETY: as in `new`; register-only (correctly rounded, as `sqrtps`).
        F32x8(unsafe { _mm256_sqrt_ps(self.0) })
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        // SAFETY: as in `new`; register-only.
        F32x8(unsafe { _mm256_and_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn gt(self, o: Self) -> Self {
        // SAFETY: as in `new`; register-only. Ordered and quiet: false where either
        // lane is NaN, as `cmpgtps`.
        F32x8(unsafe { _mm256_cmp_ps::<_CMP_GT_OQ>(self.0, o.0) })
    }
    #[inline(always)]
    fn select(mask: Self, a: Self, b: Self) -> Self {
        // SAFETY: as in `new`; register-only. Each lane's top bit chooses: the bitwise
        // select for masks all ones or zero in every lane, as `select` is given.
        F32x8(unsafe { _mm256_blendv_ps(b.0, a.0, mask.0) })
    }
}
