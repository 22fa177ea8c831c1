//! The open target model and the device-free offline compile.
//!
//! A *target* names what is produced and for which device (`vk-spirv` is
//! SPIR-V for Vulkan), not who produces it; a *language* is a name a plugin
//! declares (`glsl`, `hlsl`, `wgsl`, …). A build system declares the
//! (language → target) pairs it compiles without a device
//! ([`BuildSystemInfo::compiles`](crate::BuildSystemInfo::compiles)) and the
//! targets it loads once attached to a device
//! ([`BuildSystemInfo::loads`](crate::BuildSystemInfo::loads)). The host
//! matches the two by name and never decodes an artifact: it stores the
//! bytes of [`OfflineArtifact::bytes`] as an opaque, checksummed object and
//! hands them back to a loader of the same target.

use crate::{
    diagnostics::Diagnostic,
    source::{ProgramDesc, ShaderStage},
};
use abi_stable::{
    StableAbi,
    std_types::{ROption, RString, RVec},
};

/// A source language a build system accepts, with the file extensions that
/// mean it (so that `xr compile shade.wgsl` needs no `--lang`).
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct LanguageInfo {
    /// The language's name, lower case: `glsl`, `hlsl`, `wgsl`, …
    pub name: RString,
    /// File extensions without the dot: `wgsl`; `vert`, `frag`, `glsl`, …
    pub extensions: RVec<RString>,
}

impl LanguageInfo {
    /// `name`, recognised by `extensions`.
    pub fn new(name: &str, extensions: &[&str]) -> Self {
        Self { name: name.into(), extensions: extensions.iter().map(|e| RString::from(*e)).collect() }
    }
}

/// One (language → target) pair a build system compiles without a device,
/// with the options it takes.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CompilePair {
    /// The source language.
    pub language: RString,
    /// The target produced.
    pub target: RString,
    /// The options the compile takes: the host refuses any other, and any
    /// value outside an option's declared values, before the compile.
    pub options: RVec<OptionDecl>,
    /// The stages it compiles into the target; empty: every stage the
    /// build system builds ([`crate::BuildSystemInfo::stages`]). A program
    /// with a stage its pair does not compile (a mesh stage for OpenGL) is
    /// refused where the manifest declares it.
    pub stages: RVec<ShaderStage>,
    /// How a compile of a stage reaches files besides the stage's own:
    /// what a farm's action carries for it (docs/REMOTE.md).
    pub reach: SourceReach,
}

impl CompilePair {
    /// `language → target`, taking no options, compiling every stage of
    /// its build system, reaching files in a way it does not say
    /// ([`SourceReach::UNKNOWN`]).
    pub fn new(language: &str, target: &str) -> Self {
        Self {
            language: language.into(),
            target: target.into(),
            options: RVec::new(),
            stages: RVec::new(),
            reach: SourceReach::UNKNOWN,
        }
    }

    /// The same pair, its compiles reaching other files by `reach`.
    pub fn reaching(mut self, reach: SourceReach) -> Self {
        self.reach = reach;
        self
    }

    /// The same pair, compiling only `stages`.
    pub fn with_stages(mut self, stages: impl IntoIterator<Item = ShaderStage>) -> Self {
        self.stages = stages.into_iter().collect();
        self
    }

    /// The same pair, taking `options`.
    pub fn with_options(mut self, options: impl IntoIterator<Item = OptionDecl>) -> Self {
        self.options = options.into_iter().collect();
        self
    }

    /// The declaration of option `name`, if the pair takes it.
    pub fn option(&self, name: &str) -> Option<&OptionDecl> {
        self.options.iter().find(|o| o.name == name)
    }
}

/// How a compile reaches files besides its stage's own, as the build
/// system declares it for a pair ([`CompilePair::reach`]): which files a
/// compile run elsewhere (a farm's action) needs, known before it runs.
/// The host follows the declaration with the kit's scans
/// (`xr_plugin_kit::includes`), the same resolution the compilers use, and
/// never a language's name.
///
/// A value, not an enum: a way of reaching files added later is a new
/// constant (an addition to the contract, not a break), and a host that
/// does not know a value takes it as [`UNKNOWN`](Self::UNKNOWN), which
/// sends too much, never too little.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceReach(pub u8);

