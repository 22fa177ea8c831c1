//! `xr store verify` on a store with a corrupt object and a torn write.

use std::process::Command;
use xr_sourcebuild::{ObjectKey, Store};
use xr_tests::{executable, temp_dir};

fn verify(root: &std::path::Path, extra: &[&str]) -> (bool, String) {
    let output = Command::new(executable("xr"))
        .args(["store", "verify", "--store", root.to_str().unwrap()])
        .args(extra)
        .output()
        .expect("xr runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr),
    )
}

#[test]
fn verify_names_corrupt_objects_and_unfinished_writes_and_can_remove_them() {
    let root = temp_dir("store-verify");
    let store = Store::open(&root).unwrap();
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
