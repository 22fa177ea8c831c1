//! A failed artifact keeps its last good object.
//!
//! When the compile of a (variant, target) fails, the catalog this build
//! writes names the object the catalog named for it before the build, if
//! that object is still in the store, marked stale with the failure's first
//! error (one line). A running engine, the next start of one, and `xr store
//! gc` keep what worked; `xr store verify` lists what is stale. An artifact
//! that never built has no object to keep. The next successful build of it
//! writes its entry fresh, and the mark goes.

use crate::{report::ArtifactId, summary::Failure};
use std::collections::{BTreeMap, HashMap};
use xr_store::{ObjectKey, Store, catalog, catalog::CatalogVariant};

/// The last good objects of the artifacts that failed in this build, read
/// from the catalogs as they were before it.
#[derive(Debug, Default)]
pub(crate) struct LastGood {
    /// (program, variant) → its targets' last good objects.
    kept: HashMap<(String, String), Vec<Kept>>,
    count: usize,
}

/// One target's last good object.
#[derive(Debug)]
struct Kept {
    target: String,
    /// Its key, hex.
    object: String,
    /// Why it is stale.
    reason: String,
}

impl LastGood {
    /// Looks up, in the catalogs of `store`, the object of each artifact of
    /// `failed` (those of no artifact are left out). An object no longer in
    /// the store is not kept: a catalog never names one that is not there.
    pub(crate) fn read(store: &Store, failed: &[Failure]) -> Self {
        let mut reasons: BTreeMap<&str, HashMap<(&str, &str), String>> = BTreeMap::new();
        for failure in failed {
            let Some(ArtifactId { program, variant, target }) = &failure.artifact else { continue };
            reasons.entry(program).or_default().insert((variant, target), reason(&failure.message));
        }
        let mut last_good = Self::default();
        for (program, failed) in reasons {
            let wanted = |variant: &str, target: &str| failed.contains_key(&(variant, target));
            let objects = match catalog::read_objects(store.root(), program, wanted) {
                Ok(objects) => objects,
                Err(error) => {
                    tracing::warn!("no last good objects kept for '{program}': {error}");
                    continue;
                }
            };
            for (variant, target, object) in objects {
                if !ObjectKey::from_hex(&object).is_some_and(|key| store.path_of(&key).is_file()) {
                    continue;
                }
                let reason = failed[&(variant.as_str(), target.as_str())].clone();
                last_good.kept.entry((program.to_owned(), variant)).or_default().push(Kept { target, object, reason });
                last_good.count += 1;
            }
        }
        last_good
    }

    /// How many artifacts keep their last good object.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Puts into `entry`, the entry this build made for `variant` of
    /// `program`, the last good object of each of its targets that failed,
    /// marked stale.
    pub(crate) fn keep(&self, program: &str, variant: &str, entry: &mut CatalogVariant) {
        let Some(kept) = self.kept.get(&(program.to_owned(), variant.to_owned())) else { return };
        for Kept { target, object, reason } in kept {
            if !entry.objects.contains_key(target) {
                entry.objects.insert(target.clone(), object.clone());
                entry.stale.insert(target.clone(), reason.clone());
            }
        }
    }

    /// The programs with a last good object kept.
    #[cfg(test)]
    fn programs(&self) -> std::collections::BTreeSet<&str> {
        self.kept.keys().map(|(program, _)| program.as_str()).collect()
    }
}

