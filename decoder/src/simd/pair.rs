//! Two four-lane vectors worked on side by side: the same row of key 0 and of key 1,
//! which a subset's gathered quads read and dequantise with the same operations.
//!
//! A backend with eight lanes (AVX2) holds a pair in one register, so that both keys'
//! fields are read by one gather and dequantised by one instruction per step; the
//! others work on the two halves one after the other ([`Two`]). Either way each lane
//! sees the same IEEE-754 operations in the same order as [`Lanes`] gives it: the
//! same bits.

use super::Lanes;

/// Two vectors of `Half` (see the module documentation).
pub(crate) trait Pair: Copy {
    /// One of the two vectors.
    type Half: Lanes;
    /// `a` and `b` side by side.
    fn new(a: Self::Half, b: Self::Half) -> Self;
    /// The two vectors back.
    fn halves(self) -> (Self::Half, Self::Half);
    /// [`Lanes::fields_at`] of two keys at once: half 0 of each row from
    /// `samples[0]`, `first[0]`, `starts[0]` and half 0 of `masks`, half 1 from the
    /// others. `narrow` says that every lane's mask fits in 25 bits (the caller
    /// knows it from its plans, once, instead of testing the masks here at every
    /// call): a field then lies in the 32 bits loaded at its first byte.
    #[inline(always)]
    fn fields_at<const R: usize>(
        samples: [&[u8]; 2],
        first: [u64; 2],
        starts: [&[[u32; 4]; 4]; 2],
        masks: Self,
        narrow: bool,
    ) -> [Self; 4] {
        let _ = narrow;
        fields_apart::<Self, R>(samples, first, starts, masks)
    }
    /// [`Lanes::integers_to_floats`] of both.
    #[inline(always)]
    fn integers_to_floats(self) -> Self {
        let (a, b) = self.halves();
        Self::new(a.integers_to_floats(), b.integers_to_floats())
    }
    /// [`Lanes::add`] of both.
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        let ((a, b), (c, d)) = (self.halves(), o.halves());
        Self::new(a.add(c), b.add(d))
    }
    /// [`Lanes::sub`] of both.
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        let ((a, b), (c, d)) = (self.halves(), o.halves());
        Self::new(a.sub(c), b.sub(d))
    }
    /// [`Lanes::mul`] of both.
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        let ((a, b), (c, d)) = (self.halves(), o.halves());
        Self::new(a.mul(c), b.mul(d))
    }
    /// [`Lanes::sqrt`] of both.
    #[inline(always)]
    fn sqrt(self) -> Self {
        let (a, b) = self.halves();
        Self::new(a.sqrt(), b.sqrt())
    }
    /// [`Lanes::and`] of both.
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        let ((a, b), (c, d)) = (self.halves(), o.halves());
        Self::new(a.and(c), b.and(d))
    }
    /// [`Lanes::gt`] of both.
    #[inline(always)]
    fn gt(self, o: Self) -> Self {
        let ((a, b), (c, d)) = (self.halves(), o.halves());
        Self::new(a.gt(c), b.gt(d))
    }
    /// [`Lanes::select`] of both.
    #[inline(always)]
    fn select(mask: Self, a: Self, b: Self) -> Self {
        let ((m0, m1), (a0, a1), (b0, b1)) = (mask.halves(), a.halves(), b.halves());
        Self::new(Self::Half::select(m0, a0, b0), Self::Half::select(m1, a1, b1))
    }
}

/// [`Pair::fields_at`] key by key: each half read as [`Lanes::fields_at`] reads it
/// (the default, and a wide backend's way when one gather cannot read both).
#[inline(always)]
pub(crate) fn fields_apart<P: Pair, const R: usize>(
    samples: [&[u8]; 2],
    first: [u64; 2],
    starts: [&[[u32; 4]; 4]; 2],
    masks: P,
) -> [P; 4] {
    let (m0, m1) = masks.halves();
    let [a0, a1, a2, a3] = P::Half::fields_at::<R>(samples[0], first[0], starts[0], m0);
    let [b0, b1, b2, b3] = P::Half::fields_at::<R>(samples[1], first[1], starts[1], m1);
    [P::new(a0, b0), P::new(a1, b1), P::new(a2, b2), P::new(a3, b3)]
}

/// A pair as two separate vectors, for the backends with four lanes: every operation
/// is its halves' own.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Two<V>(V, V);

impl<V: Lanes> Pair for Two<V> {
    type Half = V;
    #[inline(always)]
    fn new(a: V, b: V) -> Self {
        Two(a, b)
    }
    #[inline(always)]
    fn halves(self) -> (V, V) {
        (self.0, self.1)
    }
}