impl SourceReach {
    /// Not declared: the compile may read anything under the stage's
    /// directory and its include directories, and a farm's action carries
    /// them whole. What [`CompilePair::new`] declares.
    pub const UNKNOWN: Self = Self(0);
    /// C-preprocessor `#include "name"` and `#include <name>` directives
    /// (GLSL, HLSL): each name is found in the in-memory files, then the
    /// including file's directory, then the include directories, and the
    /// files found are read for theirs in turn.
    pub const INCLUDES: Self = Self(1);
    /// Slang's module declarations (`import a.b_c;`, `__include`,
    /// `implementing`) and `#include` directives: a module is a file
    /// (`a/b_c.slang` or `a/b-c.slang`) in the importing file's directory
    /// or the include directories. A module found in none of them may be
    /// found by other means: the compile is then taken as
    /// [`UNKNOWN`](Self::UNKNOWN).
    pub const IMPORTS: Self = Self(2);
    /// The compile reads the stage's source alone (WGSL, which has no
    /// includes).
    pub const STAGE_ONLY: Self = Self(3);

    /// Every value this contract names.
    pub const ALL: [Self; 4] = [Self::UNKNOWN, Self::INCLUDES, Self::IMPORTS, Self::STAGE_ONLY];

    /// `includes`, `imports`, `stage-only`, or `unknown` (for any value
    /// this contract does not name, too).
    pub fn name(self) -> &'static str {
        match self {
            Self::INCLUDES => "includes",
            Self::IMPORTS => "imports",
            Self::STAGE_ONLY => "stage-only",
            _ => "unknown",
        }
    }
}

impl std::fmt::Display for SourceReach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One value an option takes: a word (`1.3`), or a prefix ending in `*`
/// (`vs_*`) that takes any non-empty rest; where the value names the stage
/// it compiles (an HLSL profile), that stage.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OptionValue {
    /// The value, or a prefix ending in `*`.
    pub pattern: RString,
    /// The stage a matching value selects, if it selects one.
    pub stage: ROption<ShaderStage>,
}

impl OptionValue {
    /// Whether `value` is this value (or starts with its prefix).
    pub fn matches(&self, value: &str) -> bool {
        match self.pattern.strip_suffix('*') {
            Some(prefix) => value.len() > prefix.len() && value.starts_with(prefix),
            None => self.pattern == value,
        }
    }
}

/// An option a (language → target) pair declares: its name, the values it
/// takes, its default and one line of help, for `xr plugins`, `xr compile
/// --option` and a manifest's `options`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OptionDecl {
    /// Its name, lower case with dashes: `optimize`, `spirv-version`.
    pub name: RString,
    /// The values it takes; empty: any text (the compile checks it).
    pub values: RVec<OptionValue>,
    /// What the compile uses when the option is not given; empty: nothing.
    pub default: RString,
    /// One line for `xr plugins`.
    pub help: RString,
}

impl OptionDecl {
    /// An option taking one of `values`.
    pub fn choice(name: &str, values: &[&str], default: &str, help: &str) -> Self {
        Self {
            name: name.into(),
            values: values.iter().map(|v| OptionValue { pattern: (*v).into(), stage: ROption::RNone }).collect(),
            default: default.into(),
            help: help.into(),
        }
    }

    /// An option whose values each select a stage: `(pattern, stage)`.
    pub fn stage_selector(name: &str, values: &[(&str, ShaderStage)], help: &str) -> Self {
        Self {
            name: name.into(),
            values: values
                .iter()
                .map(|(pattern, stage)| OptionValue { pattern: (*pattern).into(), stage: ROption::RSome(*stage) })
                .collect(),
            default: RString::new(),
            help: help.into(),
        }
    }

    /// Whether `value` is one the option takes.
    pub fn accepts(&self, value: &str) -> bool {
        self.values.is_empty() || self.values.iter().any(|v| v.matches(value))
    }

    /// The stage `value` selects, if the option selects stages.
    pub fn stage_of(&self, value: &str) -> Option<ShaderStage> {
        self.values.iter().find(|v| v.matches(value)).and_then(|v| v.stage.into_option())
    }

    /// `name = a | b | c` (or `name = TEXT`), for messages.
    pub fn usage(&self) -> String {
        if self.values.is_empty() {
            return format!("{} = TEXT", self.name);
        }
        let values: Vec<&str> = self.values.iter().map(|v| v.pattern.as_str()).collect();
        format!("{} = {}", self.name, values.join(" | "))
    }
}

/// An option of an offline compile, by name and value, as one of the
/// pair's [`OptionDecl`]s declares it. The host has checked both before
/// the compile; a build system still refuses a value it cannot use (a
/// profile of the right stage prefix but an unknown model) with a clear
/// error.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompileOption {
    /// The option's name.
    pub name: RString,
    /// Its value.
    pub value: RString,
}

