//! The catalog: what a built program offers the run-time library, one JSON
//! file per program in the store's `catalog/` directory, replaced whole
//! (write, fsync, rename) at the end of each build.

use serde::{Deserialize, Serialize};
use std::{
    collections::BTreeMap,
    fs::File,
    path::{Path, PathBuf},
};

/// The scalar type of an override.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OverrideType {
    /// `float`.
    Float,
    /// `int`.
    Int,
    /// `uint`.
    Uint,
    /// `bool`.
    Bool,
}

/// A specialization constant a variant may set at load time: variants
/// that differ only by a value are one program with an override,
/// not more variants. On SPIR-V targets it is the `constant_id`; on
/// `gl-glsl`, which has no specialization constants, XR defines `NAME` to
/// the value when it builds the source on the device, so sources declare it
/// under `#if defined(GL_SPIRV) || defined(VULKAN)`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Override {
    /// Its name.
    pub name: String,
    /// Its `constant_id`.
    pub id: u32,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: OverrideType,
    /// Its default value.
    pub default: f64,
}

impl Override {
    /// `value` as a specialization constant's bits.
    pub fn bits(&self, value: f64) -> u32 {
        match self.kind {
            OverrideType::Float => (value as f32).to_bits(),
            OverrideType::Int => (value as i32) as u32,
            OverrideType::Uint => value as u32,
            OverrideType::Bool => u32::from(value != 0.0),
        }
    }

    /// `value` as a GLSL literal of the override's type.
    pub fn glsl_literal(&self, value: f64) -> String {
        match self.kind {
            OverrideType::Float => format!("{:?}", value as f32),
            OverrideType::Int => (value as i32).to_string(),
            OverrideType::Uint => format!("{}u", value as u32),
            OverrideType::Bool => (value != 0.0).to_string(),
        }
    }
}

/// One axis as the catalog records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogAxis {
    /// Its name.
    pub name: String,
    /// Its values, as text.
    pub values: Vec<String>,
}

/// One variant's objects.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogVariant {
    /// (axis, value) in the program's axis order.
    pub values: Vec<(String, String)>,
    /// Target name → object key, hex; a target that never built is absent.
    pub objects: TargetObjects,
    /// Target name → why its last build failed, for each target whose
    /// object in `objects` is the last good one, kept from an earlier
    /// build (stale). Left out of the file when empty: catalogs without
    /// stale objects are the bytes they were before there were stale ones,
    /// and a catalog written before reads with none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stale: BTreeMap<String, String>,
}

/// A variant's objects by target name, in target order: a JSON object in
/// the catalog file, a short sorted list in memory. A variant has one
/// object per target, a few at most, and a build holds one of these per
/// variant of its matrix: a `BTreeMap` would take a node of eleven entries
/// (about 0.5 KB) for each, 10 MB for a matrix of 21,600 variants.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetObjects(Vec<(String, String)>);

impl TargetObjects {
    /// The object of `target`.
    pub fn get(&self, target: &str) -> Option<&String> {
        self.position(target).ok().map(|i| &self.0[i].1)
    }

    /// Whether `target` has an object.
    pub fn contains_key(&self, target: &str) -> bool {
        self.position(target).is_ok()
    }

    /// Sets the object of `target`; returns the one it replaces.
    pub fn insert(&mut self, target: String, object: String) -> Option<String> {
        match self.position(&target) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, object)),
            Err(i) => {
                // One more at a time: most variants have one or two targets.
                self.0.reserve_exact(1);
                self.0.insert(i, (target, object));
                None
            }
        }
    }

    /// (target, object) in target order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.0.iter().map(|(target, object)| (target, object))
    }

    /// The targets, in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(target, _)| target)
    }

    /// The objects, in target order.
    pub fn values(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(_, object)| object)
    }

    /// How many targets have an object.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no target has one.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Removes every object.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    fn position(&self, target: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(t, _)| t.as_str().cmp(target))
    }
}

impl<'a> IntoIterator for &'a TargetObjects {
    type Item = (&'a String, &'a String);
    type IntoIter =
        std::iter::Map<std::slice::Iter<'a, (String, String)>, fn(&'a (String, String)) -> (&'a String, &'a String)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(target, object)| (target, object))
    }
}

