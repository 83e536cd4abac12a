"""Do records made another way match the shipped goldens under the tolerance rule? (issue 26)

    .venv/bin/python benchmarks/bench_golden_spread.py [--cases 3] [--configs NAME ...]
        [--suite influence|fidelity] [--case-ids ID ...] [--json out.json]

Runs ``suites/test_influence.py`` (the suite whose records hold the most measured numbers:
KL, eps, phi, theta per resource; ``--suite fidelity``: answers and citations only, one
generation per case — what mlx on Linux can afford) on the first ``--cases`` shipped HotpotQA
cases (or ``--case-ids``), once per configuration, each in its own pytest process with no
generation cache, and compares every record with its golden file under
:mod:`pytest_provenai.golden_rules`:

* ``torch-2t``  the shipped setup: transformers, float32, 2 torch threads, exact ablation
* ``torch-1t``  the same with 1 torch thread (another reduction order in every matmul)
* ``naive``     transformers, naive ablation: every ablated prompt generated from scratch
                (no KV reuse, no speculative decoding; teacher-forced KL as usual)
* ``batched``   transformers, the ablation's teacher-forced prompts fed whole as one
                left-padded batch (``$PROVENAI_ABLATION_BATCH=11``: the form a GPU worker
                uses), here on the CPU
* ``mlx``       the mlx backend (float32, its own kernels and BLAS)
* ``tokens-64`` a real change: ``--provenai-max-new-tokens 64`` instead of 128 (must fail)

Per configuration it prints the records that match, the fields outside tolerance, and the
largest spread of each toleranced field kind as a fraction of its tolerance (1.0 = at the
edge) plus the largest absolute difference, so the table shows how much room the rule
leaves. Wall time per configuration is printed too; the machine is shared, read it as this
machine's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_provenai.golden_rules import TOLERANCES, differences  # noqa: E402
from pytest_provenai.snapshot import stable  # noqa: E402

GOLDENS = ROOT / "golden" / "SmolLM2-135M-Instruct"

CONFIGS: dict[str, tuple[dict[str, str], list[str]]] = {
    "torch-2t": ({"PROVENAI_NUM_THREADS": "2"}, []),
    "torch-1t": ({"PROVENAI_NUM_THREADS": "1"}, []),
    "naive": ({"PROVENAI_NUM_THREADS": "2"}, ["--provenai-ablation", "naive"]),
    "batched": ({"PROVENAI_NUM_THREADS": "2", "PROVENAI_ABLATION_BATCH": "11"}, []),
    "mlx": ({}, ["--provenai-backend", "mlx"]),
    "tokens-64": ({"PROVENAI_NUM_THREADS": "2"}, ["--provenai-max-new-tokens", "64"]),
}


def case_ids(suite: str, n: int) -> list[str]:
    prefix = f"test_{suite}["
    names = (p.name for p in (GOLDENS / f"test_{suite}").glob("*.json"))
    return sorted(name[len(prefix) : -len("].json")] for name in names)[:n]


def run_config(name: str, suite: str, cases: list[str], out: Path) -> tuple[float, int]:
    env_extra, args = CONFIGS[name]
    env = {**os.environ, **env_extra}
    results = out / f"{name}.json"
    cmd = [
        sys.executable, "-m", "pytest", f"suites/test_{suite}.py", "-q", "-p", "no:xdist",
        "-p", "no:cacheprovider", "--provenai-no-cache", "--provenai-results", str(results),
        "--provenai-progress", "off", "-k", " or ".join(cases), *args,
    ]  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    (out / f"{name}.log").write_text(proc.stdout + proc.stderr)
    return wall, proc.returncode


def spreads(golden: Any, now: Any, found: dict[str, tuple[float, float]]) -> None:
    """The largest |now - golden| (as a fraction of the tolerance, and absolute) per
    toleranced key, walking both records where their shapes agree."""
    if isinstance(golden, dict) and isinstance(now, dict):
        for key in set(golden) & set(now):
            g, n = golden[key], now[key]
            tol = TOLERANCES.get(key)
            if tol is not None and isinstance(g, (int, float)) and isinstance(n, (int, float)):
                diff = abs(float(n) - float(g))
                frac, absolute = found.get(key, (0.0, 0.0))
                found[key] = (max(frac, diff / tol.bound(float(g))), max(absolute, diff))
            else:
                spreads(g, n, found)
    elif isinstance(golden, list) and isinstance(now, list) and len(golden) == len(now):
        for g, n in zip(golden, now, strict=True):
            spreads(g, n, found)


def compare(results: Path, suite: str) -> dict[str, Any]:
    data = json.loads(results.read_text())
    records = [r for recs in data["records"].values() for r in recs if "missing" not in r]
    matched, outside = 0, []
    found: dict[str, tuple[float, float]] = {}
    exact_fields = 0
    for record in records:
        golden_file = GOLDENS / f"test_{suite}" / f"test_{suite}[{record['case_id']}].json"
        golden = json.loads(golden_file.read_text())["record"]
        now = stable(record)  # as the golden file would hold it (floats to 4 places)
        diffs = list(differences(golden, now))
        matched += not diffs
        outside += [f"{record['case_id']}: {d.line()}" for d in diffs]
        exact_fields += sum(d.tolerance is None for d in diffs)
        spreads(golden, now, found)
    return {
        "records": len(records),
        "matched": matched,
        "fields_outside": len(outside),
        "exact_fields_changed": exact_fields,
        "examples": outside[:6],
        "spread": {k: {"of_tolerance": f, "abs": a} for k, (f, a) in sorted(found.items())},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=3)
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--suite", choices=("influence", "fidelity"), default="influence")
    ap.add_argument("--case-ids", nargs="+")
    ap.add_argument("--json", type=Path)
    ns = ap.parse_args()
    cases = ns.case_ids or case_ids(ns.suite, ns.cases)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores; suite {ns.suite}; "
        f"cases: {', '.join(cases)}"
    )
    table: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ns.configs:
            wall, rc = run_config(name, ns.suite, cases, Path(tmp))
            results = Path(tmp) / f"{name}.json"
            if not results.exists():
                log = (Path(tmp) / f"{name}.log").read_text()[-2000:]
                print(f"{name}: no results (exit {rc}); log:\n{log}")
                table[name] = {"error": rc}
                continue
            row = compare(results, ns.suite)
            row["wall_s"] = wall
            row["pytest_exit"] = rc
            table[name] = row
            print(
                f"{name:10s} {row['matched']}/{row['records']} match, "
                f"{row['fields_outside']} fields outside ({row['exact_fields_changed']} exact), "
                f"{wall:.0f} s"
            )
            for key, s in row["spread"].items():
                frac, diff = s["of_tolerance"], s["abs"]
                print(f"    {key:18s} max {frac:.3f} of tolerance (|diff| {diff:.2g})")
            for line in row["examples"]:
                print(f"    {line}")
    if ns.json:
        ns.json.write_text(json.dumps(table, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
