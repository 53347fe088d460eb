//! Loaded schemas kept by their JSON text, so a host answering many requests with one schema
//! loads it (field model, prompt block, compiled JSON Schema validator) once.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;
use serde_json::Value;

use super::{Schema, SchemaError};

/// A bounded, least-recently-used map from a schema document to the loaded [`Schema`]. Errors
/// are not kept: a schema that fails to load is loaded (and refused) again each time. Neither is
/// a schema whose text is longer than [`MAX_CACHED_SCHEMA_BYTES`], so what the cache holds stays
/// bounded however large the documents clients send.
/// The longest schema text the cache keeps (real extraction schemas are a few KiB).
pub const MAX_CACHED_SCHEMA_BYTES: usize = 256 * 1024;

#[derive(Debug)]
pub struct SchemaCache {
    loaded: Mutex<LruCache<String, Arc<Schema>>>,
}

impl SchemaCache {
    /// Keeps at most `capacity` schemas.
    pub fn new(capacity: NonZeroUsize) -> Self {
        SchemaCache {
            loaded: Mutex::new(LruCache::new(capacity)),
        }
    }

    /// The schema `document` describes: an object is read by [`Schema::from_value`], a string
    /// is schema text for [`Schema::parse`] (JSON or YAML). Answered from the cache when the same
    /// document (the same JSON text, keys in the same order) was loaded before.
    pub fn load(&self, document: &Value) -> Result<Arc<Schema>, SchemaError> {
        let key = document.to_string();
        if let Some(schema) = self.lock().get(&key) {
            return Ok(schema.clone());
        }
        // Loaded outside the lock: two requests racing on a new schema both load it, and
        // neither waits on the other.
        let schema = Arc::new(match document {
            Value::String(text) => Schema::parse(text)?,
            other => Schema::from_value(other)?,
        });
        if key.len() <= MAX_CACHED_SCHEMA_BYTES {
            self.lock().put(key, schema.clone());
        }
        Ok(schema)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<String, Arc<Schema>>> {
        // A panic while holding the lock cannot leave the map half-updated (`get` and `put`
        // are single calls), so a poisoned lock is still usable.
        self.loaded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cache(capacity: usize) -> SchemaCache {
        SchemaCache::new(NonZeroUsize::new(capacity).unwrap())
    }

    #[test]
    fn the_same_document_is_loaded_once() {
        let cache = cache(4);
        let document = json!({"type": "object", "properties": {"total": {"type": "number"}}});
        let first = cache.load(&document).unwrap();
        let second = cache.load(&document.clone()).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(first.fields[0].name, "total");
    }

    #[test]
    fn different_documents_give_their_own_schemas() {
        let cache = cache(4);
        let total = cache
            .load(&json!({"type": "object", "properties": {"total": {"type": "number"}}}))
            .unwrap();
        let vendor = cache
            .load(&json!({"type": "object", "properties": {"vendor": {"type": "string"}}}))
            .unwrap();
        assert_eq!(total.fields[0].name, "total");
        assert_eq!(vendor.fields[0].name, "vendor");
    }

    #[test]
    fn the_least_recently_used_schema_is_dropped_at_capacity() {
        let cache = cache(1);
        let a = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let b = json!({"type": "object", "properties": {"b": {"type": "string"}}});
        let first_a = cache.load(&a).unwrap();
        cache.load(&b).unwrap();
        assert!(!Arc::ptr_eq(&first_a, &cache.load(&a).unwrap()));
    }

    #[test]
    fn schema_text_is_parsed_and_kept_apart_from_objects() {
        let cache = cache(4);
        let text = cache
            .load(&json!(
                "type: object\nproperties:\n  total: {type: number}\n"
            ))
            .unwrap();
        assert_eq!(text.fields[0].name, "total");
        let object = cache
            .load(&json!({"type": "object", "properties": {"total": {"type": "number"}}}))
            .unwrap();
        assert!(!Arc::ptr_eq(&text, &object));
    }

    #[test]
    fn a_schema_longer_than_the_bound_is_loaded_but_not_kept() {
        let cache = cache(4);
        let long = "x".repeat(MAX_CACHED_SCHEMA_BYTES);
        let document = json!({"type": "object", "description": long,
                              "properties": {"total": {"type": "number"}}});
        let first = cache.load(&document).unwrap();
        assert_eq!(first.fields[0].name, "total");
        assert!(!Arc::ptr_eq(&first, &cache.load(&document).unwrap()));
    }

    #[test]
    fn a_schema_that_fails_is_refused_every_time() {
        let cache = cache(4);
        let bad = json!({"type": "object", "properties": {}});
        assert!(cache.load(&bad).is_err());
        assert!(cache.load(&bad).is_err());
    }
}