impl FromIterator<(String, String)> for TargetObjects {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Self {
        let mut objects = Self::default();
        for (target, object) in iter {
            objects.insert(target, object);
        }
        objects
    }
}

impl Serialize for TargetObjects {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for TargetObjects {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // A map read as a map: a key given twice keeps the last, as before.
        Ok(BTreeMap::<String, String>::deserialize(deserializer)?.into_iter().collect())
    }
}

/// A built program.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CatalogProgram {
    /// Its name.
    pub name: String,
    /// The manifest it was built from.
    pub manifest: PathBuf,
    /// Its axes, in the program's order.
    pub axes: Vec<CatalogAxis>,
    /// Its overrides.
    pub overrides: Vec<Override>,
    /// Its targets.
    pub targets: Vec<String>,
    /// Variant name → its objects.
    pub variants: BTreeMap<String, CatalogVariant>,
}

impl CatalogProgram {
    /// The object of `variant` for `target`, if it was built.
    pub fn object(&self, variant: &str, target: &str) -> Option<&str> {
        self.variants.get(variant)?.objects.get(target).map(String::as_str)
    }

    /// Why the object of `variant` for `target` is stale (the last good
    /// one, kept when its build failed); `None` when it is fresh or absent.
    pub fn stale(&self, variant: &str, target: &str) -> Option<&str> {
        self.variants.get(variant)?.stale.get(target).map(String::as_str)
    }

    /// Takes from `previous` the objects of targets other than `built`
    /// (with their stale marks), for the variants both have: a build of
    /// some targets keeps the others.
    pub fn keep_other_targets(&mut self, previous: &CatalogProgram, built: &[String]) {
        for (variant, entry) in self.variants.iter_mut() {
            let Some(old) = previous.variants.get(variant) else { continue };
            for (target, object) in &old.objects {
                if !built.contains(target) && !entry.objects.contains_key(target) {
                    entry.objects.insert(target.clone(), object.clone());
                    if let Some(reason) = old.stale.get(target) {
                        entry.stale.insert(target.clone(), reason.clone());
                    }
                }
            }
        }
    }

    /// Takes from `previous` the variants `other` accepts that this build
    /// did not make: a build of one shard keeps the other shards' variants.
    pub fn keep_other_variants(&mut self, previous: &CatalogProgram, other: impl Fn(&str) -> bool) {
        for (variant, entry) in &previous.variants {
            if other(variant) && !self.variants.contains_key(variant) {
                self.variants.insert(variant.clone(), entry.clone());
            }
        }
    }

    /// The name of the variant with `values`: every axis must be given once
    /// (a lookup that misses an axis would pick some variant).
    pub fn variant_name(&self, values: &[(&str, &str)]) -> Result<String, VariantError> {
        let program = || self.name.clone();
        for (axis, _) in values {
            if !self.axes.iter().any(|a| a.name == *axis) {
                return Err(VariantError::NoAxis { program: program(), axis: (*axis).to_owned() });
            }
        }
        let mut parts = Vec::new();
        for axis in &self.axes {
            let given: Vec<&&str> = values.iter().filter(|(a, _)| *a == axis.name).map(|(_, v)| v).collect();
            match given.as_slice() {
                [value] if axis.values.iter().any(|v| v == **value) => parts.push(format!("{}={value}", axis.name)),
                [value] => {
                    return Err(VariantError::NotAValue {
                        program: program(),
                        axis: axis.name.clone(),
                        value: (**value).to_owned(),
                        values: axis.values.join(", "),
                    });
                }
                [] => return Err(VariantError::Missing { program: program(), axis: axis.name.clone() }),
                _ => return Err(VariantError::Twice { axis: axis.name.clone() }),
            }
        }
        Ok(if parts.is_empty() { self.name.clone() } else { format!("{}[{}]", self.name, parts.join(",")) })
    }
}

