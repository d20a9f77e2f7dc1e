#!/usr/bin/env python3
"""Prints which top-level modules of src/ each module uses (`crate::X` paths and `use crate::X`),
and any import cycle between top-level modules. Usage: scripts/module-deps.py [--cycles]"""
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
deps = {}
for d, _, files in os.walk(root):
    for f in files:
        if not f.endswith(".rs"):
            continue
        path = os.path.join(d, f)
        rel = os.path.relpath(path, root)
        top = rel.split(os.sep)[0].removesuffix(".rs")
        # A `tests.rs` file is a test module of its own (`#[cfg(test)] mod tests;`).
        if top in ("lib", "main") or f == "tests.rs":
            continue
        text = open(path, encoding="utf-8").read()
        # Test modules may reach anywhere.
        text = text.split("#[cfg(test)]")[0]
        used = set(re.findall(r"crate::([a-z_]+)", text))
        for group in re.findall(r"use crate::\{([^;]*)\};", text, re.S):
            used |= set(re.findall(r"(?:^|[,{\s])([a-z_]+)::", group))
        deps.setdefault(top, set()).update(u for u in used if u != top)


def cycles():
    found = []
    def walk(node, stack):
        for n in sorted(deps.get(node, ())):
            if n in stack:
                found.append(stack[stack.index(n):] + [n])
            elif len(stack) < 8:
                walk(n, stack + [n])
    for m in sorted(deps):
        walk(m, [m])
    seen, out = set(), []
    for c in found:
        key = frozenset(c)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


if "--cycles" in sys.argv:
    cs = cycles()
    for c in cs:
        print(" -> ".join(c))
    sys.exit(1 if cs else 0)
for m in sorted(deps):
    print(f"{m}: {', '.join(sorted(deps[m]))}")
