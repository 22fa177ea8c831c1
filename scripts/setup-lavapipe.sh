#!/usr/bin/env bash
# Puts a current lavapipe (Mesa's Vulkan driver on the CPU) where
# xr-rhi-vulkan looks for one in a checkout: target/lavapipe/. Debian 12's
# own lavapipe (Mesa 22.3) has no descriptor indexing, no dynamic rendering
# local read and 32 samplers a stage; Debian's bookworm-backports suite
# carries Mesa 25. Only its Vulkan driver is taken, from the
# mesa-vulkan-drivers package, downloaded with apt-get and unpacked with
# dpkg -x. The package source comes from the system's apt setup: its
# backports entry when it has one, else the entry of its main Debian suite
# (the codename's) with the suite made $codename-backports, the entry's
# other options (signed-by, architectures, ...) kept; so a mirror or a proxy
# apt is set up for serves this too. That one entry goes into a sources list
# and package lists of this script's own, so the system's apt setup, package
# lists and installed packages stay as they are. The
# system's Mesa, and so its OpenGL driver, is untouched. The driver needs
# only libraries Debian 12 has (LLVM 15, libdrm). Beside it goes a loader
# manifest, lvp_icd.json: `VK_ADD_DRIVER_FILES` naming it (what
# scripts/lavapipe-env.sh exports) makes the Vulkan loader offer it beside
# the system's drivers, and the Vulkan device picks the newest driver of
# the kind it wants (docs/TESTING.md, "The drivers"). Does nothing when the
# driver is there.
#
#   scripts/setup-lavapipe.sh [DIR]    # default: target/lavapipe (under CARGO_TARGET_DIR when set)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-${CARGO_TARGET_DIR:-target}/lavapipe}"
driver=libvulkan_lvp.so
if [ -f "$dir/$driver" ] && [ -f "$dir/lvp_icd.json" ]; then
    exit 0
fi
# shellcheck source=/dev/null
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ -z "$codename" ]; then
    echo "setup-lavapipe: /etc/os-release names no VERSION_CODENAME, so no backports suite to take lavapipe from" >&2
    exit 1
fi

# The first binary-package, main-component entry of the system's apt sources
# whose suite is $1, as "URI SUITE FILE:ENTRY" (ENTRY: the line of a one-line
# list, the stanza of a deb822 .sources file). Those of Debian's archives come
# first; their Origin is only known where the system has package lists, and
# without lists apt lists its sources only with --no-release-info.
# shellcheck disable=SC2016 # $(FIELD) is apt's --format placeholder
apt_entry() {
    {
        apt-get indextargets --format '$(ORIGIN)|$(TARGET_OF)|$(COMPONENT)|$(RELEASE)|$(CODENAME)|$(REPO_URI)|$(SOURCESENTRY)' 'Identifier: Packages' |
            awk -F'|' -v want="$1" '$1 ~ /^Debian/ && $2 == "deb" && $3 == "main" && ($4 == want || $5 == want) { print $6, want, $7 }'
        apt-get --no-release-info indextargets --format '$(TARGET_OF)|$(COMPONENT)|$(RELEASE)|$(REPO_URI)|$(SOURCESENTRY)' 'Identifier: Packages' |
            awk -F'|' -v want="$1" '$1 == "deb" && $2 == "main" && $3 == want { print $4, want, $5 }'
    } | awk 'NR == 1'
}
entry=$(apt_entry "$codename-backports")
if [ -n "$entry" ]; then
    read -r uri suite where <<<"$entry"
else
    entry=$(apt_entry "$codename")
    if [ -z "$entry" ]; then
        echo "setup-lavapipe: the system's apt sources have no $codename (main) entry to take $codename-backports from" >&2
        exit 1
    fi
    read -r uri _ where <<<"$entry"
    suite=$codename-backports
fi
file=${where%:*}
index=${where##*:}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
# That entry, the one URI, suite and component, with the entry's options.
case "$file" in
    *.sources)
        sources=$work/backports.sources
        {
            printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\n' "$uri" "$suite"
            # Stanzas are counted as apt counts them: paragraphs with a field.
            awk -v want="$index" '
                /^[ \t]*$/ { if (fields) stanza++; fields = 0; next }
                /^#/ { next }
                /^[^ \t]/ {
                    fields = 1
                    name = tolower($0); sub(/:.*/, "", name)
                    skip = (name == "types" || name == "uris" || name == "suites" || name == "components")
                }
                stanza + 1 == want && !skip { print }
            ' "$file"
        } >"$sources"
        ;;
    *)
        sources=$work/backports.list
        options=$(sed -n "${index}p" "$file" | sed -n 's/^[ \t]*deb[ \t]*\(\[[^]]*\]\).*/\1/p')
        echo "deb ${options:+$options }$uri $suite main" >"$sources"
        ;;
esac
apt_options=(
    -o "Dir::Etc::SourceList=$sources" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
    -o APT::Sandbox::User=root -qq
)
echo "setup-lavapipe: downloading mesa-vulkan-drivers from $suite at $uri (the system's apt sources) for lavapipe"
apt-get "${apt_options[@]}" --error-on=any update
version=$(apt-cache "${apt_options[@]}" policy mesa-vulkan-drivers | awk '/Candidate:/ {print $2}')
case "$version" in
    2[5-9].* | [3-9][0-9].*) ;;
    *)
        echo "setup-lavapipe: $suite offers mesa-vulkan-drivers '$version', not Mesa 25 or later" >&2
        exit 1
        ;;
esac
(cd "$work/debs" && apt-get "${apt_options[@]}" download "mesa-vulkan-drivers=$version")
dpkg -x "$work"/debs/mesa-vulkan-drivers_*.deb "$work/root"
mkdir -p "$dir"
cp "$work/root/usr/lib/x86_64-linux-gnu/$driver" "$dir/$driver.part"
mv "$dir/$driver.part" "$dir/$driver"
echo "$version" >"$dir/VERSION"
# The loader manifest; the library by absolute path (the loader resolves a
# bare name through the system's library path, which has the old one).
cat >"$dir/lvp_icd.json.part" <<JSON
{
    "file_format_version": "1.0.0",
    "ICD": { "library_path": "$(cd "$dir" && pwd)/$driver", "api_version": "1.4.305" }
}
JSON
mv "$dir/lvp_icd.json.part" "$dir/lvp_icd.json"
echo "setup-lavapipe: lavapipe of Mesa $version in $dir"
