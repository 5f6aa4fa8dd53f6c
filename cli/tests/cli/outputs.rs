//! Outputs never destroy data: devices and FIFOs are written in place, links are
//! followed and kept, the input is never overwritten, modes are the user's.

use std::fs;
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ossa_decoder::Clip;
use ossa_encoder::AlignedBytes;

use crate::{assert_error, example, leftovers, ossa, ossa_after, s, stderr, stdout};

/// Whether `bytes` are a valid `.ossa` clip with its checksum.
fn is_clip(bytes: &[u8]) -> bool {
    Clip::from_bytes_verified(&AlignedBytes::new(bytes)).is_ok()
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success());
}

#[cfg(unix)]
#[test]
fn a_fifo_output_is_written_in_place_not_replaced() {
    use std::os::unix::fs::FileTypeExt as _;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.fifo");
    mkfifo(&fifo);
    let reader_path = fifo.clone();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        fs::File::open(reader_path).unwrap().read_to_end(&mut bytes).unwrap();
        bytes
    });
    let o = ossa(&["compress", s(&example()), "-o", s(&fifo)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let received = reader.join().unwrap();
    assert!(is_clip(&received), "the reader got {} bytes that are not a clip", received.len());
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    assert!(leftovers(dir.path()).is_empty());
}

/// A character device like `/dev/null` (made here, not the system's: a regression
/// would otherwise replace the machine's `/dev/null`). Needs the right to create
/// device nodes; without it the test says so and checks the FIFO case only.
#[cfg(unix)]
#[test]
fn a_device_output_is_written_in_place_not_replaced() {
    use std::os::unix::fs::FileTypeExt as _;
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    let made = Command::new("mknod").arg(&null).args(["c", "1", "3"]).stderr(Stdio::null()).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipping the device case: cannot create a device node here (not root)");
        return;
    }
    let o = ossa(&["compress", s(&example()), "-o", s(&null)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let packed = dir.path().join("wave.ossa");
    assert!(ossa(&["compress", s(&example()), "-o", s(&packed)]).status.success());
    let o = ossa(&["decompress", s(&packed), "-o", s(&null)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::symlink_metadata(&null).unwrap().file_type().is_char_device(), "the device was replaced");
    assert!(leftovers(dir.path()).is_empty());
}

#[cfg(unix)]
#[test]
fn a_link_is_followed_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir(d.join("store")).unwrap();
    // An existing target, through a relative link in another folder.
    fs::write(d.join("store/real.ossa"), b"old").unwrap();
    std::os::unix::fs::symlink("store/real.ossa", d.join("link.ossa")).unwrap();
    let o = ossa(&["compress", s(&example()), "-o", s(&d.join("link.ossa"))]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::symlink_metadata(d.join("link.ossa")).unwrap().file_type().is_symlink(), "the link was replaced");
    assert_eq!(fs::read_link(d.join("link.ossa")).unwrap(), Path::new("store/real.ossa"));
    assert!(is_clip(&fs::read(d.join("store/real.ossa")).unwrap()));
    // A dangling link: its target is created.
    std::os::unix::fs::symlink("store/new.acl.sjson", d.join("dangling")).unwrap();
    let o = ossa(&["decompress", s(&d.join("store/real.ossa")), "-o", s(&d.join("dangling"))]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::symlink_metadata(d.join("dangling")).unwrap().file_type().is_symlink());
    assert!(fs::read_to_string(d.join("store/new.acl.sjson")).unwrap().starts_with("version = 5"));
    // A loop of links is an error, not a hang.
    std::os::unix::fs::symlink("loop-b", d.join("loop-a")).unwrap();
    std::os::unix::fs::symlink("loop-a", d.join("loop-b")).unwrap();
    assert_error(&ossa(&["compress", s(&example()), "-o", s(&d.join("loop-a"))]), &["loop-a", "symbolic links"]);
    assert!(leftovers(d).is_empty() && leftovers(&d.join("store")).is_empty());
}

#[test]
fn dash_is_standard_output_and_the_summary_goes_to_standard_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wave.ossa");
    assert!(ossa(&["compress", s(&example()), "-o", s(&file)]).status.success());
    let o = ossa(&["compress", s(&example()), "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, fs::read(&file).unwrap(), "standard output holds the same bytes as the file");
    assert!(stderr(&o).contains("max error"), "summary on standard error: {}", stderr(&o));
    let o = ossa(&["decompress", s(&file), "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let clip = ossa_encoder::formats::acl_text::read_clip(&text, "x").unwrap();
    assert_eq!((clip.bones.len(), clip.sample_count), (8, 48));
    assert!(stderr(&o).contains("8 bones, 48 samples"), "{}", stderr(&o));
    // `/dev/stdout` is standard output too, even when it is a pipe.
    #[cfg(target_os = "linux")]
    {
        let o = ossa(&["decompress", s(&file), "-o", "/dev/stdout"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stdout(&o), text, "only the clip on standard output");
        assert!(stderr(&o).contains("8 bones, 48 samples"), "{}", stderr(&o));
    }
    // And standard input as the input.
    let o = crate::ossa_with_stdin(&["info", "-"], &fs::read(&file).unwrap());
    assert!(o.status.success() && stdout(&o).contains("checksum"), "{}", stderr(&o));
}

#[test]
fn the_input_is_never_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = d.join("walk.acl.sjson");
    fs::copy(example(), &input).unwrap();
    let original = fs::read(&input).unwrap();
    let same_by_other_name = d.join(".").join("walk.acl.sjson");
    let mut cases = vec![input.clone(), same_by_other_name];
    #[cfg(unix)]
    {
        fs::hard_link(&input, d.join("hard.ossa")).unwrap();
        std::os::unix::fs::symlink(&input, d.join("soft.ossa")).unwrap();
        cases.push(d.join("hard.ossa"));
        cases.push(d.join("soft.ossa"));
    }
    for output in &cases {
        let o = ossa(&["compress", s(&input), "-o", s(output)]);
        assert_error(&o, &["walk.acl.sjson", "refusing to overwrite"]);
        assert_eq!(fs::read(&input).unwrap(), original, "{}: the input changed", output.display());
    }
    // Standard output appended to the input file.
    let appended = fs::OpenOptions::new().append(true).open(&input).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ossa"))
        .args(["compress", s(&input), "-o", "-"])
        .stdout(appended)
        .output()
        .unwrap();
    assert_error(&o, &["refusing to overwrite"]);
    assert_eq!(fs::read(&input).unwrap(), original);
    // `decompress` too, onto its own .ossa.
    let packed = d.join("walk.ossa");
    assert!(ossa(&["compress", s(&input), "-o", s(&packed)]).status.success());
    let before = fs::read(&packed).unwrap();
    assert_error(&ossa(&["decompress", s(&packed), "-o", s(&packed)]), &["refusing to overwrite"]);
    assert_eq!(fs::read(&packed).unwrap(), before);
    assert!(leftovers(d).is_empty());
}

/// A FIFO that is both input and output: had the tool opened the input first, it
/// would wait forever for a writer. It must refuse at once.
#[cfg(unix)]
#[test]
fn the_input_is_refused_as_output_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("loop.fifo");
    mkfifo(&fifo);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ossa"))
        .args(["compress", s(&fifo), "-o", s(&fifo)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("ossa opened the input before checking the output");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_error(&child.wait_with_output().unwrap(), &["refusing to overwrite"]);
}

#[cfg(unix)]
#[test]
fn new_files_follow_the_umask_and_replaced_files_keep_their_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    for (umask, expected) in [("022", 0o644), ("027", 0o640), ("077", 0o600), ("000", 0o666)] {
        let out = dir.path().join(format!("new-{umask}.ossa"));
        let o = ossa_after(&format!("umask {umask}"), &["compress", s(&example()), "-o", s(&out)]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(mode(&out), expected, "umask {umask}");
        let text = dir.path().join(format!("new-{umask}.acl.sjson"));
        let o = ossa_after(&format!("umask {umask}"), &["decompress", s(&out), "-o", s(&text)]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(mode(&text), expected, "umask {umask}, decompress");
    }
    for kept in [0o600, 0o755, 0o444, 0o640] {
        let out = dir.path().join(format!("kept-{kept:o}.ossa"));
        fs::write(&out, b"old").unwrap();
        fs::set_permissions(&out, fs::Permissions::from_mode(kept)).unwrap();
        let o = ossa_after("umask 000", &["compress", s(&example()), "-o", s(&out)]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(mode(&out), kept, "mode {kept:o} not kept");
        assert!(is_clip(&fs::read(&out).unwrap()));
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_failed_run_leaves_the_existing_output_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("keep.ossa");
    assert!(ossa(&["compress", s(&example()), "-o", s(&out)]).status.success());
    let before = fs::read(&out).unwrap();
    let bad = dir.path().join("bad.acl.sjson");
    fs::write(
        &bad,
        b"version = 5\nclip = { num_samples = 2 sample_rate = 30 }\nbones = [ { name = \"a\" parnet = \"\" } ]\n",
    )
    .unwrap();
    assert_error(&ossa(&["compress", s(&bad), "-o", s(&out)]), &["parnet"]);
    assert_eq!(fs::read(&out).unwrap(), before);
    // A truncated .ossa does not replace a good text output either.
    let text = dir.path().join("keep.acl.sjson");
    assert!(ossa(&["decompress", s(&out), "-o", s(&text)]).status.success());
    let text_before = fs::read(&text).unwrap();
    let cut = dir.path().join("cut.ossa");
    fs::write(&cut, &before[..before.len() / 2]).unwrap();
    assert_error(&ossa(&["decompress", s(&cut), "-o", s(&text)]), &["cut.ossa"]);
    assert_eq!(fs::read(&text).unwrap(), text_before);
    assert!(leftovers(dir.path()).is_empty());
}
