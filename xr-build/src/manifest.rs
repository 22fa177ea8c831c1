//! The `xr.toml` manifest.
//!
//! ```toml
//! [[axis]]
//! name = "SHADOWS"
//! kind = "enum"
//! values = ["off", "hard", "soft"]
//!
//! [[program]]
//! name = "lit"
//! axes = ["SHADOWS"]
//! targets = ["gl-glsl", "gl-spirv", "vk-spirv"]
//! include = ["shaders/include"]
//! exclude = ["SHADOWS == soft"]
//! stages = [
//!     { stage = "vertex", file = "shaders/lit.vert" },
//!     { stage = "fragment", file = "shaders/lit.frag", entry = "main", language = "glsl" },
//! ]
//! overrides = [{ name = "GAIN", id = 0, type = "float", default = 1.0 }]
//! ```

use serde::Deserialize;
use std::collections::BTreeMap;
use std::{
    fmt,
    ops::Range,
    path::{Path, PathBuf},
};
use toml::Spanned;
use xr_sourcebuild::{CompilePair, ShaderStage};
use xr_store::catalog::{Override, OverrideType};

/// An error in a manifest, at the file, line and column it comes from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: error: {message}", file.display(), if *line == 0 { String::new() } else { format!(":{line}:{column}") })]
pub struct ManifestError {
    /// The manifest file.
    pub file: PathBuf,
    /// 1-based line; 0 when the error is about the whole file.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// How an axis turns into defines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AxisKind {
    /// `NAME` is 0 or 1.
    Bool,
    /// `NAME` is the value's index, and `NAME_<VALUE>` is 1.
    Enum(Vec<String>),
    /// `NAME` takes every integer from `first` to `last`, both included.
    Int {
        /// First value.
        first: i64,
        /// Last value.
        last: i64,
    },
}

/// A variant axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    /// Its name, also the define's.
    pub name: String,
    /// Its values.
    pub kind: AxisKind,
}

impl Axis {
    /// Every value as text, in order.
    pub fn values(&self) -> Vec<String> {
        match &self.kind {
            AxisKind::Bool => vec!["0".into(), "1".into()],
            AxisKind::Enum(values) => values.clone(),
            AxisKind::Int { first, last } => (*first..=*last).map(|v| v.to_string()).collect(),
        }
    }

    /// The value at `index` of [`Axis::values`], made alone (an int axis
    /// may have thousands).
    pub fn value(&self, index: usize) -> Option<String> {
        match &self.kind {
            AxisKind::Bool => ["0", "1"].get(index).map(|v| (*v).to_owned()),
            AxisKind::Enum(values) => values.get(index).cloned(),
            AxisKind::Int { first, last } => {
                let value = first.checked_add(i64::try_from(index).ok()?)?;
                (value <= *last).then(|| value.to_string())
            }
        }
    }
}

/// A place in the manifest, for errors found after parsing (a target or a
/// language no plugin offers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// A target of a program, by the name the plugins declare (`vk-spirv`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetRef {
    /// The target's name.
    pub name: String,
    /// Where the manifest names it.
    pub place: Place,
}

/// One stage of a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// The stage.
    pub stage: ShaderStage,
    /// Its source, resolved against the manifest's directory.
    pub file: PathBuf,
    /// Entry point.
    pub entry: String,
    /// Source language as the manifest names it; `None`: from the file's
    /// extension, as the plugins declare extensions ([`Manifest::check_plugins`]
    /// fills it in).
    pub language: Option<String>,
    /// Where the manifest names the language (or the file, when it does not).
    pub language_place: Place,
}

impl Stage {
    /// The stage's language; empty before [`Manifest::check_plugins`] when
    /// the manifest leaves it to the extension.
    pub fn language(&self) -> &str {
        self.language.as_deref().unwrap_or("")
    }
}

/// A filter clause: `AXIS op VALUE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clause {
    /// Axis name.
    pub axis: String,
    /// Operator: `==`, `!=`, `<`, `<=`, `>`, `>=`.
    pub op: String,
    /// Value as written.
    pub value: String,
}

