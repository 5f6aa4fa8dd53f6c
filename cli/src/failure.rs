//! How the tool fails: one line naming the file and the problem, exit status 2; or,
//! when the reader of its output went away, quietly.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use ossa_encoder::message;

/// Why a command stopped.
#[derive(Debug)]
pub enum Failure {
    /// A problem for the user: the file it concerns (if any) and what is wrong.
    Problem {
        /// The file.
        path: Option<PathBuf>,
        /// What is wrong, one line.
        message: String,
    },
    /// Standard output was closed by its reader (`ossa stats … | head -1`): nothing
    /// is wrong and nothing more needs saying.
    ClosedPipe,
}

impl Failure {
    /// A problem with `path`.
    pub fn at(path: &Path, message: impl fmt::Display) -> Failure {
        Failure::Problem { path: Some(path.to_owned()), message: message.to_string() }
    }

    /// A problem that concerns no file.
    pub fn general(message: impl fmt::Display) -> Failure {
        Failure::Problem { path: None, message: message.to_string() }
    }

    /// The failure to report when writing to standard output failed.
    pub fn stdout(e: io::Error) -> Failure {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Failure::ClosedPipe
        } else {
            Failure::general(format!("cannot write to standard output: {e}"))
        }
    }

    /// Prints the failure on standard error (nothing for a closed pipe). A failure
    /// to print is ignored: there is nowhere left to report it.
    pub fn report(&self) {
        if let Failure::Problem { path, message } = self {
            let line = match path {
                Some(p) => format!("ossa: error: {}: {message}\n", message::path(p)),
                None => format!("ossa: error: {message}\n"),
            };
            let _ = io::stderr().write_all(line.as_bytes());
        }
    }
}

/// Writes one line to standard output.
pub fn say(line: impl fmt::Display) -> Result<(), Failure> {
    writeln!(io::stdout().lock(), "{line}").map_err(Failure::stdout)
}

/// Writes one line to standard error (for summaries when standard output carries
/// the data itself).
pub fn note(line: impl fmt::Display) {
    let _ = writeln!(io::stderr().lock(), "{line}");
}
