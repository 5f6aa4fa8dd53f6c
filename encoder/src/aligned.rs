//! A byte buffer that starts on a 16-byte boundary, as the decoder requires.

use std::ops::Deref;

use bytemuck::{Pod, Zeroable};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(16))]
struct Block([u8; 16]);

/// Owned bytes whose start is 16-byte aligned. `Vec<u8>` gives no such guarantee.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AlignedBytes {
    blocks: Vec<Block>,
    len: usize,
}

impl AlignedBytes {
    /// Copies `bytes` into an aligned buffer.
    pub fn new(bytes: &[u8]) -> AlignedBytes {
        let mut blocks = vec![Block::default(); bytes.len().div_ceil(16)];
        for (block, chunk) in blocks.iter_mut().zip(bytes.chunks(16)) {
            block.0[..chunk.len()].copy_from_slice(chunk);
        }
        AlignedBytes { blocks, len: bytes.len() }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &bytemuck::cast_slice::<Block, u8>(&self.blocks)[..self.len]
    }
}

impl Deref for AlignedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}