/// Axis values that name no variant of a program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VariantError {
    /// The program has no such axis.
    #[error("program '{program}' has no axis '{axis}'")]
    NoAxis {
        /// The program.
        program: String,
        /// The axis given.
        axis: String,
    },
    /// The value is not one of the axis's.
    #[error("'{value}' is not a value of axis '{axis}' of program '{program}' ({values})")]
    NotAValue {
        /// The program.
        program: String,
        /// The axis.
        axis: String,
        /// The value given.
        value: String,
        /// The axis's values, listed.
        values: String,
    },
    /// An axis was not given.
    #[error("program '{program}' needs a value for axis '{axis}'")]
    Missing {
        /// The program.
        program: String,
        /// The axis.
        axis: String,
    },
    /// An axis was given more than once.
    #[error("axis '{axis}' is given more than once")]
    Twice {
        /// The axis.
        axis: String,
    },
}

/// The catalog directory of a store.
pub fn dir(store_root: &Path) -> PathBuf {
    store_root.join("catalog")
}

/// Writes one program's catalog atomically: into a temporary file, synced,
/// then renamed over the old one. The JSON is streamed to the file, never
/// held whole in memory (a catalog of a large matrix is megabytes, and a
/// build's peak memory must not grow with it); a catalog equal to the one
/// on disk (a no-op build's) is compared as it streams and not put in
/// place (nor synced) again.
pub fn write(store_root: &Path, program: &CatalogProgram) -> std::io::Result<PathBuf> {
    write_json(store_root, &program.name, program)
}

/// Writes `program`'s catalog as [`write`] does, its variants taken from
/// `variants` one at a time instead of from `program.variants` (which is
/// left out): the file holds the same bytes, and a program of tens of
/// thousands of variants is never held whole. `variants` must come in
/// name order, each name once, as a [`BTreeMap`] would give them.
pub fn write_streamed(
    store_root: &Path,
    program: &CatalogProgram,
    variants: impl Iterator<Item = (String, CatalogVariant)>,
) -> std::io::Result<PathBuf> {
    let streamed = Streamed { program, variants: std::cell::RefCell::new(Some(variants)) };
    write_json(store_root, &program.name, &streamed)
}

/// [`CatalogProgram`] serialised with its variants from an iterator: the
/// fields, in their order, that the derived serialisation writes.
struct Streamed<'a, I> {
    program: &'a CatalogProgram,
    variants: std::cell::RefCell<Option<I>>,
}

impl<I: Iterator<Item = (String, CatalogVariant)>> Serialize for Streamed<'_, I> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let program = self.program;
        let mut out = serializer.serialize_struct("CatalogProgram", 6)?;
        out.serialize_field("name", &program.name)?;
        out.serialize_field("manifest", &program.manifest)?;
        out.serialize_field("axes", &program.axes)?;
        out.serialize_field("overrides", &program.overrides)?;
        out.serialize_field("targets", &program.targets)?;
        out.serialize_field("variants", &VariantStream(&self.variants))?;
        out.end()
    }
}

/// The variants of a [`Streamed`] program, serialised as a map while they
/// are made (once: a second serialisation writes none).
struct VariantStream<'a, I>(&'a std::cell::RefCell<Option<I>>);

impl<I: Iterator<Item = (String, CatalogVariant)>> Serialize for VariantStream<'_, I> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.borrow_mut().take().into_iter().flatten())
    }
}

/// Writes `value` as the catalog of program `name`: to a temporary file,
/// left as it was where the bytes are the same, else synced and renamed over
/// the old one.
fn write_json(store_root: &Path, name: &str, value: &impl Serialize) -> std::io::Result<PathBuf> {
    // Each failure names the file or directory it is about.
    let at = |path: &Path| {
        let path = path.to_path_buf();
        move |e: std::io::Error| std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
    };
    let dir = dir(store_root);
    std::fs::create_dir_all(&dir).map_err(at(&dir))?;
    let path = dir.join(format!("{name}.json"));
    let temp = store_root.join("tmp").join(format!("catalog-{name}.{}.0.tmp", std::process::id()));
    let mut out = std::io::BufWriter::new(File::create(&temp).map_err(at(&temp))?);
    serde_json::to_writer_pretty(&mut out, value).map_err(std::io::Error::other).map_err(at(&temp))?;
    let file = out.into_inner().map_err(|e| e.into_error()).map_err(at(&temp))?;
    if same_contents(&temp, &path).unwrap_or(false) {
        drop(file);
        std::fs::remove_file(&temp).map_err(at(&temp))?;
        return Ok(path);
    }
    file.sync_all().map_err(at(&temp))?;
    std::fs::rename(&temp, &path).map_err(at(&path))?;
    Ok(path)
}

