//! `include/ossa.h` is what cbindgen makes of `src/lib.rs` today: a header that fell
//! behind the Rust side fails here (regenerate with `OSSA_BLESS=1 cargo test -p
//! ossa-capi --test header`).

use std::path::PathBuf;

#[test]
fn the_committed_header_is_cbindgens_output() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads src/lib.rs")
        .write(&mut generated);
    let path = crate_dir.join("include/ossa.h");
    if std::env::var_os("OSSA_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read(&path).expect("include/ossa.h present");
    assert!(
        committed == generated,
        "{} is not cbindgen's output for src/lib.rs: regenerate it (OSSA_BLESS=1)",
        path.display()
    );
}
