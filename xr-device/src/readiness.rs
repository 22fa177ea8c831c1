//! Whether a program can be drawn without waiting for the driver, and what
//! a draw does when it cannot.
//!
//! A compile on the draw path stalls the frame that first draws a program
//! (or a program into a target of formats it was never drawn into): the
//! driver compiles while the frame waits. A device that can compile off
//! the draw path (OpenGL's parallel shader compile, Vulkan pipelines linked
//! from graphics pipeline libraries or compiled on another thread, another
//! API's pipelines made on a worker thread) says, per program and target, what
//! a draw would find ([`Readiness`]); the engine says, per draw or per
//! library, what to do when the program is not ready ([`NotReady`]).

use crate::{capabilities::DeviceCounter, commands::ProgramRef, error::XrError};
use abi_stable::StableAbi;

/// What a draw of a program into a target would find now.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Readiness {
    /// Drawable at once with its final, optimized object.
    Ready,
    /// Drawable at once with an object linked fast (a Vulkan pipeline
    /// linked from graphics pipeline libraries) while the optimized one
    /// compiles on another thread; it replaces the fast one when done.
    Linked,
    /// Still compiling: a draw would wait for the driver ([`NotReady::Wait`])
    /// or be skipped or drawn by a fallback as the draw asks.
    Compiling,
}

impl Readiness {
    /// Whether a draw can go ahead without waiting.
    pub fn drawable(self) -> bool {
        self != Readiness::Compiling
    }

    /// How a message or a table names it.
    pub fn name(self) -> &'static str {
        match self {
            Readiness::Ready => "ready",
            Readiness::Linked => "linked fast, optimizing",
            Readiness::Compiling => "compiling",
        }
    }
}

/// What a draw does when its program is not ready for its target.
///
/// The default, [`NotReady::Wait`], is what every device did before it
/// could compile off the draw path: the draw waits for the driver.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NotReady {
    /// Wait for the compile (the frame stalls, the pixels are the program's).
    #[default]
    Wait,
    /// Drop the draw, counted as [`DRAWS_SKIPPED`]; the compile goes on.
    Skip,
    /// Draw with this program instead (a general one compiled early, as an
    /// ubershader), counted as [`DRAWS_BY_FALLBACK`]; a fallback that is
    /// not ready itself is skipped, never waited for.
    Fallback(ProgramRef),
}

impl NotReady {
    /// How a message or a table names it.
    pub fn name(self) -> &'static str {
        match self {
            NotReady::Wait => "wait",
            NotReady::Skip => "skip",
            NotReady::Fallback(_) => "fallback",
        }
    }
}

/// The device counter ([`crate::Device::counters`]) of draws dropped
/// because their program was not ready ([`NotReady::Skip`], or a fallback
/// that was not ready either).
pub const DRAWS_SKIPPED: &str = "draws skipped (not ready)";

/// The device counter of draws made by the fallback program ([`NotReady::Fallback`]).
pub const DRAWS_BY_FALLBACK: &str = "draws by the fallback";

/// The device counter of programs (or pipelines for a draw state) still
/// compiling off the draw path when the counters were read.
pub const STILL_COMPILING: &str = "still compiling";

/// What a draw binds, decided by [`decide`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawWith {
    /// The draw's own program: ready, or waited for ([`NotReady::Wait`]).
    Program(ProgramRef),
    /// The policy's fallback, ready where the draw's program is not.
    Fallback(ProgramRef),
    /// Nothing: the draw is dropped.
    Skip,
}

/// What a draw of `program` under `policy` binds, asking `readiness` of
/// a program (the device's answer for the draw's target, given without
/// waiting). Under [`NotReady::Wait`] nothing is asked: the draw binds its
/// program and the driver finishes the compile first, as every draw did
/// before readiness existed. A fallback that is not ready either is
/// skipped, never waited for (waiting for it would stall the frame the
/// policy was chosen to keep).
pub fn decide(
    program: ProgramRef,
    policy: NotReady,
    mut readiness: impl FnMut(ProgramRef) -> Result<Readiness, XrError>,
) -> Result<DrawWith, XrError> {
    if policy == NotReady::Wait || readiness(program)?.drawable() {
        return Ok(DrawWith::Program(program));
    }
    Ok(match policy {
        NotReady::Fallback(fallback) if readiness(fallback)?.drawable() => DrawWith::Fallback(fallback),
        _ => DrawWith::Skip,
    })
}