/// A program of the manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Unique name.
    pub name: String,
    /// Its axes, in the order of its `axes` list.
    pub axes: Vec<Axis>,
    /// What it is built for.
    pub targets: Vec<TargetRef>,
    /// Its stages.
    pub stages: Vec<Stage>,
    /// Include directories, resolved against the manifest's directory.
    pub include_dirs: Vec<PathBuf>,
    /// Its overrides.
    pub overrides: Vec<Override>,
    /// Points dropped from the matrix: each filter is clauses joined by `&&`.
    pub exclude: Vec<Vec<Clause>>,
    /// Compiler options (`options = { optimize = "size" }` for every
    /// target, `target_options = { vk-spirv = { vulkan = "1.3" } }` for
    /// one), checked against what each target's compiler declares by
    /// [`Manifest::check_plugins`].
    pub options: Vec<ProgramOption>,
    /// How long one compile of this program may run in a worker
    /// (`compile_timeout = 600`, seconds) before it is stopped and fails;
    /// `None`: the build's default.
    pub compile_timeout: Option<std::time::Duration>,
}

/// A compiler option a program gives, for all its targets or one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramOption {
    /// The option's name, as the compiler declares it.
    pub name: String,
    /// Its value.
    pub value: String,
    /// The one target it is for; `None`: every target of the program.
    pub target: Option<String>,
    /// Where the manifest gives the value.
    pub place: Place,
}

impl Program {
    /// The options of the compile for `target`, by name: the program's,
    /// then the target's own, which win.
    pub fn options_for(&self, target: &str) -> Vec<(String, String)> {
        let mut options: Vec<(String, String)> = Vec::new();
        let general = self.options.iter().filter(|o| o.target.is_none());
        let own = self.options.iter().filter(|o| o.target.as_deref() == Some(target));
        for option in general.chain(own) {
            options.retain(|(name, _)| *name != option.name);
            options.push((option.name.clone(), option.value.clone()));
        }
        options.sort();
        options
    }
}