/// A failure's message as a stale mark's reason: its first line (the first
/// error, `file:line:column: error: message`).
fn reason(message: &str) -> String {
    let line = message.lines().next().unwrap_or_default().trim();
    if line.is_empty() { "its build failed".to_owned() } else { line.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ArtifactError;
    use xr_store::catalog::{CatalogProgram, TargetObjects};

    fn failure(program: &str, variant: &str, target: &str, message: &str) -> Failure {
        Failure {
            what: format!("{variant} ({target})"),
            message: message.to_owned(),
            artifact: Some(ArtifactId { program: program.into(), variant: variant.into(), target: target.into() }),
            compiler: String::new(),
            error: ArtifactError::Compiler { message: message.to_owned(), diagnostics: Vec::new() }.into(),
        }
    }

    /// A store whose catalog of program `p` names `objects` (variant,
    /// target, payload), each put in the store unless `absent` names it.
    fn store_with(objects: &[(&str, &str, &str)], absent: &[&str]) -> (tempfile::TempDir, Store) {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let mut program = CatalogProgram {
            name: "p".into(),
            manifest: "xr.toml".into(),
            axes: Vec::new(),
            overrides: Vec::new(),
            targets: vec!["gl-glsl".into(), "vk-spirv".into()],
            variants: BTreeMap::new(),
        };
        for (variant, target, payload) in objects {
            let key = xr_store::object_key(payload.as_bytes());
            if !absent.contains(payload) {
                store.put(&key, payload.as_bytes()).unwrap();
            }
            let entry = program.variants.entry((*variant).to_owned()).or_default();
            entry.objects.insert((*target).to_owned(), key.hex());
        }
        catalog::write(store.root(), &program).unwrap();
        (root, store)
    }

    fn hex(payload: &str) -> String {
        xr_store::object_key(payload.as_bytes()).hex()
    }

    #[test]
    fn a_failed_artifact_keeps_the_object_the_last_catalog_named_marked_stale() {
        let (_root, store) = store_with(&[("p[A=0]", "vk-spirv", "a0-vk"), ("p[A=0]", "gl-glsl", "a0-gl")], &[]);
        let failed = [
            failure("p", "p[A=0]", "vk-spirv", "inc/shared.glsl:3:5: error: 'x' : undeclared identifier\nmore"),
            failure("p", "p[A=1]", "vk-spirv", "never built"),
            failure("q", "q", "vk-spirv", "no catalog at all"),
        ];
        let last_good = LastGood::read(&store, &failed);
        assert_eq!(last_good.len(), 1, "only the artifact that built before: {last_good:?}");
        assert_eq!(last_good.programs(), std::collections::BTreeSet::from(["p"]));

        // This build's entry: gl-glsl built now, vk-spirv failed.
        let objects = TargetObjects::from_iter([("gl-glsl".to_owned(), hex("a0-gl-new"))]);
        let mut entry = CatalogVariant { objects, ..CatalogVariant::default() };
        last_good.keep("p", "p[A=0]", &mut entry);
        assert_eq!(entry.objects.get("vk-spirv"), Some(&hex("a0-vk")), "the last good object");
        assert_eq!(
            entry.stale.get("vk-spirv").map(String::as_str),
            Some("inc/shared.glsl:3:5: error: 'x' : undeclared identifier"),
            "marked stale with the first line of the failure"
        );
        assert_eq!(entry.objects.get("gl-glsl"), Some(&hex("a0-gl-new")), "what built now is kept as built");
        assert!(!entry.stale.contains_key("gl-glsl"));

        // The variant that never built has no entry to keep.
        let mut never = CatalogVariant::default();
        last_good.keep("p", "p[A=1]", &mut never);
        assert!(never.objects.is_empty() && never.stale.is_empty(), "{never:?}");
    }

    #[test]
    fn a_last_good_object_gone_from_the_store_is_not_named_again() {
        let (_root, store) = store_with(&[("p", "vk-spirv", "gone")], &["gone"]);
        let last_good = LastGood::read(&store, &[failure("p", "p", "vk-spirv", "bad")]);
        assert_eq!(last_good.len(), 0);
        let mut entry = CatalogVariant::default();
        last_good.keep("p", "p", &mut entry);
        assert!(entry.objects.is_empty(), "{entry:?}");
    }

    #[test]
    fn a_stale_object_that_fails_again_stays_with_the_new_reason() {
        let (_root, store) = store_with(&[("p", "vk-spirv", "good")], &[]);
        let mut before = catalog::read_all(store.root()).0.remove("p").unwrap();
        before.variants.get_mut("p").unwrap().stale.insert("vk-spirv".into(), "a.glsl:1: error: old".into());
        catalog::write(store.root(), &before).unwrap();
        let last_good = LastGood::read(&store, &[failure("p", "p", "vk-spirv", "a.glsl:2: error: new")]);
        let mut entry = CatalogVariant::default();
        last_good.keep("p", "p", &mut entry);
        assert_eq!(entry.objects.get("vk-spirv"), Some(&hex("good")));
        assert_eq!(entry.stale.get("vk-spirv").map(String::as_str), Some("a.glsl:2: error: new"));
        assert_eq!(reason(""), "its build failed");
    }
}
