//! Lays a tier's data out in chunks (seed 002: "data is split into chunks of 1 MB"),
//! so that a game streams a tier with a few large reads. Each clip segment's key
//! frames of the tier form one piece, kept whole inside one chunk; pieces follow
//! each other clip by clip, segment by segment, and a chunk ends with the 8 bytes of
//! slack the bit reader may load past a piece's last byte.

use ossa_decoder::format::{ALIGNMENT, BIT_READ_SLACK};

/// A tier laid out: its chunks' bytes, and where each piece went.
#[derive(Debug, Default)]
pub struct Packed {
    /// Each chunk's bytes (pieces, the slack, zero padding to 16 bytes).
    pub chunks: Vec<Vec<u8>>,
    /// For each piece, its location `chunk << shift | byte` (0 for a piece of no
    /// key frame).
    pub locations: Vec<u32>,
}

/// Why a tier could not be laid out.
#[derive(Debug, PartialEq, Eq)]
pub enum PackError {
    /// Piece `index` (with the slack) is larger than a chunk.
    PieceTooLarge {
        /// The piece's index.
        index: usize,
        /// Its bytes with the slack.
        needed: usize,
    },
    /// The tier needs more chunks than its 32-bit locations address.
    TooManyChunks,
}

/// Packs `pieces` in order into chunks of `1 << shift` bytes. `None` is a segment of
/// which the tier holds no key frame; `Some` bytes are placed even when empty (key
/// frames of a segment that stores no bits per frame still name a chunk, whose slack
/// is all a decoder may read there).
pub fn pack(pieces: &[Option<Vec<u8>>], shift: u8) -> Result<Packed, PackError> {
    let chunk_size = 1usize << shift;
    let max_chunks = 1u64 << (32 - u32::from(shift));
    let mut packed = Packed::default();
    let mut current: Vec<u8> = Vec::new();
    let mut open = false;
    for (index, piece) in pieces.iter().enumerate() {
        let Some(piece) = piece else {
            packed.locations.push(0);
            continue;
        };
        let needed = piece.len() + BIT_READ_SLACK;
        if needed > chunk_size {
            return Err(PackError::PieceTooLarge { index, needed });
        }
        if open && current.len() + needed > chunk_size {
            packed.chunks.push(finish(std::mem::take(&mut current), chunk_size));
        }
        open = true;
        let chunk = packed.chunks.len() as u64;
        if chunk >= max_chunks {
            return Err(PackError::TooManyChunks);
        }
        packed.locations.push(((chunk << shift) as u32) | current.len() as u32);
        current.extend_from_slice(piece);
    }
    if open {
        packed.chunks.push(finish(current, chunk_size));
    }
    Ok(packed)
}

/// A chunk's final bytes: its pieces, the read slack, zeros to a multiple of 16 (at
/// most the chunk size, itself a multiple of 16).
fn finish(mut chunk: Vec<u8>, chunk_size: usize) -> Vec<u8> {
    let len = (chunk.len() + BIT_READ_SLACK).next_multiple_of(ALIGNMENT).min(chunk_size);
    chunk.resize(len, 0);
    chunk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_stay_whole_and_each_chunk_keeps_its_slack() {
        // 256-byte chunks: 100 + 100 fit with the slack, a third 100 does not.
        let pieces = [Some(vec![1u8; 100]), None, Some(vec![2u8; 100]), Some(vec![3u8; 100]), Some(vec![4u8; 248])];
        let packed = pack(&pieces, 8).unwrap();
        assert_eq!(packed.locations, vec![0, 0, 100, 1 << 8, 2 << 8]);
        assert_eq!(packed.chunks.len(), 3);
        assert_eq!(packed.chunks[0].len(), 208);
        assert_eq!(packed.chunks[2].len(), 256);
        assert!(packed.chunks[0][200..].iter().all(|&b| b == 0));
    }

    #[test]
    fn a_piece_larger_than_a_chunk_is_refused() {
        assert_eq!(pack(&[Some(vec![0; 249])], 8).unwrap_err(), PackError::PieceTooLarge { index: 0, needed: 257 });
    }

    #[test]
    fn key_frames_of_no_bits_still_open_a_chunk() {
        let packed = pack(&[None, Some(Vec::new()), Some(Vec::new())], 8).unwrap();
        assert_eq!(packed.locations, vec![0, 0, 0]);
        assert_eq!(packed.chunks.len(), 1);
        assert_eq!(packed.chunks[0].len(), 16);
    }
}
