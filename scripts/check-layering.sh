#!/usr/bin/env bash
# Checks the crate layering of docs/ARCHITECTURE.md with `cargo tree`:
# - no plugin (anything under backends/, their cdylib crates, the
#   out-of-tree example) depends on the host, the build, the run-time
#   library or the remote;
# - no crate of the host links a decoder of artifacts (SPIR-V, naga,
#   shaderc, a plugin): it stores and hands back bytes it never reads;
# - the run-time library with default features pulls none of opendal,
#   tokio, rayon, toml or notify (an engine that only loads shaders);
# - the store links no plugin ABI (abi_stable);
# - the build-system contract depends on the device contract alone among
#   the workspace's crates, and the device contract on no other contract;
# - a device plugin's own code names nothing of the build-system contract
#   (it links it only through xr-plugin's root module, which lists both kinds);
# - a crate whose build script builds its shaders (xr-cargo, a
#   build-dependency) links none of the build into what it ships;
# - the Remote Execution client knows nothing of shaders, and the bot
#   nothing of XR: the same actions run on any engine's workers;
# - what an engine's build script (xr-cargo) and its program (xr-library)
#   pull with default features: at most 80 packages each, and no HTTP, TLS,
#   gRPC, Redis, cloud storage or async runtime (the shared cache and the
#   farm are features an engine asks for);
# - every plugin's shared library is a cdylib crate of its own, so that a
#   program can link the plugin crate beside others;
# - no broken fixture plugin is a member of the workspace;
# - every XR_* variable is read in one crate's code alone, so two front
#   ends cannot read the same setting two ways;
# - xr-build's modules import each other without a cycle (floors, each
#   importing only from those below it);
# - no host code calls a build system's compile but the chain's layers
#   (xr-build's execute/, and the worker that serves them): every compile
#   runs where the build's compiles run, in a worker within a time limit;
# - no code reads the environment but through xr-env's recording reader
#   (what a build script watches and the no-op stamp checks is its record),
#   except the few variables that never change what is built (cargo's
#   OUT_DIR, the terminal's, the display's);
# - no line of the host's code (its tests aside) names a shader language:
#   languages, and how their compiles reach files, are what plugins declare.
# Prints each rule it checks; exits 1 on the first broken one.
set -euo pipefail
cd "$(dirname "$0")/.."

failed=0
check() { # rule, package, forbidden regex, [cargo tree options]
    local rule=$1 package=$2 forbidden=$3 tree found
    # A cargo tree that fails (a renamed package) is a failure, not an empty list.
    if ! tree=$(cargo tree -p "$package" -e normal --prefix none "${@:4}" 2>&1); then
        echo "layering: FAIL $rule: cargo tree -p $package failed: $tree"
        failed=1
        return
    fi
    found=$(echo "$tree" | awk '{print $1}' | sort -u | grep -Ex "$forbidden" | grep -vx "$package" | tr '\n' ' ' || true)
    if [ -n "$found" ]; then
        echo "layering: FAIL $rule: $package depends on $found"
        failed=1
    else
        echo "layering: ok   $rule: $package"
    fi
}

# The plugin crates, the libraries users load (their cdylib crates) and the
# out-of-tree example a plugin author copies.
for manifest in backends/*/Cargo.toml backends/*/cdylib/Cargo.toml; do
    package=$(sed -n 's/^name = "\(.*\)"/\1/p' "$manifest" | head -1)
    check "a plugin never links the host" "$package" 'xr-host|xr-build|xr-library|xr-remote|xr-remote-exec|xr-cli'
done
check "a plugin never links the host" xr-compiler-wgsl 'xr-host|xr-build|xr-library|xr-remote|xr-remote-exec|xr-cli' \
    --manifest-path examples/plugin-wgsl/Cargo.toml
