"""Teacher-forced ablation passes: one padded batch vs one prompt at a time (issue 26 part 2).

    .venv/bin/python benchmarks/bench_batched_passes.py [--cases 2] [--repeats 3]
        [--new-tokens 32] [--groups 1 2 5 10]

For each case (HotpotQA dev, fixtures/hotpotqa-dev60, k = 10 resources, default model on
transformers, float32, CPU) the realised output of the full prompt (greedy, ``--new-tokens``)
is teacher-forced under each of the 10 ablated prompts, the way the exact ablation path feeds
them, three ways, side by side in one process:

* **prefix reuse** (shipped): one pass over the full prompt + output fills a KV cache; each
  ablated prompt shares the full prompt's tokens before its removed resource, so the cache is
  cropped back to that prefix and only the rest (+ the output) is fed, one prompt at a time;
* **independent**: each ablated prompt + output fed whole, one at a time (no cache);
* **batched B**: the ablated prompts fed whole as left-padded batches of B (attention mask,
  explicit positions), the form a GPU worker would use — every token computed, in parallel.

Per method: wall time (median over ``--repeats``), tokens fed, and the largest difference of
a teacher-forced log-probability from prefix reuse's (the numbers the KL is computed from).
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--groups", type=int, nargs="+", default=[1, 2, 5, 10])
    ns = ap.parse_args()

    import numpy as np

    from pytest_provenai.frozen.load import load_fixture_set
    from pytest_provenai.frozen.model import Case
    from pytest_provenai.subject.ablation import ablated_resources
    from pytest_provenai.subject.backends import Decoding, load_generator
    from pytest_provenai.subject.backends.divergence import common_prefix
    from pytest_provenai.subject.backends.transformers_speculative import crop_to
    from pytest_provenai.subject.prompt import build_prompt, make_resources

    gen: Any = load_generator("transformers", None, decoding=Decoding(max_new_tokens=ns.new_tokens))
    import torch

    model = gen.model
    kw = gen._cache_kw  # the cache argument's name in this transformers version
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores; torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads; {ns.new_tokens} new tokens; median of {ns.repeats}"
    )

    def rows_of(logits: Any, n: int) -> Any:
        lp = torch.log_softmax(logits[..., -n:, :].to(torch.float32), dim=-1)
        return lp.cpu().numpy()

    def prefix_reuse(full: list[int], variants: list[list[int]], cont: list[int]) -> list[Any]:
        n = len(cont)
        with torch.inference_mode():
            out = model(input_ids=torch.tensor([full + cont[:-1]]), use_cache=True)
            cache = getattr(out, kw)
            shared = [min(common_prefix(full, v), len(v) - 1) for v in variants]
            rows: list[Any] = [None] * len(variants)
            for j in sorted(range(len(variants)), key=lambda j: -shared[j]):
                crop_to(cache, shared[j])
                feed = variants[j][shared[j] :] + cont[:-1]
                out = model(
                    input_ids=torch.tensor([feed]),
                    use_cache=True,
                    logits_to_keep=n,
                    **{kw: cache},
                )
                cache = getattr(out, kw)
                rows[j] = rows_of(out.logits[0], n)
        return rows

    def independent(variants: list[list[int]], cont: list[int]) -> list[Any]:
        n = len(cont)
        with torch.inference_mode():
            return [
                rows_of(
                    model(
                        input_ids=torch.tensor([v + cont[:-1]]),
                        use_cache=False,
                        logits_to_keep=n,
                    ).logits[0],
                    n,
                )
                for v in variants
            ]

    def batched(variants: list[list[int]], cont: list[int], size: int) -> list[Any]:
        n = len(cont)
        rows: list[Any] = []
        with torch.inference_mode():
            for start in range(0, len(variants), size):
                group = [v + cont[:-1] for v in variants[start : start + size]]
                width = max(len(g) for g in group)
                ids = torch.zeros((len(group), width), dtype=torch.long)
                mask = torch.zeros((len(group), width), dtype=torch.long)
                pos = torch.zeros((len(group), width), dtype=torch.long)
                for b, g in enumerate(group):
                    ids[b, width - len(g) :] = torch.tensor(g)
                    mask[b, width - len(g) :] = 1
                    pos[b, width - len(g) :] = torch.arange(len(g))
                out = model(
                    input_ids=ids,
                    attention_mask=mask,
                    position_ids=pos,
                    use_cache=False,
                    logits_to_keep=n,
                )
                rows += [rows_of(out.logits[b], n) for b in range(len(group))]
        return rows

    def timed(fn: Any, *args: Any) -> tuple[float, Any]:
        walls: list[float] = []
        result = None
        for _ in range(ns.repeats):
            start = time.perf_counter()
            result = fn(*args)
            walls.append(time.perf_counter() - start)
        return statistics.median(walls), result

    loaded = load_fixture_set(ROOT / "fixtures" / "hotpotqa-dev60").cases[: ns.cases]
    cases = [c for c in loaded if isinstance(c, Case)]
    print(
        "\n| case | method | tokens fed | wall (s) | vs prefix reuse | max |Δ logprob| |\n"
        "|---|---|---:|---:|---:|---:|"
    )
    for case in cases:
        resources = make_resources(case.sources)
        full_prompt = build_prompt(case.question, resources, gen.render_chat).prompt
        variant_prompts = [
            build_prompt(case.question, ablated_resources(resources, r.id), gen.render_chat).prompt
            for r in resources
        ]
        full = gen.encode(full_prompt)
        variants = [gen.encode(p) for p in variant_prompts]
        cont = gen.generate(full_prompt).token_ids
        n = len(cont)
        shared = [min(common_prefix(full, v), len(v) - 1) for v in variants]
        reuse_tokens = len(full) + n - 1
        reuse_tokens += sum(len(v) - s + n - 1 for v, s in zip(variants, shared, strict=True))
        whole_tokens = sum(len(v) + n - 1 for v in variants)

        base_wall, base = timed(prefix_reuse, full, variants, cont)
        runs: list[tuple[str, int, float, Any]] = [("prefix reuse", reuse_tokens, base_wall, base)]
        wall, rows = timed(independent, variants, cont)
        runs.append(("independent", whole_tokens, wall, rows))
        for size in ns.groups:
            wall, rows = timed(batched, variants, cont, size)
            runs.append((f"batched {size}", whole_tokens, wall, rows))
        for name, tokens, wall, rows in runs:
            diff = max(float(np.abs(a - b).max()) for a, b in zip(rows, base, strict=True))
            print(
                f"| {case.id[:8]}… ({len(full)} + {n} tokens) | {name} | {tokens:,} | "
                f"{wall:.2f} | {base_wall / wall:.2f}× | {diff:.1e} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
