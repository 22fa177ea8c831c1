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
//! # A ray tracing program's hit stages may name their hit groups:
//! # { stage = "closest-hit", file = "shaders/glass.rchit", hit_group = 1 }
//! overrides = [{ name = "GAIN", id = 0, type = "float", default = 1.0 }]
//! ```

use crate::suggest;
use serde::{Deserialize, de::DeserializeOwned, de::IntoDeserializer};
use std::collections::BTreeMap;
use std::{
    cell::RefCell,
    fmt,
    ops::Range,
    path::{Path, PathBuf},
};
use toml::{
    Spanned,
    de::{DeTable, DeValue},
};
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

/// Every mistake of a manifest, in the order of their places, each at its
/// file, line and column (one a line when shown).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ManifestErrors(pub Vec<ManifestError>);

impl fmt::Display for ManifestErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::ops::Deref for ManifestErrors {
    type Target = [ManifestError];

    fn deref(&self) -> &[ManifestError] {
        &self.0
    }
}

impl From<ManifestError> for ManifestErrors {
    fn from(error: ManifestError) -> Self {
        Self(vec![error])
    }
}

/// Something in a manifest that builds, but likely not as meant (a
/// manifest with no programs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: warning: {message}", file.display(), if *line == 0 { String::new() } else { format!(":{line}:{column}") })]
pub struct ManifestWarning {
    /// The manifest file.
    pub file: PathBuf,
    /// 1-based line; 0 when the warning is about the whole file.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is likely wrong.
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
    /// Where the manifest names the stage.
    pub stage_place: Place,
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
    /// The hit group this hit stage of a ray tracing program names
    /// (`hit_group = N`); `None`: the default rule.
    pub hit_group: Option<u32>,
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
    /// Its stages in `language`.
    pub fn stages_of(&self, language: &str) -> Vec<ShaderStage> {
        self.stages.iter().filter(|s| s.language() == language).map(|s| s.stage).collect()
    }

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
    /// What builds but is likely not meant (`xr build` prints them).
    pub warnings: Vec<ManifestWarning>,
}

/// Reports errors at byte spans of one manifest's text, and keeps them:
/// a manifest's every mistake is found in one reading.
struct Locator<'a> {
    path: &'a Path,
    text: &'a str,
    errors: RefCell<Vec<ManifestError>>,
}

impl<'a> Locator<'a> {
    fn new(path: &'a Path, text: &'a str) -> Self {
        Self { path, text, errors: RefCell::new(Vec::new()) }
    }

    fn place(&self, span: Range<usize>) -> Place {
        let before = self.text.get(..span.start.min(self.text.len())).unwrap_or(self.text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Place { line, column }
    }

    fn at(&self, span: Range<usize>, message: impl fmt::Display) -> ManifestError {
        let Place { line, column } = self.place(span);
        ManifestError { file: self.path.to_path_buf(), line, column, message: message.to_string() }
    }

    /// Notes an error at `span`.
    fn error(&self, span: Range<usize>, message: impl fmt::Display) {
        let error = self.at(span, message);
        self.errors.borrow_mut().push(error);
    }

    /// How many errors are noted so far.
    fn count(&self) -> usize {
        self.errors.borrow().len()
    }

    /// Every error noted, in the order of their places.
    fn into_errors(self) -> Vec<ManifestError> {
        let mut errors = self.errors.into_inner();
        errors.sort_by_key(|e| (e.line, e.column));
        errors.dedup();
        errors
    }
}

/// One TOML table of the manifest (the document, an `[[axis]]`, a stage),
/// its keys read one at a time, each into its type: a key of the wrong
/// type is an error there and the others are still read.
struct Table<'t, 'i> {
    locate: &'t Locator<'t>,
    entries: &'t DeTable<'i>,
    /// Where it is, for a key it lacks.
    span: Range<usize>,
    /// Its keys, once [`Table::known_keys`] has checked them.
    known: std::cell::Cell<&'static [&'static str]>,
}

impl<'t, 'i> Table<'t, 'i> {
    /// `value` as a table; an error (and `None`) when it is something else.
    fn of(locate: &'t Locator<'t>, value: &'t Spanned<DeValue<'i>>, expected: &str) -> Option<Self> {
        match value.get_ref() {
            DeValue::Table(entries) => Some(Self { locate, entries, span: value.span(), known: Default::default() }),
            other => {
                locate.error(value.span(), format!("invalid type: {}, expected {expected}", other.type_str()));
                None
            }
        }
    }

    fn value(&self, key: &str) -> Option<&'t Spanned<DeValue<'i>>> {
        self.entries.iter().find(|(k, _)| k.get_ref().as_ref() == key).map(|(_, v)| v)
    }

    /// Each key not in `known` is an error at it, with the known key it
    /// is closest to.
    fn known_keys(&self, known: &'static [&'static str]) {
        self.known.set(known);
        for key in self.entries.keys() {
            let name = key.get_ref().as_ref();
            if known.contains(&name) {
                continue;
            }
            let message = match suggest::closest(name, known.iter().copied()) {
                Some(meant) => format!("unknown field `{name}`; did you mean `{meant}`?"),
                None => format!(
                    "unknown field `{name}`, expected one of {}",
                    known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ),
            };
            self.locate.error(key.span(), message);
        }
    }

    /// The value of `key` as a `T`; `None` when it is absent or (an error
    /// then) of another type.
    fn get<T: DeserializeOwned>(&self, key: &str) -> Option<Spanned<T>> {
        let value = self.value(key)?;
        match Spanned::<T>::deserialize(value.clone().into_deserializer()) {
            Ok(read) => Some(read),
            Err(e) => {
                self.locate.error(e.span().unwrap_or_else(|| value.span()), e.message().trim());
                None
            }
        }
    }

    /// [`Table::get`] of a key the table must have. A key it lacks is an
    /// error, unless an unknown key is its misspelling (reported already).
    fn required<T: DeserializeOwned>(&self, key: &str) -> Option<Spanned<T>> {
        let known = self.known.get();
        let misspelt = self.entries.keys().any(|k| {
            let name = k.get_ref().as_ref();
            !known.contains(&name) && suggest::closest(name, known.iter().copied()) == Some(key)
        });
        if self.value(key).is_none() && !misspelt {
            self.locate.error(self.span.clone(), format!("missing field `{key}`"));
        }
        self.get(key)
    }

    /// The tables of the array at `key` (`[[axis]]`, `stages = [{ … }]`),
    /// with the array's span; `None` when it is absent.
    fn tables(&self, key: &str, expected: &str) -> Option<(Range<usize>, Vec<Table<'t, 'i>>)> {
        let value = self.value(key)?;
        let DeValue::Array(items) = value.get_ref() else {
            let kind = value.get_ref().type_str();
            self.locate.error(value.span(), format!("invalid type: {kind}, expected an array of {expected}"));
            return Some((value.span(), Vec::new()));
        };
        Some((value.span(), items.iter().filter_map(|item| Table::of(self.locate, item, expected)).collect()))
    }
}

