//! Four-lane `f32` vectors, one backend per target, chosen here and nowhere else.
//!
//! | target | backend |
//! |---|---|
//! | x86_64 (SSE2 is part of the base ISA) | [`sse2`]; on a CPU with AVX2, chosen at run time ([`Backend::detect`]), the same code compiled for AVX2 (`avx2`) |
//! | aarch64 (NEON is part of the base ISA) | `neon` |
//! | everything else (thumbv7em, riscv, wasm…) | [`scalar`] |
//!
//! A sampler picks its [`Backend`] once, when it is made, and every decode runs as a
//! [`Job`] on it ([`run`]): the code is written once, generic over [`Lanes`], and
//! compiled once per backend.
//!
//! Every backend implements [`Lanes`] with the same IEEE-754 operations lane by lane:
//! add, subtract, multiply, divide, square root, never fused, never approximated
//! (`rcpps`/`rsqrtps` differ between targets), and horizontal sums in one fixed order.
//! So the decoded bits are identical whichever backend runs. The decoding arithmetic
//! is written once, generic over [`Lanes`], in `unpack` and `pose`; the scalar backend
//! is compiled on every target so tests can run it beside the native one. `unsafe` is
//! allowed in the backend modules only, for the intrinsics.
//!
//! [`pair`] puts two vectors side by side (key 0's and key 1's rows of a subset): one
//! 256-bit register on AVX2, two vectors on the other backends, the same operations
//! lane by lane either way.

use glam::{Quat, Vec3};

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "aarch64")]
pub(crate) mod neon;
pub(crate) mod pair;
pub(crate) mod scalar;
#[cfg(target_arch = "x86_64")]
pub(crate) mod sse2;

/// The backend this build decodes with.
#[cfg(target_arch = "x86_64")]
pub(crate) type Native = sse2::F32x4;
/// The backend this build decodes with.
#[cfg(target_arch = "aarch64")]
pub(crate) type Native = neon::F32x4;
/// The backend this build decodes with.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) type Native = scalar::F32x4;

/// A backend a sampler decodes with: the same bits on every one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// The portable scalar backend, the reference the others are tested against.
    Portable,
    /// The target's base SIMD: SSE2 on x86_64, NEON on aarch64 (the portable backend
    /// elsewhere).
    Base,
    /// x86_64 with AVX2, BMI1, BMI2 and POPCNT: the SSE2 code compiled for them.
    #[cfg(target_arch = "x86_64")]
    Avx2(avx2::Detected),
}

impl Backend {
    /// The fastest backend this CPU runs (CPUID is asked once per process).
    #[inline]
    pub(crate) fn detect() -> Backend {
        #[cfg(target_arch = "x86_64")]
        if let Some(detected) = avx2::detect() {
            return Backend::Avx2(detected);
        }
        Backend::Base
    }

    /// The backend called `name` (`"scalar"`, the base's name, or `"avx2"`), when this
    /// CPU runs it.
    pub(crate) fn named(name: &str) -> Option<Backend> {
        [Backend::Portable, Backend::Base, Backend::detect()].into_iter().find(|b| b.name() == name)
    }

    /// `"scalar"`, `"sse2"`, `"avx2"` or `"neon"`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Backend::Portable => "scalar",
            Backend::Base if cfg!(target_arch = "x86_64") => "sse2",
            Backend::Base if cfg!(target_arch = "aarch64") => "neon",
            Backend::Base => "scalar",
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2(_) => "avx2",
        }
    }
}

/// A decode, generic over the backend's vectors: [`run`] calls it with the vectors of
/// the backend chosen.
pub(crate) trait Job {
    /// What the decode returns.
    type Output;
    /// The decode on the vectors `V`.
    fn run<V: Lanes>(self) -> Self::Output;
}

/// Runs `job` on `backend`.
#[inline(always)]
pub(crate) fn run<J: Job>(backend: Backend, job: J) -> J::Output {
    match backend {
        Backend::Portable => portable(job),
        Backend::Base => base(job),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2(detected) => avx2::run(detected, job),
    }
}

/// `job` on the portable backend, in a function of its own. Each backend's code is
/// its own function, so that a caller's stack frame holds none of them (only the one
/// that runs is on the stack: in a debug build, where nothing shares stack slots, a
/// whole pose's frame is hundreds of kilobytes).
#[inline(never)]
fn portable<J: Job>(job: J) -> J::Output {
    job.run::<scalar::F32x4>()
}

