#!/usr/bin/env python3
"""Writes the Vulkan build system's SPIR-V capability table from the Vulkan
registry (vk.xml): for every SPIR-V capability and extension, what a Vulkan
device must have to take a module declaring it (the specification's SPIR-V
environment appendix, the table the validation layers generate theirs
from), and the layout of every feature struct it names, so that the device's
features are read by name.

    scripts/gen-vulkan-capabilities.py [VK_XML] > backends/xr-compiler-vk-spirv/src/capability_table.rs

VK_XML defaults to /usr/share/vulkan/registry/vk.xml (Debian's
libvulkan-dev, which scripts/setup-packages.sh installs). The output is
committed; a test of xr-compiler-vk-spirv runs this script again and fails
when the committed table and vk.xml disagree.
"""
import sys
import xml.etree.ElementTree as ET

EXTENSION_BASE = 1_000_000_000


def rust_str(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def version_of(name):
    """(major, minor) of VK_VERSION_1_2 / VK_API_VERSION_1_2, else None."""
    for prefix in ("VK_VERSION_", "VK_API_VERSION_"):
        if name.startswith(prefix):
            major, minor = name[len(prefix):].split("_")
            return int(major), int(minor)
    return None


def requirement(name):
    version = version_of(name)
    if version:
        return "Requirement::Version(%d, %d)" % version
    return "Requirement::Extension(%s)" % rust_str(name)


def structure_types(registry):
    """Every VkStructureType enumerant's value, by name."""
    values, aliases = {}, {}
    for enums in registry.findall("enums"):
        if enums.get("name") != "VkStructureType":
            continue
        for enum in enums.findall("enum"):
            if enum.get("alias"):
                aliases[enum.get("name")] = enum.get("alias")
            elif enum.get("value") is not None:
                values[enum.get("name")] = int(enum.get("value"), 0)

    def added(enum, number):
        if enum.get("extends") != "VkStructureType":
            return
        name = enum.get("name")
        if enum.get("alias"):
            aliases[name] = enum.get("alias")
        elif enum.get("offset") is not None:
            number = int(enum.get("extnumber", number))
            value = EXTENSION_BASE + (number - 1) * 1000 + int(enum.get("offset"))
            values[name] = -value if enum.get("dir") == "-" else value
        elif enum.get("value") is not None:
            values[name] = int(enum.get("value"), 0)

    for feature in registry.findall("feature"):
        for require in feature.findall("require"):
            for enum in require.findall("enum"):
                added(enum, 0)
    for extension in registry.find("extensions").findall("extension"):
        number = int(extension.get("number"))
        for require in extension.findall("require"):
            for enum in require.findall("enum"):
                added(enum, number)
    for name, target in aliases.items():
        while target in aliases and target not in values:
            target = aliases[target]
        if target in values:
            values.setdefault(name, values[target])
    return values


def providers(registry):
    """The core versions and extensions whose <require> lists each type."""
    provided = {}
    for feature in registry.findall("feature"):
        if "vulkan" not in feature.get("api", "vulkan").split(","):
            continue
        for require in feature.findall("require"):
            for t in require.findall("type"):
                provided.setdefault(t.get("name"), []).append(feature.get("name"))
    for extension in registry.find("extensions").findall("extension"):
        if extension.get("supported") == "disabled":
            continue
        for require in extension.findall("require"):
            for t in require.findall("type"):
                provided.setdefault(t.get("name"), []).append(extension.get("name"))
    return provided


def enables(entry, canonical):
    out = []
    for enable in entry.findall("enable"):
        a = enable.attrib
        if "version" in a:
            out.append("Enable::Version(%d, %d)" % version_of(a["version"]))
        elif "extension" in a:
            out.append("Enable::Extension(%s)" % rust_str(a["extension"]))
        elif "struct" in a:
            requires = ", ".join(requirement(r) for r in a["requires"].split(","))
            out.append(
                "Enable::Feature { structure: %s, feature: %s, requires: &[%s] }"
                % (rust_str(canonical(a["struct"])), rust_str(a["feature"]), requires)
            )
        elif "property" in a:
            requires = ", ".join(requirement(r) for r in a["requires"].split(","))
            out.append(
                "Enable::Property { structure: %s, member: %s, value: %s, requires: &[%s] }"
                % (rust_str(a["property"]), rust_str(a["member"]), rust_str(a["value"]), requires)
            )
        else:
            raise SystemExit("vk.xml: an <enable> of a kind this script does not know: %s" % a)
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/vulkan/registry/vk.xml"
    registry = ET.parse(path).getroot()
    header = next(
        t for t in registry.find("types").findall("type") if t.findtext("name") == "VK_HEADER_VERSION"
    )
    header_version = "".join(header.itertext()).split("VK_HEADER_VERSION")[-1].strip()
    types = {t.get("name"): t for t in registry.find("types").findall("type") if t.get("category") == "struct"}

    def canonical(name):
        """A struct alias (`…FeaturesNV` of `…FeaturesKHR`) as the struct it names: one sType, one entry."""
        while types[name].get("alias"):
            name = types[name].get("alias")
        return name

    s_types = structure_types(registry)
    provided = providers(registry)

    capabilities = [(c.get("name"), enables(c, canonical)) for c in registry.find("spirvcapabilities")]
    extensions = [(e.get("name"), enables(e, canonical)) for e in registry.find("spirvextensions")]
    structures = []
    for entry in registry.find("spirvcapabilities"):
        for enable in entry.findall("enable"):
            name = enable.get("struct") and canonical(enable.get("struct"))
            if name and name not in structures:
                structures.append(name)

    out = []
    w = out.append
    w("// Generated by scripts/gen-vulkan-capabilities.py from vk.xml (header version %s): do not edit." % header_version)
    w("// What a Vulkan device must have to take a SPIR-V module declaring each capability and")
    w("// extension, and the layout of every feature struct named (docs/SPIRV.md).")
    w("")
    w("use super::{Enable, FeatureStruct, Requirement};")
    w("")
    for what, table, entries in (("capability", "CAPABILITIES", capabilities), ("extension", "EXTENSIONS", extensions)):
        w("/// Every SPIR-V %s Vulkan knows, with the ways a device enables it (any one suffices)." % what)
        w("pub const %s: &[(&str, &[Enable])] = &[" % table)
        for name, alternatives in entries:
            w("    (%s, &[%s])," % (rust_str(name), ", ".join(alternatives)))
        w("];")
        w("")
    w("/// The feature structs the capabilities name: their `sType` (0 for")
    w("/// `VkPhysicalDeviceFeatures`, which has none), their `VkBool32` members in")
    w("/// order, and what provides the struct (a core version or an extension).")
    w("pub const FEATURE_STRUCTS: &[FeatureStruct] = &[")
    for name in structures:
        members = types[name].findall("member")
        names = [m.findtext("name") for m in members]
        kinds = [m.findtext("type") for m in members]
        s_type = 0
        if names[:2] == ["sType", "pNext"]:
            s_type = s_types[members[0].get("values")]
            names, kinds = names[2:], kinds[2:]
        if any(k != "VkBool32" for k in kinds):
            raise SystemExit("vk.xml: %s has members that are not VkBool32: %s" % (name, kinds))
        by = ", ".join(requirement(p) for p in provided.get(name, []))
        w("    FeatureStruct {")
        w("        name: %s," % rust_str(name))
        w("        s_type: %d," % s_type)
        w("        members: &[%s]," % ", ".join(rust_str(n) for n in names))
        w("        provided_by: &[%s]," % by)
        w("    },")
    w("];")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
