//! Decodes poses in a loop, for profilers (`valgrind --tool=callgrind`, `perf`):
//! `cargo run --release -p ossa-encoder --example decode_loop -- CLIP.acl.sjson [POSES]`.
//! Prints the instructions-free facts a profile needs: bones, poses decoded.

use ossa_decoder::{Clip, Rounding, Sampler, Transform};
use ossa_encoder::{acl_text, compress, Settings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: decode_loop CLIP.acl.sjson [POSES]")?;
    let poses: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(100_000);
    let raw = acl_text::read_clip(&std::fs::read_to_string(&path)?, "clip")?;
    let out = compress(&raw, &Settings { include_metadata: false, ..Settings::default() })?;
    let clip = Clip::from_bytes(&out.bytes)?;
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; raw.bones.len()];
    let mut checksum = 0.0f32;
    for i in 0..poses {
        let t = clip.duration() * (i % 100) as f32 / 99.0;
        sampler.seek(t, Rounding::None);
        sampler.decompress_pose(&mut pose)?;
        checksum += pose[1].translation.x;
    }
    println!("{} bones, {poses} poses decoded (checksum {checksum})", raw.bones.len());
    Ok(())
}
