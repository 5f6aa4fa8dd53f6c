//! Writing an output without ever destroying data.
//!
//! - A regular file (new or existing) is written whole or not at all: into a temporary
//!   file beside it, flushed to disk, then renamed over it. A new file gets the usual
//!   `0666` less the umask; a replaced file keeps its mode (and, where the system
//!   lets us, its owner).
//! - A symbolic link is followed: its target is written as above and the link stays.
//! - Something that exists and is not a regular file (`/dev/null`, a FIFO, a
//!   terminal) is written in place, never replaced by a file.
//! - `-` is standard output.
//! - An output that is the input itself (by identity: the same file reached through
//!   another name, a link, or standard output redirected to it) is refused before the
//!   input is read.
//! - Several outputs that must land together (a streaming database and its clips)
//!   are all written and synced first ([`Output::prepare`]), then renamed: a full disk
//!   stops them before any lands. Their folder, when the run created it, goes again
//!   if nothing lands in it ([`OutputFolder`]).
//! - Temporaries are removed on SIGINT, SIGTERM and SIGHUP too ([`crate::temporaries`]).

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::failure::Failure;

/// Where an output goes.
#[derive(Debug)]
pub enum Destination {
    /// Standard output.
    Stdout,
    /// An existing file that is not a regular file: written in place.
    InPlace(PathBuf),
    /// A regular file, reached through any links: written beside itself and renamed
    /// over it.
    File {
        /// The file (the links' final target).
        path: PathBuf,
        /// What it was, when it existed.
        existing: Option<fs::Metadata>,
    },
}

/// What a file is, independently of the name it was reached by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity(FileId);

#[cfg(unix)]
type FileId = (u64, u64);
#[cfg(not(unix))]
type FileId = PathBuf;

impl Identity {
    /// The identity of the file `meta` describes (`path` is its name, for systems
    /// without file numbers).
    pub fn of(meta: &fs::Metadata, path: &Path) -> Identity {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            let _ = path;
            Identity((meta.dev(), meta.ino()))
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            Identity(fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()))
        }
    }

    /// The identity of what standard output is connected to, when it is a file.
    pub fn of_stdout() -> Option<Identity> {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd as _;
            let fd = io::stdout().as_fd().try_clone_to_owned().ok()?;
            let meta = File::from(fd).metadata().ok()?;
            Some(Identity::of(&meta, Path::new("-")))
        }
        #[cfg(not(unix))]
        {
            None
        }
    }
}

/// Links followed before giving up (as the system's own limit).
const MAX_LINKS: usize = 40;

impl Destination {
    /// Finds out what `output` is, without creating or changing anything.
    pub fn resolve(output: &Path) -> Result<Destination, Failure> {
        if output.as_os_str() == "-" {
            return Ok(Destination::Stdout);
        }
        let fail = |e: io::Error| Failure::at(output, format!("cannot write output: {e}"));
        // What exists is resolved by the system, links and all (`/dev/stdout` leads to
        // a pipe that has no path); only a target that does not exist yet is found by
        // following the links by hand, to create it where the last one points.
        match fs::metadata(output) {
            Ok(meta) if meta.is_dir() => Err(Failure::at(output, "output is a directory")),
            Ok(meta) if meta.is_file() => {
                Ok(Destination::File { path: fs::canonicalize(output).map_err(fail)?, existing: Some(meta) })
            }
            Ok(_) => Ok(Destination::InPlace(output.to_owned())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Ok(Destination::File { path: follow_links(output).map_err(fail)?, existing: None })
            }
            Err(e) => Err(fail(e)),
        }
    }

    /// What the output already is, if it exists.
    pub fn identity(&self) -> Option<Identity> {
        match self {
            Destination::Stdout => Identity::of_stdout(),
            Destination::InPlace(path) => fs::metadata(path).ok().map(|m| Identity::of(&m, path)),
            Destination::File { path, existing } => existing.as_ref().map(|m| Identity::of(m, path)),
        }
    }