/// A parsed and checked manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// The manifest file.
    pub path: PathBuf,
    /// Store directory, resolved against the manifest's directory.
    pub store: PathBuf,
    /// The programs.
    pub programs: Vec<Program>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    store: Option<Spanned<String>>,
    #[serde(default)]
    axis: Vec<RawAxis>,
    #[serde(default)]
    program: Vec<RawProgram>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAxis {
    name: Spanned<String>,
    kind: Spanned<String>,
    values: Option<Spanned<Vec<String>>>,
    range: Option<Spanned<Vec<i64>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProgram {
    name: Spanned<String>,
    #[serde(default)]
    axes: Vec<Spanned<String>>,
    targets: Spanned<Vec<Spanned<String>>>,
    stages: Spanned<Vec<RawStage>>,
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    overrides: Vec<RawOverride>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    options: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    target_options: BTreeMap<String, BTreeMap<String, Spanned<String>>>,
    compile_timeout: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStage {
    stage: Spanned<String>,
    file: Spanned<String>,
    entry: Option<String>,
    language: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOverride {
    name: Spanned<String>,
    id: u32,
    #[serde(rename = "type")]
    kind: Option<Spanned<String>>,
    default: f64,
}

/// Reports errors at byte spans of one manifest's text.
struct Locator<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Locator<'_> {
    fn place(&self, span: Range<usize>) -> Place {
        let before = &self.text[..span.start.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Place { line, column }
    }

    fn at(&self, span: Range<usize>, message: impl fmt::Display) -> ManifestError {
        let Place { line, column } = self.place(span);
        ManifestError { file: self.path.to_path_buf(), line, column, message: message.to_string() }
    }
}

/// What the plugins found offer a manifest: languages with their file
/// extensions, and the (language → target) pairs compiled offline.
#[derive(Clone, Debug, Default)]
pub struct PluginOffer {
    /// Language name → its file extensions.
    pub languages: Vec<(String, Vec<String>)>,
    /// (language, target) pairs.
    pub pairs: Vec<(String, String)>,
    /// The compiler chosen for each pair (by priority), with the pair as it
    /// declares it: what a program's options are checked against.
    pub compilers: Vec<(String, CompilePair)>,
}

impl PluginOffer {
    fn targets(&self) -> Vec<&str> {
        let mut targets: Vec<&str> = self.pairs.iter().map(|(_, t)| t.as_str()).collect();
        targets.sort();
        targets.dedup();
        targets
    }

    fn languages(&self) -> Vec<&str> {
        let mut languages: Vec<&str> = self.languages.iter().map(|(l, _)| l.as_str()).collect();
        languages.sort();
        languages.dedup();
        languages
    }

    fn compiler(&self, language: &str, target: &str) -> Option<&(String, CompilePair)> {
        self.compilers.iter().find(|(_, pair)| pair.language == language && pair.target == target)
    }

    fn language_of(&self, file: &Path) -> Option<&str> {
        let extension = file.extension()?.to_str()?;
        self.languages.iter().find(|(_, extensions)| extensions.iter().any(|e| e == extension)).map(|(l, _)| l.as_str())
    }
}

fn check_program(program: &mut Program, offer: &PluginOffer) -> Result<(), (Place, String)> {
    for target in &program.targets {
        if !offer.targets().contains(&target.name.as_str()) {
            return Err((
                target.place.clone(),
                format!(
                    "no plugin builds target '{}' (the plugins found build: {})",
                    target.name,
                    listed(&offer.targets())
                ),
            ));
        }
    }
    for stage in &mut program.stages {
        match &stage.language {
            Some(language) if !offer.languages().contains(&language.as_str()) => {
                return Err((
                    stage.language_place.clone(),
                    format!(
                        "no plugin compiles language '{language}' (the plugins found compile: {})",
                        listed(&offer.languages())
                    ),
                ));
            }
            Some(_) => {}
            None => match offer.language_of(&stage.file) {
                Some(language) => stage.language = Some(language.to_owned()),
                None => {
                    return Err((
                        stage.language_place.clone(),
                        format!(
                            "cannot tell the language of {} from its extension: add `language = \"…\"` (the plugins found compile: {})",
                            stage.file.display(),
                            listed(&offer.languages())
                        ),
                    ));
                }
            },
        }
    }
    program.options = resolve_options(program, offer)?;
    Ok(())
}

/// The program's options as each target's compile takes them: a target's
/// own options must be declared by its compiler; a program-wide option goes
/// to the targets whose compilers declare it (an optimisation level means
/// nothing to a compiler that runs on the device) and must be declared by
/// at least one. Every value is checked against the declarations that take
/// it. A value equal to the compiler's declared default is left out, so
/// that spelling out a default keeps the keys of leaving it out.
fn resolve_options(program: &Program, offer: &PluginOffer) -> Result<Vec<ProgramOption>, (Place, String)> {
    let mut resolved = Vec::new();
    for option in &program.options {
        let targets: Vec<&str> = match &option.target {
            Some(target) => vec![target.as_str()],
            None => program.targets.iter().map(|t| t.name.as_str()).collect(),
        };
        let (mut taken, mut refusal) = (false, None);
        for target in targets {
            let compilers: Vec<&(String, CompilePair)> =
                program.stages.iter().filter_map(|stage| offer.compiler(stage.language(), target)).collect();
            let checks: Vec<Result<(), xr_host::OptionError>> = compilers
                .iter()
                .map(|(compiler, pair)| xr_host::check_option(compiler, pair, &option.name, &option.value))
                .collect();
            // A value a compiler refuses is wrong wherever the option goes.
            if let Some(Err(bad)) = checks.iter().find(|c| matches!(c, Err(xr_host::OptionError::BadValue { .. }))) {
                return Err((option.place.clone(), bad.to_string()));
            }
            match checks.into_iter().find_map(Result::err) {
                Some(unknown) => refusal = refusal.or(Some(unknown)),
                None if compilers.is_empty() => {}
                None => {
                    taken = true;
                    let is_default = compilers
                        .iter()
                        .all(|(_, pair)| pair.option(&option.name).is_some_and(|d| d.default == option.value));
                    if !is_default {
                        resolved.push(ProgramOption { target: Some(target.to_owned()), ..option.clone() });
                    }
                }
            }
        }
        // A target's own option must be taken there; a program-wide one somewhere.
        let refused = if option.target.is_some() { refusal } else { refusal.filter(|_| !taken) };
        if let Some(error) = refused {
            return Err((option.place.clone(), error.to_string()));
        }
    }
    Ok(resolved)
}

fn listed(names: &[&str]) -> String {
    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
}

impl Manifest {
    /// Checks every program's targets and languages against what the
    /// plugins offer, and fills in the languages the manifest leaves to the
    /// file extension. A program naming a target or language no plugin
    /// offers is taken out of the manifest and returned with its error (at
    /// the name's line and column, listing what the plugins offer), so that
    /// the other programs still build. A pair no plugin compiles (HLSL into
    /// a GLSL-only target) is left to the build, which reports it for each
    /// artifact of that program.
    pub fn check_plugins(&mut self, offer: &PluginOffer) -> Vec<(String, ManifestError)> {
        let mut refused = Vec::new();
        let path = self.path.clone();
        self.programs.retain_mut(|program| match check_program(program, offer) {
            Ok(()) => true,
            Err((place, message)) => {
                let error = ManifestError { file: path.clone(), line: place.line, column: place.column, message };
                refused.push((program.name.clone(), error));
                false
            }
        });
        refused
    }

    /// Reads and checks the manifest at `path`.
    pub fn load(path: &Path) -> Result<Self, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|e| ManifestError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            message: format!("cannot read the manifest: {e}"),
        })?;
        Self::parse(path, &text)
    }

    /// Parses and checks manifest text read from `path` (files are resolved against its directory).
    pub fn parse(path: &Path, text: &str) -> Result<Self, ManifestError> {
        let locate = Locator { path, text };
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_owned();
            locate.at(e.span().unwrap_or(0..0), message)
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let store = raw.store.as_ref().map_or_else(|| dir.join("target/xr-store"), |s| lexical(&dir.join(s.get_ref())));

        let mut axes: Vec<Axis> = Vec::new();
        for raw_axis in &raw.axis {
            let name = raw_axis.name.get_ref();
            check_identifier(&locate, &raw_axis.name)?;
            if axes.iter().any(|a| &a.name == name) {
                return Err(locate.at(raw_axis.name.span(), format!("axis '{name}' is declared twice")));
            }
            let kind = match raw_axis.kind.get_ref().as_str() {
                "bool" => AxisKind::Bool,
                "enum" => {
                    let values = raw_axis.values.as_ref().ok_or_else(|| {
                        locate.at(raw_axis.kind.span(), format!("enum axis '{name}' needs `values = [...]`"))
                    })?;
                    if values.get_ref().is_empty() {
                        return Err(locate.at(values.span(), format!("axis '{name}' has no values")));
                    }
                    for (i, value) in values.get_ref().iter().enumerate() {
                        if !value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || value.is_empty() {
                            return Err(locate
                                .at(values.span(), format!("value '{value}' of axis '{name}' is not an identifier")));
                        }
                        if values.get_ref()[..i].contains(value) {
                            return Err(
                                locate.at(values.span(), format!("value '{value}' of axis '{name}' is listed twice"))
                            );
                        }
                    }
                    AxisKind::Enum(values.get_ref().clone())
                }
                "int" => {
                    let range = raw_axis.range.as_ref().ok_or_else(|| {
                        locate.at(raw_axis.kind.span(), format!("int axis '{name}' needs `range = [first, last]`"))
                    })?;
                    match range.get_ref().as_slice() {
                        [first, last] if first <= last => AxisKind::Int { first: *first, last: *last },
                        [_, _] => {
                            return Err(
                                locate.at(range.span(), format!("axis '{name}' has no values: its range is empty"))
                            );
                        }
                        _ => return Err(locate.at(range.span(), "`range` takes two integers: [first, last]")),
                    }
                }
                other => {
                    return Err(
                        locate.at(raw_axis.kind.span(), format!("unknown axis kind '{other}' (bool, enum or int)"))
                    );
                }
            };
            axes.push(Axis { name: name.clone(), kind });
        }

        let mut programs: Vec<Program> = Vec::new();
        for raw_program in &raw.program {
            let name = raw_program.name.get_ref();
            if programs.iter().any(|p| &p.name == name) {
                return Err(locate.at(raw_program.name.span(), format!("program '{name}' is declared twice")));
            }
            let mut program_axes = Vec::new();
            for axis_name in &raw_program.axes {
                let axis = axes
                    .iter()
                    .find(|a| &a.name == axis_name.get_ref())
                    .ok_or_else(|| locate.at(axis_name.span(), format!("unknown axis '{}'", axis_name.get_ref())))?;
                program_axes.push(axis.clone());
            }
            let mut targets: Vec<TargetRef> = Vec::new();
            for target in raw_program.targets.get_ref() {
                if targets.iter().any(|t| &t.name == target.get_ref()) {
                    return Err(locate.at(target.span(), format!("target '{}' is listed twice", target.get_ref())));
                }
                targets.push(TargetRef { name: target.get_ref().clone(), place: locate.place(target.span()) });
            }
            if targets.is_empty() {
                return Err(locate.at(raw_program.targets.span(), format!("program '{name}' has no targets")));
            }
            if raw_program.stages.get_ref().is_empty() {
                return Err(locate.at(raw_program.stages.span(), format!("program '{name}' has no stages")));
            }
            let mut stages = Vec::new();
            for raw_stage in raw_program.stages.get_ref() {
                let stage =
                    ShaderStage::ALL.into_iter().find(|s| s.name() == raw_stage.stage.get_ref()).ok_or_else(|| {
                        locate.at(raw_stage.stage.span(), format!("unknown stage '{}'", raw_stage.stage.get_ref()))
                    })?;
                let file = dir.join(raw_stage.file.get_ref());
                if !file.is_file() {
                    return Err(
                        locate.at(raw_stage.file.span(), format!("source file '{}' does not exist", file.display()))
                    );
                }
                let language = raw_stage.language.as_ref().map(|l| l.get_ref().clone());
                let language_place =
                    locate.place(raw_stage.language.as_ref().map_or(raw_stage.file.span(), |l| l.span()));
                let entry = raw_stage.entry.clone().unwrap_or_else(|| "main".to_owned());
                stages.push(Stage { stage, file, entry, language, language_place });
            }
            let mut overrides: Vec<Override> = Vec::new();
            for raw in &raw_program.overrides {
                check_identifier(&locate, &raw.name)?;
                let kind = match raw.kind.as_ref().map(|k| (k.get_ref().as_str(), k.span())) {
                    None | Some(("float", _)) => OverrideType::Float,
                    Some(("int", _)) => OverrideType::Int,
                    Some(("uint", _)) => OverrideType::Uint,
                    Some(("bool", _)) => OverrideType::Bool,
                    Some((other, span)) => {
                        return Err(
                            locate.at(span, format!("unknown override type '{other}' (float, int, uint or bool)"))
                        );
                    }
                };
                if let Some(other) = overrides.iter().find(|o| o.id == raw.id || &o.name == raw.name.get_ref()) {
                    return Err(locate.at(
                        raw.name.span(),
                        format!(
                            "override '{}' (id {}) clashes with override '{}' (id {})",
                            raw.name.get_ref(),
                            raw.id,
                            other.name,
                            other.id
                        ),
                    ));
                }
                if program_axes.iter().any(|a| &a.name == raw.name.get_ref()) {
                    return Err(locate.at(
                        raw.name.span(),
                        format!("'{}' is both an axis and an override of this program", raw.name.get_ref()),
                    ));
                }
                overrides.push(Override { name: raw.name.get_ref().clone(), id: raw.id, kind, default: raw.default });
            }
            let mut exclude = Vec::new();
            for filter in &raw_program.exclude {
                exclude.push(parse_filter(&locate, filter, &program_axes)?);
            }
            let mut options: Vec<ProgramOption> = raw_program
                .options
                .iter()
                .map(|(name, value)| ProgramOption {
                    name: name.clone(),
                    value: value.get_ref().clone(),
                    target: None,
                    place: locate.place(value.span()),
                })
                .collect();
            for (target, given) in &raw_program.target_options {
                for (name, value) in given {
                    if !targets.iter().any(|t| &t.name == target) {
                        return Err(locate.at(
                            value.span(),
                            format!("target_options names '{target}', which is not a target of this program"),
                        ));
                    }
                    options.push(ProgramOption {
                        name: name.clone(),
                        value: value.get_ref().clone(),
                        target: Some(target.clone()),
                        place: locate.place(value.span()),
                    });
                }
            }
            let compile_timeout = match &raw_program.compile_timeout {
                Some(seconds) => Some(
                    std::time::Duration::try_from_secs_f64(*seconds.get_ref())
                        .ok()
                        .filter(|d| !d.is_zero())
                        .ok_or_else(|| {
                            locate.at(seconds.span(), "compile_timeout is a number of seconds greater than 0")
                        })?,
                ),
                None => None,
            };
            programs.push(Program {
                compile_timeout,
                name: name.clone(),
                options,
                axes: program_axes,
                targets,
                stages,
                include_dirs: raw_program.include.iter().map(|d| dir.join(d)).collect(),
                overrides,
                exclude,
            });
        }
        Ok(Manifest { path: path.to_path_buf(), store, programs })
    }
}

