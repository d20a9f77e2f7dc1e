#!/usr/bin/env python3
"""Readability report of a built c2s output (issue 26): how much of the navigation text reads
as a person wrote it. Reads only the output folder (tree.json, documents.json, SKILL.md /
INDEX.md), so it works on any output, whichever backend built it.

usage: readability.py OUT [--gold FILE] [--json]

Metrics (each a share in [0, 1]; the targets in brackets):
  labels_shared    labels whose every word occurs in the title or headings of at least two
                   member documents (one, for a group of one document); a member of a group
                   is every document below it, and a document counts once however many of
                   its headings repeat the word (its title and its H1 are one member) [>= 0.9]
  cards_cut        cards' one-lines (documents.json) cut mid-sentence without "…": the
                   document's text goes on with the same sentence right after it [0]
  rows_cut         document rows whose one-line is cut: shorter than its card's without "…",
                   or its card's one-line is cut [0]
  term_lists       descriptions (SKILL.md / INDEX.md frontmatter) whose first sentence is a
                   list of terms: "Covers a, b and c", or three or more list items of at most
                   two words each (a quoted title counts as one long item) [0]
  entity_precision entity tags (tree.json) that are in the gold list (--gold: one name a
                   line, # comments, case-insensitive) [>= 0.8]; absent without --gold
"""
import json
import os
import re
import sys

WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
ENDS = (".", "!", "?", "…", ":", ";", ")", '"', "'", "`", "”", "’")


def words(text):
    return WORD.findall(text.lower())


def headings(text):
    return [l.lstrip("#").strip() for l in text.splitlines() if l.startswith("#")]


def frontmatter_field(text, field):
    if not text.startswith("---\n"):
        return None
    front = text[4:].split("\n---", 1)[0]
    for line in front.splitlines():
        if line.startswith(field + ":"):
            value = line[len(field) + 1 :].strip()
            if value[:1] in "\"'":
                try:
                    return json.loads(value) if value[0] == '"' else value.strip("'")
                except json.JSONDecodeError:
                    return value.strip("\"'")
            return value
    return None


def norm(text):
    return " ".join(text.split())


def card_cut(one_line, text):
    """The one-line stops where the document's sentence goes on, on the same line (and says
    nothing of it)."""
    one = norm(one_line).rstrip(",;:-–— ")
    if not one or one.endswith(ENDS):
        return False
    body = re.sub(r"[*_`>\[\]]", "", text)
    pattern = r"[ \t]+".join(re.escape(w) for w in one.split())
    m = re.search(pattern, body)
    if not m:
        return False
    return bool(re.match(r"[,;:]?[ \t]+[\w(\"'“]", body[m.end() :]))


def row_cut(row, card, cut):
    row = norm(row)
    if row.endswith("…"):
        return False
    return cut or norm(card).rstrip(",;:-–— ") != row.rstrip(",;:-–— ")


def first_sentence(text):
    m = re.search(r"[.!?](\s|$)", text)
    return text[: m.start() + 1] if m else text


def is_term_list(description):
    s = first_sentence(description).strip().rstrip(".")
    if re.match(r"^(Covers|Topics such as)\b", s):
        return True
    # A quoted title (“Custom domains and TLS”) is one item, however it is worded.
    s = re.sub(r"“[^”]*”|\"[^\"]*\"", "a quoted title", s)
    items = [i.strip() for i in re.split(r",\s*|\s+and\s+", s) if i.strip()]
    if len(items) < 3:
        return False
    short = sum(1 for i in items if len(i.split()) <= 2)
    return short / len(items) >= 0.75


def label_ok(label, members):
    """`members`: one text per member document, its title and headings."""
    need = 1 if len(members) < 2 else 2
    sets = [set(words(t)) for t in members]
    return all(sum(1 for s in sets if w in s) >= need for w in words(label))


def nav_files(out):
    for d, _, files in os.walk(os.path.join(out, "skills")):
        for f in files:
            if f in ("SKILL.md", "INDEX.md"):
                yield os.path.join(d, f)


