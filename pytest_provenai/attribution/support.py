"""The rule-side support signals of one claim against its routed source (issue 23): values by
meaning, the claim's row in a structured output, negation and antonym conflicts with the
claim's evidence unit, and whether a neutral decision may be lexically rescued.

The *unit* is the claim's row when the routed source is structured (a table, ``key: value``
records, JSON; :mod:`~pytest_provenai.attribution.rows`), else the routed source's chunk
most similar to the claim; a source that is one record is also read whole for antonyms and
negated fields (its chunk may be one line of it). A *conflict* makes the claim
``contradicted`` whatever the calibrated score says
(:func:`~pytest_provenai.attribution.verdict.decide`):

* ``value_from_other_row`` — a claim value (or a cell's words) that the claim's row lacks
  and another row of the same source holds, or a value or name that the one line of a log
  the claim's time points at lacks and another line holds
  (:func:`~pytest_provenai.attribution.rows.log_other_line`), or a time, date or amount
  whose clause speaks of another line of a record than the lines that hold it
  (:func:`~pytest_provenai.attribution.rows.line_other_value`);
* ``negation_conflict`` — the claim negates what the unit affirms, or the reverse, over a
  shared predicate, or it contradicts a yes/no field of the unit (``courier required:
  yes``);
* ``antonym_conflict`` — the claim says a word whose antonym the unit says
  (:data:`~pytest_provenai.attribution.polarity.ANTONYMS`);
* ``field_conflict`` — a source that is not a table of rows has a ``key: value`` field
  that the claim names beside one of its values, and that field holds another value of
  the same sort and not the claim's ("requested at 14:20" against ``aircraft: …
  requested 14:02``; :func:`~pytest_provenai.attribution.rows.field_conflict`), or the
  claim gives a field a name the source lacks while the field holds another ("His
  preferred groomer's Carys" against ``preferred_groomer: Marek``;
  :func:`~pytest_provenai.attribution.rows.name_field_conflict`), or the claim says a
  record is full or has room where its ``capacity`` and ``booked`` fields say the other
  ("sold out" against ``capacity: 12``, ``booked: 7``;
  :func:`~pytest_provenai.attribution.rows.capacity_state`);
* ``superlative_conflict`` — the claim calls its amount the highest or the lowest and
  another row of the table holds a higher or lower one in that column
  (:func:`~pytest_provenai.attribution.rows.superlative_conflict`), or compares two things
  one way that the source's amounts of them compare the other ("The glory hole runs
  hotter than the furnace" against "The furnace runs at 1,150 °C; the glory hole at about
  1,050 °C"; :func:`~pytest_provenai.attribution.rows.comparative_conflict`).

A neutral decision is lexically rescued (supported) only without a conflict, a missing value
or an absent name: on structured evidence when the claim's row holds its values
(:func:`~pytest_provenai.attribution.protected.rescue`), and on prose when the claim repeats
its evidence sentence word for word (:func:`verbatim`). A claim whose total is a column's
exact sum over its rows (:func:`~pytest_provenai.attribution.rows.totalled`: "1710 mL
collected in all") is rescued whatever its score, its every value present and nothing in
conflict: an exact sum is the rows' own statement of it.

Pure Python.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from pytest_provenai.attribution.polarity import Polarity, negates, polarity
from pytest_provenai.attribution.protected import (
    STOPWORDS,
    ValueCheck,
    check_values,
    claim_values,
    content_terms,
    overlap,
    rescue,
)
from pytest_provenai.attribution.rows import (
    RowCheck,
    capacity_state,
    comparative_conflict,
    counted,
    counts_rows,
    cut_values,
    derived,
    field,
    field_conflict,
    field_parts,
    line_other_value,
    listed_count,
    log_other_line,
    name_field_conflict,
    name_terms,
    prose_other_sentence,
    range_ends,
    rate_conflict,
    records,
    row_check,
    said_fields,
    sentence_parts,
    stem,
    stem_overlap,
    superlative_conflict,
    totalled,
)
from pytest_provenai.attribution.values import Value, match_values, worked_out

__all__ = [
    "CONFLICT_REASONS",
    "NEGATION_OVERLAP",
    "VERBATIM_COVER",
    "VERBATIM_WORDS",
    "SupportSignals",
    "names",
    "support_signals",
    "verbatim",
]

CONFLICT_REASONS = (
    "value_from_other_row",
    "negation_conflict",
    "antonym_conflict",
    "field_conflict",
    "superlative_conflict",
)
FIELD_COVER = 0.5
"""Least share of a one-value claim's words (its value cut) that the names of the fields it
names must say for the field's value to bear the claim out (:func:`_named_field_holds`)."""
NEGATION_OVERLAP = 0.6
"""A negation mismatch is a conflict only when the claim and its unit share this share of
the claim's content terms, stemmed (the same predicate: "does not need to watch the rooms"
against "watches every room"); below, it is a calibrator feature only."""


