"""The HotpotQA records the attribution data is derived from, and their splits (no model here).

The dev and train records of the HotpotQA files, minus every record of a shipped fixture set
(``--exclude``) and every conflation-probe record (:mod:`~pytest_provenai.verify.probes`),
are ordered by sha256(seed, id) and cut into test (:data:`TEST_RECORDS`), validation and
train splits — by record, so no claim of a record crosses splits. Each record's trace and
labelled claims come from :mod:`~pytest_provenai.verify.traces`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_provenai._io import sha256_file, sha256_text
from pytest_provenai.frozen.model import Case, Source, SupportingFact
from pytest_provenai.verify.probes import select_probes
from pytest_provenai.verify.traces import DEFAULT_SEED

__all__ = [
    "TEST_RECORDS",
    "TRAIN_RECORDS",
    "VALIDATION_RECORDS",
    "RecordPool",
    "case_from_record",
    "load_pool",
]

TEST_RECORDS = 40
VALIDATION_RECORDS = 150
TRAIN_RECORDS = 600


def case_from_record(rec: dict[str, Any]) -> Case:
    """A raw HotpotQA record as a :class:`Case` (same fields the freezer writes)."""
    sources = tuple(
        Source(title, tuple(sentences), "".join(sentences), sha256_text("".join(sentences)))
        for title, sentences in rec["context"]
    )
    titles = list(dict.fromkeys(t for t, _ in rec["supporting_facts"]))
    return Case(
        id=rec["_id"],
        question=rec["question"],
        answer=rec["answer"],
        type=rec["type"],
        level=rec["level"],
        supporting_facts=tuple(SupportingFact(t, i) for t, i in rec["supporting_facts"]),
        supporting_titles=tuple(titles),
        sources=sources,
    )


@dataclass
class RecordPool:
    """The HotpotQA records, what is excluded, the probe records and the splits."""

    dev: list[Case]
    train: list[Case]
    inputs: dict[str, str]
    excluded: set[str]
    seed: int = DEFAULT_SEED
    probes: list[Case] = field(default_factory=list)
    splits: dict[str, list[Case]] = field(default_factory=dict)

    def identity(self) -> dict[str, Any]:
        return {
            "inputs": self.inputs,
            "excluded": {
                "count": len(self.excluded),
                "sha256": sha256_text("\n".join(sorted(self.excluded)) + "\n"),
            },
            "probe_records": [c.id for c in self.probes],
            "seed": self.seed,
            "splits": {k: len(v) for k, v in self.splits.items()},
        }


def _fixture_ids(folders: Iterable[Path]) -> set[str]:
    from pytest_provenai.frozen.load import load_fixture_set

    ids: set[str] = set()
    for folder in folders:
        ids.update(c.id for c in load_fixture_set(folder).cases)
    return ids


def load_pool(
    data: Path,
    *,
    exclude: Sequence[Path] = (),
    seed: int = DEFAULT_SEED,
    test: int = TEST_RECORDS,
    validation: int = VALIDATION_RECORDS,
    train: int = TRAIN_RECORDS,
) -> RecordPool:
    """Read ``data/dev_distractor.json`` and ``data/train_distractor.json``, take out the
    excluded fixture records and the probe records, and split the rest."""
    files = {"dev": data / "dev_distractor.json", "train": data / "train_distractor.json"}
    raw = {}
    for name, path in files.items():
        try:
            raw[name] = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            from pytest_provenai.errors import AttributionError

            raise AttributionError(
                f"{path}: no such file; pass the folder holding the HotpotQA "
                "dev_distractor.json and train_distractor.json"
            ) from None
    pool = RecordPool(
        dev=[case_from_record(r) for r in raw["dev"]],
        train=[case_from_record(r) for r in raw["train"]],
        inputs={p.name: sha256_file(p) for p in files.values()},
        excluded=_fixture_ids(exclude),
        seed=seed,
    )
    pool.probes = select_probes(pool.dev, pool.excluded)
    taken = pool.excluded | {c.id for c in pool.probes}
    rest = [c for c in [*pool.dev, *pool.train] if c.id not in taken]
    rest.sort(key=lambda c: sha256_text(f"{seed}:{c.id}"))
    pool.splits = {
        "test": rest[:test],
        "validation": rest[test : test + validation],
        "train": rest[test + validation : test + validation + train],
    }
    return pool
