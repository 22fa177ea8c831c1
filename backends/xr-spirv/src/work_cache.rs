//! Work done once per distinct input in a process.
//!
//! A build compiles the same stage for many variants: a vertex shader that
//! reads none of a matrix's axes preprocesses to the same text in every
//! variant, so its SPIR-V, the validator's verdict on it and its reflection
//! are the same each time. ccache's preprocessor mode keys on the
//! preprocessed text for the same reason. Each cache here is keyed by a
//! BLAKE3 hash of *everything* its result depends on, so a hit returns what
//! the work would have returned; nothing is ever invalidated, only dropped.
//!
//! Memory stays bounded: a cache that reaches its budget is emptied and
//! fills again (a large matrix keeps what it reuses most, the stages shared
//! by many variants, because those are met again at once).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

/// A content-keyed cache of `V`, shared by the threads of a process.
pub(crate) struct WorkCache<V> {
    entries: Mutex<Entries<V>>,
    /// Bytes (as `weigh` counts them) past which the cache is emptied.
    budget: usize,
}

struct Entries<V> {
    map: HashMap<[u8; 32], Arc<V>>,
    weight: usize,
}

impl<V> WorkCache<V> {
    /// An empty cache that holds about `budget` bytes.
    pub(crate) fn new(budget: usize) -> Self {
        Self { entries: Mutex::new(Entries { map: HashMap::new(), weight: 0 }), budget }
    }

    /// The value for `key`, if one was kept.
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<Arc<V>> {
        self.lock().map.get(key).cloned()
    }

    /// Keeps `value` (of about `weight` bytes) under `key`, and returns it.
    pub(crate) fn insert(&self, key: [u8; 32], value: V, weight: usize) -> Arc<V> {
        let value = Arc::new(value);
        let mut entries = self.lock();
        if entries.weight + weight > self.budget {
            entries.map.clear();
            entries.weight = 0;
        }
        if entries.map.insert(key, value.clone()).is_none() {
            entries.weight += weight;
        }
        value
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries<V>> {
        // The map holds finished values only: a panic elsewhere leaves it whole.
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Hashes `parts`, each length-prefixed so that boundaries count: the
/// store's own key function ([`xr_store::ObjectKey::from_parts`]).
pub(crate) fn key<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> [u8; 32] {
    xr_store::ObjectKey::from_parts(parts).0
}

/// The bytes of `words`, for hashing.
pub(crate) fn word_bytes(words: &[u32]) -> &[u8] {
    // SAFETY: u32 has no padding and u8 has alignment 1; the slice covers
    // exactly the words' memory and lives as long as they do.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), std::mem::size_of_val(words)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_values_by_key_and_empties_itself_at_its_budget() {
        let cache = WorkCache::new(100);
        let (a, b, c) = (key([b"a".as_slice()]), key([b"b".as_slice()]), key([b"c".as_slice()]));
        cache.insert(a, 1, 60);
        assert_eq!(cache.get(&a).as_deref(), Some(&1));
        assert_eq!(cache.get(&b), None);
        cache.insert(b, 2, 30);
        assert_eq!(cache.get(&b).as_deref(), Some(&2));
        // Past the budget: emptied, then the new value kept.
        cache.insert(c, 3, 30);
        assert_eq!(cache.get(&a), None);
        assert_eq!(cache.get(&c).as_deref(), Some(&3));
    }

    #[test]
    fn words_hash_as_their_bytes() {
        assert_eq!(word_bytes(&[1, 2, 3]).len(), 12);
    }
}
