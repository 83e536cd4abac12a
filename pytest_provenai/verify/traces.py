"""A HotpotQA record's ``mcp_trace`` case document: its tool calls and labelled claims
(no model here).

**The trace** is what an agent using the MCP tools would see: ``get_example``;
``search_hotpotqa(question, k=3)`` (BM25 over the record's paragraphs); and
``get_evidence_document`` for each gold paragraph the search did not return, plus one
same-topic distractor. One supporting sentence of one gold paragraph is *removed* from the
output that carries it (the key sentence is missing from the evidence).

**Claims** (each with its gold source, stated family and protected values;
:mod:`~pytest_provenai.verify.claims` makes their text):

* ``supported`` — sentences of the delivered paragraphs (supporting facts first), a leading
  pronoun replaced by the paragraph's title; some carry the right attribution phrase;
* ``contradicted`` — a protected value (number, year, date) swapped for another, or a
  negation inserted after the first ``is/was/are/were``;
* ``unsupported`` — two named entities of a sentence swapped;
* ``not_enough_evidence`` — the removed key sentence;
* ``conflated`` — a delivered sentence attributed to the other family of the trace;
* ``non_factual`` — template text (test split only: it never reaches the calibrator).

**No label leak** (issue 23): in the train and validation splits
(``attribute_rejected=True``) about a third of the contradicted, unsupported and
not-enough-evidence claims also carry an attribution phrase (of their gold source's family;
of a family of the trace for the removed sentence), drawn from a second random stream, so an
attribution phrase occurs in every class and never tells the label. The shipped test split
is written without them (unchanged since it was first shipped).

Everything is deterministic: ``random.Random(f"{seed}:{record id}")`` per record, its draws
in a fixed order (removed sentence, sentence pool, claims, answers).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_provenai.frozen.model import Case
from pytest_provenai.frozen.traces import call_document
from pytest_provenai.toolserver.tools import FAMILIES, HotpotTools, Paragraph, evidence_outputs
from pytest_provenai.verify.claims import (
    PHRASES,
    TEMPLATES,
    Draft,
    attributed,
    negate,
    resolve,
    swap_entities,
    swap_value,
    usable,
)

__all__ = ["DEFAULT_SEED", "DERIVATION_VERSION", "SEARCH_K", "build_trace", "example_call"]

DERIVATION_VERSION = "provenai-derive/1"
DEFAULT_SEED = 42
SEARCH_K = 3

#: A sentence one edit turns into a rejected claim: (kind, edit, verdict); the edit returns
#: the changed sentence or None.
_Edit = tuple[str, Callable[[str], str | None], str]


@dataclass
class Delivered:
    """A paragraph as the trace delivered it (the removed sentence absent)."""

    source: str
    title: str
    family: str
    sentences: list[str]  # as delivered (the removed one is absent)
    supporting: set[int]  # indices into the original sentences
    original: tuple[str, ...]


@dataclass
class _Record:
    """One record's paragraphs as the tools serve them: gold ones and supporting sentences."""

    case: Case
    tools: HotpotTools
    para: dict[str, Paragraph]
    gold: list[str]
    supporting: dict[str, set[int]]


#: (paragraph source id, sentence index) of the removed key sentence, or None.
_Removed = tuple[str, int] | None
#: A usable sentence of the trace: (its paragraph, resolved text, is it a supporting fact).
_PoolEntry = tuple[Delivered, str, bool]


def example_call(tools: HotpotTools, case_id: str) -> dict[str, Any]:
    """The first call of every derived trace: ``get_example`` of the record."""
    example = tools.get_example(case_id)
    outputs = [(o.source, o.text) for o in evidence_outputs("get_example", example)]
    return call_document(0, "get_example", {"example_id": case_id}, outputs)


