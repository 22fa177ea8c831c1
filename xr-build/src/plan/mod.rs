//! The build plan: a manifest resolved once against the plugins. For every
//! (program, target) it holds the compiler chosen, every stage's language
//! and the options that compile takes. `xr build`, `xr bindgen`, a build
//! script, hot reload and a farm's actions all take the plan, and none of
//! them chooses a compiler again, so they cannot disagree on who builds a
//! program (bindings reflected through another compiler than the one that
//! built the objects are the bindings of other objects).
//!
//! A [`Manifest`] is what was written; a [`BuildPlan`] is what was
//! decided, in two types as a command line's input and its resolved
//! decisions are. Only a [`PlannedProgram`] knows its stages' languages:
//! no code can reach a program whose languages are not decided yet.

pub mod command_line;
mod offer;
mod options;
#[cfg(test)]
mod tests;

pub use offer::PluginOffer;

use crate::manifest::{Manifest, ManifestError, ManifestWarning, Place, Program, Stage};
use crate::suggest;
use std::path::{Path, PathBuf};
use xr_host::{Candidate, Registry, RegistryError};
use xr_sourcebuild::{ShaderStage, SourceBuildSystemBox, SourceReach};

/// Why no compiler builds one (program, target).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// No build system compiles a stage language into the target, or two
    /// tie (the registry's message, which lists what the plugins offer).
    #[error("{message}")]
    NoCompiler {
        /// The language.
        language: String,
        /// The target.
        target: String,
        /// Why, as the choice says it.
        message: String,
    },
    /// The program's languages go to different build systems.
    #[error(
        "program '{program}' mixes languages that no one build system compiles into {target}: {first} and {second} are needed"
    )]
    MixedLanguages {
        /// The program.
        program: String,
        /// The target.
        target: String,
        /// One build system needed.
        first: String,
        /// Another.
        second: String,
    },
    /// The program has no stages.
    #[error("program '{program}' has no stages")]
    NoStages {
        /// The program.
        program: String,
    },
    /// The plan's build system is not in the registry at hand (a plan
    /// resolved against other plugins).
    #[error("the plan's build system {name} is not among the plugins loaded")]
    NotLoaded {
        /// The build system.
        name: String,
    },
    /// The program is not built for the target.
    #[error("program '{program}' is not built for {target}")]
    NotATarget {
        /// The program.
        program: String,
        /// The target.
        target: String,
    },
}

/// The build system chosen for a (program, target).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    /// The build system's name.
    pub name: String,
    /// Its compiler identity, in every key of what it builds.
    pub identity: String,
    /// The plugin file it came from (what a farm's action carries).
    pub plugin: PathBuf,
    /// How a compile of each of the program's languages reaches files
    /// besides its stage's, as the pair it compiles declares it: what a
    /// farm's action carries (docs/REMOTE.md).
    pub reach: Vec<(String, SourceReach)>,
}

impl Chosen {
    /// How a compile of a stage in `language` reaches other files
    /// ([`SourceReach::UNKNOWN`] for a language the program has not).
    pub fn reach_of(&self, language: &str) -> SourceReach {
        reach_of(&self.reach, language)
    }
}

/// How a stage in `language` reaches other files, in `reach` (a
/// [`Chosen::reach`]); [`SourceReach::UNKNOWN`] where it is not named.
pub(crate) fn reach_of(reach: &[(String, SourceReach)], language: &str) -> SourceReach {
    reach.iter().find(|(l, _)| l == language).map_or(SourceReach::UNKNOWN, |(_, r)| *r)
}

/// One target of a planned program.
#[derive(Clone, Debug)]
pub struct PlannedTarget {
    /// The target's name.
    pub name: String,
    /// Its compiler, or why none builds it (each of its artifacts fails with it).
    pub compiler: Result<Chosen, PlanError>,
    /// The options its compile takes, by name, sorted.
    pub options: Vec<(String, String)>,
}

/// A program with every decision made: its stages' languages, and each
/// target's compiler and options. It reads as its [`Program`].
#[derive(Clone, Debug)]
pub struct PlannedProgram {
    program: Program,
    /// One per stage, in the stages' order.
    languages: Vec<String>,
    targets: Vec<PlannedTarget>,
    /// The build system that preprocesses its language for a guarded
    /// source ([`preprocessed_target`]), or why none does.
    preprocessor: Result<Chosen, PlanError>,
}

/// A stage with its language decided.
#[derive(Clone, Copy, Debug)]
pub struct PlannedStage<'p> {
    /// The stage as the manifest gives it.
    pub stage: &'p Stage,
    /// Its language.
    pub language: &'p str,
}