# An artifact's bytes are its build system's: the host stores, moves and
# hands them back, and links no SPIR-V, naga or shaderc reader and no
# plugin (xr-plugin-kit's source-bundle format, which it links, it never reads).
for package in xr-host xr-build xr-library xr-store xr-worker xr-cargo xr-cli; do
    check "the host decodes no artifact" "$package" \
        'xr-spirv|xr-spirv-object|xr-gl-common|xr-vulkan-common|xr-compiler-.*|xr-rhi-.*|naga|shaderc|shaderc-sys|spirv|rspirv|spirv-tools'
done
check "an engine that only loads shaders gets no build host" xr-library 'opendal|tokio|tonic|rayon|toml|notify|xr-build|xr-remote|xr-remote-exec'
# An engine pays for what it asks: the defaults of what it links.
weight() { # package
    local package=$1 tree count heavy
    if ! tree=$(cargo tree -p "$package" -e normal --prefix none 2>&1); then
        echo "layering: FAIL an engine's default weight: cargo tree -p $package failed: $tree"
        failed=1
        return
    fi
    count=$(echo "$tree" | sed 's/ (\*)$//' | sort -u | grep -c .)
    heavy=$(echo "$tree" | awk '{print $1}' | sort -u |
        grep -Ex 'reqwest|hyper|h2|rustls|ring|aws-lc-rs|aws-lc-sys|tonic|prost|redis|opendal|tokio|axum|quick-xml' |
        tr '\n' ' ' || true)
    if [ "$count" -gt 80 ] || [ -n "$heavy" ]; then
        echo "layering: FAIL an engine's default weight: $package pulls $count packages (at most 80)${heavy:+, among them $heavy}"
        failed=1
    else
        echo "layering: ok   an engine's default weight: $package pulls $count packages, no HTTP, TLS, gRPC, Redis or async runtime"
    fi
}
weight xr-cargo
weight xr-library
# A plugin crate exports no symbol (declare_plugin!): its cdylib crate does.
for manifest in backends/*/Cargo.toml; do
    if grep -q '^crate-type.*cdylib' "$manifest"; then
        echo "layering: FAIL $manifest builds a cdylib: a plugin's library is the crate in its cdylib/ directory"
        failed=1
    fi
done
check "the remote executor knows no shader" xr-remote-exec 'abi_stable|xr-sourcebuild|xr-device|xr-host|xr-store|xr-build|xr-worker|xr-remote'
check "the bot knows nothing of XR" xr-bot 'abi_stable|xr-sourcebuild|xr-device|xr-plugin|xr-host|xr-store|xr-build|xr-worker|xr-remote'
check "the store links no plugin ABI" xr-store 'abi_stable|xr-sourcebuild|xr-device'
check "the remote needs only the store" xr-remote 'abi_stable|xr-sourcebuild|xr-device|xr-host'
check "the contract is the ABI alone" xr-sourcebuild "xr-store|xr-plugin-kit|xr-host|xr-build|xr-library|xr-remote|serde|serde_json|libc" --depth 1
check "the device contract names no other" xr-device 'xr-sourcebuild|xr-plugin|xr-plugin-kit|xr-store|xr-host' --depth 1
check "the root module needs the two contracts alone" xr-plugin 'xr-store|xr-plugin-kit|xr-host|xr-build|xr-library|xr-remote' --depth 1
for manifest in backends/xr-rhi-*/Cargo.toml; do
    package=$(sed -n 's/^name = "\(.*\)"/\1/p' "$manifest" | head -1)
    # A device plugin whose device is a Rust object (wgpu) carries the one
    # build system that loads onto it, and says why in its manifest.
    carries=$(sed -n 's/^carries-loader = "\(.*\)"/\1/p' "$manifest")
    if [ -n "$carries" ]; then
        echo "layering: ok   a device plugin names no build-system contract: $package carries its loader: $carries"
        continue
    fi
    check "a device plugin names no build-system contract" "$package" 'xr-sourcebuild|xr-plugin-kit' --depth 1