    /// Whether the output is standard output: `-`, or a name for the same file or
    /// pipe (`/dev/stdout`, or the file standard output is redirected to).
    pub fn is_stdout(&self) -> bool {
        match self {
            Destination::Stdout => true,
            _ => self.identity().is_some_and(|id| Identity::of_stdout() == Some(id)),
        }
    }

    /// Opens the output for writing. Nothing visible changes for a regular file until
    /// [`Output::commit`]; dropping the [`Output`] before that leaves no trace.
    pub fn create(&self, shown: &Path) -> Result<Output, Failure> {
        let fail = |e: io::Error| Failure::at(shown, format!("cannot write output: {e}"));
        let sink = match self {
            Destination::Stdout => Sink::Stdout(BufWriter::new(io::stdout())),
            Destination::InPlace(path) => {
                Sink::InPlace(BufWriter::new(fs::OpenOptions::new().write(true).open(path).map_err(fail)?))
            }
            Destination::File { path, existing } => {
                let dir = match path.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
                    _ => PathBuf::from("."),
                };
                let file = temporary_file(&dir).map_err(|e| {
                    Failure::at(
                        shown,
                        format!("cannot create the output in {}: {e}", ossa_encoder::message::path(&dir)),
                    )
                })?;
                let registered = crate::temporaries::register(file.path(), false);
                Sink::Temporary(Box::new(Temporary {
                    file: Some(BufWriter::new(file)),
                    synced: None,
                    target: path.clone(),
                    existing: existing.clone(),
                    _registered: registered,
                }))
            }
        };
        Ok(Output { sink, shown: shown.to_owned() })
    }
}

/// Follows symbolic links from `path` to the file they end at (which may not exist).
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_owned();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// A new file in `dir` with the mode a new file gets (`0666` less the umask: the
/// system applies the umask to the mode asked for at creation).
fn temporary_file(dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".ossa-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// An output being written.
pub struct Output {
    sink: Sink,
    shown: PathBuf,
}

enum Sink {
    Stdout(BufWriter<io::Stdout>),
    InPlace(BufWriter<File>),
    Temporary(Box<Temporary>),
}

/// A regular file being written beside `target`: buffered while written, then
/// (after [`Output::prepare`]) flushed and synced, waiting to be renamed.
struct Temporary {
    file: Option<BufWriter<tempfile::NamedTempFile>>,
    synced: Option<tempfile::NamedTempFile>,
    target: PathBuf,
    existing: Option<fs::Metadata>,
    /// Listed for removal on a signal while it exists.
    _registered: crate::temporaries::Registered,
}

impl Temporary {
    fn writer(&mut self) -> io::Result<&mut BufWriter<tempfile::NamedTempFile>> {
        self.file.as_mut().ok_or_else(|| io::Error::other("the output was already finished"))
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.sink {
            Sink::Stdout(w) => w.write(buf),
            Sink::InPlace(w) => w.write(buf),
            Sink::Temporary(t) => t.writer()?.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Stdout(w) => w.flush(),
            Sink::InPlace(w) => w.flush(),
            Sink::Temporary(t) => t.writer()?.flush(),
        }
    }
}

impl Output {
    /// The failure for a write that failed.
    pub fn failure(&self, e: io::Error) -> Failure {
        match self.sink {
            Sink::Stdout(_) => Failure::stdout(e),
            _ => Failure::at(&self.shown, format!("cannot write output: {e}")),
        }
    }

    /// Everything but the last step: for a regular file, its bytes flushed, its mode
    /// given and synced to disk, so that what can fail (a full disk) fails here; only
    /// the rename into place is left to [`Output::commit`].
    pub fn prepare(&mut self) -> Result<(), Failure> {
        let shown = self.shown.clone();
        let fail = |e: io::Error| Failure::at(&shown, format!("cannot write output: {e}"));
        let Sink::Temporary(t) = &mut self.sink else { return Ok(()) };
        let Some(file) = t.file.take() else { return Ok(()) };
        let tmp = file.into_inner().map_err(|e| fail(e.into_error()))?;
        if let Some(meta) = &t.existing {
            keep_mode_and_owner(tmp.as_file(), meta).map_err(fail)?;
        }
        tmp.as_file().sync_all().map_err(fail)?;
        t.synced = Some(tmp);
        Ok(())
    }

    /// Finishes the output: flushed, and for a regular file, given its mode, synced
    /// to disk and renamed into place.
    pub fn commit(mut self) -> Result<(), Failure> {
        self.prepare()?;
        let shown = self.shown;
        let fail = |e: io::Error| Failure::at(&shown, format!("cannot write output: {e}"));
        match self.sink {
            Sink::Stdout(mut w) => w.flush().map_err(Failure::stdout),
            Sink::InPlace(w) => w.into_inner().map_err(|e| fail(e.into_error()))?.flush().map_err(fail),
            Sink::Temporary(t) => {
                let tmp = t.synced.ok_or_else(|| fail(io::Error::other("the output was not written")))?;
                tmp.persist(&t.target).map_err(|e| fail(e.error))?;
                Ok(())
            }
        }
    }
}

/// Gives `file` the mode of the file it replaces, and its owner and group when the
/// system allows (a user may only give files away as root; otherwise the new file is
/// the user's, as after any editor's save).
fn keep_mode_and_owner(file: &File, replaced: &fs::Metadata) -> io::Result<()> {
    file.set_permissions(replaced.permissions())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let now = file.metadata()?;
        if (now.uid(), now.gid()) != (replaced.uid(), replaced.gid()) {
            let _ = std::os::unix::fs::fchown(file, Some(replaced.uid()), Some(replaced.gid()));
            // Changing the owner may clear set-user-id bits: set the mode again.
            file.set_permissions(replaced.permissions())?;
        }
    }
    Ok(())
}

