#!/usr/bin/env python3
"""Scores c2s's PDF text against poppler's pdftotext, page by page: for each PDF, the mean over
its pages of word-unigram F1 (what was extracted) and word-bigram F1 (in what order). The PDFs
are built with c2s (one document per chapter, `[page N]` marks), and each page's text is cut
back out of the documents by those marks. Needs pdftotext (Debian's poppler-utils).
Usage: scripts/eval-pdf.py C2S_BINARY PDF..."""
import collections, json, os, re, subprocess, sys, tempfile

def words(t):
    return re.findall(r"[a-z0-9]+", t.lower())

def f1(a, b):
    ca, cb = collections.Counter(a), collections.Counter(b)
    inter = sum((ca & cb).values())
    if not a and not b:
        return 1.0
    if not inter:
        return 0.0
    p, r = inter / len(a), inter / len(b)
    return 2 * p * r / (p + r)

def pages_of_output(out):
    """Page number -> text, from the documents of the output (split at their `[page N]` marks;
    a document's first page is the one its source names)."""
    pages = collections.defaultdict(str)
    index = json.load(open(os.path.join(out, "documents.json")))
    for d in index.values():
        m = re.search(r"#page=(\d+)$", d["source"])
        first = int(m.group(1)) if m else 1
        text = open(os.path.join(out, d["file"])).read().split("\n---\n", 1)[-1]
        # Headings c2s added from the outline are not page text.
        text = re.sub(r"(?m)^#+ .*$", "", text)
        page = first
        for piece in re.split(r"(?m)^\[page (\d+)\]$", text):
            if piece.isdigit():
                page = int(piece)
            else:
                pages[page] += piece
    return pages

binary, pdfs = sys.argv[1], sys.argv[2:]
rows = []
for pdf in pdfs:
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "c")
        os.mkdir(corpus)
        os.symlink(os.path.abspath(pdf), os.path.join(corpus, os.path.basename(pdf)))
        out = os.path.join(tmp, "out")
        # Plain files: no host's token cap splits a long chapter into parts.
        subprocess.run([binary, "build", corpus, "--out", out, "--set", f"cache.path={tmp}/m.sqlite",
                        "--set", "output.host=files", "-q"], check=True, capture_output=True)
        ours = pages_of_output(out)
        ref = subprocess.run(["pdftotext", "-enc", "UTF-8", pdf, "-"], capture_output=True,
                             check=True).stdout.decode("utf-8", "replace").split("\f")
        if ref and not ref[-1].strip():
            ref.pop()
        uni = [f1(words(ours.get(i + 1, "")), words(r)) for i, r in enumerate(ref)]
        bi = [f1(list(zip(words(ours.get(i + 1, "")), words(ours.get(i + 1, ""))[1:])),
                 list(zip(words(r), words(r)[1:]))) for i, r in enumerate(ref)]
        rows.append((os.path.basename(pdf), len(ref), sum(uni) / len(uni), sum(bi) / len(bi)))
        print(f"{rows[-1][0]:28} {rows[-1][1]:5} pages  unigram F1 {rows[-1][2]:.3f}  bigram F1 {rows[-1][3]:.3f}", flush=True)
n = len(rows)
print(f"{'mean of ' + str(n) + ' files':28} {sum(r[1] for r in rows):5} pages  unigram F1 {sum(r[2] for r in rows) / n:.3f}  bigram F1 {sum(r[3] for r in rows) / n:.3f}")
