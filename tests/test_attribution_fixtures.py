"""The attribution fixture kinds (mcp_trace, conflation_probe): the shipped sets, their
reproduction, and every bad input the issue lists — a FixtureError naming file, JSON pointer,
expected and actual; through the plugin, a ``fixture-error:<set>`` entry while good sets run."""

from __future__ import annotations

import filecmp
import importlib.util
from pathlib import Path
from typing import Any

import pytest
from fixture_edit import edit_case, load_error, write_case_bytes
from project import copy_fixture_set

from pytest_provenai._io import sha256_text
from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.load import load_fixture_set
from pytest_provenai.frozen.traces import ProbeCase, TraceCase

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
SHARED_DATA = REPO.parent / "shared" / "data" / "hotpotqa"
SYNTHETIC = "synthetic-mcp-traces"
CLAIMS = "hotpotqa-claims-test"
PROBES = "hotpotqa-conflation-probes"


def _same_tree(a: Path, b: Path) -> None:
    files_a = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
    assert files_a == files_b
    _, mismatch, errors = filecmp.cmpfiles(a, b, files_a, shallow=False)
    assert mismatch == [] and errors == []


def test_shipped_sets_load_with_their_sizes() -> None:
    synthetic = load_fixture_set(FIXTURES / SYNTHETIC)
    assert len(synthetic.cases) >= 30 and all(isinstance(c, TraceCase) for c in synthetic.cases)
    categories = {c.category for c in synthetic.cases}  # type: ignore[union-attr]
    assert categories == {"single_tool", "multi_tool", "same_topic_distractor", "count_summary"}
    families = {f for c in synthetic.cases for f in c.families.values()}  # type: ignore[union-attr]
    assert families == {"record", "search", "database", "document", "metadata"}
    verdicts = {cl.verdict for c in synthetic.cases for a in c.answers for cl in a.claims}  # type: ignore[union-attr]
    assert verdicts == {
        "supported",
        "not_enough_evidence",
        "contradicted",
        "conflated",
        "non_factual",
    }
    claims = load_fixture_set(FIXTURES / CLAIMS)
    claim_cases = [c for c in claims.cases if isinstance(c, TraceCase)]
    n_claims = sum(len(a.claims) for c in claim_cases for a in c.answers)
    assert len(claims.cases) == 40 and 330 <= n_claims <= 420
    probes = load_fixture_set(FIXTURES / PROBES)
    assert len(probes.cases) == 50 and all(isinstance(c, ProbeCase) for c in probes.cases)
    assert probes.manifest["licence"]["name"] == "CC BY-SA 4.0"
    assert synthetic.manifest["licence"]["name"] == "CC0-1.0"


