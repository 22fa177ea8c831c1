//! Whether a plugin's interface versions are this host's: the rule of the
//! crate's documentation, checked before abi_stable compares layouts.

use crate::root::InterfaceVersions;
use abi_stable::sabi_types::{VersionNumber, VersionStrings};

/// Checks the versions a plugin recorded against the host's: each ABI crate
/// must be of the same interface (for `0.B.A`, the same `B`; from 1.0, the
/// same major). `Err` is one line naming the plugin's version and the host's
/// for every crate that differs.
pub fn check_interfaces(plugin: &InterfaceVersions, host: &InterfaceVersions) -> Result<(), String> {
    let contracts = [
        ("root module (xr-plugin)", plugin.root.as_str(), host.root.as_str()),
        ("device-system interface (xr-device)", plugin.device.as_str(), host.device.as_str()),
        ("build-system interface (xr-sourcebuild)", plugin.build.as_str(), host.build.as_str()),
    ];
    let differing: Vec<String> = contracts
        .iter()
        .filter(|(_, theirs, ours)| !same_interface(theirs, ours))
        .map(|(what, theirs, ours)| format!("{what} {theirs}, this host has {ours}"))
        .collect();
    if differing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "incompatible plugin interface: built against the {}; rebuild the plugin against this XR",
            differing.join("; the ")
        ))
    }
}

/// Whether two interface versions may meet, by abi_stable's own rule for
/// the crate versions it checks with each type (`0.B.A` meets `0.B.C`; from
/// 1.0, the same major); a version that does not parse meets only itself.
fn same_interface(a: &'static str, b: &'static str) -> bool {
    match (VersionNumber::new(VersionStrings::new(a)), VersionNumber::new(VersionStrings::new(b))) {
        (Ok(a), Ok(b)) => a.is_loosely_compatible(b),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi_stable::std_types::RStr;

    fn versions(root: &'static str, device: &'static str, build: &'static str) -> InterfaceVersions {
        InterfaceVersions { root: RStr::from_str(root), device: RStr::from_str(device), build: RStr::from_str(build) }
    }

    #[test]
    fn additions_meet_and_breaks_do_not() {
        let host = versions("0.5.2", "0.5.0", "0.5.1");
        assert_eq!(check_interfaces(&versions("0.5.0", "0.5.0", "0.5.0"), &host), Ok(()));
        assert_eq!(check_interfaces(&versions("0.5.9", "0.5.3", "0.5.1"), &host), Ok(()));
        assert_eq!(
            check_interfaces(&versions("0.5.0", "0.5.0", "0.4.0"), &host),
            Err("incompatible plugin interface: built against the build-system interface (xr-sourcebuild) 0.4.0, \
                 this host has 0.5.1; rebuild the plugin against this XR"
                .into())
        );
        let both = check_interfaces(&versions("0.5.0", "0.6.0", "0.4.0"), &host).unwrap_err();
        assert!(
            both.contains("device-system interface (xr-device) 0.6.0, this host has 0.5.0; the build-system"),
            "{both}"
        );
        assert!(!both.contains('\n'), "{both}");
        assert!(same_interface("1.2.0", "1.7.3") && !same_interface("1.2.0", "2.2.0"));
        assert!(!same_interface("0.5.0", "five") && same_interface("odd", "odd"));
    }
}
