//! Bounds-checked little-endian reads. Every read returns `None` (never panics) when
//! it would leave the slice; validation turns that into a typed error, and after
//! validation the sampling code's reads are in range by construction.

use crate::error::{Error, Section};
use crate::format::SECTION_ALIGNMENT;

/// Reads a little-endian `u32` at `offset`.
#[inline]
pub fn u32_at(bytes: &[u8], offset: usize) -> Option<u32> {
    bytes.get(offset..)?.first_chunk().map(|b| u32::from_le_bytes(*b))
}

/// Reads a little-endian `u16` at `offset`.
#[inline]
pub fn u16_at(bytes: &[u8], offset: usize) -> Option<u16> {
    bytes.get(offset..)?.first_chunk().map(|b| u16::from_le_bytes(*b))
}

/// Reads a little-endian `f32` at `offset`.
#[inline]
pub fn f32_at(bytes: &[u8], offset: usize) -> Option<f32> {
    u32_at(bytes, offset).map(f32::from_bits)
}

/// The bytes `start..end` as UTF-8 text, if they are inside `bytes` and valid.
#[inline]
pub fn str_at(bytes: &[u8], start: usize, end: usize) -> Option<&str> {
    core::str::from_utf8(bytes.get(start..end)?).ok()
}

/// The `len` bytes at `offset`, checked to be inside `bytes` and 16-byte aligned.
pub fn aligned_section(bytes: &[u8], offset: u32, len: u64, section: Section) -> Result<&[u8], Error> {
    let offset = offset as usize;
    if offset % SECTION_ALIGNMENT != 0 {
        return Err(Error::SectionMisaligned(section));
    }
    let len = usize::try_from(len).map_err(|_| Error::OutOfBounds(section))?;
    let end = offset.checked_add(len).ok_or(Error::OutOfBounds(section))?;
    bytes.get(offset..end).ok_or(Error::OutOfBounds(section))
}

/// The 64 bits starting at byte `byte`, little-endian. Bytes past the slice read as
/// zero (never a panic); the format's slack ([`crate::format::BIT_READ_SLACK`]) keeps
/// valid reads on the one-load path.
#[inline(always)]
pub fn u64_at_or_zero(bytes: &[u8], byte: usize) -> u64 {
    // One comparison: `byte + 8 <= len` (a wrapped end is below the start: `None`).
    match bytes.get(byte..byte.wrapping_add(8)).and_then(|b| b.first_chunk::<8>()) {
        Some(b) => u64::from_le_bytes(*b),
        None => u64_near_end(bytes, byte),
    }
}

/// [`u64_at_or_zero`] when fewer than eight bytes follow `byte`: a crafted buffer's
/// end, never a valid clip's samples (out of line, so that the common path stays
/// one load).
#[cold]
#[inline(never)]
fn u64_near_end(bytes: &[u8], byte: usize) -> u64 {
    let mut tmp = [0u8; 8];
    for (t, s) in tmp.iter_mut().zip(bytes.get(byte..).unwrap_or(&[])) {
        *t = *s;
    }
    u64::from_le_bytes(tmp)
}

/// The bits from bit `bit_offset` on, least significant first: at least 57 of them
/// valid (the load is 8 bytes, shifted by up to 7 bits). Zero past the slice.
#[inline(always)]
pub fn bits_from(bytes: &[u8], bit_offset: u64) -> u64 {
    let Ok(byte) = usize::try_from(bit_offset >> 3) else {
        return 0;
    };
    u64_at_or_zero(bytes, byte) >> (bit_offset & 7)
}

/// Reads `bits` (0 to 32) bits starting at bit `bit_offset`, least significant bit
/// first. Loads eight bytes at once; the format guarantees eight readable bytes past
/// the last sample ([`crate::format::BIT_READ_SLACK`]). A read past the slice yields
/// zero bits instead of panicking.
#[inline]
pub fn read_bits(bytes: &[u8], bit_offset: u64, bits: u8) -> u32 {
    bits_from(bytes, bit_offset) as u32 & crate::format::field_mask(u32::from(bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bits_lsb_first_across_bytes_and_past_the_end() {
        let bytes = [0b1010_1100u8, 0xff, 0x01, 0, 0, 0, 0, 0, 0];
        assert_eq!(read_bits(&bytes, 2, 3), 0b011);
        assert_eq!(read_bits(&bytes, 4, 8), 0xfa);
        assert_eq!(read_bits(&bytes, 0, 32), 0x0001_ffac);
        // Past the end: zero bits, no panic.
        assert_eq!(read_bits(&bytes, 8 * 8, 24), 0);
        assert_eq!(read_bits(&bytes, u64::MAX, 32), 0);
        assert_eq!(u32_at(&bytes, usize::MAX), None);
    }
}