@dataclass(frozen=True)
class SupportSignals:
    values: ValueCheck
    values_all: ValueCheck
    row: RowCheck
    polarity: Polarity
    unit: str
    conflict: str | None
    rescue_ok: bool
    names_missing: tuple[str, ...] = ()
    #: the claim repeats its evidence sentence word for word (:func:`verbatim`): a quotation
    #: is rescued whatever its score
    quoted: bool = False
    #: a value of the claim is a column's exact sum over its rows (:func:`.rows.totalled`),
    #: its every value present and nothing in conflict: rescued whatever its score
    summed: bool = False
    #: two values or more, every one read and present in the claim's row or record (never
    #: prose), no name the source lacks and nothing in conflict: accepted a wider margin
    #: under the threshold
    #: (:data:`~pytest_provenai.attribution.verdict.VALUES_MARGIN`)
    valued: bool = False


#: A name: a capitalised word that opens no sentence (the full stop of an initial, a capital
#: standing alone, ends none: "issued by M. Pascoe"; any other does: "the UK. Then …", "Room
#: 2A. Heating …", "U.S. Prices …"), a possessive name opening the claim, or an identifier.
_NAME = re.compile(
    r"(?<![!?]\s)(?<![^A-Z]\.\s)(?<![\w.][A-Z]\.\s)(?<!^)\b[A-Z][\w’'-]*[A-Za-z0-9]"
    r"|^[A-Z][\w-]*(?=['’]s\b)|\b[A-Za-z]*\d[\w./-]*[A-Za-z][\w-]*"
)


VERBATIM_WORDS = 6
"""Least words of a claim that repeats its evidence sentence verbatim (:func:`verbatim`)."""
VERBATIM_COVER = 0.6
"""Least share of the sentence's words the repeated run must cover."""
_TOKEN = re.compile(r"[^\W_]+")
_PRONOUNS = frozenset("it he she they".split())
_NEGATORS = frozenset("not no never neither nor none without cannot nobody nothing".split())


def _tokens(text: str) -> list[str]:
    return [t.casefold() for t in _TOKEN.findall(text)]


def verbatim(content: str, sentence: str, source_text: str) -> bool:
    """Whether the claim repeats its evidence ``sentence`` word for word (punctuation,
    quote marks and case aside): a run of at least :data:`VERBATIM_WORDS` words covering at
    least :data:`VERBATIM_COVER` of the sentence, with no negating word in the rest of the
    sentence — or the sentence with its pronoun subject ("It saw action …") replaced by a
    name of at most six words that the source states ("No. 2 Squadron RAAF saw action …").
    Such a claim is a quotation of its source: the calibrated score, fitted on paraphrases
    and on edited copies of sentences, may still put it under the threshold (issue 23)."""
    claim, words = _tokens(content), _tokens(sentence)
    if len(claim) < VERBATIM_WORDS or not words:
        return False
    n = len(claim)
    for i in range(len(words) - n + 1):
        if words[i : i + n] == claim:
            rest = words[:i] + words[i + n :]
            return n >= VERBATIM_COVER * len(words) and not (set(rest) & _NEGATORS)
    tail = words[1:]
    if words[0] in _PRONOUNS and len(tail) >= VERBATIM_WORDS and n > len(tail):
        subject = claim[: n - len(tail)]
        if claim[n - len(tail) :] == tail and len(subject) <= 6:
            known = set(_tokens(source_text))
            return all(w in known for w in subject) and negates(content) == negates(sentence)
    return False


_CALENDAR = frozenset(
    """january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday
    saturday sunday mon tue tues wed thu thur thurs fri sat sun utc gmt bst cet""".split()
)


