"""A small real run for the report tests: the plugin audits the mini HotpotQA set (fidelity
and influence suites) and two provenance sets (no-answer exposure, quotation) with the
scripted generator, in a subprocess, writing the results JSON and the HTML report exactly as
a user's run would. Every section of the report has real data: gates (one failing),
aggregates, influence verdicts, the exposure matrix, traces.

``build_run(folder, records=...)`` lays the project out and runs it; it returns the folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

from project import RECORDS, TEST_FILE, freeze_records, use_scripted
from test_influence_plugin import INFLUENCE_TEST
from test_influence_plugin import SCRIPT as INFLUENCE_SCRIPT
from test_provenance_plugin import SCRIPT as PROVENANCE_SCRIPT
from test_provenance_plugin import SUITE, no_answer_cases, quotation_cases

from pytest_provenai.frozen.write import write_provenance_set

FIDELITY_TEST = TEST_FILE.replace(
    "provenai_record(fidelity_record(provenai_case, trace))",
    "provenai_record(fidelity_record(provenai_case, trace), trace=trace)",
)


def build_run(
    root: Path,
    *,
    records: list[dict[str, Any]] | None = None,
    provenance: bool = True,
    extra_args: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """Lay out the project in ``root`` and run the audit there (results.json, report.html)."""
    root.mkdir(parents=True, exist_ok=True)
    freeze_records(root, records or RECORDS)
    sets = ["fixtures/mini"]
    script = dict(cast(dict[str, str], INFLUENCE_SCRIPT["script"]))
    if provenance:
        for name, kind, cases in (
            ("na", "no_answer", no_answer_cases()),
            ("quote", "quotation", quotation_cases()),
        ):
            write_provenance_set(
                root / "fixtures" / name,
                kind=kind,
                cases=cases,
                description=f"test {kind} cases",
                readme="test set\n",
            )
            sets.append(f"fixtures/{name}")
        script.update(cast(dict[str, str], PROVENANCE_SCRIPT["script"]))
        (root / "test_prov.py").write_text(
            SUITE.format(gates="correct_unknown_rate=0.3, aid_value_leak_rate=0.0"),
            encoding="utf-8",
        )
    use_scripted(root, {"name": "scripted-report", "script": script})
    (root / "pytest.ini").write_text(
        "[pytest]\n"
        f"provenai_fixtures = {' '.join(sets)}\n"
        "provenai_backend = scripted:factory\n"
        "provenai_model = script.json\n"
        "provenai_results = results.json\n"
        "provenai_report = report.html\n",
        encoding="utf-8",
    )
    (root / "test_audit.py").write_text(
        FIDELITY_TEST.format(gates="answer_accuracy=0.5, citation_f1=0.9"), encoding="utf-8"
    )
    (root / "test_influence.py").write_text(
        INFLUENCE_TEST.format(gates="influence_measured=1.0"), encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--snapshot-update",
            "-q",
            *extra_args,
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def results_of(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "results.json").read_text(encoding="utf-8"))
    return data