done
check "a compiler worker loads plugins, it does not build" xr-worker 'xr-build|xr-library|xr-remote|xr-store|rayon|toml|opendal|tokio'
check "the host loads plugins, it does not build" xr-host 'xr-build|xr-library|xr-remote|xr-store|rayon|toml|opendal|tokio'
check "a crate whose build script builds its shaders links no build host" materials 'xr-build|xr-cargo|xr-worker|rayon|toml'
# The host knows device kinds only as names plugins declare: no line of
# it names a kind a plugin brought (wgpu's plugin is the test of that).
named=$(grep -rliE 'wgpu' --include='*.rs' xr-device/src xr-sourcebuild/src xr-plugin/src xr-store/src \
    xr-plugin-kit/src xr-host/src xr-worker/src xr-build/src xr-cargo/src xr-library/src xr-remote/src \
    xr-remote-exec/src xr-bot/src xr-cli/src || true)
if [ -n "$named" ]; then
    echo "layering: FAIL the host names a plugin's device kind (wgpu): $named"
    failed=1
else
    echo "layering: ok   no line of the host names a plugin's device kind (wgpu)"
fi
# The host knows languages only as names plugins declare (how a compile
# reaches other files, too: each pair says, SourceReach): no line of its
# code names a language in quotes. Its tests may (they play plugins), and
# its doc comments do; each `#[cfg(test)]` item (an inline module, or the
# file of one declared `mod name;`) and every comment line is left out.
languages=$(python3 - xr-host xr-build xr-library xr-cli xr-cargo xr-worker xr-store xr-remote \
    xr-remote-exec xr-bot <<'PY'
import os, re, sys
named = re.compile(r'"(glsl|hlsl|slang|wgsl|spirv)"')
literal = re.compile(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])\'')
test_attribute = re.compile(r'^\s*#\[cfg\(test\)\]\s*')
out_of_line = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?mod\s+(\w+)\s*;')

def module_dir(path):
    """The directory where a file's `mod name;` declarations are."""
    head, name = os.path.split(path)
    return head if name in ('lib.rs', 'main.rs', 'mod.rs') else path[:-3]

def code_lines(path, tests):
    """(number, line) of each line of `path` but comment lines and
    #[cfg(test)] items; the files of `#[cfg(test)] mod name;` into `tests`."""
    lines = open(path, encoding='utf-8').read().split('\n')
    i = 0
    while i < len(lines):
        attribute = test_attribute.match(lines[i])
        if not attribute:
            if not lines[i].lstrip().startswith('//'):
                yield i + 1, lines[i]
            i += 1
            continue
        # The item it marks: on the same line, or the next but attributes.
        j, item = i, lines[i][attribute.end():]
        while not item.strip() or item.lstrip().startswith('#['):
            j += 1
            if j == len(lines):
                return
            item = lines[j]
        declared = out_of_line.match(item)
        if declared:
            base = os.path.join(module_dir(path), declared.group(3))
            tests.update([base + '.rs', os.path.join(base, '')])
            i = j + 1
            continue
        # To the `;` that ends it, or the brace that closes it.
        depth, opened = 0, False
        while True:
            bare = literal.sub('""', item).split('//')[0]
            depth += bare.count('{') - bare.count('}')
            opened = opened or '{' in bare
            if (opened and depth <= 0) or (not opened and bare.rstrip().endswith(';')) or j + 1 == len(lines):
                break
            j += 1
            item = lines[j]
        i = j + 1

files = []
for crate in sys.argv[1:]:
    for top, dirs, names in os.walk(os.path.join(crate, 'src')):
        files += [os.path.join(top, n) for n in names if n.endswith('.rs')]
files.sort()
# First the test modules' files, wherever they are declared; then the rest.
tests = set()
for path in files:
    for _ in code_lines(path, tests):
        pass
for path in files:
    if any(path == t or (t.endswith(os.sep) and path.startswith(t)) for t in tests):
        continue
    for number, line in code_lines(path, set()):
        if named.search(line):
            print(f'{path}:{number}: {line.strip()}')
PY
)
if [ -n "$languages" ]; then
    echo "layering: FAIL the host names a language (a plugin declares its languages, and how their files are reached):"
    echo "$languages"
    failed=1