const MANIFEST_KEYS: &[&str] = &["store", "axis", "program"];
const AXIS_KEYS: &[&str] = &["name", "kind", "values", "range"];
const PROGRAM_KEYS: &[&str] = &[
    "name",
    "axes",
    "targets",
    "stages",
    "include",
    "overrides",
    "exclude",
    "options",
    "target_options",
    "compile_timeout",
];
const STAGE_KEYS: &[&str] = &["stage", "file", "entry", "language", "hit_group"];
const OVERRIDE_KEYS: &[&str] = &["name", "id", "type", "default"];
const AXIS_KINDS: &[&str] = &["bool", "enum", "int"];
const OVERRIDE_TYPES: &[&str] = &["float", "int", "uint", "bool"];

/// What the plugins found offer a manifest: languages with their file
/// extensions, and the (language → target) pairs compiled offline.
#[derive(Clone, Debug, Default)]
pub struct PluginOffer {
    /// Language name → its file extensions.
    pub languages: Vec<(String, Vec<String>)>,
    /// (language, target) pairs.
    pub pairs: Vec<(String, String)>,
    /// The compilers of each pair, with the pair as each declares it: the
    /// one chosen by priority first, then the others by priority. A
    /// program's stages and options are checked against the first that
    /// takes all its stages of the language ([`PluginOffer::compiler_for`]).
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

    /// The compiler of `language` → `target` for a program whose stages
    /// of that language are `stages`: the first that takes them all, else
    /// the first (whose refusal names the stage).
    fn compiler_for(&self, language: &str, target: &str, stages: &[ShaderStage]) -> Option<&(String, CompilePair)> {
        let mut of_pair = self.compilers.iter().filter(|(_, pair)| pair.language == language && pair.target == target);
        let first = of_pair.clone().next();
        of_pair.find(|(_, pair)| stages.iter().all(|s| pair.stages.contains(s))).or(first)
    }

    fn language_of(&self, file: &Path) -> Option<&str> {
        let extension = file.extension()?.to_str()?;
        self.languages.iter().find(|(_, extensions)| extensions.iter().any(|e| e == extension)).map(|(l, _)| l.as_str())
    }
}

/// Every mistake of `program` against what the plugins offer, each at its place.
fn check_program(program: &mut Program, offer: &PluginOffer) -> Vec<(Place, String)> {
    let mut errors = Vec::new();
    let targets = offer.targets();
    for target in &program.targets {
        if !targets.contains(&target.name.as_str()) {
            errors.push((
                target.place.clone(),
                format!(
                    "no plugin builds target '{}' (the plugins found build: {}){}",
                    target.name,
                    listed(&targets),
                    suggest::did_you_mean(&target.name, targets.iter().copied())
                ),
            ));
        }
    }
    let languages = offer.languages();
    // A language no plugin compiles is one error, at its first stage.
    let mut unknown: Vec<String> = Vec::new();
    for stage in &mut program.stages {
        match &stage.language {
            Some(language) if unknown.contains(language) => {}
            Some(language) if !languages.contains(&language.as_str()) => {
                errors.push((
                    stage.language_place.clone(),
                    format!(
                        "no plugin compiles language '{language}' (the plugins found compile: {}){}",
                        listed(&languages),
                        suggest::did_you_mean(language, languages.iter().copied())
                    ),
                ));
                unknown.push(language.clone());
            }
            Some(_) => {}
            None => match offer.language_of(&stage.file) {
                Some(language) => stage.language = Some(language.to_owned()),
                None => errors.push((
                    stage.language_place.clone(),
                    format!(
                        "cannot tell the language of {} from its extension: add `language = \"…\"` (the plugins found compile: {})",
                        stage.file.display(),
                        listed(&languages)
                    ),
                )),
            },
        }
    }
    // A stage the target does not have (a mesh stage for OpenGL), once per
    // stage, naming the targets.
    if errors.is_empty() {
        for stage in &program.stages {
            let of_language = program.stages_of(stage.language());
            let refusing: Vec<(&str, &(String, CompilePair))> = program
                .targets
                .iter()
                .filter_map(|t| Some((t.name.as_str(), offer.compiler_for(stage.language(), &t.name, &of_language)?)))
                // No stages named: the pair leaves them to its build system, which the offer filled in.
                .filter(|(_, (_, pair))| !pair.stages.is_empty() && !pair.stages.contains(&stage.stage))
                .collect();
            if let Some((_, (compiler, pair))) = refusing.first() {
                let targets: Vec<&str> = refusing.iter().map(|(t, _)| *t).collect();
                let takes: Vec<&str> = pair.stages.iter().map(|s| s.name()).collect();
                errors.push((
                    stage.stage_place.clone(),
                    format!(
                        "the {} stage {} cannot be built for {}: {compiler} builds {} stages of {} there",
                        stage.stage.name(),
                        stage.file.display(),
                        targets.join(", "),
                        listed(&takes),
                        stage.language(),
                    ),
                ));
            }
        }
    }
    // Options are checked against the compilers of known targets and languages only.
    if errors.is_empty() {
        match resolve_options(program, offer) {
            Ok(options) => program.options = options,
            Err(refused) => errors.extend(refused),
        }
    }
    errors
}