impl std::ops::Deref for PlannedProgram {
    type Target = Program;
    fn deref(&self) -> &Program {
        &self.program
    }
}

impl PlannedProgram {
    /// Its stages, each with its language.
    pub fn stages(&self) -> impl Iterator<Item = PlannedStage<'_>> {
        self.program.stages.iter().zip(&self.languages).map(|(stage, language)| PlannedStage { stage, language })
    }

    /// The language of its stages when they share one.
    pub fn language(&self) -> Option<&str> {
        let first = self.languages.first()?;
        self.languages.iter().all(|l| l == first).then_some(first.as_str())
    }

    /// Its targets as planned.
    pub fn targets(&self) -> &[PlannedTarget] {
        &self.targets
    }

    /// The plan of `target`.
    pub fn target(&self, target: &str) -> Result<&PlannedTarget, PlanError> {
        self.targets
            .iter()
            .find(|t| t.name == target)
            .ok_or_else(|| PlanError::NotATarget { program: self.program.name.clone(), target: target.to_owned() })
    }

    /// The compiler of `target`, or why none builds it.
    pub fn compiler(&self, target: &str) -> Result<&Chosen, PlanError> {
        self.target(target)?.compiler.as_ref().map_err(Clone::clone)
    }

    /// The compiler of `target` as loaded in `registry`, the registry the
    /// plan was resolved against.
    pub fn system<'r>(
        &'r self,
        registry: &'r Registry,
        target: &str,
    ) -> Result<(&'r Chosen, &'r SourceBuildSystemBox), PlanError> {
        let chosen = self.compiler(target)?;
        let system = registry
            .build_system_named(&chosen.name)
            .ok_or_else(|| PlanError::NotLoaded { name: chosen.name.clone() })?;
        Ok((chosen, system))
    }

    /// The options of the compile for `target`, by name, sorted.
    pub fn options_for(&self, target: &str) -> &[(String, String)] {
        self.target(target).map_or(&[], |t| t.options.as_slice())
    }

    /// The build system that preprocesses the program's language for a
    /// guarded source, as loaded in `registry`: chosen with the plan, by
    /// the one rule, like every compiler of the program.
    pub fn preprocessor<'r>(
        &'r self,
        registry: &'r Registry,
    ) -> Result<(&'r Chosen, &'r SourceBuildSystemBox), PlanError> {
        let chosen = self.preprocessor.as_ref().map_err(Clone::clone)?;
        let system = registry
            .build_system_named(&chosen.name)
            .ok_or_else(|| PlanError::NotLoaded { name: chosen.name.clone() })?;
        Ok((chosen, system))
    }
}

/// The target whose stage outputs are `language` sources preprocessed as a
/// driver sees them (`glsl` → `glsl-preprocessed`): what a build system
/// offers to make guarded sources of its language.
pub fn preprocessed_target(language: &str) -> String {
    format!("{language}-preprocessed")
}

/// A manifest resolved against the plugins (see the module documentation).
#[derive(Clone, Debug)]
pub struct BuildPlan {
    /// The manifest file.
    pub path: PathBuf,
    /// The store directory.
    pub store: PathBuf,
    /// The programs that can be built, in the manifest's order.
    pub programs: Vec<PlannedProgram>,
    /// The manifest's warnings.
    pub warnings: Vec<ManifestWarning>,
    /// Programs refused for naming what no plugin offers, each with one
    /// error per mistake, at its place: they fail alone.
    pub refused: Vec<(String, ManifestError)>,
}

impl BuildPlan {
    /// Resolves `manifest` against what the plugins of `registry` offer.
    pub fn new(manifest: Manifest, registry: &Registry) -> Self {
        Self::resolve(manifest, &PluginOffer::of(registry))
    }

    /// Resolves `manifest` against `offer`: every stage's language (from
    /// its file's extension where the manifest does not name it), every
    /// (program, target)'s compiler, and the options each compile takes. A
    /// program naming a target, language, stage or option no plugin offers
    /// is refused with one error per mistake (at its line and column,
    /// listing what the plugins offer, with the closest as a "did you
    /// mean"), so that the other programs still build. A target whose
    /// compiler cannot be chosen (HLSL into a GLSL-only target) is planned
    /// with the reason, which each of its artifacts fails with.
    pub fn resolve(manifest: Manifest, offer: &PluginOffer) -> Self {
        let Manifest { path, store, programs, warnings } = manifest;
        let mut planned = Vec::new();
        let mut refused = Vec::new();
        for program in programs {
            let name = program.name.clone();
            match plan_program(program, offer) {
                Ok(program) => planned.push(program),
                Err(errors) => refused.extend(errors.into_iter().map(|(place, message)| {
                    let error = ManifestError { file: path.clone(), line: place.line, column: place.column, message };
                    (name.clone(), error)
                })),
            }
        }
        Self { path, store, programs: planned, warnings, refused }
    }

