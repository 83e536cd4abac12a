"""Routing a claim to the source that supports it, on given vectors (ProvenanceGuard §III-C).

Each source is represented by the centroid of its chunk embeddings (re-normalised); the
router picks the source whose centroid has the highest cosine with the claim and records
the margin between the top two scores. There is no score cutoff (the seed found that hard
cutoffs reject most claims): a claim is *not routed* only when there is no evidence.

**Value anchoring** (issue 23, ninth round; :func:`anchor`): when two outputs look alike (two
bookings, two meters, a meter record and its readings table) the centroid can pick the one
that lacks the claim's values. The claim is then moved to the one other output that holds
*all* of them, and only when nothing the claim names or says that the centroid's choice
holds is missing from that output (otherwise a value taken from another record, "Priya
entered 6 subjects" when the 6 is another person's, would be moved to that record and pass).
Only the claim's words count here, its values cut out: they were compared by meaning ("24
July 2032" is in ``2032-07-24T06:00``, whose tokens hold no "july").
A word the choice has only as a field name (``meter`` in ``meter: FVW-88302``) names the
kind of record, not this record, and does not hold the claim there; nor do its words hold a
claim of two or more values of which the choice holds none (a terms page that says "daily
rate" and "deposit" against a booking holding both amounts) — unless the choice holds such a
word as a short field's value, which says what record the claim is about ("the estate" of
``vehicle: estate`` beside the hatchback's booking), or is a record of the other's shape.

Vectors are sequences of floats (any embedding model); sums use ``math.fsum`` so the same
inputs give the same scores on every run. Pure Python.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pytest_provenai.attribution.protected import STOPWORDS, claim_values, content_terms
from pytest_provenai.attribution.rows import (
    cut_values,
    field,
    field_parts,
    records,
    said_fields,
    without_keys,
)
from pytest_provenai.attribution.support import names
from pytest_provenai.attribution.values import match_values

__all__ = [
    "ROUTE_STATUSES",
    "Route",
    "anchor",
    "centroid",
    "cosine",
    "on_topic",
    "opening_name",
    "route",
    "says_name",
]

Vector = Sequence[float]

#: ``routed``: two or more sources, top one chosen; ``single_source``: only one source (the
#: margin is the score itself); ``value_anchored``: moved from the centroid's choice to the
#: one output holding all the claim's values (:func:`anchor`; the margin is then the moved-to
#: score minus the centroid's best, ≤ 0); ``topic_anchored``: moved to the output of the same
#: tool that the answer is about (:func:`on_topic`); ``no_evidence``: nothing to route to.
ROUTE_STATUSES = ("routed", "single_source", "value_anchored", "topic_anchored", "no_evidence")


def _norm(v: Vector) -> float:
    return math.sqrt(math.fsum(x * x for x in v))


def cosine(a: Vector, b: Vector) -> float:
    """Cosine similarity; 0.0 when either vector is zero."""
    na, nb = _norm(a), _norm(b)
    if na == 0.0 or nb == 0.0:
        return 0.0
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / (na * nb)


def centroid(vectors: Sequence[Vector]) -> list[float]:
    """Mean of ``vectors`` scaled to unit length (a zero mean stays zero)."""
    if not vectors:
        raise ValueError("centroid of no vectors")
    dim = len(vectors[0])
    mean = [math.fsum(v[i] for v in vectors) / len(vectors) for i in range(dim)]
    n = _norm(mean)
    return mean if n == 0.0 else [x / n for x in mean]


@dataclass(frozen=True)
class Route:
    """The router's decision for one claim: the top source, its score, the margin to the
    second, the full ranking (source, score) best first, and the status."""

    source: str | None
    score: float
    margin: float
    ranking: tuple[tuple[str, float], ...]
    status: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "score": self.score,
            "margin": self.margin,
            "status": self.status,
            "ranking": [[s, v] for s, v in self.ranking],
        }


def route(claim: Vector, centroids: Mapping[str, Vector]) -> Route:
    """Route ``claim`` over ``centroids`` (source id → centroid). Ties are broken by the
    order of ``centroids`` (the order evidence was returned in)."""
    if not centroids:
        return Route(None, 0.0, 0.0, (), "no_evidence")
    scored = [(source, cosine(claim, vec)) for source, vec in centroids.items()]
    order = sorted(range(len(scored)), key=lambda i: (-scored[i][1], i))
    ranking = tuple(scored[i] for i in order)
    top_source, top = ranking[0]
    if len(ranking) == 1:
        return Route(top_source, top, top, ranking, "single_source")
    return Route(top_source, top, top - ranking[1][1], ranking, "routed")


def says_name(text: str, name: str) -> bool:
    """Whether ``text`` has ``name`` as a whole word: "Drury" is not in "Drury-Vale"; a
    family's plural names its member ("the Tebbutts" in "hirer: Rosalind Tebbutt")."""
    return any(
        re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text, re.IGNORECASE) is not None
        for n in {name, name[:-1] if len(name) > 3 and name.endswith("s") else name}
    )


