#!/usr/bin/env python3
"""Deterministic synthetic corpus with topical structure, for build benchmarks.

usage: gen_synth.py N OUT_DIR [--seed S]

Writes N Markdown files under OUT_DIR/area-XX/topic-YYY/doc-NNNNNN.md. Areas have
their own vocabulary, topics within an area have theirs, and every document mixes its
topic's words, its area's words and common English, so the corpus has a real
two-level topical structure. Words come from c2s's built-in background table.

Areas and topics take disjoint slices of the rare words while they last (about 68,000
documents); beyond that each takes a sample of its own (seeded per area/topic, so the main
random stream, and every smaller corpus, stays the same).
"""
import os
import random
import sys


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    n, out = int(args[0]), args[1]
    seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 7
    rng = random.Random(seed)
    here = os.path.dirname(os.path.abspath(__file__))
    table = os.path.join(here, "..", "src", "llm", "background_en.tsv")
    words = []
    for line in open(table, encoding="utf-8"):
        if line.startswith("#"):
            continue
        w, z = line.rstrip("\n").split("\t")
        words.append((w, int(z)))
    common = [w for w, z in words if z >= 560]
    rare = [w for w, z in words if 280 <= z < 450 and len(w) >= 4]
    rng.shuffle(rare)
    n_topics = max(1, n // 25)
    n_areas = max(1, n_topics // 10)

    def vocab(start, size, key):
        words = rare[start:start + size]
        if len(words) == size:
            return words
        return random.Random(seed * 1_000_003 + key).sample(rare, size)

    area_vocab = [vocab(i * 12, 12, i) for i in range(n_areas)]
    base = n_areas * 12
    topic_vocab = [vocab(base + i * 8, 8, n_areas + i) for i in range(n_topics)]
    made = set()
    for i in range(n):
        t = rng.randrange(n_topics)
        a = t % n_areas
        tv, av = topic_vocab[t], area_vocab[a]

        def sentence(lo, hi):
            k = rng.randint(lo, hi)
            ws = []
            for _ in range(k):
                r = rng.random()
                ws.append(rng.choice(tv) if r < 0.35 else rng.choice(av) if r < 0.5 else rng.choice(common))
            return " ".join(ws).capitalize() + "."

        title = " ".join(rng.choice(tv if j % 2 == 0 else av) for j in range(rng.randint(3, 6))).capitalize()
        body = " ".join(sentence(8, 18) for _ in range(rng.randint(3, 7)))
        path = os.path.join(out, f"area-{a:02d}", f"topic-{t:04d}", f"doc-{i:06d}.md")
        folder = os.path.dirname(path)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"# {title}\n\n{body}\n")


if __name__ == "__main__":
    main()
