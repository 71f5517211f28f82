//! Checks on a plugin file at load time (answers are checked by
//! [`crate::framework::answers`]).

/// Tells a component from other files by its header: a WebAssembly
/// component, not a core module or something else.
pub fn binary_kind(bytes: &[u8]) -> Result<(), String> {
    const COMPONENT: [u8; 4] = [0x0d, 0x00, 0x01, 0x00];
    const CORE_MODULE: [u8; 4] = [0x01, 0x00, 0x00, 0x00];
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err("not a WebAssembly file".into());
    }
    match &bytes[4..8] {
        v if v == COMPONENT => Ok(()),
        v if v == CORE_MODULE => Err("a core wasm module, not a component: build the plugin for wasm32-wasip2 (or wrap it with `wasm-tools component new`)".into()),
        _ => Err(format!("unsupported WebAssembly version/layer {:02x?}", &bytes[4..8])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_kinds() {
        assert_eq!(
            binary_kind(b"hello world").unwrap_err(),
            "not a WebAssembly file"
        );
        assert!(
            binary_kind(b"\0asm\x01\0\0\0")
                .unwrap_err()
                .starts_with("a core wasm module, not a component")
        );
        assert!(binary_kind(b"\0asm\x0d\0\x01\0").is_ok());
        assert!(
            binary_kind(b"\0asm\x02\0\0\0")
                .unwrap_err()
                .starts_with("unsupported WebAssembly version")
        );
        assert!(binary_kind(b"\0asm").is_err());
    }
}