/// What the host asks of an offline compile.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct OfflineRequest {
    /// The program: stages, files, defines, include directories, entry points.
    pub program: ProgramDesc,
    /// The target to produce (one of the build system's pairs).
    pub target: RString,
    /// Options by name.
    pub options: RVec<CompileOption>,
}

impl OfflineRequest {
    /// `program` for `target` with no options.
    pub fn new(program: ProgramDesc, target: &str) -> Self {
        Self { program, target: target.into(), options: RVec::new() }
    }

    /// Adds the option `name` = `value`.
    pub fn with_option(mut self, name: &str, value: &str) -> Self {
        self.options.push(CompileOption { name: name.into(), value: value.into() });
        self
    }

    /// The value of option `name`, if given (the last one wins).
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options.iter().rev().find(|o| o.name == name).map(|o| o.value.as_str())
    }
}

/// A file an offline compile read, with the BLAKE3 hash (hex) of the text
/// it compiled: the host rebuilds the artifact when any of them changes.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileRead {
    /// The path as the compile opened it.
    pub path: RString,
    /// BLAKE3 of its contents, hex.
    pub hash: RString,
}

impl FileRead {
    /// `path`, whose contents were `text`.
    pub fn of_text(path: &str, text: &[u8]) -> Self {
        Self { path: path.into(), hash: blake3::hash(text).to_hex().as_str().into() }
    }
}

/// One stage's own output, where the target has one (a SPIR-V module):
/// what `xr compile -o` writes for a single-stage program.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct StageOutput {
    /// The stage.
    pub stage: ShaderStage,
    /// Its bytes.
    pub bytes: RVec<u8>,
}

/// A constant the program reads (a loose uniform, a member of a constant
/// block, a push constant member), as the constant table will list it.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ReflectedConstant {
    /// Its name.
    pub name: RString,
    /// Its type, as the build system writes it (`vec4<f32>`, `mat4x4<f32>`).
    pub ty: RString,
    /// The stage that declares it.
    pub stage: ShaderStage,
}

/// A resource bound by set and binding (uniform or storage buffer, texture,
/// sampler, image).
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ReflectedResource {
    /// Its name.
    pub name: RString,
    /// What it is: `uniform-block`, `storage-buffer`, `sampled-image`, …
    pub kind: RString,
    /// Descriptor set (0 on OpenGL).
    pub set: u32,
    /// Binding (or GL unit).
    pub binding: u32,
    /// The stage that declares it.
    pub stage: ShaderStage,
}

/// An override: a specialization constant (SPIR-V) or a WGSL `override`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ReflectedOverride {
    /// Its name.
    pub name: RString,
    /// Its id (`constant_id`, `@id`).
    pub id: u32,
    /// Its type: `bool`, `int`, `uint` or `float`.
    pub ty: RString,
    /// Its default value, as text.
    pub default: RString,
}

/// What the run time needs to know of a compiled program.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramReflection {
    /// Constants, for the constant table.
    pub constants: RVec<ReflectedConstant>,
    /// Resources by set and binding.
    pub resources: RVec<ReflectedResource>,
    /// Overrides with their defaults.
    pub overrides: RVec<ReflectedOverride>,
    /// The build system's own full reflection, as a JSON value
    /// (`xr reflect --json` prints it); empty when it has none.
    pub json: RString,
    /// The same for a person to read (`xr reflect` prints it).
    pub text: RString,
}

/// What an offline compile made.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct OfflineArtifact {
    /// The artifact: opaque to the host, read back by a loader of the target.
    pub bytes: RVec<u8>,
    /// Every file the compile read, for incremental builds.
    pub files_read: RVec<FileRead>,
    /// Warnings, at the user's file and line.
    pub warnings: RVec<Diagnostic>,
    /// What the run time needs to know.
    pub reflection: ProgramReflection,
    /// Each stage's own output, where the target has one.
    pub stages: RVec<StageOutput>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_reaches_unknown_files_until_it_says_and_an_unnamed_value_is_unknown() {
        assert_eq!(CompilePair::new("l", "t").reach, SourceReach::UNKNOWN);
        assert_eq!(SourceReach::default(), SourceReach::UNKNOWN);
        let pair = CompilePair::new("l", "t").with_stages([ShaderStage::Vertex]).reaching(SourceReach::IMPORTS);
        assert_eq!((pair.reach, pair.stages.len()), (SourceReach::IMPORTS, 1));
        let names: Vec<&str> = SourceReach::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(names, ["unknown", "includes", "imports", "stage-only"]);
        // A value of a later contract, read by this one: sent as unknown.
        assert_eq!(SourceReach(200).to_string(), "unknown");
    }
}
