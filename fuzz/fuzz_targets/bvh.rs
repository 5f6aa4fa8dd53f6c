//! The BVH reader on arbitrary text: a clip that passes the clip checks, or an error
//! naming its line, never a crash, and memory bounded by the declared counts' check.
//! `cargo +nightly fuzz run bvh` from `fuzz/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ossa_encoder::formats::bvh::read_bvh_checked;

/// Most transform samples a clip read here may declare (joints × frames).
const BUDGET: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let result = read_bvh_checked(text, "fuzz", |declared| {
        if declared.bones.saturating_mul(declared.samples) > BUDGET {
            Err("over the fuzzing budget".to_owned())
        } else {
            Ok(())
        }
    });
    match result {
        Ok(clip) => {
            assert!(clip.check().is_ok(), "a clip read is a valid clip");
            assert!(!clip.bones.is_empty() && clip.sample_count > 0);
        }
        Err(e) => assert!(!e.message.is_empty()),
    }
});