/// A folder outputs go into: created when missing (and then removed again, if still
/// empty, when the guard is dropped: a run that wrote nothing leaves nothing behind).
/// [`OutputFolder::lock`] keeps other `ossa` runs from writing into it at the same
/// time.
#[derive(Debug)]
pub struct OutputFolder {
    path: PathBuf,
    created: bool,
    /// The folder opened and locked (`flock`), while locked.
    lock: Option<File>,
}

impl OutputFolder {
    /// The folder at `path`, created when missing; an existing file there is refused.
    pub fn prepare(path: &Path) -> Result<OutputFolder, Failure> {
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => Ok(OutputFolder { path: path.to_owned(), created: false, lock: None }),
            Ok(_) => Err(Failure::at(path, "the output exists and is not a folder")),
            Err(_) => {
                fs::create_dir_all(path)
                    .map_err(|e| Failure::at(path, format!("cannot create the output folder: {e}")))?;
                Ok(OutputFolder { path: path.to_owned(), created: true, lock: None })
            }
        }
    }

    /// Takes the folder for this run alone: another `ossa` run writing into it
    /// (which takes the same lock) is refused rather than mixing its files with
    /// these. Released when the guard is dropped. (On systems without `flock` on
    /// folders, nothing is locked.)
    pub fn lock(&mut self) -> Result<(), Failure> {
        #[cfg(unix)]
        {
            let folder = File::open(&self.path).map_err(|e| Failure::at(&self.path, format!("cannot open: {e}")))?;
            match folder.try_lock() {
                Ok(()) => self.lock = Some(folder),
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(Failure::at(
                        &self.path,
                        "another ossa run is writing into this folder: wait for it, or choose another -o",
                    ))
                }
                Err(fs::TryLockError::Error(e)) => {
                    return Err(Failure::at(&self.path, format!("cannot lock the folder: {e}")))
                }
            }
        }
        Ok(())
    }
}

impl Drop for OutputFolder {
    fn drop(&mut self) {
        self.lock = None;
        if self.created {
            // Removes the folder only when empty: whatever landed in it stays.
            let _ = fs::remove_dir(&self.path);
        }
    }
}
