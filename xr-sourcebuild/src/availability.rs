//! What a build system can do: its availability flags.

use abi_stable::StableAbi;
use std::fmt;

/// What a build system can do, as bit flags.
///
/// The flags a plugin advertises say what it *can* do; an instance attached
/// to a live device may offer less (a driver without program binary
/// formats, say): ask the attached instance.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Availability(pub u32);

impl Availability {
    /// No capability.
    pub const NONE: Self = Self(0);
    /// Builds from source on a live device.
    pub const RUNTIME_COMPILE: Self = Self(1);
    /// Builds ahead of time into a stored artifact.
    pub const OFFLINE_COMPILE: Self = Self(1 << 1);
    /// Its stored artifact is portable: not tied to one machine or driver.
    pub const COMPATIBLE_OBJECT: Self = Self(1 << 2);

    const NAMES: [(Self, &'static str); 3] = [
        (Self::RUNTIME_COMPILE, "RuntimeCompile"),
        (Self::OFFLINE_COMPILE, "OfflineCompile"),
        (Self::COMPATIBLE_OBJECT, "CompatibleObject"),
    ];

    /// Whether every flag of `other` is set in `self`.
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The names of the flags that are set, in a fixed order.
    pub fn names(self) -> Vec<&'static str> {
        Self::NAMES.iter().filter(|(flag, _)| self.contains(*flag)).map(|(_, name)| *name).collect()
    }
}

impl std::ops::BitOr for Availability {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl std::ops::BitAnd for Availability {
    type Output = Self;
    fn bitand(self, rhs: Self) -> Self {
        Self(self.0 & rhs.0)
    }
}

impl fmt::Display for Availability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.names();
        if names.is_empty() { f.write_str("(none)") } else { f.write_str(&names.join(" | ")) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_combine_and_print() {
        let flags = Availability::RUNTIME_COMPILE | Availability::COMPATIBLE_OBJECT;
        assert!(flags.contains(Availability::RUNTIME_COMPILE));
        assert!(!flags.contains(Availability::OFFLINE_COMPILE));
        assert_eq!(flags.to_string(), "RuntimeCompile | CompatibleObject");
        assert_eq!(Availability::NONE.to_string(), "(none)");
    }
}