/// `job` on the target's base SIMD backend, in a function of its own (see
/// [`portable`]).
#[inline(never)]
fn base<J: Job>(job: J) -> J::Output {
    job.run::<Native>()
}

/// Asks the memory system to bring the cache line holding `values[at]` closer (a
/// hint: nothing happens on a target without prefetch). The address is not checked:
/// a prefetch never faults and reads nothing, so one past the end costs nothing but
/// the hint, and a check per hint would cost more than the hints save.
#[inline(always)]
pub(crate) fn prefetch<T>(values: &[T], at: usize) {
    // Computed, never dereferenced: `wrapping_add` makes any `at` a valid pointer
    // value.
    let address = values.as_ptr().wrapping_add(at);
    #[cfg(target_arch = "x86_64")]
    sse2::prefetch(address);
    #[cfg(target_arch = "aarch64")]
    neon::prefetch(address);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = address;
}

/// Four `f32` lanes `x, y, z, w`, and the operations the decoder needs on them.
/// Every operation is exact IEEE-754 single precision, lane by lane, in the order
/// written: the contract that makes every backend produce the same bits.
pub(crate) trait Lanes: Copy {
    /// Two of these vectors side by side ([`pair`]): one register on AVX2.
    type Pair: pair::Pair<Half = Self>;
    /// Every lane `v`.
    fn splat(v: f32) -> Self;
    /// The lanes as an array.
    fn to_array(self) -> [f32; 4];
    /// Four little-endian `f32`.
    fn from_le_bytes(b: &[u8; 16]) -> Self;
    /// Three little-endian `f32` as lanes `x, y, z`; `w` zero.
    fn from_le_bytes12(b: &[u8; 12]) -> Self;
    /// Integers below 2²⁴ converted to `f32` (exactly).
    fn from_u32(q: [u32; 4]) -> Self;
    /// Bit patterns read as `f32`.
    fn from_bits(q: [u32; 4]) -> Self;
    /// Where each lane's field starts in a 64-bit word, in the form
    /// [`Lanes::fields`] takes: prepared once per quad and segment
    /// ([`Lanes::places`]), then used for every component of both key frames.
    type Places: Copy;
    /// The places of the four lanes, byte `i` of `word` for lane `i` (each below 64).
    fn places(word: u32) -> Self::Places;
    /// Four fields of `word`, as bit patterns: lane `i` is `word` shifted right by
    /// its place (see [`Lanes::places`]), its low 32 bits ANDed with lane `i` of
    /// `masks` (as bits). A quad's lanes of one component, each at its own place and
    /// rate (format-spec/segments.md, Quads).
    fn fields(word: u64, places: Self::Places, masks: Self) -> Self;
    /// Fields of `samples`, each from its own place, as bit patterns, for the first `R`
    /// rows of `starts`: lane `i` of row `r` is the 64 bits from bit
    /// `first + starts[r][i]` (least significant first, zero past the end of
    /// `samples`), their low 32 bits ANDed with lane `i` of `masks`; rows from `R` on
    /// are zero. Sub-tracks of different quads read side by side
    /// ([`crate::Subset`]): one load per field.
    #[inline(always)]
    fn fields_at<const R: usize>(samples: &[u8], first: u64, starts: &[[u32; 4]; 4], masks: Self) -> [Self; 4] {
        let masks = masks.to_array().map(f32::to_bits);
        let row = |r: usize| {
            let starts = starts.get(r).copied().unwrap_or([0; 4]);
            let field = |i: usize| {
                let start = starts.get(i).copied().map_or(0, u64::from);
                crate::format::bytes::bits_from(samples, first.wrapping_add(start)) as u32
                    & masks.get(i).copied().unwrap_or(0)
            };
            // Written out (an `array::from_fn` closure may be left out of line).
            Self::from_bits(if r < R { [field(0), field(1), field(2), field(3)] } else { [0; 4] })
        };
        [row(0), row(1), row(2), row(3)]
    }
    /// Lane `i`: `2^r − 1` as bits, where `r` is byte `i` of `rates` (0 for rate 0,
    /// every bit for 32 or more): the field mask of each lane of a quad.
    #[inline(always)]
    fn rate_masks(rates: u32) -> Self {
        Self::from_bits(rates.to_le_bytes().map(|r| crate::format::field_mask(u32::from(r))))
    }
    /// The lanes' bit patterns read as integers below 2²⁴ and converted to `f32`
    /// (exactly).
    fn integers_to_floats(self) -> Self;
    /// Lane-wise `self + o`.
    fn add(self, o: Self) -> Self;
    /// Lane-wise `self - o`.
    fn sub(self, o: Self) -> Self;
    /// Lane-wise `self * o`.
    fn mul(self, o: Self) -> Self;
    /// Lane-wise `self / o`.
    fn div(self, o: Self) -> Self;
    /// Lane-wise square root.
    fn sqrt(self) -> Self;
    /// Lane-wise bitwise AND.
    fn and(self, o: Self) -> Self;
    /// Lane-wise bitwise XOR.
    fn xor(self, o: Self) -> Self;
    /// Lane-wise `self > o`: all ones where true, zero where false (or NaN).
    fn gt(self, o: Self) -> Self;
    /// Lane-wise `self < o`: all ones where true, zero where false (or NaN).
    fn lt(self, o: Self) -> Self;
    /// Lanes of `a` where `mask` is all ones, of `b` where it is zero.
    fn select(mask: Self, a: Self, b: Self) -> Self;
    /// The four bytes of `word` (little-endian), one per lane, as `f32` 0 to 255.
    fn from_bytes(word: u32) -> Self;
    /// The four 16-bit halves of `word` (little-endian), one per lane, as `f32` 0 to
    /// 65535 (quantised constants and clip ranges).
    fn from_halves(word: u64) -> Self;
    /// Rows become columns: four `x, y, z, w` vectors become the vector of their
    /// `x`, of their `y`, … (and back).
    fn transpose(rows: [Self; 4]) -> [Self; 4];
    /// Twelve consecutive `f32` as loaded in three vectors, `x0 y0 z0 x1`,
    /// `y1 z1 x2 y2`, `z2 x3 y3 z3`, regrouped by component: the vector of the four
    /// `x`, of the four `y`, of the four `z` (three-component values stored back to
    /// back become one vector per component without a gather).
    #[inline(always)]
    fn deinterleave3(v: [Self; 3]) -> [Self; 3] {
        let [a, b, c] = v.map(|v| v.to_array().map(f32::to_bits));
        let [[x0, y0, z0, x1], [y1, z1, x2, y2], [z2, x3, y3, z3]] = [a, b, c];
        [Self::from_bits([x0, x1, x2, x3]), Self::from_bits([y0, y1, y2, y3]), Self::from_bits([z0, z1, z2, z3])]
    }
    /// The lanes as a quaternion `x, y, z, w`.
    fn to_quat(self) -> Quat;
    /// Lanes `x, y, z` as a vector.
    #[inline(always)]
    fn to_vec3(self) -> Vec3 {
        let [x, y, z, _] = self.to_array();
        Vec3::new(x, y, z)
    }
}

