"""Scaffolding for the plugin's pytester tests: a small HotpotQA-style fixture set, the
scripted generator (tests/scripted.py) as the backend, an ini, and one audit test file.

``make_project(pytester)`` builds the project; ``run(pytester, *args)`` runs pytest in a
subprocess; ``results(root)`` reads the results JSON it wrote.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_provenai.frozen.freeze import freeze_hotpotqa

HERE = Path(__file__).parent
FIXTURES = HERE.parent / "fixtures"

RECORDS = [
    {
        "_id": "case-alpha",
        "question": "Which river flows through Alphaville?",
        "answer": "Blue River",
        "type": "bridge",
        "level": "easy",
        "supporting_facts": [["Alphaville", 0], ["Blue River", 1]],
        "context": [
            ["Alphaville", ["Alphaville is a town.", " The Blue River flows through it."]],
            ["Blue River", ["The Blue River is long.", " It is 300 km long."]],
            ["Gamma", ["Gamma is unrelated.", " Nothing here."]],
        ],
    },
    {
        "_id": "case-beta",
        "question": "Are Beta and Delta both cities?",
        "answer": "yes",
        "type": "comparison",
        "level": "medium",
        "supporting_facts": [["Beta", 0], ["Delta", 0]],
        "context": [
            ["Beta", ["Beta is a city.", " It is old."]],
            ["Delta", ["Delta is a city.", " It is new."]],
            ["Epsilon", ["Epsilon is a lake.", " It is deep."]],
        ],
    },
    {
        "_id": "case-gamma",
        "question": "Who founded Zeta Corp?",
        "answer": "Ada Zeta",
        "type": "bridge",
        "level": "hard",
        "supporting_facts": [["Zeta Corp", 0]],
        "context": [
            ["Zeta Corp", ["Zeta Corp was founded by Ada Zeta.", " It makes tools."]],
            ["Eta", ["Eta is a planet.", " It is cold."]],
        ],
    },
]

GOOD_SCRIPT = {
    "name": "scripted-good",
    "script": {
        "Alphaville?": "Answer: Blue River [R0]\nEvidence: the river [R1]",
        "Beta and Delta": "Answer: yes [R0] [R1]",
        "Zeta Corp?": "Answer: Ada Zeta [R0]",
    },
}

TEST_FILE = """
import pytest
from pytest_provenai.audit.fidelity import fidelity_record

@pytest.mark.fidelity({gates})
def test_fid(provenai_case, provenai_subject, provenai_record, provenai_snapshot):
    trace = provenai_subject.answer(provenai_case)
    record = provenai_record(fidelity_record(provenai_case, trace))
    assert record == provenai_snapshot
"""


def freeze_records(root: Path, records: list[dict[str, Any]], name: str = "mini") -> Path:
    """Freeze HotpotQA-style ``records`` into ``fixtures/<name>`` under ``root``."""
    data = root / "hotpot_dev.json"
    data.write_text(json.dumps(records), encoding="utf-8")
    folder = root / "fixtures" / name
    freeze_hotpotqa(data, folder, seed=42)
    return folder


def copy_fixture_set(root: Path, name: str, as_name: str | None = None) -> Path:
    """A copy of the shipped set ``fixtures/<name>`` under ``root/fixtures``."""
    folder = root / "fixtures" / (as_name or name)
    shutil.copytree(FIXTURES / name, folder)
    return folder


def use_scripted(root: Path, script: dict[str, Any]) -> None:
    """Install tests/scripted.py and its script in the project."""
    (root / "script.json").write_text(json.dumps(script), encoding="utf-8")
    (root / "scripted.py").write_text((HERE / "scripted.py").read_text(encoding="utf-8"))


def write_ini(pytester: pytest.Pytester, fixtures: list[str], *, scripted: bool = True) -> None:
    """The project's ini: the fixture sets, results.json and (``scripted``) the scripted
    backend reading script.json."""
    lines = ["[pytest]", f"provenai_fixtures = {' '.join(fixtures)}"]
    if scripted:
        lines += ["provenai_backend = scripted:factory", "provenai_model = script.json"]
    lines.append("provenai_results = results.json")
    pytester.makeini("\n".join(lines) + "\n")


def make_project(
    pytester: pytest.Pytester,
    *,
    script: dict[str, Any] | None = None,
    gates: str = "answer_accuracy=0.5",
    records: list[dict[str, Any]] | None = None,
) -> Path:
    """Three HotpotQA-style cases in fixtures/mini, the scripted backend, and test_audit.py:
    a gated fidelity audit with golden snapshots."""
    root = pytester.path
    freeze_records(root, records or RECORDS)
    use_scripted(root, script or GOOD_SCRIPT)
    write_ini(pytester, ["fixtures/mini"])
    pytester.makepyfile(test_audit=TEST_FILE.format(gates=gates))
    return root


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def results(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "results.json").read_text(encoding="utf-8"))
    return data
