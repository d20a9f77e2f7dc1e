#!/usr/bin/env python3
"""Docs-repo report (issue 48): how well a built output follows a documentation repository as
its authors wrote it. The measures read only the output folders (documents.json and the
Markdown files under skills/), so they work on any output, whichever backend built it.

usage: docs-report.py BIN REPO:DOCS [REPO:DOCS ...] [--set KEY=VALUE ...] [--runs N] [--json]

  BIN        the c2s binary
  REPO:DOCS  a repository folder and its docs folder inside it, e.g.
             ../shared/data/docs-repos/uv:docs (the repository is copied to a temporary
             folder for the stability runs; nothing is written inside it)
  --set      passed to every build (e.g. tree.structure=cluster for the clustered tree)
  --runs     stability runs, each removing a different 3% of the pages (default 3)

Measures (the targets in brackets):
  coherence    for each source folder with two pages or more, the share of its pages in the
               top-level skill that holds most of them; the mean over pages [>= 0.9]
  stability    pair agreement at the top level between the build of the whole repo and a
               cold build without 3% of its pages: the share of pairs of pages present in
               both whose together-or-apart relation is the same [>= 0.9]
  leftovers    site-generator syntax in SKILL.md and INDEX.md files: attribute lists,
               include markers, admonition, tab and container markers, terminal HTML, reST
               and MyST roles, directives and targets [0]
  unresolved   include markers left in the documents' text: `{* … *}`, `--8<--`,
               `{{#include …}}` (not escaped) [0]
  components   MDX/JSX component tags (`<Card`, `</Tabs>`) left in the documents' text outside
               code [0]
  broken       relative links in the output's Markdown files whose target does not exist [0]
  skills       top-level skills, and the most files one of them holds
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

LEFTOVER = re.compile(
    r"\{\s*#[\w-]+\s*\}|\{:\s*[.#]|\{\*|\*\}|--8<--|\{\{#(?:rustdoc_)?include|^\s*(?:!!!|\?\?\?|///|:::|===\s+\")"
    r"|<font\b|\bhl\["
    # reST and MyST: roles, directives, targets.
    r"|:[a-z]+(?::[a-z]+)?:`|\{[a-z][\w:.-]*\}`|^\.\. [\w:-]+::|^\([^()\s]+\)=\s*$",
    re.M,
)
# mdBook's own pattern: a helper names a file (`{{#include}}` alone is text).
INCLUDE = re.compile(r"\{\*\s*[^*]+\*\}|--8<--|(?<!\\)\{\{#(?:rustdoc_)?include\s+[^}]+\}\}")
ESCAPED = re.compile(r"\\\{\{#(?:rustdoc_)?include\s+[^}]+\}\}")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def build(binary, repo, docs, out, cache, sets):
    # Run in the repository, as its authors would: includes read inside it (the project root).
    cmd = [binary, "build", docs, "--out", out, "--set", f"cache.path={cache}", "--quiet"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def skill_of(out):
    """Source path → top-level skill folder, from documents.json."""
    docs = json.load(open(os.path.join(out, "documents.json"), encoding="utf-8"))
    return {d["source"]: d["file"].split("/")[1] for d in docs.values()}


def coherence(skills):
    folders = {}
    for src, skill in skills.items():
        folders.setdefault(os.path.dirname(src.split(":")[0]), []).append(skill)
    kept = total = 0
    for members in folders.values():
        if len(members) < 2:
            continue
        kept += max(members.count(s) for s in set(members))
        total += len(members)
    return kept / total if total else 1.0


def agreement(a, b):
    common = sorted(set(a) & set(b))
    same = pairs = 0
    for i, x in enumerate(common):
        for y in common[i + 1 :]:
            pairs += 1
            same += (a[x] == a[y]) == (b[x] == b[y])
    return same / pairs if pairs else 1.0


def nav_files(out):
    for d, _, files in os.walk(os.path.join(out, "skills")):
        for f in files:
            if f in ("SKILL.md", "INDEX.md"):
                yield os.path.join(d, f)


def markdown_files(out):
    for d, _, files in os.walk(out):
        for f in files:
            if f.endswith(".md"):
                yield os.path.join(d, f)


def leftovers(out):
    return sum(len(LEFTOVER.findall(open(f, encoding="utf-8").read())) for f in nav_files(out))


def unresolved(out, docs_dir):
    """Include markers in the documents' text, less those the source escapes (mdBook shows
    `\\{{#include …}}` as the text `{{#include …}}`)."""
    docs = json.load(open(os.path.join(out, "documents.json"), encoding="utf-8"))
    n = 0
    for d in docs.values():
        found = len(INCLUDE.findall(d.get("text", "")))
        try:
            src = open(os.path.join(docs_dir, d["source"]), encoding="utf-8").read()
        except OSError:
            src = ""
        n += max(0, found - len(ESCAPED.findall(src)))
    return n


COMPONENT = re.compile(r"</?[A-Z][A-Za-z0-9]*(?:\.[A-Za-z]+)?(?=[\s/>])")


def components(out):
    """JSX component tags in the documents' text, outside fenced and inline code."""
    docs = json.load(open(os.path.join(out, "documents.json"), encoding="utf-8"))
    n = 0
    for d in docs.values():
        text = re.sub(r"```.*?```", "", d.get("text", ""), flags=re.S)
        text = re.sub(r"`[^`\n]*`", "", text)
        n += len(COMPONENT.findall(text))
    return n


