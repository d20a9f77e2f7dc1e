#!/usr/bin/env python3
"""Classify the navigator's misses from `c2s eval --json FILE`.

usage: analyze_misses.py EVAL_JSON OUT_DIR DATA_DIR [METHOD]

OUT_DIR is the built tree the eval used (default location: cache/eval/<dataset>). For every
query whose gold documents are all missing from the method's top 5, says where navigation
went wrong: the top-level skill was not in the first beam ("top-level routing"), a lower
level dropped the gold's branch ("wrong branch below the top"), or the gold's leaf was
reached but its row ranked below 5 ("leaf ranking").
"""
import collections, json, os, sys

def main():
    ev, out, data = sys.argv[1], sys.argv[2], sys.argv[3]
    method = sys.argv[4] if len(sys.argv) > 4 else "navigator"
    rep = json.load(open(ev))
    home = {}
    tree_json = os.path.join(out, "tree.json")
    if os.path.exists(tree_json):
        tree = json.load(open(tree_json))
        for n in tree["nodes"]:
            nav = "SKILL.md" if n["path"].count("/") == 1 else "INDEX.md"
            for d in n["docs"]:
                home[d] = f'{n["path"]}/{nav}'
    else:  # outputs of c2s before tree.json: rows "- `id` — ..."
        for root, _, files in os.walk(os.path.join(out, "skills")):
            for f in files:
                if f.endswith(".md"):
                    rel = os.path.relpath(os.path.join(root, f), out)
                    for line in open(os.path.join(root, f)):
                        if line.startswith("- `"):
                            home[line.split("`")[1]] = rel
    aliases = {}
    for did, d in json.load(open(os.path.join(out, "documents.json"))).items():
        for a in d.get("aliases", []):
            aliases[a] = did
    queries = {}
    for line in open(os.path.join(data, "queries.jsonl")):
        q = json.loads(line)
        queries[q["id"]] = q
    kinds = collections.Counter()
    total = 0
    for r in rep["results"]:
        if r["method"] != method:
            continue
        total += 1
        if r["metrics"].get("hit@5", 0) > 0:
            continue
        gold = [aliases.get(g, g) for g in queries.get(r["query"], {}).get("gold_ids", [])]
        leaves = [home[g] for g in gold if g in home]
        read = set(r["path"])
        if not r.get("routed"):
            kinds["top-level routing"] += 1
        elif not any(l in read for l in leaves):
            kinds["wrong branch below the top"] += 1
        else:
            kinds["leaf ranking"] += 1
    print(f"{method}: {sum(kinds.values())} misses (no gold in top 5) of {total} queries")
    for k, n in kinds.most_common():
        print(f"  {k:<28} {n:4d}  ({n / max(total, 1):.1%} of queries)")

if __name__ == "__main__":
    main()
