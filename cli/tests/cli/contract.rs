//! The `ossa` command-line contract: outputs, JSON fields, exit statuses and
//! one-line errors that name the file and the problem.

use ossa_decoder::{Clip, Rounding, Sampler, Transform};
use ossa_encoder::formats::acl_text;
use ossa_encoder::AlignedBytes;

use crate::{assert_refused, clip_text, example, ossa, s, stderr, stdout};

#[test]
fn compress_info_decompress_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("wave.ossa");
    let o = ossa(&["compress", s(&example()), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 1, "one summary line");
    assert!(stdout(&o).contains("max error"));

    let o = ossa(&["compress", s(&example()), "-o", s(&out), "--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    for key in ["raw_bytes", "compressed_bytes", "file_bytes", "ratio", "max_error", "precision", "seconds"] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["raw_bytes"], 8 * 48 * 40);
    assert!(v["max_error"].as_f64().unwrap() <= 0.01);
    let file_len = std::fs::metadata(&out).unwrap().len();
    assert_eq!(v["file_bytes"].as_u64().unwrap(), file_len);
    assert!(v["compressed_bytes"].as_u64().unwrap() < file_len);

    let o = ossa(&["info", s(&out), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(info["bones"], 8);
    assert_eq!(info["samples"], 48);
    // The oldest version that says what the clip uses: 4.1, for its packed constants.
    assert_eq!(info["version"], "4.2");
    assert_eq!(info["looping"], "clamp");
    assert_eq!(info["duration"].as_f64().unwrap(), f64::from(47.0f32 / 30.0f32));
    assert_eq!(info["bytes"]["compressed"], v["compressed_bytes"]);
    let o = ossa(&["info", s(&out)]);
    assert!(o.status.success() && stdout(&o).contains("checksum"));

    // Decompress: the text holds exactly the decoded f32 values, bones and parents.
    let text_out = dir.path().join("wave.acl.sjson");
    let o = ossa(&["decompress", s(&out), "-o", s(&text_out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let source = acl_text::read_clip(&std::fs::read_to_string(example()).unwrap(), "wave").unwrap();
    let back = acl_text::read_clip(&std::fs::read_to_string(&text_out).unwrap(), "x").unwrap();
    assert_eq!(back.sample_count, source.sample_count);
    assert_eq!(back.sample_rate, source.sample_rate);
    for (a, b) in back.bones.iter().zip(&source.bones) {
        assert_eq!((&a.name, a.parent, a.shell_distance), (&b.name, b.parent, b.shell_distance));
    }
    let bytes = AlignedBytes::new(&std::fs::read(&out).unwrap());
    let clip = Clip::from_bytes(&bytes).unwrap();
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; 8];
    for sample in 0..back.sample_count {
        sampler.seek(sample as f32 / clip.sample_rate(), Rounding::None);
        sampler.decompress_pose(&mut pose).unwrap();
        for (t, track) in pose.iter().zip(&back.tracks) {
            // Rotations are renormalised in f64 on import: equal to within that.
            let q = t.rotation.to_array().map(f64::from);
            assert!(q.iter().zip(&track.rotations[sample]).all(|(a, b)| (a - b).abs() < 1e-6));
            // Written as the shortest text of each f32: the same f32 read back.
            assert_eq!(t.translation.to_array(), track.translations[sample].map(|v| v as f32));
            assert_eq!(t.scale.to_array(), track.scales[sample].map(|v| v as f32));
        }
    }
}

#[test]
fn stripped_file_is_exactly_the_compressed_size_and_decompresses_with_index_names() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("wave.ossa");
    let o = ossa(&["compress", s(&example()), "-o", s(&out), "--strip-metadata", "--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["compressed_bytes"], v["file_bytes"]);
    let text_out = dir.path().join("back.acl.sjson");
    assert!(ossa(&["decompress", s(&out), "-o", s(&text_out)]).status.success());
    let back = acl_text::read_clip(&std::fs::read_to_string(&text_out).unwrap(), "x").unwrap();
    assert_eq!(back.bones[3].name, "bone_3");
}

#[test]
fn stats_reports_every_clip_and_a_total() {
    let pose = example().with_file_name("pose.acl.sjson");
    let o = ossa(&["stats", s(&example()), s(&pose), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["clips"].as_array().unwrap().len(), 2);
    for key in ["raw_bytes", "compressed_bytes", "ratio", "max_error", "p99_error", "within_precision", "seconds"] {
        assert!(v["clips"][0].get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["total"]["within_precision"], 1.0);
    let o = ossa(&["stats", s(&example())]);
    assert!(o.status.success() && stdout(&o).contains("total"));
}

#[test]
fn bad_inputs_are_refused_with_one_line_naming_file_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bone = |n: &str, p: &str| format!("{{ name = \"{n}\" parent = \"{p}\" vertex_distance = 3 }}");
    let ok_bones = format!("{} {}", bone("a", ""), bone("b", "a"));
    assert_refused(d, "empty.acl.sjson", b"", "empty");
    assert_refused(d, "binary.acl.sjson", &[0x76, 0xff, 0xfe, 0x00], "UTF-8");
    assert_refused(d, "syntax.acl.sjson", b"version = 1\nclip = { num_samples = 3\n", "line");
    assert_refused(
        d,
        "list.acl.sjson",
        b"version = 4\ntrack_list = { num_samples = 1 sample_rate = 30 }\n",
        "missing 'tracks'",
    );
    assert_refused(d, "noversion.acl.sjson", b"clip = { }", "version");
    assert_refused(d, "zero.acl.sjson", clip_text(&ok_bones, "", "0").as_bytes(), "no samples");
    assert_refused(d, "huge.acl.sjson", clip_text(&ok_bones, "", "4000000000").as_bytes(), "limit");
    let many: String = (0..65_536).map(|i| bone(&format!("n{i}"), "")).collect::<Vec<_>>().join(" ");
    assert_refused(d, "bones.acl.sjson", clip_text(&many, "", "1").as_bytes(), "format's limit of 65535");
    let tiny_rate = clip_text(&ok_bones, "", "2").replace("sample_rate = 30", "sample_rate = 1e-300");
    assert_refused(d, "rate.acl.sjson", tiny_rate.as_bytes(), "sample_rate");
    let three = format!("{ok_bones} {}", bone("c", "b"));
    assert_refused(d, "big.acl.sjson", clip_text(&three, "", "16000000").as_bytes(), "encoder's limit");
    assert_refused(d, "orphan.acl.sjson", clip_text(&bone("a", "ghost"), "", "1").as_bytes(), "parent 'ghost'");
    assert_refused(
        d,
        "cycle.acl.sjson",
        clip_text(&format!("{} {}", bone("a", "b"), bone("b", "a")), "", "1").as_bytes(),
        "parent 'b'",
    );
    assert_refused(
        d,
        "dup.acl.sjson",
        clip_text(&format!("{} {}", bone("a", ""), bone("a", "")), "", "1").as_bytes(),
        "two bones",
    );
    let nan = "{ name = \"b\" translations = [ [ 1, 2, 3 ] [ \"7ff8000000000000\", 0, 0 ] ] }";
    assert_refused(d, "nan.acl.sjson", clip_text(&ok_bones, nan, "2").as_bytes(), "sample 1");
    let inf = "{ name = \"b\" rotations = [ [ 0, 0, 0, 1 ] [ 0, 1e999, 0, 1 ] ] }";
    assert_refused(d, "inf.acl.sjson", clip_text(&ok_bones, inf, "2").as_bytes(), "NaN or infinite");
    let zero_q = "{ name = \"a\" rotations = [ [ 0, 0, 0, 0 ] ] }";
    assert_refused(d, "zeroq.acl.sjson", clip_text(&ok_bones, zero_q, "1").as_bytes(), "zero length");
    let short = "{ name = \"a\" rotations = [ [ 0, 0, 0, 1 ] ] }";
    assert_refused(d, "count.acl.sjson", clip_text(&ok_bones, short, "3").as_bytes(), "has 1 samples");
    let huge =
        "{ name = \"a\" translations = [ [ 1e30, 0, 0 ] [ 2e30, 0, 0 ] ] rotations = [ [0,0,0.3,1] [0,0.1,0.2,1] ] } \
                { name = \"b\" translations = [ [1e30, 0, 0] [ 1e30, 5e29, 0] ] }";
    assert_refused(d, "unreachable.acl.sjson", clip_text(&ok_bones, huge, "2").as_bytes(), "cannot be held");
    let unknown = "{ name = \"zz\" }";
    assert_refused(d, "track.acl.sjson", clip_text(&ok_bones, unknown, "1").as_bytes(), "names no bone");
}

/// A text clip's bytes are checked as a whole, wherever the reads that bring them in
/// stop: an invalid byte, a NUL or a cut character far past the first read is
/// reported at its offset (the first of two problems), and a character split by a
/// read's end is not one.
#[test]
fn text_problems_past_the_first_read_are_found_at_their_offset() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bone = |n: &str, p: &str| format!("{{ name = \"{n}\" parent = \"{p}\" vertex_distance = 3 }}");
    let clip = clip_text(&format!("{} {}", bone("a", ""), bone("b", "a")), "", "2");
    // The clip, then a comment long enough to span several reads, with 'é' (two
    // bytes) across the end of the first 64 KiB read; then each `(at, byte)` of
    // `put` written in.
    let text = |put: &[(usize, u8)], len: usize| {
        let mut t = clip.clone().into_bytes();
        t.extend_from_slice(b"// ");
        while t.len() < 65_531 {
            t.push(b'x');
        }
        while t.len() < 65_545 {
            t.extend_from_slice("é".as_bytes());
        }
        t.resize(len, b'x');
        for &(at, byte) in put {
            t[at] = byte;
        }
        t
    };
    let whole = d.join("whole.acl.sjson");
    std::fs::write(&whole, text(&[], 300_000)).unwrap();
    let o = ossa(&["compress", s(&whole), "-o", s(&d.join("whole.ossa"))]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_refused(d, "invalid.acl.sjson", &text(&[(200_000, 0xff)], 300_000), "invalid byte at offset 200000");
    assert_refused(d, "nul.acl.sjson", &text(&[(200_000, 0)], 300_000), "NUL byte at offset 200000");
    let both = text(&[(200_000, 0xff), (250_000, 0)], 300_000);
    assert_refused(d, "both.acl.sjson", &both, "invalid byte at offset 200000");
    let both = text(&[(200_000, 0), (250_000, 0xff)], 300_000);
    assert_refused(d, "nul_first.acl.sjson", &both, "NUL byte at offset 200000");
    // The first byte of a three-byte character, last in the file.
    assert_refused(d, "cut.acl.sjson", &text(&[(299_999, 0xe2)], 300_000), "truncated character at offset 299999");
}

#[test]
fn large_finite_values_still_compress() {
    let dir = tempfile::tempdir().unwrap();
    let bones = "{ name = \"a\" parent = \"\" } { name = \"b\" parent = \"a\" }";
    let tracks = "{ name = \"a\" translations = [ [ 1e6, -2e6, 3e5 ] [ 1.5e6, -2e6, 3e5 ] [ 1e6, 2e6, 3e5 ] ] }";
    let input = dir.path().join("big.acl.sjson");
    std::fs::write(&input, clip_text(bones, tracks, "3")).unwrap();
    let out = dir.path().join("big.ossa");
    let o = ossa(&["compress", s(&input), "-o", s(&out), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(v["max_error"].as_f64().unwrap() <= 0.01, "{v}");
}

#[test]
fn file_system_problems_are_reported_and_outputs_are_never_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = ossa(&["compress", s(&d.join("missing.acl.sjson")), "-o", s(&d.join("x.ossa"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing.acl.sjson") && stderr(&o).contains("cannot read"));

    // A folder of no clips: refused by name, nothing written.
    let o = ossa(&["compress", s(d), "-o", s(&d.join("x.ossa"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("holds no .acl.sjson"), "{}", stderr(&o));
    assert!(!d.join("x.ossa").exists());

    // A path that cannot be read (a file used as a folder).
    let file = d.join("plain.txt");
    std::fs::write(&file, b"x").unwrap();
    let o = ossa(&["compress", s(&file.join("clip.acl.sjson")), "-o", s(&d.join("x.ossa"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("plain.txt/clip.acl.sjson") && stderr(&o).contains("cannot read"), "{}", stderr(&o));
    let o = ossa(&["info", s(&file.join("x.ossa"))]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1);

    // A failed compression leaves an existing output untouched.
    let out = d.join("keep.ossa");
    std::fs::write(&out, b"precious").unwrap();
    std::fs::write(d.join("bad.acl.sjson"), b"version = 1\n").unwrap();
    let o = ossa(&["compress", s(&d.join("bad.acl.sjson")), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");

    // Output into a folder that does not exist.
    let o = ossa(&["compress", s(&example()), "-o", s(&d.join("no/such/dir/x.ossa"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("x.ossa"), "{}", stderr(&o));

    // No temporary files left anywhere.
    let leftovers: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn corrupted_and_foreign_files_are_refused_by_info_and_decompress() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("wave.ossa");
    assert!(ossa(&["compress", s(&example()), "-o", s(&out)]).status.success());
    let mut bytes = std::fs::read(&out).unwrap();
    let last = bytes.len() - 20;
    bytes[last] ^= 0x40;
    let bad = dir.path().join("bad.ossa");
    std::fs::write(&bad, &bytes).unwrap();
    for cmd in [vec!["info", s(&bad)], vec!["decompress", s(&bad), "-o", s(&dir.path().join("o.sjson"))]] {
        let o = ossa(&cmd);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("corrupted") && stderr(&o).contains("bad.ossa"), "{}", stderr(&o));
    }
    let o = ossa(&["info", s(&example())]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not an ossa clip"), "{}", stderr(&o));
    let empty = dir.path().join("empty.ossa");
    std::fs::write(&empty, b"").unwrap();
    let o = ossa(&["info", s(&empty)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("empty"));
}

#[test]
fn bench_reports_its_fields_warm_and_cold_and_refuses_what_is_not_a_clip() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("wave.ossa");
    assert!(ossa(&["compress", s(&example()), "-o", s(&out)]).status.success());
    for (flags, cache) in [(&[][..], "warm"), (&["--cold"][..], "cold")] {
        let mut args = vec!["bench", s(&out), "--json"];
        args.extend_from_slice(flags);
        let o = ossa(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!(v["cache"], cache);
        assert_eq!(v["bones"], 8);
        assert_eq!(v["backend"], Sampler::backend());
        let (median, min) = (v["pose_ns_median"].as_f64().unwrap(), v["pose_ns_min"].as_f64().unwrap());
        assert!(min > 0.0 && min <= median, "{v}");
        assert!(v["bone_pose_ns_median"].as_f64().unwrap() > 0.0, "{v}");
        let (median, min) = (v["kept_pose_ns_median"].as_f64().unwrap(), v["kept_pose_ns_min"].as_f64().unwrap());
        assert!(min > 0.0 && min <= median, "{v}");
        for without in ["pose_without_static_pose_ns", "kept_pose_without_plan_ns"] {
            let (median, min) =
                (v[format!("{without}_median")].as_f64().unwrap(), v[format!("{without}_min")].as_f64().unwrap());
            assert!(min > 0.0 && min <= median, "{v}");
        }
    }
    let o = ossa(&["bench", s(&example())]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("wave.acl.sjson"), "{}", stderr(&o));
}

#[test]
fn segment_length_is_chosen_by_compress_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("wave.ossa");
    // wave: 48 samples; segments of 7 give floor(48 / 7) = 6 segments.
    let o = ossa(&["compress", s(&example()), "-o", s(&out), "--segment-len", "7"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = AlignedBytes::new(&std::fs::read(&out).unwrap());
    let clip = Clip::from_bytes_verified(&bytes).unwrap();
    assert_eq!((clip.segment_len(), clip.segment_count()), (7, 6));
    let o = ossa(&["info", s(&out), "--json"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!((v["segment_len"].as_u64(), v["segments"].as_u64()), (Some(7), Some(6)), "{v}");
    for bad in ["0", "17", "x"] {
        let o = ossa(&["compress", s(&example()), "-o", s(&out), "--segment-len", bad]);
        assert!(!o.status.success(), "--segment-len {bad} accepted");
        assert!(stderr(&o).contains("--segment-len"), "{}", stderr(&o));
    }
    // The refused runs left the earlier output whole.
    assert!(Clip::from_bytes_verified(&AlignedBytes::new(&std::fs::read(&out).unwrap())).is_ok());
}
