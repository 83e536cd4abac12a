"""Protected literals: the dates, times, identifiers and numbers a text commits to, and
whether a set of texts supports them.

Used by the abstention audit (a hedge commits to a literal; a fabricated value is a literal
no original contains), by claim accounting (each claim's unsupported literals) and by the
exposure record (an aid-only value leaking into the answer).

Protected literals (:func:`protected_literals`), found in this order, each span taken once:

* **dates** — ISO ``2031-04-17`` (also ``2031/04/17``); ``17 April 2031``, ``17th of April,
  2031``; ``April 17, 2031``; numeric ``17/04/2031`` or ``17.04.2031`` (day/month order is
  ambiguous: both readings are kept and either may match); ``April 2031``; ``April 17``.
  Month names must be capitalised (``may`` is a verb); ``Sept.``-style abbreviations count.
  A date matches another when every field the *answer* states (year, month, day) is stated
  with the same value by the original: ``April 2031`` is supported by ``2031-04-17``, but
  ``17 April 2031`` is not supported by ``April 2031`` (the day was added).
* citation tags (``[R0]``, ``(A1)``, ``[R1, R2]``, a bare ``R3``) are markup, never literals.
* **times** — ``09:30``, ``9:30``, ``21:05:10``, ``9:30 pm`` (12-hour times are read as
  24-hour: ``9:30 pm`` = ``21:30``); compared by hour and minute.
* **identifiers** — tokens with both letters and digits, optionally joined by ``-`` ``_``
  ``/`` or ``.`` (``KX-4471``, ``A320``, ``ISO-9001``, ``COVID-19``); matched
  case-insensitively as a whole token sequence of an original (``KX-4471`` is not in
  ``KX-44710``). Ordinals (``17th``), decades
  (``1990s``) and a number glued to a unit (``73km``, ``5kg``, ``12%``) are numbers.
* **numbers** — digits with optional thousands commas and decimals (``1,200``, ``3.5``),
  compared by value (``1,200`` = ``1200``, ``3.50`` = ``3.5``). A number in an original may
  also be written in words: ``seventy-three`` in an original supports ``73`` in the answer
  (:func:`word_numbers`, 0–99 and compounds such as ``seventy three``/``seventy-three``).
  Numbers written in words in the *answer* are **not** protected literals (``one of them``,
  ``no one``), except when checking a known aid-only value (:func:`values_present`), where
  the target is known and ``seventy-three`` does leak ``73``. Words for hundreds and larger
  (``two hundred``) are not read.

Pure Python, no pytest import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = [
    "DateKey",
    "Literal",
    "LiteralIndex",
    "protected_literals",
    "values_present",
    "word_numbers",
]


_MONTHS: dict[str, int] = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
}
_MONTH_ABBR: dict[str, int] = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_MONTH_NAMES = sorted(
    [m.capitalize() for m in _MONTHS]
    + [m.upper() for m in _MONTHS]
    + [a.capitalize() + r"\.?" for a in _MONTH_ABBR],
    key=len,
    reverse=True,
)
_MONTH = "(?:" + "|".join(_MONTH_NAMES) + r")(?![a-z])"
_ORD = r"(?:st|nd|rd|th)?"

_DATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ymd", re.compile(r"(?<![\w.])(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?![\w])")),
    (
        "dmy",
        re.compile(rf"(?<![\w.])(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MONTH}),?\s+(\d{{4}})(?![\w])"),
    ),
    ("mdy", re.compile(rf"(?<![\w])({_MONTH})\s+(\d{{1,2}}){_ORD},?\s+(\d{{4}})(?![\w])")),
    ("numeric", re.compile(r"(?<![\w.])(\d{1,2})[/.](\d{1,2})[/.](\d{4})(?![\w])")),
    ("my", re.compile(rf"(?<![\w])({_MONTH}),?\s+(\d{{4}})(?![\w])")),
    ("md", re.compile(rf"(?<![\w])({_MONTH})\s+(\d{{1,2}}){_ORD}(?![\w])")),
    ("dm", re.compile(rf"(?<![\w.])(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MONTH})(?![\w])")),
)

_TIME = re.compile(
    r"(?<![\w:.])([01]?\d|2[0-3]):([0-5]\d)(?::[0-5]\d)?(?:\s*([AaPp])\.?[Mm]\.?)?(?![\w:])"
)

_UNITS = (
    "st|nd|rd|th|s|km|m|cm|mm|kg|g|mg|t|l|ml|h|hr|hrs|min|mins|ms|sec|secs|kw|kwh|mw|w|v|"
    "kv|hz|khz|mhz|ghz|mph|kph|kmh|ft|in|mi|lb|lbs|oz|gb|mb|kb|tb|bn|k|x|pc|pcs"
)
_IDENTIFIER = re.compile(r"(?<![\w])[A-Za-z0-9]+(?:[-_/.][A-Za-z0-9]+)*(?![\w])")
_NUMBER_WITH_UNIT = re.compile(
    rf"(?<![\w.])(\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:{_UNITS})(?![\w])",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d])")

_CITATION_TAG = re.compile(
    r"[\[(][ \t]*[RrAa][ \t]?\d+(?:[ \t]*[,;/&][ \t]*[RrAa]?[ \t]?\d+)*[ \t]*[\])]"
    r"|(?<![\w-])R\d{1,2}(?![\w-])"
)

_UNITS_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS_WORDS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_WORD_NUMBER = re.compile(
    r"(?<![\w-])(?:("
    + "|".join(_TENS_WORDS)
    + r")(?:[- ]("
    + "|".join(w for w in _UNITS_WORDS if _UNITS_WORDS[w] in range(1, 10))
    + r"))?|("
    + "|".join(_UNITS_WORDS)
    + r"))(?![\w-])",
    re.IGNORECASE,
)

DateKey = tuple[int | None, int | None, int | None]


@dataclass(frozen=True)
class Literal:
    """A protected literal as written (``text``, ``span`` in the searched text) and its
    comparison key: a number's normalised decimal string, an identifier's casefolded text,
    or a date's candidate ``(year, month, day)`` readings (None = not stated)."""

    kind: str  # "date" | "time" | "identifier" | "number"
    text: str
    span: tuple[int, int]
    number: str | None = None
    dates: tuple[DateKey, ...] = ()
    time: tuple[int, int] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text}


