//! The platform properties that say which machine may run an action: this
//! host's `OSFamily` and `ISA` in the spelling REAPI clients and bots share,
//! with a user's own properties over them. A client asks with the same set
//! a bot offers, so both ends build it here.

/// This host's `OSFamily` and `ISA` (Bazel's spelling: `x86-64`, `aarch64`),
/// then `extra` in order; an extra key replaces the host's value.
pub fn host_properties(extra: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    let isa = match std::env::consts::ARCH {
        "x86_64" => "x86-64",
        other => other,
    };
    let mut properties =
        vec![("OSFamily".to_owned(), std::env::consts::OS.to_owned()), ("ISA".to_owned(), isa.to_owned())];
    for (key, value) in extra {
        properties.retain(|(k, _)| *k != key);
        properties.push((key, value));
    }
    properties
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extra_property_replaces_the_hosts_and_others_follow() {
        let properties =
            host_properties([("ISA".to_owned(), "riscv64".to_owned()), ("container-image".to_owned(), "x".to_owned())]);
        assert_eq!(properties[0], ("OSFamily".to_owned(), std::env::consts::OS.to_owned()));
        assert_eq!(
            &properties[1..],
            &[("ISA".to_owned(), "riscv64".to_owned()), ("container-image".to_owned(), "x".to_owned())]
        );
    }

    #[test]
    fn the_isa_is_spelled_as_bazel_spells_it() {
        let isa = host_properties([]).into_iter().find(|(k, _)| k == "ISA").map(|(_, v)| v);
        assert_ne!(isa.as_deref(), Some("x86_64"));
        assert!(isa.is_some());
    }
}