/// `path` with `a/..` pairs removed, without touching the file system (the
/// store may not exist yet).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir
                if matches!(out.components().next_back(), Some(std::path::Component::Normal(_))) =>
            {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() { PathBuf::from(".") } else { out }
}

fn check_identifier(locate: &Locator<'_>, name: &Spanned<String>) -> Result<(), ManifestError> {
    let text = name.get_ref();
    let ok = text.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok { Ok(()) } else { Err(locate.at(name.span(), format!("'{text}' is not a valid define name"))) }
}

fn parse_filter(locate: &Locator<'_>, filter: &Spanned<String>, axes: &[Axis]) -> Result<Vec<Clause>, ManifestError> {
    let mut clauses = Vec::new();
    for part in filter.get_ref().split("&&") {
        let part = part.trim();
        let op = ["==", "!=", "<=", ">=", "<", ">"].into_iter().find(|op| part.contains(op)).ok_or_else(|| {
            locate.at(filter.span(), format!("filter clause '{part}' is not `AXIS op VALUE` (==, !=, <, <=, >, >=)"))
        })?;
        let (axis, value) = part.split_once(op).map(|(a, v)| (a.trim(), v.trim())).unwrap_or_default();
        let declared = axes.iter().find(|a| a.name == axis).ok_or_else(|| {
            locate.at(filter.span(), format!("filter names '{axis}', which is not an axis of this program"))
        })?;
        if !declared.values().iter().any(|v| v == value) && !matches!(declared.kind, AxisKind::Int { .. }) {
            return Err(locate.at(filter.span(), format!("'{value}' is not a value of axis '{axis}'")));
        }
        if matches!(declared.kind, AxisKind::Int { .. }) && value.parse::<i64>().is_err() {
            return Err(locate.at(filter.span(), format!("'{value}' is not an integer (axis '{axis}')")));
        }
        clauses.push(Clause { axis: axis.to_owned(), op: op.to_owned(), value: value.to_owned() });
    }
    Ok(clauses)
}