def _norm_number(text: str) -> str | None:
    try:
        d = Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None
    if d == d.to_integral_value():
        return str(int(d))
    return format(d.normalize(), "f")


def _month(name: str) -> int:
    key = name.rstrip(".").lower()
    return _MONTHS.get(key) or _MONTH_ABBR[key]


def _valid(y: int | None, m: int | None, d: int | None) -> bool:
    return (m is None or 1 <= m <= 12) and (d is None or 1 <= d <= 31)


def _date_keys(kind: str, groups: Sequence[str]) -> tuple[DateKey, ...]:
    keys: list[DateKey] = []
    if kind == "ymd":
        keys.append((int(groups[0]), int(groups[1]), int(groups[2])))
    elif kind == "dmy":
        keys.append((int(groups[2]), _month(groups[1]), int(groups[0])))
    elif kind == "mdy":
        keys.append((int(groups[2]), _month(groups[0]), int(groups[1])))
    elif kind == "numeric":
        a, b, y = int(groups[0]), int(groups[1]), int(groups[2])
        keys.extend([(y, b, a), (y, a, b)])
    elif kind == "my":
        keys.append((int(groups[1]), _month(groups[0]), None))
    elif kind == "md":
        keys.append((None, _month(groups[0]), int(groups[1])))
    elif kind == "dm":
        keys.append((None, _month(groups[1]), int(groups[0])))
    out: list[DateKey] = []
    for k in keys:
        if _valid(*k) and k not in out:
            out.append(k)
    return tuple(out)


