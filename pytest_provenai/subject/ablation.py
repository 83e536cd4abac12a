"""Leave-one-resource-out ablation runs: the model work behind the influence layer.

For a case answered with resources ``R0..R(k-1)`` (a :class:`Trace`), resource ``Ri`` is
removed and the rest are shown with **their ids unchanged and in the same order** (the
prompt of the run without R3 shows R0, R1, R2, R4, … R9), so a citation means the same
resource in every run and citation sets stay comparable. Outputs are parsed against the
full context's ids, so a tag of the removed resource still counts as that id.

Three modes (``--provenai-ablation``):

* ``naive`` — k regenerations, one per ablated prompt (plus the full run the suite already
  has); where the backend can score, the KL target from ``score()`` of each ablated prompt.
* ``exact`` — the same results with less compute. A backend with ``ablation_pass`` (the
  transformers backend) teacher-forces the realised output under every ablated prompt while
  reusing the KV cache of the prefix it shares with the full prompt; when every ablated argmax
  equals the realised token (by more than :data:`TIE_MARGIN` in log-probability) greedy
  decoding would return the realised output, so nothing is regenerated; otherwise decoding
  restarts at the first divergent position from the cache. A backend that can only
  ``score()`` gets the same test without cache reuse (full regeneration when it diverges);
  a pipeline (no logits) falls back to naive.
* ``off`` — nothing is run (see :func:`pytest_provenai.audit.influence.not_measured`).

Generations are stored in the generation cache under the same keys naive ``generate`` uses,
and KL profiles in a small content-addressed cache beside it, so a warm rerun makes no model
call in either mode.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from pytest_provenai._io import sha256_text
from pytest_provenai.cache_store import KeyedStore, RejectedEntry, content_key
from pytest_provenai.frozen.model import Case
from pytest_provenai.subject.backends.base import (
    FAST_PATH_VERSION,
    TIE_MARGIN,
    DecodeStats,
    Generation,
    KVAblation,
)
from pytest_provenai.subject.kl import AblatedOutput, KLProfile, kl_profile
from pytest_provenai.subject.parse import parse_output
from pytest_provenai.subject.prompt import PROMPT_VERSION, build_prompt
from pytest_provenai.subject.subject import ModelRunner, Subject
from pytest_provenai.subject.trace import Resource, Trace

ABLATION_VERSION = "provenai-ablation/3"
"""Enters the KL cache key; bump when the ablation runs change (3: ablated generations come
from speculative re-alignment; they carry ``FAST_PATH_VERSION`` in the generation cache, so
entries an older version wrote are ignored and recomputed along with their KL profiles)."""

MODES = ("exact", "naive", "off")
"""``--provenai-ablation`` values (options.py takes them from here)."""


@dataclass
class AblationRun:
    """One case's ablations, in resource order, and what they cost."""

    mode: str
    signals: tuple[str, ...]  # ("surface",) or ("surface", "kl")
    path: str  # kv-reuse | score-check | regenerate
    outputs: list[AblatedOutput]
    model_calls: int = 0
    forward_tokens: int = 0
    regenerated: int = 0
    seconds: float = 0.0
    decode: DecodeStats = field(default_factory=DecodeStats)

    @property
    def raw_outputs(self) -> dict[str, str]:
        """Each ablated resource's raw output, by resource id."""
        return {o.resource_id: o.output or "" for o in self.outputs}

    def costs(self) -> dict[str, Any]:
        """What the run cost, for the results JSON: model calls, forward tokens, ablations
        regenerated, seconds, and for the KV fast path the speculative decoding of the
        divergent ablations (draft tokens proposed, accepted, positions verified, near-tie
        fallbacks to ``generate``)."""
        return {
            "mode": self.mode,
            "path": self.path,
            "model_calls": self.model_calls,
            "forward_tokens": self.forward_tokens,
            "regenerated": self.regenerated,
            "seconds": round(self.seconds, 4),
            **self.decode.as_dict(),
        }


class KLCache(KeyedStore):
    """KL profiles on disk, addressed like generations; corrupt entries warn and recompute."""

    dropped = "provenai: KL cache entry {path} {why}; dropped and recomputed"

    @staticmethod
    def key(model_key: dict[str, Any], prompt: str, ablated: str, realised: list[int]) -> str:
        payload = {
            "version": ABLATION_VERSION,
            "model": model_key,
            "prompt_sha256": sha256_text(prompt),
            "ablated_sha256": sha256_text(ablated),
            "realised": realised,
            "prompt_version": PROMPT_VERSION,
        }
        return content_key(payload)

    def get(self, key: str) -> KLProfile | None:
        def decode(raw: bytes) -> KLProfile:
            try:
                data = json.loads(raw)
                if not isinstance(data, dict) or data.get("key") != key:
                    raise ValueError("not an entry of this key")
                kl = data["kl"]
                if not isinstance(kl, dict) or not isinstance(kl.get("per_position"), list):
                    raise ValueError("no KL profile in it")
                return KLProfile.from_dict(kl)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise RejectedEntry(f"is unreadable ({exc})") from None

        return self._read(key, decode)

    def put(self, key: str, profile: KLProfile) -> None:
        self._write(key, {"key": key, "kl": profile.as_dict()})


