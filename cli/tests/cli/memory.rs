//! Memory stays bounded whatever the input declares: huge declared counts are
//! refused up front with the estimate, endless inputs are cut at a cap, and a
//! refused allocation is an error message, never an abort.

use std::fs;
use std::time::{Duration, Instant};

use crate::{assert_error, clip_text, example, leftovers, ossa, ossa_after, ossa_with_stdin, s, stderr};

/// A clip of 194 bytes that declares two bones of `samples` samples each, all at
/// their default values (with 2²⁴, the encoder's own limit of 2²⁵ transform samples).
fn declared(samples: u32) -> String {
    let bones =
        "{ name = \"a\" parent = \"\" vertex_distance = 3 } { name = \"b\" parent = \"a\" vertex_distance = 3 }";
    clip_text(bones, "", &samples.to_string())
}

#[test]
fn declared_counts_beyond_the_limit_are_refused_up_front_with_the_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("declared.acl.sjson");
    fs::write(&input, declared(1 << 24)).unwrap();
    let out = dir.path().join("o.ossa");
    let started = Instant::now();
    let o = ossa(&["compress", s(&input), "-o", s(&out), "--memory-limit", "1GiB"]);
    assert_error(
        &o,
        &[
            "declared.acl.sjson",
            "compressing this clip (2 bones × 16777216 samples) needs about",
            "GiB of memory, more than the memory limit of 1.0 GiB (--memory-limit)",
        ],
    );
    assert!(started.elapsed() < Duration::from_secs(10), "refused only after {:?}", started.elapsed());
    assert!(!out.exists() && leftovers(dir.path()).is_empty());
    // `stats` applies the limit too.
    let o = ossa(&["stats", s(&input), "--memory-limit", "500M"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs about") && stderr(&o).contains("1 of 1 clips failed"), "{}", stderr(&o));
    // The default limit follows the address-space limit.
    #[cfg(unix)]
    {
        let o = ossa_after("ulimit -v 2000000", &["compress", s(&input), "-o", s(&out)]);
        assert_error(&o, &["needs about", "address-space limit (ulimit -v)"]);
    }
}

/// With the limit lifted and the address space capped below the clip's need, the
/// system refuses an allocation somewhere: at every cap, the tool must report it
/// (exit 2, one line) and leave nothing behind, never abort.
#[cfg(unix)]
#[test]
fn a_refused_allocation_is_an_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("declared.acl.sjson");
    // 2 × 2²¹ transform samples: the raw clip takes 320 MiB, the reference 192, 384
    // and 384 more; the caps fall in each of these allocations.
    fs::write(&input, declared(1 << 21)).unwrap();
    let out = dir.path().join("o.ossa");
    for kib in [100_000, 250_000, 450_000, 800_000, 1_200_000] {
        let o =
            ossa_after(&format!("ulimit -v {kib}"), &["compress", s(&input), "-o", s(&out), "--memory-limit", "none"]);
        assert_error(&o, &["declared.acl.sjson", "out of memory: the system refused"]);
        assert!(!out.exists() && leftovers(dir.path()).is_empty(), "ulimit -v {kib}");
    }
}

#[test]
fn endless_and_binary_inputs_are_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.ossa");
    #[cfg(unix)]
    {
        let started = Instant::now();
        assert_error(&ossa(&["compress", "/dev/zero", "-o", s(&out)]), &["/dev/zero", "NUL byte at offset 0"]);
        assert_error(&ossa(&["info", "/dev/zero"]), &["/dev/zero", "not an ossa clip"]);
        assert_error(&ossa(&["decompress", "/dev/urandom", "-o", s(&out)]), &["not an ossa clip"]);
        assert!(started.elapsed() < Duration::from_secs(10));
    }
    // A text stream that never ends (here: longer than the limit allows).
    let endless = "// a comment\n".repeat(3 << 20);
    let o = ossa_with_stdin(&["compress", "-", "-o", s(&out), "--memory-limit", "10MiB"], endless.as_bytes());
    assert_error(&o, &["<stdin>", "goes on past 10.0 MiB without ending", "memory limit of 10.0 MiB"]);
    // A file larger than the limit is refused before it is read.
    let big = dir.path().join("big.acl.sjson");
    fs::write(&big, &endless).unwrap();
    let o = ossa(&["compress", s(&big), "-o", s(&out), "--memory-limit", "10MiB"]);
    assert_error(&o, &["big.acl.sjson", "reading this file needs about 39.0 MiB of memory"]);
    // An .ossa header declaring 4 GiB.
    let packed = dir.path().join("wave.ossa");
    assert!(ossa(&["compress", s(&example()), "-o", s(&packed)]).status.success());
    let mut bytes = fs::read(&packed).unwrap();
    bytes[8..12].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    let liar = dir.path().join("liar.ossa");
    fs::write(&liar, &bytes).unwrap();
    assert_error(&ossa(&["info", s(&liar), "--memory-limit", "100M"]), &["reading this clip needs about 4.0 GiB"]);
    // Within the limit, it is read as far as it goes and refused as truncated.
    let o = ossa(&["info", s(&liar)]);
    assert_error(&o, &["liar.ossa"]);
    assert!(stderr(&o).contains("truncated") || stderr(&o).contains("bytes"), "{}", stderr(&o));
    assert!(!out.exists());
}

/// `decompress` streams: a clip of 2²¹ samples (a few megabytes of `.ossa`, written
/// here directly: one bone at rest) decodes to 125 MB of text under an address-space
/// cap of 200 MB, where holding the decoded clip (168 MB) and its text at once could
/// not fit.
#[cfg(unix)]
#[test]
fn decompress_streams_whatever_the_sample_count() {
    use ossa_decoder::format::{self, SubTrackClass, SubTrackKind, DEFAULT_SEGMENT_LEN};
    use ossa_encoder::compress::sub_track::SubTrack;
    use ossa_encoder::compress::writer::{write, ClipShape};

    let samples: u32 = 1 << 21;
    let tracks: Vec<SubTrack> =
        SubTrackKind::ALL.iter().map(|&kind| SubTrack::new(kind, 0, SubTrackClass::Default)).collect();
    let defaults = [None, None, None];
    let segments = vec![&defaults[..]; format::segment_count(samples, DEFAULT_SEGMENT_LEN) as usize];
    let shape = ClipShape {
        sample_count: samples,
        looping: ossa_decoder::format::Looping::Clamp,
        root_motion: None,
        additive: ossa_decoder::Additive::None,
        sample_rate: 30.0,
        segment_len: DEFAULT_SEGMENT_LEN,
        database: None,
        shared_pose: None,
    };
    let bytes = write(&shape, &tracks, &Default::default(), &segments, &[], None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let packed = dir.path().join("still.ossa");
    fs::write(&packed, &bytes).unwrap();

    let o = std::process::Command::new("sh")
        .args(["-c", "ulimit -v 200000; exec \"$0\" decompress \"$1\" -o -"])
        .arg(env!("CARGO_BIN_EXE_ossa"))
        .arg(&packed)
        .stdout(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 bones, 2097152 samples"), "{}", stderr(&o));
    let text_bytes: u64 = stderr(&o).split(", ").last().unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(text_bytes > 120_000_000, "{text_bytes} B of text");
}
