"""Retrieval quality of an index on HotpotQA questions; prints a Markdown table (not a test).

    .venv/bin/python benchmarks/retrieval_recall.py INDEX_DIR HOTPOTQA.json [--limit N]

For each record, retrieves the top 10 passages for its question (the way index mode does)
and reports, at k = 1, 2, 5, 10: mean recall of the gold supporting titles, the share of
questions with every gold title retrieved, and query time per question.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("index")
    ap.add_argument("data")
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()

    from pytest_provenai.retrieval.index import open_index

    records = json.loads(Path(args.data).read_text("utf-8"))[: args.limit]
    index = open_index(args.index)
    index.search("warm-up", 1)
    start = time.perf_counter()
    hits = index.search_many([r["question"] for r in records], k=10)
    seconds = time.perf_counter() - start
    print(
        f"{len(records)} questions of {Path(args.data).name} against {index.rows:,} passages "
        f"({index.manifest['index']['type']}); {seconds / len(records) * 1000:.1f} ms per "
        "question (embedding + search + lookup, batched)\n"
    )
    print("| k | recall of gold titles | all gold titles retrieved |")
    print("|---|---|---|")
    for k in (1, 2, 5, 10):
        recalls, alls = [], []
        for rec, found in zip(records, hits, strict=True):
            gold = list(dict.fromkeys(title for title, _ in rec["supporting_facts"]))
            titles = {h.title for h in found[:k]}
            got = sum(t in titles for t in gold)
            recalls.append(got / len(gold))
            alls.append(got == len(gold))
        print(f"| {k} | {statistics.mean(recalls):.3f} | {statistics.mean(alls):.3f} |")


if __name__ == "__main__":
    main()
