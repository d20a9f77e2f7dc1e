#!/usr/bin/env bash
# Usage: scripts/papercuts.sh BIN — the CLI papercuts of issue 52, run with BIN in a fresh folder
# (bench/results/newcomer.md shows its output before and after).
B=$1; d=$(mktemp -d); cd $d
mkdir docs empty mixed; for i in 1 2 3 4 5; do printf "# Page $i\n\nText about invoices and domains, page $i.\n" > docs/p$i.md; done; echo "# a" > mixed/a.md
show() { echo "\$ c2s ${*}"; "$B" "$@" 2>&1 | head -${LINES_:-6} | sed "s|$d|DIR|g"; echo "(exit ${PIPESTATUS[0]})"; echo; }
"$B" build docs --out skills-out -q
show ask --offline "invoices" skills-out -q
show clean --out skills-out -q
show clean --out skills-out --cache
mkdir fresh && cd fresh && mkdir empty
show build empty --out out2
echo "\$ ls -A (a fresh folder, after the failed build)"; ls -A | tr '\n' ' '; echo; echo
cd ..
show build mixed --out /proc/x
"$B" build docs --out skills-out -q; echo "edited" >> skills-out/skills/*/SKILL.md 2>/dev/null || echo edited >> $(ls skills-out/skills/*/SKILL.md | head -1)
show pack --out skills-out
show completions bash
show init
LINES_=3 show build docs --out skills-out -v
