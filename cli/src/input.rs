//! Reading inputs: a file or standard input (`-`), opened before anything is read so
//! that an output that is the same file can be refused first, then read with a size
//! cap so that no input, `/dev/zero` included, takes memory without bound.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use ossa_decoder::format::database::DATABASE_MAGIC;
use ossa_decoder::format::{HEADER_SIZE, MAGIC};
use ossa_encoder::memory::bytes;
use ossa_encoder::{memory, AlignedBytes};

use crate::failure::Failure;
use crate::memory_limit::MemoryLimit;
use crate::output::Identity;

/// The largest text clip read: the largest clip the encoder takes (2²⁵ transform
/// samples) at 512 bytes of text each, twice what pretty-printed binary-exact text
/// takes.
pub const MAX_TEXT_BYTES: u64 = ossa_encoder::raw_clip::MAX_TRANSFORM_SAMPLES * 512;

/// The largest `.ossa` file the format allows (its size is a `u32`, a multiple of 16).
pub const MAX_OSSA_BYTES: u64 = u32::MAX as u64 / 16 * 16;

/// An input opened but not read yet.
pub struct Input {
    /// How messages name it.
    pub shown: PathBuf,
    source: Source,
    /// What it is, when that can be known (not for a terminal or a pipe).
    pub identity: Option<Identity>,
    /// Its size, for a regular file.
    size: Option<u64>,
}

enum Source {
    /// A file not opened yet.
    Closed(PathBuf),
    File(File),
    Stdin,
    /// Bytes already read to tell formats apart, then the rest.
    Prefixed(Box<io::Chain<io::Cursor<Vec<u8>>, Source>>),
    /// Nothing (what a source leaves behind once moved into [`Source::Prefixed`]).
    Empty,
}

/// What [`Input::read_ossa_or_database`] found.
pub enum Loaded {
    /// An `.ossa` clip.
    Clip(AlignedBytes),
    /// An `.ossadb` database, whole.
    Database(AlignedBytes),
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::Closed(_) | Source::Empty => Ok(0),
            Source::File(f) => f.read(buf),
            Source::Stdin => io::stdin().lock().read(buf),
            Source::Prefixed(chain) => chain.read(buf),
        }
    }
}

impl Source {
    /// `take(limit).read_to_end(out)`. A file is read straight into `out`'s spare
    /// capacity: through this enum, the standard library zeroes that capacity first
    /// (it only skips it for readers that implement `read_buf`, which is unstable).
    fn read_to_end_at_most(&mut self, limit: u64, out: &mut Vec<u8>) -> io::Result<usize> {
        match self {
            Source::File(f) => f.take(limit).read_to_end(out),
            other => other.take(limit).read_to_end(out),
        }
    }
}

/// Bytes read at a time.
const CHUNK: usize = 1 << 16;

impl Input {
    /// Opens `path` (`-` for standard input).
    pub fn open(path: &Path) -> Result<Input, Failure> {
        if path.as_os_str() == "-" {
            #[cfg(unix)]
            let identity = {
                use std::os::fd::AsFd as _;
                io::stdin()
                    .as_fd()
                    .try_clone_to_owned()
                    .ok()
                    .and_then(|fd| File::from(fd).metadata().ok())
                    .filter(|m| m.is_file())
                    .map(|m| Identity::of(&m, path))
            };
            #[cfg(not(unix))]
            let identity = None;
            return Ok(Input { shown: PathBuf::from("<stdin>"), source: Source::Stdin, identity, size: None });
        }
        let fail = |e: io::Error| Failure::at(path, format!("cannot read: {e}"));
        // What the input is, from its name alone: opening a FIFO waits for a writer,
        // and the output check must come first.
        let meta = std::fs::metadata(path).map_err(fail)?;
        if meta.is_dir() {
            return Err(Failure::at(path, "is a directory, not a file"));
        }
        Ok(Input {
            shown: path.to_owned(),
            source: Source::Closed(path.to_owned()),
            identity: Some(Identity::of(&meta, path)),
            size: meta.is_file().then_some(meta.len()),
        })
    }

    /// Opens the file for reading (once the output check is done).
    fn open_source(&mut self) -> Result<(), Failure> {
        if let Source::Closed(path) = &self.source {
            let file = File::open(path).map_err(|e| Failure::at(&self.shown, format!("cannot read: {e}")))?;
            self.source = Source::File(file);
        }
        Ok(())
    }

    /// Refuses to go on when `output` is this very input.
    pub fn check_not(&self, output: Option<&Identity>) -> Result<(), Failure> {
        match (&self.identity, output) {
            (Some(a), Some(b)) if a == b => Err(Failure::at(
                &self.shown,
                "the output is this input file (the same file, maybe by another name or a link): refusing to overwrite it",
            )),
            _ => Ok(()),
        }
    }

