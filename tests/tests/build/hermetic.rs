//! Keys of what was compiled, not of how a path was typed: every spelling of
//! a manifest, and another checkout of it at another depth, share one
//! build, and a fresh store of each holds the same bytes.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};
use xr_tests::{Xr, summary_count, temp_dir, write_materials};

/// The materials sample's artifacts, its Slang program included.
const ARTIFACTS: usize = 123;

/// `xr build ARGS` in `dir` into `store`: (built, reused, failed).
fn build(dir: &Path, manifest: &str, store: &Path) -> (usize, usize, usize) {
    let run = Xr::new(["build", "-q", "-m", manifest, "--store"]).arg(store).dir(dir).ok();
    let output = format!("{}{}", run.stdout, run.stderr);
    let line = output
        .lines()
        .find(|l| l.starts_with("xr build:"))
        .unwrap_or_else(|| panic!("no summary from `xr build -m {manifest}` in {}:\n{output}", dir.display()));
    (summary_count(line, "built"), summary_count(line, "reused"), summary_count(line, "failed"))
}

/// Every file under `dir` (objects, catalogs), by its path relative to it.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap_or_else(|e| panic!("{}: {e}", at.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("read a stored file");
                files.insert(path.strip_prefix(dir).expect("under the tree").to_path_buf(), bytes);
            }
        }
    }
    files
}

#[test]
fn every_spelling_of_the_manifest_and_another_checkout_reuse_one_build() {
    let outer = temp_dir("hermetic-spellings");
    let first = outer.join("materials");
    let second = outer.join("elsewhere/much/deeper/materials");
    write_materials(&first, true);
    write_materials(&second, true);
    let store = outer.join("shared-store");

    assert_eq!(build(&first, "xr.toml", &store), (ARTIFACTS, 0, 0), "the first build is cold");
    let absolute = first.join("xr.toml");
    let spellings: [(&Path, &str); 4] = [
        (&first, "./xr.toml"),
        (&first, absolute.to_str().expect("a UTF-8 temp dir")),
        (&outer, "materials/xr.toml"),
        (&second, "xr.toml"),
    ];
    for (dir, manifest) in spellings {
        assert_eq!(
            build(dir, manifest, &store),
            (0, ARTIFACTS, 0),
            "`xr build -m {manifest}` in {} rebuilt what one build made",
            dir.display()
        );
    }

    // Fresh stores: the same objects and catalogs, byte for byte.
    let (store_a, store_b) = (outer.join("store-a"), outer.join("store-b"));
    build(&first, "xr.toml", &store_a);
    build(&outer, "elsewhere/much/deeper/materials/xr.toml", &store_b);
    for part in ["objects", "catalog"] {
        let (a, b) = (tree(&store_a.join(part)), tree(&store_b.join(part)));
        assert!(!a.is_empty(), "{part} is empty");
        let differing: Vec<&PathBuf> = a.keys().chain(b.keys()).filter(|k| a.get(*k) != b.get(*k)).collect();
        assert!(differing.is_empty(), "{part} differ between the checkouts: {differing:?}");
    }
    // Nothing in them names where either checkout is.
    let place = outer.to_string_lossy().into_owned();
    for (path, bytes) in tree(&store_b.join("objects")).into_iter().chain(tree(&store_b.join("catalog"))) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(&place), "{} names {place}", path.display());
    }
}

#[test]
fn xr_compile_gives_the_same_bytes_from_any_working_directory() {
    let outer = temp_dir("hermetic-compile");
    write_materials(&outer.join("a"), false);
    write_materials(&outer.join("deep/er/b"), false);
    let compile = |dir: &Path, shaders: &str, out: &str| {
        let files = ["quad.vert", "unlit.frag"].map(|f| format!("{shaders}/{f}"));
        Xr::new(["compile", "--target", "vk-spirv"])
            .args(&files)
            .args(["-I", &format!("{shaders}/include"), "-o"])
            .arg(outer.join(out))
            .dir(dir)
            .ok();
        std::fs::read(outer.join(out)).expect("the compiled program")
    };
    let from_outer = compile(&outer, "a/shaders", "1.spv");
    let from_shaders = compile(&outer.join("a/shaders"), ".", "2.spv");
    let b = outer.join("deep/er/b/shaders");
    let from_root = compile(Path::new("/"), b.to_str().expect("a UTF-8 temp dir"), "3.spv");
    assert!(from_outer == from_shaders && from_outer == from_root, "xr compile's bytes depend on where it ran");
    assert!(!String::from_utf8_lossy(&from_root).contains(&*outer.to_string_lossy()), "the output names a place");
}

/// Two checkouts of one manifest whose shaders differ, each built with
/// `-m xr.toml` from its own directory into one store: the manifests'
/// bytes are the same, so only the manifest's place tells the two builds
/// apart, and a no-op stamp without it would answer the second checkout
/// with the first's build ("0 built, 111 reused", its edit never built).
#[test]
fn two_checkouts_with_different_shaders_building_into_one_store_each_build_their_own() {
    /// The materials sample without its Slang program.
    const GLSL_ARTIFACTS: usize = 111;
    /// lit and toon include lighting.glsl: 18 + 12 variants on 3 targets.
    const READ_LIGHTING: usize = (18 + 12) * 3;
    let outer = temp_dir("hermetic-two-checkouts");
    let (first, second) = (outer.join("first"), outer.join("second"));
    write_materials(&first, false);
    write_materials(&second, false);
    let lighting = second.join("shaders/include/lighting.glsl");
    let text = std::fs::read_to_string(&lighting).expect("lighting.glsl");
    assert!(text.contains("0.5, 0.5, 1.0"), "the light the edit changes");
    std::fs::write(&lighting, text.replace("0.5, 0.5, 1.0", "0.4, 0.6, 1.0")).expect("edit the second checkout");
    let store = outer.join("shared-store");

    assert_eq!(build(&first, "xr.toml", &store), (GLSL_ARTIFACTS, 0, 0), "the first checkout, cold");
    assert_eq!(
        build(&second, "xr.toml", &store),
        (READ_LIGHTING, GLSL_ARTIFACTS - READ_LIGHTING, 0),
        "the second checkout builds its own lighting"
    );
    assert_eq!(build(&second, "xr.toml", &store), (0, GLSL_ARTIFACTS, 0), "the second again: nothing to do");
    // The journal keeps each artifact's last inputs: back to the first
    // checkout's lighting, what reads it is compiled again.
    assert_eq!(
        build(&first, "xr.toml", &store),
        (READ_LIGHTING, GLSL_ARTIFACTS - READ_LIGHTING, 0),
        "the first checkout again"
    );
    let lit_catalog = || std::fs::read(store.join("catalog/lit.json")).expect("lit's catalog");
    let first_lit = lit_catalog();
    build(&second, "xr.toml", &store);
    assert_ne!(lit_catalog(), first_lit, "the catalog names the second checkout's lit objects");
    build(&first, "xr.toml", &store);
    assert_eq!(lit_catalog(), first_lit, "and the first's again");
}