def anchor(r: Route, claim: str, content: str, outputs: Mapping[str, str]) -> Route:
    """``r`` moved by value anchoring, or ``r`` itself (see the module docstring).

    ``claim`` is the claim's whole text (a stated "per booking VP-66210's record" anchors
    too), ``content`` the claim without its attribution phrase (its names and content terms
    are the guard), ``outputs`` source id → output text. Text values (quotations) do not
    anchor: only values read by meaning and identifiers do."""
    if r.source is None or len(r.ranking) < 2:
        return r
    values = [v for v in claim_values(claim) if v.kind != "text"]
    if not values:
        return r
    held = {s: sum(m.present for m in match_values(values, t)) for s, t in outputs.items()}
    if held[r.source] == len(values):
        return r
    full = [s for s, n in held.items() if n == len(values)]
    if len(full) != 1:
        return r
    target = full[0]
    # the target's underscores read as spaces, so that its field names are its words too
    # ("Hb" of ``last_hb_g_dl``, "car" of ``car_group``): a word the chosen output says and
    # the target says only in a field's name keeps nothing on the chosen output
    chosen, other = outputs[r.source].casefold(), outputs[target].casefold().replace("_", " ")
    named = names(content)
    if any(says_name(chosen, name) and not says_name(other, name) for name in named):
        return r
    chosen_terms, other_terms = content_terms(without_keys(chosen)), content_terms(other)
    # words only: the values were compared by meaning above ("24 July 2032" is in
    # "2032-07-24T06:00", whose tokens hold no "july")
    words = cut_values(content, [v for v in claim_values(content) if v.kind != "text"])
    theirs = any(says_name(other, name) and not says_name(chosen, name) for name in named)
    kept = [t for t in content_terms(words) if t in chosen_terms and t not in other_terms]
    # the chosen output holds none of two or more values the target holds all of: words it
    # has in prose do not keep the claim there (a terms page's "deposit"), words it holds as
    # a short field's value do ("estate" of ``vehicle: estate``), and so does a record of
    # the target's own shape (another street's bin calendar)
    theirs = theirs or (
        held[r.source] == 0
        and len(values) >= 2
        and not set(kept) & _value_terms(outputs[r.source])
        and not _alike(outputs[r.source], outputs[target])
    )
    if not theirs and kept:
        # a word only the chosen output has keeps the claim there, unless the claim names
        # what only the other has ("the calendar for Larkspur Road" routed to another
        # street's calendar that says "emptied")
        return r
    score = dict(r.ranking)[target]
    return Route(target, score, score - r.score, r.ranking, "value_anchored")


def on_topic(
    r: Route,
    claim: str,
    earlier: Sequence[str],
    outputs: Mapping[str, str],
    tool_of: Mapping[str, str],
    family_of: Mapping[str, str],
) -> Route:
    """``r`` moved to the output the answer is talking about, or ``r`` itself.

    When the routed output is one of several structured outputs of one tool (two client
    files, two donors' records: :func:`~.rows.records`) and the ``claim`` (its whole text,
    attribution phrase included) says no name or identifier that any of them holds ("His
    preferred groomer's Carys."), the claim is about the record the answer last named: the
    nearest ``earlier`` text (the request the answer answers, then the claims before this
    one) that names exactly one of those outputs by a name or identifier only it holds ("So
    Otis is Gideon Marsh-Ashdown's boy"). A claim routed elsewhere is moved there and
    checked against what that record says: a value only the other record holds is then no
    support. An earlier text that names two of them (a comparison) settles nothing. Only
    between records of one shape (:func:`_alike`), and not for search results, which are
    about different things.

    A name that some of the records hold only as the value of a field the claim names
    ("Carys" of "His preferred groomer's Carys", where the other client's groomer is Carys)
    is a value the claim states, not the record it is about — unless the claim gives it to
    the field the answer named its record by ("Owner Ilse Varga books monthly" after "Owner
    Bram Oduya books weekly" turns to another record). A claim its values anchored
    (:func:`anchor`) to another record is moved too: a value only that record holds is no
    support for a claim about this one."""
    if r.source is None or len(r.ranking) < 2:
        return r
    if family_of.get(r.source) == "search":  # search results are about different things
        return r
    tool = tool_of.get(r.source)
    same = [s for s in outputs if tool_of.get(s) == tool and _shape(outputs[s]) is not None]
    if r.source not in same or len(same) < 2:
        return r

    opening = opening_name(claim, [outputs[s] for s in same])

    def held(text: str, opening: Sequence[str] = ()) -> list[tuple[str, list[str], bool]]:
        # (name or identifier, the records holding it, whether it is an identifier);
        # ``opening``: the name the text opens with (:func:`opening_name`)
        said = [(n, False) for n in [*names(text), *opening]]
        said += [(v.text, True) for v in claim_values(text) if v.kind == "identifier"]
        return [(n, [s for s in same if says_name(outputs[s], n)], i) for n, i in said]

    def subjects(text: str, opening: Sequence[str] = ()) -> list[tuple[str, list[str]]]:
        # those of ``held`` that say which record the text is about: not a name that some
        # records hold only as the value of a field the text names ("Carys" of "His
        # preferred groomer's Carys"), a value it states
        return [
            (n, holders)
            for n, holders, identifier in held(text, opening)
            if holders
            and (
                identifier
                or len(holders) == len(same)
                or not all(_field_keys(outputs[s], n, text) for s in holders)
            )
        ]

    named = subjects(claim, opening)
    if named:
        # the claim names what it is about (its attribution phrase too): the one record
        # that holds the name opening it, where the routed one holds none of what it names
        # ("Cobble has no queen cells" routed to Bramble's inspection, whose ``queen_cells:
        # none`` its words matched); a name after the verb may be the swapped value ("The art
        # visit is led by Ms Quillan", who leads another trip)
        theirs = {holders[0] for n, holders in named if len(holders) == 1 and n in opening}
        if any(r.source in holders for _, holders in named) or len(theirs) != 1:
            return r
        target = theirs.pop()
        if not _alike(outputs[target], outputs[r.source]):
            return r
        score = dict(r.ranking)[target]
        return Route(target, score, score - r.score, r.ranking, "topic_anchored")
    for text in reversed(earlier):
        # an earlier text names a record by any name only it holds, the value of a field it
        # names too ("the copy with call number QX 641 RAM" names that copy)
        said = held(text)
        found = {holders[0] for _, holders, _ in said if len(holders) == 1}
        if len(found) > 1:
            return r
        if found:
            target = found.pop()
            break
    else:
        return r
    if target == r.source or not _alike(outputs[target], outputs[r.source]):
        return r
    # a name the claim gives the field the answer named its record by ("Customer Ilse Varga
    # is on Gold" after "Bram Oduya is on Silver") turns to another record: it stays
    by = {k for n, h, _ in said if h == [target] for k in _field_keys(outputs[target], n)}
    if any(by & _field_keys(outputs[s], n, claim) for n in names(claim) for s in same):
        return r
    score = dict(r.ranking)[target]
    return Route(target, score, score - r.score, r.ranking, "topic_anchored")


