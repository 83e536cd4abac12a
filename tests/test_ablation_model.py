"""Leave-one-resource-out ablation on the real default model (SmolLM2-135M-Instruct).

One module-scoped set of runs (the first HotpotQA dev case, Scott Derrickson / Ed Wood, with
its first five sources — both supporting paragraphs and three distractors — and five cases
with invented facts stated in one resource only — tests/data/) feeds every test:

* the exact fast path and naive regeneration give identical records (KL to float noise);
* where the model answers an invented-fact question correctly, removing the one resource that
  states the answer has the top φ and the top KL;
* Proposition 1 holds on every ablation that changed the answer;
* an "ablation" that leaves the prompt unchanged has KL 0 and needs no regeneration;
* the score-only exact path (backends without the KV fast path) agrees with naive too.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from real_model import default_subject

from pytest_provenai._io import sha256_text
from pytest_provenai.audit.answer import provenai_correct
from pytest_provenai.audit.influence import influence_layer, pinsker_bound
from pytest_provenai.frozen.load import load_fixture_set
from pytest_provenai.frozen.model import Case, Source, SupportingFact
from pytest_provenai.subject.ablation import AblationRun, run_ablation
from pytest_provenai.subject.kl import kl_profile
from pytest_provenai.subject.near_ties import NEAR_TIE_MARGIN
from pytest_provenai.subject.subject import ModelSubject

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
REPO = HERE.parent
KL_NOISE = 1e-4  # nats; teacher-forced logits computed in different batch shapes
# The answer line comes first; a shorter tail keeps CI time down (64 → 32 new tokens: the
# file took 517 s instead of 649 s alone on one thread, and every assertion still has
# something to check: divergences, answer changes, near-tie replays).
MAX_NEW_TOKENS = 32
# Naive regeneration (the slow reference: 58 % of the module's time) on the first two cases,
# the HotpotQA one and the first invented one; a third invented case cost 58 s more of one
# thread and checked the same property (tests/test_batched_ablation.py and the mlx parity
# test check it on the other paths).
NAIVE_CASES = 2
# The HotpotQA case keeps its first five of ten sources: its naive pass (ten 1.5k-token
# prefills) was 91 of the module's ~225 s on 2 threads, and over 5 min of a CI worker.
DERRICKSON_SOURCES = 5
WIDE_MARGIN = 0.2  # nats: a tie margin wide enough that some steps go to generate


def invented_cases() -> list[tuple[Case, str]]:
    data = json.loads((HERE / "data" / "single_source_cases.json").read_text(encoding="utf-8"))
    out = []
    for c in data["cases"]:
        sources = tuple(
            Source(title=t, sentences=(x,), text=x, sha256=sha256_text(x)) for t, x in c["sources"]
        )
        case = Case(
            id=c["id"],
            question=c["question"],
            answer=c["answer"],
            type="bridge",
            level="easy",
            supporting_facts=(SupportingFact(c["answer_source"], 0),),
            supporting_titles=(c["answer_source"],),
            sources=sources,
        )
        out.append((case, c["answer_source"]))
    return out


def layer(trace: Any, run: AblationRun) -> dict[str, Any]:
    return influence_layer(
        [r.id for r in trace.resources],
        trace.answer,
        trace.cited_ids,
        run.outputs,
        signals=run.signals,
    )


@pytest.fixture(scope="module")
def subject() -> ModelSubject:
    return default_subject(MAX_NEW_TOKENS)


@pytest.fixture(scope="module")
def runs(subject: ModelSubject) -> list[dict[str, Any]]:
    derrickson = load_fixture_set(REPO / "fixtures" / "hotpotqa-dev-first1").cases[0]
    assert isinstance(derrickson, Case)
    derrickson = dataclasses.replace(derrickson, sources=derrickson.sources[:DERRICKSON_SOURCES])
    assert set(derrickson.supporting_titles) <= {s.title for s in derrickson.sources}
    cases = [(derrickson, None), *invented_cases()]
    out = []
    for n, (case, answer_title) in enumerate(cases):
        trace = subject.answer(case)
        exact = run_ablation(subject, case, trace, mode="exact")
        naive = run_ablation(subject, case, trace, mode="naive") if n < NAIVE_CASES else None
        out.append(
            {
                "case": case,
                "answer_title": answer_title,
                "trace": trace,
                "exact": exact,
                "naive": naive,
                "exact_layer": layer(trace, exact),
                "naive_layer": layer(trace, naive) if naive is not None else None,
            }
        )
    return out


KL_KEYS = ("kl_sum", "kl_mean", "kl_output_mean", "kl_at_divergence", "eps")


def split_kl(lay: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The layer without its measured numbers, and per resource the numbers: the KL values
    and the generation section (its near-tie margins come from teacher-forced rows on one
    path and from ``generate``'s logits on the other)."""
    surface = json.loads(json.dumps(lay))
    kl: dict[str, dict[str, Any]] = {}
    for rid, row in surface["resources"].items():
        kl[rid] = {k: row.pop(k) for k in (*KL_KEYS, "generation")}
    surface.pop("top_kl", None)
    return surface, kl