@lru_cache(maxsize=512)
def _one_record(source_text: str) -> str | None:
    """The record of a source that is one record (a ``key: value`` block, one JSON object),
    read whole for antonyms and negated fields; None for anything else. Cached: every claim
    routed to a source reads it and each of its siblings."""
    found = records(source_text)
    return found[0] if found is not None and len(found) == 1 and "\n" in found[0] else None


def sibling_values(
    content: str, values: Sequence[Value], source_text: str, siblings: Sequence[str]
) -> tuple[str, ...]:
    """Claim values a one-record source holds that the claim gives another record of the
    same tool: the claim names a sibling record (one more of the same lookup: the other bike
    of a customer's two tickets) by words or identifiers only that record has, and its values
    are the routed record's, not the named one's ("The Pip's quote came to 189.50 GBP"
    against the Pip's ticket quoting 42.00 GBP and another ticket quoting 189.50 GBP). The
    records are read as the rows of one table (:func:`.rows.row_check`)."""
    own = _one_record(source_text)
    if own is None or not values:
        return ()
    others = [r for r in map(_one_record, siblings) if r is not None]
    if not others:
        return ()
    check = row_check(content, values, "\n\n".join([own, *others]))
    if not check.structured or check.row == own or check.row.startswith(own + "\n"):
        return ()
    held = {m.value.text for m in match_values(values, own) if m.present}
    return tuple(v for v in check.other_row if v in held)


def names(content: str) -> list[str]:
    """The claim's names: capitalised words not opening the claim, and identifiers."""
    out = []
    for m in _NAME.finditer(content):
        word = m.group(0)
        for suffix in ("'s", "’s"):
            word = word.removesuffix(suffix)
        if word.casefold() not in STOPWORDS and word.casefold() not in _CALENDAR and len(word) > 1:
            out.append(word)
    return out


def _named_field_holds(content: str, values: Sequence[Value], unit: str) -> bool:
    """Whether each of the claim's values (one at least, none an identifier or a name: a
    key names the row, it says nothing of it) is the value of a ``key: value`` field of
    ``unit`` whose name the claim says (:func:`.rows.said_fields`), not its first field, and
    whether those names say :data:`FIELD_COVER` of the claim's other words."""
    if not values or any(v.kind in ("identifier", "text") for v in values):
        return False
    # the first field is the record's key: it names the record, it says nothing of it
    # ("Car 7's renewal is in" of ``car: 7``)
    first = next((part.strip() for part in field_parts(unit) if field(part)), None)
    fields = [(line, value) for line, value in said_fields(content, unit) if line != first]
    if not fields or not all(
        any(match_values([v], value)[0].present for _, value in fields) for v in values
    ):
        return False
    # ... and the claim says little but the field: "The 11:30 departure runs every day" of
    # ``departure: 11:30`` says more than the field holds
    named = {stem(t) for line, _ in fields if (kv := field(line)) for t in name_terms(kv[0])}
    rest = {stem(t) for t in content_terms(cut_values(content, values))}
    return len(rest & named) >= FIELD_COVER * len(rest)


def _dated_part(values: Sequence[Value], source_text: str) -> tuple[str, str] | None:
    """The one sentence of ``source_text`` (or part between semicolons) holding every date
    and time the claim gives, with its line (a calendar's "Sat 17 May  CLOSED - hall booked"
    for "open on the morning of 17 May"; "Saturday, 10:00 to 16:00." of a line that goes on
    "Closed Sunday."): what the claim speaks of; None where the claim gives none or not one
    such part holds them."""
    dated = [v for v in values if v.kind in ("date", "datetime", "time")]
    if not dated:
        return None
    found = [
        (part, line)
        for line in source_text.split("\n")
        for part in sentence_parts(line)
        if all(m.present for m in match_values(dated, part))
    ]
    return found[0] if len(found) == 1 else None


def _email(text: str) -> bool:
    """Whether ``text`` opens with an email's header lines (``From:`` and ``Subject:``)."""
    head = text.split("\n\n", 1)[0]
    keys = {kv[0].strip().casefold() for kv in map(field, head.split("\n")) if kv}
    return {"from", "subject"} <= keys


def _prose_record(record: str) -> bool:
    """Whether a record holds no ``key: value`` field and six words or more: prose."""
    return not any(field(line) for line in record.split("\n")) and len(content_terms(record)) >= 6


