"""Embedding throughput of all-MiniLM-L6-v2 on this machine; prints a Markdown table.

    .venv/bin/python benchmarks/bench_embed.py [--passages 256] [--runs 3]
        [--batch-sizes 16,32,64,128] [--threads 1,2]

Embeds real HotpotQA paragraphs (title + text, as ``provenai index build`` does) from the
shipped fixture set ``fixtures/hotpotqa-dev60`` with the packaged model through
sentence-transformers, at each batch size and thread count, after one warm-up pass. Reports
passages/s (median of ``--runs``), and projects the time to embed the 509,300-passage
corpus of the ProvenAI paper at the best setting. All settings run side by side in one
process, so ratios between them hold even on a busy machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAPER_CORPUS = 509_300


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passages", type=int, default=256)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batch-sizes", type=_ints, default=[16, 32, 64, 128])
    ap.add_argument("--threads", type=_ints, default=[1, 2])
    args = ap.parse_args()

    import torch

    from pytest_provenai.frozen.load import load_fixture_set
    from pytest_provenai.frozen.model import Case
    from pytest_provenai.retrieval.embed import PASSAGE_TEMPLATE, Embedder

    cases = load_fixture_set(ROOT / "fixtures" / "hotpotqa-dev60").cases
    passages = [
        PASSAGE_TEMPLATE.format(title=s.title, text=s.text)
        for c in cases
        if isinstance(c, Case)
        for s in c.sources
    ][: args.passages]
    chars = statistics.mean(len(p) for p in passages)

    t0 = time.perf_counter()
    emb = Embedder(threads=max(args.threads))
    model = emb.model
    load_s = time.perf_counter() - t0
    tokens = [
        len(model.tokenizer(p, truncation=True, max_length=256)["input_ids"]) for p in passages
    ]

    rows = []
    for threads in args.threads:
        torch.set_num_threads(threads)
        model.encode(passages[:32], batch_size=32, normalize_embeddings=True)  # warm-up
        for bs in args.batch_sizes:
            rates = []
            for _ in range(args.runs):
                start = time.perf_counter()
                model.encode(passages, batch_size=bs, normalize_embeddings=True)
                rates.append(len(passages) / (time.perf_counter() - start))
            rows.append((threads, bs, statistics.median(rates), min(rates), max(rates)))

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, torch {torch.__version__}; model load {load_s:.1f} s "
        "(including the sentence-transformers import)"
    )
    print(
        f"{len(passages)} HotpotQA paragraphs, mean {chars:.0f} chars / "
        f"{statistics.mean(tokens):.0f} tokens (max {max(tokens)}); median of {args.runs} runs\n"
    )
    print("| threads | batch | passages/s (median) | min–max | projected 509,300 passages |")
    print("|---|---|---|---|---|")
    for threads, bs, med, lo, hi in rows:
        hours = PAPER_CORPUS / med / 3600
        print(f"| {threads} | {bs} | {med:.1f} | {lo:.1f}–{hi:.1f} | {hours:.2f} h |")
    best = max(rows, key=lambda r: r[2])
    print(
        f"\nbest: {best[0]} threads, batch {best[1]}: {best[2]:.1f} passages/s -> "
        f"{PAPER_CORPUS / best[2] / 3600:.2f} h for {PAPER_CORPUS:,} passages"
    )


if __name__ == "__main__":
    main()
