"""Shared-prefix batched generation vs one generation at a time (not a test).

    .venv/bin/python benchmarks/bench_generate_many.py exposure [--cases 4]
    .venv/bin/python benchmarks/bench_generate_many.py cases [--cases 4] [--batch 4]

* ``exposure`` — the five treatments of each exposure / no-answer case (the provenance
  suite's model work): ``generate`` per treatment vs ``generate_many`` of the five (the prefix
  before the aid slot run once, the treatments decoded together).
* ``cases`` — batching *across* cases: the full-context prompts of ``--batch`` HotpotQA dev
  cases generated one at a time vs together with ``generate_many`` (they share the system
  message and the worked examples; the rest is decoded in one batch).

Default model, transformers, no cache, in one process; the order of the two methods
alternates between groups so drift in machine load hits both. Wall and CPU seconds (this
process, all threads) are printed, and whether every output is token-identical.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> tuple[float, float]:
    return time.perf_counter() - start[0], time.process_time() - start[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("exposure", "cases"))
    parser.add_argument("--cases", type=int, default=4)
    parser.add_argument("--batch", type=int, default=4, help="cases per batch (cases mode)")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    args = parser.parse_args()

    from pytest_provenai.frozen.load import load_fixture_set
    from pytest_provenai.frozen.model import Case, GroundedCase
    from pytest_provenai.subject.backends.lazy import LazyGenerator
    from pytest_provenai.subject.exposure import TREATMENTS, build_view
    from pytest_provenai.subject.prompt import build_prompt, make_resources
    from pytest_provenai.subject.subject import ModelSubject, make_subject

    load0 = os.getloadavg()
    subject = make_subject(
        backend="transformers",
        model=None,
        pipeline=None,
        device="cpu",
        max_new_tokens=args.max_new_tokens,
        cache_root=None,
    )
    assert isinstance(subject, ModelSubject) and isinstance(subject.generator, LazyGenerator)
    gen: Any = subject.generator
    gen.backend()  # load outside the timings

    groups: list[tuple[str, list[str]]] = []
    if args.what == "exposure":
        sets = {
            name: [
                c
                for c in load_fixture_set(ROOT / "fixtures" / name).cases
                if isinstance(c, GroundedCase)
            ]
            for name in ("synthetic-no-answer", "synthetic-exposure")
        }
        half = (args.cases + 1) // 2  # both kinds, even for a small --cases
        rest = args.cases - half
        chosen = sets["synthetic-no-answer"][:half] + sets["synthetic-exposure"][:rest]
        for c in chosen:
            groups.append((c.id, [build_view(c, t, gen.render_chat).prompt for t in TREATMENTS]))
    else:
        dev = [
            c
            for c in load_fixture_set(ROOT / "fixtures" / "hotpotqa-dev60").cases[: args.cases]
            if isinstance(c, Case)
        ]
        prompts = [
            build_prompt(c.question, make_resources(c.sources), gen.render_chat).prompt for c in dev
        ]
        for i in range(0, len(prompts), args.batch):
            ids = ",".join(c.id[:8] for c in dev[i : i + args.batch])
            groups.append((ids, prompts[i : i + args.batch]))

    rows = []
    for n, (name, prompts) in enumerate(groups):

        def one_by_one(prompts: list[str] = prompts) -> tuple[tuple[float, float], list[Any]]:
            start = clock()
            outs = [gen.generate(p) for p in prompts]
            return since(start), outs

        def together(prompts: list[str] = prompts) -> tuple[tuple[float, float], Any]:
            start = clock()
            batch = gen.generate_many(prompts)
            return since(start), batch

        if n % 2 == 0:
            o_t, outs = one_by_one()
            b_t, batch = together()
        else:
            b_t, batch = together()
            o_t, outs = one_by_one()
        same = [g.token_ids for g in batch.generations] == [g.token_ids for g in outs]
        prompt_tok = [len(gen.encode(p)) for p in prompts]
        rows.append(
            {
                "group": name,
                "prompts": len(prompts),
                "prompt_tok": statistics.median(prompt_tok),
                "out_tok": sum(len(g.token_ids) for g in outs),
                "one_s": o_t[0],
                "one_cpu": o_t[1],
                "many_s": b_t[0],
                "many_cpu": b_t[1],
                "fallbacks": batch.decode.fallbacks,
                "accepted": batch.decode.accepted,
                "drafted": batch.decode.drafted,
                "same": same,
            }
        )
        print(
            f"{n + 1}/{len(groups)} {name}: one by one {o_t[0]:.1f}s, together {b_t[0]:.1f}s "
            f"(x{o_t[0] / b_t[0]:.2f}) same={same}",
            file=sys.stderr,
            flush=True,
        )

    load1 = os.getloadavg()
    print(
        f"\nMachine: {platform.platform()}, {os.cpu_count()} CPUs, python "
        f"{platform.python_version()}; load average {load0[0]:.1f} at start, "
        f"{load1[0]:.1f} at end"
    )
    what = (
        "exposure treatments (5 per case)"
        if args.what == "exposure"
        else f"HotpotQA dev full-context prompts, {args.batch} cases per batch"
    )
    print(f"transformers, default model, {what}, max_new_tokens = {args.max_new_tokens}\n")
    print(
        "| group | prompts | prompt tok (median) | output tok | one by one s | together s | "
        "ratio | cpu ratio | drafts accepted | fallbacks | identical |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(
            f"| {r['group']} | {r['prompts']} | {r['prompt_tok']:.0f} | {r['out_tok']} | "
            f"{r['one_s']:.1f} | {r['many_s']:.1f} | {r['one_s'] / r['many_s']:.2f} | "
            f"{r['one_cpu'] / r['many_cpu']:.2f} | {r['accepted']}/{r['drafted']} | "
            f"{r['fallbacks']} | {r['same']} |"
        )
    one = sum(r["one_s"] for r in rows)
    many = sum(r["many_s"] for r in rows)
    one_cpu = sum(r["one_cpu"] for r in rows)
    many_cpu = sum(r["many_cpu"] for r in rows)
    print(
        f"| **total** | {sum(r['prompts'] for r in rows)} | | "
        f"{sum(r['out_tok'] for r in rows)} | {one:.1f} | {many:.1f} | **{one / many:.2f}** | "
        f"{one_cpu / many_cpu:.2f} | | {sum(r['fallbacks'] for r in rows)} | "
        f"{sum(r['same'] for r in rows)}/{len(rows)} |"
    )


if __name__ == "__main__":
    main()
