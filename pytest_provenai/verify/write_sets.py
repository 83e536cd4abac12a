"""Write the HotpotQA-derived attribution fixture sets (``provenai verify sets``).

* ``hotpotqa-claims-test`` (kind ``mcp_trace``): the traces of the held-out test split —
  the records the calibrator never sees;
* ``hotpotqa-conflation-probes`` (kind ``conflation_probe``): the 50 probes, each with its
  control answer.

Both are CC BY-SA 4.0 like HotpotQA, with the attribution in the manifest and README. The
sets depend only on the input files, the excluded sets and the seed: writing them twice gives
byte-identical folders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_provenai.frozen.model import FixtureSet
from pytest_provenai.frozen.write import write_provenance_set
from pytest_provenai.verify.probes import build_probe
from pytest_provenai.verify.sets import RecordPool
from pytest_provenai.verify.traces import DERIVATION_VERSION, build_trace

__all__ = ["HOTPOTQA_LICENCE", "write_claims_test", "write_probes"]

HOTPOTQA_LICENCE = {
    "name": "CC BY-SA 4.0",
    "url": "https://creativecommons.org/licenses/by-sa/4.0/",
    "attribution": (
        "HotpotQA (Yang et al., EMNLP 2018, https://hotpotqa.github.io), CC BY-SA 4.0; "
        "derived by pytest-provenai: claims rewritten from supporting sentences (pronouns "
        "resolved, values swapped, negations and entity swaps inserted, attribution phrases "
        "added) and tool traces built from the paragraphs"
    ),
}


def _readme(name: str, what: str, pool: RecordPool, command: str) -> str:
    inputs = ", ".join(f"`{k}` (sha256 `{v}`)" for k, v in sorted(pool.inputs.items()))
    return (
        f"# {name}\n\n{what}\n\nDerived ({DERIVATION_VERSION}, seed {pool.seed}) from {inputs}; "
        f"{len(pool.excluded)} records of the shipped HotpotQA fixture sets are excluded from "
        "every split.\n\n## Licence and attribution\n\n"
        f"{HOTPOTQA_LICENCE['attribution']}.\n\nLicensed under CC BY-SA 4.0 "
        f"({HOTPOTQA_LICENCE['url']}), like the dataset it comes from.\n\n"
        f"Recreate it with:\n\n```\n{command}\n```\n"
    )


COMMAND = (
    "provenai verify sets ../shared/data/hotpotqa --exclude fixtures/hotpotqa-dev60 "
    "fixtures/hotpotqa-dev-first1 --claims-test fixtures/hotpotqa-claims-test "
    "--probes fixtures/hotpotqa-conflation-probes --overwrite"
)


def _write(
    pool: RecordPool, out: Path, kind: str, cases: list[dict[str, Any]], what: str, overwrite: bool
) -> FixtureSet:
    return write_provenance_set(
        out,
        kind=kind,
        cases=cases,
        description=what,
        readme=_readme(out.name, what, pool, COMMAND),
        synthetic=False,
        licence=HOTPOTQA_LICENCE,
        generator="provenai verify sets",
        overwrite=overwrite,
    )


def write_claims_test(pool: RecordPool, out: Path, *, overwrite: bool = False) -> FixtureSet:
    cases: list[dict[str, Any]] = [build_trace(c, pool.seed) for c in pool.splits["test"]]
    n_claims = sum(len(a["claims"]) for c in cases for a in c["answers"])
    what = (
        f"{len(cases)} tool traces and {n_claims} labelled claims: the held-out test split of "
        "the attribution verifier's calibration data (records the calibrator never sees). "
        "Each trace calls get_example, search_hotpotqa and get_evidence_document; one key "
        "supporting sentence is missing from the evidence."
    )
    return _write(pool, out, "mcp_trace", cases, what, overwrite)


def write_probes(pool: RecordPool, out: Path, *, overwrite: bool = False) -> FixtureSet:
    cases = [build_probe(c, pool.seed) for c in pool.probes]
    what = (
        f"{len(cases)} source-conflation probes, each with a control: HotpotQA dev records "
        "whose two gold paragraphs share a value (a nationality or a year). One paragraph "
        "comes from search_hotpotqa, the other from get_evidence_document; the probe answer "
        "attributes the fact to the wrong one's family, the control to the right one."
    )
    return _write(pool, out, "conflation_probe", cases, what, overwrite)
