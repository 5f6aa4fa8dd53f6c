//! The ACL text clip reader on arbitrary text: a clip or a clear error, never a crash,
//! and the same outcome and message whether the samples are skimmed by the first pass
//! and read in parallel, or checked first and read in order.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = ossa_encoder::sjson::check(text);
    let read = ossa_encoder::acl_text::read_clip(text, "fuzz");
    assert_eq!(read, ossa_encoder::acl_text::read_clip_unskimmed(text, "fuzz"));
    if let Ok(clip) = read {
        // A clip that reads must also write and read back to the same shape.
        let again = ossa_encoder::acl_text::read_clip(&ossa_encoder::acl_text::write_clip(&clip), "fuzz")
            .expect("a written clip reads back");
        assert_eq!(again.bones.len(), clip.bones.len());
        assert_eq!(again.sample_count, clip.sample_count);
    }
});
