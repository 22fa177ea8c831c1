//! What a front end asks a build for: which programs and targets, which
//! part of the matrix, and where the compiles run.

use std::{sync::Arc, time::Duration};
use xr_worker::PoolConfig;

/// What to build.
#[derive(Clone, Debug, Default)]
pub struct BuildRequest {
    /// Worker threads; one per core when `None`.
    pub jobs: Option<usize>,
    /// Only these targets (all of each program's when empty).
    pub targets: Vec<String>,
    /// Only these programs (all when empty).
    pub programs: Vec<String>,
    /// Only this part of the matrix, for one of several machines.
    pub shard: Option<Shard>,
    /// Only the variants these usage logs name (`xr build --used`); a
    /// program's own `used` log narrows it further.
    pub used: Option<Arc<crate::used::UsedVariants>>,
    /// A shared cache read before building (see `xr_remote`).
    #[cfg(feature = "remote-cache")]
    pub remote: Option<Arc<xr_remote::Remote>>,
    /// Upload what this build makes to the remote.
    pub upload: bool,
    /// Where the compiles run: in this process, or in worker processes
    /// that a crashing compiler takes down alone.
    pub compile_in: CompileIn,
    /// A farm that runs the compiles (see `crate::remote_exec`); those it
    /// cannot run go to `compile_in`.
    #[cfg(feature = "farm")]
    pub remote_exec: Option<Arc<crate::remote_exec::RemoteExec>>,
}

impl BuildRequest {
    /// Whether the build reads a shared cache (whose objects a stamp of
    /// this machine cannot vouch for).
    pub fn reads_shared_cache(&self) -> bool {
        #[cfg(feature = "remote-cache")]
        return self.remote.is_some();
        #[cfg(not(feature = "remote-cache"))]
        false
    }

    /// Whether the build asked for builds `variant` of `program`: in the
    /// shard, and named by every usage log that applies to it.
    pub fn selects(&self, program: &crate::manifest::Program, variant: &str) -> bool {
        self.shard.is_none_or(|s| s.contains(&program.name, variant))
            && self.used.as_ref().is_none_or(|u| u.contains(&program.name, variant))
            && program.used.as_ref().is_none_or(|u| u.variants.contains(variant))
    }
}

/// Where a build runs its compiles.
#[derive(Clone, Debug, Default)]
pub enum CompileIn {
    /// On this process's threads: what a debugger wants, and what an engine
    /// embedding the build uses. A native crash in a compiler ends the
    /// process, and a compile has no time limit (nothing can stop a thread
    /// inside native code).
    #[default]
    Process,
    /// In worker processes (see [`xr_worker::pool`]).
    Workers(Workers),
}

/// How a build's worker processes run.
#[derive(Clone, Debug)]
pub struct Workers {
    /// How to start one, and its memory cap.
    pub pool: PoolConfig,
    /// How long one compile may run, for programs whose manifest sets no
    /// `compile_timeout`.
    pub time_limit: Duration,
}

impl Workers {
    /// The time limit when neither the manifest nor the command line sets one.
    pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(300);
}

/// A shard that is not `I/N` with 1 ≤ I ≤ N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{text}' is not a shard: write I/N with 1 <= I <= N, e.g. 2/3")]
pub struct BadShard {
    /// What was given.
    pub text: String,
}

/// One of `count` disjoint parts of a matrix (`index` from 1): a variant
/// belongs to the part its program's and its own name hash to, so every
/// machine splits a manifest the same way, and adding a variant moves no
/// other variant to another part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 1.
    pub index: u32,
    /// How many parts.
    pub count: u32,
}

impl Shard {
    /// Parses `I/N` with 1 ≤ I ≤ N.
    pub fn parse(text: &str) -> Result<Self, BadShard> {
        let bad = || BadShard { text: text.to_owned() };
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let (index, count) = (index.trim().parse().map_err(|_| bad())?, count.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }

    /// Whether the variant `variant` of `program` is in this part.
    pub fn contains(&self, program: &str, variant: &str) -> bool {
        let hash = blake3::hash(format!("{program}\0{variant}").as_bytes());
        let head = u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"));
        head % u64::from(self.count) == u64::from(self.index - 1)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::Shard;

    #[test]
    fn shards_split_variants_into_disjoint_parts_that_cover_them_all() {
        let names: Vec<String> = (0..600).map(|i| format!("toon[BANDS={i}]")).collect();
        let shards: Vec<Shard> = (1..=3).map(|index| Shard { index, count: 3 }).collect();
        let mut sizes = [0usize; 3];
        for name in &names {
            let owners: Vec<usize> = (0..3).filter(|&i| shards[i].contains("toon", name)).collect();
            assert_eq!(owners.len(), 1, "{name} is in exactly one part: {owners:?}");
            sizes[owners[0]] += 1;
        }
        assert!(sizes.iter().all(|&n| n > 150), "roughly even: {sizes:?}");
        // The same on every machine and every run: a function of the names only.
        assert!(Shard { index: 1, count: 1 }.contains("any", "thing"));
        let program_counts = Shard { index: 2, count: 3 };
        let moved = names.iter().filter(|n| program_counts.contains("toon", n) != program_counts.contains("lit", n));
        assert!(moved.count() > 0, "the program's name is part of the hash");
    }

    #[test]
    fn shard_text_is_i_of_n() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        assert_eq!(Shard::parse(" 1 / 1 ").map(|s| s.to_string()), Ok("1/1".to_owned()));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "-1/3", ""] {
            let error = Shard::parse(bad).unwrap_err();
            assert!(error.to_string().contains(&format!("'{bad}' is not a shard")), "{error}");
        }
    }
}
