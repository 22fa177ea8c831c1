//! The one rule that chooses which build system compiles a program's
//! stages of one language into a target. Every front end reaches it
//! (through [`crate::Registry::offline_compiler_for`] or a build plan made
//! from [`crate::Registry::candidates`]), so that `xr build`, `xr compile`,
//! bindings and a farm's actions cannot pick two compilers for one program.
//!
//! The rule: among the build systems that declare the (language → target)
//! pair, those that compile every one of the program's stages of that
//! language there; where none takes them all, every one of the pair (the
//! chosen one's compile then refuses the stage it lacks, by name). Of
//! those, the highest priority wins; two at the same highest priority are
//! an error naming both, never a silent pick.

use crate::RegistryError;
use std::path::PathBuf;
use xr_sourcebuild::{BuildSystemInfo, CompilePair, ShaderStage};

/// A build system that compiles one (language → target) pair, with what the
/// choice weighs and what a build needs of the one chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The build system's name.
    pub name: String,
    /// Its priority: the higher wins.
    pub priority: i32,
    /// Its compiler identity, part of every key of what it builds.
    pub identity: String,
    /// The pair as it declares it, its stages filled in with the build
    /// system's where the pair names none.
    pub pair: CompilePair,
    /// The plugin file it came from (what a farm's action carries); empty
    /// for a candidate made by hand.
    pub plugin: PathBuf,
}

impl Candidate {
    /// The candidate of `info` for `pair`, loaded from `plugin`.
    pub fn of(info: &BuildSystemInfo, pair: &CompilePair, plugin: PathBuf) -> Self {
        let mut pair = pair.clone();
        if pair.stages.is_empty() {
            pair.stages = info.stages.clone();
        }
        Self {
            name: info.name.to_string(),
            priority: info.priority,
            identity: info.compiler_identity.to_string(),
            pair,
            plugin,
        }
    }

    /// Whether it compiles `language` into `target`.
    pub fn compiles(&self, language: &str, target: &str) -> bool {
        self.pair.language == language && self.pair.target == target
    }

    /// Whether it compiles every one of `stages` (a pair that names no
    /// stages, of a build system that names none, refuses none).
    pub fn takes(&self, stages: &[ShaderStage]) -> bool {
        self.pair.stages.is_empty() || stages.iter().all(|s| self.pair.stages.contains(s))
    }
}

/// The build system, among `candidates`, that compiles the program's
/// `stages` of `language` into `target` (see the module documentation).
pub fn choose<'c>(
    candidates: &'c [Candidate],
    language: &str,
    target: &str,
    stages: &[ShaderStage],
) -> Result<&'c Candidate, RegistryError> {
    let pair: Vec<&Candidate> = candidates.iter().filter(|c| c.compiles(language, target)).collect();
    let taking: Vec<&Candidate> = pair.iter().copied().filter(|c| c.takes(stages)).collect();
    let mut found = if taking.is_empty() { pair } else { taking };
    // Stable: of one priority, the first loaded comes first in the error.
    found.sort_by_key(|c| std::cmp::Reverse(c.priority));
    match found.as_slice() {
        [] => Err(RegistryError::NoCompiler {
            language: language.to_owned(),
            target: target.to_owned(),
            offered: offered(candidates),
        }),
        [first, second, ..] if first.priority == second.priority => Err(RegistryError::AmbiguousCompiler {
            language: language.to_owned(),
            target: target.to_owned(),
            first: first.name.clone(),
            second: second.name.clone(),
            priority: first.priority,
        }),
        [first, rest @ ..] => {
            for other in rest {
                tracing::info!(
                    "{language} → {target}: {} (priority {}) is used, not {} (priority {})",
                    first.name,
                    first.priority,
                    other.name,
                    other.priority
                );
            }
            Ok(first)
        }
    }
}

/// Every pair of `candidates` as text, sorted, each once.
fn offered(candidates: &[Candidate]) -> String {
    let mut pairs: Vec<String> =
        candidates.iter().map(|c| format!("{} → {}", c.pair.language, c.pair.target)).collect();
    pairs.sort();
    pairs.dedup();
    pairs.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ShaderStage::{ClosestHit, Fragment, RayGeneration, Vertex};

    fn candidate(name: &str, priority: i32, stages: &[ShaderStage]) -> Candidate {
        let mut pair = CompilePair::new("hlsl", "vk-spirv");
        pair.stages = stages.to_vec().into();
        Candidate { name: name.into(), priority, identity: format!("{name}/1"), pair, plugin: PathBuf::new() }
    }

    #[test]
    fn the_stages_decide_before_the_priority_and_the_priority_among_those_that_take_them() {
        let raster = candidate("glslang", 10, &[Vertex, Fragment]);
        let tracing = candidate("slang", 5, &[Vertex, Fragment, RayGeneration, ClosestHit]);
        let candidates = [raster, tracing];
        let chosen = |stages: &[ShaderStage]| choose(&candidates, "hlsl", "vk-spirv", stages).map(|c| c.name.clone());
        assert_eq!(chosen(&[Vertex, Fragment]).unwrap(), "glslang", "both take them: the higher priority");
        assert_eq!(chosen(&[RayGeneration, ClosestHit]).unwrap(), "slang", "only one takes them");
        assert_eq!(chosen(&[]).unwrap(), "glslang", "no stages named: by priority");
    }

    #[test]
    fn none_taking_every_stage_leaves_the_choice_to_priority_and_a_tie_is_an_error() {
        let candidates = [candidate("a", 1, &[Vertex]), candidate("b", 2, &[Fragment])];
        let chosen = choose(&candidates, "hlsl", "vk-spirv", &[Vertex, Fragment]).unwrap();
        assert_eq!(chosen.name, "b", "its compile refuses the stage it lacks, by name");
        let tie = [candidate("a", 3, &[Vertex]), candidate("b", 3, &[Vertex])];
        let error = choose(&tie, "hlsl", "vk-spirv", &[Vertex]).unwrap_err().to_string();
        assert!(error.contains("a and b") && error.contains("priority 3"), "{error}");
        let error = choose(&tie, "glsl", "vk-spirv", &[Vertex]).unwrap_err().to_string();
        assert!(
            error.contains("no plugin compiles glsl into vk-spirv") && error.contains("hlsl → vk-spirv"),
            "{error}"
        );
    }
}
