"""The hand-written, domain-split attribution sets (issue 23, item 5): they load with the
strict loader, hold enough claims and domains, split by domain with no domain in two splits,
every claim category in every split, and the writer rebuilds them byte for byte. No model."""

from __future__ import annotations

import filecmp
import importlib.util
import json
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_provenai.frozen.load import load_fixture_set
from pytest_provenai.frozen.model import FixtureSet
from pytest_provenai.frozen.traces import ProbeCase, TraceCase

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
SPLITS = ("train", "validation", "test")
CLAIMS = {s: f"handwritten-claims-{s}" for s in SPLITS}
PROBES = {s: f"handwritten-probes-{s}" for s in SPLITS}
EXCLUDED_DOMAINS = {
    "clinic",
    "council",
    "hotel",
    "library",
    "paper",
    "shipping",
    "software",
    "telecom",
}


def _writer() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "handwritten_claims", FIXTURES / "handwritten_claims.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sidecar(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name / "categories.json").read_text("utf-8"))
    return data


@pytest.fixture(scope="module")
def sets() -> dict[str, FixtureSet]:
    return {
        name: load_fixture_set(FIXTURES / name) for name in (*CLAIMS.values(), *PROBES.values())
    }


def test_sets_load_with_their_kinds(sets: dict[str, FixtureSet]) -> None:
    for split in SPLITS:
        claims, probes = sets[CLAIMS[split]], sets[PROBES[split]]
        assert claims.cases and all(isinstance(c, TraceCase) for c in claims.cases)
        assert probes.cases and all(isinstance(c, ProbeCase) for c in probes.cases)
        for s in (claims, probes):
            assert s.manifest["synthetic"] is True
            assert s.manifest["licence"]["name"] == "CC0-1.0"
            assert s.manifest["generator"] == "fixtures/handwritten_claims.py"
            assert (FIXTURES / s.name / "README.md").is_file()


def test_enough_claims_and_domains(sets: dict[str, FixtureSet]) -> None:
    traces = [c for split in SPLITS for c in sets[CLAIMS[split]].cases]
    n_claims = sum(len(a.claims) for c in traces if isinstance(c, TraceCase) for a in c.answers)
    assert n_claims >= 600
    domains = {d for split in SPLITS for d in _sidecar(CLAIMS[split])["domains"].values()}
    assert len(domains) >= 15
    assert not domains & EXCLUDED_DOMAINS


def test_split_by_domain(sets: dict[str, FixtureSet]) -> None:
    writer = _writer()
    by_split: dict[str, set[str]] = {}
    for split in SPLITS:
        for name in (CLAIMS[split], PROBES[split]):
            sidecar = _sidecar(name)
            assert sidecar["split"] == split
            assert set(sidecar["domains"]) == {c.id for c in sets[name].cases}
            domains = set(sidecar["domains"].values())
            assert all(writer.SPLITS[d] == split for d in domains)
            by_split.setdefault(split, set()).update(domains)
    for a in SPLITS:
        for b in SPLITS:
            if a < b:
                assert not by_split[a] & by_split[b], (a, b)
    assert set().union(*by_split.values()) == set(writer.SPLITS)


def test_every_category_in_every_split(sets: dict[str, FixtureSet]) -> None:
    writer = _writer()
    verdict_of = {cat: verdict for verdict, cat in writer.CODES.values()}
    verdict_of["supported_stated"] = "supported"
    for split in SPLITS:
        name = CLAIMS[split]
        cats = _sidecar(name)["claims"]
        seen: Counter[str] = Counter()
        for case in sets[name].cases:
            assert isinstance(case, TraceCase)
            for answer in case.answers:
                per = cats[case.id][answer.id]
                assert len(per) == len(answer.claims)
                for claim, cat in zip(answer.claims, per, strict=True):
                    assert claim.verdict == verdict_of[cat], (case.id, answer.id, cat)
                    assert (cat == "supported_stated") <= (claim.stated_family is not None)
                    seen[cat] += 1
        assert set(seen) == set(writer.CLAIM_CATEGORIES), (
            split,
            set(writer.CLAIM_CATEGORIES) - set(seen),
        )
        categories = {c.category for c in sets[name].cases}  # type: ignore[union-attr]
        assert {"multi_tool", "same_topic_distractor"} <= categories
        probe_cats = _sidecar(PROBES[split])["claims"]
        for probe in sets[PROBES[split]].cases:
            assert isinstance(probe, ProbeCase)
            assert probe_cats[probe.id] == {
                "probe": ["conflation_probe"],
                "control": ["probe_control"],
            }


def test_writer_rebuilds_the_sets_byte_for_byte(tmp_path: Path) -> None:
    _writer().write(tmp_path)
    for name in (*CLAIMS.values(), *PROBES.values()):
        a, b = FIXTURES / name, tmp_path / name
        files_a = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
        files_b = sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
        assert files_a == files_b
        _, mismatch, errors = filecmp.cmpfiles(a, b, files_a, shallow=False)
        assert mismatch == [] and errors == [], name
