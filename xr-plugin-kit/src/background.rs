//! Work a plugin does off its caller's thread (the pipelines a draw that
//! does not wait asks for), on a bounded pool of threads.
//!
//! A scene's first frames into new targets may ask for hundreds of
//! pipelines at once; a thread each would put hundreds of compiles on the
//! cores beside the thread that draws. The pool runs as many at once as
//! the machine has cores but one (at least one), in the order asked; the
//! others wait in its queue. Its threads are started at the first job and
//! live as long as the process (a plugin's library is never unloaded).

use std::{
    sync::{Arc, Condvar, Mutex, OnceLock, PoisonError, mpsc},
    thread,
};

type Job = Box<dyn FnOnce() + Send>;

/// The pool: where jobs are sent, and how many threads take them.
struct Pool {
    sender: Mutex<mpsc::Sender<Job>>,
    workers: usize,
}

/// A job's result, once it has one.
struct Outcome<T> {
    result: Mutex<Option<thread::Result<T>>>,
    done: Condvar,
}

/// A job on the pool: whether it has finished, and its result.
pub struct Task<T> {
    outcome: Arc<Outcome<T>>,
}

impl<T> Task<T> {
    /// Whether the job has finished (returned or panicked).
    pub fn is_finished(&self) -> bool {
        self.outcome.result.lock().unwrap_or_else(PoisonError::into_inner).is_some()
    }

    /// Waits for the job; its value, or the panic it ended in.
    pub fn join(self) -> thread::Result<T> {
        let mut result = self.outcome.result.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(result) = result.take() {
                return result;
            }
            result = self.outcome.done.wait(result).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// How many jobs run at once: the cores but one, at least one.
pub fn workers() -> usize {
    pool().map_or(0, |pool| pool.workers)
}

fn pool() -> Option<&'static Pool> {
    static POOL: OnceLock<Option<Pool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let cores = thread::available_parallelism().map_or(1, |n| n.get());
        let wanted = cores.saturating_sub(1).max(1);
        let (sender, receiver) = mpsc::channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        let mut workers = 0;
        for index in 0..wanted {
            let receiver = Arc::clone(&receiver);
            let started = thread::Builder::new().name(format!("xr-background-{index}")).spawn(move || {
                loop {
                    // The lock is held only to take a job, not to run it.
                    let job = receiver.lock().unwrap_or_else(PoisonError::into_inner).recv();
                    match job {
                        Ok(job) => job(),
                        Err(_) => return,
                    }
                }
            });
            match started {
                Ok(_) => workers += 1,
                Err(e) => tracing::warn!("cannot start a background thread: {e}"),
            }
        }
        (workers > 0).then(|| Pool { sender: Mutex::new(sender), workers })
    })
    .as_ref()
}

/// Runs `work` on the pool; on this thread, before returning, where the
/// pool has no thread (none could be started).
pub fn spawn<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Task<T> {
    let outcome = Arc::new(Outcome { result: Mutex::new(None), done: Condvar::new() });
    let settle = Arc::clone(&outcome);
    let job: Job = Box::new(move || {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
        *settle.result.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
        settle.done.notify_all();
    });
    let refused = match pool() {
        Some(pool) => pool.sender.lock().unwrap_or_else(PoisonError::into_inner).send(job).err().map(|e| e.0),
        None => Some(job),
    };
    if let Some(job) = refused {
        job();
    }
    Task { outcome }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn jobs_run_off_the_callers_thread_and_hand_back_their_value_or_their_panic() {
        let caller = thread::current().id();
        let task = spawn(move || thread::current().id() != caller);
        assert!(task.join().expect("no panic"), "the job ran on another thread");
        let panicked = spawn(|| -> u32 { panic!("a compile panicked") });
        assert!(panicked.join().is_err());
        assert_eq!(spawn(|| 7).join().expect("the pool outlives a panicking job"), 7);
    }

    #[test]
    fn a_job_says_when_it_has_finished_without_being_joined() {
        let task = spawn(|| 1);
        let started = std::time::Instant::now();
        while !task.is_finished() {
            assert!(started.elapsed() < Duration::from_secs(30), "a one-line job never said it finished");
            thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(task.join().expect("no panic"), 1);
        let cores = thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(workers(), cores.saturating_sub(1).max(1), "the cores but one, at least one");
    }

    #[test]
    fn no_more_jobs_run_at_once_than_the_pool_has_threads() {
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<Task<()>> = (0..16)
            .map(|_| {
                let (running, most) = (Arc::clone(&running), Arc::clone(&most));
                spawn(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    thread::sleep(Duration::from_millis(5));
                    running.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        assert!(tasks.iter().any(|t| !t.is_finished()), "16 jobs of 5 ms are not all done at once");
        for task in tasks {
            task.join().expect("no panic");
        }
        let most = most.load(Ordering::SeqCst);
        assert!((1..=workers()).contains(&most), "{most} jobs ran at once on {} threads", workers());
    }
}
