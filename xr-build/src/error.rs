//! Why part of a build failed, typed by the operation that failed (as a
//! graphics abstraction gives each operation its own error enum): choosing
//! a compiler, reading the sources, placing the compile, the compile
//! itself, storing the object, making it durable, writing a catalog.
//!
//! A failure the compiler located keeps its diagnostics with file and
//! line; every other one is a variant here, never a diagnostic with an
//! empty file. The report (`crate::report`) is where both become lines for
//! a person. A cause is written into its error's message, so it is not
//! also a `source` (a report that prints the chain would say it twice).

use crate::{matrix::DuplicateVariant, plan::PlanError, recipe::UnreadableSource};
use std::{path::PathBuf, sync::Arc};
use xr_sourcebuild::{Diagnostic, Severity};
use xr_store::{ObjectKey, StoreError};

/// Why one artifact, a (variant, target), did not build.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ArtifactError {
    /// The compiler failed and said where: its diagnostics, at least one of
    /// them an error with a file.
    #[error("{}", first_error(.0))]
    Diagnosed(Vec<Diagnostic>),
    /// The compiler failed and gave no place for it (an entry point it
    /// cannot find, a link error), with the diagnostics it did give.
    #[error("{message}")]
    Compiler {
        /// The compiler's message, without the variant's name (so the same
        /// failure of every variant folds into one report).
        message: String,
        /// Its other diagnostics (warnings, notes), with their places.
        diagnostics: Vec<Diagnostic>,
    },
    /// No compiler builds it: the plan's reason.
    #[error(transparent)]
    NoCompiler(#[from] PlanError),
    /// A stage's source could not be read.
    #[error(transparent)]
    Unreadable(Arc<UnreadableSource>),
    /// Its object could not be written into the store.
    #[error("cannot write its object into the store {}: {cause}", store.display())]
    NotStored {
        /// The store's directory.
        store: PathBuf,
        /// The store's error.
        cause: Arc<StoreError>,
    },
    /// Its object was removed from the store after it was found or
    /// written, before the catalog named it.
    #[error("its object {} was removed from the store while the build ran", object.hex())]
    Removed {
        /// The object.
        object: ObjectKey,
    },
}

impl ArtifactError {
    /// The compiler's diagnostics that have a place (none for a failure
    /// that is not the compiler's).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Self::Diagnosed(diagnostics) | Self::Compiler { diagnostics, .. } => diagnostics,
            _ => &[],
        }
    }

    /// The failure without a place, when it has one: every failure but the
    /// compiler's located errors.
    pub fn unplaced(&self) -> Option<String> {
        match self {
            Self::Diagnosed(_) => None,
            other => Some(other.to_string()),
        }
    }

    /// The compiler's diagnostics, to rename their files; none for a
    /// failure that is not the compiler's.
    pub fn diagnostics_mut(&mut self) -> Option<&mut Vec<Diagnostic>> {
        match self {
            Self::Diagnosed(diagnostics) | Self::Compiler { diagnostics, .. } => Some(diagnostics),
            _ => None,
        }
    }

    /// The failure of a compile that ended with `message` and
    /// `diagnostics`: `Diagnosed` when one of them is an error, else the
    /// compiler's message (with `variant`'s name taken out of it).
    pub fn of_compile(message: &str, diagnostics: &[Diagnostic], variant: &str) -> Self {
        if diagnostics.iter().any(|d| d.severity == Severity::Error) {
            return Self::Diagnosed(diagnostics.to_vec());
        }
        let message = message.replace(&format!("program '{variant}': "), "");
        Self::Compiler { message: message.trim_end().to_owned(), diagnostics: diagnostics.to_vec() }
    }
}

impl From<UnreadableSource> for ArtifactError {
    fn from(error: UnreadableSource) -> Self {
        Self::Unreadable(Arc::new(error))
    }
}

fn first_error(diagnostics: &[Diagnostic]) -> String {
    diagnostics.iter().find(|d| d.severity == Severity::Error).map(Diagnostic::to_string).unwrap_or_default()
}

/// Why the written objects could not be made durable: no entry of them is
/// journalled and no catalog names them.
#[derive(Clone, Debug, thiserror::Error)]
pub enum NotDurable {
    /// The store's sync failed.
    #[error("cannot make the written objects durable: {0}")]
    Sync(Arc<StoreError>),
    /// The thread that syncs the store panicked.
    #[error("the thread syncing the store panicked")]
    SyncerPanicked,
}

/// Why part of a build failed: one artifact, or something that is no
/// artifact's.
#[derive(Clone, Debug, thiserror::Error)]
pub enum FailureError {
    /// One (variant, target).
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    /// A program's matrix names one variant twice.
    #[error(transparent)]
    Variants(#[from] DuplicateVariant),
    /// The store's sync failed.
    #[error(transparent)]
    NotDurable(#[from] NotDurable),
    /// A program's catalog could not be written.
    #[error("cannot write the catalog of program '{program}': {cause}")]
    Catalog {
        /// The program.
        program: String,
        /// The file system's error.
        cause: Arc<std::io::Error>,
    },
}

impl FailureError {
    /// The compiler's diagnostics that have a place.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Self::Artifact(error) => error.diagnostics(),
            _ => &[],
        }
    }

    /// The failure without a place, when it has one.
    pub fn unplaced(&self) -> Option<String> {
        match self {
            Self::Artifact(error) => error.unplaced(),
            other => Some(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compile_failure_without_a_place_folds_across_variants() {
        let a = ArtifactError::of_compile("program 'p[A=0]': entry point 'main' not found", &[], "p[A=0]");
        let b = ArtifactError::of_compile("program 'p[A=1]': entry point 'main' not found", &[], "p[A=1]");
        assert_eq!(a.unplaced(), b.unplaced());
        assert_eq!(a.unplaced().as_deref(), Some("entry point 'main' not found"));
        assert!(a.diagnostics().is_empty());
    }

    #[test]
    fn a_located_error_keeps_its_file_and_line() {
        let located = [Diagnostic::error("a.frag", 3, "bad"), Diagnostic::new(Severity::Warning, "b.glsl", 1, 0, "w")];
        let error = ArtifactError::of_compile("whatever", &located, "p");
        assert!(matches!(&error, ArtifactError::Diagnosed(d) if d == &located.to_vec()));
        assert_eq!(error.unplaced(), None);
        assert_eq!(error.to_string(), "a.frag:3: error: bad");
    }

    #[test]
    fn a_warning_alone_does_not_place_the_failure() {
        let warning = [Diagnostic::new(Severity::Warning, "b.glsl", 1, 0, "w")];
        let error = ArtifactError::of_compile("link failed", &warning, "p");
        assert_eq!(error.unplaced().as_deref(), Some("link failed"));
        assert_eq!(error.diagnostics(), &warning);
    }
}
