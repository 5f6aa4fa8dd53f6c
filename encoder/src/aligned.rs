//! A byte buffer that starts on a 16-byte boundary, as the decoder requires.

use std::io::{self, Read};
use std::ops::Deref;

use bytemuck::{Pod, Zeroable};

use crate::memory::{self, OutOfMemory};

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

    /// Copies `bytes` into an aligned buffer, or says the system refused the memory.
    pub fn try_new(bytes: &[u8]) -> Result<AlignedBytes, OutOfMemory> {
        let mut blocks = memory::filled(bytes.len().div_ceil(16), Block::default(), "an aligned copy of the clip")?;
        for (block, chunk) in blocks.iter_mut().zip(bytes.chunks(16)) {
            block.0[..chunk.len()].copy_from_slice(chunk);
        }
        Ok(AlignedBytes { blocks, len: bytes.len() })
    }

    /// Reads what `source` gives, at most `limit` bytes, into an aligned buffer: a
    /// stream of any length is read in bounded memory.
    pub fn read_from(source: impl Read, limit: u64) -> io::Result<AlignedBytes> {
        const CHUNK: usize = 1 << 16;
        let mut out = AlignedBytes::default();
        let mut taken = source.take(limit);
        loop {
            let start = out.len;
            let blocks = (start + CHUNK).div_ceil(16);
            out.blocks.try_reserve(blocks.saturating_sub(out.blocks.len())).map_err(io::Error::other)?;
            out.blocks.resize(blocks, Block::default());
            let buffer = &mut bytemuck::cast_slice_mut::<Block, u8>(&mut out.blocks)[start..start + CHUNK];
            match taken.read(buffer) {
                Ok(0) => break,
                Ok(n) => out.len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        out.blocks.truncate(out.len.div_ceil(16));
        Ok(out)
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