/// A compiler chosen for a pair, with the pair as it declares it.
type Chosen = (String, CompilePair);

/// The program's options as each target's compile takes them: a target's
/// own options must be declared by its compiler; a program-wide option goes
/// to the targets whose compilers declare it (an optimisation level means
/// nothing to a compiler that runs on the device) and must be declared by
/// at least one. Every value is checked against the declarations that take
/// it. A value equal to the compiler's declared default is left out, so
/// that spelling out a default keeps the keys of leaving it out. Every
/// option refused is an error at its value.
fn resolve_options(program: &Program, offer: &PluginOffer) -> Result<Vec<ProgramOption>, Vec<(Place, String)>> {
    let (mut resolved, mut errors) = (Vec::new(), Vec::new());
    for option in &program.options {
        let targets: Vec<&str> = match &option.target {
            Some(target) => vec![target.as_str()],
            None => program.targets.iter().map(|t| t.name.as_str()).collect(),
        };
        // The compilers that were asked and do not know the option, each once.
        let mut refusals: Vec<(&Chosen, xr_host::OptionError)> = Vec::new();
        let (mut taken, mut bad_value) = (false, None);
        for target in targets {
            let compilers: Vec<&(String, CompilePair)> = program
                .stages
                .iter()
                .filter_map(|stage| offer.compiler_for(stage.language(), target, &program.stages_of(stage.language())))
                .collect();
            let checks: Vec<(&Chosen, Result<(), xr_host::OptionError>)> = compilers
                .iter()
                .map(|c| (*c, xr_host::check_option(&c.0, &c.1, &option.name, &option.value)))
                .collect();
            // A value a compiler refuses is wrong wherever the option goes.
            if let Some((compiler, Err(bad))) =
                checks.iter().find(|(_, c)| matches!(c, Err(xr_host::OptionError::BadValue { .. })))
            {
                bad_value = Some((*compiler, bad.clone()));
                break;
            }
            let mut unknown = checks.into_iter().filter_map(|(c, check)| check.err().map(|e| (c, e))).peekable();
            if unknown.peek().is_some() {
                for (compiler, error) in unknown {
                    if !refusals.iter().any(|(c, _)| c.0 == compiler.0 && c.1 == compiler.1) {
                        refusals.push((compiler, error));
                    }
                }
            } else if !compilers.is_empty() {
                taken = true;
                let is_default = compilers
                    .iter()
                    .all(|(_, pair)| pair.option(&option.name).is_some_and(|d| d.default == option.value));
                if !is_default {
                    resolved.push(ProgramOption { target: Some(target.to_owned()), ..option.clone() });
                }
            }
        }
        if let Some(((_, pair), error)) = bad_value {
            let values = pair.option(&option.name).map(|d| d.values.to_vec()).unwrap_or_default();
            let exact = values.iter().map(|v| v.pattern.as_str()).filter(|p| !p.contains('*'));
            errors.push((option.place.clone(), format!("{error}{}", suggest::did_you_mean(&option.value, exact))));
            continue;
        }
        // A target's own option must be taken there; a program-wide one somewhere.
        if refusals.is_empty() || (option.target.is_none() && taken) {
            continue;
        }
        let declared: Vec<&str> =
            refusals.iter().flat_map(|((_, pair), _)| pair.options.iter().map(|o| o.name.as_str())).collect();
        let hint = suggest::did_you_mean(&option.name, declared);
        let message = match refusals.as_slice() {
            [(_, only)] => format!("{only}{hint}"),
            // Each compiler asked, with what it takes.
            several => format!(
                "no compiler of program '{}' takes option '{}' ({}){hint}",
                program.name,
                option.name,
                several
                    .iter()
                    .map(|((compiler, pair), _)| {
                        let takes: Vec<String> = pair.options.iter().map(|o| o.usage()).collect();
                        let takes = if takes.is_empty() { "none".to_owned() } else { takes.join(", ") };
                        format!("{compiler} for {} → {} takes {takes}", pair.language, pair.target)
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
        };
        errors.push((option.place.clone(), message));
    }
    if errors.is_empty() { Ok(resolved) } else { Err(errors) }
}

fn listed(names: &[&str]) -> String {
    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
}

impl Manifest {
    /// Checks every program's targets and languages against what the
    /// plugins offer, and fills in the languages the manifest leaves to the
    /// file extension. A program naming a target or language no plugin
    /// offers is taken out of the manifest and returned with its errors,
    /// one each (at the name's line and column, listing what the plugins
    /// offer, with the closest as a "did you mean"), so that the other
    /// programs still build. A pair no plugin compiles (HLSL into
    /// a GLSL-only target) is left to the build, which reports it for each
    /// artifact of that program.
    pub fn check_plugins(&mut self, offer: &PluginOffer) -> Vec<(String, ManifestError)> {
        let mut refused = Vec::new();
        let path = self.path.clone();
        self.programs.retain_mut(|program| {
            let errors = check_program(program, offer);
            for (place, message) in &errors {
                let error = ManifestError {
                    file: path.clone(),
                    line: place.line,
                    column: place.column,
                    message: message.clone(),
                };
                refused.push((program.name.clone(), error));
            }
            errors.is_empty()
        });
        refused
    }

    /// Reads and checks the manifest at `path`.
    pub fn load(path: &Path) -> Result<Self, ManifestErrors> {
        let text = std::fs::read_to_string(path).map_err(|e| ManifestError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            message: format!("cannot read the manifest: {e}"),
        })?;
        Self::parse(path, &text)
    }

    /// Parses and checks manifest text read from `path` (files are resolved
    /// against its directory): the manifest, or every mistake in it.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ManifestErrors> {
        match Self::parse_partial(path, text) {
            (Some(manifest), errors) if errors.is_empty() => Ok(manifest),
            (_, errors) => Err(ManifestErrors(errors)),
        }
    }

    /// What [`Manifest::parse`] could read of `text` despite its mistakes
    /// (none after a syntax error), with every mistake: for checking the
    /// programs it read against the plugins too ([`Manifest::check_plugins`]),
    /// so that a misspelt target is reported in the same run as a misspelt key.
    pub fn parse_partial(path: &Path, text: &str) -> (Option<Self>, Vec<ManifestError>) {
        let locate = Locator::new(path, text);
        let (document, syntax) = DeTable::parse_recoverable(text);
        if !syntax.is_empty() {
            // What follows a syntax error is not what was meant: only those.
            for error in &syntax {
                locate.error(error.span().unwrap_or(0..0), error.message().trim());
            }
            return (None, locate.into_errors());
        }
        let document = Spanned::new(document.span(), DeValue::Table(document.into_inner()));
        let manifest = Table::of(&locate, &document, "a table").and_then(|top| read(&locate, &top, path));
        (manifest, locate.into_errors())
    }
}

/// The manifest of `top`, the document's table; its errors noted in `locate`.
fn read(locate: &Locator<'_>, top: &Table<'_, '_>, path: &Path) -> Option<Manifest> {
    top.known_keys(MANIFEST_KEYS);
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let store = top.get::<String>("store");
    let store =
        store.as_ref().map_or_else(|| dir.join("target/xr-store"), |s| crate::paths::lexical(&dir.join(s.get_ref())));
    let (mut axes, mut bad_axes) = (Vec::new(), Vec::new());
    for table in top.tables("axis", "tables ([[axis]])").map(|(_, t)| t).unwrap_or_default() {
        read_axis(locate, &table, &mut axes, &mut bad_axes);
    }
    let known = Known { axes: &axes, bad_axes: &bad_axes, dir: &dir };
    let mut programs: Vec<Program> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for table in top.tables("program", "tables ([[program]])").map(|(_, t)| t).unwrap_or_default() {
        if let Some(program) = read_program(locate, &table, &known, &mut names) {
            programs.push(program);
        }
    }
    let mut warnings = Vec::new();
    if names.is_empty() && locate.count() == 0 {
        warnings.push(ManifestWarning {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            message: "the manifest declares no programs: `xr build` builds nothing (add a [[program]])".to_owned(),
        });
    }
    Some(Manifest { path: path.to_path_buf(), store, programs, warnings })
}

/// Reads one `[[axis]]` into `axes`; the name of an axis that is declared
/// but wrong goes into `bad`, so that the programs naming it are not also
/// told it is unknown.
fn read_axis(locate: &Locator<'_>, table: &Table<'_, '_>, axes: &mut Vec<Axis>, bad: &mut Vec<String>) {
    table.known_keys(AXIS_KEYS);
    let errors_before = locate.count();
    let name = table.required::<String>("name");
    let kind = table.required::<String>("kind");
    let values = table.get::<Vec<String>>("values");
    let range = table.get::<Vec<i64>>("range");
    let Some(name) = name else { return };
    let text = name.get_ref().clone();
    check_identifier(locate, &name);
    if axes.iter().any(|a| a.name == text) || bad.contains(&text) {
        locate.error(name.span(), format!("axis '{text}' is declared twice"));
    }
    let axis_kind = kind.and_then(|kind| match kind.get_ref().as_str() {
        "bool" => Some(AxisKind::Bool),
        // Given, but not as strings: reported already.
        "enum" if values.is_none() && table.value("values").is_some() => None,
        "enum" => enum_values(locate, &text, &kind, values.as_ref()).map(AxisKind::Enum),
        "int" => match range.as_ref().map(|r| (r.get_ref().as_slice(), r.span())) {
            // Given, but not as integers: reported already.
            None if table.value("range").is_some() => None,
            None => {
                locate.error(kind.span(), format!("int axis '{text}' needs `range = [first, last]`"));
                None
            }
            Some((&[first, last], _)) if first <= last => Some(AxisKind::Int { first, last }),
            Some((&[_, _], span)) => {
                locate.error(span, format!("axis '{text}' has no values: its range is empty"));
                None
            }
            Some((_, span)) => {
                locate.error(span, "`range` takes two integers: [first, last]");
                None
            }
        },
        other => {
            let hint = suggest::did_you_mean(other, AXIS_KINDS.iter().copied());
            locate.error(kind.span(), format!("unknown axis kind '{other}' (bool, enum or int){hint}"));
            None
        }
    });
    match axis_kind {
        Some(kind) if locate.count() == errors_before => axes.push(Axis { name: text, kind }),
        _ => bad.push(text),
    }
}

/// The values of enum axis `name`, checked.
fn enum_values(
    locate: &Locator<'_>,
    name: &str,
    kind: &Spanned<String>,
    values: Option<&Spanned<Vec<String>>>,
) -> Option<Vec<String>> {
    let Some(values) = values else {
        locate.error(kind.span(), format!("enum axis '{name}' needs `values = [...]`"));
        return None;
    };
    if values.get_ref().is_empty() {
        locate.error(values.span(), format!("axis '{name}' has no values"));
        return None;
    }
    let errors_before = locate.count();
    for (i, value) in values.get_ref().iter().enumerate() {
        if !value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || value.is_empty() {
            locate.error(values.span(), format!("value '{value}' of axis '{name}' is not an identifier"));
        }
        if values.get_ref()[..i].contains(value) {
            locate.error(values.span(), format!("value '{value}' of axis '{name}' is listed twice"));
        }
    }
    (locate.count() == errors_before).then(|| values.get_ref().clone())
}

/// What the programs of a manifest are read against.
struct Known<'k> {
    /// The axes declared.
    axes: &'k [Axis],
    /// The names of axes declared with a mistake (reported already).
    bad_axes: &'k [String],
    /// The manifest's directory.
    dir: &'k Path,
}

