//! Nothing corrupt passes and nothing is left behind: a corrupted database chunk is
//! refused by `decompress` as by `info`; a database is written whole or not at all,
//! by one run at a time; a run stopped by a signal leaves no temporary; a shard or a
//! folder named by mistake is said so; and the summaries count what they write.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::{assert_error, ossa, ossa_after, s, stderr, stdout};

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../examples/{name}")).display().to_string()
}

/// A database of three examples in small chunks, in `dir/db`.
fn database(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("db");
    let o = ossa(&[
        "database",
        &example("wave.acl.sjson"),
        &example("cycle.acl.sjson"),
        &example("glide.acl.sjson"),
        "-o",
        s(&out),
        "--chunk-size",
        "256",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// One byte flipped in the medium tier's first chunk: `info` and `decompress` at the
/// fidelities that stream it in both refuse the database; the lowest, which reads no
/// chunk, still decodes.
#[test]
fn decompress_refuses_a_corrupted_chunk_as_info_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let path = db.join("database.ossadb");
    let mut file = fs::read(&path).unwrap();
    let index = ossa_decoder::Database::from_bytes(&file).unwrap();
    let chunk = index.chunk(ossa_decoder::Tier::Medium, 0).unwrap();
    file[chunk.file_offset as usize + 1] ^= 0x20;
    fs::write(&path, &file).unwrap();
    assert_error(&ossa(&["info", s(&path)]), &["corrupted"]);
    let clip = db.join("wave.ossa");
    let out = dir.path().join("wave.acl.sjson");
    for fidelity in ["highest", "medium"] {
        let o = ossa(&["decompress", s(&clip), "--database", s(&path), "--fidelity", fidelity, "-o", s(&out)]);
        assert_error(&o, &["database.ossadb", "checksum"]);
        assert!(!out.exists(), "{fidelity}: nothing written");
    }
    let o = ossa(&["decompress", s(&clip), "--database", s(&path), "--fidelity", "lowest", "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A file-size limit (as a full disk would) reached by the third output: no file of
/// the database lands, and the folder the run created is gone.
#[test]
fn a_database_that_cannot_be_written_whole_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sizes = database(dir.path());
    let size = |name: &str| fs::metadata(sizes.join(name)).unwrap().len();
    let (small, large) = (size("glide.ossa"), size("wave.ossa"));
    assert!(small < large);
    // 512-byte blocks (`ulimit -f`): room for glide's clip, not for wave's.
    let blocks = small.div_ceil(512);
    assert!(blocks * 512 < large, "{small} B and {large} B need a limit between them");
    let out = dir.path().join("full");
    let o = ossa_after(
        &format!("ulimit -f {blocks}; trap '' XFSZ"),
        &[
            "database",
            &example("glide.acl.sjson"),
            &example("cycle.acl.sjson"),
            &example("wave.acl.sjson"),
            "-o",
            s(&out),
            "--chunk-size",
            "256",
        ],
    );
    assert_error(&o, &["cannot write output"]);
    assert!(!out.exists(), "the folder the run created is removed: {:?}", fs::read_dir(&out).map(|d| d.count()));
    // Into a folder that exists: it is left as it was.
    fs::create_dir(&out).unwrap();
    fs::write(out.join("keep.txt"), "mine").unwrap();
    let o = ossa_after(
        &format!("ulimit -f {blocks}; trap '' XFSZ"),
        &["database", &example("glide.acl.sjson"), &example("wave.acl.sjson"), "-o", s(&out)],
    );
    assert!(!o.status.success());
    let left: Vec<String> =
        fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(left, ["keep.txt"], "nothing added, nothing left behind");
}

/// A folder another run writes into (its lock held here) is refused rather than
/// shared: two databases never mix their files.
#[test]
fn a_second_run_into_the_same_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("db");
    fs::create_dir(&out).unwrap();
    let folder = fs::File::open(&out).unwrap();
    folder.try_lock().unwrap();
    let args = ["database", &example("glide.acl.sjson"), &example("cycle.acl.sjson"), "-o", s(&out)];
    assert_error(&ossa(&args), &["another ossa run is writing into this folder"]);
    assert_eq!(fs::read_dir(&out).unwrap().count(), 0);
    folder.unlock().unwrap();
    let o = ossa(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A clip long enough that writing it as text takes a while (4 bones, 150,000
/// samples), quick to compress: its bones hold still but the first, which turns
/// slowly.
fn long_clip(dir: &Path) -> std::path::PathBuf {
    use ossa_encoder::{Bone, BoneTrack, RawClip, RawTransform, Settings};
    let (bones, samples) = (4usize, 150_000usize);
    let clip = RawClip {
        name: "long".into(),
        sample_rate: 30.0,
        sample_count: samples,
        bones: (0..bones)
            .map(|b| Bone {
                name: format!("b{b}"),
                parent: b.checked_sub(1),
                shell_distance: 3.0,
                bind_pose: RawTransform::IDENTITY,
            })
            .collect(),
        tracks: (0..bones)
            .map(|b| {
                let angle = |s: usize| if b == 0 { 0.3 * ((s as f64) * 0.0001).sin() } else { 0.1 * b as f64 };
                BoneTrack {
                    rotations: (0..samples)
                        .map(|s| [0.0, (angle(s) / 2.0).sin(), 0.0, (angle(s) / 2.0).cos()])
                        .collect(),
                    translations: vec![[0.0, 10.0, 0.0]; samples],
                    scales: vec![[1.0; 3]; samples],
                }
            })
            .collect(),
        additive: None,
        source: Default::default(),
    };
    let out = ossa_encoder::compress(&clip, &Settings::default()).unwrap();
    let path = dir.join("long.ossa");
    fs::write(&path, &*out.bytes).unwrap();
    path
}

/// SIGINT, SIGTERM and SIGHUP while `decompress` writes a long clip: the temporary
/// it was writing is removed, the output does not exist, the status is 130.
#[cfg(unix)]
#[test]
fn a_signal_leaves_no_temporary_behind() {
    let dir = tempfile::tempdir().unwrap();
    let clip = long_clip(dir.path());
    let out_dir = dir.path().join("out");
    fs::create_dir(&out_dir).unwrap();
    let out = out_dir.join("long.acl.sjson");
    for signal in ["INT", "TERM", "HUP"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ossa"))
            .args(["decompress", s(&clip), "-o", s(&out)])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Once the temporary exists (and has some of the text), the signal.
        let started = std::time::Instant::now();
        let temporary =
            || fs::read_dir(&out_dir).unwrap().flatten().find(|e| e.file_name().to_string_lossy().ends_with(".tmp"));
        while temporary().is_none_or(|e| e.metadata().map_or(0, |m| m.len()) == 0) {
            assert!(started.elapsed().as_secs() < 120, "no temporary appeared");
            assert!(child.try_wait().unwrap().is_none(), "{signal}: decompress ended before the signal");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let killed = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap();
        assert!(killed.success());
        let result = child.wait_with_output().unwrap();
        assert_eq!(result.status.code(), Some(130), "{signal}: {}", String::from_utf8_lossy(&result.stderr));
        assert!(String::from_utf8_lossy(&result.stderr).contains("interrupted"), "{signal}");
        let left: Vec<_> = fs::read_dir(&out_dir).unwrap().flatten().map(|e| e.file_name()).collect();
        assert!(left.is_empty(), "{signal}: left behind {left:?}");
    }
}

/// `--shard` writes into a folder: an output named as a file is refused, and a
/// shard that holds none of the clips says so.
#[test]
fn shards_say_what_they_hold_and_refuse_a_file_output() {
    let dir = tempfile::tempdir().unwrap();
    let wave = example("wave.acl.sjson");
    let file = dir.path().join("one.ossa");
    assert_error(&ossa(&["compress", &wave, "-o", s(&file), "--shard", "2/3"]), &["one.ossa", "give -o a folder"]);
    assert!(!file.exists());
    let out = dir.path().join("shards");
    let mut held = 0;
    for k in 1..=3 {
        let o = ossa(&["compress", &wave, "-o", s(&out), "--shard", &format!("{k}/3")]);
        assert!(o.status.success(), "{}", stderr(&o));
        let note = stderr(&o);
        assert!(note.contains(&format!("shard {k}/3 holds")), "{note}");
        if note.contains("holds 1 of the 1") {
            held += 1;
        } else {
            assert!(note.contains("holds 0 of the 1 clip(s) given: nothing to do"), "{note}");
        }
    }
    assert_eq!(held, 1, "one shard holds the clip");
}

/// `decompress -o FOLDER` (existing, or named with a trailing `/`) writes
/// FOLDER/NAME.acl.sjson, as `compress` writes NAME.ossa into one; and the summary
/// counts a wrapping clip's samples as the text and the glTF export both hold them.
#[test]
fn decompress_writes_into_a_folder_and_counts_the_samples_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("cycle.ossa");
    let o = ossa(&["compress", &example("cycle.acl.sjson"), "-o", s(&clip)]);
    assert!(o.status.success() && stdout(&o).contains("wrap"), "{}", stderr(&o));
    let existing = dir.path().join("existing");
    fs::create_dir(&existing).unwrap();
    let o = ossa(&["decompress", s(&clip), "-o", s(&existing)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(existing.join("cycle.acl.sjson").is_file());
    let text_line = stdout(&o);
    let fresh = format!("{}/", dir.path().join("fresh").display());
    let o = ossa(&["decompress", s(&clip), "-o", &fresh]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join("fresh/cycle.acl.sjson").is_file());
    let model = dir.path().join("cycle.gltf");
    let o = ossa(&["decompress", s(&clip), "-o", s(&model)]);
    assert!(o.status.success(), "{}", stderr(&o));
    // 41 samples, the last the first again, in both.
    assert!(text_line.contains("41 samples") && stdout(&o).contains("41 samples"), "{text_line} / {}", stdout(&o));
}

/// `stats` on a folder holding a scalar track list skips it, as `database` does, and
/// refuses one named; on nothing it prints no negative zero.
#[test]
fn stats_skips_track_lists_in_folders_as_database_does() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("mixed");
    fs::create_dir(&folder).unwrap();
    fs::copy(example("wave.acl.sjson"), folder.join("wave.acl.sjson")).unwrap();
    fs::copy(example("weights.acl.sjson"), folder.join("weights.acl.sjson")).unwrap();
    let o = ossa(&["stats", s(&folder)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("weights.acl.sjson: skipped, a scalar track list"), "{}", stderr(&o));
    assert!(stdout(&o).contains("total (1 clips"), "{}", stdout(&o));
    let o = ossa(&["database", s(&folder), "-o", s(&dir.path().join("db"))]);
    assert!(o.status.success() && stderr(&o).contains("weights.acl.sjson: skipped"), "{}", stderr(&o));
    let o = ossa(&["stats", &example("weights.acl.sjson")]);
    assert!(!o.status.success() && stderr(&o).contains("weights.acl.sjson: a scalar track list"), "{}", stderr(&o));
    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let o = ossa(&["stats", s(&empty)]);
    assert!(!stdout(&o).contains("-0.000"), "{}", stdout(&o));
}

/// A glTF model that fails to import into `-o DIR/` leaves no folder behind.
#[test]
fn a_failed_import_leaves_no_empty_folder() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("broken.gltf");
    fs::write(&model, "{ \"asset\": { \"version\": \"2.0\" }, \"nodes\": [] }").unwrap();
    let out = dir.path().join("out");
    let o = ossa(&["compress", s(&model), "-o", &format!("{}/", out.display())]);
    assert!(!o.status.success());
    assert!(!out.exists(), "no empty folder left");
}
