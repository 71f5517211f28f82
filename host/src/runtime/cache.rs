//! Compiled components kept on disk, so that a second run starts in
//! milliseconds instead of compiling every plugin again.
//!
//! An entry is keyed by the component's bytes and the engine's
//! compatibility hash (wasmtime version, target, configuration), so a
//! different engine never sees another's code. Each file carries a magic
//! header and a checksum of its payload; an entry that is truncated,
//! corrupt, stale or otherwise refused by wasmtime is compiled again and
//! rewritten, never used. The cache trusts its directory as it trusts the
//! `wasched` binary: it protects against damage, not against someone who
//! may write to the user's own cache directory.
//!
//! Where: `$WASCHED_CACHE_DIR`, else `$XDG_CACHE_HOME/wasched`, else
//! `$HOME/.cache/wasched`; `WASCHED_CACHE_DIR=off` turns it off.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::Result;
use wasmtime::Engine;
use wasmtime::component::Component;

/// First bytes of every cache file (the format's version is in it).
const MAGIC: &[u8; 8] = b"WASCHED1";

/// Where compiled components are kept, if anywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentCache {
    dir: Option<PathBuf>,
}

/// Where a component came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Deserialized from a valid cache entry.
    Cached,
    /// Compiled (and stored, if the cache is on).
    Compiled,
}

fn checksum(bytes: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

impl ComponentCache {
    /// No cache: every load compiles.
    pub fn off() -> Self {
        Self { dir: None }
    }

    /// A cache in `dir` (created when the first entry is written).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: Some(dir.into()),
        }
    }

    /// The user's cache: `$WASCHED_CACHE_DIR` (`off` for none), else
    /// `$XDG_CACHE_HOME/wasched`, else `$HOME/.cache/wasched`.
    pub fn from_env() -> Self {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        match var("WASCHED_CACHE_DIR") {
            Some(dir) if dir == "off" => Self::off(),
            Some(dir) => Self::at(dir),
            None => match (var("XDG_CACHE_HOME"), var("HOME")) {
                (Some(xdg), _) => Self::at(Path::new(&xdg).join("wasched")),
                (None, Some(home)) => Self::at(Path::new(&home).join(".cache/wasched")),
                (None, None) => Self::off(),
            },
        }
    }

    /// The cache directory, if the cache is on.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn path(&self, engine: &Engine, bytes: &[u8]) -> Option<PathBuf> {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        bytes.hash(&mut hasher);
        let key = hasher.finish();
        Some(self.dir.as_ref()?.join(format!("{key:016x}.cwasm")))
    }

    /// The compiled component of `bytes`: from a valid cache entry, or
    /// compiled now (and stored). Compilation errors are the component's.
    pub fn load(&self, engine: &Engine, bytes: &[u8]) -> Result<(Component, Origin)> {
        let path = self.path(engine, bytes);
        if let Some(path) = &path
            && let Some(component) = Self::read(engine, path)
        {
            return Ok((component, Origin::Cached));
        }
        let component = Component::new(engine, bytes)?;
        if let Some(path) = &path {
            // A cache that cannot be written is only slower: ignore errors.
            let _ = Self::write(path, &component);
        }
        Ok((component, Origin::Compiled))
    }

    /// A cache entry that passes every check, or `None`.
    fn read(engine: &Engine, path: &Path) -> Option<Component> {
        let file = std::fs::read(path).ok()?;
        let (header, payload) = file.split_at_checked(MAGIC.len() + 8)?;
        let (magic, sum) = header.split_at(MAGIC.len());
        if magic != MAGIC || sum != checksum(payload).to_le_bytes() {
            return None;
        }
        // SAFETY: the payload is what `Component::serialize` wrote for an
        // engine with the same compatibility hash (it is in the key), and
        // the checksum shows it arrived unchanged; wasmtime also checks its
        // own header and refuses an incompatible artifact with an error.
        unsafe { Component::deserialize(engine, payload) }.ok()
    }

    /// Writes an entry atomically (a temporary file renamed into place).
    fn write(path: &Path, component: &Component) -> Result<()> {
        let payload = component.serialize()?;
        let dir = path.parent().expect("entries live in the cache directory");
        std::fs::create_dir_all(dir)?;
        let mut file = Vec::with_capacity(MAGIC.len() + 8 + payload.len());
        file.extend_from_slice(MAGIC);
        file.extend_from_slice(&checksum(&payload).to_le_bytes());
        file.extend_from_slice(&payload);
        let temporary = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&temporary, file)?;
        std::fs::rename(&temporary, path)?;
        Ok(())
    }
}
