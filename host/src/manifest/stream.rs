//! JSON read item by item: `kubectl get -A -o json` prints a whole cluster
//! as one `List`, and parsing it into one tree before reading its items
//! holds every object twice (and everything [`super::prune`] drops). Here
//! each item of a top-level `items` list becomes a typed object as soon as
//! it is parsed, so only one item's tree is in memory at a time. What it
//! reads, and every error, is exactly what reading each document as one
//! tree gives (tested).

use std::fmt;

use anyhow::{Result, anyhow, bail};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::load::{Manifests, Mark, add_value};

/// Reads `text`, one or more JSON documents, into `into`.
pub(super) fn load_json(into: &mut Manifests, file: &str, text: &str) -> Result<()> {
    // A first pass over the text finds where each document ends without
    // building anything.
    let mut documents = serde_json::Deserializer::from_str(text).into_iter::<IgnoredAny>();
    let mut start = 0;
    let mut index = 0;
    while let Some(scanned) = documents.next() {
        index += 1;
        if scanned.is_err() {
            bail!("{}", one_tree_error(file, text, index));
        }
        let end = documents.byte_offset();
        load_document(into, file, text, index, &text[start..end])?;
        start = end;
    }
    Ok(())
}

/// The error the one-tree reader gives for document `index` of `text`, at
/// its place in the whole text (the scan does not count nesting, surrogates
/// or number ranges, and a document read alone counts lines from its start).
fn one_tree_error(file: &str, text: &str, index: usize) -> anyhow::Error {
    let error = serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .nth(index - 1)
        .and_then(Result::err)
        .map_or_else(|| "unreadable".to_string(), |e| e.to_string());
    anyhow!("{file}: document {index}: not valid JSON: {error}")
}

/// Reads document `index`, `document`, of `text`: a `List`'s items one by
/// one; anything else whole. A List whose items cannot all be read, or a
/// document that is not a List after all, is undone and read as one tree,
/// which gives exactly what reading it whole gives.
fn load_document(
    into: &mut Manifests,
    file: &str,
    text: &str,
    index: usize,
    document: &str,
) -> Result<()> {
    if document.trim_start().starts_with('{') {
        let mut list = ListRead {
            into: &mut *into,
            file,
            mark: None,
            failed: false,
        };
        let read = (&mut list).deserialize(&mut serde_json::Deserializer::from_str(document));
        let (mark, failed) = (list.mark.take(), list.failed);
        match (read, mark) {
            // No items: the object itself, parsed once.
            (Ok(wrapper), None) => return add_value(into, file, Value::Object(wrapper)),
            (Ok(wrapper), Some(_)) if is_list(&wrapper) && !failed => return Ok(()),
            (_, Some(mark)) => mark.restore(into),
            (Err(_), None) => {}
        }
    }
    let value: Value =
        serde_json::from_str(document).map_err(|_| one_tree_error(file, text, index))?;
    add_value(into, file, value)
}

/// Whether a top-level object read without its `items` is a List: the
/// same test [`add_value`] applies to a whole one.
fn is_list(wrapper: &Map<String, Value>) -> bool {
    let field = |key: &str| wrapper.get(key).and_then(Value::as_str).unwrap_or_default();
    !field("apiVersion").is_empty() && field("kind").ends_with("List")
}

/// A top-level object whose `items` are added to `into` as they are
/// parsed. Its value is the object without `items`.
struct ListRead<'a> {
    into: &'a mut Manifests,
    file: &'a str,
    /// What `into` held before the first item: set once `items` is met.
    mark: Option<Mark>,
    /// An item could not be read: the rest are skipped, and the caller
    /// reads the document again as one tree.
    failed: bool,
}

impl<'de> DeserializeSeed<'de> for &mut ListRead<'_> {
    type Value = Map<String, Value>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for &mut ListRead<'_> {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut wrapper = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                if self.mark.is_some() {
                    return Err(serde::de::Error::custom("a second items field"));
                }
                self.mark = Some(Mark::of(self.into));
                map.next_value_seed(Items(&mut *self))?;
            } else {
                let value: Value = map.next_value()?;
                wrapper.insert(key, value);
            }
        }
        Ok(wrapper)
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
            if read.failed {
                if seq.next_element::<IgnoredAny>()?.is_none() {
                    return Ok(());
                }
                continue;
            }
            let Some(item) = seq.next_element::<Value>()? else {
                return Ok(());
            };
            if add_value(read.into, read.file, item).is_err() {
                read.failed = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the one-tree reader makes of `text`: objects, skipped kinds
    /// and warnings, or the error.
    fn one_tree(text: &str) -> Result<String, String> {
        let mut into = Manifests::default();
        let mut read = || -> Result<()> {
            for (index, value) in serde_json::Deserializer::from_str(text)
                .into_iter::<Value>()
                .enumerate()
            {
                let value = value
                    .map_err(|e| anyhow!("f.json: document {}: not valid JSON: {e}", index + 1))?;
                add_value(&mut into, "f.json", value)?;
            }
            Ok(())
        };
        read().map_err(|e| e.to_string())?;
        Ok(summary(&into))
    }

    fn summary(into: &Manifests) -> String {
        let objects: Vec<String> = into.objects.iter().map(|(o, _)| o.to_string()).collect();
        format!("{objects:?} {:?} {:?}", into.skipped, into.warnings)
    }

    fn streamed(text: &str) -> Result<String, String> {
        let mut into = Manifests::default();
        load_json(&mut into, "f.json", text).map_err(|e| e.to_string())?;
        Ok(summary(&into))
    }

    #[test]
    fn item_by_item_reads_exactly_as_one_tree() {
        let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"a"},"spec":{"containers":[]}}"#;
        let node = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}"#;
        let lone_surrogate = r#"{"x":"\udc00"}"#;
        let texts = [
            format!(
                r#"{{"apiVersion":"v1","items":[{pod},{node}],"kind":"List","metadata":{{}}}}"#
            ),
            format!(r#"{{"kind":"List","apiVersion":"v1","items":[{pod}]}}"#),
            format!("{pod}\n{node}\n  \n"),
            format!(
                r#"{{"apiVersion":"v1","kind":"List","items":[{{"apiVersion":"v1","kind":"List","items":[{node}]}}]}}"#
            ),
            r#"{"apiVersion":"v1","kind":"List","items":null}"#.to_string(),
            format!(r#"{{"apiVersion":"v1","kind":"Gizmo","items":[{pod}]}}"#),
            r#"{"apiVersion":"v1","kind":"Gizmo","items":[{"kind":"Pod"}]}"#.to_string(),
            format!(r#"{{"apiVersion":"v1","kind":"List","items":[{pod}],"items":[{node}]}}"#),
            format!(r#"{{"apiVersion":"v1","kind":"List","items":[{{"kind":"Pod"}},{pod}]}}"#),
            format!(
                r#"{{"apiVersion":"v1","kind":"List","items":[{{"kind":"Pod"}},{lone_surrogate}]}}"#
            ),
            format!(
                "{{\"apiVersion\":\"v1\",\n\"kind\":\"ConfigMap\",\n\"metadata\":{{\"name\":\"c\"}}}}\n{lone_surrogate}"
            ),
            format!("{pod} trailing"),
            format!(r#"{{"apiVersion":"v1","kind":"List","items":[{pod}]"#),
            format!("{{\"a\": {}", "[".repeat(500)),
            "[1, 2]".to_string(),
        ];
        for text in &texts {
            assert_eq!(streamed(text), one_tree(text), "{text}");
        }
    }
}
