//! Finding the next structural byte of a text clip fast: the one loop of the
//! document scan ([`super::sjson::Reader::skip_unchecked`]) that touches every byte.
//!
//! Most of a clip's text is numbers whose runs between brackets and newlines are tens
//! of bytes long, so the scan looks at 16 bytes at a time (SSE2, part of every
//! x86_64 CPU) or 8 (SWAR on a `u64`, elsewhere). Both flag every structural byte and
//! a few others that share its bit pattern (`Y`, `_`, `y`, DEL); the exact table then
//! rejects those.

/// The bytes the scan stops at: brackets, quotes, slashes (comments), newlines (line
/// numbers for messages).
pub const STRUCTURAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    let special = b"[]{}\"/\n";
    while i < special.len() {
        table[special[i] as usize] = true;
        i += 1;
    }
    table
};

/// `[` `]` `{` `}` are 0x5B 0x5D 0x7B 0x7D: with bit 5 set and bits 1 and 2 cleared,
/// all four are [`BRACKET`] (as are `Y`, `_`, `y` and DEL).
const BRACKET_MASK: u8 = 0xF9;
const BRACKET: u8 = 0x79;

/// The first structural byte ([`STRUCTURAL`]) at or after `i`, or the text's length.
pub fn next(text: &[u8], mut i: usize) -> usize {
    loop {
        i = next_candidate(text, i);
        match text.get(i) {
            None => return text.len(),
            Some(&c) if STRUCTURAL[usize::from(c)] => return i,
            // A byte that only shares the pattern: on from the next one.
            Some(_) => i += 1,
        }
    }
}

/// The first byte at or after `i` that may be structural: a whole block at a time,
/// then the last bytes one by one.
fn next_candidate(text: &[u8], mut i: usize) -> usize {
    while let Some(block) = text.get(i..i + BLOCK) {
        let found = candidates(block);
        if found != 0 {
            return i + found.trailing_zeros() as usize / BIT_PER_BYTE;
        }
        i += BLOCK;
    }
    while text.get(i).is_some_and(|&c| !STRUCTURAL[usize::from(c)]) {
        i += 1;
    }
    i
}

#[cfg(target_arch = "x86_64")]
const BLOCK: usize = 16;
#[cfg(target_arch = "x86_64")]
const BIT_PER_BYTE: usize = 1;

/// One bit per byte of `block` (16 bytes), set where it may be structural.
#[cfg(target_arch = "x86_64")]
fn candidates(block: &[u8]) -> u32 {
    // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU runs it.
    unsafe { candidates_sse2(block) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn candidates_sse2(block: &[u8]) -> u32 {
    use std::arch::x86_64::*;
    let x: __m128i = bytemuck::pod_read_unaligned(block);
    let splat = |c: u8| _mm_set1_epi8(c as i8);
    let folded = _mm_and_si128(_mm_or_si128(x, splat(0x20)), splat(BRACKET_MASK));
    let found = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(folded, splat(BRACKET)), _mm_cmpeq_epi8(x, splat(b'"'))),
        _mm_or_si128(_mm_cmpeq_epi8(x, splat(b'/')), _mm_cmpeq_epi8(x, splat(b'\n'))),
    );
    _mm_movemask_epi8(found) as u32
}

#[cfg(not(target_arch = "x86_64"))]
const BLOCK: usize = 8;
#[cfg(not(target_arch = "x86_64"))]
const BIT_PER_BYTE: usize = 8;

#[cfg(not(target_arch = "x86_64"))]
fn candidates(block: &[u8]) -> u64 {
    candidates_swar(block)
}

/// Bit 7 of each byte of `block` (8 bytes, as a little-endian `u64`) set where it may
/// be structural; the lowest set bit is exact (a borrow only runs upwards).
#[cfg(any(test, not(target_arch = "x86_64")))]
fn candidates_swar(block: &[u8]) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_bytes = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let equal = |x: u64, c: u8| zero_bytes(x ^ (ONES * u64::from(c)));
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(block);
    let x = u64::from_le_bytes(bytes);
    equal((x | (ONES * 0x20)) & (ONES * u64::from(BRACKET_MASK)), BRACKET)
        | equal(x, b'"')
        | equal(x, b'/')
        | equal(x, b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the table, byte by byte, at every start in texts where every byte
    /// value appears at every position of a block.
    #[test]
    fn finds_what_the_table_finds() {
        let mut text: Vec<u8> = (0..=255u8).collect();
        text.extend((0..=255u8).rev());
        text.extend(b"0.25, -1.5e-3 ]\n\t\t[ 1.0, 2.0 ] // note\n\"name\" { Y_y\x7f }");
        for filler in [b'0', b'Y', b'_'] {
            let mut padded = vec![filler; 37];
            padded.extend_from_slice(&text);
            padded.extend(vec![filler; 19]);
            for start in 0..=padded.len() {
                let expected =
                    (start..padded.len()).find(|&i| STRUCTURAL[usize::from(padded[i])]).unwrap_or(padded.len());
                assert_eq!(next(&padded, start), expected, "start {start}");
            }
        }
    }

    /// The portable blocks (the only ones off x86_64, tested everywhere): the first
    /// byte flagged in every 8-byte window is the first that is structural or shares
    /// the pattern.
    #[test]
    fn the_portable_blocks_flag_the_first_candidate_exactly() {
        let shares = |c: u8| STRUCTURAL[usize::from(c)] || (c | 0x20) & BRACKET_MASK == BRACKET;
        let mut text: Vec<u8> = (0..=255u8).collect();
        text.extend((0..=255u8).rev());
        text.extend(b"0.25, -1.5e-3 ]\n\t\t[ 1.0, 2.0 ]\x00\x01\xff\"");
        for window in text.windows(8) {
            let found = candidates_swar(window);
            let first = window.iter().position(|&c| shares(c));
            let flagged = (found != 0).then(|| found.trailing_zeros() as usize / 8);
            assert_eq!(flagged, first, "{window:?}");
        }
    }
}
