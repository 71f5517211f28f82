//! JSON read item by item: `kubectl get -A -o json` prints a whole cluster
//! as one `List`, and parsing it into one tree before reading its items
//! holds every object twice (and everything [`super::prune`] drops). Here
//! each item of a top-level `items` list becomes a typed object as soon as
//! it is parsed, so only one item's tree is in memory at a time.

use std::fmt;

use anyhow::{Result, anyhow, bail};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::load::{Manifests, Mark, add_value};

/// Reads `text`, one or more JSON documents, into `into`.
pub(super) fn load_json(into: &mut Manifests, file: &str, text: &str) -> Result<()> {
    // A first pass over the text finds where each document ends (and any
    // syntax error, reported as the one-tree reader reports it) without
    // building anything.
    let mut documents = serde_json::Deserializer::from_str(text).into_iter::<IgnoredAny>();
    let mut start = 0;
    let mut index = 0;
    while let Some(scanned) = documents.next() {
        index += 1;
        if scanned.is_err() {
            // The error the one-tree reader gives (the scan does not count
            // nesting, so it would report a deep text's end instead).
            let error = serde_json::Deserializer::from_str(text)
                .into_iter::<Value>()
                .nth(index - 1)
                .and_then(Result::err)
                .map_or_else(|| scanned.unwrap_err().to_string(), |e| e.to_string());
            bail!("{file}: document {index}: not valid JSON: {error}");
        }
        let end = documents.byte_offset();
        load_document(into, file, index, &text[start..end])?;
        start = end;
    }
    Ok(())
}

/// Reads one JSON document: a `List`'s items one by one, anything else
/// (and a List the streaming read cannot take as it is) as one tree.
fn load_document(into: &mut Manifests, file: &str, index: usize, text: &str) -> Result<()> {
    if text.trim_start().starts_with('{') {
        let mark = Mark::of(into);
        let mut list = ListRead {
            into: &mut *into,
            file,
            error: None,
            items_seen: false,
        };
        let read = (&mut list).deserialize(&mut serde_json::Deserializer::from_str(text));
        let error = list.error.take();
        if let Ok(Some(wrapper)) = read
            && is_list(&wrapper)
        {
            return error.map_or(Ok(()), Err);
        }
        // Not a List after all, or one with a second `items`, or items that
        // are not a list: undone, and read as one tree, which decides.
        mark.restore(into);
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| anyhow!("{file}: document {index}: not valid JSON: {e}"))?;
    add_value(into, file, value)
}

/// Whether a top-level object read without its `items` is a List: the
/// same test [`add_value`] applies to a whole one.
fn is_list(wrapper: &Map<String, Value>) -> bool {
    let field = |key: &str| wrapper.get(key).and_then(Value::as_str).unwrap_or_default();
    !field("apiVersion").is_empty() && field("kind").ends_with("List")
}

/// A top-level object whose `items` are added to `into` as they are
/// parsed. Its value is the object without `items`, or `None` when it had
/// no `items` list (the caller then reads it as one tree).
struct ListRead<'a> {
    into: &'a mut Manifests,
    file: &'a str,
    /// The first item that could not be read; later items are skipped.
    error: Option<anyhow::Error>,
    items_seen: bool,
}

impl<'de> DeserializeSeed<'de> for &mut ListRead<'_> {
    type Value = Option<Map<String, Value>>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for &mut ListRead<'_> {
    type Value = Option<Map<String, Value>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut wrapper = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                if self.items_seen {
                    return Err(serde::de::Error::custom("a second items field"));
                }
                self.items_seen = true;
                map.next_value_seed(Items(&mut *self))?;
            } else {
                let value: Value = map.next_value()?;
                wrapper.insert(key, value);
            }
        }
        Ok(self.items_seen.then_some(wrapper))
    }
}

/// The `items` of a [`ListRead`]: each read by [`add_value`] as it comes.
struct Items<'r, 'a>(&'r mut ListRead<'a>);

impl<'de> DeserializeSeed<'de> for Items<'_, '_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Items<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let read = self.0;
        loop {
            if read.error.is_some() {
                if seq.next_element::<IgnoredAny>()?.is_none() {
                    return Ok(());
                }
                continue;
            }
            let Some(item) = seq.next_element::<Value>()? else {
                return Ok(());
            };
            if let Err(error) = add_value(read.into, read.file, item) {
                read.error = Some(error);
            }
        }
    }
}
