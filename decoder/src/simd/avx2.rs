//! The x86_64 backend for CPUs with AVX2, chosen at run time: the SSE2 backend's code
//! compiled a second time with AVX2 (and BMI1, BMI2, POPCNT) enabled, so that the
//! compiler encodes it with VEX instructions (three operands, fewer moves) and uses
//! the bit instructions those extensions add. The arithmetic is the same IEEE-754
//! operations in the same order (FMA stays off), so the bits are the SSE2 backend's.
//!
//! Which CPU runs is known only at run time: [`detect`] asks CPUID once (cached) and
//! gives a proof, [`Detected`], without which [`run`] cannot be called.

#![allow(unsafe_code)]

use super::{sse2, Job};

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
    job.run::<sse2::F32x4>()
}
