"""The cost model of a sharded audit (README, "Scaling out"); not a test.

    .venv/bin/python benchmarks/bench_scale.py                      # 30 cases, in-process
    .venv/bin/python benchmarks/bench_scale.py --served             # + a llama.cpp server
    .venv/bin/python benchmarks/bench_scale.py --results a.json b.json   # runs you made
    .venv/bin/python benchmarks/bench_scale.py --merge-only --results a.json

1. **Per-case worker-seconds by suite.** One pytest process (no xdist: the machine's cores
   are its torch threads) runs the fidelity and influence suites on ``--sample`` cases of
   ``--fixtures`` (default ``fixtures/hotpotqa-dev-full``, made by ``make fixtures-full``;
   else ``fixtures/hotpotqa-dev60``) into a fresh run cache — cold: each case is generated
   once and its two suites share it, as on a shard — with goldens written to a temporary
   folder. Each test's seconds come from the results JSON (``timings.per_test_seconds``:
   setup + call + teardown); the first test of the process also pays the model load, so the
   table gives the median and the mean per case, and the load apart. ``--served`` does the
   same against llama-cpp-python's server on 127.0.0.1 (the ``serve`` extra; the default
   GGUF), the model in another process. ``--results`` reads the timings of runs you made
   instead (any results JSON of these suites, a shard's too).
2. **Projection.** The wall time of ``--cases`` (7,405: the official dev set) on N shards x
   W workers: ``ceil(cases / (N*W)) x per-case seconds + start-up``, where W workers run on
   W times this machine's cores (one worker here used all of it) and start-up is pytest's
   collection plus the model load. Merge time is added once.
3. **Merge.** ``--cases`` synthetic cases (the measured records as templates, ids
   renumbered) in ``--merge-shards`` shard files, merged by ``provenai merge``'s
   :func:`merge_shards` and written: median of ``--merge-runs`` and the peak Python memory
   (tracemalloc) of one merge, for the table's "merge" line. The merge is O(cases).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SUITES = ("test_fidelity", "test_influence")
SHARDS = (1, 4, 8, 16, 32, 64)
WORKERS = (1, 2, 4)


# -- 1. per-case worker-seconds --------------------------------------------------------------
def run_suites(fixtures: Path, sample: int, extra: list[str]) -> tuple[dict[str, Any], float]:
    """One cold pytest process over the two suites; its results JSON and wall seconds."""
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        results = Path(tmp) / "results.json"
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            *(f"suites/{s}.py" for s in SUITES),
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-q",
            f"--provenai-fixtures={fixtures}",
            f"--provenai-sample={sample}",
            f"--provenai-cache={tmp}/cache",
            f"--provenai-golden={tmp}/golden",
            f"--provenai-results={results}",
            "--provenai-progress=off",
            "--snapshot-update",
            *extra,
        ]
        start, load = time.perf_counter(), os.getloadavg()[0]
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - start
        print(f"  load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end "
              f"(1-minute; {os.cpu_count()} cores)", flush=True)  # fmt: skip
        if not results.exists():
            sys.exit(
                f"bench_scale: the run wrote no results:\n{out.stdout[-3000:]}{out.stderr[-2000:]}"
            )
        return json.loads(results.read_text(encoding="utf-8")), wall


def per_case(results: list[dict[str, Any]]) -> dict[str, list[float]]:
    """suite -> each case item's seconds (setup + call + teardown)."""
    out: dict[str, list[float]] = defaultdict(list)
    for r in results:
        for nodeid, seconds in r["timings"]["per_test_seconds"].items():
            function = nodeid.split("::", 1)[-1].split("[", 1)[0]
            if function in SUITES and "[" in nodeid:
                out[function].append(float(seconds))
    return out


