//! Tells the tests which target they run on, for the C compiler that builds
//! `c/sample.c` (`tests/c_program.rs`).
fn main() {
    println!("cargo:rustc-env=OSSA_CAPI_TARGET={}", std::env::var("TARGET").unwrap_or_default());
    println!("cargo:rerun-if-changed=build.rs");
}
