//! `xr store verify` on a store with a corrupt object and a torn write.

use xr_store::{ObjectKey, Store};
use xr_tests::{Xr, temp_dir};

fn verify(root: &std::path::Path, extra: &[&str]) -> (bool, String) {
    let run = Xr::new(["store", "verify", "--store", root.to_str().unwrap()].iter().chain(extra)).run();
    (run.ok, run.stdout + &run.stderr)
}

#[test]
fn verify_names_corrupt_objects_and_unfinished_writes_and_can_remove_them() {
    let root = temp_dir("store-verify");
    let store = Store::open(root.path()).unwrap();
    let good = ObjectKey::from_parts([b"good".as_slice()]);
    let bad = ObjectKey::from_parts([b"bad".as_slice()]);
    store.put(&good, b"whole").unwrap();
    let path = store.put(&bad, &[7u8; 64]).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    std::fs::write(root.join("tmp").join("torn.tmp"), b"half an obj").unwrap();

    let (ok, out) = verify(&root, &[]);
    assert!(!ok, "{out}");
    assert!(out.contains(&format!("corrupt: {}: corrupt object: checksum mismatch", path.display())), "{out}");
    assert!(out.contains("unfinished write:") && out.contains("torn.tmp"), "{out}");
    assert!(out.contains("2 objects, 1 whole (5 payload bytes), 1 corrupt, 1 unfinished writes"), "{out}");

    let (ok, out) = verify(&root, &["--delete-corrupt"]);
    assert!(ok, "{out}");
    assert!(out.contains(&format!("removed {bad}")), "{out}");
    let (ok, out) = verify(&root, &[]);
    assert!(ok, "{out}");
    assert!(out.contains("1 objects, 1 whole (5 payload bytes), 0 corrupt, 0 unfinished writes"), "{out}");
    assert_eq!(store.get(&good).unwrap().as_deref(), Some(b"whole".as_slice()));

    let (ok, out) = verify(&root.join("nope"), &[]);
    assert!(!ok);
    assert!(out.contains("is not an XR store"), "{out}");
}

#[test]
fn verify_checks_catalogs_and_the_journal_too() {
    let dir = xr_tests::materials_built("store-verify-catalogs");
    let root = dir.join("store");
    let (ok, out) = verify(&root, &[]);
    assert!(ok, "{out}");
    assert!(out.contains("4 catalogs, 0 corrupt, 111 objects named, 0 problems"), "{out}");
    assert!(out.contains("journal: 111 entries, 0 retired objects, 0 corrupt lines, 0 torn lines"), "{out}");

    // A catalog that does not parse: corrupt, removable, written again by the next build.
    let unlit = root.join("catalog/unlit.json");
    std::fs::write(&unlit, b"{ \"name\": \"unlit\", \"variants\": ").unwrap();
    let (ok, out) = verify(&root, &[]);
    assert!(!ok, "{out}");
    assert!(out.contains(&format!("corrupt catalog: {}", unlit.display())), "{out}");
    let (ok, out) = verify(&root, &["--delete-corrupt"]);
    assert!(ok && !unlit.exists(), "{out}");
    assert!(verify(&root, &[]).0);

    // A catalog whose object names are not keys.
    let lit = root.join("catalog/lit.json");
    let text = std::fs::read_to_string(&lit).unwrap();
    let mut edited: serde_json::Value = serde_json::from_str(&text).unwrap();
    let first = edited["variants"].as_object().unwrap().keys().next().unwrap().clone();
    edited["variants"][&first]["objects"]["gl-glsl"] = "not-a-key".into();
    std::fs::write(&lit, serde_json::to_vec(&edited).unwrap()).unwrap();
    let (ok, out) = verify(&root, &[]);
    assert!(!ok, "{out}");
    assert!(
        out.contains(&format!("corrupt catalog: 'lit': {first} (gl-glsl) names 'not-a-key', not an object key")),
        "{out}"
    );
    std::fs::write(&lit, text).unwrap();

    // A catalog naming an object the store lost.
    let toon: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("catalog/toon.json")).unwrap()).unwrap();
    let (variant, entry) = toon["variants"].as_object().unwrap().iter().next().unwrap();
    let hex = entry["objects"]["vk-spirv"].as_str().unwrap();
    Store::open(&root).unwrap().remove(&ObjectKey::from_hex(hex).unwrap()).unwrap();
    let (ok, out) = verify(&root, &[]);
    assert!(!ok, "{out}");
    assert!(out.contains(&format!("missing: catalog 'toon' names {hex} for {variant} (vk-spirv)")), "{out}");
    let rebuild =
        Xr::new(["build", "-m", "xr.toml", "-q"]).dir(&dir).command().env_remove("XR_REMOTE").output().unwrap();
    assert!(rebuild.status.success());
    let (ok, out) = verify(&root, &[]);
    assert!(ok, "the build made it again and rewrote unlit's catalog: {out}");

    // A whole journal line that does not read is corruption; a torn last
    // line (a build killed mid-append) is skipped by every reader and only reported.
    let journal = root.join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[4] = lines[4].replacen("\"object\"", "\"obj\u{1}ect\"", 1);
    std::fs::write(&journal, lines.join("\n") + "\n{\"recipe\":\"12ab").unwrap();
    let (ok, out) = verify(&root, &[]);
    assert!(!ok, "{out}");
    assert!(out.contains(&format!("corrupt journal line: {}:5:", journal.display())), "{out}");
    assert!(out.contains("1 corrupt lines, 1 torn lines"), "{out}");
    let (ok, out) = verify(&root, &["--delete-corrupt"]);
    assert!(ok, "{out}");
    let (ok, out) = verify(&root, &[]);
    assert!(ok, "{out}");
    assert!(out.contains("0 corrupt lines, 0 torn lines"), "{out}");

    // Only a torn line: reported, not a failure (the build that tore it is gone; readers skip it).
    let mut file = std::fs::OpenOptions::new().append(true).open(&journal).unwrap();
    std::io::Write::write_all(&mut file, b"{\"recipe\":\"12").unwrap();
    let (ok, out) = verify(&root, &[]);
    assert!(ok && out.contains("0 corrupt lines, 1 torn lines"), "{out}");
}