/// Reads one `[[program]]`; `None` when it has a mistake (noted in
/// `locate`). `names` has the names of the programs before it.
fn read_program(
    locate: &Locator<'_>,
    table: &Table<'_, '_>,
    known: &Known<'_>,
    names: &mut Vec<String>,
) -> Option<Program> {
    table.known_keys(PROGRAM_KEYS);
    let errors_before = locate.count();
    let name = table.required::<String>("name");
    if let Some(name) = &name {
        if names.contains(name.get_ref()) {
            locate.error(name.span(), format!("program '{}' is declared twice", name.get_ref()));
        }
        names.push(name.get_ref().clone());
    }
    let label = name.as_ref().map_or_else(String::new, |n| n.get_ref().clone());

    // Its axes; `unknown`: names that are no axis (or a wrong one), which
    // its filters may name without a second error.
    let (mut program_axes, mut unknown) = (Vec::new(), Vec::new());
    for axis_name in table.get::<Vec<Spanned<String>>>("axes").map(Spanned::into_inner).unwrap_or_default() {
        match known.axes.iter().find(|a| &a.name == axis_name.get_ref()) {
            Some(axis) => program_axes.push(axis.clone()),
            None => {
                if !known.bad_axes.contains(axis_name.get_ref()) {
                    let names = known.axes.iter().map(|a| a.name.as_str());
                    let hint = suggest::did_you_mean(axis_name.get_ref(), names);
                    locate.error(axis_name.span(), format!("unknown axis '{}'{hint}", axis_name.get_ref()));
                }
                unknown.push(axis_name.get_ref().clone());
            }
        }
    }

    let targets = read_targets(locate, table, &label);
    let stages = read_stages(locate, table, known.dir, &label, name.as_ref().map(Spanned::span));
    let include_dirs = read_include_dirs(locate, table, known.dir);
    let overrides = read_overrides(locate, table, &program_axes);
    let mut exclude = Vec::new();
    for filter in table.get::<Vec<Spanned<String>>>("exclude").map(Spanned::into_inner).unwrap_or_default() {
        if let Some(clauses) = parse_filter(locate, &filter, &program_axes, &unknown) {
            exclude.push(clauses);
        }
    }
    let options = read_options(locate, table, &targets);
    let compile_timeout = table.get::<f64>("compile_timeout").and_then(|seconds| {
        let timeout = std::time::Duration::try_from_secs_f64(*seconds.get_ref()).ok().filter(|d| !d.is_zero());
        if timeout.is_none() {
            locate.error(seconds.span(), "compile_timeout is a number of seconds greater than 0");
        }
        timeout
    });
    if locate.count() != errors_before {
        return None;
    }
    Some(Program {
        compile_timeout,
        name: name?.into_inner(),
        options,
        axes: program_axes,
        targets,
        stages,
        include_dirs,
        overrides,
        exclude,
    })
}

