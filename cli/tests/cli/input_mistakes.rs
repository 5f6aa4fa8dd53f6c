//! Mistakes in the input are caught and reported accurately: unknown keys with the
//! key meant, numbers printed short, names escaped, causes stated as they are.

use std::fs;

use ossa_decoder::format;
use ossa_encoder::AlignedBytes;

use crate::{assert_error, assert_refused, clip_text, example, ossa, s, stderr};

fn bone(name: &str, parent: &str) -> String {
    format!("{{ name = \"{name}\" parent = \"{parent}\" vertex_distance = 3 }}")
}

#[test]
fn unknown_keys_are_errors_with_their_place_and_the_key_meant() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let two = format!("{} {}", bone("a", ""), bone("b", "a"));
    // A misspelled sub-track: once silently read as "no translations".
    let text = clip_text(&two, "{ name = \"b\"\n  translation = [ [ 1, 2, 3 ] ] }", "1");
    let line = text.lines().position(|l| l.contains("translation =")).unwrap() + 1;
    let input = d.join("track.acl.sjson");
    fs::write(&input, &text).unwrap();
    let o = ossa(&["compress", s(&input), "-o", s(&d.join("o.ossa"))]);
    assert_error(
        &o,
        &[
            "track.acl.sjson",
            &format!("line {line}, column 3"),
            "unknown key 'translation' in a track",
            "did you mean 'translations'?",
        ],
    );
    // A misspelled parent: once silently a root.
    let parnet = clip_text("{ name = \"a\" parent = \"\" } { name = \"b\" parnet = \"a\" }", "", "1");
    assert_refused(d, "parnet.acl.sjson", parnet.as_bytes(), "did you mean 'parent'?");
    let distance = clip_text("{ name = \"a\" parent = \"\" vertex_distanse = 10 }", "", "1");
    assert_refused(d, "distance.acl.sjson", distance.as_bytes(), "did you mean 'vertex_distance'?");
    let clip = "version = 5\nclip = { num_sample = 3 sample_rate = 30 }\nbones = [ ]\ntracks = [ ]\n";
    assert_refused(
        d,
        "clip.acl.sjson",
        clip.as_bytes(),
        "unknown key 'num_sample' in 'clip' (did you mean 'num_samples'?)",
    );
    let top = clip_text(&two, "", "1").replace("bones =", "bone =");
    assert_refused(d, "top.acl.sjson", top.as_bytes(), "unknown key 'bone' at the top level (did you mean 'bones'?)");
    let settings = format!("{}settings = {{ error_treshold = 0.1 }}\n", clip_text(&two, "", "1"));
    assert_refused(d, "settings.acl.sjson", settings.as_bytes(), "did you mean 'error_threshold'?");
    let misplaced = clip_text(&two, "{ name = \"a\" vertex_distance = 2 }", "1");
    assert_refused(d, "misplaced.acl.sjson", misplaced.as_bytes(), "'vertex_distance' does not belong in a track");
    let unknown = clip_text(&two, "{ name = \"a\" colour = \"red\" }", "1");
    assert_refused(d, "colour.acl.sjson", unknown.as_bytes(), "known keys: name, rotations, translations, scales");
    let parent = clip_text(&format!("{} {}", bone("hips", ""), bone("spine", "hisp")), "", "1");
    assert_refused(d, "parent.acl.sjson", parent.as_bytes(), "parent 'hisp' is not a bone listed before it");
    assert_refused(d, "parent2.acl.sjson", parent.as_bytes(), "did you mean 'hips'?");
    let track = clip_text(&two, "{ name = \"bb\" }", "1");
    assert_refused(d, "track2.acl.sjson", track.as_bytes(), "track 'bb' names no bone (did you mean 'b'?)");
    // Every key ACL itself reads is accepted, legacy ones included.
    let full = "version = 1\nclip = { name = \"x\" num_samples = 2 sample_rate = 30 error_threshold = 0.01 \
                is_binary_exact = false additive_format = \"none\" additive_base_name = \"\" \
                additive_base_num_samples = 1 additive_base_sample_rate = 30 }\n\
                settings = { algorithm_name = \"uniformly_sampled\" level = \"medium\" rotation_format = \"quatf_full\" \
                translation_format = \"vector3f_full\" scale_format = \"vector3f_full\" rotation_range_reduction = true \
                translation_range_reduction = true scale_range_reduction = true segmenting = { enabled = true \
                ideal_num_samples = 16 max_num_samples = 31 rotation_range_reduction = true \
                translation_range_reduction = true scale_range_reduction = true } \
                constant_rotation_threshold_angle = 0.1 constant_translation_threshold = 0.1 \
                constant_scale_threshold = 0.1 error_threshold = 0.01 }\n\
                bones = [ { name = \"a\" parent = \"\" vertex_distance = 3 bind_rotation = [ 0, 0, 0, 1 ] \
                bind_translation = [ 0, 0, 0 ] bind_scale = [ 1, 1, 1 ] } ]\n\
                tracks = [ { name = \"a\" rotations = [ [ 0, 0, 0, 1 ] [ 0, 0, 0, 1 ] ] \
                translations = [ [ 0, 0, 0 ] [ 1, 0, 0 ] ] scales = [ [ 1, 1, 1 ] [ 1, 1, 1 ] ] } ]\n";
    let input = d.join("full.acl.sjson");
    fs::write(&input, full).unwrap();
    let o = ossa(&["compress", s(&input), "-o", s(&d.join("full.ossa"))]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let with_bom = dir.path().join("bom.acl.sjson");
    let mut bytes = "\u{feff}".as_bytes().to_vec();
    bytes.extend(fs::read(example()).unwrap());
    fs::write(&with_bom, bytes).unwrap();
    let (a, b) = (dir.path().join("a.ossa"), dir.path().join("b.ossa"));
    let o = ossa(&["compress", s(&with_bom), "-o", s(&a)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(ossa(&["compress", s(&example()), "-o", s(&b)]).status.success());
    assert_eq!(fs::read(a).unwrap(), fs::read(b).unwrap());
    // Columns on the first line count from after the mark, as editors show them.
    fs::write(&with_bom, "\u{feff}version = @").unwrap();
    assert_error(&ossa(&["compress", s(&with_bom), "-o", s(&dir.path().join("c.ossa"))]), &["line 1, column 11"]);
}

/// No run of more than 17 digits: numbers print in their shortest form, with an
/// exponent when large or small.
fn assert_short_numbers(message: &str) {
    let longest = message.split(|c: char| !c.is_ascii_digit()).map(str::len).max().unwrap_or(0);
    assert!(longest <= 17, "a number printed with {longest} digits: {message}");
}

#[test]
fn numbers_in_messages_are_short_and_causes_accurate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let two = format!("{} {}", bone("a", ""), bone("b", "a"));
    let cases = [
        ("tiny_rate", clip_text(&two, "", "2").replace("sample_rate = 30", "sample_rate = 1e-300"), "1e-300"),
        ("denormal_rate", clip_text(&two, "", "24").replace("sample_rate = 30", "sample_rate = 1e-40"), "too small"),
        ("huge_rate", clip_text(&two, "", "3").replace("sample_rate = 30", "sample_rate = 1e38"), "too large"),
        ("beyond_f32_rate", clip_text(&two, "", "3").replace("sample_rate = 30", "sample_rate = 1e300"), "1e300"),
        ("huge_count", clip_text(&two, "", "1e300"), "num_samples 1e300 exceeds the format's limit"),
        ("fraction", clip_text(&two, "", "2.5"), "num_samples 2.5 is not a whole number"),
        ("version", clip_text(&two, "", "2").replace("version = 1", "version = 1e-300"), "version 1e-300"),
    ];
    for (name, text, needle) in cases {
        let input = d.join(format!("{name}.acl.sjson"));
        fs::write(&input, &text).unwrap();
        let o = ossa(&["compress", s(&input), "-o", s(&d.join("o.ossa"))]);
        assert_error(&o, &[needle]);
        assert_short_numbers(&stderr(&o));
        assert!(!stderr(&o).contains("--precision"), "{name}: the advice must fit the cause: {}", stderr(&o));
    }
    // A precision f32 cannot hold at this size: the message says why, with short numbers.
    let far =
        "{ name = \"a\" translations = [ [ 1e30, 0, 0 ] [ 2e30, 0, 0 ] ] rotations = [ [0,0,0.3,1] [0,0.1,0.2,1] ] } \
               { name = \"b\" translations = [ [1e30, 0, 0] [ 1e30, 5e29, 0] ] }";
    let input = d.join("far.acl.sjson");
    fs::write(&input, clip_text(&two, far, "2")).unwrap();
    let o = ossa(&["compress", s(&input), "-o", s(&d.join("o.ossa"))]);
    assert_error(&o, &["cannot be held", "from the origin", "32-bit floats are", "use a --precision of at least"]);
    assert_short_numbers(&stderr(&o));
    // White space only, and comments only, say so.
    assert_refused(d, "blank.acl.sjson", b"  \n\t\n", "only white space");
    assert_refused(d, "comments.acl.sjson", b"// nothing\n/* here */\n", "only comments");
}

#[test]
fn names_with_control_characters_stay_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A bone name with a newline and an escape sequence, in a message.
    let text = clip_text(&format!("{} {}", bone("c", ""), bone("a\\nb\\u001b", "nobody")), "", "1")
        .replace("\\u001b", "\u{1b}");
    assert_refused(d, "bone.acl.sjson", text.as_bytes(), "bone 'a\\nb\\u{1b}': parent 'nobody'");
    let text = clip_text(&bone("a\\nb", ""), "{ name = \"a\\nb\" translations = [ [ 1e39, 0, 0 ] ] }", "1");
    let input = d.join("named.acl.sjson");
    fs::write(&input, text).unwrap();
    let o = ossa(&["compress", s(&input), "-o", s(&d.join("o.ossa"))]);
    assert_error(&o, &["bone 'a\\nb'", "single-precision"]);
    // A file name with a newline and a right-to-left override.
    #[cfg(unix)]
    {
        let odd = d.join("odd\nname\u{202e}.acl.sjson");
        fs::write(&odd, b"version = 5\n").unwrap();
        let o = ossa(&["compress", s(&odd), "-o", s(&d.join("o.ossa"))]);
        assert_error(&o, &["odd\\nname\\u{202e}.acl.sjson", "missing 'clip'"]);
    }
}

#[test]
fn a_clip_whose_duration_overflows_is_refused_by_the_decoder() {
    let dir = tempfile::tempdir().unwrap();
    let packed = dir.path().join("wave.ossa");
    assert!(ossa(&["compress", s(&example()), "-o", s(&packed)]).status.success());
    let mut bytes = fs::read(&packed).unwrap();
    bytes[32..36].copy_from_slice(&1e-40f32.to_le_bytes());
    bytes[12..16].copy_from_slice(&[0; 4]);
    let sum = format::checksum(&AlignedBytes::new(&bytes));
    bytes[12..16].copy_from_slice(&sum.to_le_bytes());
    let bad = dir.path().join("denormal.ossa");
    fs::write(&bad, &bytes).unwrap();
    assert_error(&ossa(&["info", s(&bad)]), &["denormal.ossa", "sample rate", "duration overflows"]);
    let out = dir.path().join("out.acl.sjson");
    assert_error(&ossa(&["decompress", s(&bad), "-o", s(&out)]), &["duration overflows"]);
    assert!(!out.exists());
}