def build_trace(
    case: Case,
    seed: int = DEFAULT_SEED,
    *,
    non_factual: bool = True,
    attribute_rejected: bool = False,
) -> dict[str, Any]:
    """The ``mcp_trace`` case document of one HotpotQA record (see the module docstring)."""
    rng = random.Random(f"{seed}:{case.id}")
    record = _record(case)
    removed = _removed_sentence(record, rng)
    calls = _calls(record, removed)
    families = {c["tool"]: FAMILIES[c["tool"]] for c in calls}
    delivered = _delivered(record, calls, families, removed)
    pool = _sentence_pool(delivered, removed, record.gold, rng)
    drafts = _drafts(pool, delivered, rng)
    if removed is not None:
        p = record.para[removed[0]]
        drafts.append(
            Draft(
                resolve(p.sentences[removed[1]], p.title),
                "not_enough_evidence",
                None,
                None,
                "removed",
            )
        )
    if non_factual:
        drafts.append(Draft(rng.choice(TEMPLATES), "non_factual", None, None, "template"))
    if attribute_rejected:
        _attribute_rejected(drafts, delivered, random.Random(f"{seed}:phrase:{case.id}"))

    answers = _answers(drafts, rng)
    para = record.para
    return {
        "id": case.id,
        "category": "hotpotqa",
        "request": case.question,
        "families": families,
        "calls": calls,
        "answers": answers,
        "note": (
            f"Derived ({DERIVATION_VERSION}) from HotpotQA record {case.id}; removed key "
            f"sentence: {removed[1] if removed else 'none'} of "
            f"{para[removed[0]].title if removed else '-'}."
        ),
    }


def _record(case: Case) -> _Record:
    tools = HotpotTools([case])
    ids = tools.case_sources[case.id]
    para = {pid: tools.paragraphs[pid] for pid in ids}
    gold_titles = list(case.supporting_titles)
    gold = [pid for pid in ids if para[pid].title in gold_titles]
    supporting: dict[str, set[int]] = {pid: set() for pid in ids}
    for f in case.supporting_facts:
        for pid in ids:
            if para[pid].title == f.title and f.sentence < len(para[pid].sentences):
                supporting[pid].add(f.sentence)
    return _Record(case, tools, para, gold, supporting)


def _removed_sentence(record: _Record, rng: random.Random) -> _Removed:
    """The removed key sentence: a supporting sentence of a gold paragraph with >= 2
    sentences (one draw of ``rng``)."""
    para = record.para
    candidates = [
        (pid, i)
        for pid in record.gold
        for i in sorted(record.supporting[pid])
        if len(para[pid].sentences) >= 2
        and usable(resolve(para[pid].sentences[i], para[pid].title))
    ]
    return rng.choice(candidates) if candidates else None


def _calls(record: _Record, removed: _Removed) -> list[dict[str, Any]]:
    """get_example, search_hotpotqa(question, k=3), then get_evidence_document for each gold
    paragraph the search missed and one distractor; the removed sentence left out."""
    case, tools, para = record.case, record.tools, record.para
    search = tools.search_hotpotqa(case.question, SEARCH_K)
    ranked = [h["source_id"] for h in tools.search_hotpotqa(case.question, 10)["hits"]]
    hit_ids = [h["source_id"] for h in search["hits"]]
    fetch = [pid for pid in record.gold if pid not in hit_ids]
    distractor = next((p for p in ranked if p not in hit_ids and p not in record.gold), None)
    if distractor is not None:
        fetch.append(distractor)

    def delivered_text(pid: str) -> str:
        p = para[pid]
        sentences = list(p.sentences)
        if removed is not None and removed[0] == pid:
            del sentences[removed[1]]
        return f"{p.title}\n{''.join(sentences)}"

    calls = [
        example_call(tools, case.id),
        call_document(
            1,
            "search_hotpotqa",
            {"k": SEARCH_K, "query": case.question},
            [(h["source_id"], delivered_text(h["source_id"])) for h in search["hits"]],
        ),
    ]
    for pid in fetch:
        calls.append(
            call_document(
                len(calls),
                "get_evidence_document",
                {"source_id": pid},
                [(pid, delivered_text(pid))],
            )
        )
    return calls


def _delivered(
    record: _Record, calls: list[dict[str, Any]], families: dict[str, str], removed: _Removed
) -> list[Delivered]:
    """Each paragraph the search and document calls delivered, once, with its family."""
    delivered: list[Delivered] = []
    for c in calls[1:]:
        for o in c["outputs"]:
            if o["source"] in {d.source for d in delivered}:
                continue
            p = record.para[o["source"]]
            sentences = [
                s
                for i, s in enumerate(p.sentences)
                if removed is None or removed != (p.source_id, i)
            ]
            delivered.append(
                Delivered(
                    p.source_id,
                    p.title,
                    families[c["tool"]],
                    sentences,
                    record.supporting[p.source_id],
                    p.sentences,
                )
            )
    return delivered


