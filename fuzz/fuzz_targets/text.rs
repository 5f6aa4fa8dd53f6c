//! The ACL text clip reader on arbitrary text: a clip or a clear error, never a crash,
//! and the same outcome and message whether the samples are skimmed by the first pass
//! and read in parallel, or checked first and read in order. Scalar track lists too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ossa_encoder::formats::acl_text;

/// Most transform samples a clip read here may declare. The reader accepts up to
/// `MAX_TRANSFORM_SAMPLES` (2²⁵, 2.7 GB as read), and a tiny text can declare that
/// many (missing tracks are filled with defaults); this target holds two readings and
/// a written copy, which would pass libFuzzer's 2 GB limit. Larger declarations are
/// read up to the check of the counts (everything before it is still fuzzed); the
/// limit itself is tested by `read.rs`'s unit tests and `cli/tests/cli/contract.rs`.
const BUDGET: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = ossa_encoder::formats::acl_text::sjson::check(text);
    let mut over_budget = false;
    let read = acl_text::read_clip_checked(text, "fuzz", |declared| {
        let samples = declared.samples.saturating_add(declared.base_samples);
        over_budget = declared.bones.saturating_mul(samples) > BUDGET;
        if over_budget {
            Err("over the fuzzing budget".to_owned())
        } else {
            Ok(())
        }
    });
    if over_budget {
        return;
    }
    // Scalar track lists: read (their memory follows the text), compressed within
    // every track's precision when they are.
    if let Ok(list) = acl_text::read_track_list(text, "fuzz") {
        if list.tracks.len().saturating_mul(list.sample_count) <= BUDGET {
            if let Ok(out) = ossa_encoder::compress::scalar::compress_tracks(&list, &Default::default()) {
                assert!(out.max_error_ratio <= 1.0, "track list error above its precision: {}", out.max_error_ratio);
            }
        }
    }
    assert_eq!(read, acl_text::read_clip_unskimmed(text, "fuzz"));
    if let Ok(clip) = read {
        // A clip that reads must also write and read back to the same shape.
        let again = acl_text::read_clip(&acl_text::write_clip(&clip), "fuzz").expect("a written clip reads back");
        assert_eq!(again.bones.len(), clip.bones.len());
        assert_eq!(again.sample_count, clip.sample_count);
    }
});