def ablated_resources(resources: list[Resource], removed: str) -> list[Resource]:
    """The resources without ``removed``; the others keep their ids and order."""
    return [r for r in resources if r.id != removed]


def _claimed(text: str, all_ids: list[str]) -> tuple[str, tuple[str, ...]]:
    parsed = parse_output(text, len(all_ids), valid_ids=all_ids)
    return parsed.answer, tuple(parsed.cited_ids)


def run_ablation(
    subject: Subject,
    case: Case,
    trace: Trace,
    *,
    mode: str = "exact",
    kl_cache: KLCache | None = None,
) -> AblationRun:
    """Ablate every resource of ``trace`` (see the module docstring for the modes)."""
    if mode not in ("exact", "naive"):
        raise ValueError(f"ablation mode must be exact or naive here, got {mode!r}")
    start = time.perf_counter()
    runner = subject.runner()
    resources = list(trace.resources)
    ids = [r.id for r in resources]
    if runner is None or trace.view is None:
        run = _pipeline_naive(subject, case, resources)
    else:
        can_score = bool(
            runner.capabilities.score
            and trace.generation is not None
            and trace.generation.token_ids
        )
        fast = runner.kv_ablation()
        if mode == "exact" and can_score and fast is not None:
            run = _exact_kv(runner, fast, case, trace, resources, kl_cache)
        elif mode == "exact" and can_score:
            run = _exact_score(runner, case, trace, resources, kl_cache)
        else:
            run = _naive(runner, case, trace, resources, kl_cache, with_kl=can_score)
    run.mode = mode
    if "kl" in run.signals and runner is not None and runner.capabilities.score_topk:
        # a served model's KL is approximated from each position's top-k (openai backend)
        run.signals = (*run.signals, f"kl-top{runner.capabilities.score_topk}")
    run.seconds = time.perf_counter() - start
    assert [o.resource_id for o in run.outputs] == ids
    return run


# -- the paths ------------------------------------------------------------------------------
def _prompts(runner: ModelRunner, case: Case, resources: list[Resource]) -> list[str]:
    return [
        build_prompt(case.question, ablated_resources(resources, r.id), runner.render_chat).prompt
        for r in resources
    ]


def _kl_key(runner: ModelRunner, full: str, ablated: str, realised: list[int]) -> str:
    return KLCache.key(runner.identity.cache_key(), full, ablated, realised)


def _exact_kv(
    runner: ModelRunner,
    fast: KVAblation,
    case: Case,
    trace: Trace,
    resources: list[Resource],
    kl_cache: KLCache | None,
) -> AblationRun:
    assert trace.view is not None and trace.generation is not None
    full = trace.view.prompt
    realised = list(trace.generation.token_ids)
    prompts = _prompts(runner, case, resources)
    ids = [r.id for r in resources]
    gens = [runner.cached_generation(p) for p in prompts]
    kls = [
        kl_cache.get(_kl_key(runner, full, p, realised)) if kl_cache is not None else None
        for p in prompts
    ]
    span = runner.answer_positions(realised)
    run = AblationRun(mode="exact", signals=("surface", "kl"), path="kv-reuse", outputs=[])
    if any(g is None for g in gens) or any(k is None for k in kls):
        result = fast.ablation_pass(full, prompts, realised, margin=TIE_MARGIN)
        runner.model_calls += 1
        run.model_calls = 1
        run.forward_tokens = result.forward_tokens
        run.decode = result.decode
        for j, variant in enumerate(result.variants):
            gens[j] = variant.generation
            kls[j] = kl_profile(result.full_rows, variant.rows, realised, span)
            if variant.divergence is not None:
                run.regenerated += 1
            runner.store_generation(prompts[j], variant.generation, producer=FAST_PATH_VERSION)
            if kl_cache is not None:
                profile = kls[j]
                assert profile is not None
                kl_cache.put(_kl_key(runner, full, prompts[j], realised), profile)
    for rid, gen, kl in zip(ids, gens, kls, strict=True):
        assert gen is not None
        answer, cited = _claimed(gen.text, ids)
        run.outputs.append(AblatedOutput(rid, answer, cited, kl, gen.text, runner.near_ties(gen)))
    return run