def test_exact_and_naive_give_identical_records(runs: list[dict[str, Any]]) -> None:
    compared = [r for r in runs if r["naive"] is not None]
    assert len(compared) == NAIVE_CASES
    for r in compared:
        assert r["exact"].path == "kv-reuse" and r["naive"].path == "regenerate"
        # both paths count the tokens they feed in the same unit; naive feeds more
        assert 0 < r["exact"].forward_tokens < r["naive"].forward_tokens, r["case"].id
        assert r["exact"].raw_outputs == r["naive"].raw_outputs, r["case"].id
        exact_surface, exact_kl = split_kl(r["exact_layer"])
        naive_surface, naive_kl = split_kl(r["naive_layer"])
        # Δa, Δc, φ, θ, verdicts, ablated answers and citations, first divergences
        assert exact_surface == naive_surface, r["case"].id
        for rid in exact_kl:
            # the same output, and the same near ties up to float noise in their margins
            exact_gen, naive_gen = exact_kl[rid]["generation"], naive_kl[rid]["generation"]
            assert exact_gen["output_sha256"] == naive_gen["output_sha256"]
            ties = {t["token"]: t for t in naive_gen["near_ties"]}
            for tie in exact_gen["near_ties"]:
                other = ties.get(tie["token"])
                if other is None:  # marked on one path only: its margin sits at the threshold
                    assert abs(tie["margin"] - NEAR_TIE_MARGIN) < 1e-3, (rid, tie)
                else:
                    assert (tie["text"], tie["prefix_sha256"]) == (
                        other["text"],
                        other["prefix_sha256"],
                    )
                    assert abs(tie["margin"] - other["margin"]) < 1e-3, (rid, tie, other)
            marked = {t["token"] for t in exact_gen["near_ties"]}
            for token, tie in ties.items():
                if token not in marked:
                    assert abs(tie["margin"] - NEAR_TIE_MARGIN) < 1e-3, (rid, tie)
            for key in ("kl_sum", "kl_mean", "kl_output_mean", "kl_at_divergence"):
                a, b = exact_kl[rid][key], naive_kl[rid][key]
                assert (a is None) == (b is None)
                if a is not None:
                    assert abs(a - b) <= KL_NOISE * max(1.0, abs(b)), (r["case"].id, rid, key)


def test_answer_bearing_resource_has_top_phi_and_top_kl(runs: list[dict[str, Any]]) -> None:
    correct = 0
    for r in runs:
        if r["answer_title"] is None:
            continue
        trace = r["trace"]
        if not provenai_correct(trace.answer, r["case"].answer):
            continue
        correct += 1
        gold = next(x.id for x in trace.resources if x.title == r["answer_title"])
        rows = r["exact_layer"]["resources"]
        others = [rid for rid in rows if rid != gold]
        assert all(rows[gold]["phi"] >= rows[o]["phi"] for o in others), r["case"].id
        assert all(rows[gold]["kl_sum"] > rows[o]["kl_sum"] for o in others), r["case"].id
        assert r["exact_layer"]["top_kl"] == gold
    assert correct >= 2, "the default model should answer at least two invented cases"