# A row names its document by a link to its file (`](docs/<name>.md)`, named after its source),
# a bundle section (`](bundles/NNN.md#<id>)`) or, served by id, `(id: `<id>`)`.
ROW_ID = re.compile(r"\]\(([^)#]*docs/[^)#]+\.md)\)|\.md#([^)]+)\)|\(id: `([^`]+)`\)")


def row_one_lines(page, file_ids=None, page_dir=""):
    """(id, one-line) of each document row: `- <title or link> — <one-line> — <phrases>`.
    `file_ids` maps a document file (relative to the output) to its id; `page_dir` is the
    page's folder, relative to the output."""
    out = []
    section = None
    for line in page.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        if section == "Contents" and line.startswith("- ") and not line.startswith("- @see"):
            parts = line.split(" — ")
            # Group rows read `- [group](…) — N documents — summary`: not document rows.
            m = ROW_ID.search(parts[0])
            if m and len(parts) >= 2:
                if m.group(1):
                    f = os.path.normpath(os.path.join(page_dir, m.group(1)))
                    if file_ids is None:
                        doc_id = os.path.basename(f)[: -len(".md")]
                    else:
                        doc_id = file_ids.get(f)
                else:
                    doc_id = m.group(2) or m.group(3)
                if doc_id:
                    out.append((doc_id, parts[1]))
    return out


def share(hits, total):
    return round(hits / total, 3) if total else None


def report(out, gold_path=None):
    tree = json.load(open(os.path.join(out, "tree.json"), encoding="utf-8"))
    docs = json.load(open(os.path.join(out, "documents.json"), encoding="utf-8"))
    nodes = tree["nodes"]

    def member_docs(i):
        n = nodes[i]
        ids = list(n.get("docs", []))
        for c in n.get("children", []):
            ids += member_docs(c)
        return ids

    labels = ok = 0
    for i, n in enumerate(nodes):
        members = []
        for d in member_docs(i):
            doc = docs.get(d)
            if doc:
                members.append("\n".join([doc["title"]] + headings(doc["text"])))
        labels += 1
        ok += label_ok(n["label"], members)

    cut = {i: card_cut(d.get("one_line", ""), d["text"]) for i, d in docs.items()}
    # Before document files were named after their sources (no `file` in documents.json),
    # `docs/<id>.md` named the id.
    file_ids = {d["file"]: i for i, d in docs.items() if "#" not in d.get("file", "#")} or None
    rows = cut_rows = descs = lists = 0
    for path in nav_files(out):
        text = open(path, encoding="utf-8").read()
        desc = frontmatter_field(text, "description")
        if desc:
            descs += 1
            lists += is_term_list(desc)
        page_dir = os.path.relpath(os.path.dirname(path), out)
        for doc_id, one in row_one_lines(text, file_ids, page_dir):
            doc = docs.get(doc_id)
            if doc:
                rows += 1
                cut_rows += row_cut(one, doc["one_line"], cut[doc_id])

    result = {
        "output": out,
        "labels": labels,
        "labels_shared": share(ok, labels),
        "rows": rows,
        "rows_cut": share(cut_rows, rows),
        "cards": len(cut),
        "cards_cut": share(sum(cut.values()), len(cut)),
        "descriptions": descs,
        "term_lists": share(lists, descs),
    }
    if gold_path:
        gold = {
            l.strip().lower()
            for l in open(gold_path, encoding="utf-8")
            if l.strip() and not l.startswith("#")
        }
        tags = sorted({e for n in nodes for e in n.get("entities", [])})
        hits = [t for t in tags if t.lower() in gold]
        result["entities"] = len(tags)
        result["entity_precision"] = share(len(hits), len(tags))
        result["entities_not_in_gold"] = [t for t in tags if t.lower() not in gold]
    return result


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    gold = args[args.index("--gold") + 1] if "--gold" in args else None
    r = report(args[0], gold)
    if "--json" in args:
        print(json.dumps(r, ensure_ascii=False, indent=2))
        return
    for k, v in r.items():
        print(f"{k:18} {v}")


if __name__ == "__main__":
    main()
