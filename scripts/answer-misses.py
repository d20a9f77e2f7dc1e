#!/usr/bin/env python3
"""Where each answering method lost a question, from `c2s eval --json` and the built tree.

Usage: scripts/answer-misses.py RESULTS.json TREE_DIR [DATA_DIR]

For each answering method (rag, agentic-search, agent, guided), each question falls in one of:
  cited      the answer cites a gold document
  answering  a gold document was opened (shown) but the answer does not cite it
  leaf       no gold document opened; one of its leaf group's documents was
  group      no document of the gold's leaf group opened; one of its top-level skill's was
  top-level  nothing opened under the gold's top-level skill (or nothing opened)
and the mean token F1 of each class. TREE_DIR is the output the evaluation built (its
tree.json); DATA_DIR (default: ../shared/data/<dataset>) gives the gold ids.
"""
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    results = json.loads(Path(sys.argv[1]).read_text())
    tree = json.loads((Path(sys.argv[2]) / "tree.json").read_text())
    data = Path(sys.argv[3]) if len(sys.argv) > 3 else (
        Path(__file__).resolve().parent.parent.parent / "shared/data" / results["dataset"])
    gold = {}
    for line in (data / "queries.jsonl").read_text().splitlines():
        if line.strip():
            q = json.loads(line)
            gold[q["id"]] = set(q["gold_ids"])
    leaf_of, top_of = {}, {}
    for n in tree["nodes"]:
        top = "/".join(n["path"].split("/")[:2])
        for d in n["docs"]:
            leaf_of[d] = n["path"]
            top_of[d] = top
    classes = defaultdict(Counter)
    f1 = defaultdict(lambda: defaultdict(list))
    for r in results["results"]:
        m = r["method"]
        if m not in ("rag", "agentic-search", "agent", "guided"):
            continue
        g = gold.get(r["query"], set())
        metrics = r["metrics"]
        opened = set(r.get("ids") or [])
        cited = metrics.get("citation_recall", 0) > 0
        if cited:
            c = "cited"
        elif opened & g:
            c = "answering"
        elif any(leaf_of.get(o) in {leaf_of.get(x) for x in g} for o in opened):
            c = "leaf"
        elif any(top_of.get(o) in {top_of.get(x) for x in g} for o in opened):
            c = "group"
        else:
            c = "top-level"
        classes[m][c] += 1
        f1[m][c].append(metrics.get("token_f1", 0.0))
    order = ["cited", "answering", "leaf", "group", "top-level"]
    print("| method | " + " | ".join(order) + " |")
    print("|---|" + "---|" * len(order))
    for m in ("rag", "agentic-search", "agent", "guided"):
        if m not in classes:
            continue
        cells = []
        for c in order:
            n = classes[m][c]
            mean = sum(f1[m][c]) / n if n else 0.0
            cells.append(f"{n} (F1 {mean:.2f})" if n else "0")
        print(f"| {m} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
