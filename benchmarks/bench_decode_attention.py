"""One decoding forward of the fast paths, by attention implementation (not a test).

    .venv/bin/python benchmarks/bench_decode_attention.py [--context 2000] [--runs 3]

The exact ablation path and the exposure treatments decode several prompts together: each
forward feeds ``rows`` prompts ``positions`` tokens each (the last token plus drafts) against
a ~2,000-token KV cache per row, with a mask for the left padding and the holes rejected
drafts leave. The default model has 9 query heads per 3 key/value heads. This times one such
forward (default model, one thread, as one xdist worker of ``make audit`` has; random cache
contents, so only the shapes matter) under:

* **model's own** — transformers' SDPA attention: a single position packs the query heads
  of a group itself, several positions copy every layer's keys and values once per query
  head (``repeat_kv``);
* **enable_gqa** — SDPA told to attend the grouped heads directly
  (``TRANSFORMERS_SDPA_FORCE_GQA=1``; what the fast paths used before);
* **packed** — the fast paths' attention now: the query heads of a key/value head packed
  into one block of ``groups x positions`` query rows, the mask repeated for each.

Median of ``--runs`` forwards each, and the largest logit difference of packed against the
model's own attention.

A second table says where a packed forward's time goes and how far it is from what the
machine allows: the matrix products and the attention (self time of ``aten::mm`` and of the
attention kernels under ``torch.profiler``, one more forward), the **memory floor** = (the
model's weights + ``rows`` x one row's cached keys and values) / the read bandwidth measured
in this run (summing a 512 MB tensor, median of 5), and the time per decoded row-position
against one prompt token of prefill (a forward over a ``--context``-token prompt, no cache).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHAPES = ((1, 1), (9, 1), (4, 4), (9, 4), (9, 8))


def read_bandwidth(torch: Any) -> float:
    """Bytes per second this process reads from memory: a sum over a 512 MB tensor (filled,
    so every page is real), median of 5."""
    data = torch.randn(128 * 2**20)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        float(data.sum())
        times.append(time.perf_counter() - start)
    return float(data.numel() * data.element_size() / statistics.median(times))


def profile_split(torch: Any, run: Any) -> tuple[float, float]:
    """Seconds of matrix products and of attention kernels (self CPU time) in ``run()``."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        run()
    mm = attention = 0.0
    for event in prof.key_averages():
        if event.key in ("aten::mm", "aten::addmm", "aten::bmm"):
            mm += event.self_cpu_time_total / 1e6
        elif "attention" in event.key:
            attention += event.self_cpu_time_total / 1e6
    return mm, attention


