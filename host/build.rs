//! Builds the plugin crates under `plugins/` into wasm components and embeds
//! them in the `wasched` binary, so that a plain `cargo build` (or `cargo
//! test`) yields a host that needs no further set-up.
//!
//! The plugins are built by one nested cargo for `wasm32-wasip2` with the
//! workspace's `plugin` profile, in a target directory of their own (sharing
//! the outer one would deadlock on its lock). Each crate's component exports
//! exactly the extension points its `register_plugin!` names, so they can
//! share one build. A missing wasm target stops the build with the command
//! that adds it (`rust-toolchain.toml` lists it, so rustup installs it with
//! the toolchain); the build never runs rustup itself.
//!
//! Test fixture plugins under `testdata/plugins/` are built the same way but
//! not embedded; `WASCHED_TEST_PLUGINS` tells tests where they are.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir.parent().unwrap().to_path_buf();
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let plugins = plugin_crates(&root.join("plugins"));
    let fixtures = plugin_crates(&root.join("testdata/plugins"));
    // The crates' own directories, not all of `plugins/`: the plugins in
    // other languages there build into their own directories, which must
    // not rebuild the host. A new crate changes Cargo.lock.
    let crate_dirs = plugins.iter().map(|name| format!("plugins/{name}")).chain(
        fixtures
            .iter()
            .map(|name| format!("testdata/plugins/{name}")),
    );
    for watched in ["plugins/sdk", "wit", "Cargo.toml", "Cargo.lock"]
        .into_iter()
        .map(String::from)
        .chain(crate_dirs)
    {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }

    ensure_wasm_target();
    let target_dir = plugin_target_dir(&out_dir);
    let crates: Vec<&String> = plugins.iter().chain(&fixtures).collect();
    build_components(&root, &target_dir, &crates);
    let built = target_dir.join(TARGET).join("plugin");
    println!("cargo:rustc-env=WASCHED_TEST_PLUGINS={}", built.display());

    let mut code = String::from(
        "/// Plugin components built from `plugins/`, by crate name.\n\
         pub const BUNDLED: &[(&str, &[u8])] = &[\n",
    );
    for name in &plugins {
        let wasm = built.join(format!("{}.wasm", name.replace('-', "_")));
        assert!(
            wasm.exists(),
            "plugin {name} was not built at {}",
            wasm.display()
        );
        let path = wasm.display().to_string();
        writeln!(code, "    ({name:?}, include_bytes!({path:?})),").unwrap();
    }
    code.push_str("];\n");
    std::fs::write(out_dir.join("bundled_plugins.rs"), code).unwrap();
}

/// Builds the plugin crates into components, in one cargo invocation.
fn build_components(root: &Path, target_dir: &Path, names: &[&String]) {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(root)
        .args(["build", "--target", TARGET, "--profile", "plugin"])
        .arg("--target-dir")
        .arg(target_dir);
    for name in names {
        build.arg("-p").arg(name);
    }
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_LLVM_COV",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        build.env_remove(var);
    }
    let status = build
        .status()
        .expect("failed to run cargo to build the plugins");
    assert!(
        status.success(),
        "building the wasm plugins {names:?} failed (see above)"
    );
}

/// Every directory under `dir` with a `Cargo.toml` except the SDK, by
/// package name (the directory name), sorted.
fn plugin_crates(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let name = path.file_name()?.to_str()?.to_string();
            (path.join("Cargo.toml").exists() && name != "sdk").then_some(name)
        })
        .collect();
    names.sort();
    names
}

/// `<outer target dir>/wasm-plugins`: shared by all profiles, so that `cargo
/// test` and `cargo build --release` do not build the plugins twice. The outer
/// target dir is the ancestor of OUT_DIR that holds `CACHEDIR.TAG`.
fn plugin_target_dir(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").exists())
        .map(|dir| dir.join("wasm-plugins"))
        .unwrap_or_else(|| out_dir.join("wasm-plugins"))
}

/// Stops the build, saying how to add it, if the active toolchain lacks
/// the wasm target.
fn ensure_wasm_target() {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let installed = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        .is_some_and(|dir| dir.exists());
    if installed {
        return;
    }
    panic!(
        "the {TARGET} target the plugins compile to is not installed for {rustc}: \
         add it with `rustup target add {TARGET}` and build again"
    );
}
