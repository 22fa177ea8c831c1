//! The on-device offline path: program binaries in the store, checked by
//! checksum and driver identity, and rebuilt whenever they cannot be used.

use xr_host::Registry;
use xr_plugin_kit::{DriverIdentity, LoadReport, ProgramCache, decode_binary_record, encode_binary_record};
use xr_sourcebuild::{
    BuildOptions, BuiltProgram, ConstantTableExt, LoadPath, ProgramBinary, ProgramDesc, ShaderStage, SourceDesc,
};
use xr_store::Store;
use xr_tests::{FULLSCREEN_VERT, GlBench, TestDir, registry, temp_dir};

const FRAGMENT: &str = "#version 450 core
uniform vec4 u_color = vec4(0.2, 0.4, 0.6, 1.0);
out vec4 c;
void main() { c = u_color; }
";
const DEFAULT_PIXEL: [u8; 4] = [51, 102, 153, 255];

fn program() -> ProgramDesc {
    ProgramDesc::new(
        "cached",
        [
            SourceDesc::new("glsl", ShaderStage::Vertex, "fullscreen.vert", FULLSCREEN_VERT),
            SourceDesc::new("glsl", ShaderStage::Fragment, "cached.frag", FRAGMENT),
        ],
    )
}

struct Setup {
    _registry: Registry,
    bench: GlBench,
    store: Store,
    _dir: TestDir,
}

fn setup(label: &str) -> Setup {
    let registry = registry();
    let bench = GlBench::open(&registry, "xr-compiler-glsl");
    let dir = temp_dir(label);
    let store = Store::open(dir.path()).unwrap();
    Setup { _registry: registry, bench, store, _dir: dir }
}

impl Setup {
    fn cache(&self) -> ProgramCache {
        ProgramCache::new(self.store.clone(), &self.bench.capabilities)
    }

    fn load(&mut self, cache: &ProgramCache) -> (BuiltProgram, LoadReport) {
        cache.load(&mut self.bench.compiler, &program(), BuildOptions::default()).expect("loads")
    }

    /// Loads through a fresh cache and checks the pixels.
    fn load_and_check(&mut self) -> LoadReport {
        let cache = self.cache();
        let (built, report) = self.load(&cache);
        assert_eq!(self.bench.centre_pixel(&built), DEFAULT_PIXEL, "{report:?}");
        report
    }

    fn key(&self) -> xr_store::ObjectKey {
        let content = self.bench.compiler.content_key(&program(), &BuildOptions::default()).into_result().unwrap();
        self.cache().key(&content)
    }
}

#[test]
fn a_cold_store_builds_from_source_and_a_warm_one_loads_the_binary() {
    let mut s = setup("warm");
    let first = s.load_and_check();
    assert_eq!(first.path, LoadPath::Source);
    assert_eq!(first.reason, "no stored binary for this driver");
    let stored = first.stored.expect("binary written");
    assert!(stored.starts_with(s.store.root()));
    assert_eq!(s.store.keys().unwrap(), vec![s.key()]);

    let second = s.load_and_check();
    assert_eq!(second.path, LoadPath::DeviceBinary, "{second:?}");
    assert_eq!(second.stored, None, "nothing rewritten");

    // The program that came from the binary has a working constant table.
    let cache = s.cache();
    let (mut built, report) = s.load(&cache);
    assert_eq!(report.path, LoadPath::DeviceBinary);
    let color = built.constants.handle("u_color").unwrap();
    built.constants.set_vector(color, &[1.0, 0.0, 1.0, 1.0]).unwrap();
    assert_eq!(s.bench.centre_pixel(&built), [255, 0, 255, 255]);
    built.constants.set_defaults().into_result().unwrap();
    assert_eq!(s.bench.centre_pixel(&built), DEFAULT_PIXEL);
}

#[test]
fn a_corrupted_or_truncated_binary_is_caught_by_the_checksum_and_replaced() {
    let mut s = setup("corrupt");
    s.load_and_check();
    let path = s.store.path_of(&s.key());
    let good = std::fs::read(&path).unwrap();

    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x5a;
    std::fs::write(&path, &flipped).unwrap();
    let report = s.load_and_check();
    assert_eq!(report.path, LoadPath::Source);
    assert!(report.reason.contains("checksum mismatch"), "{}", report.reason);
    assert_eq!(report.stored.as_deref(), Some(path.as_path()), "rebuilt object replaces the corrupt one");
    assert!(s.store.get(&s.key()).unwrap().is_some());

    std::fs::write(&path, &good[..good.len() - 100]).unwrap();
    let report = s.load_and_check();
    assert_eq!(report.path, LoadPath::Source);
    assert!(report.reason.contains("truncated"), "{}", report.reason);
    assert_eq!(s.load_and_check().path, LoadPath::DeviceBinary);
    assert!(s.store.verify().unwrap().is_empty());
}

