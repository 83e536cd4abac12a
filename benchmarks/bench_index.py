"""Scale benchmark of the retrieval index: FAISS over N synthetic 384-d vectors plus a SQLite
lookup of N rows; prints a Markdown table (not a test).

    .venv/bin/python benchmarks/bench_index.py [--n 500000] [--queries 200] [--runs 3]
        [--types flat,ivf] [--threads 2]

Each index type runs in its own subprocess (so its memory is measured on its own) over the
same data: N unit vectors drawn around 2,000 Gaussian cluster centres (embeddings of real
text are clustered; uniform random vectors in 384-d would make any approximate index look
useless), and queries that are perturbed database vectors (a question near its passage).
The types are built exactly as ``provenai index build`` builds them
(pytest_provenai/retrieval/index.py ``_make_faiss_index``, same thread setting).

Reported per type: build seconds (train + add), index file size, RSS growth of the process
while building (the index's memory) and peak RSS, query latency p50/p95 for one question at
k=10 (median over ``--runs`` passes of ``--queries`` queries), recall@10 against exact flat
search, and the speed-up of p50 over flat. The SQLite lookup: build seconds for N rows of
~540-character text (the HotpotQA paragraph mean), file size, and p50/p95 of fetching the
10 rows of one hit list.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DIM = 384
CLUSTERS = 2000
K = 10


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_data(n: int, n_queries: int, seed: int = 0) -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((CLUSTERS, DIM), dtype=np.float32)
    vectors = np.empty((n, DIM), dtype=np.float32)
    step = 50_000
    for start in range(0, n, step):
        m = min(step, n - start)
        part = centres[rng.integers(0, CLUSTERS, m)]
        part += 0.6 * rng.standard_normal((m, DIM), dtype=np.float32)
        part /= np.linalg.norm(part, axis=1, keepdims=True)
        vectors[start : start + m] = part
    picked = rng.choice(n, n_queries, replace=False)
    # noise of norm ~1 on a unit vector: cosine(query, its passage) ~0.7, about what
    # MiniLM gives a HotpotQA question and its gold paragraph
    noise = rng.standard_normal((n_queries, DIM), dtype=np.float32) / np.sqrt(DIM)
    queries = vectors[picked] + noise
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return vectors, np.ascontiguousarray(queries, dtype=np.float32)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def child(index_type: str, n: int, n_queries: int, runs: int, threads: int, out: str) -> None:
    import faiss
    import numpy as np

    from pytest_provenai.retrieval.index import _make_faiss_index

    vectors, queries = make_data(n, n_queries)
    faiss.omp_set_num_threads(threads)
    import ctypes

    ctypes.CDLL("libc.so.6").malloc_trim(0)  # give freed temporaries back first
    before = rss_mb()
    start = time.perf_counter()
    index, params = _make_faiss_index(index_type, vectors)
    index.add(vectors)
    build_s = time.perf_counter() - start
    index_mb = rss_mb() - before
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "index.faiss")
        start = time.perf_counter()
        faiss.write_index(index, path)
        write_s = time.perf_counter() - start
        size_mb = os.path.getsize(path) / 1e6
        start = time.perf_counter()
        faiss.read_index(path)
        read_s = time.perf_counter() - start
    # one question at a time, as the harness asks
    faiss.omp_set_num_threads(1)
    p50s, p95s = [], []
    results = None
    for _ in range(runs):
        lat = []
        found = []
        for q in queries:
            t = time.perf_counter()
            _, ids = index.search(q[None, :], K)
            lat.append((time.perf_counter() - t) * 1000)
            found.append(ids[0])
        p50s.append(percentile(lat, 0.5))
        p95s.append(percentile(lat, 0.95))
        results = found
    Path(out).write_text(
        json.dumps(
            {
                "type": index_type,
                "params": params,
                "build_s": build_s,
                "write_s": write_s,
                "read_s": read_s,
                "size_mb": size_mb,
                "index_mb": index_mb,
                "peak_mb": peak_mb(),
                "p50_ms": statistics.median(p50s),
                "p95_ms": statistics.median(p95s),
                "ids": np.asarray(results).tolist(),
            }
        )
    )


def bench_sqlite(n: int, n_queries: int, runs: int) -> dict[str, float]:
    import random

    rng = random.Random(0)
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        for _ in range(5000)
    ]

    def text() -> str:
        out: list[str] = []
        size = 0
        while size < 540:
            w = rng.choice(words)
            out.append(w)
            size += len(w) + 1
        return " ".join(out)

    rows = [
        (
            i,
            f"p{i:016x}",
            f"Title {i}",
            text(),
            f"{i:064x}",
            json.dumps([{"source": "x.json", "split": "dev", "record": f"r{i}", "position": 0}]),
        )
        for i in range(n)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "passages.sqlite")
        start = time.perf_counter()
        con = sqlite3.connect(path)
        con.execute(
            "CREATE TABLE passages (row INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, "
            "title TEXT NOT NULL, text TEXT NOT NULL, sha256 TEXT NOT NULL, "
            "provenance TEXT NOT NULL)"
        )
        with con:
            con.executemany("INSERT INTO passages VALUES (?, ?, ?, ?, ?, ?)", rows)
        con.close()
        build_s = time.perf_counter() - start
        size_mb = os.path.getsize(path) / 1e6
        con = sqlite3.connect(Path(path).as_uri() + "?mode=ro", uri=True)
        p50s, p95s = [], []
        for _ in range(runs):
            lat = []
            for _ in range(n_queries):
                wanted = sorted(rng.sample(range(n), K))
                t = time.perf_counter()
                con.execute(
                    "SELECT row, id, title, text, sha256, provenance FROM passages WHERE row IN "
                    f"({','.join('?' * K)})",
                    wanted,
                ).fetchall()
                lat.append((time.perf_counter() - t) * 1000)
            p50s.append(percentile(lat, 0.5))
            p95s.append(percentile(lat, 0.95))
        con.close()
    return {
        "build_s": build_s,
        "size_mb": size_mb,
        "p50_ms": statistics.median(p50s),
        "p95_ms": statistics.median(p95s),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=500_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--types", default="flat,ivf")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--child", nargs=2, metavar=("TYPE", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.n, args.queries, args.runs, args.threads, args.child[1])
        return

    import faiss

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for t in args.types.split(","):
            out = os.path.join(tmp, f"{t}.json")
            cmd = [sys.executable, __file__, "--child", t, out, "--n", str(args.n)]
            cmd += ["--queries", str(args.queries), "--runs", str(args.runs)]
            cmd += ["--threads", str(args.threads)]
            start = time.perf_counter()
            subprocess.run(cmd, check=True)
            results[t] = json.loads(Path(out).read_text())
            results[t]["wall_s"] = time.perf_counter() - start
    lookup = bench_sqlite(args.n, args.queries, args.runs)

    exact = results.get("flat")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, faiss {faiss.__version__}; {args.n:,} unit vectors, "
        f"{DIM}-d, {CLUSTERS} clusters; {args.queries} queries x {args.runs} runs (median), "
        f"k={K}, one query per search call on 1 thread; build on {args.threads} threads\n"
    )
    print(
        "| index | params | build s | file MB | index RSS MB | peak RSS MB | "
        "query p50 ms | query p95 ms | recall@10 vs flat | speed-up (p50) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for t, r in results.items():
        params = ", ".join(f"{k}={v}" for k, v in r["params"].items() if k != "faiss_class")
        recall = "—"
        speed = "—"
        if exact is not None:
            hits = [len(set(a) & set(b)) / K for a, b in zip(r["ids"], exact["ids"], strict=True)]
            recall = f"{statistics.mean(hits):.3f}"
            speed = f"{exact['p50_ms'] / r['p50_ms']:.1f}x"
        print(
            f"| {t} ({r['params']['faiss_class']}) | {params or '—'} | {r['build_s']:.1f} | "
            f"{r['size_mb']:.0f} | {r['index_mb']:.0f} | {r['peak_mb']:.0f} | "
            f"{r['p50_ms']:.2f} | {r['p95_ms']:.2f} | {recall} | {speed} |"
        )
    print(
        f"\nSQLite lookup, {args.n:,} rows: build {lookup['build_s']:.1f} s, "
        f"{lookup['size_mb']:.0f} MB, fetch 10 rows p50 {lookup['p50_ms']:.3f} ms / "
        f"p95 {lookup['p95_ms']:.3f} ms"
    )
    for t, r in results.items():
        print(
            f"{t}: write {r['write_s']:.1f} s, read back {r['read_s']:.1f} s, "
            f"subprocess wall {r['wall_s']:.1f} s (including data generation)"
        )


if __name__ == "__main__":
    main()