fn read_targets(locate: &Locator<'_>, table: &Table<'_, '_>, program: &str) -> Vec<TargetRef> {
    let Some(listed) = table.required::<Vec<Spanned<String>>>("targets") else { return Vec::new() };
    let mut targets: Vec<TargetRef> = Vec::new();
    for target in listed.get_ref() {
        if targets.iter().any(|t| &t.name == target.get_ref()) {
            locate.error(target.span(), format!("target '{}' is listed twice", target.get_ref()));
            continue;
        }
        targets.push(TargetRef { name: target.get_ref().clone(), place: locate.place(target.span()) });
    }
    if targets.is_empty() {
        locate.error(listed.span(), format!("program '{program}' has no targets"));
    }
    targets
}

/// The stages of a program; a graphics program (one with a stage that is
/// not compute) without a vertex stage is an error at the program's name
/// (`name`), found here rather than when the program is first loaded.
fn read_stages(
    locate: &Locator<'_>,
    table: &Table<'_, '_>,
    dir: &Path,
    program: &str,
    name: Option<Range<usize>>,
) -> Vec<Stage> {
    let errors_before = locate.count();
    let Some((span, tables)) = table.tables("stages", "stage tables ({ stage = \"vertex\", file = \"…\" })") else {
        locate.error(table.span.clone(), "missing field `stages`");
        return Vec::new();
    };
    if tables.is_empty() && locate.count() == errors_before {
        locate.error(span, format!("program '{program}' has no stages"));
        return Vec::new();
    }
    let mut stages = Vec::new();
    // Where each stage read names its hit group (its table where it names none).
    let mut hit_group_spans = Vec::new();
    for stage_table in &tables {
        stage_table.known_keys(STAGE_KEYS);
        let stage = stage_table.required::<String>("stage").and_then(|stage| {
            let found = ShaderStage::from_name(stage.get_ref());
            if found.is_none() {
                let hint = suggest::did_you_mean(stage.get_ref(), ShaderStage::ALL.iter().map(|s| s.name()));
                locate.error(stage.span(), format!("unknown stage '{}'{hint}", stage.get_ref()));
            }
            found.map(|found| (found, locate.place(stage.span())))
        });
        let file = stage_table.required::<String>("file").and_then(|file| {
            let path = dir.join(file.get_ref());
            if path.is_file() {
                Some((path, file.span()))
            } else {
                locate.error(file.span(), format!("source file '{}' does not exist", path.display()));
                None
            }
        });
        let entry = stage_table.get::<String>("entry").map_or_else(|| "main".to_owned(), Spanned::into_inner);
        let language = stage_table.get::<String>("language");
        let hit_group = stage_table.get::<u32>("hit_group");
        if let (Some((stage, stage_place)), Some((file, file_span))) = (stage, file) {
            let language_place = locate.place(language.as_ref().map_or(file_span, Spanned::span));
            let language = language.map(Spanned::into_inner);
            hit_group_spans.push(hit_group.as_ref().map_or_else(|| stage_table.span.clone(), Spanned::span));
            let hit_group = hit_group.map(Spanned::into_inner);
            stages.push(Stage { stage, stage_place, file, entry, language, language_place, hit_group });
        }
    }
    if locate.count() == errors_before {
        // As the manifest writes them: the error is at its line.
        let named: Vec<String> =
            stages.iter().map(|s| s.file.strip_prefix(dir).unwrap_or(&s.file).display().to_string()).collect();
        let grouped: Vec<_> =
            stages.iter().zip(&named).map(|(s, name)| (s.stage, s.hit_group, name.as_str())).collect();
        if let Err(mistake) = xr_sourcebuild::hit_groups(&grouped) {
            locate.error(hit_group_spans[mistake.stage].clone(), format!("program '{program}': {mistake}"));
        }
    }
    let graphics: Vec<&str> =
        stages.iter().filter(|s| s.stage != ShaderStage::Compute).map(|s| s.stage.name()).collect();
    // Only when every stage was read: a misspelt `vertex` is its own error.
    // Mesh and ray tracing pipelines have no vertex stage.
    let other_pipeline = stages.iter().any(|s| {
        matches!(s.stage.pipeline_kind(), xr_sourcebuild::PipelineKind::Mesh | xr_sourcebuild::PipelineKind::RayTracing)
    });
    if locate.count() == errors_before
        && !graphics.is_empty()
        && !other_pipeline
        && !stages.iter().any(|s| s.stage == ShaderStage::Vertex)
    {
        locate.error(
            name.unwrap_or(span),
            format!(
                "program '{program}' has no vertex stage: a graphics program (its stages: {}) needs one, \
                 and a compute program has a compute stage alone",
                graphics.join(", ")
            ),
        );
    }
    stages
}

