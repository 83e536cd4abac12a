"""Labelled claims and traces derived from HotpotQA supporting facts (no model here).

**Records and splits.** The dev and train records of the HotpotQA files, minus every record
of a shipped fixture set (``--exclude``) and every conflation-probe record, are ordered by
sha256(seed, id) and cut into test (:data:`TEST_RECORDS`), validation and train splits — by
record, so no claim of a record crosses splits.

**A record's trace** is what an agent using the MCP tools would see: ``get_example``;
``search_hotpotqa(question, k=3)`` (BM25 over the record's paragraphs); and
``get_evidence_document`` for each gold paragraph the search did not return, plus one
same-topic distractor. One supporting sentence of one gold paragraph is *removed* from the
output that carries it (the key sentence is missing from the evidence).

**Claims** (each with its gold source, stated family and protected values):

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

**Conflation probes**: the first :data:`PROBES` dev records (in file order, outside the
shipped sets) whose two gold paragraphs have supporting sentences sharing a value — a
nationality word or a year — that the value-bearing sentence of one of them states. The fact
paragraph and the other one are delivered by different tools (search vs document); the probe
answer attributes the fact to the other family, the control to the right one.

Everything is deterministic: ``random.Random(f"{seed}:{record id}")`` per record.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_provenai._io import sha256_file, sha256_text
from pytest_provenai.attribution.protected import has_negation
from pytest_provenai.audit.literals import protected_literals
from pytest_provenai.frozen.model import Case, Source, SupportingFact
from pytest_provenai.frozen.traces import call_document
from pytest_provenai.toolserver.tools import FAMILIES, HotpotTools, evidence_outputs

__all__ = [
    "DERIVATION_VERSION",
    "PROBES",
    "TEST_RECORDS",
    "RecordPool",
    "build_probe",
    "build_trace",
    "load_pool",
]

DERIVATION_VERSION = "provenai-derive/1"
DEFAULT_SEED = 42
TEST_RECORDS = 40
VALIDATION_RECORDS = 150
TRAIN_RECORDS = 600
PROBES = 50
SEARCH_K = 3

NATIONALITIES = (
    "American British English French German Italian Spanish Canadian Australian Japanese "
    "Chinese Russian Indian Irish Scottish Dutch Swedish Norwegian Danish Mexican Brazilian "
    "Korean Polish Austrian Swiss Belgian Welsh Greek"
).split()
_SHARED = re.compile(r"\b(1[5-9]\d\d|20[0-2]\d)\b|\b(" + "|".join(NATIONALITIES) + r")\b")
_PRONOUN = re.compile(r"^(He|She|It|They)\b")
_POSSESSIVE = re.compile(r"^(His|Her|Its|Their)\b")
_NEGATABLE = re.compile(r"\b(is|was|are|were)\b")
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:[A-Z][a-z]+|of|de|von|van|the))*\s+[A-Z][a-z]+\b")
TEMPLATES = (
    "Please verify these details against the original sources.",
    "I hope this helps.",
    "For more information, consult the full documents.",
    "Let me know if you need anything else.",
)
#: Attribution phrases the derivation writes, by family.
PHRASES = {
    "search": ("According to the search results,", "The search results say that"),
    "document": ("According to the document,", "The evidence document states that"),
    "metadata": ("According to the metadata,",),
}


# --------------------------------------------------------------------------- records


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


# --------------------------------------------------------------------------- sentences


def _bare_title(title: str) -> str:
    return re.sub(r"\s*\([^)]*\)$", "", title).strip()


def resolve(sentence: str, title: str) -> str:
    """The sentence stripped, with a leading pronoun replaced by the paragraph's title."""
    text = " ".join(sentence.split())
    name = _bare_title(title)
    text = _PRONOUN.sub(name, text, count=1)
    text = _POSSESSIVE.sub(f"{name}'s", text, count=1)
    return text


def _usable(sentence: str) -> bool:
    words = sentence.split()
    return 5 <= len(words) <= 45 and sentence.rstrip()[-1:] in ".!?\"'”)"


