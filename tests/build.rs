//! Finds out whether the shared clips (`../shared/clips`, beside the repository) are
//! here. They are only on project machines: on a user's fresh clone, the tests that
//! need them are marked ignored with the reason, so that the test runner's own
//! output says they were skipped rather than reporting them passed. Under CI
//! (`CI=true`) they are never skipped: their absence fails them.

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(shared_clips_missing)");
    println!("cargo::rerun-if-env-changed=CI");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let clips = Path::new(&manifest).join("../../shared/clips");
    // Also reruns when the folder appears or goes away.
    println!("cargo::rerun-if-changed={}", clips.display());
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if !clips.is_dir() && !ci {
        println!("cargo::rustc-cfg=shared_clips_missing");
        println!("cargo::warning=../shared/clips not found: the tests that need the shared clips are skipped");
    }
}