#[test]
fn a_binary_the_driver_refuses_falls_back_to_source_and_is_rewritten() {
    let mut s = setup("refused");
    let identity = xr_plugin_kit::driver_identity(&s.bench.capabilities);
    let format = *identity.formats.first().expect("llvmpipe offers a program binary format");
    let key = s.key();

    // A valid object whose payload the driver cannot use.
    let garbage = ProgramBinary { format, bytes: vec![0xab; 256].into() };
    s.store.put(&key, &encode_binary_record("cached", &identity, &garbage)).unwrap();
    let report = s.load_and_check();
    assert_eq!(report.path, LoadPath::Source);
    assert!(report.reason.starts_with("driver rejected the stored binary"), "{}", report.reason);
    let (_, rewritten) = decode_binary_record(&s.store.get(&key).unwrap().unwrap()).unwrap();
    assert_ne!(rewritten.bytes, garbage.bytes, "the refused binary is overwritten");
    assert_eq!(s.load_and_check().path, LoadPath::DeviceBinary);

    // A binary in a format this driver does not offer is not handed to it.
    let other_format = ProgramBinary { format: 0xdead, bytes: rewritten.bytes.clone() };
    s.store.put(&key, &encode_binary_record("cached", &identity, &other_format)).unwrap();
    let report = s.load_and_check();
    assert_eq!(report.path, LoadPath::Source);
    assert!(report.reason.contains("format 0xdead"), "{}", report.reason);
    assert_eq!(s.load_and_check().path, LoadPath::DeviceBinary);
}

#[test]
fn a_binary_of_another_driver_is_never_loaded_and_both_are_kept() {
    let mut s = setup("identity");
    let mine = xr_plugin_kit::driver_identity(&s.bench.capabilities);
    let other =
        DriverIdentity { renderer: "Imaginary GPU 9000".into(), version: "4.6 imaginary 1.0".into(), ..mine.clone() };

    // Another driver's binary, stored under that driver's identity.
    let other_cache = ProgramCache::for_identity(s.store.clone(), other.clone());
    let (_, report) = s.load(&other_cache);
    let other_key = report.key.unwrap();
    let other_payload = s.store.get(&other_key).unwrap().unwrap();

    // This driver misses it, builds, and keeps both under their own keys.
    let report = s.load_and_check();
    assert_eq!(report.path, LoadPath::Source);
    assert_eq!(report.reason, "no stored binary for this driver");
    let my_key = s.key();
    assert_ne!(my_key, other_key);
    let mut keys = vec![my_key, other_key];
    keys.sort();
    assert_eq!(s.store.keys().unwrap(), keys);
    assert_eq!(decode_binary_record(&s.store.get(&other_key).unwrap().unwrap()).unwrap().0, other);
    assert_eq!(decode_binary_record(&s.store.get(&my_key).unwrap().unwrap()).unwrap().0, mine);

    // Even filed under this driver's key, another driver's binary is refused.
    s.store.put(&my_key, &other_payload).unwrap();
    let report = s.load_and_check();
    assert_eq!(report.path, LoadPath::Source);
    assert!(report.reason.starts_with("stored binary was built by another driver"), "{}", report.reason);
    assert!(report.reason.contains("Imaginary GPU 9000"), "{}", report.reason);
    assert_eq!(decode_binary_record(&s.store.get(&my_key).unwrap().unwrap()).unwrap().0, mine);
}

#[test]
fn the_key_follows_includes_defines_and_options() {
    let s = setup("keys");
    let key = |desc: &ProgramDesc, options: BuildOptions| {
        s.bench.compiler.content_key(desc, &options).into_result().expect("key")
    };
    let with_include = |text: &str| {
        ProgramDesc::new(
            "k",
            [SourceDesc::new(
                "glsl",
                ShaderStage::Fragment,
                "k.frag",
                "#version 450 core\n#include \"inc.glsl\"\nvoid main() {}\n",
            )
            .with_virtual_file("inc.glsl", text)],
        )
    };
    let base = key(&with_include("// one\n"), BuildOptions::default());
    assert_eq!(base, key(&with_include("// one\n"), BuildOptions::default()), "stable");
    assert_ne!(base, key(&with_include("// two\n"), BuildOptions::default()), "an included file changes the key");
    let mut defined = with_include("// one\n");
    defined.stages[0] = defined.stages[0].clone().with_define("A", "1");
    assert_ne!(base, key(&defined, BuildOptions::default()), "a define changes the key");
    let separable = BuildOptions { separable: true, ..BuildOptions::default() };
    assert_ne!(base, key(&with_include("// one\n"), separable), "separable changes the key");
    let mut renamed = with_include("// one\n");
    renamed.stages[0].file_name = "elsewhere.frag".into();
    assert_eq!(base, key(&renamed, BuildOptions::default()), "the file name does not change the bytes");
    let mut vertex = with_include("// one\n");
    vertex.stages[0].stage = ShaderStage::Vertex;
    assert_ne!(base, key(&vertex, BuildOptions::default()), "the same text as another stage changes the key");

    let missing =
        ProgramDesc::new("m", [SourceDesc::new("glsl", ShaderStage::Fragment, "m.frag", "#include \"gone.glsl\"\n")]);
    let error = s.bench.compiler.content_key(&missing, &BuildOptions::default()).into_result().unwrap_err();
    assert!(error.to_string().contains("m.frag:1: error: cannot find include file 'gone.glsl'"), "{error}");
}
