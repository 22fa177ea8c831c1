//! Journal entries made durable off the build threads.
//!
//! The crash-safety invariant, kept here: an entry is appended to the
//! journal only after a store sync (`syncfs`) that began after its object
//! was written, so that the journal never names an object a power loss
//! could still tear. A build that is killed loses the entries not yet
//! synced, which the next build redoes.
//!
//! A sync takes milliseconds to tens of milliseconds (it writes back the
//! whole filesystem), and a build thread that waited for each would stop
//! compiling for it: a 43,200-artifact build syncs hundreds of times. So
//! build threads hand their entries over in batches ([`Syncer::send`]) and
//! go on; one thread syncs and then appends what that sync covered, taking
//! every batch that queued while it synced into its next sync. A batch
//! closes at [`SYNC_BATCH`] entries or [`SYNC_INTERVAL`] after its first
//! ([`Batcher`]), so that a slow build keeps its work as it goes; a sync
//! that fails fails the build (no catalog names the objects).

use crate::{
    error::NotDurable,
    journal::{Entry, Journal},
};
use std::{
    sync::{
        Mutex,
        mpsc::{self, Receiver, Sender},
    },
    time::{Duration, Instant},
};
use xr_store::Store;

/// Entries that close a batch of unsynced objects.
const SYNC_BATCH: usize = 64;
/// Age at which a batch of unsynced objects closes.
const SYNC_INTERVAL: Duration = Duration::from_millis(250);

/// Gathers the build threads' finished entries into batches for the
/// syncing thread ([`run`]), and keeps why a sync failed.
pub(crate) struct Batcher {
    pending: Mutex<Pending>,
    syncer: Syncer,
    failure: Mutex<Option<NotDurable>>,
}

/// Finished artifacts whose objects are not synced yet.
#[derive(Default)]
struct Pending {
    entries: Vec<Entry>,
    since: Option<Instant>,
}

impl Batcher {
    /// A batcher and the receiving end for [`run`].
    pub(crate) fn new() -> (Self, Receiver<Vec<Entry>>) {
        let (syncer, batches) = Syncer::new();
        (Self { pending: Mutex::new(Pending::default()), syncer, failure: Mutex::new(None) }, batches)
    }

    /// Journals `entry` once its object is durable: the object was
    /// written without a sync; its entry waits in a batch for the syncer.
    pub(crate) fn journal_when_durable(&self, store: &Store, journal: &Journal, entry: Entry) {
        let batch = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            let first = *pending.since.get_or_insert_with(Instant::now);
            pending.entries.push(entry);
            if pending.entries.len() < SYNC_BATCH && first.elapsed() < SYNC_INTERVAL {
                return;
            }
            pending.since = None;
            std::mem::take(&mut pending.entries)
        };
        self.hand_over(store, journal, batch);
    }

    /// Syncs the store and journals every entry still waiting.
    pub(crate) fn flush(&self, store: &Store, journal: &Journal) {
        let batch = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.since = None;
            std::mem::take(&mut pending.entries)
        };
        self.hand_over(store, journal, batch);
    }

    /// Hands `batch` to the syncer thread, or, once it is closed, syncs and
    /// appends it here.
    fn hand_over(&self, store: &Store, journal: &Journal, batch: Vec<Entry>) {
        let Err(batch) = self.syncer.send(batch) else { return };
        if let Err(error) = append_when_durable(store, journal, &batch) {
            // Not journalled, and the build fails before any catalog names them.
            self.fail(error);
        }
    }

    /// Notes why syncing failed (the first reason is kept).
    pub(crate) fn fail(&self, error: NotDurable) {
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(error);
    }

    /// Why syncing failed, if it did.
    pub(crate) fn into_failure(self) -> Option<NotDurable> {
        self.failure.into_inner().unwrap_or_else(|p| p.into_inner())
    }

    /// See [`Syncer::closing`].
    pub(crate) fn closing(&self) -> Closing<'_> {
        self.syncer.closing()
    }
}

/// Where build threads hand finished entries over.
pub(crate) struct Syncer {
    batches: Mutex<Option<Sender<Vec<Entry>>>>,
}

impl Syncer {
    /// A syncer and the receiving end for [`run`].
    fn new() -> (Self, Receiver<Vec<Entry>>) {
        let (sender, receiver) = mpsc::channel();
        (Self { batches: Mutex::new(Some(sender)) }, receiver)
    }

