"""Teacher-forced feeds after a cached prefix: the model's own attention vs the split one.

    .venv/bin/python benchmarks/bench_prefix_attention.py [--cases 2] [--repeats 3]

An ablation pass feeds each ablated prompt's tokens after its removed resource, plus the
realised output, on top of the KV cache of the tokens before it (issue 26 part 2). Given the
explicit causal mask such a feed needs, transformers' SDPA on the CPU computes every masked
column. ``PREFIX_SPLIT_ATTENTION`` attends the cached keys without a mask and the new positions
causally among themselves, merged by log-sum-exp. Two tables, both side by side in one process:

1. **the attention op alone** (one torch thread, as one ``make audit`` worker; the default
   model's 9 query / 3 key-value heads of 64), on feed shapes (P cached, L new) that ablation
   passes have, median of ``--repeats`` x 3 calls: the model's SDPA, the split, their ratio
   and the largest output difference;
2. **the teacher-forced passes of real cases** (HotpotQA dev, fixtures/hotpotqa-dev60, k = 10,
   default model, ``--new-tokens``): the prefix-reuse feeds of ``ablation_pass`` under each
   attention, alternating, CPU seconds of this process (median of ``--repeats``; CPU seconds
   move less than wall when other jobs share the cores), and the largest difference of a
   teacher-forced log-probability (what the KL is computed from).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHAPES = [(100, 1900), (300, 1600), (1000, 1000), (1500, 420), (1800, 60), (1900, 28)]


def cpu_median(fn: Any, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def op_table(repeats: int) -> None:
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from pytest_provenai.subject.backends.transformers_speculative import prefix_split_attention

    threads = torch.get_num_threads()
    torch.set_num_threads(1)

    class Module(torch.nn.Module):
        num_key_value_groups = 3
        is_causal = True

    module = Module()
    print(
        "\n1. attention op, one thread, 9 query / 3 key-value heads of 64\n\n"
        "| cached P | new L | SDPA ms | split ms | SDPA / split | max |Δ| |\n"
        "|---:|---:|---:|---:|---:|---:|"
    )
    scale = 64**-0.5
    rng = torch.Generator().manual_seed(0)
    for past, new in SHAPES:
        query = torch.randn(1, new, 9, 64, generator=rng).transpose(1, 2)
        key = torch.randn(1, 3, past + new, 64, generator=rng)
        value = torch.randn(1, 3, past + new, 64, generator=rng)
        pos = torch.arange(new)[:, None] + past
        mask = (torch.arange(past + new)[None, :] <= pos)[None, None]
        own = cpu_median(
            lambda q=query, k=key, v=value, m=mask: sdpa_attention_forward(
                module, q, k, v, m, scaling=scale
            ),
            repeats * 3,
        )
        split = cpu_median(
            lambda q=query, k=key, v=value, m=mask: prefix_split_attention(
                module, q, k, v, m, scaling=scale
            ),
            repeats * 3,
        )
        a = sdpa_attention_forward(module, query, key, value, mask, scaling=scale)[0]
        b = prefix_split_attention(module, query, key, value, mask, scaling=scale)[0]
        diff = float((a - b).abs().max())
        print(
            f"| {past:,} | {new:,} | {own * 1e3:.1f} | {split * 1e3:.1f} | "
            f"{own / split:.2f}× | {diff:.1e} |"
        )
    torch.set_num_threads(threads)


def pass_table(cases: int, repeats: int, new_tokens: int) -> None:
    import numpy as np
    import torch

    from pytest_provenai.frozen.load import load_fixture_set
    from pytest_provenai.frozen.model import Case
    from pytest_provenai.subject.ablation import ablated_resources
    from pytest_provenai.subject.backends import Decoding, load_generator
    from pytest_provenai.subject.backends.divergence import common_prefix
    from pytest_provenai.subject.backends.transformers_speculative import (
        PREFIX_SPLIT_ATTENTION,
        attention_under,
        crop_to,
    )
    from pytest_provenai.subject.prompt import build_prompt, make_resources

    gen: Any = load_generator("transformers", None, decoding=Decoding(max_new_tokens=new_tokens))
    model = gen.model
    kw = gen._cache_kw  # the cache argument's name in this transformers version
    print(
        f"\n2. teacher-forced ablation feeds, {torch.get_num_threads()} torch threads, "
        f"{new_tokens} new tokens, CPU s median of {repeats}\n\n"
        "| case | tokens fed after the prefix | SDPA CPU s | split CPU s | SDPA / split "
        "| max |Δ logprob| |\n|---|---:|---:|---:|---:|---:|"
    )

    def feeds(full: list[int], variants: list[list[int]], cont: list[int], split: bool) -> Any:
        n = len(cont)
        rows: list[Any] = [None] * len(variants)
        with torch.inference_mode():
            out = model(input_ids=torch.tensor([full + cont[:-1]]), use_cache=True)
            cache = getattr(out, kw)
            shared = [min(common_prefix(full, v), len(v) - 1) for v in variants]
            start = time.process_time()
            for j in sorted(range(len(variants)), key=lambda j: -shared[j]):
                crop_to(cache, shared[j])
                feed = variants[j][shared[j] :] + cont[:-1]
                under = (
                    attention_under(model, PREFIX_SPLIT_ATTENTION)
                    if split
                    else contextlib.nullcontext()
                )
                with under:
                    out = model(
                        input_ids=torch.tensor([feed]),
                        use_cache=True,
                        logits_to_keep=n,
                        **{kw: cache},
                    )
                cache = getattr(out, kw)
                lp = torch.log_softmax(out.logits[0, -n:].to(torch.float32), dim=-1)
                rows[j] = lp.numpy()
            spent = time.process_time() - start
        return spent, rows

    loaded = load_fixture_set(ROOT / "fixtures" / "hotpotqa-dev60").cases[:cases]
    total = {"own": 0.0, "split": 0.0}
    for case in [c for c in loaded if isinstance(c, Case)]:
        resources = make_resources(case.sources)
        full_prompt = build_prompt(case.question, resources, gen.render_chat).prompt
        full = gen.encode(full_prompt)
        variants = [
            gen.encode(
                build_prompt(
                    case.question, ablated_resources(resources, r.id), gen.render_chat
                ).prompt
            )
            for r in resources
        ]
        cont = gen.generate(full_prompt).token_ids
        fed = sum(
            len(v) - min(common_prefix(full, v), len(v) - 1) + len(cont) - 1 for v in variants
        )
        times: dict[str, list[float]] = {"own": [], "split": []}
        rows: dict[str, Any] = {}
        for rep in range(repeats):
            order = ("own", "split") if rep % 2 == 0 else ("split", "own")
            for name in order:
                spent, rows[name] = feeds(full, variants, cont, split=name == "split")
                times[name].append(spent)
        own, split = statistics.median(times["own"]), statistics.median(times["split"])
        total["own"] += own
        total["split"] += split
        diff = max(
            float(np.abs(a - b).max()) for a, b in zip(rows["own"], rows["split"], strict=True)
        )
        print(
            f"| {case.id[:8]}… ({len(full):,} + {len(cont)} tokens) | {fed:,} | {own:.2f} | "
            f"{split:.2f} | {own / split:.2f}× | {diff:.1e} |"
        )
    print(
        f"| **all** | | {total['own']:.2f} | {total['split']:.2f} | "
        f"**{total['own'] / total['split']:.2f}×** | |"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--cases", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--new-tokens", type=int, default=32)
    ns = ap.parse_args()

    from pytest_provenai.subject.backends.libraries import prepare_torch_import

    prepare_torch_import()
    import torch

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f}; torch {torch.__version__}"
    )
    op_table(ns.repeats)
    pass_table(ns.cases, ns.repeats, ns.new_tokens)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
