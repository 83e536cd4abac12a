"""Served vs in-process: latency, throughput, greedy agreement and the top-k KL error (not a test).

    .venv/bin/python benchmarks/bench_served.py [--cases 5] [--max-new-tokens 32]
        [--kl-cases 2] [--kl-resources 3] [--influence-cases 1] [--echo]
        [--llama-server PATH]

Starts llama-cpp-python's server (or, with ``--llama-server``, llama.cpp's own C++
``llama-server`` binary) on 127.0.0.1 (a free port) serving the embedded default GGUF
(tests/served.py), loads the same GGUF in-process with the transformers backend, and on the
first ``--cases`` HotpotQA dev cases (fixtures/hotpotqa-dev60, 10 resources each, the
harness's own prompt) measures, side by side in one run:

* per-case generation latency: in-process; served with one client; served with two clients
  at once over the one server (what ``-n 2`` with one base URL does) — median and total,
  and output tokens per second;
* greedy agreement: cases whose served output equals the in-process output, and where the
  first differing token lies;
* the KL approximation: for ``--kl-cases`` cases and their first ``--kl-resources``
  ablations, the KL of the in-process realised output (per position, over the whole output)
  computed (a) exactly in-process, (b) in-process from each row's top-20 with the rest
  lumped (the approximation alone), (c) from the server's echoed top-20 (approximation +
  runtime: llama.cpp computes with the Q4_1 weights, transformers with them dequantised);
* exact influence per case (issue 26): for ``--influence-cases`` cases, every ablation's
  ``ablation_pass`` (score the realised output under the full and each ablated prompt,
  regenerate where it diverges) in-process and served, scored from generation-time logprobs
  (``steps``, the default; streamed where the probe allows it, and beside it the same from
  plain replies — the two in alternating order, case by case, as the server's prompt cache
  makes the second cheaper) and, with ``--echo``, from echoed prompt logprobs
  (llama-cpp-python builds those in Python for every prompt position: minutes per case).

The machine is shared: absolute seconds are noisy, the ratios come from one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--kl-cases", type=int, default=2)
    parser.add_argument("--kl-resources", type=int, default=3)
    parser.add_argument("--top-logprobs", type=int, default=20)
    parser.add_argument("--influence-cases", type=int, default=1)
    parser.add_argument("--echo", action="store_true", help="also time scoring by echo")
    parser.add_argument("--max-concurrency", type=int, default=4)
    parser.add_argument(
        "--llama-server",
        metavar="PATH",
        help="serve with llama.cpp's own C++ llama-server binary instead of llama-cpp-python's",
    )
    args = parser.parse_args()

    import numpy as np
    from served import MODEL_ALIAS, llama_server, native_llama_server

    from pytest_provenai.frozen.load import load_fixture_set
    from pytest_provenai.frozen.model import Case
    from pytest_provenai.subject.ablation import _prompts
    from pytest_provenai.subject.backends.base import Decoding
    from pytest_provenai.subject.backends.served import (
        ServedOptions,
        load_served,
        truncate_rows,
    )
    from pytest_provenai.subject.kl import kl_rows
    from pytest_provenai.subject.prompt import build_prompt, make_resources
    from pytest_provenai.subject.subject import ModelSubject, make_subject

    loaded = load_fixture_set(ROOT / "fixtures" / "hotpotqa-dev60").cases[: args.cases]
    cases = [c for c in loaded if isinstance(c, Case)]  # a HotpotQA set: every case is one
    local = make_subject(
        backend="transformers",
        model=None,
        pipeline=None,
        device="cpu",
        max_new_tokens=args.max_new_tokens,
        cache_root=None,
    )
    assert isinstance(local, ModelSubject)
    lgen = local.generator
    os.environ.pop("PROVENAI_API_KEY", None)
    server = (
        native_llama_server(args.llama_server, api_key=None)
        if args.llama_server
        else llama_server(api_key=None)
    )
    print(f"server: {args.llama_server or 'llama-cpp-python (python -m llama_cpp.server)'}")
    with server as url:
        options = ServedOptions(
            base_url=url,
            model=MODEL_ALIAS,
            tokenizer="default",
            top_logprobs=args.top_logprobs,
            max_concurrency=args.max_concurrency,
        )
        served = load_served(options, Decoding(max_new_tokens=args.max_new_tokens))
        print(served.report.describe())
        plain = None  # the same server read from plain (not streamed) replies, side by side
        if served.report.stream:
            plain = load_served(options, Decoding(max_new_tokens=args.max_new_tokens))
            plain.report = replace(served.report, stream=False)
        echo = (
            load_served(
                replace(options, score_via="echo"), Decoding(max_new_tokens=args.max_new_tokens)
            )
            if args.echo
            else None
        )
        prompts = [
            build_prompt(c.question, make_resources(c.sources), lgen.render_chat).prompt
            for c in cases
        ]
        assert prompts == [
            build_prompt(c.question, make_resources(c.sources), served.render_chat).prompt
            for c in cases
        ]
        sizes = [len(lgen.encode(p)) for p in prompts]  # type: ignore[attr-defined]
        served.generate(prompts[0])  # warm the server (first request loads buffers)
        lgen.generate(prompts[0])

        rows: list[dict[str, Any]] = []
        for i, prompt in enumerate(prompts):
            order = ("local", "served") if i % 2 == 0 else ("served", "local")
            row: dict[str, Any] = {"case": cases[i].id, "prompt_tokens": sizes[i]}
            for which in order:
                gen_fn = lgen.generate if which == "local" else served.generate
                t0 = time.perf_counter()
                g = gen_fn(prompt)
                row[which] = (time.perf_counter() - t0, g)
            rows.append(row)

        # two clients at once over the one server (= -n 2 sharing one base URL)
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=2) as pool:
            timed = list(pool.map(lambda p: _timed(served.generate, p), prompts))
        two_wall = time.perf_counter() - t0

        print(
            f"\n{len(cases)} cases, prompts {min(sizes)}-{max(sizes)} tokens (median "
            f"{med([float(s) for s in sizes]):.0f}), max_new_tokens {args.max_new_tokens}\n"
        )
        print("| run | median s/case | total s | output tok/s | cases/min |")
        print("|---|---:|---:|---:|---:|")
        for label, key in (("in-process transformers", "local"), ("served, 1 client", "served")):
            secs = [r[key][0] for r in rows]
            toks = sum(len(r[key][1].token_ids) for r in rows)
            print(
                f"| {label} | {med(secs):.2f} | {sum(secs):.1f} | {toks / sum(secs):.2f} "
                f"| {60 * len(rows) / sum(secs):.1f} |"
            )
        toks2 = sum(len(g.token_ids) for _, g in timed)
        print(
            f"| served, 2 clients, one server | {med([s for s, _ in timed]):.2f} "
            f"| {two_wall:.1f} (wall) | {toks2 / two_wall:.2f} | {60 * len(rows) / two_wall:.1f} |"
        )

        print("\n| case | prompt tok | in-process out | served out | same text | first diff |")
        print("|---|---:|---:|---:|---|---:|")
        same = 0
        for r in rows:
            a, b = r["local"][1], r["served"][1]
            diff = next(
                (
                    t
                    for t, (x, y) in enumerate(zip(a.token_ids, b.token_ids, strict=False))
                    if x != y
                ),
                None
                if len(a.token_ids) == len(b.token_ids)
                else min(len(a.token_ids), len(b.token_ids)),
            )
            same += a.text == b.text
            print(
                f"| {r['case']} | {r['prompt_tokens']} | {len(a.token_ids)} | "
                f"{len(b.token_ids)} | {a.text == b.text} | {'-' if diff is None else diff} |"
            )
        print(f"greedy agreement: {same}/{len(rows)} identical outputs")

        # KL: exact in-process vs top-k in-process vs served top-k
        errs_sim: list[float] = []
        errs_srv: list[float] = []
        print("\n| case | resource | exact KL | in-process top-k | served top-k | score s |")
        print("|---|---|---:|---:|---:|---:|")
        for r, case in zip(rows[: args.kl_cases], cases[: args.kl_cases], strict=True):
            realised = list(r["local"][1].token_ids)
            resources = make_resources(case.sources)
            full = build_prompt(case.question, resources, lgen.render_chat).prompt
            ablated = _prompts(local, case, resources)[: args.kl_resources]
            lf = lgen.score(full, realised)
            t0 = time.perf_counter()
            sf = served.score(full, realised)
            score_s = [time.perf_counter() - t0]
            for j, p in enumerate(ablated):
                la = lgen.score(p, realised)
                t0 = time.perf_counter()
                sa = served.score(p, realised)
                score_s.append(time.perf_counter() - t0)
                exact = float(np.mean(kl_rows(lf, la)))
                sim = float(
                    np.mean(
                        kl_rows(
                            truncate_rows(lf, args.top_logprobs),
                            truncate_rows(la, args.top_logprobs),
                        )
                    )
                )
                srv = float(np.mean(kl_rows(sf, sa)))
                errs_sim.append(abs(sim - exact))
                errs_srv.append(abs(srv - exact))
                print(
                    f"| {case.id} | R{j} | {exact:.4f} | {sim:.4f} | {srv:.4f} "
                    f"| {score_s[-1]:.1f} |"
                )
        if args.influence_cases:
            print(
                "\n| case | ablations | in-process s | served (steps) s | ratio | served, "
                "plain replies s | ratio | served (echo) s | steps requests | diverged |"
            )
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for i, (r, case) in enumerate(
            zip(rows[: args.influence_cases], cases[: args.influence_cases], strict=True)
        ):
            realised = list(r["local"][1].token_ids)
            resources = make_resources(case.sources)
            full = build_prompt(case.question, resources, lgen.render_chat).prompt
            ablated = _prompts(local, case, resources)
            t_local, _ = _pass(lgen, full, ablated, realised)
            # the server's prompt cache makes whichever pass runs second cheaper: the two
            # served passes alternate their order from case to case
            t_plain = float("nan")
            if plain and i % 2 == 1:
                t_plain = _pass(plain, full, ablated, realised)[0]
            before = served.client.requests
            t_steps, steps_pass = _pass(served, full, ablated, realised)
            n_req = served.client.requests - before
            if plain and i % 2 == 0:
                t_plain = _pass(plain, full, ablated, realised)[0]
            t_echo = f"{_pass(echo, full, ablated, realised)[0]:.1f}" if echo else "-"
            diverged = sum(v.divergence is not None for v in steps_pass.variants)
            print(
                f"| {case.id} | {len(ablated)} | {t_local:.1f} | {t_steps:.1f} | "
                f"{t_steps / t_local:.2f}x | {t_plain:.1f} | {t_plain / t_local:.2f}x | "
                f"{t_echo} | {n_req} | {diverged} |"
            )
        if errs_sim:
            print(
                f"\nmean-KL abs error vs exact: in-process top-{args.top_logprobs} median "
                f"{med(errs_sim):.4f} max {max(errs_sim):.4f}; served median "
                f"{med(errs_srv):.4f} max {max(errs_srv):.4f} (n={len(errs_sim)})"
            )
        print(
            f"client: {served.client.requests} requests, {served.client.retried} retried, "
            f"{served.retokenized} outputs re-tokenised on their own, "
            f"{served.echo_fallbacks} scored by echo where steps could not, "
            f"{served.stream_fallbacks} streams cut short and asked again plainly, "
            f"{served.id_prompts} scoring requests sent as token ids"
        )


def _pass(gen: Any, full: str, ablated: list[str], realised: list[int]) -> tuple[float, Any]:
    """Seconds for one case's ``ablation_pass`` (every ablation), and the pass."""
    t0 = time.perf_counter()
    out = gen.ablation_pass(full, ablated, realised)
    return time.perf_counter() - t0, out


def _timed(fn: Any, arg: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn(arg)
    return time.perf_counter() - t0, out


if __name__ == "__main__":
    main()