#[cfg(test)]
mod tests {
    use super::{run, scalar, Backend, Job, Lanes, Native};

    /// The data movements agree with the scalar backend lane for lane (the
    /// arithmetic is checked on whole clips by the integration tests).
    #[test]
    fn native_shuffles_match_the_scalar_backend() {
        let bits: [[u32; 4]; 4] = core::array::from_fn(|r| core::array::from_fn(|c| (r * 4 + c) as u32 + 0x3f80_0000));
        let native = bits.map(Native::from_bits);
        let reference = bits.map(scalar::F32x4::from_bits);
        let same = |a: Native, b: scalar::F32x4| a.to_array().map(f32::to_bits) == b.to_array().map(f32::to_bits);
        let [a, b, c, _] = native;
        let [ra, rb, rc, _] = reference;
        let got = Native::deinterleave3([a, b, c]);
        let want = scalar::F32x4::deinterleave3([ra, rb, rc]);
        assert!(got.iter().zip(&want).all(|(&g, &w)| same(g, w)));
        // And the scalar one is the definition: component k of value i is float 3i + k.
        for (k, v) in want.iter().enumerate() {
            let lanes = v.to_array().map(f32::to_bits);
            for (i, lane) in lanes.iter().enumerate() {
                assert_eq!(*lane, bits.as_flattened()[3 * i + k]);
            }
        }
        let got = Native::transpose(native);
        let want = scalar::F32x4::transpose(reference);
        assert!(got.iter().zip(&want).all(|(&g, &w)| same(g, w)));
    }

