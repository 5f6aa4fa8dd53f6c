//! The glTF importer on arbitrary bytes (JSON or binary; no external buffers): clips
//! that pass the clip checks, or an error, never a crash; memory bounded by the
//! declared counts' check. `cargo +nightly fuzz run gltf` from `fuzz/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ossa_encoder::formats::gltf::{read_gltf_checked, AnimationChoice};

/// Most transform samples a clip read here may hold (bones × samples).
const BUDGET: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the sample rate: 1 to 256 Hz.
    let Some((&rate, bytes)) = data.split_first() else { return };
    let result = read_gltf_checked(bytes, None, f64::from(rate) + 1.0, &AnimationChoice::All, |declared| {
        if declared.bones.saturating_mul(declared.samples) > BUDGET {
            Err("over the fuzzing budget".to_owned())
        } else {
            Ok(())
        }
    });
    if let Ok(imported) = result {
        for clip in &imported.clips {
            assert!(clip.check().is_ok(), "an imported clip is a valid clip");
        }
        // What the exporter writes of a clip imports again.
        if let Some(clip) = imported.clips.first() {
            let text = ossa_encoder::formats::gltf::write_gltf(clip);
            let again =
                ossa_encoder::formats::gltf::read_gltf(text.as_bytes(), None, clip.sample_rate, &AnimationChoice::All);
            assert!(again.is_ok(), "an exported clip imports: {:?}", again.err());
        }
    }
});
