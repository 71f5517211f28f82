//! The C header is generated from the crate, never edited by hand: this
//! test regenerates it with cbindgen and fails when `include/wasched.h`
//! differs (`WASCHED_BLESS=1` writes it instead).

use std::path::Path;

#[test]
fn the_committed_header_is_what_cbindgen_generates() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let path = crate_dir.join("include/wasched.h");
    if std::env::var_os("WASCHED_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is not what cbindgen generates from ffi/src; run WASCHED_BLESS=1 cargo test -p wasched-ffi --test header and commit it",
        path.display()
    );
}
