"""Index mode end to end through pytester: the harness retrieves each case's top-k resources
from an index built from a small frozen set; records gain a separate ``retrieval`` section;
snapshots go to their own folder; a bad index is a clean usage error. Uses the scripted
generator (tests/scripted.py) and the real packaged MiniLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from project import RECORDS as PROJECT_RECORDS
from project import freeze_records, run, use_scripted, write_ini

pytest.importorskip("faiss")
pytest.importorskip("sentence_transformers")

from pytest_provenai.retrieval.embed import Embedder
from pytest_provenai.retrieval.index import LOOKUP_FILE, build_index

# project.py's case-alpha and case-gamma; gamma gets a third, unrelated passage
ALPHA, _BETA, GAMMA = PROJECT_RECORDS
RECORDS = [
    ALPHA,
    {
        **GAMMA,
        "context": [
            *GAMMA["context"],
            ["Penguin", ["Penguins are flightless seabirds.", " They live in the south."]],
        ],
    },
]

SCRIPT = {
    "name": "scripted-good",
    "script": {
        "Alphaville?": "Answer: Blue River [R0]",
        "Zeta Corp?": "Answer: Ada Zeta [R0]",
    },
}

TEST_FILE = """
import pytest
from pytest_provenai.audit.fidelity import fidelity_record

@pytest.mark.fidelity(answer_accuracy=0.5)
def test_fid(provenai_case, provenai_subject, provenai_record, provenai_snapshot):
    trace = provenai_subject.answer(provenai_case)
    record = provenai_record(fidelity_record(provenai_case, trace))
    assert record == provenai_snapshot

def test_trace(provenai_case, provenai_subject):
    trace = provenai_subject.answer(provenai_case)
    if trace.retrieval is None:
        return
    passages = trace.retrieval["passages"]
    assert [r.id for r in trace.resources] == [f"R{i}" for i in range(len(passages))]
    assert [r.sha256 for r in trace.resources] == [p["sha256"] for p in passages]
    assert [r.title for r in trace.resources] == [p["title"] for p in passages]
    scores = [p["score"] for p in passages]
    assert scores == sorted(scores, reverse=True)
    # the influence layer's path: explicit resources pass straight through
    ablated = provenai_subject.answer(provenai_case, resources=trace.resources[1:])
    assert ablated.retrieval is None and len(ablated.resources) == len(passages) - 1
    assert provenai_subject.identity.name == "scripted-good"
    assert provenai_subject.runner().model_calls >= 0
"""


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def make_project(pytester: pytest.Pytester, embedder: Embedder) -> Path:
    root = pytester.path
    mini = freeze_records(root, RECORDS)
    build_index([mini], root / "index", embedder=embedder, progress=False)
    use_scripted(root, SCRIPT)
    write_ini(pytester, ["fixtures/mini"])
    pytester.makepyfile(test_audit=TEST_FILE)
    return root


INDEX_ARGS = ("--provenai-retrieval", "index", "--provenai-index=index", "--provenai-k", "2")


@pytest.mark.slow  # four pytest subprocesses, each loading MiniLM: ~20 s on 2 cores
def test_index_mode_records_snapshots_and_summary(
    pytester: pytest.Pytester, embedder: Embedder
) -> None:
    root = make_project(pytester, embedder)
    result = run(pytester, *INDEX_ARGS, "--snapshot-update")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*retrieval recall@2*all gold retrieved*gold missed*"])
    data = json.loads((root / "results.json").read_text("utf-8"))
    recs = {r["case_id"]: r for r in data["records"]["test_audit.py::test_fid"]}
    gamma = recs["case-gamma"]["retrieval"]
    assert gamma["k"] == 2 and len(gamma["retrieved"]) == 2
    assert gamma["gold_ranks"] == [{"title": "Zeta Corp", "rank": 0}]
    assert gamma["recall_at_k"] == 1.0 and gamma["answer_failed_retrieval_miss"] is False
    assert gamma["index"]["rows"] == 6 and gamma["index"]["type"] == "flat"
    assert recs["case-gamma"]["answer"]["correct"] is True
    assert recs["case-gamma"]["citation"]["cited"] == ["Zeta Corp"]  # R0 = top passage
    alpha = recs["case-alpha"]["retrieval"]
    ranks = [g["rank"] for g in alpha["gold_ranks"]]
    found = sum(r is not None for r in ranks)
    assert alpha["recall_at_k"] == found / 2
    agg = data["aggregates"]["test_audit.py::test_fid"]["retrieval"]
    expected = (1.0 + alpha["recall_at_k"]) / 2
    assert agg["retrieval_recall_at_k"]["value"] == pytest.approx(expected)
    assert data["options"]["retrieval"] == "index" and data["options"]["k"] == 2

    golden = root / "golden"
    assert sorted(p.name for p in golden.iterdir()) == ["scripted-good@index-k2"]
    run(pytester, *INDEX_ARGS).assert_outcomes(passed=5)  # verdicts compare equal

    # distractor mode in the same project: no retrieval section, its own snapshot folder
    run(pytester, "--snapshot-update").assert_outcomes(passed=5)
    assert sorted(p.name for p in golden.iterdir()) == ["scripted-good", "scripted-good@index-k2"]
    data = json.loads((root / "results.json").read_text("utf-8"))
    assert all("retrieval" not in r for r in data["records"]["test_audit.py::test_fid"])
    assert "retrieval" not in data["aggregates"]["test_audit.py::test_fid"]


def test_bad_index_is_a_usage_error(pytester: pytest.Pytester, embedder: Embedder) -> None:
    root = make_project(pytester, embedder)
    result = run(pytester, "--provenai-retrieval", "index", "--provenai-index=missing")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--provenai-index: *missing: no such index folder*"])

    (root / "index" / LOOKUP_FILE).write_bytes(b"tampered")  # the size check catches it early
    result = run(pytester, *INDEX_ARGS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--provenai-index: *passages.sqlite: 8 bytes, but*rebuild*"])
    assert not (root / "golden").exists()


def test_changed_index_content_stops_the_run_cleanly(
    pytester: pytest.Pytester, embedder: Embedder
) -> None:
    root = make_project(pytester, embedder)
    lookup = root / "index" / LOOKUP_FILE
    data = bytearray(lookup.read_bytes())
    at = data.rfind(b"Zeta")
    data[at : at + 4] = b"Xeta"  # same size: only the sha256 check at load sees it
    lookup.write_bytes(bytes(data))
    result = run(pytester, *INDEX_ARGS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*provenai: *passages.sqlite: sha256 *rebuild*"])
    assert not (root / "golden").exists()