@contextlib.contextmanager
def llama_server() -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on the default GGUF (127.0.0.1)."""
    from pytest_provenai.subject.backends.default_model import default_gguf_path

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(default_gguf_path()),
        "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "4096", "--logits_all", "true", "--verbose", "false",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            with contextlib.suppress(urllib.error.URLError, OSError):
                with urllib.request.urlopen(f"{base}/models", timeout=2):
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit("bench_scale: llama_cpp.server did not start (pip install '.[serve]')")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# -- 2. projection ---------------------------------------------------------------------------
def hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def projection(per_case_s: float, startup_s: float, merge_s: float, cases: int) -> list[str]:
    lines = [
        f"projected wall time of {cases} cases (fidelity + influence; W workers = W x this "
        "machine's cores per shard)",
        "| shards N | " + " | ".join(f"W={w}" for w in WORKERS) + " |",
        "|---:|" + "---:|" * len(WORKERS),
    ]
    for n in SHARDS:
        cells = [
            hours(math.ceil(cases / (n * w)) * per_case_s + startup_s + merge_s) for w in WORKERS
        ]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return lines


# -- 3. merge --------------------------------------------------------------------------------
def synthetic_shards(
    templates: dict[str, dict[str, Any]], cases: int, shards: int, folder: Path
) -> list[Path]:
    """``cases`` cases of one synthetic set, each with a record per template test, split
    into ``shards`` shard results files the way --provenai-shard splits them."""
    from pytest_provenai.report.results import build_results
    from pytest_provenai.sharding import ShardSection, ShardSpec, case_key, shard_of

    set_name = "synthetic-full"
    ids = [f"c{i:05d}" for i in range(cases)]
    keys = {i: case_key(set_name, i) for i in ids}
    expected = {f"suites/{t.split('::')[0].split('/')[-1]}::{t.split('::')[-1]}[{i}]": (t, i)
                for t in templates for i in ids}  # fmt: skip
    gates = [{"test": t, "marker": "fidelity", "metric": "answer_accuracy", "bound": 0.0}
             for t in templates if "fidelity" in t]  # fmt: skip
    paths = []
    for k in range(1, shards + 1):
        own = [i for i in ids if shard_of(keys[i], shards) == k]
        records = {
            t: [{**rec, "case_id": i, "fixture_set": set_name} for i in own]
            for t, rec in templates.items()
        }
        section = ShardSection(
            spec=ShardSpec(k, shards),
            fingerprint={
                "package_version": "bench",
                "options": {},
                "fixture_sets": {},
                "models": [],
            },
            cases=[keys[i] for i in own],
            case_keys={i: keys[i] for i in ids},
            gates=gates,
            expected=expected,
        )
        results = build_results(
            run={"id": f"shard{k}"}, models={}, options={"seed": 42}, records=records,
            gates=[], fixture_errors=[], produced_by={}, influence_costs={}, timings={},
            cache={}, seed=42, shard=section,
        )  # fmt: skip
        path = folder / f"shard-{k}.json"
        path.write_text(json.dumps(results.to_json()), encoding="utf-8")
        paths.append(path)
    return paths


def measure_merge(
    templates: dict[str, dict[str, Any]], cases: int, shards: int, runs: int
) -> tuple[float, float, float]:
    """(median seconds of merge + write, peak MiB of one merge, MiB of the shard files)."""
    from pytest_provenai._io import atomic_write_json
    from pytest_provenai.report.merge import merge_shards

    with tempfile.TemporaryDirectory(prefix="bench-merge-") as tmp:
        paths = synthetic_shards(templates, cases, shards, Path(tmp))
        size = sum(p.stat().st_size for p in paths) / 2**20
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            merged = merge_shards(paths)
            atomic_write_json(Path(tmp) / "merged.json", merged.results.to_json())
            times.append(time.perf_counter() - start)
        assert sum(len(r) for r in merged.results.records.values()) == cases * len(templates)
        tracemalloc.start()
        merge_shards(paths)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return statistics.median(times), peak, size


def templates_of(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One record per test of the suites (the first with a record)."""
    out: dict[str, dict[str, Any]] = {}
    for r in results:
        for test, recs in r["records"].items():
            if test.split("::")[-1] in SUITES and recs and test not in out:
                out[test] = next((x for x in recs if "missing" not in x), recs[0])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixtures", type=Path, default=None)
    parser.add_argument("--sample", type=int, default=30)
    parser.add_argument("--served", action="store_true", help="also measure a llama.cpp server")
    parser.add_argument("--results", type=Path, nargs="+", help="timings of runs you made")
    parser.add_argument("--merge-only", action="store_true")
    parser.add_argument("--cases", type=int, default=7405)
    parser.add_argument("--merge-shards", type=int, default=8)
    parser.add_argument("--merge-runs", type=int, default=3)
    args = parser.parse_args()
    full = ROOT / "fixtures" / "hotpotqa-dev-full"
    fixtures = args.fixtures or (full if full.exists() else ROOT / "fixtures" / "hotpotqa-dev60")

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")  # fmt: skip
    measured: dict[str, list[dict[str, Any]]] = {}
    walls: dict[str, float] = {}
    if args.results:
        measured["given results"] = [
            json.loads(p.read_text(encoding="utf-8")) for p in args.results
        ]
    elif not args.merge_only:
        print(
            f"measuring {args.sample} cases of {fixtures.name} (cold, one process) ...", flush=True
        )
        data, walls["in-process"] = run_suites(fixtures, args.sample, [])
        measured["in-process"] = [data]
        if args.served:
            with llama_server() as url:
                extra = ["--provenai-backend=openai", f"--provenai-base-urls={url}",
                         "--provenai-model=smollm2", "--provenai-tokenizer=default"]  # fmt: skip
                data, walls["served"] = run_suites(fixtures, args.sample, extra)
                measured["served (llama.cpp)"] = [data]

    all_results = [r for rs in measured.values() for r in rs]
    templates = templates_of(all_results)
    if not templates:
        sys.exit("bench_scale: no records of the fidelity/influence suites to use as templates")
    merge_s, peak, size = measure_merge(templates, args.cases, args.merge_shards, args.merge_runs)
    print(
        f"merge: {args.cases} cases x {len(templates)} tests in {args.merge_shards} shard files "
        f"({size:.0f} MiB): {merge_s:.2f} s (median of {args.merge_runs}, merge + write), "
        f"peak {peak:.0f} MiB"
    )
    for name, results in measured.items():
        times = per_case(results)
        print(f"\n{name}: per-case worker-seconds by suite"
              + (f" (run wall {walls[name]:.0f} s)" if name in walls else ""))  # fmt: skip
        print("| suite | cases | median s | mean s | max s |")
        print("|---|---:|---:|---:|---:|")
        for suite in SUITES:
            t = times.get(suite, [])
            if t:
                print(f"| {suite} | {len(t)} | {statistics.median(t):.1f} | "
                      f"{statistics.mean(t):.1f} | {max(t):.1f} |")  # fmt: skip
        per_case_s = sum(statistics.median(times[s]) for s in SUITES if times.get(s))
        n = max((len(times[s]) for s in SUITES if times.get(s)), default=0)
        total = sum(sum(times[s]) for s in SUITES if times.get(s))
        startup = max(0.0, walls.get(name, total) - total) + max(
            0.0, sum(max(times[s]) - statistics.median(times[s]) for s in SUITES if times.get(s))
        )  # collection + the first case's model load
        print(f"per case: {per_case_s:.1f} s (median, suites summed); start-up + load "
              f"{startup:.0f} s; {n} cases")  # fmt: skip
        print()
        for line in projection(per_case_s, startup, merge_s, args.cases):
            print(line)


if __name__ == "__main__":
    main()
