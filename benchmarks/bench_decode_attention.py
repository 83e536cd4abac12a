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
    from pytest_provenai.subject.backends.transformers_backend import (
        _growing_cache,
        _packed_attention,
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
        layers = [
            (
                torch.randn(rows, kv_heads, context, dim, generator=rng),
                torch.randn(rows, kv_heads, context, dim, generator=rng),
            )
            for _ in range(cfg.num_hidden_layers)
        ]
        cache = _growing_cache(layers)
        mask = torch.ones(rows, context + positions, dtype=torch.long)
        mask[:, :50] = 0  # left padding
        mask[:, 700:710] = 0  # holes of rejected drafts
        ids = torch.randint(0, 1000, (rows, positions), generator=rng)
        pos = torch.arange(context, context + positions).expand(rows, positions)
        ctx = {
            "own": contextlib.nullcontext(),
            "enable_gqa": enable_gqa(),
            "packed": _packed_attention(model),
        }[mode]
        with torch.inference_mode(), ctx:
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
    load1 = os.getloadavg()
    print(
        f"\nMachine: {platform.platform()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
        f"{torch.get_num_threads()} thread(s); load average {load0[0]:.1f} at start, "
        f"{load1[0]:.1f} at end. Default model, {context}-token cache per row, median of "
        f"{args.runs}."
    )


if __name__ == "__main__":
    main()
