"""Leave-one-resource-out ablation: naive regeneration vs the exact fast path (not a test).

    .venv/bin/python benchmarks/bench_influence.py [--cases 10] [--max-new-tokens 128]

For each HotpotQA dev case (fixtures/hotpotqa-dev60, k = 10 resources, default model, no
cache), side by side in one process:

* **naive** — k greedy generations, one per ablated prompt (the full-context generation is
  shared by both methods and not counted);
* **naive+KL** (``--with-kl``) — naive plus the KL target by ``score()`` (k + 1
  teacher-forced forwards);
* **exact** — ``ablation_pass``: one forward over the full prompt + realised output, then per
  ablation only the part after the removed resource + the teacher-forced output, regenerating
  from the first divergent position where needed. It yields the surface proxy *and* the KL.

Forward tokens count every token fed through the model (prompt tokens, teacher-forced tokens
and one per decoding step). The lower bound of any exact method is Σ_i (tokens of ablated
prompt i after the removed resource) + k × output tokens: every ablated context must at least
see what changed and score the output. Prints a per-case table and the totals; the order of
naive and exact alternates between cases so drift in machine load hits both.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--fixtures", default=str(ROOT / "fixtures" / "hotpotqa-dev60"))
    parser.add_argument(
        "--with-kl", action="store_true", help="also time naive + KL by score() (k + 1 forwards)"
    )
    args = parser.parse_args()

    from pytest_provenai.frozen.load import load_fixture_set
    from pytest_provenai.subject.ablation import _prompts
    from pytest_provenai.subject.backends._common import first_divergence
    from pytest_provenai.subject.backends.base import TIE_MARGIN
    from pytest_provenai.subject.subject import ModelSubject, make_subject

    subject = make_subject(
        backend="transformers",
        model=None,
        pipeline=None,
        device="cpu",
        max_new_tokens=args.max_new_tokens,
        cache_root=None,
    )
    assert isinstance(subject, ModelSubject)
    gen = subject.generator
    cases = load_fixture_set(args.fixtures).cases[: args.cases]
    rows = []
    for n, case in enumerate(cases):
        trace = subject.answer(case)
        assert trace.view is not None and trace.generation is not None
        realised = list(trace.generation.token_ids)
        full_ids = gen.encode(trace.view.prompt)  # type: ignore[attr-defined]
        prompts = _prompts(subject, case, list(trace.resources))
        encoded = [gen.encode(p) for p in prompts]  # type: ignore[attr-defined]

        def common(a: list[int], b: list[int]) -> int:
            i = 0
            while i < min(len(a), len(b)) and a[i] == b[i]:
                i += 1
            return i

        bound = sum(len(e) - min(common(full_ids, e), len(e) - 1) for e in encoded)
        bound += len(prompts) * len(realised)

        def naive(
            prompts: list[str] = prompts, encoded: list[list[int]] = encoded
        ) -> tuple[float, int, list[list[int]]]:
            t = time.perf_counter()
            toks, outs = 0, []
            for p, e in zip(prompts, encoded, strict=True):
                g = gen.generate(p)
                outs.append(g.token_ids)
                toks += len(e) + len(g.token_ids) - 1
            return time.perf_counter() - t, toks, outs

        def exact(
            prompt: str = trace.view.prompt,
            prompts: list[str] = prompts,
            realised: list[int] = realised,
        ) -> tuple[float, int, list[list[int]], int]:
            t = time.perf_counter()
            result = gen.ablation_pass(prompt, prompts, realised)  # type: ignore[attr-defined]
            regen = sum(v.divergence is not None for v in result.variants)
            return (
                time.perf_counter() - t,
                result.forward_tokens,
                [v.generation.token_ids for v in result.variants],
                regen,
            )

        if n % 2 == 0:
            n_s, n_tok, n_out = naive()
            e_s, e_tok, e_out, regen = exact()
        else:
            e_s, e_tok, e_out, regen = exact()
            n_s, n_tok, n_out = naive()
        kl_s = float("nan")
        if args.with_kl:
            t = time.perf_counter()
            gen.score(trace.view.prompt, realised)
            for p in prompts:
                first_divergence(gen.score(p, realised), realised, TIE_MARGIN)
            kl_s = time.perf_counter() - t
        kl_tok = (len(full_ids) + len(realised) - 1) + sum(
            len(e) + len(realised) - 1 for e in encoded
        )
        rows.append(
            {
                "case": case.id,
                "prompt": len(full_ids),
                "out": len(realised),
                "naive_s": n_s,
                "naive_kl_s": n_s + kl_s,
                "exact_s": e_s,
                "naive_tok": n_tok,
                "naive_kl_tok": n_tok + kl_tok,
                "exact_tok": e_tok,
                "bound_tok": bound,
                "regen": regen,
                "same": n_out == e_out,
            }
        )
        r = rows[-1]
        print(
            f"case {n + 1}/{len(cases)} {case.id}: naive {n_s:.1f}s exact {e_s:.1f}s "
            f"(x{n_s / e_s:.2f}) same={r['same']}",
            file=sys.stderr,
            flush=True,
        )

    print(
        f"\nMachine: {platform.platform()}, {os.cpu_count()} CPUs, "
        f"python {platform.python_version()}"
    )
    print(
        f"Default model, {len(rows)} HotpotQA dev cases, k = 10, max_new_tokens = "
        f"{args.max_new_tokens}, no cache.\n"
    )
    print(
        "| case | prompt tok | output tok | naive s | naive+KL s | exact s | naive/exact | "
        "regenerated | naive tok | exact tok | bound tok | exact/bound | same outputs |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(
            f"| {r['case']} | {r['prompt']} | {r['out']} | {r['naive_s']:.1f} | "
            f"{r['naive_kl_s']:.1f} | {r['exact_s']:.1f} | {r['naive_s'] / r['exact_s']:.2f} | "
            f"{r['regen']}/10 | {r['naive_tok']} | {r['exact_tok']} | {r['bound_tok']} | "
            f"{r['exact_tok'] / r['bound_tok']:.2f} | {r['same']} |"
        )
    tot = {k: sum(r[k] for r in rows) for k in rows[0] if k not in ("case", "same")}
    print(
        f"| **total** | | | {tot['naive_s']:.1f} | {tot['naive_kl_s']:.1f} | "
        f"{tot['exact_s']:.1f} | **{tot['naive_s'] / tot['exact_s']:.2f}** | "
        f"{tot['regen']}/{10 * len(rows)} | {tot['naive_tok']} | {tot['exact_tok']} | "
        f"{tot['bound_tok']} | **{tot['exact_tok'] / tot['bound_tok']:.2f}** | "
        f"{sum(r['same'] for r in rows)}/{len(rows)} |"
    )
    med = statistics.median(r["naive_s"] / r["exact_s"] for r in rows)
    print(
        f"\nSpeed-up naive/exact: total {tot['naive_s'] / tot['exact_s']:.2f}x, median per "
        f"case {med:.2f}x; with KL (naive+KL)/exact {tot['naive_kl_s'] / tot['exact_s']:.2f}x. "
        f"Forward tokens naive/exact {tot['naive_tok'] / tot['exact_tok']:.2f}x; "
        f"exact/bound {tot['exact_tok'] / tot['bound_tok']:.2f}x."
    )


if __name__ == "__main__":
    main()
