//! A C program (`c/sample.c`) built against `include/ossa.h` and the static library
//! with the system's C compiler (found by the `cc` crate), then run: it validates a
//! golden clip and samples it through the ABI, whole pose and bone by bone, and its
//! output must be the decoder's values bit for bit; so must the clips of the golden
//! streaming database, opened in it with each fidelity's tiers resident. A corrupted
//! clip makes it fail with the ABI's message, and so does a database clip given alone.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{aligned, golden_path, view};
use ossa_decoder::{Clip, Database, Residency, Rounding, Sampler, Slot, Tier, Transform};

/// `target/<profile>`: the test binary is in its `deps` folder, the libraries beside it.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// The static library `libossa_c.a`, built by cargo into a target folder of its own
/// (`cargo test` builds only the rlib its tests link; a separate folder keeps the outer
/// cargo's lock out of the way).
fn static_library() -> PathBuf {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target_dir = profile_dir().join("capi-staticlib");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["build", "--locked", "--lib", "--manifest-path"])
        .arg(crate_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .output()
        .expect("cargo runs");
    assert!(output.status.success(), "cargo build of the static library: {}", String::from_utf8_lossy(&output.stderr));
    target_dir.join("debug/libossa_c.a")
}

/// Builds `c/sample.c` into `dir/sample`.
fn build(dir: &Path) -> PathBuf {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let library = static_library();
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .opt_level(1)
        .target(env!("OSSA_CAPI_TARGET"))
        .host(env!("OSSA_CAPI_TARGET"))
        .get_compiler();
    let exe = dir.join("sample");
    let mut command = compiler.to_command();
    command
        .arg("-std=c11")
        .arg("-Wall")
        .arg("-Werror")
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("c/sample.c"))
        .arg(&library)
        .args(["-lm", "-lpthread", "-ldl"])
        .arg("-o")
        .arg(&exe);
    let output = command.output().expect("the C compiler runs");
    assert!(output.status.success(), "{:?}: {}", command, String::from_utf8_lossy(&output.stderr));
    exe
}

/// The program's expected output for the clip in `bytes` at `steps`: from the clip
/// alone, or opened in the database `database` (its file) with the chunks of `tiers`
/// resident.
fn expected(bytes: &[u8], steps: u32, database: Option<(&[u8], &[Tier])>) -> String {
    let view = database.map(|(file, _)| Database::from_bytes(file).unwrap());
    let clip = match &view {
        Some(d) => d.open_clip(bytes).unwrap(),
        None => Clip::from_bytes(bytes).unwrap(),
    };
    let mut residency = None;
    if let (Some(d), Some((file, tiers))) = (&view, database) {
        let mut r = Residency::new(d, vec![Slot::None; d.chunk_slots() as usize]).unwrap();
        for &tier in tiers {
            for i in 0..d.chunk_count(tier) {
                let c = d.chunk(tier, i).unwrap();
                let at = c.file_offset as usize;
                r.bind(d, tier, i, &file[at..at + c.size as usize]).unwrap();
            }
        }
        residency = Some((d.bind(&clip).unwrap(), r));
    }
    let mut out = format!("bones {} duration {:08x}\n", clip.bone_count(), clip.duration().to_bits());
    let mut sampler = Sampler::new(clip);
    let mut pose = vec![Transform::IDENTITY; clip.bone_count() as usize];
    for k in 0..=steps {
        let time = clip.duration() * k as f32 / steps as f32;
        match &residency {
            Some((binding, r)) => sampler.seek_streamed(time, Rounding::None, binding, r).unwrap(),
            None => sampler.seek(time, Rounding::None),
        }
        sampler.decompress_pose(&mut pose).unwrap();
        for (b, t) in pose.iter().enumerate() {
            out += &format!("{:08x} {b}:", time.to_bits());
            for v in t.rotation.to_array().into_iter().chain(t.translation.to_array()).chain(t.scale.to_array()) {
                out += &format!(" {:08x}", v.to_bits());
            }
            out.push('\n');
        }
    }
    out
}

#[test]
fn a_c_program_samples_clips_through_the_header() {
    let dir = tempfile_dir();
    let exe = build(&dir);
    for name in ["wave.ossa", "cycle.ossa", "edges.ossa"] {
        let path = golden_path(name);
        let file = std::fs::read(&path).unwrap();
        let words = aligned(&file);
        let output = Command::new(&exe).arg(&path).arg("12").output().unwrap();
        assert!(output.status.success(), "{name}: {}", String::from_utf8_lossy(&output.stderr));
        let expected = expected(view(&words, file.len()), 12, None);
        assert!(String::from_utf8(output.stdout).unwrap() == expected, "{name}: values differ");
    }
    // The golden database's clips (two of them take its shared pose), at each fidelity.
    let database_path = golden_path("stream.ossadb");
    let database_file = std::fs::read(&database_path).unwrap();
    let database_words = aligned(&database_file);
    let database = view(&database_words, database_file.len());
    for name in ["stream_wave.ossa", "stream_cycle.ossa", "stream_stride.ossa", "stream_glide.ossa"] {
        let path = golden_path(name);
        let file = std::fs::read(&path).unwrap();
        let words = aligned(&file);
        let mut outputs = Vec::new();
        for (fidelity, tiers) in
            [("highest", &[Tier::Medium, Tier::Low][..]), ("medium", &[Tier::Medium][..]), ("lowest", &[][..])]
        {
            let output = Command::new(&exe).arg(&path).arg("12").arg(&database_path).arg(fidelity).output().unwrap();
            assert!(output.status.success(), "{name} {fidelity}: {}", String::from_utf8_lossy(&output.stderr));
            let expected = expected(view(&words, file.len()), 12, Some((database, tiers)));
            let output = String::from_utf8(output.stdout).unwrap();
            assert!(output == expected, "{name} {fidelity}: values differ");
            outputs.push(output);
        }
        if name == "stream_wave.ossa" {
            // Its tiers hold 32 key frames: with them resident, the poses differ.
            assert!(outputs[0] != outputs[1] && outputs[1] != outputs[2], "{name}: the tiers change nothing");
        }
    }
    // A clip that takes the database's shared pose, given alone: refused by name.
    let output = Command::new(&exe).arg(golden_path("stream_cycle.ossa")).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("ossa_sampler_init_in_database"), "{err}");
    // A corrupted clip: refused with the checksum's message, exit status 1.
    let mut corrupted = std::fs::read(golden_path("wave.ossa")).unwrap();
    let at = corrupted.len() - 40;
    corrupted[at] ^= 0x55;
    let path = dir.join("corrupted.ossa");
    std::fs::write(&path, &corrupted).unwrap();
    let output = Command::new(&exe).arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("corrupted.ossa") && err.contains("checksum"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh folder under the target directory (no extra dependency for temporary
/// folders).
fn tempfile_dir() -> PathBuf {
    let dir = profile_dir().join(format!("capi-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
