//! Tests of the `ossa` command-line tool, run as a user would: the built binary,
//! real files in a temporary folder, exit statuses, messages, and the files left.

mod additive;
mod batch;
mod bytes;
mod contract;
mod conventions;
mod database;
mod gltf;
mod input_mistakes;
mod integrity;
mod key_frames;
mod looping;
mod memory;
mod newcomer;
mod outputs;
mod track_lists;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs `ossa` with `args`.
pub fn ossa(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ossa")).args(args).stdin(Stdio::null()).output().expect("run ossa")
}

/// Runs `ossa` with `args` and `input` on its standard input.
pub fn ossa_with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ossa"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ossa");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // The tool may stop reading early (that is often the point): ignore a closed pipe.
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for ossa");
    feeder.join().unwrap();
    out
}

/// Runs `ossa` with `args` under `sh`, after `setup` (a shell command such as
/// `umask 027` or `ulimit -v 100000`).
pub fn ossa_after(setup: &str, args: &[&str]) -> Output {
    let mut script = format!("{setup}; exec \"$0\"");
    for i in 0..args.len() {
        script.push_str(&format!(" \"${}\"", i + 1));
    }
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_ossa"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run ossa under sh")
}

/// The example clip of the repository.
pub fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/wave.acl.sjson")
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The failure contract: exit status 2, one line on standard error starting
/// `ossa: error:` and containing every one of `needles`, no panic, no backtrace.
pub fn assert_error(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "expected exit status 2: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line expected: {err}");
    assert!(err.starts_with("ossa: error: "), "{err}");
    for needle in needles {
        assert!(err.contains(needle), "expected '{needle}' in: {err}");
    }
    assert!(!err.contains("panicked") && !err.contains("internal error"), "{err}");
}

/// Writes `contents` to a file in `dir`, runs `ossa compress` on it, and checks the
/// failure contract: exit 2, nothing on stdout, one line on stderr naming the file
/// and containing `needle`, no output left behind.
pub fn assert_refused(dir: &Path, name: &str, contents: &[u8], needle: &str) {
    let input = dir.join(name);
    std::fs::write(&input, contents).unwrap();
    let out = dir.join(format!("{name}.ossa"));
    let o = ossa(&["compress", s(&input), "-o", s(&out)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{name}: {err}");
    assert!(stdout(&o).is_empty(), "{name}");
    assert_eq!(err.trim_end().lines().count(), 1, "{name}: one line expected: {err}");
    assert!(err.contains(name), "{name}: message does not name the file: {err}");
    assert!(err.to_lowercase().contains(&needle.to_lowercase()), "{name}: expected '{needle}' in: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "{name}: output left behind");
}

/// A small clip in ACL's text format.
pub fn clip_text(bones: &str, tracks: &str, samples: &str) -> String {
    format!("version = 1\nclip = {{ name = \"t\" num_samples = {samples} sample_rate = 30 }}\nbones = [ {bones} ]\ntracks = [ {tracks} ]\n")
}

/// The files in `dir` whose names end with `.tmp` (temporary outputs left behind).
pub fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect()
}