    /// The planned program called `name`.
    pub fn program(&self, name: &str) -> Option<&PlannedProgram> {
        self.programs.iter().find(|p| p.name == name)
    }

    /// The compiler of (program, target), or why none builds it.
    pub fn compiler(&self, program: &str, target: &str) -> Result<&Chosen, PlanError> {
        match self.program(program) {
            Some(planned) => planned.compiler(target),
            None => Err(PlanError::NotATarget { program: program.to_owned(), target: target.to_owned() }),
        }
    }

    /// The manifest's directory, which the plan's paths are relative to.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }
}

/// The plan of `program`, or every mistake it makes against `offer`.
fn plan_program(mut program: Program, offer: &PluginOffer) -> Result<PlannedProgram, Vec<(Place, String)>> {
    let mut errors = unknown_targets(&program, offer);
    let languages = stage_languages(&program, offer, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    // The one choice per (language, target): the stage checks, the options
    // and the targets' compilers all read it.
    let mut choices: Vec<(&str, &str, Result<&Candidate, RegistryError>)> = Vec::new();
    for target in &program.targets {
        for language in distinct(&languages) {
            let stages = stages_of(&program, &languages, language);
            choices.push((language, target.name.as_str(), offer.compiler_for(language, &target.name, &stages)));
        }
    }
    let chosen = |language: &str, target: &str| {
        choices.iter().find(|(l, t, _)| *l == language && *t == target).and_then(|(_, _, c)| c.as_ref().ok()).copied()
    };
    errors.extend(stages_refused(&program, &languages, &chosen));
    if !errors.is_empty() {
        return Err(errors);
    }
    let language_refs: Vec<&str> = languages.iter().map(String::as_str).collect();
    program.options = options::resolve_options(&program, &language_refs, &chosen)?;
    let targets = program
        .targets
        .iter()
        .map(|target| PlannedTarget {
            name: target.name.clone(),
            compiler: target_compiler(&program, &languages, &target.name, &choices),
            options: options_for(&program, &target.name),
        })
        .collect();
    let preprocessor = preprocessor_of(&program, &languages, offer);
    Ok(PlannedProgram { program, languages, targets, preprocessor })
}

/// The build system that compiles the program's one language into its
/// [`preprocessed_target`], taking every stage of the program.
fn preprocessor_of(program: &Program, languages: &[String], offer: &PluginOffer) -> Result<Chosen, PlanError> {
    let language = languages.first().ok_or_else(|| PlanError::NoStages { program: program.name.clone() })?;
    let target = preprocessed_target(language);
    let stages = stages_of(program, languages, language);
    offer
        .compiler_for(language, &target, &stages)
        .map(|c| Chosen {
            name: c.name.clone(),
            identity: c.identity.clone(),
            plugin: c.plugin.clone(),
            reach: vec![(language.clone(), c.pair.reach)],
        })
        .map_err(|e| PlanError::NoCompiler { language: language.clone(), target, message: e.to_string() })
}

/// The targets of `program` no plugin builds, each an error at its name.
fn unknown_targets(program: &Program, offer: &PluginOffer) -> Vec<(Place, String)> {
    let targets = offer.targets();
    program
        .targets
        .iter()
        .filter(|target| !targets.contains(&target.name.as_str()))
        .map(|target| {
            let message = format!(
                "no plugin builds target '{}' (the plugins found build: {}){}",
                target.name,
                listed(&targets),
                suggest::did_you_mean(&target.name, targets.iter().copied())
            );
            (target.place.clone(), message)
        })
        .collect()
}

/// Each stage's language: as the manifest names it, else by its file's
/// extension. A language no plugin compiles is one error, at its first stage.
fn stage_languages(program: &Program, offer: &PluginOffer, errors: &mut Vec<(Place, String)>) -> Vec<String> {
    let known = offer.languages();
    let mut unknown: Vec<&str> = Vec::new();
    let mut languages = Vec::new();
    for stage in &program.stages {
        match &stage.language {
            Some(language) if !known.contains(&language.as_str()) && !unknown.contains(&language.as_str()) => {
                errors.push((
                    stage.language_place.clone(),
                    format!(
                        "no plugin compiles language '{language}' (the plugins found compile: {}){}",
                        listed(&known),
                        suggest::did_you_mean(language, known.iter().copied())
                    ),
                ));
                unknown.push(language);
            }
            Some(_) => {}
            None if offer.language_of(&stage.file).is_none() => errors.push((
                stage.language_place.clone(),
                format!(
                    "cannot tell the language of {} from its extension: add `language = \"…\"` (the plugins found compile: {})",
                    stage.file.display(),
                    listed(&known)
                ),
            )),
            None => {}
        }
        let language = stage.language.as_deref().or_else(|| offer.language_of(&stage.file)).unwrap_or_default();
        languages.push(language.to_owned());
    }
    languages
}

/// A stage no target's compiler has (a mesh stage for OpenGL), once per
/// stage, naming the targets.
fn stages_refused<'c>(
    program: &Program,
    languages: &[String],
    chosen: &dyn Fn(&str, &str) -> Option<&'c Candidate>,
) -> Vec<(Place, String)> {
    let mut errors = Vec::new();
    for (stage, language) in program.stages.iter().zip(languages) {
        let refusing: Vec<(&str, &Candidate)> = program
            .targets
            .iter()
            .filter_map(|t| Some((t.name.as_str(), chosen(language, &t.name)?)))
            .filter(|(_, c)| !c.pair.stages.is_empty() && !c.pair.stages.contains(&stage.stage))
            .collect();
        if let Some((_, compiler)) = refusing.first() {
            let targets: Vec<&str> = refusing.iter().map(|(t, _)| *t).collect();
            let takes: Vec<&str> = compiler.pair.stages.iter().map(|s| s.name()).collect();
            errors.push((
                stage.stage_place.clone(),
                format!(
                    "the {} stage {} cannot be built for {}: {} builds {} stages of {language} there",
                    stage.stage.name(),
                    stage.file.display(),
                    targets.join(", "),
                    compiler.name,
                    listed(&takes),
                ),
            ));
        }
    }
    errors
}

