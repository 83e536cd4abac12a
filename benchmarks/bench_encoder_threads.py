"""The attribution verifier's MiniLM encoder under xdist: OpenMP wait policy and threads
(not a test).

    .venv/bin/python benchmarks/bench_encoder_threads.py            # 3 runs, 5 cases each

``make audit`` runs two workers on two cores, and each worker's verifier encodes texts one at
a time with MiniLM on two torch threads (the calibration table was derived that way; the
vectors depend on the thread count). This measures milliseconds per text, the median of
``--runs`` runs, for one process alone and for two processes side by side (as two workers),
with OpenMP's default (spinning) wait policy and with ``OMP_WAIT_POLICY=PASSIVE`` (what the
plugin sets before the verifier imports torch), plus one thread per process for comparison,
and whether each configuration's vectors are bit-identical to one process alone on two
threads. Texts: the evidence chunks and answers of ``fixtures/hotpotqa-claims-test`` cases
(each process its own cases, every text encoded once).
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import pickle, sys, time
from pathlib import Path
from pytest_provenai.attribution.pipeline import chunks
from pytest_provenai.frozen.load import load_fixture_set
from pytest_provenai.frozen.traces import collect_evidence
from pytest_provenai.verify.encoder import MiniLMEncoder

start, count, threads, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
cases = load_fixture_set(Path("fixtures/hotpotqa-claims-test")).cases[start:start + count]
texts = []
for case in cases:
    for item in collect_evidence(case.calls, case.families).items:
        texts += chunks(item.text)
    texts += [a.text for a in case.answers]
texts = list(dict.fromkeys(texts))
encoder = MiniLMEncoder(threads=threads)
encoder.embed(["warm up"])
began = time.perf_counter()
vectors = encoder.embed(texts)
seconds = time.perf_counter() - began
with open(out, "wb") as fh:
    pickle.dump({"texts": len(texts), "seconds": seconds, "vectors": vectors}, fh)
"""


def launch(
    start: int, count: int, threads: int, policy: str | None, out: Path
) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(start), str(count), str(threads), str(out)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def run(
    processes: int, threads: int, policy: str | None, cases: int, tmp: Path
) -> list[dict[str, Any]]:
    outs = [tmp / f"p{i}-{processes}-{threads}-{policy}.pkl" for i in range(processes)]
    procs = [launch(i * cases, cases, threads, policy, out) for i, out in enumerate(outs)]
    for p in procs:
        if p.wait() != 0:
            raise SystemExit(f"an encoder process failed (exit {p.returncode})")
    results = []
    for out in outs:
        with out.open("rb") as fh:
            results.append(pickle.load(fh))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cases", type=int, default=5, help="cases per process")
    args = parser.parse_args()
    configs = [
        ("1 process, 2 threads (reference)", 1, 2, None),
        ("2 processes x 2 threads, default wait policy", 2, 2, None),
        ("2 processes x 2 threads, OMP_WAIT_POLICY=PASSIVE", 2, 2, "PASSIVE"),
        ("2 processes x 1 thread", 2, 1, None),
    ]
    load0 = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="provenai-enc-") as tmp:
        reference = run(1, 2, None, args.cases, Path(tmp))[0]["vectors"]
        timings: dict[str, list[float]] = {name: [] for name, *_ in configs}
        identical: dict[str, bool] = {name: True for name, *_ in configs}
        for _ in range(args.runs):
            for name, processes, threads, policy in configs:
                results = run(processes, threads, policy, args.cases, Path(tmp))
                per_text = [1000 * r["seconds"] / r["texts"] for r in results]
                timings[name].append(statistics.mean(per_text))
                identical[name] &= results[0]["vectors"] == reference
                print(f"{name}: {timings[name][-1]:.1f} ms/text", file=sys.stderr, flush=True)
        base = statistics.median(timings[configs[0][0]])
        for name, *_ in configs:
            ms = statistics.median(timings[name])
            rows.append((name, ms, ms / base, identical[name]))
    load1 = os.getloadavg()
    print(
        f"\nMachine: {platform.platform()}, {os.cpu_count()} CPUs, python "
        f"{platform.python_version()}; load average {load0[0]:.1f} at start, "
        f"{load1[0]:.1f} at end; median of {args.runs} runs, {args.cases} cases per process\n"
    )
    print("| configuration | ms per text | vs one process | vectors identical to reference |")
    print("|---|---:|---:|---|")
    for name, ms, ratio, same in rows:
        print(f"| {name} | {ms:.1f} | {ratio:.2f}x | {same} |")


if __name__ == "__main__":
    main()
