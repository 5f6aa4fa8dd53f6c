//! Batches: `ossa compress` and `ossa stats` over many clips and folders, on every
//! core: a broken file is reported by name while the others are written, the bytes do
//! not depend on the thread count, and shards split a batch without overlap.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::{example, s, stderr, stdout};

/// Runs `ossa` with `threads` rayon threads.
fn ossa_threads(args: &[&str], threads: usize) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ossa"))
        .args(args)
        .env("RAYON_NUM_THREADS", threads.to_string())
        .stdin(Stdio::null())
        .output()
        .expect("run ossa")
}

/// The `.ossa` files of a folder: name → bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect()
}

/// Four example clips and a broken one in a folder of their own.
fn inputs(dir: &Path) -> std::path::PathBuf {
    let folder = dir.join("clips");
    std::fs::create_dir_all(&folder).unwrap();
    for name in ["wave", "cycle", "glide", "weights"] {
        std::fs::copy(example().with_file_name(format!("{name}.acl.sjson")), folder.join(format!("{name}.acl.sjson")))
            .unwrap();
    }
    std::fs::write(folder.join("broken.acl.sjson"), "version = 1\nclip = {\n  num_samples = 3\n").unwrap();
    folder
}

#[test]
fn a_batch_writes_every_good_clip_and_names_the_broken_one() {
    let dir = tempfile::tempdir().unwrap();
    let folder = inputs(dir.path());
    let blink = example().with_file_name("blink.acl.sjson");
    let out = dir.path().join("out");
    let o = ossa_threads(&["compress", s(&folder), s(&blink), "-o", s(&out), "--json"], 2);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("broken.acl.sjson") && err.contains("1 of 6 clips failed"), "{err}");
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["clips"].as_array().unwrap().len(), 5, "{v}");
    assert!(v["failures"][0]["clip"].as_str().unwrap().ends_with("broken.acl.sjson"), "{v}");
    let written: Vec<String> = files(&out).into_keys().collect();
    assert_eq!(written, ["blink.ossa", "cycle.ossa", "glide.ossa", "wave.ossa", "weights.ossa"]);
    // Each file is a valid clip (or track list) that `info` reads.
    for name in &written {
        let o = crate::ossa(&["info", s(&out.join(name))]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
    }
    // Text mode: one line per clip, in input order (folder sorted, then blink).
    let out_text = dir.path().join("text");
    let o = ossa_threads(&["compress", s(&folder), s(&blink), "-o", s(&out_text)], 2);
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    let order: Vec<&str> = ["cycle", "glide", "wave", "weights", "blink"].to_vec();
    assert_eq!(lines.len(), order.len(), "{lines:?}");
    for (line, name) in lines.iter().zip(order) {
        assert!(line.contains(&format!("{name}.ossa")), "{line}");
    }
}

#[test]
fn a_batch_writes_the_same_bytes_on_one_core_or_two() {
    let dir = tempfile::tempdir().unwrap();
    let folder = inputs(dir.path());
    std::fs::remove_file(folder.join("broken.acl.sjson")).unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    assert!(ossa_threads(&["compress", s(&folder), "-o", s(&one)], 1).status.success());
    assert!(ossa_threads(&["compress", s(&folder), "-o", s(&two)], 2).status.success());
    let (a, b) = (files(&one), files(&two));
    assert_eq!(a.len(), 4);
    assert!(a == b, "the thread count changed the output");
}