/// Whether two files hold the same bytes, read a block at a time.
fn same_contents(a: &Path, b: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let (mut a, mut b) = (File::open(a)?, File::open(b)?);
    if a.metadata()?.len() != b.metadata()?.len() {
        return Ok(false);
    }
    let (mut block_a, mut block_b) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    loop {
        let read = a.read(&mut block_a)?;
        if read == 0 {
            return Ok(true);
        }
        b.read_exact(&mut block_b[..read])?;
        if block_a[..read] != block_b[..read] {
            return Ok(false);
        }
    }
}

/// A catalog file that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnreadCatalog {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub reason: String,
}

impl std::fmt::Display for UnreadCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

/// Every program in a store's catalog, by name; files that do not parse are
/// returned beside them.
pub fn read_all(store_root: &Path) -> (BTreeMap<String, CatalogProgram>, Vec<UnreadCatalog>) {
    let mut programs = BTreeMap::new();
    let mut errors = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir(store_root)) else { return (programs, errors) };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    paths.sort();
    for path in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "json")) {
        match std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<CatalogProgram>(&b).map_err(|e| e.to_string()))
        {
            Ok(program) => {
                programs.insert(program.name.clone(), program);
            }
            Err(reason) => errors.push(UnreadCatalog { path, reason }),
        }
    }
    (programs, errors)
}

/// The objects the catalog of program `name` names for the (variant,
/// target) pairs `wanted` accepts, as (variant, target, object key hex) in
/// the file's order; none when the program has no catalog. The file is
/// read as it streams and only those objects are kept: a build that looks
/// up a few artifacts in the last catalog of a large matrix never holds it
/// whole.
pub fn read_objects(
    store_root: &Path,
    name: &str,
    wanted: impl Fn(&str, &str) -> bool,
) -> Result<Vec<(String, String, String)>, UnreadCatalog> {
    let path = dir(store_root).join(format!("{name}.json"));
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(UnreadCatalog { path, reason: e.to_string() }),
    };
    let mut json = serde_json::Deserializer::from_reader(std::io::BufReader::new(file));
    let found = serde::de::DeserializeSeed::deserialize(ProgramObjects { wanted: &wanted }, &mut json)
        .and_then(|found| json.end().map(|()| found))
        .map_err(|e| UnreadCatalog { path: path.clone(), reason: e.to_string() })?;
    Ok(found)
}

/// (variant, target, object) triples found in a catalog file.
type Found = Vec<(String, String, String)>;

/// A catalog file read for the objects `wanted` accepts (see [`read_objects`]).
struct ProgramObjects<'a, F> {
    wanted: &'a F,
}

