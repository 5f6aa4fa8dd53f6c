//! Sets of a segment's key frames, one bit per sample (bit `i`: sample `i` of the
//! segment is stored), as the format's frame directory holds them.

/// The key-frame set of a segment of `count` samples that keeps every one.
pub fn all_kept(count: usize) -> u32 {
    if count >= 32 {
        u32::MAX
    } else {
        (1u32 << count) - 1
    }
}

/// The stored frames around left-out sample `i` of a segment whose stored frames are
/// `kept` (bit 0 and the last sample's always set): the last before it, the first
/// after it.
pub fn around(kept: u32, i: usize) -> (usize, usize) {
    let below = kept & ((1u32 << i) - 1);
    let above = kept & !((2u32 << i).wrapping_sub(1));
    (31 - below.leading_zeros() as usize, above.trailing_zeros() as usize)
}

#[cfg(test)]
mod tests {
    use super::around;

    #[test]
    fn around_finds_the_stored_neighbours() {
        let kept = 0b1000_1001u32;
        assert_eq!(around(kept, 1), (0, 3));
        assert_eq!(around(kept, 2), (0, 3));
        assert_eq!(around(kept, 4), (3, 7));
        assert_eq!(around(kept, 6), (3, 7));
        assert_eq!(around(!(1 << 30), 30), (29, 31));
    }
}