    /// Reads a text clip: UTF-8 without NUL bytes, at most [`MAX_TEXT_BYTES`] and
    /// what `limit` allows. Other formats are recognised and named. Stops at the first
    /// byte that shows the input is not a text clip, whatever its length.
    pub fn read_text(mut self, limit: &MemoryLimit) -> Result<String, Failure> {
        let cap = MAX_TEXT_BYTES.min(limit.bytes.unwrap_or(u64::MAX));
        // `size`: the file's size, or for a stream, how much was read before stopping.
        let too_large = |size: u64, whole: bool| {
            if size > MAX_TEXT_BYTES {
                format!(
                    "the input is larger than {}, the most a text clip can need (2^25 transform samples at 512 bytes)",
                    bytes(MAX_TEXT_BYTES)
                )
            } else if whole {
                limit.refusal("reading this file", size)
            } else {
                format!(
                    "the input goes on past {} without ending: more than {limit} allows to read; use --memory-limit to change it",
                    bytes(size)
                )
            }
        };
        if let Some(size) = self.size.filter(|&s| s > cap) {
            return Err(Failure::at(&self.shown, too_large(size, true)));
        }
        self.refuse_other_formats_by_name()?;
        self.open_source()?;
        let capacity = self.size.unwrap_or(CHUNK as u64).min(cap) as usize;
        let mut text =
            memory::with_capacity::<u8>(capacity + 1, "the text").map_err(|e| Failure::at(&self.shown, e))?;
        let mut checked = 0usize;
        loop {
            let start = text.len();
            let n = if start > 0 && self.size.is_some() {
                // A file whose size is known, past its first chunk: the rest in as few
                // reads as the system allows, into the capacity reserved for it (no
                // zeroing, no reallocation unless the file grew), at most one byte
                // past the cap so that growing beyond it is still seen.
                let left = (cap + 1).saturating_sub(start as u64);
                match self.source.read_to_end_at_most(left, &mut text) {
                    Ok(n) => n,
                    Err(e) => return Err(Failure::at(&self.shown, format!("cannot read: {e}"))),
                }
            } else {
                text.try_reserve(CHUNK)
                    .map_err(|e| Failure::at(&self.shown, format!("out of memory reading the text: {e}")))?;
                text.resize(start + CHUNK, 0);
                let n = match self.source.read(&mut text[start..]) {
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                        text.truncate(start);
                        continue;
                    }
                    Err(e) => return Err(Failure::at(&self.shown, format!("cannot read: {e}"))),
                };
                text.truncate(start + n);
                n
            };
            if n == 0 {
                break;
            }
            if start == 0 {
                refuse_other_formats_by_content(&self.shown, &text)?;
            }
            // Validate as it comes, so that binary input stops at once (a character
            // cut by the chunk's end is checked with the next chunk); report whichever
            // problem comes first.
            let nul = memchr::memchr(0, &text[start..]).map(|at| start + at);
            let rest_of_file = start > 0 && self.size.is_some();
            let invalid = if rest_of_file && nul.is_none() {
                // The rest of a file whose size is known, in one read and without a
                // NUL: its UTF-8 is checked once, when the text becomes a `String` below.
                None
            } else {
                match std::str::from_utf8(&text[checked..]) {
                    Ok(_) => {
                        checked = text.len();
                        None
                    }
                    Err(e) if e.error_len().is_some() => Some(checked + e.valid_up_to()),
                    Err(e) => {
                        checked += e.valid_up_to();
                        None
                    }
                }
            };
            match (nul, invalid) {
                (Some(n), i) if i.is_none_or(|i| n < i) => {
                    return Err(Failure::at(
                        &self.shown,
                        format!("holds a NUL byte at offset {n}: binary data, not a text clip"),
                    ));
                }
                (_, Some(i)) => {
                    return Err(Failure::at(&self.shown, format!("not UTF-8 text (invalid byte at offset {i})")));
                }
                _ => {}
            }
            if text.len() as u64 > cap {
                return Err(Failure::at(&self.shown, too_large(cap, false)));
            }
        }
        if text.is_empty() {
            return Err(Failure::at(&self.shown, "the file is empty"));
        }
        String::from_utf8(text).map_err(|e| {
            let e = e.utf8_error();
            let problem = if e.error_len().is_some() { "invalid byte" } else { "truncated character" };
            Failure::at(&self.shown, format!("not UTF-8 text ({problem} at offset {})", e.valid_up_to()))
        })
    }

    fn refuse_other_formats_by_name(&self) -> Result<(), Failure> {
        let name = self.shown.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
        if name.ends_with(".gltf") || name.ends_with(".glb") {
            return Err(Failure::at(&self.shown, "a glTF model, not a text clip"));
        }
        Ok(())
    }

    /// Reads a binary input whole (a glTF model): at most [`MAX_TEXT_BYTES`] and what
    /// `limit` allows.
    pub fn read_bytes(mut self, limit: &MemoryLimit) -> Result<Vec<u8>, Failure> {
        let cap = MAX_TEXT_BYTES.min(limit.bytes.unwrap_or(u64::MAX));
        if let Some(size) = self.size.filter(|&s| s > cap) {
            return Err(Failure::at(&self.shown, limit.refusal("reading this file", size)));
        }
        self.open_source()?;
        let mut out = Vec::new();
        (&mut self.source)
            .take(cap.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| Failure::at(&self.shown, format!("cannot read: {e}")))?;
        if out.len() as u64 > cap {
            return Err(Failure::at(&self.shown, limit.refusal("reading this file", out.len() as u64)));
        }
        if out.is_empty() {
            return Err(Failure::at(&self.shown, "the file is empty"));
        }
        Ok(out)
    }

    /// Reads an `.ossa` clip or an `.ossadb` database, told apart by their magic.
    pub fn read_ossa_or_database(mut self, limit: &MemoryLimit) -> Result<Loaded, Failure> {
        self.open_source()?;
        let fail = |e: io::Error| Failure::at(&self.shown, format!("cannot read: {e}"));
        let mut magic = Vec::with_capacity(4);
        (&mut self.source).take(4).read_to_end(&mut magic).map_err(fail)?;
        if magic.as_slice() != DATABASE_MAGIC {
            self.source = Source::Prefixed(Box::new(
                io::Cursor::new(magic).chain(std::mem::replace(&mut self.source, Source::Empty)),
            ));
            return self.read_ossa(limit).map(Loaded::Clip);
        }
        let wanted = limit.bytes.unwrap_or(u64::MAX);
        let bytes = AlignedBytes::read_from(io::Cursor::new(magic).chain(&mut self.source), wanted.saturating_add(1))
            .map_err(fail)?;
        if bytes.len() as u64 > wanted {
            return Err(Failure::at(&self.shown, limit.refusal("reading this database", bytes.len() as u64)));
        }
        Ok(Loaded::Database(bytes))
    }

    /// Reads an `.ossadb` database whole (index and chunks), within `limit`.
    pub fn read_database(self, limit: &MemoryLimit) -> Result<AlignedBytes, Failure> {
        let shown = self.shown.clone();
        match self.read_ossa_or_database(limit)? {
            Loaded::Database(bytes) => Ok(bytes),
            Loaded::Clip(_) => {
                Err(Failure::at(&shown, "not an ossa database (no 'OSDB' magic): this is an .ossa clip"))
            }
        }
    }

    /// Reads an `.ossa` file: its header first, so that anything else is refused after
    /// 64 bytes, then as many bytes as the header declares (at most the format's
    /// limit and what `limit` allows), into a 16-byte aligned buffer.
    pub fn read_ossa(mut self, limit: &MemoryLimit) -> Result<AlignedBytes, Failure> {
        self.open_source()?;
        let fail = |e: io::Error| Failure::at(&self.shown, format!("cannot read: {e}"));
        let mut header = Vec::with_capacity(HEADER_SIZE);
        (&mut self.source).take(HEADER_SIZE as u64).read_to_end(&mut header).map_err(fail)?;
        if header.is_empty() {
            return Err(Failure::at(&self.shown, "the file is empty"));
        }
        if !header.starts_with(&MAGIC) {
            let hint = if header.iter().all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace()) {
                ": it looks like text (use 'ossa compress' for a text clip)"
            } else {
                ""
            };
            return Err(Failure::at(&self.shown, format!("not an ossa clip (no 'OSSA' magic){hint}")));
        }
        // The declared size (the decoder checks it; here it bounds the reading).
        let declared = header.get(8..12).map_or(HEADER_SIZE as u64, |b| {
            u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])).max(HEADER_SIZE as u64)
        });
        let wanted = declared.min(MAX_OSSA_BYTES);
        if !limit.allows(wanted) {
            return Err(Failure::at(&self.shown, limit.refusal("reading this clip", wanted)));
        }
        AlignedBytes::read_from(io::Cursor::new(header).chain(&mut self.source), wanted).map_err(fail)
    }
}

const GLTF: &str = "a glTF model: ossa reads glTF from a file named .gltf or .glb (its buffers may be files beside it)";

/// Names the formats a user may hand over by mistake, from their first bytes.
fn refuse_other_formats_by_content(shown: &Path, start: &[u8]) -> Result<(), Failure> {
    let fail = |message: &str| Err(Failure::at(shown, message));
    if start.starts_with(b"glTF") {
        return fail(GLTF);
    }
    if start.starts_with(&MAGIC) {
        return fail("this is a compressed .ossa clip, not a text clip (use 'ossa info' or 'ossa decompress')");
    }
    if start.starts_with(b"Kaydara FBX Binary") {
        return fail("FBX files are not supported: ossa reads ACL text clips (.acl.sjson)");
    }
    let text = String::from_utf8_lossy(&start[..start.len().min(4096)]);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if text.starts_with('{') && text.contains("\"asset\"") {
        return fail(GLTF);
    }
    Ok(())
}
