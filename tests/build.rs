//! Finds out whether the shared clips and glTF models (`../shared/clips`,
//! `../shared/gltf`, beside the repository) are here. They are only on project machines: on a user's fresh clone, the tests that
//! need them are marked ignored with the reason, so that the test runner's own
//! output says they were skipped rather than reporting them passed. Under CI
//! (`CI=true`) they are never skipped: their absence fails them.

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(shared_clips_missing)");
    println!("cargo::rustc-check-cfg=cfg(shared_gltf_missing)");
    println!("cargo::rerun-if-env-changed=CI");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    for (folder, cfg) in [("clips", "shared_clips_missing"), ("gltf", "shared_gltf_missing")] {
        let dir = Path::new(&manifest).join("../../shared").join(folder);
        // Also reruns when the folder appears or goes away.
        println!("cargo::rerun-if-changed={}", dir.display());
        if !dir.is_dir() && !ci {
            println!("cargo::rustc-cfg={cfg}");
            println!("cargo::warning=../shared/{folder} not found: the tests that need it are reported ignored");
        }
    }
}