/// The include directories of a program, each of which must be a directory.
fn read_include_dirs(locate: &Locator<'_>, table: &Table<'_, '_>, dir: &Path) -> Vec<PathBuf> {
    let listed = table.get::<Vec<Spanned<String>>>("include").map(Spanned::into_inner).unwrap_or_default();
    let mut dirs = Vec::new();
    for include in listed {
        let path = dir.join(include.get_ref());
        if !path.is_dir() {
            let what = if path.exists() { "is not a directory" } else { "does not exist" };
            locate.error(include.span(), format!("include directory '{}' {what}", path.display()));
        }
        dirs.push(path);
    }
    dirs
}

fn read_overrides(locate: &Locator<'_>, table: &Table<'_, '_>, program_axes: &[Axis]) -> Vec<Override> {
    let mut overrides: Vec<Override> = Vec::new();
    let tables = table.tables("overrides", "override tables ({ name = \"…\", id = 0, default = 1.0 })");
    for raw in tables.map(|(_, t)| t).unwrap_or_default() {
        raw.known_keys(OVERRIDE_KEYS);
        let errors_before = locate.count();
        let name = raw.required::<String>("name");
        let id = raw.required::<u32>("id").map(Spanned::into_inner);
        let default = raw.required::<f64>("default").map(Spanned::into_inner);
        let kind = match raw.get::<String>("type").as_ref().map(|k| (k.get_ref().as_str(), k.span())) {
            None | Some(("float", _)) => Some(OverrideType::Float),
            Some(("int", _)) => Some(OverrideType::Int),
            Some(("uint", _)) => Some(OverrideType::Uint),
            Some(("bool", _)) => Some(OverrideType::Bool),
            Some((other, span)) => {
                let hint = suggest::did_you_mean(other, OVERRIDE_TYPES.iter().copied());
                locate.error(span, format!("unknown override type '{other}' (float, int, uint or bool){hint}"));
                None
            }
        };
        let Some(name) = name else { continue };
        check_identifier(locate, &name);
        if let Some(id) = id
            && let Some(other) = overrides.iter().find(|o| o.id == id || &o.name == name.get_ref())
        {
            locate.error(
                name.span(),
                format!(
                    "override '{}' (id {id}) clashes with override '{}' (id {})",
                    name.get_ref(),
                    other.name,
                    other.id
                ),
            );
        }
        if program_axes.iter().any(|a| &a.name == name.get_ref()) {
            locate.error(name.span(), format!("'{}' is both an axis and an override of this program", name.get_ref()));
        }
        if let (Some(id), Some(kind), Some(default), true) = (id, kind, default, locate.count() == errors_before) {
            overrides.push(Override { name: name.into_inner(), id, kind, default });
        }
    }
    overrides
}

/// The program's `options` and `target_options`; a target's options must
/// be for one of its targets (the compilers check the rest).
fn read_options(locate: &Locator<'_>, table: &Table<'_, '_>, targets: &[TargetRef]) -> Vec<ProgramOption> {
    let general = table.get::<BTreeMap<String, Spanned<String>>>("options").map(Spanned::into_inner);
    let mut options: Vec<ProgramOption> = general
        .unwrap_or_default()
        .into_iter()
        .map(|(name, value)| ProgramOption {
            name,
            place: locate.place(value.span()),
            value: value.into_inner(),
            target: None,
        })
        .collect();
    let own = table.get::<BTreeMap<String, BTreeMap<String, Spanned<String>>>>("target_options");
    for (target, given) in own.map(Spanned::into_inner).unwrap_or_default() {
        for (name, value) in given {
            if !targets.iter().any(|t| t.name == target) {
                let hint = suggest::did_you_mean(&target, targets.iter().map(|t| t.name.as_str()));
                locate.error(
                    value.span(),
                    format!("target_options names '{target}', which is not a target of this program{hint}"),
                );
            }
            options.push(ProgramOption {
                name,
                place: locate.place(value.span()),
                value: value.into_inner(),
                target: Some(target.clone()),
            });
        }
    }
    options
}

fn check_identifier(locate: &Locator<'_>, name: &Spanned<String>) {
    let text = name.get_ref();
    let ok = text.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        locate.error(name.span(), format!("'{text}' is not a valid define name"));
    }
}

