//! A bare-metal program that validates and samples an embedded clip. It has no
//! global allocator and no `alloc` crate, so if anything in the decoder allocated,
//! this would fail to link. Built by `.ci/run` for `thumbv7em-none-eabihf` and
//! `aarch64-unknown-none`; never run.
#![no_std]
#![no_main]

use core::panic::PanicInfo;

use ossa_decoder::{Clip, Rounding, Sampler, Transform};

/// 16-byte aligned storage, as the decoder requires.
#[repr(C, align(16))]
struct Aligned<T: ?Sized>(T);

static CLIP: &Aligned<[u8]> = &Aligned(*include_bytes!("../../format-spec/golden/wave.ossa"));

/// The entry point the linker looks for.
#[no_mangle]
pub extern "C" fn _start() -> ! {
    let mut pose = [Transform::IDENTITY; 8];
    if let Ok(clip) = Clip::from_bytes_verified(&CLIP.0) {
        let mut sampler = Sampler::new(clip);
        let mut time = 0.0f32;
        while time <= clip.duration() {
            sampler.seek(time, Rounding::None);
            let _ = sampler.decompress_pose(&mut pose);
            time += 1.0 / 60.0;
        }
    }
    core::hint::black_box(&pose);
    loop {}
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    loop {}
}
