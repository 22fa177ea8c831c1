//! The shared remote cache as a layer: an artifact another machine built
//! from the same recipe and inputs is fetched (and checked) instead of
//! compiled; what is compiled here is uploaded when the build asks.

use super::{Execute, Execution, Inputs, Job, Made};
use xr_remote::{Kind, Remote};
use xr_store::{ObjectKey, object_key};

/// What the remote keeps for an action: the object one recipe made from
/// inputs with these contents, named as the journal names them (relative to
/// the manifest's directory).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ActionRecord {
    /// The object, hex.
    pub object: String,
    /// (file, BLAKE3 of its contents, hex) for every file the build read.
    pub files: Vec<(String, String)>,
}

/// See the module documentation.
pub(crate) struct SharedCache<'a> {
    pub remote: &'a Remote,
    /// Upload what is compiled below.
    pub upload: bool,
    pub inputs: &'a Inputs,
    pub inner: Box<dyn Execute + 'a>,
}

impl Execute for SharedCache<'_> {
    fn execute(&self, job: &Job<'_>) -> Execution {
        let action = self.action_key(job);
        if let Some(made) = action.as_ref().and_then(|action| self.fetch(action)) {
            return Execution::Fetched(made);
        }
        let execution = self.inner.execute(job);
        if let (Execution::Compiled(made), Some(action), true) = (&execution, &action, self.upload) {
            self.upload(action, made);
        }
        execution
    }
}

impl SharedCache<'_> {
    /// The remote's key of an action: the recipe (which names no place on
    /// this machine) and the contents of every stage's file (the files it
    /// includes are checked against the record). `None` when a stage file
    /// cannot be read (the build reports it).
    fn action_key(&self, job: &Job<'_>) -> Option<ObjectKey> {
        let mut parts = vec![b"xr-remote-action/2".to_vec(), job.recipe.0.to_vec()];
        for stage in &job.program.stages {
            parts.push(self.inputs.hash_of(&self.inputs.root().name(&stage.file))?.into_bytes());
        }
        Some(ObjectKey::from_parts(parts.iter().map(Vec::as_slice)))
    }

    /// The object the remote has for `action`, if every file its record
    /// lists reads the same here and the object is whole.
    fn fetch(&self, action: &ObjectKey) -> Option<Made> {
        let record = self.remote.get(Kind::Action, action)?;
        let Ok(record) = serde_json::from_slice::<ActionRecord>(&record) else {
            tracing::warn!("{}: not an action record; building it here", self.remote.address(&format!("ac/{action}")));
            return None;
        };
        // An include that differs here: this machine's inputs are not the uploader's.
        if !self.inputs.unchanged(&record.files) {
            return None;
        }
        let object = ObjectKey::from_hex(&record.object)?;
        let payload = self.remote.get(Kind::Object, &object)?;
        if object_key(&payload) != object {
            tracing::warn!(
                "{}: its bytes are not the object it is named after; building it here",
                self.remote.address(&format!("cas/{object}"))
            );
            return None;
        }
        Some(Made { payload, files: record.files, warnings: Vec::new() })
    }

    /// Uploads the object, then the action that names it, so that a reader
    /// never finds an action whose object is not there yet.
    fn upload(&self, action: &ObjectKey, made: &Made) {
        let object = object_key(&made.payload);
        let record = ActionRecord { object: object.hex(), files: made.files.clone() };
        let Ok(record) = serde_json::to_vec(&record) else { return };
        if self.remote.put(Kind::Object, &object, &made.payload) {
            self.remote.put(Kind::Action, action, &record);
        }
    }
}
