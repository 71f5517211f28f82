//! Interned strings: node names and label keys/values become `u32` symbols,
//! so plugins compare numbers instead of copying strings across the boundary.

use rustc_hash::FxHashMap;

/// A string table; symbol ids are dense and assigned in first-seen order.
#[derive(Debug, Default, Clone)]
pub struct Symbols {
    ids: FxHashMap<String, u32>,
    texts: Vec<String>,
}

impl Symbols {
    /// The id of `text`, adding it if new.
    pub fn intern(&mut self, text: &str) -> u32 {
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        let id = u32::try_from(self.texts.len()).expect("more than 2^32 symbols");
        self.ids.insert(text.to_string(), id);
        self.texts.push(text.to_string());
        id
    }

    /// The id of `text` if it was interned.
    pub fn lookup(&self, text: &str) -> Option<u32> {
        self.ids.get(text).copied()
    }

    /// How many strings it holds.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// The text of `id`, if it exists.
    pub fn text(&self, id: u32) -> Option<&str> {
        self.texts.get(id as usize).map(String::as_str)
    }
}
