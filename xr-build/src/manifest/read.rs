//! Reading an `xr.toml`: every mistake found in one reading, each at its
//! file, line and column.

use super::{
    Axis, AxisKind, Clause, Manifest, ManifestError, ManifestWarning, Place, Program, ProgramOption, Stage, TargetRef,
};
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
use xr_sourcebuild::ShaderStage;
use xr_store::catalog::{Override, OverrideType};

/// What [`Manifest::parse`] could read of `text` despite its mistakes
/// (none after a syntax error), with every mistake.
pub(super) fn parse_partial(path: &Path, text: &str) -> (Option<Manifest>, Vec<ManifestError>) {
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
    "used",
];
const STAGE_KEYS: &[&str] = &["stage", "file", "entry", "language", "hit_group"];
const OVERRIDE_KEYS: &[&str] = &["name", "id", "type", "default"];
const AXIS_KINDS: &[&str] = &["bool", "enum", "int"];
const OVERRIDE_TYPES: &[&str] = &["float", "int", "uint", "bool"];

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
    let used = name.as_ref().and_then(|name| read_used(locate, table, known.dir, name.get_ref()));
    if locate.count() != errors_before {
        return None;
    }
    Some(Program {
        compile_timeout,
        used,
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

/// A program's own usage log: the variants of `program` it names. A log
/// that does not exist or cannot be read is an error at the key: a build
/// of none of the program's variants is not what was meant.
fn read_used(
    locate: &Locator<'_>,
    table: &Table<'_, '_>,
    dir: &Path,
    program: &str,
) -> Option<crate::used::ProgramUse> {
    let path = table.get::<String>("used")?;
    let log = crate::paths::lexical(&dir.join(path.get_ref()));
    match crate::used::UsedVariants::read([&log]) {
        Ok(used) => Some(crate::used::ProgramUse { variants: used.of_program(program), log }),
        Err(e) => {
            locate.error(path.span(), e.to_string());
            None
        }
    }
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
