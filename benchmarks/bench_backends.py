"""Backend and suite performance on this machine; prints Markdown tables (not a test).

    .venv/bin/python benchmarks/bench_backends.py [--cases 5] [--runs 3] [--mlx-cases 1]

Measures, each in a fresh subprocess so loads are honest:
  1. cold load (GGUF -> HF folder conversion into an empty cache) and warm load, peak RSS;
  2. per-case greedy generation on real fixture cases: seconds, new tokens, tokens/s
     (median over cases), for transformers and mlx;
  3. the fidelity suite on a sample: cold generation cache vs warm rerun (ratio), and
     ``-n 2`` vs ``-n 0`` wall time (ratio), measured side by side in this run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable

CHILD = r"""
import json, os, resource, sys, time
t0 = time.perf_counter()
from pytest_provenai.subject.backends import load_generator
from pytest_provenai.subject.backends.base import Decoding
from pytest_provenai.frozen.load import load_fixture_set
from pytest_provenai.subject.prompt import build_prompt, make_resources
backend, n_cases = sys.argv[1], int(sys.argv[2])
gen = load_generator(backend, None, decoding=Decoding(max_new_tokens=int(sys.argv[3])))
load_s = time.perf_counter() - t0
cases = load_fixture_set(os.path.join(sys.argv[4], "fixtures", "hotpotqa-dev60")).cases[:n_cases]
rows = []
for case in cases:
    view = build_prompt(case.question, make_resources(case.sources), gen.render_chat)
    t = time.perf_counter()
    out = gen.generate(view.prompt)
    s = time.perf_counter() - t
    n_prompt = len(gen.encode(view.prompt)) if hasattr(gen, "encode") else None
    rows.append({"seconds": s, "new_tokens": len(out.token_ids), "prompt_tokens": n_prompt})
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"load_s": load_s, "rows": rows, "peak_rss_mb": rss}))
"""


def child(backend: str, n_cases: int, max_new: int, env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        [PY, "-c", CHILD, backend, str(n_cases), str(max_new), str(ROOT)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def pytest_wall(args: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(
        [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--snapshot-warn-unused", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=5, help="cases for transformers timing")
    ap.add_argument("--mlx-cases", type=int, default=1, help="cases for mlx timing (slow)")
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--suite-sample", type=int, default=6)
    ap.add_argument("--skip-cold", action="store_true")
    a = ap.parse_args()
    env = dict(os.environ)
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, "
        f"python {platform.python_version()}"
    )

    print("\n## Model load\n")
    print("| backend | cache | load s | peak RSS MB |")
    print("|---|---|---|---|")
    if not a.skip_cold:
        with tempfile.TemporaryDirectory() as tmp:
            cold = child("transformers", 0, a.max_new_tokens, {**env, "PROVENAI_MODEL_CACHE": tmp})
            load, rss = cold["load_s"], cold["peak_rss_mb"]
            print(f"| transformers | cold (conversion) | {load:.1f} | {rss:.0f} |")
    results = {}
    for backend, n in (("transformers", a.cases), ("mlx", a.mlx_cases)):
        if n <= 0:
            continue
        r = child(backend, n, a.max_new_tokens, env)
        results[backend] = r
        print(f"| {backend} | warm | {r['load_s']:.1f} | {r['peak_rss_mb']:.0f} |")

    print("\n## Generation per case (real fixture cases, greedy)\n")
    print(
        "| backend | cases | prompt tokens (median) | new tokens (median) "
        "| s/case (median) | tok/s (median) |"
    )
    print("|---|---|---|---|---|---|")
    for backend, r in results.items():
        rows = r["rows"]
        secs = statistics.median(x["seconds"] for x in rows)
        toks = statistics.median(x["new_tokens"] for x in rows)
        tps = statistics.median(x["new_tokens"] / x["seconds"] for x in rows)
        ptoks = statistics.median(x["prompt_tokens"] or 0 for x in rows)
        print(f"| {backend} | {len(rows)} | {ptoks:.0f} | {toks:.0f} | {secs:.2f} | {tps:.1f} |")

    print(f"\n## Fidelity suite, --provenai-sample {a.suite_sample}\n")
    with tempfile.TemporaryDirectory() as cache:
        # "--opt=value": pytest reads a plugin option's separate value as a path when it
        # picks the rootdir, and an existing folder there would become the rootdir.
        base = ["--provenai-sample", str(a.suite_sample), f"--provenai-cache={cache}"]
        cold_s = pytest_wall(base, env)
        warm_s = pytest_wall(base, env)
    nocache = ["--provenai-sample", str(a.suite_sample), "--provenai-no-cache"]
    n0 = pytest_wall([*nocache, "-n", "0"], env)
    n2 = pytest_wall([*nocache, "-n", "2"], env)
    print("| run | wall s | ratio |")
    print("|---|---|---|")
    print(f"| cold generation cache | {cold_s:.1f} | 1.00 |")
    print(f"| warm rerun (zero model calls) | {warm_s:.1f} | {warm_s / cold_s:.2f} |")
    print(f"| -n 0, no cache | {n0:.1f} | 1.00 |")
    print(f"| -n 2, no cache | {n2:.1f} | {n2 / n0:.2f} |")


if __name__ == "__main__":
    main()