def _without(check: ValueCheck, counts: Sequence[str]) -> ValueCheck:
    """``check`` with the counts the rows bear out present (:func:`.rows.counted`): "two of
    the four" is counted from rows, never found as a cell's value."""
    if not counts:
        return check
    return replace(
        check,
        missing=tuple(v for v in check.missing if v not in counts),
        conflicting=tuple(v for v in check.conflicting if v not in counts),
    )


def support_signals(
    content: str,
    premise_chunks: Sequence[str],
    source_text: str,
    best_chunk: str,
    all_texts: Sequence[str],
    *,
    structured: bool,
    siblings: Sequence[str] = (),
    asked: str = "",
) -> SupportSignals:
    """The signals of one claim's ``content`` (attribution phrase stripped). ``siblings``:
    the other outputs of the routed source's tool (:func:`sibling_values`); ``asked``: the
    routed call's arguments (an identifier asked for is present in a structured output).
    ``premise_chunks``: the chunks of the routed source chosen as the claim's premise, in
    order (``pipeline.chunks``: sentences of prose, records of a table)."""
    if isinstance(premise_chunks, str):  # a text is a sequence of characters, not of chunks
        raise TypeError("support_signals: premise_chunks is a list of chunks, not one text")
    premise = " ".join(premise_chunks)
    read = claim_values(content)
    # values present though no cell states them: counts the rows bear out, and identifiers
    # the call asked for
    borne = counted(content, read, source_text)
    sums = totalled(content, read, source_text) if structured else ()
    # counts of the items the claim lists ("Three of them visitors: Sea Pinks, …")
    borne += listed_count(content, read, source_text)
    # and amounts the claim works out from two others ("£920 and £690, £1,610 between them")
    borne += worked_out(read, source_text, borne)
    # and amounts one record of the output works out ("still has five places" of capacity 12,
    # booked 7; "would cost £98" of stock 7 at £14.00)
    borne += derived(content, read, source_text, borne)
    if structured and asked:
        # an identifier the call asked for is what its output is about ("CB-T04" of a query
        # ``WHERE turbine = 'CB-T04'`` whose rows never repeat it); one the output states
        # is its rows' to settle
        ids = [
            m.value
            for m in match_values([v for v in read if v.kind == "identifier"], source_text)
            if not m.present
        ]
        borne += tuple(m.value.text for m in match_values(ids, asked) if m.present)
    values = _without(check_values(content, premise), borne)
    values_all = _without(check_values(content, all_texts), borne)
    row = row_check(content, read, source_text)
    if row.structured and _email(source_text) and _prose_record(row.row):
        # the claim's record is prose (an email's body under its ``From:``/``Subject:`` lines):
        # its sentences are read as prose's are, one sentence against another
        row = RowCheck(False)
    if borne and row.structured:
        # a claim that counts rows speaks of the table: its counts, and the ends of the span
        # it counts over ("seven sessions tuesday to saturday"), are no row's values
        span = range_ends(content, read)
        row = replace(
            row,
            missing=tuple(v for v in row.missing if v not in borne),
            other_row=tuple(v for v in row.other_row if v not in borne and v not in span),
        )
    if row.structured and values.missing:
        # the premise is the chunks most like the claim, and rows alike in words may crowd
        # out the claim's own row: a value that row holds is not missing
        values = replace(
            values,
            missing=tuple(v for v in values.missing if v in row.missing),
            conflicting=tuple(v for v in values.conflicting if v in row.missing),
        )
    rated = rate_conflict(content, [v for v in read if v.text not in borne], source_text)
    if rated:
        # a rate the evidence gives per something else ("£75 an hour" against "£75 per half
        # hour") is a changed unit: missing, and of a kind the evidence states otherwise
        values = replace(
            values,
            missing=tuple(dict.fromkeys((*values.missing, *rated))),
            conflicting=tuple(dict.fromkeys((*values.conflicting, *rated))),
        )
    unit = row.row if row.structured else best_chunk
    # the opposite check reads the sentence the claim's dates pick, where they pick one (the
    # features keep the unit the calibration rows were derived with)
    dated = None if row.structured else _dated_part(read, source_text)
    polar = dated[0] if dated else unit
    pol = polarity(content, polar, fields=not counts_rows(content, read))
    if dated and pol.antonym is not None and polarity(content, dated[1]).antonym is None:
        # an opposite the sentence says but its line answers with the claim's own word ("…
        # outside the nesting season, 1 March to 31 August. Work inside that period …")
        pol = replace(pol, antonym=None)
    record = None if row.structured else _one_record(source_text)
    if record is not None and pol.antonym is None and pol.flag is None:
        # a record's fields are read whole for antonyms and negated fields ("as inactive"
        # against ``status: active``); a negation over shared words stays the chunk's
        whole = polarity(content, record, fields=not counts_rows(content, read))
        if whole.antonym is not None or whole.flag is not None:
            negation = pol.negation or whole.flag is not None
            pol = replace(pol, antonym=whole.antonym, flag=whole.flag, negation=negation)
    if not row.structured:
        from_line = (
            log_other_line(content, read, source_text)
            or sibling_values(content, read, source_text, siblings)
            or (() if structured else prose_other_sentence(content, read, premise_chunks))
            or line_other_value(content, [v for v in read if v.text not in borne], source_text)
        )
        if from_line:
            row = replace(row, other_row=from_line)
    folded_source = " ".join(f"{source_text} {asked if structured else ''}".split()).casefold()
    named = content
    for v in sorted(claim_values(content), key=lambda v: -v.span[0]):
        if v.kind not in ("identifier", "text"):
            named = named[: v.span[0]] + " " * (v.span[1] - v.span[0]) + named[v.span[1] :]
    absent = tuple(
        n
        for n in names(named)
        if n.casefold() not in folded_source and n.casefold().removesuffix("s") not in folded_source
    )
    conflict: str | None = None
    if row.conflict:
        conflict = "value_from_other_row"
    elif pol.flag is not None or (
        pol.negation and stem_overlap(content, polar) >= NEGATION_OVERLAP
    ):
        conflict = "negation_conflict"
    elif pol.antonym is not None:
        conflict = "antonym_conflict"
    elif row.swapped:
        conflict = "value_from_other_row"
    elif not row.structured and field_conflict(
        content, [v for v in read if v.text not in borne], record or source_text
    ):
        conflict = "field_conflict"
    elif not row.structured and name_field_conflict(content, absent, record or source_text):
        conflict = "field_conflict"
    elif row.structured and superlative_conflict(
        content, [v for v in read if v.text not in borne], source_text
    ):
        conflict = "superlative_conflict"
    elif comparative_conflict(content, source_text):
        conflict = "superlative_conflict"
    # what the claim says of a record's room against its capacity and bookings ("the
    # morning tower climb is sold out" of ``capacity: 12``, ``booked: 12``)
    room = capacity_state(content, row.row if row.structured else record or "")
    if room is False and conflict is None:
        conflict = "field_conflict"
    row_values_ok = not row.structured or not row.missing
    quoted = (
        not structured
        and conflict is None
        and not values.missing
        and verbatim(content, best_chunk, source_text)
    )
    rescue_ok = (
        not absent
        and row_values_ok
        and (
            quoted
            or rescue(
                values,
                overlap(content, unit if row.structured else premise),
                structured=structured,
                conflict=conflict is not None,
            )
        )
    )
    summed = bool(sums) and not absent and row_values_ok and conflict is None and not values.missing
    if summed:
        rescue_ok = True
    valued = (
        # a row or a record binds its values to one another; prose chunks do not ("Albany
        # County 157A is a highway in New York State Route" holds both names and the number)
        (row.structured or record is not None)
        and (
            len(read) >= 2
            or room is True
            # ... and a field its one value, where the claim names the field ("Bins need to
            # be out by half past six" of ``bins_out_by: 06:30``)
            or _named_field_holds(content, read, row.row if row.structured else record or "")
        )
        and not absent
        and row_values_ok
        and conflict is None
        and not values.missing
        and not values.unparsed
        # ... each under the field it names, where it names one ("arrived at 10:30 and
        # departed at 09:00" against a row that arrived at 09:00 holds both values)
        and not (
            row.structured
            and field_conflict(content, [v for v in read if v.text not in borne], row.row)
        )
    )
    return SupportSignals(
        values, values_all, row, pol, unit, conflict, rescue_ok, absent, quoted, summed, valued
    )