def _sentence_pool(
    delivered: list[Delivered], removed: _Removed, gold: list[str], rng: random.Random
) -> list[_PoolEntry]:
    """The usable delivered sentences, shuffled, then supporting facts and gold paragraphs
    first."""
    pool: list[_PoolEntry] = []
    for d in delivered:
        for i, s in enumerate(d.original):
            if removed is not None and removed == (d.source, i):
                continue
            text = resolve(s, d.title)
            if usable(text):
                pool.append((d, text, i in d.supporting))
    rng.shuffle(pool)
    pool.sort(key=lambda x: (not x[2], x[0].source not in gold))
    return pool


def _drafts(pool: list[_PoolEntry], delivered: list[Delivered], rng: random.Random) -> list[Draft]:
    """Up to four supported claims (some attributed), one conflated claim when the trace has
    two families, and one claim per edit (value swap, negation, entity swap); no sentence
    used twice."""
    used: set[str] = set()
    drafts: list[Draft] = []

    def take(pred: Callable[[Delivered, str], bool]) -> tuple[Delivered, str] | None:
        for d, text, _sup in pool:
            if text not in used and pred(d, text):
                used.add(text)
                return d, text
        return None

    fams_present = sorted({d.family for d in delivered})
    for _ in range(4):
        got = take(lambda d, t: True)
        if got is None:
            break
        d, text = got
        stated = None
        if rng.random() < 0.35:
            phrase = rng.choice(PHRASES[d.family])
            text = attributed(phrase, text)
            stated = d.family
        drafts.append(Draft(text, "supported", d.source, stated, "positive"))
    got = take(lambda d, t: len(fams_present) > 1)
    if got is not None:
        d, text = got
        wrong = rng.choice([f for f in fams_present if f != d.family])
        drafts.append(
            Draft(
                attributed(rng.choice(PHRASES[wrong]), text),
                "conflated",
                d.source,
                wrong,
                "conflated",
            )
        )
    edits: tuple[_Edit, ...] = (
        ("value_swap", lambda t: (swap_value(t, rng) or (None, None))[0], "contradicted"),
        ("negation", negate, "contradicted"),
        ("entity_swap", swap_entities, "unsupported"),
    )
    for kind, fn, verdict in edits:
        for d, text, _sup in pool:
            if text in used:
                continue
            changed = fn(text)
            if changed:
                used.add(text)
                drafts.append(Draft(changed, verdict, d.source, None, kind))
                break
    return drafts


def _attribute_rejected(
    drafts: list[Draft], delivered: list[Delivered], rng: random.Random
) -> None:
    """Put an attribution phrase on about a third of the rejected claims (in place): the
    gold source's family, or for the removed sentence a family of the trace."""
    family_of = {d.source: d.family for d in delivered}
    families = sorted(set(family_of.values()))
    for i, d in enumerate(drafts):
        if d.verdict not in ("contradicted", "unsupported", "not_enough_evidence"):
            continue
        if rng.random() >= 0.35 or not families:
            continue
        family = family_of.get(d.gold_source or "", "") or rng.choice(families)
        text = attributed(rng.choice(PHRASES[family]), d.text)
        drafts[i] = Draft(text, d.verdict, d.gold_source, family, d.kind)


def _answers(drafts: list[Draft], rng: random.Random) -> list[dict[str, Any]]:
    """Group the claims into answers: the first two positives make an answer that should be
    allowed; the rest are grouped in twos and threes, each with at least one claim to block."""
    positives = [d for d in drafts if d.kind == "positive"]
    others = [d for d in drafts if d.kind != "positive"]
    groups: list[list[Draft]] = []
    if len(positives) >= 2:
        groups.append(positives[:2])
        positives = positives[2:]
    rng.shuffle(others)
    while others:
        group = [others.pop()]
        if positives and rng.random() < 0.6:
            group.append(positives.pop())
        if others and rng.random() < 0.4:
            group.append(others.pop())
        rng.shuffle(group)
        groups.append(group)
    if positives:
        groups.append(positives)
    out = []
    for g, group in enumerate(groups):
        text = ""
        claims = []
        for d in group:
            if text:
                text += " "
            start = len(text.encode("utf-8"))
            text += d.text
            claims.append(d.claim(start, len(text.encode("utf-8"))))
        out.append({"id": f"a{g}", "text": text, "claims": claims})
    return out
