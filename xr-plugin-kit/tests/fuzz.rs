//! Property tests over arbitrary input (`scripts/fuzz.sh` runs them long):
//! the store's object decoder, the program-binary record, the source bundle
//! and the include resolver never panic on anything, and what they write
//! they read back.

use proptest::prelude::*;
use xr_plugin_kit::{
    DriverIdentity, SourceBundle, decode_binary_record, encode_binary_record, includes::resolve_include,
};
use xr_sourcebuild::{ProgramBinary, ProgramDesc, ShaderStage, SourceDesc};
use xr_store::{ObjectKey, Store, StoreError, binary_record::program_of};

/// A fresh directory, removed when dropped (so that a long fuzz run does
/// not fill the disk, however a case ends).
fn temp(label: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("xr-fuzz-{label}-")).tempdir().unwrap()
}

proptest! {
    #[test]
    fn any_bytes_in_an_object_file_are_whole_or_reported_corrupt(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        payload in proptest::collection::vec(any::<u8>(), 0..100),
    ) {
        let root_guard = temp("store");
        let root = root_guard.path();
        let store = Store::open(root).unwrap();
        let key = ObjectKey::from_parts([b"k".as_slice()]);
        store.put(&key, &payload).unwrap();
        prop_assert_eq!(store.get(&key).unwrap(), Some(payload.clone()));
        // The same file, overwritten with anything: whole, or refused as corrupt.
        std::fs::write(store.path_of(&key), &bytes).unwrap();
        match store.get(&key) {
            Ok(Some(read)) => prop_assert!(bytes.ends_with(&read), "a payload from nowhere"),
            Ok(None) => prop_assert!(false, "the file is there"),
            Err(StoreError::Corrupt { .. }) => {}
            Err(e) => prop_assert!(false, "{}", e),
        }
        // A valid object with one bit flipped is always refused.
        store.put(&key, &payload).unwrap();
        let mut whole = std::fs::read(store.path_of(&key)).unwrap();
        let at = bytes.len() % whole.len();
        whole[at] ^= 1 << (bytes.len() % 8);
        std::fs::write(store.path_of(&key), &whole).unwrap();
        prop_assert!(matches!(store.get(&key), Err(StoreError::Corrupt { .. })), "a flipped bit at {} passed", at);
    }

    #[test]
    fn binary_records_read_back_and_garbage_is_refused(
        bytes in proptest::collection::vec(any::<u8>(), 0..300),
        program in ".{0,20}",
        vendor in ".{0,12}",
        format in any::<u32>(),
        binary in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        if decode_binary_record(&bytes).is_err() {
            prop_assert_eq!(program_of(&bytes), None);
        }
        let identity = DriverIdentity { vendor, renderer: "r".into(), version: "v".into(), formats: vec![format] };
        let record = encode_binary_record(&program, &identity, &ProgramBinary { format, bytes: binary.clone().into() });
        prop_assert_eq!(program_of(&record), Some(program.clone()));
        let (read, read_binary) = decode_binary_record(&record).unwrap();
        prop_assert_eq!(read, identity);
        prop_assert_eq!(read_binary.bytes.to_vec(), binary);
        // Cut inside the header: refused, never a panic.
        for cut in [0, 3, 4, 5, 12] {
            prop_assert!(decode_binary_record(&record[..cut]).is_err());
        }
    }

    #[test]
    fn source_bundles_read_back_and_garbage_is_refused(
        bytes in proptest::collection::vec(any::<u8>(), 0..300),
        source in ".{0,80}",
        define in "[A-Z]{1,6}",
        include in ".{0,40}",
    ) {
        let _ = SourceBundle::decode(&bytes);
        let mut with_magic = b"XRGLSL1\n".to_vec();
        with_magic.extend(&bytes);
        let _ = SourceBundle::decode(&with_magic);
        let stage = SourceDesc::new("glsl", ShaderStage::Fragment, "a.frag", source).with_define(define, "1");
        let program = ProgramDesc::new("p", [stage]);
        let bundle = SourceBundle::of_program(&program, vec![("inc.glsl".into(), include)]);
        let read = SourceBundle::decode(&bundle.encode()).unwrap();
        prop_assert_eq!(&read, &bundle);
        let rebuilt = read.program("glsl", "p", &[]).unwrap();
        prop_assert_eq!(&rebuilt.stages[0].source, &program.stages[0].source);
        // The loader's language, not the producer's: a dialect's bundle loads as the format's language.
        let dialect = ProgramDesc::new("p", [SourceDesc::new("glsl-dialect", ShaderStage::Fragment, "a.gld", "")]);
        let loaded = SourceBundle::of_program(&dialect, Vec::new()).program("glsl", "p", &[]).unwrap();
        prop_assert_eq!(loaded.stages[0].language.as_str(), "glsl");
    }

    #[test]
    fn the_include_resolver_takes_any_name(name in ".{0,40}", virtual_name in "[a-z./]{1,12}") {
        let dir_guard = temp("includes");
        let dir = dir_guard.path();
        std::fs::write(dir.join("common.glsl"), "// common").unwrap();
        let desc = SourceDesc::new("glsl", ShaderStage::Vertex, dir.join("a.vert").to_string_lossy(), "")
            .with_include_dir(dir.to_string_lossy())
            .with_virtual_file(virtual_name.clone(), "// virtual");
        let _ = resolve_include(&desc, &name, Some(dir));
        let found = resolve_include(&desc, &virtual_name, Some(dir)).expect("in-memory files first");
        prop_assert_eq!(found.text, "// virtual");
        prop_assert!(resolve_include(&desc, "common.glsl", None).is_some() || virtual_name == "common.glsl");
    }
}