impl<'de, F: Fn(&str, &str) -> bool> serde::de::DeserializeSeed<'de> for ProgramObjects<'_, F> {
    type Value = Found;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Found, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, F: Fn(&str, &str) -> bool> serde::de::Visitor<'de> for ProgramObjects<'_, F> {
    type Value = Found;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a program's catalog")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Found, A::Error> {
        let mut found = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "variants" {
                found = map.next_value_seed(VariantObjects { wanted: self.wanted })?;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// A catalog's `variants` map read one variant at a time, keeping the
/// objects `wanted` accepts.
struct VariantObjects<'a, F> {
    wanted: &'a F,
}

/// A variant's entry read for its objects alone (its other fields skipped).
#[derive(Deserialize)]
struct ObjectsOnly {
    #[serde(default)]
    objects: TargetObjects,
}

impl<'de, F: Fn(&str, &str) -> bool> serde::de::DeserializeSeed<'de> for VariantObjects<'_, F> {
    type Value = Found;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Found, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, F: Fn(&str, &str) -> bool> serde::de::Visitor<'de> for VariantObjects<'_, F> {
    type Value = Found;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a map of variants")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Found, A::Error> {
        let mut found = Vec::new();
        while let Some(variant) = map.next_key::<String>()? {
            let entry: ObjectsOnly = map.next_value()?;
            for (target, object) in entry.objects.0 {
                if (self.wanted)(&variant, &target) {
                    found.push((variant.clone(), target, object));
                }
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn target_objects_keep_target_order_and_are_a_json_object() {
        let mut objects = TargetObjects::default();
        assert_eq!(objects.insert("vk-spirv".into(), "aa".into()), None);
        assert_eq!(objects.insert("gl-glsl".into(), "bb".into()), None);
        assert_eq!(objects.insert("gl-spirv".into(), "cc".into()), None);
        assert_eq!(objects.insert("vk-spirv".into(), "dd".into()), Some("aa".into()), "replaced, not added");
        assert_eq!(objects.keys().collect::<Vec<_>>(), ["gl-glsl", "gl-spirv", "vk-spirv"]);
        assert_eq!(objects.get("vk-spirv").map(String::as_str), Some("dd"));
        assert_eq!(objects.get("gl-glsl").map(String::as_str), Some("bb"));
        assert!(objects.get("wgsl").is_none() && !objects.contains_key("wgsl"));
        assert_eq!(objects.len(), 3);
        let json = serde_json::to_string(&objects).unwrap();
        assert_eq!(json, r#"{"gl-glsl":"bb","gl-spirv":"cc","vk-spirv":"dd"}"#);
        let read: TargetObjects = serde_json::from_str(r#"{"vk-spirv":"x","gl-glsl":"y"}"#).unwrap();
        assert_eq!(
            read.iter().collect::<Vec<_>>(),
            [(&"gl-glsl".to_owned(), &"y".to_owned()), (&"vk-spirv".to_owned(), &"x".to_owned())]
        );
        assert!(serde_json::from_str::<TargetObjects>(r#"["vk-spirv", "x"]"#).is_err());
    }

    fn program(objects: &[(&str, &str)]) -> CatalogProgram {
        let variants = objects
            .iter()
            .map(|(variant, object)| {
                let objects = TargetObjects::from_iter([("vk-spirv".to_owned(), (*object).to_owned())]);
                ((*variant).to_owned(), CatalogVariant { values: Vec::new(), objects, ..CatalogVariant::default() })
            })
            .collect();
        CatalogProgram {
            name: "p".into(),
            manifest: "xr.toml".into(),
            axes: Vec::new(),
            overrides: Vec::new(),
            targets: vec!["vk-spirv".into()],
            variants,
        }
    }

    #[test]
    fn a_catalog_streams_to_its_file_and_an_unchanged_one_is_not_put_in_place_again() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("tmp")).unwrap();
        let first = program(&[("a", "00"), ("b", "11")]);
        let path = write(root.path(), &first).unwrap();
        let (read, errors) = read_all(root.path());
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(read["p"], first);
        let inode = std::fs::metadata(&path).unwrap().ino();
        write(root.path(), &first).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode, "the same catalog: the file is left as it was");
        // One byte differs (same length): put in place.
        let second = program(&[("a", "00"), ("b", "12")]);
        write(root.path(), &second).unwrap();
        assert_ne!(std::fs::metadata(&path).unwrap().ino(), inode);
        assert_eq!(read_all(root.path()).0["p"], second);
        assert_eq!(std::fs::read_dir(root.path().join("tmp")).unwrap().count(), 0, "no temporary file left");
    }

    #[test]
    fn a_catalog_written_variant_by_variant_is_the_same_file() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("tmp")).unwrap();
        let mut whole = program(&[("a", "00"), ("b", "11"), ("c", "22")]);
        whole.axes = vec![CatalogAxis { name: "LEVEL".into(), values: vec!["0".into(), "1".into()] }];
        whole.variants.get_mut("b").unwrap().values = vec![("LEVEL".into(), "1".into())];
        whole.variants.get_mut("c").unwrap().objects.clear();
        let path = write(root.path(), &whole).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let header = CatalogProgram { variants: BTreeMap::new(), ..whole.clone() };
        let streamed = write_streamed(root.path(), &header, whole.variants.clone().into_iter()).unwrap();
        assert_eq!(streamed, path);
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "the same bytes");
        assert_eq!(read_all(root.path()).0["p"], whole);
        // No variants: an empty map, as the whole program writes it.
        let empty = write_streamed(root.path(), &header, std::iter::empty()).unwrap();
        let text = std::fs::read_to_string(&empty).unwrap();
        assert_eq!(text, String::from_utf8(serde_json::to_vec_pretty(&header).unwrap()).unwrap());
    }

    #[test]
    fn a_stale_mark_round_trips_and_a_catalog_without_one_is_the_file_it_was() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("tmp")).unwrap();
        let fresh = program(&[("a", "00"), ("b", "11")]);
        let before = String::from_utf8(serde_json::to_vec_pretty(&fresh).unwrap()).unwrap();
        assert!(!before.contains("stale"), "no stale key where nothing is stale:\n{before}");
        // A catalog written before stale marks existed reads, with none.
        let old = r#"{"name":"p","manifest":"xr.toml","axes":[],"overrides":[],"targets":["vk-spirv"],
            "variants":{"a":{"values":[],"objects":{"vk-spirv":"00"}},"b":{"values":[],"objects":{"vk-spirv":"11"}}}}"#;
        assert_eq!(serde_json::from_str::<CatalogProgram>(old).unwrap(), fresh);

        let mut kept = fresh.clone();
        kept.variants.get_mut("b").unwrap().stale.insert("vk-spirv".into(), "inc/a.glsl:3: error: bad".into());
        let path = write(root.path(), &kept).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("\"stale\"").count(), 1, "only the stale variant has the key:\n{text}");
        assert_eq!(read_all(root.path()).0["p"], kept);
        assert_eq!(kept.stale("b", "vk-spirv"), Some("inc/a.glsl:3: error: bad"));
        assert_eq!((kept.stale("a", "vk-spirv"), kept.object("b", "vk-spirv")), (None, Some("11")));
        let header = CatalogProgram { variants: BTreeMap::new(), ..kept.clone() };
        write_streamed(root.path(), &header, kept.variants.clone().into_iter()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "streamed: the same bytes");
    }

    #[test]
    fn a_build_of_some_targets_keeps_the_others_with_their_stale_marks() {
        let mut previous = program(&[("a", "00")]);
        let old = previous.variants.get_mut("a").unwrap();
        old.objects.insert("gl-glsl".into(), "01".into());
        old.stale.insert("gl-glsl".into(), "why".into());
        old.stale.insert("vk-spirv".into(), "old reason".into());
        let mut now = program(&[("a", "02")]);
        now.keep_other_targets(&previous, &["vk-spirv".to_owned()]);
        assert_eq!((now.object("a", "gl-glsl"), now.stale("a", "gl-glsl")), (Some("01"), Some("why")));
        assert_eq!((now.object("a", "vk-spirv"), now.stale("a", "vk-spirv")), (Some("02"), None), "built now: fresh");
    }

    #[test]
    fn read_objects_keeps_only_the_objects_asked_for() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("tmp")).unwrap();
        assert_eq!(read_objects(root.path(), "p", |_, _| true).unwrap(), Vec::new(), "no catalog: none");
        let mut p = program(&[("a", "00"), ("b", "11"), ("c", "22")]);
        p.variants.get_mut("b").unwrap().objects.insert("gl-glsl".into(), "33".into());
        p.variants.get_mut("b").unwrap().stale.insert("gl-glsl".into(), "why".into());
        p.axes = vec![CatalogAxis { name: "LEVEL".into(), values: vec!["0".into()] }];
        write(root.path(), &p).unwrap();
        let found = read_objects(root.path(), "p", |variant, target| variant != "a" && target != "vk-spirv").unwrap();
        assert_eq!(found, [("b".to_owned(), "gl-glsl".to_owned(), "33".to_owned())]);
        std::fs::write(dir(root.path()).join("p.json"), b"{\"variants\": [").unwrap();
        let error = read_objects(root.path(), "p", |_, _| true).unwrap_err();
        assert!(error.path.ends_with("p.json"), "{error}");
    }
}