/// The clauses of `filter`; `None` when it has a mistake (noted). A clause
/// naming one of `unknown` (axes the program names that are no axis,
/// reported already) is no second error.
fn parse_filter(
    locate: &Locator<'_>,
    filter: &Spanned<String>,
    axes: &[Axis],
    unknown: &[String],
) -> Option<Vec<Clause>> {
    let mut clauses = Vec::new();
    let errors_before = locate.count();
    for part in filter.get_ref().split("&&") {
        let part = part.trim();
        let Some(op) = ["==", "!=", "<=", ">=", "<", ">"].into_iter().find(|op| part.contains(op)) else {
            locate
                .error(filter.span(), format!("filter clause '{part}' is not `AXIS op VALUE` (==, !=, <, <=, >, >=)"));
            continue;
        };
        let (axis, value) = part.split_once(op).map(|(a, v)| (a.trim(), v.trim())).unwrap_or_default();
        let Some(declared) = axes.iter().find(|a| a.name == axis) else {
            if !unknown.iter().any(|u| u == axis) {
                let hint = suggest::did_you_mean(axis, axes.iter().map(|a| a.name.as_str()));
                locate
                    .error(filter.span(), format!("filter names '{axis}', which is not an axis of this program{hint}"));
            }
            continue;
        };
        let values = declared.values();
        if !values.iter().any(|v| v == value) && !matches!(declared.kind, AxisKind::Int { .. }) {
            let hint = suggest::did_you_mean(value, values.iter().map(String::as_str));
            locate.error(filter.span(), format!("'{value}' is not a value of axis '{axis}'{hint}"));
            continue;
        }
        if matches!(declared.kind, AxisKind::Int { .. }) && value.parse::<i64>().is_err() {
            locate.error(filter.span(), format!("'{value}' is not an integer (axis '{axis}')"));
            continue;
        }
        clauses.push(Clause { axis: axis.to_owned(), op: op.to_owned(), value: value.to_owned() });
    }
    (locate.count() == errors_before && unknown.is_empty()).then_some(clauses)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory with `a.vert`, `a.frag`, `a.comp` and `include/`, removed when dropped.
    fn sources() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in ["a.vert", "a.frag", "a.comp"] {
            std::fs::write(dir.path().join(file), "#version 450\nvoid main() {}\n").unwrap();
        }
        std::fs::create_dir(dir.path().join("include")).unwrap();
        dir
    }

    /// (line, column, message) of each error of `text`.
    fn errors(dir: &Path, text: &str) -> Vec<(usize, usize, String)> {
        let errors = Manifest::parse(&dir.join("xr.toml"), text).expect_err("mistakes");
        errors.iter().map(|e| (e.line, e.column, e.message.clone())).collect()
    }

    fn program(name: &str, body: &str) -> String {
        format!("[[program]]\nname = \"{name}\"\ntargets = [\"vk-spirv\"]\n{body}\n")
    }

    const VERTEX: &str = "stages = [{ stage = \"vertex\", file = \"a.vert\" }]";

    #[test]
    fn every_mistake_is_reported_in_one_reading_each_at_its_place_with_a_suggestion() {
        let dir = sources();
        let text = [
            "[[axis]]\nname = \"A\"\nkidn = \"bool\"\n",  // 1-3
            "[[axis]]\nname = \"B\"\nkind = \"boool\"\n", // 4-6
            &program("p", "includ = []\nstages = [{ stage = \"vertx\", file = \"a.vert\" }]"), // 7-11
            &program("q", &format!("axes = [\"A\", \"C\"]\n{VERTEX}")), // 12-16
        ]
        .concat();
        let found = errors(dir.path(), &text);
        assert_eq!(
            found,
            [
                (3, 1, "unknown field `kidn`; did you mean `kind`?".to_owned()),
                (6, 8, "unknown axis kind 'boool' (bool, enum or int); did you mean `bool`?".to_owned()),
                (10, 1, "unknown field `includ`; did you mean `include`?".to_owned()),
                (11, 21, "unknown stage 'vertx'; did you mean `vertex`?".to_owned()),
                (15, 14, "unknown axis 'C'".to_owned()),
            ],
            "axis 'A' is wrong but declared: no second error where q names it"
        );
        let shown = Manifest::parse(&dir.path().join("xr.toml"), &text).unwrap_err().to_string();
        assert_eq!(shown.lines().count(), 5, "one error a line: {shown}");
        assert!(shown.lines().all(|l| l.contains("xr.toml:") && l.contains(": error: ")), "{shown}");
    }

    #[test]
    fn a_misspelt_key_is_not_also_a_missing_one_and_a_wrong_type_is_one_error() {
        let dir = sources();
        assert_eq!(errors(dir.path(), "[[axis]]\nnaem = \"A\"\nkind = \"bool\"\n").len(), 1);
        let wrong = errors(dir.path(), "[[axis]]\nname = \"A\"\nkind = \"enum\"\nvalues = \"a b\"\n");
        assert_eq!(wrong.len(), 1, "{wrong:?}");
        assert!(wrong[0].2.starts_with("invalid type"), "{wrong:?}");
        let missing = errors(dir.path(), "[[program]]\nname = \"p\"\nstages = []\n");
        assert!(missing.iter().any(|(l, _, m)| *l == 1 && m == "missing field `targets`"), "{missing:?}");
    }

    #[test]
    fn an_include_directory_that_does_not_exist_is_an_error_at_its_line() {
        let dir = sources();
        std::fs::write(dir.path().join("file.txt"), "").unwrap();
        let text = program("p", &format!("include = [\"include\", \"gone\", \"file.txt\"]\n{VERTEX}"));
        let found = errors(dir.path(), &text);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].0, found[0].1), (4, 23));
        assert!(found[0].2.ends_with("gone' does not exist"), "{found:?}");
        assert!(found[1].2.ends_with("file.txt' is not a directory"), "{found:?}");
        let good = program("p", &format!("include = [\"include\"]\n{VERTEX}"));
        assert!(Manifest::parse(&dir.path().join("xr.toml"), &good).is_ok());
    }

    #[test]
    fn a_graphics_program_without_a_vertex_stage_is_an_error_at_the_program() {
        let dir = sources();
        let text = program("p", "stages = [{ stage = \"fragment\", file = \"a.frag\" }]");
        let found = errors(dir.path(), &text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].0, found[0].1), (2, 8), "at the program's name");
        assert!(found[0].2.starts_with("program 'p' has no vertex stage"), "{found:?}");
        assert!(found[0].2.contains("(its stages: fragment)"), "{found:?}");
        let parse = |stages: &str| Manifest::parse(&dir.path().join("xr.toml"), &program("p", stages));
        assert!(parse("stages = [{ stage = \"compute\", file = \"a.comp\" }]").is_ok(), "compute alone");
        let graphics =
            "stages = [{ stage = \"vertex\", file = \"a.vert\" }, { stage = \"fragment\", file = \"a.frag\" }]";
        assert!(parse(graphics).is_ok());
        assert!(parse(VERTEX).is_ok(), "a vertex stage alone (transform feedback, depth only)");
    }

    #[test]
    fn hit_groups_are_read_from_the_hit_stages_and_a_broken_rule_is_an_error_at_its_line() {
        let dir = sources();
        for file in ["a.rgen", "a.rchit", "b.rchit", "b.rahit"] {
            std::fs::write(dir.path().join(file), "#version 460\nvoid main() {}\n").unwrap();
        }
        let stages = |groups: [&str; 4]| {
            let files = ["ray-generation\", file = \"a.rgen", "closest-hit\", file = \"a.rchit"];
            let more = ["closest-hit\", file = \"b.rchit", "any-hit\", file = \"b.rahit"];
            let tables: Vec<String> = files
                .iter()
                .chain(&more)
                .zip(groups)
                .map(|(stage, group)| format!("    {{ stage = \"{stage}\"{group} }},\n"))
                .collect();
            program("p", &format!("stages = [\n{}]", tables.concat()))
        };
        let named = Manifest::parse(
            &dir.path().join("xr.toml"),
            &stages(["", ", hit_group = 1", ", hit_group = 0", ", hit_group = 0"]),
        );
        let named = named.unwrap_or_else(|e| panic!("{e}"));
        let groups: Vec<Option<u32>> = named.programs[0].stages.iter().map(|s| s.hit_group).collect();
        assert_eq!(groups, [None, Some(1), Some(0), Some(0)]);
        assert!(Manifest::parse(&dir.path().join("xr.toml"), &stages(["", "", "", ""])).is_ok(), "the default rule");

        let found = errors(dir.path(), &stages(["", ", hit_group = 0", ", hit_group = 1", ""]));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, 8, "the any-hit stage's table: {found:?}");
        assert!(
            found[0].2.starts_with(
                "program 'p': b.rahit: the any-hit stage names no hit group, while a.rchit names hit group 0"
            ),
            "{found:?}"
        );
        let found = errors(dir.path(), &stages([", hit_group = 0", "", "", ""]));
        assert_eq!((found[0].0, found[0].1), (5, 62), "at the key: {found:?}");
        assert!(found[0].2.contains("a.rgen: a ray-generation stage is in no hit group"), "{found:?}");
        let found = errors(dir.path(), &stages(["", ", hit_group = -1", "", ""]));
        assert_eq!(found.len(), 1, "{found:?}");
    }

    #[test]
    fn a_manifest_without_programs_warns() {
        let dir = sources();
        let manifest = Manifest::parse(&dir.path().join("xr.toml"), "store = \"store\"\n").unwrap();
        assert_eq!(manifest.warnings.len(), 1);
        assert!(manifest.warnings[0].to_string().contains("warning: the manifest declares no programs"));
        let with = Manifest::parse(&dir.path().join("xr.toml"), &program("p", VERTEX)).unwrap();
        assert!(with.warnings.is_empty());
    }

    #[test]
    fn targets_languages_and_option_values_the_plugins_do_not_offer_suggest_the_closest() {
        let dir = sources();
        let text = program(
            "p",
            "stages = [{ stage = \"vertex\", file = \"a.vert\", language = \"glls\" }]\n\
             options = { optimize = \"sise\" }",
        )
        .replace("\"vk-spirv\"", "\"vk-spriv\"");
        let mut manifest = Manifest::parse(&dir.path().join("xr.toml"), &text).unwrap();
        let optimize = xr_sourcebuild::OptionDecl::choice("optimize", &["none", "size"], "none", "level");
        let offer = PluginOffer {
            languages: vec![("glsl".into(), vec!["vert".into()])],
            pairs: vec![("glsl".into(), "vk-spirv".into())],
            compilers: vec![("c".into(), CompilePair::new("glsl", "vk-spirv").with_options([optimize]))],
        };
        let refused = manifest.check_plugins(&offer);
        let messages: Vec<&str> = refused.iter().map(|(_, e)| e.message.as_str()).collect();
        assert_eq!(messages.len(), 2, "both of the program's mistakes: {messages:?}");
        assert!(messages[0].ends_with("did you mean `vk-spirv`?"), "{messages:?}");
        assert!(messages[1].ends_with("did you mean `glsl`?"), "{messages:?}");
        // Once the names are right, the option's value.
        let fixed = text.replace("vk-spriv", "vk-spirv").replace("glls", "glsl");
        let mut manifest = Manifest::parse(&dir.path().join("xr.toml"), &fixed).unwrap();
        let refused = manifest.check_plugins(&offer);
        assert_eq!(refused.len(), 1);
        assert!(refused[0].1.message.ends_with("not optimize = 'sise'; did you mean `size`?"), "{refused:?}");
    }
    #[test]
    fn a_program_s_stages_go_to_the_first_compiler_of_the_pair_that_takes_them_all() {
        use xr_sourcebuild::ShaderStage::{ClosestHit, Fragment, RayGeneration, Vertex};
        let classic = CompilePair::new("hlsl", "vk-spirv").with_stages([Vertex, Fragment]);
        let every = CompilePair::new("hlsl", "vk-spirv").with_stages(ShaderStage::ALL.iter().copied());
        let offer = PluginOffer {
            languages: vec![("hlsl".into(), vec!["hlsl".into()])],
            pairs: vec![("hlsl".into(), "vk-spirv".into())],
            // The first by priority, then the others.
            compilers: vec![("glslang".into(), classic), ("slang".into(), every)],
        };
        let chosen = |stages: &[ShaderStage]| offer.compiler_for("hlsl", "vk-spirv", stages).map(|c| c.0.as_str());
        assert_eq!(chosen(&[Vertex, Fragment]), Some("glslang"), "both take it: the first");
        assert_eq!(chosen(&[RayGeneration, ClosestHit]), Some("slang"), "the one that has the stages");
        assert_eq!(offer.compiler_for("hlsl", "gl-spirv", &[Vertex]), None);
    }
}
