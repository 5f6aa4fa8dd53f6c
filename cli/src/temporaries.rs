//! Temporary files and folders, removed however the program ends.
//!
//! Outputs are written into a temporary beside their target and renamed over it
//! (`output`). When the program returns or panics, the temporary's own guard removes
//! it; SIGINT, SIGTERM and SIGHUP would end the process without running any guard, so
//! every temporary is also listed here, and the handler [`install`] sets up removes
//! what is listed before the process exits. A build farm that stops a long
//! `decompress` then finds nothing left behind.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Every temporary alive, by the id of its [`Registered`] guard.
static LIVE: Mutex<Vec<(u64, PathBuf, bool)>> = Mutex::new(Vec::new());
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Removes every listed temporary when SIGINT, SIGTERM or SIGHUP arrives (Ctrl-C
/// and the like on other systems), then ends the process with status 130, after a
/// line on standard error. Called once, at start.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        remove_all();
        eprintln!("ossa: interrupted; no output was written or replaced");
        std::process::exit(130);
    });
}

/// Removes everything listed (the signal handler's work).
fn remove_all() {
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    for (_, path, folder) in live.iter() {
        let _ = if *folder { std::fs::remove_dir_all(path) } else { std::fs::remove_file(path) };
    }
}

/// A temporary listed for removal on a signal; dropping the guard takes it off the
/// list (its owner then removes it, or has renamed it into place).
#[derive(Debug)]
pub struct Registered(u64);

/// Lists the temporary file (or, with `folder`, the folder and all it holds) at
/// `path`.
pub fn register(path: &Path, folder: bool) -> Registered {
    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).push((id, path.to_owned(), folder));
    Registered(id)
}

impl Drop for Registered {
    fn drop(&mut self) {
        LIVE.lock().unwrap_or_else(|e| e.into_inner()).retain(|(id, _, _)| *id != self.0);
    }
}