#: A capitalised word opening a text, not in the possessive (:func:`.support.names` reads
#: "Bramble's" already).
_OPENING = re.compile(r"\s*([A-Z][a-z][\w’'-]*)\b(?!['’]s\b)")


def opening_name(text: str, outputs: Sequence[str]) -> list[str]:
    """The word opening ``text`` as a name, where one of ``outputs`` writes it capitalised
    inside a sentence ("Cobble has no queen cells" of ``hive: H5 "Cobble"``): a name that
    opens a sentence looks like any other first word (:func:`.support.names` leaves it
    out)."""
    m = _OPENING.match(text)
    if m is None or m.group(1).casefold() in STOPWORDS:
        return []
    word = m.group(1)
    for output in outputs:
        for hit in re.finditer(rf"(?<![\w-]){re.escape(word)}(?![\w-])", output):
            before = output[: hit.start()].rstrip(" \t")
            if before and before[-1] not in ".!?\n":
                return [word]
    return []


def _value_terms(output: str) -> set[str]:
    """The content words (casefolded) of the short values (three words at most) of an
    output's ``key: value`` fields and table cells (:func:`~.rows.records`): ``vehicle:
    estate``, a ``kitchen`` cell, not a sentence after "Terms:"."""
    return {
        t
        for unit in records(output) or [output]
        for part in field_parts(unit.casefold())
        if (kv := field(part)) is not None and len(kv[1].split()) <= 3
        for t in content_terms(kv[1])
    }


def _field_keys(output: str, name: str, claim: str | None = None) -> set[str]:
    """The names (casefolded) of the fields of ``output`` whose value says ``name``; with a
    ``claim``, only the fields it names ("Carys" of "His preferred groomer's Carys" in
    ``preferred_groomer: Carys``: a value the claim states of that record)."""
    lines = (
        (line for line, _ in said_fields(claim, output, shortest=3))
        if claim is not None
        else field_parts(output)
    )
    return {
        kv[0].strip().casefold()
        for line in lines
        if (kv := field(line)) is not None and says_name(kv[1], name)
    }


@lru_cache(maxsize=512)
def _shape(text: str) -> frozenset[str] | None:
    """The field names of an output's records (:func:`~.rows.records`), or None when it is
    no records. Cached: every claim of an answer asks it of the same outputs."""
    found = records(text)
    if found is None:
        return None
    return frozenset(kv[0].casefold() for r in found for kv in map(field, r.split("\n")) if kv)


def _alike(a: str, b: str) -> bool:
    """Whether two outputs are records of one shape (half their field names or more in
    common): two client files, not a cluster's totals and its per-host table."""
    ka, kb = _shape(a) or frozenset(), _shape(b) or frozenset()
    return bool(ka and kb) and len(ka & kb) >= 0.5 * len(ka | kb)
