"""A warm audit loads no model and calls none (issue 13), on the real default model.

The shipped suites run once cold on one case of every fixture kind (the Scott Derrickson case
for fidelity, influence and the attribution suite's MCP session, one exposure and one
no-answer case, one quotation and one derivation case) with a short decoding budget, then
again on the same caches under xdist as ``make audit`` runs them: the warm run must make zero
model loads and zero model calls (counted in every process and merged into the results JSON),
say so in the summary, and give the same records.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from project import FIXTURES, run

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SETS = [
    "hotpotqa-dev-first1",
    "synthetic-exposure",
    "synthetic-no-answer",
    "synthetic-quotation",
    "synthetic-derivation",
]


def audit(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    # folder options outside the project take "=": a separate value would be taken for a
    # test path, and the rootdir with it
    result = run(
        pytester,
        *[f"--provenai-fixtures={FIXTURES / s}" for s in SETS],
        "--provenai-sample=1",
        "--provenai-max-new-tokens=16",
        "--provenai-golden=golden",
        "--provenai-results=results.json",
        *args,
    )
    data = json.loads((pytester.path / "results.json").read_text(encoding="utf-8"))
    return result, data


def test_a_fully_warm_audit_loads_no_model_and_calls_none(pytester: pytest.Pytester) -> None:
    for suite in (REPO / "suites").glob("test_*.py"):
        shutil.copy(suite, pytester.path / suite.name)
    pytester.makeini("[pytest]\n")
    # of the attribution suite only the MCP sessions (model-backed): its other tests gate
    # labelled sets (provenai_sets) this one-case-per-kind run does not configure
    only = ["-k", "not (synthetic_traces or hotpotqa_claims or conflation_probes)"]
    cold, first = audit(pytester, "-p", "no:xdist", "--snapshot-update", *only)
    c = first["cache"]
    assert c["model_loads"] == 1 and c["model_calls"] > 0, cold.stdout.str()
    assert c["model_cases"] == 5  # fidelity + influence, MCP session, exposure, no-answer
    assert c["model_cases_from_cache"] < c["model_cases"]
    assert first["influence_costs"], "the influence suite ran no ablation"

    warm, second = audit(pytester, "-n", "2", "--dist", "loadgroup", *only)
    assert c["attribution_records"] == 1 and c["attribution_records_from_cache"] == 0
    assert second["cache"] == {
        "model_cases": 5,
        "model_cases_from_cache": 5,
        "model_calls": 0,
        "model_loads": 0,
        "attribution_records": 1,  # the MCP session: not verified again
        "attribution_records_from_cache": 1,
    }, warm.stdout.str()
    warm.stdout.fnmatch_lines(
        [
            "cache: 5 of 5 model-backed case results came from the cache (no model call); "
            "model loads 0, model calls 0",
            "cache: 1 of 1 attribution records came from the cache (not verified again)",
        ]
    )
    assert second["records"] == first["records"]
    warm.stdout.fnmatch_lines(["*7 snapshots passed*"])
    assert (pytester.path / ".provenai-cache").is_dir()  # the project's own cache and goldens
    assert (pytester.path / "golden").is_dir()