/// The one build system of every language of `program` into `target`.
fn target_compiler(
    program: &Program,
    languages: &[String],
    target: &str,
    choices: &[(&str, &str, Result<&Candidate, RegistryError>)],
) -> Result<Chosen, PlanError> {
    let mut chosen: Option<&Candidate> = None;
    let mut reach = Vec::new();
    for language in distinct(languages) {
        let choice = choices.iter().find(|(l, t, _)| *l == language && *t == target).map(|(_, _, c)| c);
        let candidate = match choice {
            Some(Ok(candidate)) => *candidate,
            Some(Err(e)) => {
                return Err(PlanError::NoCompiler {
                    language: language.to_owned(),
                    target: target.to_owned(),
                    message: e.to_string(),
                });
            }
            None => continue,
        };
        match chosen {
            Some(first) if first.name != candidate.name => {
                return Err(PlanError::MixedLanguages {
                    program: program.name.clone(),
                    target: target.to_owned(),
                    first: first.name.clone(),
                    second: candidate.name.clone(),
                });
            }
            _ => chosen = Some(candidate),
        }
        reach.push((language.to_owned(), candidate.pair.reach));
    }
    let chosen = chosen.ok_or_else(|| PlanError::NoStages { program: program.name.clone() })?;
    Ok(Chosen { name: chosen.name.clone(), identity: chosen.identity.clone(), plugin: chosen.plugin.clone(), reach })
}

/// The options of the compile for `target`, by name: the program's, then
/// the target's own, which win.
fn options_for(program: &Program, target: &str) -> Vec<(String, String)> {
    let mut options: Vec<(String, String)> = Vec::new();
    let general = program.options.iter().filter(|o| o.target.is_none());
    let own = program.options.iter().filter(|o| o.target.as_deref() == Some(target));
    for option in general.chain(own) {
        options.retain(|(name, _)| *name != option.name);
        options.push((option.name.clone(), option.value.clone()));
    }
    options.sort();
    options
}

/// The stages of `program` in `language`.
fn stages_of(program: &Program, languages: &[String], language: &str) -> Vec<ShaderStage> {
    program.stages.iter().zip(languages).filter(|(_, l)| *l == language).map(|(s, _)| s.stage).collect()
}

/// Each language of `languages` once, in order.
fn distinct(languages: &[String]) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for language in languages {
        if !seen.contains(&language.as_str()) {
            seen.push(language);
        }
    }
    seen
}

fn listed(names: &[&str]) -> String {
    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
}
