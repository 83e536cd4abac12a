"""Hand-made HotpotQA-format inputs for the retrieval tests, with known duplicates.

``DEV`` (3 records, 9 rows) and ``TRAIN`` (2 records, 5 rows): 14 source rows.
Duplicates on (title, text):
  * "Blue River" (text BLUE) is in dev r1, dev r2 and train t1  -> 2 duplicates removed
  * "Alphaville" is in dev r1 and train t2                      -> 1 duplicate removed
  * "Zeta Corp" is in dev r1 and dev r2                         -> 1 duplicate removed
  * "Blue River" with a *different* text in dev r3              -> not a duplicate
So 14 rows -> 10 canonical passages, 4 duplicates removed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ALPHA = ["Alphaville is a small market town in the hills.", " The Blue River flows through it."]
BLUE = ["The Blue River is 300 kilometres long.", " It rises in the Copper Mountains."]
BLUE_OTHER = ["Blue River is a 1995 drama film.", " It was shot in Vermont in winter."]

PARAGRAPHS: dict[str, list[str]] = {
    "Zeta Corp": ["Zeta Corp was founded by Ada Zeta in 1921.", " It makes precision tools."],
    "Eta Observatory": [
        "The Eta Observatory sits on a volcanic peak.",
        " Its telescope mirror is eight metres wide.",
    ],
    "Harbour Bridge": [
        "The Harbour Bridge opened to traffic in 1932.",
        " Trains and cars cross the steel arch daily.",
    ],
    "Violin sonata": [
        "A violin sonata is a piece for violin and piano.",
        " Mozart wrote dozens of them in Vienna.",
    ],
    "Penguin": [
        "Penguins are flightless seabirds of the southern hemisphere.",
        " Emperor penguins breed during the Antarctic winter.",
    ],
    "Quantum dot": [
        "A quantum dot is a semiconductor nanocrystal.",
        " Its colour of emitted light depends on its size.",
    ],
    "Marathon": [
        "The marathon is a long-distance foot race of 42.195 km.",
        " It commemorates the run of a Greek messenger.",
    ],
}


def _record(rid: str, question: str, answer: str, context: list[list[Any]]) -> dict[str, Any]:
    return {
        "_id": rid,
        "question": question,
        "answer": answer,
        "type": "bridge",
        "level": "easy",
        "supporting_facts": [[context[0][0], 0]],
        "context": context,
    }


DEV = [
    _record(
        "r1",
        "Which river flows through Alphaville?",
        "Blue River",
        [["Alphaville", ALPHA], ["Blue River", BLUE], ["Zeta Corp", PARAGRAPHS["Zeta Corp"]]],
    ),
    _record(
        "r2",
        "Who founded Zeta Corp?",
        "Ada Zeta",
        [
            ["Zeta Corp", PARAGRAPHS["Zeta Corp"]],
            ["Blue River", BLUE],
            ["Eta Observatory", PARAGRAPHS["Eta Observatory"]],
        ],
    ),
    _record(
        "r3",
        "When did the Harbour Bridge open?",
        "1932",
        [
            ["Harbour Bridge", PARAGRAPHS["Harbour Bridge"]],
            ["Blue River", BLUE_OTHER],
            ["Violin sonata", PARAGRAPHS["Violin sonata"]],
        ],
    ),
]

TRAIN = [
    _record(
        "t1",
        "How long is the Blue River?",
        "300 kilometres",
        [
            ["Blue River", BLUE],
            ["Penguin", PARAGRAPHS["Penguin"]],
            ["Quantum dot", PARAGRAPHS["Quantum dot"]],
        ],
    ),
    _record(
        "t2",
        "How long is a marathon?",
        "42.195 km",
        [["Marathon", PARAGRAPHS["Marathon"]], ["Alphaville", ALPHA]],
    ),
]

# 9 dev rows + 5 train rows = 14; duplicates: Blue River x2, Alphaville x1, Zeta Corp x1 = 4
COUNTS = {
    "sources": 2,
    "records": 5,
    "source_rows": 14,
    "canonical_rows": 10,
    "duplicates_removed": 4,
}


def write_inputs(folder: Path) -> tuple[Path, Path]:
    """Write ``hotpot_dev_mini.json`` and ``hotpot_train_mini.json`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    dev = folder / "hotpot_dev_mini.json"
    train = folder / "hotpot_train_mini.json"
    dev.write_text(json.dumps(DEV), encoding="utf-8")
    train.write_text(json.dumps(TRAIN), encoding="utf-8")
    return dev, train
