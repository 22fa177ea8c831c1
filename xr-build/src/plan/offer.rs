//! What the plugins offer a manifest, as plain data: a plan is resolved
//! against it, so that the resolution is tested without loading a plugin.

use std::path::Path;
use xr_host::{Candidate, Registry, RegistryError};
use xr_sourcebuild::ShaderStage;

/// What the plugins found offer a manifest: languages with their file
/// extensions, and the build systems of each (language → target) pair
/// compiled offline.
#[derive(Clone, Debug, Default)]
pub struct PluginOffer {
    /// Language name → its file extensions, in load order.
    pub languages: Vec<(String, Vec<String>)>,
    /// Every build system of every pair, in load order.
    pub compilers: Vec<Candidate>,
}

impl PluginOffer {
    /// What the plugins of `registry` offer.
    pub fn of(registry: &Registry) -> Self {
        let mut languages = Vec::new();
        for (info, _) in registry.build_system_entries() {
            for language in info.languages.iter() {
                let extensions = language.extensions.iter().map(|e| e.to_string()).collect();
                languages.push((language.name.to_string(), extensions));
            }
        }
        Self { languages, compilers: registry.candidates() }
    }

    /// Every target some build system compiles, sorted.
    pub(crate) fn targets(&self) -> Vec<&str> {
        let mut targets: Vec<&str> = self.compilers.iter().map(|c| c.pair.target.as_str()).collect();
        targets.sort();
        targets.dedup();
        targets
    }

    /// Every language some build system accepts, sorted.
    pub fn languages(&self) -> Vec<&str> {
        let mut languages: Vec<&str> = self.languages.iter().map(|(l, _)| l.as_str()).collect();
        languages.sort();
        languages.dedup();
        languages
    }

    /// The build system that compiles a program's `stages` of `language`
    /// into `target`: the one rule, [`xr_host::choose`].
    pub fn compiler_for(
        &self,
        language: &str,
        target: &str,
        stages: &[ShaderStage],
    ) -> Result<&Candidate, RegistryError> {
        xr_host::choose(&self.compilers, language, target, stages)
    }

    /// The language of `file`, by its extension, as the plugins declare
    /// extensions (the first in load order wins).
    pub fn language_of(&self, file: &Path) -> Option<&str> {
        let extension = file.extension()?.to_str()?;
        self.languages.iter().find(|(_, extensions)| extensions.iter().any(|e| e == extension)).map(|(l, _)| l.as_str())
    }
}
