//! The chain's top: the store's journal. An artifact whose journal entry
//! still holds (every file it read unchanged, its object whole) is reused;
//! what the layers below make is written into the store, and its entry
//! journalled once the object is durable (`crate::durable`).

use super::{Execute, Execution, Inputs, Job, Made};
use crate::{
    durable::Batcher,
    error::ArtifactError,
    journal::{Entry, Journal},
    summary::Outcome,
};
use xr_sourcebuild::Diagnostic;
use xr_store::{ObjectKey, Store, object_key};

/// See the module documentation.
pub(crate) struct Journalled<'a> {
    pub store: &'a Store,
    pub journal: &'a Journal,
    pub inputs: &'a Inputs,
    pub batcher: &'a Batcher,
    pub inner: Box<dyn Execute + 'a>,
}

impl Journalled<'_> {
    /// The artifact's outcome, and its compiler's warnings when it compiled now.
    pub(crate) fn run(&self, job: &Job<'_>) -> (Outcome, Vec<Diagnostic>) {
        if let Some((object, bytes)) = self.up_to_date(&job.recipe) {
            return (Outcome::Reused { object, bytes }, Vec::new());
        }
        match self.inner.execute(job) {
            #[cfg(feature = "remote-cache")]
            Execution::Fetched(made) => match self.store_made(&job.recipe, made) {
                Outcome::Built { object, bytes } => (Outcome::Fetched { object, bytes }, Vec::new()),
                other => (other, Vec::new()),
            },
            Execution::Compiled(mut made) => {
                let warnings = std::mem::take(&mut made.warnings);
                (self.store_made(&job.recipe, made), warnings)
            }
            Execution::Failed(error) => (Outcome::Failed(error), Vec::new()),
        }
    }

    /// The journal's object for `recipe`, if every file it read is unchanged
    /// and the object is whole: its stamp as journalled, or its checksum
    /// checked.
    fn up_to_date(&self, recipe: &ObjectKey) -> Option<(ObjectKey, u64)> {
        let entry = self.journal.get(recipe)?;
        if !self.inputs.unchanged(entry.files) {
            return None;
        }
        let object = entry.object;
        // Untouched since it was journalled: whole, without reading it.
        if let Some(stamp) = entry.stamp
            && self.store.stamp(&object) == Some(stamp)
        {
            self.inputs.note_read(entry.files);
            return Some((object, stamp.payload_len()));
        }
        match self.store.get(&object) {
            Ok(Some(payload)) => {
                self.inputs.note_read(entry.files);
                Some((object, payload.len() as u64))
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!("{e}; rebuilding it");
                None
            }
        }
    }

    /// Writes `made` into the store (once: identical output of another
    /// variant or an earlier build is there already) and journals it under
    /// `recipe` when durable.
    fn store_made(&self, recipe: &ObjectKey, made: Made) -> Outcome {
        let object = object_key(&made.payload);
        let bytes = made.payload.len() as u64;
        let stored = matches!(self.store.get(&object), Ok(Some(_)));
        if !stored && let Err(e) = self.store.put_unsynced(&object, &made.payload) {
            return Outcome::Failed(ArtifactError::NotStored {
                store: self.store.root().to_path_buf(),
                cause: std::sync::Arc::new(e),
            });
        }
        self.inputs.note_read(&made.files);
        let stamp = self.store.stamp(&object);
        let entry = Entry { recipe: recipe.hex(), object: object.hex(), files: made.files, stamp };
        self.batcher.journal_when_durable(self.store, self.journal, entry);
        Outcome::Built { object, bytes }
    }
}