def _exact_score(
    runner: ModelRunner,
    case: Case,
    trace: Trace,
    resources: list[Resource],
    kl_cache: KLCache | None,
) -> AblationRun:
    """Backends that can score but have no KV fast path: one teacher-forced forward per
    ablation; regenerate only those whose argmax leaves the realised output."""
    from pytest_provenai.subject.backends.divergence import first_divergence, token_margins

    assert trace.view is not None and trace.generation is not None
    full = trace.view.prompt
    realised = list(trace.generation.token_ids)
    prompts = _prompts(runner, case, resources)
    ids = [r.id for r in resources]
    span = runner.answer_positions(realised)
    run = AblationRun(mode="exact", signals=("surface", "kl"), path="score-check", outputs=[])
    before = runner.model_calls
    full_rows: Any = None
    for rid, prompt in zip(ids, prompts, strict=True):
        gen = runner.cached_generation(prompt)
        key = _kl_key(runner, full, prompt, realised)
        kl = kl_cache.get(key) if kl_cache is not None else None
        if gen is None or kl is None:
            if full_rows is None:
                full_rows = runner.score(full, realised)
                run.forward_tokens += _score_tokens(runner, full, realised)
            rows = runner.score(prompt, realised)
            run.forward_tokens += _score_tokens(runner, prompt, realised)
            kl = kl_profile(full_rows, rows, realised, span)
            if kl_cache is not None:
                kl_cache.put(key, kl)
            if gen is None:
                if first_divergence(rows, realised, TIE_MARGIN) is None:
                    gen = Generation(
                        text=trace.generation.text,
                        token_ids=realised,
                        logprobs=[float(rows[t][tok]) for t, tok in enumerate(realised)],
                        finish_reason=trace.generation.finish_reason,
                        margins=token_margins(rows, realised),
                    )
                    runner.store_generation(prompt, gen, producer=FAST_PATH_VERSION)
                else:
                    gen, _ = runner.generate(prompt)
                    run.forward_tokens += _generation_tokens(runner, prompt, gen)
                    run.regenerated += 1
        answer, cited = _claimed(gen.text, ids)
        run.outputs.append(AblatedOutput(rid, answer, cited, kl, gen.text, runner.near_ties(gen)))
    run.model_calls = runner.model_calls - before
    return run


def _naive(
    runner: ModelRunner,
    case: Case,
    trace: Trace,
    resources: list[Resource],
    kl_cache: KLCache | None,
    *,
    with_kl: bool,
) -> AblationRun:
    """k full regenerations through the runner's cache-aware ``generate``; the KL target by
    ``score()`` where the backend can (``with_kl``)."""
    prompts = _prompts(runner, case, resources)
    ids = [r.id for r in resources]
    can_kl = with_kl and trace.generation is not None and trace.view is not None
    run = AblationRun(
        mode="naive",
        signals=("surface", "kl") if can_kl else ("surface",),
        path="regenerate",
        outputs=[],
    )
    full_rows: Any = None
    realised: list[int] = []
    span = 0
    if can_kl:
        assert trace.generation is not None
        realised = list(trace.generation.token_ids)
        span = runner.answer_positions(realised)
    before = runner.model_calls
    for rid, prompt in zip(ids, prompts, strict=True):
        gen, cached = runner.generate(prompt)
        if not cached:
            run.regenerated += 1
            run.forward_tokens += _generation_tokens(runner, prompt, gen)
        kl: KLProfile | None = None
        if can_kl:
            assert trace.view is not None
            key = _kl_key(runner, trace.view.prompt, prompt, realised)
            kl = kl_cache.get(key) if kl_cache is not None else None
            if kl is None:
                if full_rows is None:
                    full_rows = runner.score(trace.view.prompt, realised)
                    run.forward_tokens += _score_tokens(runner, trace.view.prompt, realised)
                kl = kl_profile(full_rows, runner.score(prompt, realised), realised, span)
                run.forward_tokens += _score_tokens(runner, prompt, realised)
                if kl_cache is not None:
                    kl_cache.put(key, kl)
        answer, cited = _claimed(gen.text, ids)
        run.outputs.append(AblatedOutput(rid, answer, cited, kl, gen.text, runner.near_ties(gen)))
    run.model_calls = runner.model_calls - before
    return run


def _generation_tokens(runner: ModelRunner, prompt: str, generation: Generation) -> int:
    """Tokens a greedy generation feeds through the model: the prompt, then every output
    token but the last (which is only predicted) — the unit the fast path counts in."""
    return runner.count_tokens(prompt) + max(len(generation.token_ids) - 1, 0)


def _score_tokens(runner: ModelRunner, prompt: str, continuation: list[int]) -> int:
    """Tokens one teacher-forced scoring pass feeds: the prompt and the continuation but its
    last token."""
    return runner.count_tokens(prompt) + max(len(continuation) - 1, 0)


def _pipeline_naive(subject: Subject, case: Case, resources: list[Resource]) -> AblationRun:
    """A pipeline (no model the harness can prompt, no logits): regenerate through
    ``answer``; surface only."""
    ids = [r.id for r in resources]
    run = AblationRun(mode="naive", signals=("surface",), path="regenerate", outputs=[])
    for rid in ids:
        t = subject.answer(case, resources=ablated_resources(resources, rid))
        claimed = [c for c in ids if c in t.cited_ids or (c == rid and c in t.invalid_citations)]
        run.outputs.append(AblatedOutput(rid, t.answer, tuple(claimed), None, t.raw_output, None))
        run.model_calls += 1
        run.regenerated += 1
    return run