/// A device's counts of the draws [`decide`] did not give their program.
#[derive(Debug, Default)]
pub struct NotReadyCounts {
    skipped: std::sync::atomic::AtomicU64,
    by_fallback: std::sync::atomic::AtomicU64,
}

impl NotReadyCounts {
    /// Counts what `decision` did.
    pub fn count(&self, decision: DrawWith) {
        use std::sync::atomic::Ordering::Relaxed;
        match decision {
            DrawWith::Program(_) => {}
            DrawWith::Fallback(_) => {
                self.by_fallback.fetch_add(1, Relaxed);
            }
            DrawWith::Skip => {
                self.skipped.fetch_add(1, Relaxed);
            }
        }
    }

    /// [`DRAWS_SKIPPED`] and [`DRAWS_BY_FALLBACK`], as device counters.
    pub fn counters(&self) -> [DeviceCounter; 2] {
        use std::sync::atomic::Ordering::Relaxed;
        [
            DeviceCounter { name: DRAWS_SKIPPED.into(), value: self.skipped.load(Relaxed) },
            DeviceCounter { name: DRAWS_BY_FALLBACK.into(), value: self.by_fallback.load(Relaxed) },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAWN: ProgramRef = ProgramRef { kind: crate::ProgramKind::Program, name: 1 };
    const UBER: ProgramRef = ProgramRef { kind: crate::ProgramKind::Program, name: 2 };

    /// `decide` with the draw's program and the fallback each ready or not;
    /// the programs it asked about.
    fn decided(policy: NotReady, drawn: Readiness, uber: Readiness) -> (DrawWith, Vec<u32>) {
        let mut asked = Vec::new();
        let decision = decide(DRAWN, policy, |p| {
            asked.push(p.name);
            Ok(if p == DRAWN { drawn } else { uber })
        })
        .unwrap();
        (decision, asked)
    }

    #[test]
    fn each_policy_draws_waits_skips_or_falls_back_as_it_says() {
        use Readiness::*;
        let fallback = NotReady::Fallback(UBER);
        // Waiting asks nothing: the draw binds its program, as before.
        assert_eq!(decided(NotReady::Wait, Compiling, Ready), (DrawWith::Program(DRAWN), vec![]));
        for policy in [NotReady::Skip, fallback] {
            assert_eq!(decided(policy, Ready, Compiling).0, DrawWith::Program(DRAWN), "{policy:?}");
            assert_eq!(decided(policy, Linked, Compiling).0, DrawWith::Program(DRAWN), "{policy:?}: a fast link draws");
        }
        assert_eq!(decided(NotReady::Skip, Compiling, Ready), (DrawWith::Skip, vec![1]));
        assert_eq!(decided(fallback, Compiling, Ready), (DrawWith::Fallback(UBER), vec![1, 2]));
        assert_eq!(decided(fallback, Compiling, Linked).0, DrawWith::Fallback(UBER));
        assert_eq!(
            decided(fallback, Compiling, Compiling).0,
            DrawWith::Skip,
            "a fallback not ready is never waited for"
        );
    }

    #[test]
    fn skipped_draws_and_fallback_draws_are_counted_apart() {
        let counts = NotReadyCounts::default();
        for decision in [DrawWith::Skip, DrawWith::Program(DRAWN), DrawWith::Fallback(UBER), DrawWith::Skip] {
            counts.count(decision);
        }
        let [skipped, by_fallback] = counts.counters();
        assert_eq!((skipped.name.as_str(), skipped.value), (DRAWS_SKIPPED, 2));
        assert_eq!((by_fallback.name.as_str(), by_fallback.value), (DRAWS_BY_FALLBACK, 1));
    }

    #[test]
    fn only_a_compiling_program_keeps_a_draw_from_going_ahead() {
        assert!(Readiness::Ready.drawable());
        assert!(Readiness::Linked.drawable());
        assert!(!Readiness::Compiling.drawable());
        assert_eq!(NotReady::default(), NotReady::Wait, "waiting is what every draw did before");
    }

    #[test]
    fn tables_and_messages_name_each_policy_and_readiness() {
        let policies = [NotReady::Wait, NotReady::Skip, NotReady::Fallback(UBER)].map(NotReady::name);
        assert_eq!(policies, ["wait", "skip", "fallback"]);
        let readiness = [Readiness::Ready, Readiness::Linked, Readiness::Compiling].map(Readiness::name);
        assert_eq!(readiness, ["ready", "linked fast, optimizing", "compiling"]);
    }
}
