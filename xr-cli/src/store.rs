//! `xr store verify`: every object of a store checked against its checksum.

use anyhow::Context;
use std::path::Path;
use xr_sourcebuild::Store;

/// Checks every object; with `delete_corrupt`, removes the corrupt ones (they
/// are rebuilt on next use) and temporary files that interrupted writes left.
/// Returns whether the store is whole (after removal, with `delete_corrupt`).
pub fn verify(root: &Path, delete_corrupt: bool) -> anyhow::Result<bool> {
    if !root.join("objects").is_dir() {
        anyhow::bail!("{} is not an XR store (no objects/ directory)", root.display());
    }
    let store = Store::open(root).with_context(|| format!("opening the store at {}", root.display()))?;
    let keys = store.keys()?;
    let mut corrupt = 0;
    let mut bytes = 0u64;
    for key in &keys {
        match store.get(key) {
            Ok(Some(payload)) => bytes += payload.len() as u64,
            Ok(None) => {}
            Err(e) => {
                corrupt += 1;
                println!("corrupt: {e}");
                if delete_corrupt {
                    store.remove(key)?;
                    println!("  removed {key}");
                }
            }
        }
    }
    let leftovers: Vec<_> = std::fs::read_dir(root.join("tmp"))
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    for leftover in &leftovers {
        println!("unfinished write: {}", leftover.display());
        if delete_corrupt {
            std::fs::remove_file(leftover).with_context(|| format!("removing {}", leftover.display()))?;
        }
    }
    println!(
        "xr store verify: {} objects, {} whole ({bytes} payload bytes), {corrupt} corrupt, {} unfinished writes{}",
        keys.len(),
        keys.len() - corrupt,
        leftovers.len(),
        if delete_corrupt && (corrupt > 0 || !leftovers.is_empty()) { " (removed)" } else { "" }
    );
    // After removing what was broken, the store is whole again.
    Ok(delete_corrupt || (corrupt == 0 && leftovers.is_empty()))
}