else
    echo "layering: ok   no line of the host names a language (glsl, hlsl, slang, wgsl, spirv) outside its tests"
fi
# The broken fixture plugins are a workspace of their own: no cargo command
# run in this workspace may build them next to `xr`, where discovery loads them.
fixtures=$(cargo metadata --no-deps --format-version 1 --offline 2>/dev/null |
    python3 -c 'import json, sys; print(" ".join(p["name"] for p in json.load(sys.stdin)["packages"] if p["name"].startswith("xr-fixture")))')
if [ -n "$fixtures" ]; then
    echo "layering: FAIL the fixtures are workspace members: $fixtures"
    failed=1
else
    echo "layering: ok   no fixture plugin is a member of the workspace"
fi
# Each XR_* name quoted in a crate's src/ (a read, or the constant a read
# uses), less the lines that set one for a child process or a test.
readers=$(for src in */src backends/*/src samples/*/src; do
    crate=${src%/src}
    [ "$crate" = tests ] && continue # the tests set variables, they read none
    grep -rhE '"XR_[A-Z0-9_]+"' --include='*.rs' "$src" 2>/dev/null |
        grep -vE '\.env\(|env_remove\(|set_var\(|remove_var\(' |
        grep -oE '"XR_[A-Z0-9_]+"' | sort -u | sed "s|\$| $crate|" ||
        true # a crate that names no variable
done | sort -u)
shared=$(echo "$readers" | awk 'NF == 2 {crates[$1] = crates[$1] " " $2; n[$1]++}
    END {for (v in n) if (n[v] > 1) printf "%s (%s ) ", v, crates[v]}')
if [ -n "$shared" ]; then
    echo "layering: FAIL a variable is read in two crates: $shared"
    failed=1
else
    echo "layering: ok   every XR_* variable is read in one crate"
fi
# A rule whose breaches are the lines `found`: ok with `rule`, else FAIL
# with `broken` and the lines.
none_found() { # found, rule, broken
    if [ -n "$1" ]; then
        echo "layering: FAIL $3"
        echo "$1"
        failed=1
    else
        echo "layering: ok   $2"
    fi
}
# A module cycle is a house without floors: nothing can be read, tested or
# moved without the rest.
if cycles=$(python3 scripts/module-cycles.py xr-build/src); then
    echo "layering: ok   xr-build's modules import each other without a cycle"
else
    echo "layering: FAIL xr-build's modules import each other in a cycle:"
    echo "$cycles"
    failed=1
fi
# A compile anywhere else in the host would run outside the workers: a
# crashing compiler would take the command down with it.
around_chain=$(grep -rnE '\.compile_(offline|for_store)\(' --include='*.rs' \
    xr-host/src xr-build/src xr-library/src xr-cli/src xr-cargo/src xr-worker/src xr-store/src xr-remote/src \
    xr-remote-exec/src xr-bot/src xr-bench/src 2>/dev/null |
    grep -vE '^(xr-build/src/execute/|xr-worker/src/serve\.rs:)' || true)
none_found "$around_chain" "every compile of the host runs through the chain's layers (execute/, the worker)" \
    "a host crate compiles around the chain's layers (xr-build's execute/, the worker):"
# Every read of the environment goes through xr-env (xr_env::var, var_os),
# which records it; a read around it would be a variable no build script
# watches. Cargo's, the terminal's and the display's are read directly.
around=$(grep -rnE '(^|[^_[:alnum:]])env::vars?(_os)?\b' --include='*.rs' */src backends/*/src samples/*/src 2>/dev/null |
    grep -vE '^(xr-env|tests)/' |
    sed -E 's/std::env::var(_os)?\("(OUT_DIR|RUST_LIB_BACKTRACE|CLICOLOR_FORCE|NO_COLOR|TERM|DISPLAY)"\)//g' |
    grep -E '(^|[^_[:alnum:]])env::vars?(_os)?\b' || true)
none_found "$around" "every read of the environment goes through xr-env (what builds watch is its record)" \
    "the environment is read around xr-env's recording reader:"
exit $failed