def test_synthetic_set_is_regenerated_byte_for_byte(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "synthetic_mcp", FIXTURES / "synthetic_mcp_traces.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write(tmp_path)
    _same_tree(tmp_path / SYNTHETIC, FIXTURES / SYNTHETIC)


@pytest.mark.skipif(
    not SHARED_DATA.is_dir(), reason="../shared/data/hotpotqa is not beside the checkout"
)
def test_hotpotqa_sets_are_derived_byte_for_byte(tmp_path: Path) -> None:
    from pytest_provenai.cli import main

    rc = main(
        [
            "verify",
            "sets",
            str(SHARED_DATA),
            "--exclude",
            str(FIXTURES / "hotpotqa-dev60"),
            str(FIXTURES / "hotpotqa-dev-first1"),
            "--claims-test",
            str(tmp_path / CLAIMS),
            "--probes",
            str(tmp_path / PROBES),
        ]
    )
    assert rc == 0
    _same_tree(tmp_path / CLAIMS, FIXTURES / CLAIMS)
    _same_tree(tmp_path / PROBES, FIXTURES / PROBES)


# -- bad inputs ---------------------------------------------------------------------------
FIRST_TRACE = "telecom-multi-tool"


def _bad(tmp_path: Path, name: str, case_id: str, mutate: Any) -> FixtureError:
    folder = copy_fixture_set(tmp_path, name)
    edit_case(folder, f"cases/{case_id}.json", mutate)
    return load_error(folder)


@pytest.mark.parametrize(
    ("make_bytes", "words"),
    [
        (
            lambda text: text.replace(
                '"request": ', '"request": ' + "[" * 2000 + "]" * 2000 + ', "x": ', 1
            ),
            "nested",
        ),
        (lambda text: text.replace('"index": 0', '"index": ' + "9" * 5000, 1), "integer"),
        (lambda text: text.replace('"request": "', '"request": "\\ud800', 1), "surrogate"),
    ],
    ids=["deep-nesting", "long-integer", "lone-surrogate"],
)
def test_a_trace_file_the_strict_reader_refuses(
    tmp_path: Path, make_bytes: Any, words: str
) -> None:
    """The attribution kinds are read by frozen/jsonread.py like every kind: what Python's
    parser would take (or crash on) is a one-line fixture error naming the file."""
    folder = copy_fixture_set(tmp_path, SYNTHETIC)
    rel = f"cases/{FIRST_TRACE}.json"
    text = (folder / rel).read_text(encoding="utf-8")
    changed = make_bytes(text)
    assert changed != text
    write_case_bytes(folder, rel, changed.encode("utf-8"))
    err = load_error(folder)
    assert err.path.endswith(rel)
    assert words in str(err).lower()


def test_output_text_not_matching_its_digest(tmp_path: Path) -> None:
    err = _bad(
        tmp_path,
        SYNTHETIC,
        FIRST_TRACE,
        lambda o: o["calls"][1]["outputs"][0].__setitem__("text", "changed"),
    )
    assert err.path.endswith(f"cases/{FIRST_TRACE}.json")
    assert err.pointer == "/calls/1/outputs/0/sha256"
    assert err.expected.startswith(sha256_text("changed"))


def test_a_source_id_with_two_digests(tmp_path: Path) -> None:
    def mutate(o: dict[str, Any]) -> None:
        text = "customer: someone else"
        o["calls"][2]["outputs"][0].update(
            source=o["calls"][0]["outputs"][0]["source"], text=text, sha256=sha256_text(text)
        )

    err = _bad(tmp_path, SYNTHETIC, FIRST_TRACE, mutate)
    assert err.pointer == "/calls/2/outputs/0/sha256"
    assert "a second digest for the same source id" in err.actual
    assert "/calls/0/outputs/0" in err.expected


def test_a_claim_range_off_a_character_boundary(tmp_path: Path) -> None:
    def mutate(o: dict[str, Any]) -> None:
        answer = o["answers"][0]
        answer["text"] = "Café Ørsted is on the Kestrel Gold plan."
        answer["claims"] = [dict(answer["claims"][0], range=[0, 4], protected_values=[])]

    err = _bad(tmp_path, SYNTHETIC, FIRST_TRACE, mutate)
    assert err.pointer == "/answers/0/claims/0/range"
    assert "character boundaries" in err.expected and '"é"' in err.actual


def test_a_family_naming_a_tool_never_called(tmp_path: Path) -> None:
    err = _bad(
        tmp_path,
        SYNTHETIC,
        FIRST_TRACE,
        lambda o: o["families"].__setitem__("run_query", "database"),
    )
    assert err.pointer == "/families/run_query"
    assert "never called" in err.actual


def test_a_description_naming_a_tool_never_called(tmp_path: Path) -> None:
    err = _bad(
        tmp_path,
        SYNTHETIC,
        FIRST_TRACE,
        lambda o: o.setdefault("descriptions", {}).__setitem__("run_query", "Run SQL."),
    )
    assert err.pointer == "/descriptions/run_query"
    assert "never called" in err.actual


def test_descriptions_load_with_the_trace() -> None:
    # the hand-written sets list every called tool's description (written blind to answers)
    cases = load_fixture_set(FIXTURES / "handwritten-claims-test").cases
    traces = [c for c in cases if isinstance(c, TraceCase)]
    assert traces and len(traces) == len(cases)
    assert all(c.descriptions and set(c.descriptions) == set(c.families) for c in traces)


def test_a_probe_whose_shared_value_is_missing_from_one_source(tmp_path: Path) -> None:
    probe = load_fixture_set(FIXTURES / PROBES).cases[0]
    assert isinstance(probe, ProbeCase)

    def mutate(o: dict[str, Any]) -> None:
        for call in o["calls"]:
            for output in call["outputs"]:
                if output["source"] == o["other_source"]:
                    text = output["text"].replace(o["shared_value"], "Xx")
                    output.update(text=text, sha256=sha256_text(text))

    err = _bad(tmp_path, PROBES, probe.id, mutate)
    assert err.pointer == "/shared_value"
    assert f"which other_source {probe.other_source!r}".replace("'", '"') in err.actual


@pytest.mark.parametrize(
    ("mutate", "pointer", "words"),
    [
        (
            lambda o: o["calls"][0].__setitem__("arguments", {"x": 1}),
            "/calls/0/arguments_sha256",
            "canonical JSON",
        ),
        (lambda o: o["calls"][0].__setitem__("index", 5), "/calls/0/index", "position"),
        (
            lambda o: o["answers"][0]["claims"][1].__setitem__("range", [0, 3]),
            "/answers/0/claims/1/range",
            "not overlapping",
        ),
        (
            lambda o: o["answers"][0]["claims"][0].__setitem__("gold_source", "nowhere"),
            "/answers/0/claims/0/gold_source",
            "source of the trace",
        ),
        (
            lambda o: o["answers"][0]["claims"][0].__setitem__("protected_values", ["999"]),
            "/answers/0/claims/0/protected_values/0",
            "occurs in the claim",
        ),
        (
            lambda o: o["answers"][1]["claims"][0].__setitem__("stated_family", None),
            "/answers/1/claims/0/stated_family",
            "conflated claim states",
        ),
    ],
)
def test_more_bad_traces(tmp_path: Path, mutate: Any, pointer: str, words: str) -> None:
    err = _bad(tmp_path, SYNTHETIC, FIRST_TRACE, mutate)
    assert err.pointer == pointer
    assert words in err.expected


def test_a_probe_claim_must_state_the_other_family(tmp_path: Path) -> None:
    probe = load_fixture_set(FIXTURES / PROBES).cases[0]
    err = _bad(
        tmp_path,
        PROBES,
        probe.id,
        lambda o: o["probe"]["claims"][0].__setitem__("verdict", "supported"),
    )
    assert err.pointer == "/probe/claims/0/verdict"


def test_a_bad_trace_set_is_a_fixture_error_entry_while_others_run(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    bad = copy_fixture_set(tmp_path, SYNTHETIC)
    edit_case(
        bad,
        f"cases/{FIRST_TRACE}.json",
        lambda o: o["calls"][1]["outputs"][0].__setitem__("text", "x"),
    )
    good = copy_fixture_set(tmp_path / "g", PROBES)
    pytester.makepyfile(
        test_kinds="""
        import pytest

        @pytest.mark.provenai_kind("mcp_trace", "conflation_probe")
        def test_case(provenai_case):
            assert provenai_case.id
        """
    )
    pytester.makeini(f"[pytest]\nprovenai_fixtures =\n    {bad}\n    {good}\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [f"*fixture-error:{SYNTHETIC}*", f"*cases/{FIRST_TRACE}.json#/calls/1/outputs/0/sha256*"]
    )
    result.assert_outcomes(passed=50, errors=1)