def swap_value(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """(sentence with one number/year/date value changed, the new value) or None."""
    literals = [lit for lit in protected_literals(sentence) if lit.kind in ("number", "date")]
    rng.shuffle(literals)
    for lit in literals:
        years = list(re.finditer(r"\b(1[0-9]{3}|20[0-9]{2})\b", lit.text))
        if years:
            m = years[0]
            new_year = str(int(m.group(0)) + rng.choice([-7, -5, -3, -2, 2, 3, 4, 6]))
            new = lit.text[: m.start()] + new_year + lit.text[m.end() :]
        else:
            m2 = re.search(r"\d[\d,]*(?:\.\d+)?", lit.text)
            if m2 is None:
                continue
            digits = m2.group(0).replace(",", "")
            try:
                value = float(digits)
            except ValueError:
                continue
            changed = value * rng.choice([2, 3]) + rng.choice([1, 2, 5])
            text = (
                str(int(changed))
                if "." not in digits
                else f"{changed:.{len(digits.split('.')[1])}f}"
            )
            new = lit.text[: m2.start()] + text + lit.text[m2.end() :]
        if new != lit.text:
            start, end = lit.span
            return sentence[:start] + new + sentence[end:], new
    return None


def negate(sentence: str) -> str | None:
    if has_negation(sentence):
        return None
    m = _NEGATABLE.search(sentence)
    if m is None:
        return None
    return sentence[: m.end()] + " not" + sentence[m.end() :]


def swap_entities(sentence: str) -> str | None:
    """The sentence with two distinct named entities swapped (not joined by "and"/"or")."""
    names = [m for m in _NAME.finditer(sentence)]
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            a, b = names[i], names[j]
            if a.group(0) == b.group(0):
                continue
            between = sentence[a.end() : b.start()]
            if re.fullmatch(r"\s*(?:,|and|or|&)?\s*(?:and|or)?\s*", between):
                continue
            swapped = (
                sentence[: a.start()]
                + b.group(0)
                + sentence[a.end() : b.start()]
                + a.group(0)
                + sentence[b.end() :]
            )
            return swapped if swapped != sentence else None
    return None


def _attributed(phrase: str, sentence: str) -> str:
    first = sentence.split(" ", 1)[0]
    if first.lower() in ("the", "a", "an", "in", "it", "this", "on", "at", "as", "after"):
        sentence = sentence[:1].lower() + sentence[1:]
    return f"{phrase} {sentence}"


# --------------------------------------------------------------------------- traces


@dataclass
class Draft:
    """A labelled claim before it is placed in an answer."""

    text: str
    verdict: str
    gold_source: str | None
    stated_family: str | None
    kind: str  # how it was derived: positive, value_swap, negation, entity_swap, ...

    def values(self) -> list[str]:
        from pytest_provenai.attribution.protected import protected_values

        return list(dict.fromkeys(v.text for v in protected_values(self.text)))


@dataclass
class Delivered:
    source: str
    title: str
    family: str
    sentences: list[str]  # as delivered (the removed one is absent)
    supporting: set[int]  # indices into the original sentences
    original: tuple[str, ...]


def _outputs(tool: str, result: Any) -> list[tuple[str | None, str]]:
    return [(o.source, o.text) for o in evidence_outputs(tool, result)]


def build_trace(
    case: Case,
    seed: int = DEFAULT_SEED,
    *,
    non_factual: bool = True,
    attribute_rejected: bool = False,
) -> dict[str, Any]:
    """The ``mcp_trace`` case document of one HotpotQA record (see the module docstring),
    plus ``"drafts"``: every claim with how it was derived (dropped when written)."""
    rng = random.Random(f"{seed}:{case.id}")
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

    example = tools.get_example(case.id)
    search = tools.search_hotpotqa(case.question, SEARCH_K)
    ranked = [h["source_id"] for h in tools.search_hotpotqa(case.question, 10)["hits"]]
    hit_ids = [h["source_id"] for h in search["hits"]]
    fetch = [pid for pid in gold if pid not in hit_ids]
    distractor = next((p for p in ranked if p not in hit_ids and p not in gold), None)
    if distractor is not None:
        fetch.append(distractor)

    # the removed key sentence: a supporting sentence of a gold paragraph with >= 2 sentences
    candidates = [
        (pid, i)
        for pid in gold
        for i in sorted(supporting[pid])
        if len(para[pid].sentences) >= 2
        and _usable(resolve(para[pid].sentences[i], para[pid].title))
    ]
    removed = rng.choice(candidates) if candidates else None

    def delivered_text(pid: str) -> str:
        p = para[pid]
        sentences = list(p.sentences)
        if removed is not None and removed[0] == pid:
            del sentences[removed[1]]
        return f"{p.title}\n{''.join(sentences)}"

    calls = [
        call_document(0, "get_example", {"example_id": case.id}, _outputs("get_example", example)),
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
    families = {c["tool"]: FAMILIES[c["tool"]] for c in calls}
    delivered: list[Delivered] = []
    for c in calls[1:]:
        for o in c["outputs"]:
            if o["source"] in {d.source for d in delivered}:
                continue
            p = para[o["source"]]
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
                    supporting[p.source_id],
                    p.sentences,
                )
            )

    # sentence pool: (source, family, resolved text, is_supporting, is_gold)
    pool: list[tuple[Delivered, str, bool]] = []
    for d in delivered:
        for i, s in enumerate(d.original):
            if removed is not None and removed == (d.source, i):
                continue
            text = resolve(s, d.title)
            if _usable(text):
                pool.append((d, text, i in d.supporting))
    rng.shuffle(pool)
    pool.sort(key=lambda x: (not x[2], x[0].source not in gold))
    used: set[str] = set()
    drafts: list[Draft] = []

    def take(pred: Any) -> tuple[Delivered, str] | None:
        for d, text, _sup in pool:
            if text not in used and pred(d, text):
                used.add(text)
                return d, text
        return None

    fams_present = sorted({d.family for d in delivered})
    positives = []
    for _ in range(4):
        got = take(lambda d, t: True)
        if got is None:
            break
        d, text = got
        stated = None
        if rng.random() < 0.35:
            phrase = rng.choice(PHRASES[d.family])
            text = _attributed(phrase, text)
            stated = d.family
        positives.append(Draft(text, "supported", d.source, stated, "positive"))
    drafts += positives
    got = take(lambda d, t: len(fams_present) > 1)
    if got is not None:
        d, text = got
        wrong = rng.choice([f for f in fams_present if f != d.family])
        drafts.append(
            Draft(
                _attributed(rng.choice(PHRASES[wrong]), text),
                "conflated",
                d.source,
                wrong,
                "conflated",
            )
        )
    for kind, fn, verdict in (
        ("value_swap", lambda t: (swap_value(t, rng) or (None, None))[0], "contradicted"),
        ("negation", negate, "contradicted"),
        ("entity_swap", swap_entities, "unsupported"),
    ):
        for d, text, _sup in pool:
            if text in used:
                continue
            changed = fn(text)
            if changed:
                used.add(text)
                drafts.append(Draft(changed, verdict, d.source, None, kind))
                break
    if removed is not None:
        p = para[removed[0]]
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
        text = _attributed(rng.choice(PHRASES[family]), d.text)
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
            claims.append(
                {
                    "range": [start, len(text.encode("utf-8"))],
                    "verdict": d.verdict,
                    "gold_source": d.gold_source,
                    "stated_family": d.stated_family,
                    "protected_values": d.values(),
                }
            )
        out.append({"id": f"a{g}", "text": text, "claims": claims})
    return out