    /// Hands a batch over; `Err` gives it back once [`Syncer::close`] ran.
    fn send(&self, batch: Vec<Entry>) -> Result<(), Vec<Entry>> {
        match &*self.batches.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(sender) => sender.send(batch).map_err(|e| e.0),
            None => Err(batch),
        }
    }

    /// No more batches: [`run`] returns once it has synced those sent.
    fn close(&self) {
        self.batches.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    /// Closes the syncer when dropped, also while a panic unwinds: a build
    /// thread's panic must end the syncing thread, or the scope that waits
    /// for it would never return.
    fn closing(&self) -> Closing<'_> {
        Closing(self)
    }
}

/// See [`Syncer::closing`].
pub(crate) struct Closing<'a>(&'a Syncer);

impl Drop for Closing<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Syncs `store` and appends each batch to `journal`, until the sender is
/// closed. Returns why a sync failed, if one did: the entries of that
/// batch and of every later one are not journalled.
pub(crate) fn run(store: &Store, journal: &Journal, batches: Receiver<Vec<Entry>>) -> Option<NotDurable> {
    let mut failure = None;
    while let Ok(mut batch) = batches.recv() {
        // Objects of batches that queued meanwhile were written before this
        // sync begins: one sync covers them all.
        while let Ok(more) = batches.try_recv() {
            batch.extend(more);
        }
        if failure.is_none() {
            failure = append_when_durable(store, journal, &batch).err();
        }
    }
    failure
}

/// Syncs `store`, then appends `batch`; an error says why the sync failed
/// (nothing is appended then).
pub(crate) fn append_when_durable(store: &Store, journal: &Journal, batch: &[Entry]) -> Result<(), NotDurable> {
    if batch.is_empty() {
        return Ok(());
    }
    store.sync().map_err(|e| NotDurable::Sync(std::sync::Arc::new(e)))?;
    for entry in batch {
        if let Err(e) = journal.append(entry) {
            tracing::warn!(
                "cannot write the build journal {}: {e} (the next build redoes this artifact)",
                journal.path().display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use xr_store::ObjectKey;

    fn key(n: u8) -> ObjectKey {
        ObjectKey::from_parts([[n].as_slice()])
    }

    fn entry(n: u8) -> Entry {
        Entry { recipe: key(n).hex(), object: key(n).hex(), files: Vec::new(), stamp: None }
    }

    #[test]
    fn batches_sent_before_close_are_journalled_and_later_ones_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let journal = Journal::open(dir.path());
        let (syncer, batches) = Syncer::new();
        syncer.send(vec![entry(1)]).unwrap();
        syncer.send(vec![entry(2), entry(3)]).unwrap();
        syncer.close();
        assert_eq!(syncer.send(vec![entry(4)]), Err(vec![entry(4)]), "given back for the caller to sync");
        assert!(run(&store, &journal, batches).is_none());
        let reread = Journal::open(dir.path());
        for n in 1..=3 {
            assert!(reread.get(&key(n)).is_some(), "entry {n} journalled");
        }
        assert!(reread.get(&key(4)).is_none());
    }

    #[test]
    fn a_panic_beside_the_syncing_thread_ends_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            let store = Store::open(&root).unwrap();
            let journal = Journal::open(&root);
            let (syncer, batches) = Syncer::new();
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                std::thread::scope(|scope| {
                    scope.spawn(|| run(&store, &journal, batches));
                    let _closing = syncer.closing();
                    syncer.send(vec![entry(1)]).unwrap();
                    panic!("a bug on a build thread");
                })
            }));
            let _ = done.send(unwound.is_err());
        });
        let unwound = finished.recv_timeout(std::time::Duration::from_secs(30));
        assert_eq!(unwound, Ok(true), "the scope returned, by the panic");
    }

    #[test]
    fn a_failed_sync_journals_nothing_of_its_batch_or_later_ones() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let journal = Journal::open(dir.path());
        // A store whose directory is gone cannot be synced.
        let gone = Store::open(dir.path().join("gone")).unwrap();
        std::fs::remove_dir_all(dir.path().join("gone")).unwrap();
        let (syncer, batches) = Syncer::new();
        syncer.send(vec![entry(1)]).unwrap();
        syncer.close();
        let failure = run(&gone, &journal, batches).expect("the sync fails");
        assert!(matches!(failure, NotDurable::Sync(_)), "{failure}");
        assert!(failure.to_string().starts_with("cannot make the written objects durable: "), "{failure}");
        assert!(Journal::open(dir.path()).get(&key(1)).is_none());
        assert!(append_when_durable(&store, &journal, &[entry(2)]).is_ok());
        assert!(Journal::open(dir.path()).get(&key(2)).is_some());
    }
}