def test_proposition_1_on_every_answer_change(runs: list[dict[str, Any]]) -> None:
    checked = 0
    for r in runs:
        for rid, row in r["exact_layer"]["resources"].items():
            if row["delta_answer"] > 0:
                assert row["first_divergence"] is not None, (r["case"].id, rid)
                bound = pinsker_bound(row["eps"])
                if bound is not None:
                    assert row["kl_at_divergence"] >= bound, (r["case"].id, rid, row)
                    checked += 1
    assert checked >= 1, "no ablation changed an answer with eps < 1/2: nothing was tested"


def test_kl_is_non_negative(runs: list[dict[str, Any]]) -> None:
    for r in runs:
        for out in r["exact"].outputs:
            assert out.kl is not None
            assert min(out.kl.per_position) >= 0.0


def test_unchanged_prompt_has_zero_kl_and_no_regeneration(
    subject: ModelSubject, runs: list[dict[str, Any]]
) -> None:
    trace = runs[1]["trace"]
    realised = list(trace.generation.token_ids)
    fast = subject.kv_ablation()
    assert fast is not None
    result = fast.ablation_pass(trace.view.prompt, [trace.view.prompt], realised)
    variant = result.variants[0]
    assert variant.divergence is None
    assert variant.generation.token_ids == realised
    profile = kl_profile(result.full_rows, variant.rows, realised)
    assert max(profile.per_position) <= 1e-5


class ScoreOnly:
    """The default generator without its KV fast path (a backend that can only score)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "ablation_pass":
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_score_only_exact_path_agrees_with_naive(
    subject: ModelSubject, runs: list[dict[str, Any]]
) -> None:
    plain = ModelSubject(ScoreOnly(subject.generator))
    for r in runs[1:2]:
        run = run_ablation(plain, r["case"], r["trace"], mode="exact")
        assert run.path == "score-check"
        surface, _ = split_kl(layer(r["trace"], run))
        assert surface == split_kl(r["naive_layer"])[0], r["case"].id


def test_the_fast_path_reports_its_speculative_decoding(runs: list[dict[str, Any]]) -> None:
    regenerated = 0
    for r in runs:
        costs = r["exact"].costs()
        assert {"drafted", "accepted", "verified", "fallbacks"} <= set(costs)
        assert 0 <= costs["accepted"] <= costs["drafted"]
        if r["exact"].regenerated:
            regenerated += 1
            assert costs["verified"] > 0, r["case"].id
    assert regenerated >= 1, "no ablation diverged: the decoding was not exercised"


def test_near_ties_go_to_generate_and_the_result_stays_exact(
    subject: ModelSubject, runs: list[dict[str, Any]]
) -> None:
    """With a tie margin of 0.2 nats (the default is 1e-3) several teacher-forced positions and
    decoding steps count as near ties: drafts are taken only where they win by more than that,
    the rest is decided by ``generate`` itself; the outputs are still naive's. (At 0.5 nearly
    every step was a tie: 25 replays of the whole generation, 115 s of one core, where 0.2
    gives 7 replays in 42 s; docs/performance.md, test suite cost.)"""
    r = runs[1]
    trace = r["trace"]
    prompts = _ablated_prompts(subject, r)
    fast = subject.kv_ablation()
    assert fast is not None
    result = fast.ablation_pass(
        trace.view.prompt, prompts, list(trace.generation.token_ids), margin=WIDE_MARGIN
    )
    assert result.decode.fallbacks >= 1
    naive = r["naive"].raw_outputs
    got = {rid: v.generation.text for rid, v in zip(naive, result.variants, strict=True)}
    assert got == naive


def _ablated_prompts(subject: ModelSubject, r: dict[str, Any]) -> list[str]:
    from pytest_provenai.subject.ablation import _prompts

    return _prompts(subject, r["case"], list(r["trace"].resources))
