"""Conflation probes derived from HotpotQA (no model here).

A probe is one of the first :data:`PROBES` dev records (in file order, outside the shipped
sets) whose two gold paragraphs have supporting sentences sharing a value — a nationality
word or a year — that the value-bearing sentence of one of them states. The fact paragraph
and the other one are delivered by different tools (search vs document); the probe answer
attributes the fact to the other family, the control to the right one.

Deterministic: ``random.Random(f"{seed}:probe:{record id}")`` per record.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from pytest_provenai.frozen.model import Case
from pytest_provenai.frozen.traces import call_document
from pytest_provenai.toolserver.tools import FAMILIES, HotpotTools
from pytest_provenai.verify.claims import PHRASES, Draft, attributed, bare_title, resolve
from pytest_provenai.verify.traces import DEFAULT_SEED, example_call

__all__ = ["NATIONALITIES", "PROBES", "build_probe", "select_probes", "shared_values"]

PROBES = 50

NATIONALITIES = (
    "American British English French German Italian Spanish Canadian Australian Japanese "
    "Chinese Russian Indian Irish Scottish Dutch Swedish Norwegian Danish Mexican Brazilian "
    "Korean Polish Austrian Swiss Belgian Welsh Greek"
).split()
_SHARED = re.compile(r"\b(1[5-9]\d\d|20[0-2]\d)\b|\b(" + "|".join(NATIONALITIES) + r")\b")


def shared_values(case: Case) -> list[tuple[str, str, str, int]]:
    """(value, fact title, other title, fact sentence index) for gold paragraph pairs whose
    supporting sentences share a nationality or a year. Pairs whose titles differ only by a
    parenthesised qualifier ("1920 (film)" / "1920 (film series)") are skipped: each paragraph
    nearly states the other's facts, so no verifier can tell which one a claim came from."""
    titles = list(case.supporting_titles)
    if len(titles) != 2 or bare_title(titles[0]).casefold() == bare_title(titles[1]).casefold():
        return []
    by_title = {s.title: s for s in case.sources}
    values: dict[str, dict[str, int]] = {t: {} for t in titles}
    for f in case.supporting_facts:
        src = by_title.get(f.title)
        if src is None or f.sentence >= len(src.sentences):
            continue
        for m in _SHARED.finditer(src.sentences[f.sentence]):
            values[f.title].setdefault(m.group(0), f.sentence)
    out = []
    for v in values[titles[0]]:
        if v in values[titles[1]]:
            out.append((v, titles[0], titles[1], values[titles[0]][v]))
            out.append((v, titles[1], titles[0], values[titles[1]][v]))
    return out


def select_probes(dev: Sequence[Case], excluded: set[str], n: int = PROBES) -> list[Case]:
    """The first ``n`` dev records (file order) outside ``excluded`` with a shared value."""
    out = []
    for case in dev:
        if case.id in excluded or not shared_values(case):
            continue
        out.append(case)
        if len(out) == n:
            break
    return out


def build_probe(case: Case, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The ``conflation_probe`` case document of one probe record."""
    rng = random.Random(f"{seed}:probe:{case.id}")
    options = shared_values(case)
    value, fact_title, other_title, sentence = options[rng.randrange(len(options))]
    tools = HotpotTools([case])
    ids = tools.case_sources[case.id]
    pid = {tools.paragraphs[i].title: i for i in ids}
    fact, other = pid[fact_title], pid[other_title]
    fact_via_search = rng.random() < 0.5
    searched, fetched = (fact, other) if fact_via_search else (other, fact)
    query = bare_title(tools.paragraphs[searched].title)
    search = tools.search_hotpotqa(query, 2)
    hits = [h["source_id"] for h in search["hits"]]
    if searched not in hits:  # BM25 on the title always ranks its own paragraph; be sure
        search["hits"] = [h for h in search["hits"] if h["source_id"] != fetched][:1]
        hits = [searched, *[h["source_id"] for h in search["hits"]]]
    hits = [h for h in hits if h != fetched][:2]
    if searched not in hits:
        hits = [searched, *hits][:2]
    calls = [
        example_call(tools, case.id),
        call_document(
            1,
            "search_hotpotqa",
            {"k": 2, "query": query},
            [(h, tools.paragraphs[h].document_text()) for h in hits],
        ),
        call_document(
            2,
            "get_evidence_document",
            {"source_id": fetched},
            [(fetched, tools.paragraphs[fetched].document_text())],
        ),
    ]
    families = {c["tool"]: FAMILIES[c["tool"]] for c in calls}
    fact_family = "search" if fact_via_search else "document"
    other_family = "document" if fact_via_search else "search"
    claim = resolve(tools.paragraphs[fact].sentences[sentence], fact_title)

    def answer(answer_id: str, family: str, verdict: str) -> dict[str, Any]:
        text = attributed(PHRASES[family][0], claim)
        draft = Draft(text, verdict, fact, family, "probe")
        return {"id": answer_id, "text": text, "claims": [draft.claim(0, len(text.encode()))]}

    return {
        "id": f"probe-{case.id}",
        "request": case.question,
        "families": families,
        "calls": calls,
        "shared_value": value,
        "fact_source": fact,
        "other_source": other,
        "probe": answer("probe", other_family, "conflated"),
        "control": answer("control", fact_family, "supported"),
        "note": (
            f"HotpotQA dev record {case.id}: {fact_title!r} and {other_title!r} share "
            f"{value!r}; the fact is sentence {sentence} of {fact_title!r}, delivered by "
            f"{'search_hotpotqa' if fact_via_search else 'get_evidence_document'}."
        ),
    }