def _free(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    return all(end <= s or start >= e for s, e in taken)


def protected_literals(text: str) -> list[Literal]:
    """Every protected literal of ``text`` (dates, times, identifiers, numbers; a span is
    taken once), in text order. See the module docstring for the forms read."""
    found: list[Literal] = []
    # Citation tags ([R0], (A1), [R1, R2], bare R3) are markup, never literals.
    taken: list[tuple[int, int]] = [(m.start(), m.end()) for m in _CITATION_TAG.finditer(text)]
    for kind, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            if not _free(taken, m.start(), m.end()):
                continue
            keys = _date_keys(kind, m.groups())
            if not keys:
                continue
            taken.append((m.start(), m.end()))
            found.append(Literal("date", m.group(0), (m.start(), m.end()), dates=keys))
    for m in _TIME.finditer(text):
        if not _free(taken, m.start(), m.end()):
            continue
        hour, minute, half = int(m.group(1)), int(m.group(2)), (m.group(3) or "").lower()
        if half and not 1 <= hour <= 12:
            continue
        hour = hour % 12 + (12 if half == "p" else 0) if half else hour
        taken.append((m.start(), m.end()))
        found.append(Literal("time", m.group(0), (m.start(), m.end()), time=(hour, minute)))
    for m in _NUMBER_WITH_UNIT.finditer(text):
        if not _free(taken, m.start(), m.end()):
            continue
        taken.append((m.start(), m.end()))
        number = _norm_number(m.group(1))
        found.append(Literal("number", m.group(0), (m.start(), m.end()), number=number))
    for m in _IDENTIFIER.finditer(text):
        token = m.group(0).rstrip(".")
        end = m.start() + len(token)
        if not _free(taken, m.start(), end):
            continue
        has_digit = any(c.isdigit() for c in token)
        has_alpha = any(c.isalpha() for c in token)
        if not (has_digit and has_alpha):
            continue
        taken.append((m.start(), end))
        found.append(Literal("identifier", token, (m.start(), end)))
    for m in _NUMBER.finditer(text):
        if not _free(taken, m.start(), m.end()):
            continue
        number = _norm_number(m.group(1))
        if number is None:
            continue
        taken.append((m.start(), m.end()))
        found.append(Literal("number", m.group(0), (m.start(), m.end()), number=number))
    found.sort(key=lambda lit: lit.span)
    return found


def word_numbers(text: str) -> list[int]:
    """Numbers written in words in ``text``: 0–99, compounds ``seventy-three`` or
    ``seventy three``. ``hundred`` and larger are not read."""
    out: list[int] = []
    for m in _WORD_NUMBER.finditer(text):
        tens, unit, single = m.groups()
        if single:
            out.append(_UNITS_WORDS[single.lower()])
        else:
            out.append(_TENS_WORDS[tens.lower()] + (_UNITS_WORDS[unit.lower()] if unit else 0))
    return out


def _contains(folded: str, needle: str) -> bool:
    """``needle`` (whitespace collapsed, casefolded) occurs in ``folded`` as a whole token
    sequence: not glued to a letter or digit on either side (``73`` is not in ``173``)."""
    needle = " ".join(needle.split()).casefold()
    if not needle:
        return False
    return re.search(r"(?<![^\W_])" + re.escape(needle) + r"(?![^\W_])", folded) is not None


class LiteralIndex:
    """What a set of texts (the originals, a question) contains, for support checks.

    Numbers are indexed by value from digits (including the parts of dates and of
    identifiers, so ``2031`` is in ``2031-04-17``) and from words; dates by their readings;
    identifiers are looked up as case-insensitive substrings of the texts.
    """

    def __init__(self, texts: Iterable[str]) -> None:
        self.texts = [t for t in texts if t]
        self._folded = [" ".join(t.split()).casefold() for t in self.texts]
        self.numbers: set[str] = set()
        self.dates: set[DateKey] = set()
        self.times: set[tuple[int, int]] = set()
        for t in self.texts:
            for lit in protected_literals(t):
                if lit.kind == "date":
                    self.dates.update(lit.dates)
                elif lit.kind == "time" and lit.time is not None:
                    self.times.add(lit.time)
                elif lit.kind == "number" and lit.number is not None:
                    self.numbers.add(lit.number)
            for m in re.finditer(r"\d+(?:\.\d+)?", t.replace(",", "")):
                n = _norm_number(m.group(0))
                if n is not None:
                    self.numbers.add(n)
            self.numbers.update(str(n) for n in word_numbers(t))

    def _date_supported(self, key: DateKey) -> bool:
        for known in self.dates:
            if all(
                want is None or (have is not None and have == want)
                for want, have in zip(key, known, strict=True)
            ):
                return True
        return False

    def supports(self, lit: Literal) -> bool:
        """True when the indexed texts contain ``lit`` (by the rules of its kind)."""
        if lit.kind == "number":
            return lit.number is not None and lit.number in self.numbers
        if lit.kind == "date":
            return any(self._date_supported(k) for k in lit.dates)
        if lit.kind == "time":
            return lit.time in self.times
        return any(_contains(t, lit.text) for t in self._folded)


def values_present(text: str, values: Sequence[str]) -> list[str]:
    """The ``values`` (e.g. a case's aid-only values) that ``text`` contains.

    A value is present when its whitespace-collapsed, casefolded form occurs in the text's
    as a whole token sequence (``73`` is not in ``173``), or when it has protected literals
    and every one of them is among the text's literals (numbers by value, with numbers in
    words in ``text`` read too; dates when the text states the value's every field the
    same; identifiers casefolded).
    """
    folded = " ".join(text.split()).casefold()
    lits = protected_literals(text)
    numbers = {lit.number for lit in lits if lit.kind == "number" and lit.number is not None}
    numbers.update(str(n) for n in word_numbers(text))
    idents = {lit.text.casefold() for lit in lits if lit.kind == "identifier"}
    text_dates = [k for lit in lits if lit.kind == "date" for k in lit.dates]
    times = {lit.time for lit in lits if lit.kind == "time"}
    present: list[str] = []
    for value in values:
        if _contains(folded, value):
            present.append(value)
            continue
        targets = protected_literals(value)
        if not targets:
            continue

        def found(t: Literal) -> bool:
            if t.kind == "number":
                return t.number in numbers
            if t.kind == "identifier":
                return t.text.casefold() in idents
            if t.kind == "time":
                return t.time in times
            return any(
                all(w == h for w, h in zip(want, have, strict=True) if w is not None)
                and all(h is not None for w, h in zip(want, have, strict=True) if w is not None)
                for want in t.dates
                for have in text_dates
            )

        if all(found(t) for t in targets):
            present.append(value)
    return present