# --------------------------------------------------------------------------- probes


def _shared_values(case: Case) -> list[tuple[str, str, str, int]]:
    """(value, fact title, other title, fact sentence index) for gold paragraph pairs whose
    supporting sentences share a nationality or a year. Pairs whose titles differ only by a
    parenthesised qualifier ("1920 (film)" / "1920 (film series)") are skipped: each paragraph
    nearly states the other's facts, so no verifier can tell which one a claim came from."""
    titles = list(case.supporting_titles)
    if len(titles) != 2 or _bare_title(titles[0]).casefold() == _bare_title(titles[1]).casefold():
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
        if case.id in excluded or not _shared_values(case):
            continue
        out.append(case)
        if len(out) == n:
            break
    return out


def build_probe(case: Case, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The ``conflation_probe`` case document of one probe record."""
    rng = random.Random(f"{seed}:probe:{case.id}")
    options = _shared_values(case)
    value, fact_title, other_title, sentence = options[rng.randrange(len(options))]
    tools = HotpotTools([case])
    ids = tools.case_sources[case.id]
    pid = {tools.paragraphs[i].title: i for i in ids}
    fact, other = pid[fact_title], pid[other_title]
    fact_via_search = rng.random() < 0.5
    searched, fetched = (fact, other) if fact_via_search else (other, fact)
    query = _bare_title(tools.paragraphs[searched].title)
    search = tools.search_hotpotqa(query, 2)
    hits = [h["source_id"] for h in search["hits"]]
    if searched not in hits:  # BM25 on the title always ranks its own paragraph; be sure
        search["hits"] = [h for h in search["hits"] if h["source_id"] != fetched][:1]
        hits = [searched, *[h["source_id"] for h in search["hits"]]]
    hits = [h for h in hits if h != fetched][:2]
    if searched not in hits:
        hits = [searched, *hits][:2]
    example = tools.get_example(case.id)
    calls = [
        call_document(0, "get_example", {"example_id": case.id}, _outputs("get_example", example)),
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
        text = _attributed(PHRASES[family][0], claim)
        draft = Draft(text, verdict, fact, family, "probe")
        return {
            "id": answer_id,
            "text": text,
            "claims": [
                {
                    "range": [0, len(text.encode("utf-8"))],
                    "verdict": verdict,
                    "gold_source": fact,
                    "stated_family": family,
                    "protected_values": draft.values(),
                }
            ],
        }

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
