#!/usr/bin/env python3
"""Prints which modules of src/ each module uses, and any import cycle: between the top-level
modules, and between the files (submodules) of any one folder. A reference is a `crate::a::b`,
`super::x` or grouped `use crate::a::{b, c::D}` path; it links the two modules where its path and
the using file's module part. Test code (`tests.rs`, and what follows `#[cfg(test)]`) may reach
anywhere. Usage: scripts/module-deps.py [--cycles] [--folder a/b]"""
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
IDENT = r"[a-z_][a-z0-9_]*"


def module_of(rel):
    """The module path of a file: src/a/b.rs -> [a, b]; src/a/mod.rs -> [a]."""
    parts = rel.removesuffix(".rs").split(os.sep)
    if parts[-1] == "mod":
        parts.pop()
    return parts


def resolve(here, head, rest):
    """The absolute module path of `head::rest` written in the module `here` (None if outside)."""
    segs = [s for s in rest.split("::") if s]
    if head == "crate":
        return segs
    base = list(here)
    for s in ["super"] + segs:
        if s != "super":
            break
        if not base:
            return None
        base.pop()
    while segs and segs[0] == "super":
        segs.pop(0)
    return base + segs


def references(here, text):
    found = []
    for head, rest in re.findall(rf"\b(crate|super)((?:::(?:super|{IDENT}))+)", text):
        p = resolve(here, head, rest)
        if p:
            found.append(p)
    # Grouped imports: `use crate::a::{b, c::D};` names a::b and a::c.
    for head, rest, group in re.findall(
        rf"use (crate|super)((?:::(?:super|{IDENT}))*)::\{{([^;]*)\}};", text, re.S
    ):
        prefix = resolve(here, head, rest) if rest or head == "super" else []
        if prefix is None:
            continue
        for item in re.findall(rf"(?:^|[,{{\s])({IDENT})(?=::|\s*[,}}]|\s*$)", group):
            if item != "self":
                found.append(prefix + [item])
    return found


edges = {}  # folder (tuple) -> {child: set(child)}
for d, _, files in os.walk(root):
    for f in files:
        if not f.endswith(".rs") or f == "tests.rs":
            continue
        rel = os.path.relpath(os.path.join(d, f), root)
        here = module_of(rel)
        if here[0] in ("lib", "main"):
            continue
        text = open(os.path.join(d, f), encoding="utf-8").read().split("#[cfg(test)]")[0]
        for target in references(here, text):
            common = 0
            while common < min(len(here), len(target)) and here[common] == target[common]:
                common += 1
            if common < len(here) and common < len(target):
                folder = tuple(here[:common])
                edges.setdefault(folder, {}).setdefault(here[common], set()).add(target[common])


def cycles(deps):
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


def name(folder):
    return "/".join(folder) if folder else "src"


args = sys.argv[1:]
if "--cycles" in args:
    bad = 0
    for folder in sorted(edges):
        for c in cycles(edges[folder]):
            print(f"{name(folder)}: " + " -> ".join(c))
            bad += 1
    sys.exit(1 if bad else 0)
folder = ()
if "--folder" in args:
    folder = tuple(args[args.index("--folder") + 1].strip("/").split("/"))
for m, deps in sorted(edges.get(folder, {}).items()):
    print(f"{m}: {', '.join(sorted(deps))}")