@contextlib.contextmanager
def enable_gqa() -> Iterator[None]:
    os.environ["TRANSFORMERS_SDPA_FORCE_GQA"] = "1"
    try:
        yield
    finally:
        os.environ.pop("TRANSFORMERS_SDPA_FORCE_GQA", None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--context", type=int, default=2000, help="cached tokens per row")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("PROVENAI_NUM_THREADS", "1")

    from pytest_provenai.subject.backends import Decoding, load_generator
    from pytest_provenai.subject.backends.transformers_speculative import (
        PACKED_ATTENTION,
        attention_under,
        left_padded_cache,
    )

    gen: Any = load_generator("transformers", None, decoding=Decoding(max_new_tokens=1))
    import torch

    model = gen.model
    cfg = model.config
    kv_heads = cfg.num_key_value_heads
    dim = cfg.hidden_size // cfg.num_attention_heads
    context = args.context
    load0 = os.getloadavg()

    def forward(rows: int, positions: int, mode: str) -> tuple[float, Any]:
        rng = torch.Generator().manual_seed(0)
        cached = [
            [
                (
                    torch.randn(1, kv_heads, context, dim, generator=rng),
                    torch.randn(1, kv_heads, context, dim, generator=rng),
                )
                for _ in range(cfg.num_hidden_layers)
            ]
            for _ in range(rows)
        ]
        cache = left_padded_cache(cached, context)
        mask = torch.ones(rows, context + positions, dtype=torch.long)
        mask[:, :50] = 0  # left padding
        mask[:, 700:710] = 0  # holes of rejected drafts
        ids = torch.randint(0, 1000, (rows, positions), generator=rng)
        pos = torch.arange(context, context + positions).expand(rows, positions)
        contexts: dict[str, contextlib.AbstractContextManager[Any]] = {
            "own": contextlib.nullcontext(),
            "enable_gqa": enable_gqa(),
            "packed": attention_under(model, PACKED_ATTENTION),
        }
        with torch.inference_mode(), contexts[mode]:
            start = time.perf_counter()
            out = model(
                input_ids=ids,
                attention_mask=mask,
                position_ids=pos,
                use_cache=True,
                logits_to_keep=positions,
                **{gen._cache_kw: cache},
            )
            return time.perf_counter() - start, out.logits

    modes = ("own", "enable_gqa", "packed")
    print(
        "| rows | positions | model's own ms | enable_gqa ms | packed ms | own / packed "
        "| enable_gqa / packed | max abs logit diff, packed vs own |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for rows, positions in SHAPES:
        times: dict[str, list[float]] = {m: [] for m in modes}
        logits: dict[str, Any] = {}
        for _ in range(args.runs):  # modes interleaved so drift hits all three alike
            for mode in modes:
                t, logits[mode] = forward(rows, positions, mode)
                times[mode].append(t)
        diff = float((logits["packed"] - logits["own"]).abs().max())
        med = {m: statistics.median(times[m]) for m in modes}
        print(
            f"| {rows} | {positions} | "
            + " | ".join(f"{med[m] * 1000:.0f}" for m in modes)
            + f" | {med['own'] / med['packed']:.2f}x | "
            f"{med['enable_gqa'] / med['packed']:.2f}x | {diff:.1e} |",
            flush=True,
        )
    bandwidth = read_bandwidth(torch)
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    kv_row = 2 * cfg.num_hidden_layers * kv_heads * context * dim * 4  # float32 keys + values
    prompt = torch.randint(0, 1000, (1, context), generator=torch.Generator().manual_seed(1))
    prefill = []
    with torch.inference_mode():
        for _ in range(args.runs):
            start = time.perf_counter()
            model(input_ids=prompt, use_cache=False, logits_to_keep=1)
            prefill.append(time.perf_counter() - start)
    per_token = statistics.median(prefill) / context
    print(
        f"\nWhere a packed forward's time goes: weights {weights / 1e6:.0f} MB, one row's "
        f"cached keys and values {kv_row / 1e6:.0f} MB, read bandwidth "
        f"{bandwidth / 1e9:.1f} GB/s; prefill {per_token * 1000:.2f} ms per prompt token "
        f"({context}-token prompt, median of {args.runs})\n"
    )
    print(
        "| rows | positions | packed ms | matmuls ms | attention ms | memory floor ms "
        "| packed / floor | ms per row-position | / prefill token |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for rows, positions in SHAPES:
        wall = statistics.median(forward(rows, positions, "packed")[0] for _ in range(args.runs))
        mm, attention = profile_split(torch, lambda r=rows, p=positions: forward(r, p, "packed"))
        floor = (weights + rows * kv_row) / bandwidth
        each = wall / (rows * positions)
        print(
            f"| {rows} | {positions} | {wall * 1000:.0f} | {mm * 1000:.0f} | "
            f"{attention * 1000:.0f} | {floor * 1000:.0f} | {wall / floor:.1f}x | "
            f"{each * 1000:.1f} | {each / per_token:.1f}x |",
            flush=True,
        )
    load1 = os.getloadavg()
    print(
        f"\nMachine: {platform.platform()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
        f"{torch.get_num_threads()} thread(s); load average {load0[0]:.1f} at start, "
        f"{load1[0]:.1f} at end. Default model, {context}-token cache per row, median of "
        f"{args.runs}."
    )


if __name__ == "__main__":
    main()