    /// Widening 16-bit halves agrees with the scalar backend and the definition.
    #[test]
    fn native_halves_match_the_definition() {
        for word in [0u64, u64::MAX, 0x0001_8000_ffff_1234, 0xfedc_ba98_7654_3210] {
            let want = [0, 16, 32, 48].map(|s| f32::from((word >> s) as u16));
            assert_eq!(Native::from_halves(word).to_array(), want);
            assert_eq!(scalar::F32x4::from_halves(word).to_array(), want);
        }
    }

    /// Fields read each from its own place agree with the definition on every
    /// backend (AVX2's gathers included, through a [`Job`] run on it), for every row
    /// count, including fields in the last eight bytes of the buffer and past it
    /// (read as zero bits), where a gather may not load.
    #[test]
    fn fields_at_match_the_definition_on_every_backend() {
        struct Read<'a> {
            samples: &'a [u8],
            first: u64,
            starts: [[u32; 4]; 4],
            masks: [u32; 4],
        }
        impl Job for Read<'_> {
            type Output = [[[u32; 4]; 4]; 3];
            fn run<V: Lanes>(self) -> Self::Output {
                let (s, f, st, m) = (self.samples, self.first, &self.starts, V::from_bits(self.masks));
                let bits = |rows: [V; 4]| rows.map(|r| r.to_array().map(f32::to_bits));
                [
                    bits(V::fields_at::<1>(s, f, st, m)),
                    bits(V::fields_at::<3>(s, f, st, m)),
                    bits(V::fields_at::<4>(s, f, st, m)),
                ]
            }
        }
        let samples: [u8; 61] = core::array::from_fn(|i| (i as u8).wrapping_mul(151).wrapping_add(7));
        let definition = |first: u64, start: u32, mask: u32| {
            let bit = first + u64::from(start);
            let mut word = 0u64;
            for k in 0..8 {
                let byte = samples.get((bit / 8) as usize + k).copied().unwrap_or(0);
                word |= u64::from(byte) << (8 * k);
            }
            (word >> (bit % 8)) as u32 & mask
        };
        let masks = [0x00ff_ffff, u32::MAX, 0x7f, 0];
        let starts: [[u32; 4]; 4] = core::array::from_fn(|r| core::array::from_fn(|i| (r * 29 + i * 11) as u32));
        for backend in [Backend::Portable, Backend::Base, Backend::detect()] {
            for first in [0u64, 3, 77, 300, 420, 480, 1000] {
                let got = run(backend, Read { samples: &samples, first, starts, masks });
                for (k, rows) in [1, 3, 4].into_iter().enumerate() {
                    for r in 0..4 {
                        let want: [u32; 4] =
                            core::array::from_fn(
                                |i| {
                                    if r < rows {
                                        definition(first, starts[r][i], masks[i])
                                    } else {
                                        0
                                    }
                                },
                            );
                        assert_eq!(got[k][r], want, "{} first {first} row {r} of {rows}", backend.name());
                    }
                }
            }
        }
    }

    /// Unpacking bit fields agrees with the scalar backend and with the definition,
    /// for every rate, three- and four-lane masks, and fields reaching past bit 64.
    /// Both keys' rows read at once ([`pair::Pair::fields_at`]) are each key's
    /// [`Lanes::fields_at`] on every backend: in one gather (same bytes, narrow
    /// rates), and apart (other bytes, a lane wider than 25 bits, fields at the end).
    #[test]
    fn pair_fields_at_match_each_key_on_every_backend() {
        use super::pair::Pair;
        struct Read<'a> {
            samples: [&'a [u8]; 2],
            first: [u64; 2],
            starts: [[[u32; 4]; 4]; 2],
            masks: [[u32; 4]; 2],
        }
        type Rows = [[[u32; 4]; 4]; 2];
        impl Job for Read<'_> {
            type Output = ([Rows; 3], [Rows; 3]);
            fn run<V: Lanes>(self) -> Self::Output {
                let (s, f, [a, b]) = (self.samples, self.first, &self.starts);
                let [m0, m1] = self.masks.map(V::from_bits);
                let bits = |rows: [V; 4]| rows.map(|r| r.to_array().map(f32::to_bits));
                let halves = |rows: [V::Pair; 4]| {
                    let split = rows.map(Pair::halves);
                    [bits(split.map(|h| h.0)), bits(split.map(|h| h.1))]
                };
                let each = |rows: [V; 4], other: [V; 4]| [bits(rows), bits(other)];
                let pair = V::Pair::new(m0, m1);
                let narrow = self.masks.iter().flatten().all(|&m| m <= 0x01ff_ffff);
                (
                    [
                        halves(V::Pair::fields_at::<1>(s, f, [a, b], pair, narrow)),
                        halves(V::Pair::fields_at::<3>(s, f, [a, b], pair, narrow)),
                        halves(V::Pair::fields_at::<4>(s, f, [a, b], pair, narrow)),
                    ],
                    [
                        each(V::fields_at::<1>(s[0], f[0], a, m0), V::fields_at::<1>(s[1], f[1], b, m1)),
                        each(V::fields_at::<3>(s[0], f[0], a, m0), V::fields_at::<3>(s[1], f[1], b, m1)),
                        each(V::fields_at::<4>(s[0], f[0], a, m0), V::fields_at::<4>(s[1], f[1], b, m1)),
                    ],
                )
            }
        }
        let samples: [u8; 61] = core::array::from_fn(|i| (i as u8).wrapping_mul(151).wrapping_add(7));
        let other: [u8; 40] = core::array::from_fn(|i| (i as u8).wrapping_mul(97).wrapping_add(3));
        let starts = |k: usize| -> [[u32; 4]; 4] {
            core::array::from_fn(|r| core::array::from_fn(|i| (r * 29 + i * 11 + k * 5) as u32))
        };
        let narrow = [[0x01ff_ffff, 0x7f, 0xffff, 0], [0x3ff, 0x00ff_ffff, 1, 0x01ff_ffff]];
        let wide = [[0x01ff_ffff, 0x7f, 0xffff, 0], [0x3ff, 0x03ff_ffff, 1, 0]];
        let raw = [[u32::MAX, 0x7f, 0xffff, 0], narrow[1]];
        let mut reads = 0;
        for backend in [Backend::Portable, Backend::Base, Backend::detect()] {
            for samples in [[&samples[..], &samples[..]], [&samples[..], &other[..]]] {
                for masks in [narrow, wide, raw] {
                    // Fields inside, straddling and past the end of the bytes.
                    for first in [[0u64, 0], [3, 77], [300, 17], [420, 480], [1000, 5]] {
                        let read = Read { samples, first, starts: [starts(0), starts(1)], masks };
                        let (pair, each) = run(backend, read);
                        assert_eq!(pair, each, "{} first {first:?} masks {masks:x?}", backend.name());
                        reads += 1;
                    }
                }
            }
        }
        assert_eq!(reads, 90);
    }

    #[test]
    fn native_fields_match_the_definition() {
        let mut word = 0x9e37_79b9_7f4a_7c15u64;
        for rates in [[1u32, 2, 3, 4], [24, 24, 9, 0], [32, 7, 0, 16], [0; 4], [32, 24, 7, 0]] {
            let masks = rates.map(|r| if r == 0 { 0 } else { u32::MAX >> (32 - r) });
            let packed_rates = u32::from_le_bytes(rates.map(|r| r as u8));
            assert_eq!(Native::rate_masks(packed_rates).to_array().map(f32::to_bits), masks, "{rates:?}");
            assert_eq!(scalar::F32x4::rate_masks(packed_rates).to_array().map(f32::to_bits), masks, "{rates:?}");
            let places = [0, rates[0], rates[0] + rates[1], rates[0] + rates[1] + rates[2]];
            for _ in 0..64 {
                word = word.rotate_left(17).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x1234_5678;
                let want: [u32; 4] = core::array::from_fn(|i| (word >> places[i]) as u32 & masks[i]);
                let packed = u32::from_le_bytes(places.map(|p| p as u8));
                let got = Native::fields(word, Native::places(packed), Native::from_bits(masks));
                let got = got.to_array().map(f32::to_bits);
                let reference =
                    scalar::F32x4::fields(word, scalar::F32x4::places(packed), scalar::F32x4::from_bits(masks));
                assert_eq!(got, want, "word {word:#x} rates {rates:?}");
                assert_eq!(reference.to_array().map(f32::to_bits), want, "word {word:#x} rates {rates:?}");
                // Integers of up to 24 bits convert exactly.
                let small = want.map(|q| q & 0x00ff_ffff);
                let converted = Native::from_bits(small).integers_to_floats().to_array();
                assert_eq!(converted, small.map(|q| q as f32));
            }
        }
    }
}
