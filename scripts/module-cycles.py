#!/usr/bin/env python3
"""Lists the import cycles between the top-level modules of a crate: the
modules of `SRC` (default xr-build/src) as nodes, an edge where a module's
code (not its comments or its test module) names `crate::other` or imports
from it, root re-exports resolved to the module that defines them.

    scripts/module-cycles.py [SRC] [-v]

Prints each edge that lies on a cycle; exits 1 when there is one (run by
scripts/check-layering.sh). `-v` prints every module's imports first.
"""
import glob
import re
import sys

args = [a for a in sys.argv[1:] if a != '-v']
root = args[0] if args else 'xr-build/src'
lib = open(f'{root}/lib.rs').read()
# `pub use module::{A, B}` and `pub use module::A` at the root: A is module's.
alias = {}
for module, names in re.findall(r'pub use (\w+)::\{([^}]*)\};', lib, re.S):
    for name in re.split(r',\s*', names):
        name = name.strip().split(' ')[0]
        if name:
            alias[name] = module
for module, name in re.findall(r'pub use (\w+)::(\w+);', lib):
    alias[name] = module


def top_level_items(group):
    """The first path segment of each item of a `use crate::{…}` group."""
    depth, current, parts = 0, '', []
    for ch in group:
        depth += ch == '{'
        depth -= ch == '}'
        if ch == ',' and depth == 0:
            parts.append(current)
            current = ''
        else:
            current += ch
    parts.append(current)
    return [m.group(1) for p in parts if (m := re.match(r'\s*(\w+)', p))]


imports = {}
for path in glob.glob(f'{root}/**/*.rs', recursive=True):
    relative = path[len(root) + 1:]
    module = relative.split('/')[0].removesuffix('.rs')
    if module == 'lib' or relative.endswith('/tests.rs'):
        continue
    code = re.split(r'#\[cfg\(test\)\]\s*mod tests', open(path).read())[0]
    code = '\n'.join(line for line in code.splitlines() if not line.strip().startswith('//'))
    named = set(re.findall(r'crate::(\w+)', code))
    for group in re.findall(r'use crate::\{([^;]*)\};', code, re.S):
        named.update(top_level_items(group))
    imports.setdefault(module, set()).update(alias.get(n, n) for n in named)
modules = set(imports)
for module in imports:
    imports[module] = {m for m in imports[module] if m in modules and m != module}
if '-v' in sys.argv:
    for module in sorted(imports):
        print(module, '->', ', '.join(sorted(imports[module])) or '-')


def reaches(start, goal):
    seen, stack = set(), [start]
    while stack:
        for next_module in imports.get(stack.pop(), ()):
            if next_module == goal:
                return True
            if next_module not in seen:
                seen.add(next_module)
                stack.append(next_module)
    return False


cycles = [(a, b) for a in sorted(modules) for b in sorted(imports[a]) if reaches(b, a)]
for a, b in cycles:
    print(f'{root}: {a} -> {b} is on a cycle')
sys.exit(1 if cycles else 0)
