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

    /// Reads everything `source` gives, up to `limit` bytes, into an aligned buffer.
    /// Returns `Ok(None)` when the source holds more than `limit` bytes (it is not read
    /// past `limit + 1`), so that a stream of any length is read in bounded memory.
    pub fn read_from(source: &mut impl Read, limit: u64) -> io::Result<Option<AlignedBytes>> {
        const CHUNK: usize = 1 << 16;
        let mut out = AlignedBytes::default();
        let mut taken = source.take(limit.saturating_add(1));
        loop {
            let start = out.len;
            let blocks = (start + CHUNK).div_ceil(16);
            out.blocks.try_reserve(blocks.saturating_sub(out.blocks.len())).map_err(io::Error::other)?;
            out.blocks.resize(blocks, Block::default());
            let buffer = &mut bytemuck::cast_slice_mut::<Block, u8>(&mut out.blocks)[start..start + CHUNK];
            let n = match taken.read(buffer) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            out.len += n;
            if n == 0 {
                break;
            }
        }
        out.blocks.truncate(out.len.div_ceil(16));
        Ok((out.len as u64 <= limit).then_some(out))
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