def broken_links(out):
    broken = total = 0
    for f in markdown_files(out):
        text = open(f, encoding="utf-8").read()
        # Code is not a link.
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        text = re.sub(r"`[^`\n]*`", "", text)
        for target in LINK.findall(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
                continue
            path = target.split("#")[0].split("?")[0]
            if not path:
                continue
            total += 1
            if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(f), path))):
                broken += 1
    return broken, total


def files_per_skill(out):
    sizes = {}
    for s in os.listdir(os.path.join(out, "skills")):
        n = sum(len(fs) for _, _, fs in os.walk(os.path.join(out, "skills", s)))
        sizes[s] = n
    return len(sizes), max(sizes.values(), default=0)


def pages(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        for f in sorted(files):
            if f.endswith((".md", ".mdx")) and f != "SUMMARY.md" and not f.startswith("_"):
                out.append(os.path.join(d, f))
    return out


def report(binary, spec, sets, runs, tmp):
    repo, docs = spec.split(":")
    name = os.path.basename(os.path.normpath(repo))
    out = os.path.join(tmp, f"{name}-out")
    build(binary, repo, docs, out, os.path.join(tmp, f"{name}.sqlite"), sets)
    whole = skill_of(out)
    stab = []
    for run in range(runs):
        copy = os.path.join(tmp, f"{name}-copy{run}")
        shutil.copytree(repo, copy)
        listed = pages(os.path.join(copy, docs))
        for p in listed[run::33]:
            os.remove(p)
        o2 = os.path.join(tmp, f"{name}-out{run}")
        build(binary, copy, docs, o2, os.path.join(tmp, f"{name}-{run}.sqlite"), sets)
        # A build without a config shows sources relative to the corpus folder: the same in both.
        stab.append(agreement(whole, skill_of(o2)))
    broken, links = broken_links(out)
    skills, most = files_per_skill(out)
    return {
        "repo": name,
        "pages": len(whole),
        "coherence": round(coherence(whole), 3),
        "stability": round(sum(stab) / len(stab), 3) if stab else None,
        "leftovers": leftovers(out),
        "unresolved": unresolved(out, os.path.join(repo, docs)),
        "components": components(out),
        "broken_links": broken,
        "links": links,
        "skills": skills,
        "most_files_in_a_skill": most,
    }


def main(argv):
    as_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    sets, runs, rest = [], 3, []
    it = iter(argv)
    for a in it:
        if a == "--set":
            sets.append(next(it))
        elif a == "--runs":
            runs = int(next(it))
        else:
            rest.append(a)
    if len(rest) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(rest[0])
    with tempfile.TemporaryDirectory() as tmp:
        rows = [report(binary, spec, sets, runs, tmp) for spec in rest[1:]]
    if as_json:
        print(json.dumps(rows, indent=1))
        return
    cols = ["repo", "pages", "coherence", "stability", "leftovers", "unresolved", "components", "broken_links", "links", "skills", "most_files_in_a_skill"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r[c]) for c in cols))


if __name__ == "__main__":
    main(sys.argv[1:])
