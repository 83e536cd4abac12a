"""The shipped audit (``make audit``), cold and warm, by suite (not a test).

    .venv/bin/python benchmarks/bench_audit.py                      # what `make audit` runs
    .venv/bin/python benchmarks/bench_audit.py --workers 0 2        # -n 0 vs -n 2, same run
    .venv/bin/python benchmarks/bench_audit.py --sample 2 --workers 0   # a quick check

For each worker setting (``auto`` = ``-n auto --dist loadgroup``, as ``make audit``; ``N`` =
``-n N --dist loadgroup``; ``0`` = one process), into a fresh generation cache:

1. **cold**: one ``pytest`` run over every suite — exactly what ``make audit`` runs (the
   first of a case's tests that needs its generation makes it, into the run cache both
   workers share, and the others read it; ``--dist loadgroup`` does not keep a case's tests
   on one worker with pytest-xdist 3.8 on pytest 9.2, see README, Performance) — with
   each suite's share as the worker-seconds its tests took (from the results JSON); or, with
   ``--cold by-suite``, suite by suite in that order (fidelity, influence, provenance,
   attribution), each a separate ``pytest`` run whose wall times add up (each pays its own
   start-up and its own last straggling case);
2. **warm**: all suites in one run on the now full cache (what a rerun of ``make audit``
   costs), with its model loads and calls and the attribution records that came from the
   attribution cache, from the results JSON; ``--warm-runs`` times it that many times and
   reports the median (each cold suite runs once: it fills the cache).

Every run compares its records with the shipped golden snapshots (``golden/``, never
updated): ``snapshots`` says how many matched and failed, so a full-size run is also the
check that the records stay byte-identical. ``--sample N`` takes N cases of each kind (the
goldens of the other cases are then unused, not failed); the ``same records`` column says
whether every worker setting gave the same records. The converted model folder
(``~/.cache/pytest-provenai/models``) is not cleared: cold means a cold generation cache.

The machine's speed that day is printed beside the table: the default model's **prefill
throughput** (tokens/s; one forward over the first shipped dev case's ~1,900-token prompt,
transformers on the CPU, median of 3), measured before the first cold run and after the last
warm one, as ``bench_influence.py`` measures it — the same audit took 27–40 minutes on
this VM on days whose prefill differed 1.6× (``--no-prefill`` skips it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SUITES = ("test_fidelity.py", "test_influence.py", "test_provenance.py", "test_attribution.py")


def pytest_run(args: list[str], results: Path) -> tuple[float, dict[str, Any], str]:
    start = time.perf_counter()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            *args,
            f"--provenai-results={results}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    data = json.loads(results.read_text(encoding="utf-8")) if results.exists() else {}
    text = out.stdout + out.stderr
    found = re.search(r"(\d+) snapshots? passed", text)
    failed = re.search(r"(\d+) snapshots? failed", text)
    snaps = f"{found.group(1) if found else 0} passed, {failed.group(1) if failed else 0} failed"
    gates = data.get("gates", [])
    snaps += f"; gates {sum(1 for g in gates if g.get('passed'))}/{len(gates)} passed"
    return wall, data, snaps


Row = tuple[str, str, float, Any, Any, str, str]


def run_row(workers: str, what: str, wall: float, data: dict[str, Any], snaps: str) -> Row:
    """One table row for a pytest run: its wall time, model loads and calls, attribution
    records from the cache, and its snapshot/gate outcome."""
    c = data.get("cache", {})
    return (workers, what, wall, c.get("model_loads"), c.get("model_calls"), attributed(c), snaps)


def attributed(cache: dict[str, Any]) -> str:
    """ "cached/all" attribution records of a run ("" when it had none)."""
    n = cache.get("attribution_records")
    return f"{cache.get('attribution_records_from_cache', 0)}/{n}" if n else ""


def prefill_tps(runs: int = 3) -> float:
    """Tokens per second of one forward over the first shipped dev case's prompt (median of
    ``runs``), in a child process so that this one holds no model while pytest runs."""
    code = (
        "import statistics, sys, time\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from pytest_provenai.frozen.load import load_fixture_set\n"
        "from pytest_provenai.subject.subject import ModelSubject, make_subject\n"
        "s = make_subject(backend='transformers', model=None, pipeline=None, device='cpu',\n"
        "                 max_new_tokens=1, cache_root=None)\n"
        "assert isinstance(s, ModelSubject)\n"
        "case = load_fixture_set(sys.argv[1] + '/fixtures/hotpotqa-dev60').cases[0]\n"
        "trace = s.answer(case)\n"
        "prompt = trace.view.prompt\n"
        "n = len(s.generator.encode(prompt))\n"
        "walls = []\n"
        "for _ in range(int(sys.argv[2])):\n"
        "    t0 = time.perf_counter()\n"
        "    s.generator.score(prompt, list(trace.generation.token_ids)[:1])\n"
        "    walls.append(time.perf_counter() - t0)\n"
        "print(n / statistics.median(walls))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), str(runs)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", nargs="+", default=["auto"])
    parser.add_argument("--sample", type=int, default=None, help="cases of each kind")
    parser.add_argument("--warm-runs", type=int, default=3, help="median of this many")
    parser.add_argument(
        "--cold",
        choices=("one-run", "by-suite"),
        default="one-run",
        help="one pytest run over all suites (make audit), or one run per suite",
    )
    parser.add_argument(
        "--no-prefill", action="store_true", help="skip the prefill-throughput measurement"
    )
    args = parser.parse_args()

    prefill = [] if args.no_prefill else [prefill_tps()]
    load0 = os.getloadavg()
    table: list[Row] = []
    records: dict[str, Any] = {}
    for workers in args.workers:
        xdist = ["-p", "no:xdist"] if workers == "0" else ["-n", workers, "--dist", "loadgroup"]
        common = [*xdist, *([f"--provenai-sample={args.sample}"] if args.sample else [])]
        with tempfile.TemporaryDirectory(prefix="provenai-bench-") as tmp:
            cache = Path(tmp) / "cache"
            common.append(f"--provenai-cache={cache}")
            cold_total = 0.0
            if args.cold == "one-run":
                wall, data, snaps = pytest_run(common, Path(tmp) / "cold.json")
                cold_total = wall
                table.append(
                    run_row(workers, "cold make audit (one run, every suite)", wall, data, snaps)
                )
                print(f"-n {workers} cold: {wall:.1f}s ({snaps})", file=sys.stderr, flush=True)
                per_test = data.get("timings", {}).get("per_test_seconds", {})
                for suite in SUITES:
                    spent = sum(v for k, v in per_test.items() if k.startswith(f"suites/{suite}"))
                    what = f"  of which {suite} (worker-seconds of its tests)"
                    table.append((workers, what, spent, None, None, "", ""))
            for suite in SUITES if args.cold == "by-suite" else ():
                wall, data, snaps = pytest_run(
                    [*common, f"suites/{suite}"], Path(tmp) / f"{suite}.json"
                )
                cold_total += wall
                table.append(run_row(workers, f"cold {suite}", wall, data, snaps))
                print(
                    f"-n {workers} cold {suite}: {wall:.1f}s ({snaps})", file=sys.stderr, flush=True
                )
            walls = []
            for _ in range(max(1, args.warm_runs)):
                wall, data, snaps = pytest_run(common, Path(tmp) / "warm.json")
                walls.append(wall)
                print(f"-n {workers} warm: {wall:.1f}s ({snaps})", file=sys.stderr, flush=True)
            wall = statistics.median(walls)
            what = f"warm, all suites (median of {', '.join(f'{w:.1f}' for w in walls)})"
            table.append(run_row(workers, what, wall, data, snaps))
            table.append((workers, "cold total / warm", cold_total / wall, None, None, "", ""))
            records[workers] = data.get("records")

    load1 = os.getloadavg()
    if not args.no_prefill:
        prefill.append(prefill_tps())
    print(
        f"\nMachine: {platform.platform()}, {os.cpu_count()} CPUs, python "
        f"{platform.python_version()}; load average {load0[0]:.1f} at start, "
        f"{load1[0]:.1f} at end"
    )
    if prefill:
        print(
            "Prefill throughput (default model, first dev case's prompt, transformers CPU, "
            f"median of 3): {prefill[0]:.0f} tokens/s before, {prefill[1]:.0f} after"
        )
    size = f"{args.sample} case(s) of each kind" if args.sample else "every shipped case"
    print(f"Shipped suites, default model, {size}\n")
    print(
        "| workers | run | wall s | model loads | model calls | attribution records cached "
        "| golden snapshots; gates |"
    )
    print("|---|---|---:|---:|---:|---:|---|")
    for workers, what, wall, loads, calls, cached, snaps in table:
        unit = "x" if what.startswith("cold total") else ""
        print(
            f"| {workers} | {what} | {wall:.1f}{unit} | "
            f"{'' if loads is None else loads} | {'' if calls is None else calls} | "
            f"{cached} | {snaps} |"
        )
    same = len({json.dumps(r, sort_keys=True) for r in records.values()}) == 1
    print(f"\nsame records under every worker setting: {same}")


if __name__ == "__main__":
    main()