#[test]
fn shards_cover_a_batch_once() {
    let dir = tempfile::tempdir().unwrap();
    let folder = inputs(dir.path());
    std::fs::remove_file(folder.join("broken.acl.sjson")).unwrap();
    let mut seen = BTreeMap::new();
    for k in 1..=3 {
        let out = dir.path().join(format!("shard{k}"));
        let shard = format!("{k}/3");
        let o = ossa_threads(&["compress", s(&folder), "-o", s(&out), "--shard", &shard], 2);
        assert!(o.status.success(), "{}", stderr(&o));
        for name in out.exists().then(|| files(&out).into_keys()).into_iter().flatten() {
            assert!(seen.insert(name.clone(), k).is_none(), "{name} in two shards");
        }
    }
    assert_eq!(seen.len(), 4, "{seen:?}");
    // The same split from stats.
    let o = ossa_threads(&["stats", s(&folder), "--shard", "1/3", "--json"], 2);
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let shard_one = seen.values().filter(|&&k| k == 1).count();
    let weights_in_one = seen.get("weights.ossa") == Some(&1);
    // stats measures transform clips: a track list in the shard is a failure there.
    assert_eq!(v["clips"].as_array().unwrap().len() + usize::from(weights_in_one), shard_one, "{v}");
    for bad in ["0/3", "4/3", "1/0", "x"] {
        let o = ossa_threads(&["compress", s(&folder), "-o", s(&dir.path().join("bad")), "--shard", bad], 1);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(stderr(&o).contains("--shard"), "{bad}: {}", stderr(&o));
    }
}

#[test]
fn stats_runs_a_folder_in_parallel_and_reports_the_broken_clip() {
    let dir = tempfile::tempdir().unwrap();
    let folder = inputs(dir.path());
    std::fs::remove_file(folder.join("weights.acl.sjson")).unwrap();
    let o = ossa_threads(&["stats", s(&folder), "--json"], 2);
    assert_eq!(o.status.code(), Some(2));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["total"]["clips"], 3, "{v}");
    assert!(stderr(&o).contains("broken.acl.sjson"), "{}", stderr(&o));
}

/// `stats --report`: one self-contained page (no external resource) with four SVG
/// plots, the table, and the chosen clip's skeletons and errors for the canvas, whose
/// errors are the ones stats measured; a clip asked for that is not there is named.
#[test]
fn the_report_is_one_page_with_plots_and_the_chosen_clip() {
    let dir = tempfile::tempdir().unwrap();
    let folder = inputs(dir.path());
    std::fs::remove_file(folder.join("broken.acl.sjson")).unwrap();
    std::fs::remove_file(folder.join("weights.acl.sjson")).unwrap();
    let page = dir.path().join("report.html");
    let o = ossa_threads(&["stats", s(&folder), "--report", s(&page), "--report-clip", "cycle", "--json"], 2);
    assert!(o.status.success(), "{}", stderr(&o));
    let stats: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg").count(), 4, "four plots");
    assert!(html.contains("<canvas id=\"source\"") && html.contains("<canvas id=\"decoded\""));
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"), "self-contained");
    let start = html.find("<script id=\"clip-data\" type=\"application/json\">").unwrap();
    let json = &html[start..];
    let json = &json[json.find('>').unwrap() + 1..json.find("</script>").unwrap()];
    let data: Value = serde_json::from_str(json).unwrap();
    assert_eq!(data["name"], "cycle");
    let bones = data["parents"].as_array().unwrap().len();
    let samples = data["samples"].as_u64().unwrap() as usize;
    assert_eq!(data["errors"].as_array().unwrap().len(), bones * samples);
    assert_eq!(data["source"].as_array().unwrap().len(), 3 * bones * samples);
    // The largest error the page plays is the one stats reports for the clip.
    let page_max = data["errors"].as_array().unwrap().iter().map(|e| e.as_f64().unwrap()).fold(0.0, f64::max);
    let row =
        stats["clips"].as_array().unwrap().iter().find(|c| c["clip"].as_str().unwrap().contains("cycle")).unwrap();
    assert!((page_max - row["max_error"].as_f64().unwrap()).abs() < 1e-6, "{page_max} against {row}");

    let o = ossa_threads(&["stats", s(&folder), "--report", s(&page), "--report-clip", "nope"], 2);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no clip 'nope'"), "{}", stderr(&o));
}
