//! How much memory a command may use: `--memory-limit`, or by default three
//! quarters of what the machine can give this process now.
//!
//! "What it can give" is the smallest of the system's available memory, the free
//! memory of the process's control group (containers, build-farm slots) and the
//! address-space limit (`ulimit -v`). Three quarters leaves room for the rest of the
//! machine and for what the estimate does not see (allocator slack, thread stacks).

use std::fmt;
use std::str::FromStr;

use ossa_encoder::memory::bytes;

/// A memory limit and where it comes from (for messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryLimit {
    /// Bytes, or `None` for no limit.
    pub bytes: Option<u64>,
    origin: Origin,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Origin {
    /// `--memory-limit`.
    Flag,
    /// The default: a share of what was found available.
    Default { available: u64, source: &'static str },
    /// Nothing could be measured on this system.
    Unknown,
    /// One of `parts` equal shares of a limit of `whole` bytes (a batch's jobs).
    Share { parts: u64, whole: u64 },
}

/// The share of the available memory used by default.
const DEFAULT_SHARE: (u64, u64) = (3, 4);

impl MemoryLimit {
    /// The default limit, measured now.
    pub fn detect() -> MemoryLimit {
        let mut system = sysinfo::System::new();
        system.refresh_memory();
        let mut found: Option<(u64, &'static str)> = None;
        let mut consider = |bytes: u64, source: &'static str| {
            if bytes > 0 && found.is_none_or(|(b, _)| bytes < b) {
                found = Some((bytes, source));
            }
        };
        consider(system.available_memory(), "the memory available");
        if let Some(group) = system.cgroup_limits() {
            consider(group.free_memory, "the control group's free memory");
        }
        #[cfg(unix)]
        if let Ok((soft, _)) = rlimit::getrlimit(rlimit::Resource::AS) {
            if soft != rlimit::INFINITY {
                consider(soft, "the address-space limit (ulimit -v)");
            }
        }
        match found {
            Some((available, source)) => MemoryLimit {
                bytes: Some(available / DEFAULT_SHARE.1 * DEFAULT_SHARE.0),
                origin: Origin::Default { available, source },
            },
            None => MemoryLimit { bytes: None, origin: Origin::Unknown },
        }
    }

    /// One of `parts` equal shares of this limit: what each of `parts` jobs running at
    /// once may use, so that together they stay within it.
    pub fn share(&self, parts: u64) -> MemoryLimit {
        match self.bytes {
            Some(whole) if parts > 1 => {
                MemoryLimit { bytes: Some(whole / parts), origin: Origin::Share { parts, whole } }
            }
            _ => self.clone(),
        }
    }

    /// Whether `needed` bytes fit.
    pub fn allows(&self, needed: u64) -> bool {
        self.bytes.is_none_or(|limit| needed <= limit)
    }

    /// The message for a need above the limit: `what` needs about `needed`.
    pub fn refusal(&self, what: &str, needed: u64) -> String {
        format!("{what} needs about {} of memory, more than {self}; use --memory-limit to change it", bytes(needed))
    }
}

impl fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.bytes, &self.origin) {
            (None, _) => f.write_str("no limit"),
            (Some(b), Origin::Flag) => write!(f, "the memory limit of {} (--memory-limit)", bytes(b)),
            (Some(b), Origin::Default { available, source }) => write!(
                f,
                "the memory limit of {} ({}/{} of {source}, {})",
                bytes(b),
                DEFAULT_SHARE.0,
                DEFAULT_SHARE.1,
                bytes(*available)
            ),
            (Some(b), Origin::Unknown) => write!(f, "the memory limit of {}", bytes(b)),
            (Some(b), Origin::Share { parts, whole }) => write!(
                f,
                "{} (1/{parts} of the memory limit of {}: {parts} clips are compressed at once; \
                 RAYON_NUM_THREADS=1 gives one clip all of it)",
                bytes(b),
                bytes(*whole)
            ),
        }
    }
}

impl FromStr for MemoryLimit {
    type Err = String;

    /// `none`, or a size: `512M`, `8G` (powers of 1000), `8GiB` (powers of 1024),
    /// `1.5 GB`, or a plain number of bytes.
    fn from_str(text: &str) -> Result<MemoryLimit, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("none") || text.eq_ignore_ascii_case("unlimited") {
            return Ok(MemoryLimit { bytes: None, origin: Origin::Flag });
        }
        match text.parse::<bytesize::ByteSize>() {
            Ok(size) if size.as_u64() > 0 => Ok(MemoryLimit { bytes: Some(size.as_u64()), origin: Origin::Flag }),
            Ok(_) => Err("a memory limit must be above zero (or 'none')".into()),
            Err(_) => Err("expected a size such as 512M, 8G, 16GiB, or 'none'".into()),
        }
    }
}
