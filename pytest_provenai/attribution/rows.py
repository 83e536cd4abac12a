"""Structured tool outputs read row by row (issue 23): a claim's entity and its values must
co-occur in one row; a value that only another row holds is not support.

:func:`records` splits an output into its records:

* **JSON** — a list of objects (each object a record), an object holding such a list, or
  one object (one record); a record is written back as ``key: value`` lines;
* **pipe tables** — a header line and rows with the same number of ``|`` cells; each row a
  record written as ``header: cell`` lines (lines of another shape are records of their own,
  e.g. a totals line);
* **CSV** — a header line of short names and at least two rows with as many comma-separated
  fields (quotes read by :mod:`csv`), written like a pipe table's rows; a footer line of
  another shape (``(3 rows)``) is a record of its own;
* **plain-text tables ruled by dashes** — a header line over groups of dashes, one a column
  (``Item  Unit  Price`` over ``----  ----  -----``); the rows under the rule, up to a blank
  line, cut where the groups start, are written like a pipe table's rows (a note in
  brackets under them, ``(7 vehicles; …)``, ends the rows); other lines (a title, a note)
  are records of their own;
* **plain-text tables aligned by spaces** — no rule, a header of three or more names two or
  more spaces apart over rows with a word at each column's start (``NAME   ROLE  START``),
  read as a ruled table's rows;
* **numbered search results** — ``1. Title | Publisher`` with its address, date and
  snippet on indented lines: each result a record (numbered one-line paragraphs stay prose);
* **``key: value`` blocks** — records separated by a blank line, or by the first key
  coming round again;
* **a CSV under a ``key: value`` block** and a blank line — the block is a record said of
  every row (like a JSON object's own fields around its list).

Prose (anything else) gives ``None``: it is checked as a whole, as before.

:func:`row_check` finds the claim's row — the record holding most of the claim's
*distinctive* terms (terms some records have and others do not: the entity), then most of
its values; the one record holding all of three or more of its values, when the words that
picked another are only in that record's note; a name with a number the rows hold,
"Pier 1" (or a row's first field, ``car: 22``), names its row like a word — and reports
which of the claim's values that row lacks and which of those another row holds (a value
taken from another row). A clause that names another row ("…, car 7 2nd Dec") speaks of
that row for its own values only, and a value of the claim's row said in a clause that
names another row lacking it is another row's too.
Some records are said of every row: a table's caption, a JSON object's own fields around
its list of records, a ``key: value`` document's title; a totals line's value counts for a
claim that names it by its label ("1st of 6 entries" against ``entries 6``). Values the
claim lists together ("on 1 and 2 November") may each be in a row of its own, when those
rows say the same of them.
Pure Python.
"""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Any

from pytest_provenai.attribution.protected import content_terms, has_negation
from pytest_provenai.attribution.values import (
    UNIT_SUFFIXES,
    Value,
    ValueMatch,
    clock_minutes,
    magnitude,
    match_values,
    read_values,
)

__all__ = [
    "RowCheck",
    "capacity_state",
    "comparative_conflict",
    "counted",
    "counts_rows",
    "cut_values",
    "derived",
    "field",
    "field_conflict",
    "field_parts",
    "line_other_value",
    "listed_count",
    "log_other_line",
    "name_field_conflict",
    "name_terms",
    "numbered_records",
    "range_ends",
    "rate_conflict",
    "records",
    "row_check",
    "said_fields",
    "sentence_parts",
    "stem",
    "superlative_conflict",
    "tabular_records",
    "totalled",
    "without_keys",
]

_KV = re.compile(r"^\s*([^:\n|]{1,60}?)\s*:\s+(\S.*)$")


def _flatten(obj: Any, prefix: str = "") -> list[str]:
    if isinstance(obj, dict):
        out: list[str] = []
        for k, v in obj.items():
            out += _flatten(v, f"{prefix}{k}" if not prefix else f"{prefix} {k}")
        return out
    if isinstance(obj, list):
        return [line for item in obj for line in _flatten(item, prefix)]
    return [f"{prefix}: {obj}" if prefix else str(obj)]


def _json_records(text: str) -> list[str] | None:
    found = _json_parts(text)
    return None if found is None else found[0]


def _json_parts(text: str) -> tuple[list[str], bool] | None:
    """A JSON output's records, and whether the first of them is the object's own fields
    around its longest list of records (its head: ``"participant": "P-0419"`` beside its
    ``"events"``), or None for anything but JSON."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list) and v]
        lists = [v for v in lists if all(isinstance(x, dict) for x in v)]
        lengths = sorted((len(v) for v in lists), reverse=True)
        if lists and (len(lengths) == 1 or lengths[0] > lengths[1]):
            # the longest list of objects is the table ("people" beside two "media" of a
            # family-tree export): its objects are rows, the object's other fields the head;
            # lists of one length ("readings" and "thresholds") are no one table
            rows_of = next(v for v in lists if len(v) == lengths[0])
            head = {k: v for k, v in data.items() if v is not rows_of}
            rows = ["\n".join(_flatten(x)) for x in rows_of]
            return (["\n".join(_flatten(head)), *rows], True) if head else (rows, False)
        return ["\n".join(_flatten(data))], False
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        return ["\n".join(_flatten(x)) for x in data], False
    return None


def _table_records(lines: list[str]) -> list[str] | None:
    piped = [ln for ln in lines if ln.count("|") >= 1]
    if len(piped) < 2:
        return None
    header: list[str] | None = None
    header_line = ""
    out: list[str] = []
    rows_under = 0
    tabled = False
    for ln in lines:
        if not ln.strip():
            continue
        if "|" not in ln and re.fullmatch(r"[ \t]*[-=+:]{3,}[-=+: \t]*", ln):
            continue  # a rule line ("+------+----+", "----+----", "----------")
        if "|" not in ln:
            # a header and its rows stand together: a piped line with no row under it
            # before other lines heads nothing (search results' "Title | Publisher")
            if header is not None and not rows_under:
                out.append(header_line)
                header, header_line = None, ""
            out.append(ln.strip())
            continue
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
            continue  # markdown rule line
        if (
            header is not None
            and len(cells) + 1 == len(header)
            and ln.rstrip().endswith("|")
            and not header_line.endswith("|")
        ):
            cells.append("")  # "2031-06-05 | Thu | black | HES-7 |": the last cell is empty
        if header is None or len(cells) != len(header):
            if header is not None and not rows_under:
                out.append(header_line)  # a piped line with no rows under it is a record
            header, header_line, rows_under = cells, ln.strip(), 0
            continue
        rows_under += 1
        tabled = True
        out.append("\n".join(f"{h}: {c}" for h, c in zip(header, cells, strict=True)))
    if header is not None and not rows_under:
        out.append(header_line)  # "entries 6 | finishers 5" after the rows
    return out if len(out) >= 2 and tabled else None


#: The rule under a plain-text table's header: groups of dashes, one a column.
_RULE = re.compile(r"[ \t]*-{3,}(?:[ \t]+-{3,})+[ \t]*")


def _ruled_records(lines: list[str]) -> list[str] | None:
    """A plain-text table whose header is ruled off by groups of dashes, one a column
    ("Item   Unit   Price (INR)" over "-----  ----  -----"): each row under the rule, up to
    a blank line, is a record of ``header: cell`` fields, the cells cut where the rule's
    groups start; every other line is a record of its own (a title, a note)."""
    at = next((i for i, ln in enumerate(lines) if i and _RULE.fullmatch(ln)), None)
    if at is None:
        return None
    starts = [m.start() for m in re.finditer(r"-{3,}", lines[at])]
    return _column_records(lines, at - 1, starts, at + 1)


#: A column's name in a header aligned by spaces: words one space apart ("NPLQ_EXPIRY",
#: "Room type", "Price (GBP)").
_COLUMN = re.compile(r"[A-Za-z(][\w/%#().-]*(?: [A-Za-z(][\w/%#().-]*)*")


def _aligned_records(lines: list[str]) -> list[str] | None:
    """A plain-text table with no rule, its columns aligned by spaces ("NAME   ROLE
    NPLQ_EXPIRY  START" over "Priya Lambeth   LG   2034-02-19   1400"): a header of three or
    more names two or more spaces apart, over two or more rows with a word starting at
    each name's column after a space. Read as :func:`_ruled_records` reads its rows."""
    for at, line in enumerate(lines[:-2]):
        names = list(re.finditer(r"\S+(?: \S+)*", line))
        if len(names) < 3 or not all(_COLUMN.fullmatch(m.group(0)) for m in names):
            continue
        starts = [m.start() for m in names]
        under = lines[at + 1 : at + 3]
        if all(_aligned(row, starts) for row in under):
            return _column_records(lines, at, starts, at + 1)
    return None


def _aligned(row: str, starts: list[int]) -> bool:
    """Whether a word of ``row`` starts at each of ``starts``, after a space."""
    return len(row) > starts[-1] and all(
        row[p] != " " and (p == 0 or row[p - 1] == " ") for p in starts
    )


def _column_records(lines: list[str], head: int, starts: list[int], first: int) -> list[str] | None:
    """The records of a plain-text table whose header is line ``head``, its columns starting
    at ``starts``, its rows from line ``first`` up to a blank line or a line of fewer than two
    cells: each row a record of ``header: cell`` fields; every other line a record of its
    own. None when fewer than two rows are read."""

    def cells(line: str) -> list[str]:
        cuts = [0]
        for p in starts[1:]:
            # a cell that overflows its column ("per night      complimentary", right
            # aligned): the cut moves to the gap of two spaces before the word, else after it
            if 0 < p < len(line) and line[p - 1] != " " and line[p] != " ":
                word = p
                while word > 0 and line[word - 1] != " ":
                    word -= 1
                if line[max(0, word - 2) : word] == "  ":
                    p = word
                else:
                    while p < len(line) and line[p] != " ":
                        p += 1
            cuts.append(p)
        cuts.append(max(len(line), starts[-1]) + 1)
        return [line[a:b].strip() for a, b in pairwise(cuts)]

    header = cells(lines[head])
    if not all(header):
        return None
    out = [ln.strip() for ln in lines[:head] if ln.strip()]
    rows = 0
    end = first
    while end < len(lines) and lines[end].strip():
        row = cells(lines[end])
        # a note in brackets under the rows ("(7 vehicles; plates issued by …)") is no row
        if sum(bool(c) for c in row) < 2 or re.fullmatch(r"[ \t]*\([^()]*\)[ \t]*", lines[end]):
            break
        out.append("\n".join(f"{h}: {c}" for h, c in zip(header, row, strict=True)))
        rows += 1
        end += 1
    out += [ln.strip() for ln in lines[end:] if ln.strip()]
    return out if rows >= 2 else None


_FIELD_NAME = re.compile(r"[^\W_][\w ()/%#.-]{0,39}(?<!\.)")


def _csv_records(lines: list[str]) -> list[str] | None:
    body = [ln.strip() for ln in lines if ln.strip()]
    if len(body) < 3:
        return None
    parsed = list(csv.reader(body, skipinitialspace=True))
    header = [c.strip() for c in parsed[0]]
    # field names, not a sentence cut at its commas: short, no full stop, mostly one word
    if (
        len(header) < 2
        or not all(_FIELD_NAME.fullmatch(h) and len(h.split()) <= 3 for h in header)
        or sum(len(h.split()) == 1 for h in header) * 2 < len(header)
    ):
        return None
    rows = [i for i, cells in enumerate(parsed[1:], 1) if len(cells) == len(header)]
    if len(rows) < 2 or len(body) - 1 - len(rows) > max(1, len(rows) // 5):
        return None
    out = []
    for i, cells in enumerate(parsed[1:], 1):
        if i in rows:
            out.append("\n".join(f"{h}: {c.strip()}" for h, c in zip(header, cells, strict=True)))
        else:
            out.append(body[i])
    return out


def _kv_records(lines: list[str]) -> list[str] | None:
    kv = [ln for ln in lines if _KV.match(ln)]
    if len(kv) < 2 or len(kv) < 0.6 * len([ln for ln in lines if ln.strip()]):
        return None
    out: list[list[str]] = [[]]
    seen: set[str] = set()
    first_key: str | None = None
    for ln in lines:
        if not ln.strip():
            if out[-1]:
                out.append([])
                seen = set()
            continue
        m = _KV.match(ln)
        key = m.group(1).casefold() if m else None
        if key is not None and first_key is None:
            first_key = key
        if key is not None and key == first_key and key in seen and out[-1]:
            out.append([])
            seen = set()
        if key is not None:
            seen.add(key)
        out[-1].append(ln.strip())
    blocks = ["\n".join(b) for b in out if b]
    return blocks or None


#: An item of a numbered list ("1. Title | Publisher", "2) …").
_NUMBERED = re.compile(r"^[ \t]{0,3}(\d{1,2})[.)][ \t]+\S")


def _numbered_records(lines: list[str]) -> list[str] | None:
    """Numbered search results (or any numbered list) whose items go on in indented lines —
    a title, then its address, date and snippet: each item one record. Numbered paragraphs
    of one line each (a policy's clauses) stay prose."""
    items: list[list[str]] = []
    for ln in lines:
        if not ln.strip():
            continue
        m = _NUMBERED.match(ln)
        if m is not None and int(m.group(1)) == len(items) + 1:
            items.append([ln.strip()])
        elif items and ln[:1] in " \t":
            items[-1].append(ln.strip())
        else:
            return None
    if len(items) < 2 or sum(len(item) > 1 for item in items) < 0.5 * len(items):
        return None
    return ["\n".join(item) for item in items]


def numbered_records(text: str) -> list[str] | None:
    """The items of a numbered list whose items go on in indented lines (numbered search
    results: a title, then its address, date and snippet), each one record; None for
    anything else."""
    return _numbered_records(text.split("\n"))


def records(text: str) -> list[str] | None:
    """The records of a structured output, or None for prose (see the module docstring)."""
    return _records_and_heads(text)[0]


def _records_and_heads(text: str) -> tuple[list[str] | None, set[int]]:
    """:func:`records`, and the positions of those said of every other record: a JSON
    object's own fields around its list, and the leading records of a ``key: value``
    document that hold no field (its title: "PROTOCOL CTX-4471, AMENDMENT 3 (…)")."""
    found = _json_parts(text)
    if found is not None:
        return found[0], ({0} if found[1] else set())
    lines = text.split("\n")
    table = (
        _table_records(lines)
        or _csv_records(lines)
        or _ruled_records(lines)
        or _aligned_records(lines)
    )
    if table is not None:
        return table, set()
    headed = _headed_csv(lines)
    if headed is not None:
        return headed
    numbered = _numbered_records(lines)
    if numbered is not None:
        return numbered, set()
    blocks = _kv_records(lines)
    if blocks is None:
        return None, set()
    heads: set[int] = set()
    for i, block in enumerate(blocks):
        if any(field(line) for line in block.split("\n")):
            break
        heads.add(i)
    return blocks, heads


def _headed_csv(lines: list[str]) -> tuple[list[str], set[int]] | None:
    """A CSV under a ``key: value`` block and a blank line (an animal's record, then its
    feeding log): the block is one record said of every row, the rows are records."""
    blank = next((i for i, ln in enumerate(lines) if not ln.strip()), None)
    if blank is None:
        return None
    head = [ln for ln in lines[:blank] if ln.strip()]
    rows = _csv_records(lines[blank + 1 :])
    if rows is None or not head or not all(_KV.match(ln) for ln in head):
        return None
    return ["\n".join(ln.strip() for ln in head), *rows], {0}


def tabular_records(text: str) -> list[str] | None:
    """The records of a JSON output, a pipe table or CSV (as :func:`records` writes them:
    each row's cells under their headers, ``header: cell`` lines), or None for anything else —
    ``key: value`` blocks and prose, whose lines already name what they hold."""
    found = _json_records(text)
    if found is not None:
        return found
    lines = text.split("\n")
    return _table_records(lines) or _csv_records(lines)


@dataclass(frozen=True)
class RowCheck:
    """The claim's row in a structured source: ``structured`` (the source has ≥ 2
    records), ``row`` (the record's text), ``missing`` (claim values the row lacks),
    ``other_row`` (those of them another record holds: a value from another row),
    ``swapped`` (cells of another record whose words the claim says of its own:
    :func:`_swapped_cells`)."""

    structured: bool
    row: str = ""
    missing: tuple[str, ...] = ()
    other_row: tuple[str, ...] = ()
    swapped: tuple[str, ...] = ()

    @property
    def conflict(self) -> bool:
        return bool(self.other_row)


def _count_word(v: Value) -> bool:
    """A small count in words ("two of the four"): counts rows, never a cell's value."""
    return v.kind == "number" and not v.text[:1].isdigit() and float(v.key) < 13


def _counts_field(content: str, v: Value, row: str) -> bool:
    """Whether a count in words is a cell's value: the word after it, or the word just
    before it, names a field of the row ("three crew aboard", "seats six" of a row with a
    ``crew`` or ``seats`` column), not the rows it counts."""
    keys = {k.split()[-1] for k in _fields(row) if k.split()}
    after = content[v.span[1] :].split()[:1]
    before = content[: v.span[0]].split()[-1:]
    before = [w for w in before if not re.search(r"[,;.!?]$", w)]  # "…, six of them"
    for side in (after, before):
        word = side[0].strip(".,;:!?").casefold() if side else ""
        if word and (word in keys or word.removesuffix("s") in keys):
            return True
    return False


#: A word and the number that names it ("Pier 1", "span 2"); the number no part of a
#: longer one ("Pier 1.5", "span 2,400").
_NUMBERED_NAME = re.compile(r"\b([A-Za-z][A-Za-z-]+)[ \t]+(\d{1,3})\b(?![.,:/]\d)")
#: Words before a number that make it an amount or a date, not a name's number.
_NOT_NAMING = frozenset(
    """at on in of to by for from the and or was were is are be been has had have under
    over about after before within until till than with only just nearly around some all
    top last first next every each per""".split()
)


def _numbered_names(
    content: str, values: Sequence[Value]
) -> list[tuple[str, re.Pattern[str], tuple[int, int]]]:
    """The names with a number the claim says ("Pier 1", "Span 2", "car 22"), each as a
    term, the pattern that finds it in a row ("Element: Pier 1", a first field ``car: 22``;
    not "Pier 10") and its span in the claim."""
    numbers = {v.span for v in values if v.kind == "number"}
    out = []
    for m in _NUMBERED_NAME.finditer(content):
        word, number = m.group(1), m.group(2)
        if word.casefold() in _NOT_NAMING or m.span(2) not in numbers:
            continue
        # or a row's first field, the column that names its rows (``car: 22``; not
        # ``grade: 2`` further along: a value, no name)
        pattern = re.compile(
            rf"\b{re.escape(word)}[ \t_-]?{number}\b(?![.,:/]\d)"
            rf"|\A\s*{re.escape(word)}:[ \t]*{number}\b(?![.,:/]\d)",
            re.I,
        )
        out.append((f"{word.casefold()} {number}", pattern, m.span()))
    return out


def row_check(content: str, values: Sequence[Value], source_text: str) -> RowCheck:
    """Check a claim against the rows of its routed source (see the module docstring).

    A table's one-line records (a totals line such as ``rows: 3; total honey_kg: 44.0``) are
    about the whole table, not a row: the claim's row is one of the data rows, and where the
    claim names no row's entity ("the orchard produced 44 kg from three hives"), the totals
    lines are read with that row. A claim that names a row ("HM-12 produced 44 kg") gets
    nothing from them — a total is then a value from another record — unless a totals line
    names that row too ("used in January: WM-4 41.5 m³; WM-9 30.2 m³"). One-line records above
    the first data row (a caption: "Spring Series 2033 - Race 5 - Sun 2033-04-27") are read
    with every row."""
    rows, heads = _records_and_heads(source_text)
    if rows is None or len(rows) - len(heads) < 2:
        return RowCheck(False)
    data = [i for i, r in enumerate(rows) if "\n" in r.strip() and i not in heads]
    table_level = (
        [i for i in range(len(rows)) if i not in data and i not in heads] if len(data) >= 2 else []
    )
    candidates = data if table_level else [i for i in range(len(rows)) if i not in heads]
    # the entity is named by words and identifiers, never by the values under check
    # (a value no library reads, "59:40", is a value too; a word kept as text is a name)
    named = cut_values(
        content,
        [
            v
            for v in values
            if v.kind != "identifier" and (v.kind != "text" or any(c.isdigit() for c in v.text))
        ],
    )
    terms = set(content_terms(named))
    row_terms = [set(content_terms(r)) for r in rows]
    # a name with a number ("Pier 1", "span 2"): the pair names the rows that hold it, so
    # "Pier 1 was assessed at severity 4" is the Pier 1 row's claim, not the row holding 4
    pairs: list[tuple[str, tuple[int, int]]] = []
    for pair, pattern, span in _numbered_names(content, values):
        holders = [i for i, r in enumerate(rows) if pattern.search(r)]
        if holders:
            terms.add(pair)
            pairs.append((pair, span))
            for i in holders:
                row_terms[i].add(pair)
    cand_terms = [row_terms[i] for i in candidates]
    common = set.intersection(*cand_terms) if cand_terms else set()
    distinctive = {t for t in terms if any(t in rt for rt in cand_terms)} - common
    # one-line records above the first data row are its caption ("Race 5 - Sun 2033-04-27"):
    # they are said of every row
    caption = "".join(f"\n{rows[i]}" for i in sorted(heads))
    caption += "".join(f"\n{rows[i]}" for i in table_level if data and i < min(data))
    matches = [
        match_values(values, r + (caption if i in candidates else ""), missing_quantity_unit=True)
        for i, r in enumerate(rows)
    ]

    # an identifier the claim says names its row before any word does ("the accounts for
    # Kellaby Parva, DRO/PAR/22/4, cover 1702 to 1811": the DRO/PAR/22/4 row, not the
    # collection's row that the place name picks)
    ids = [k for k, v in enumerate(values) if v.kind == "identifier"]

    def id_hits(i: int) -> int:
        return sum(matches[i][k].present for k in ids)

    def rank(i: int) -> tuple[int, int, int, int]:
        # rows alike in how many words they share are told apart by the column holding them:
        # the leftmost names the row ("The rugby group is booked for a full day": the row
        # whose ``group`` says Rugby, not the one whose ``package`` says Full day)
        return (
            len(distinctive & row_terms[i]),
            sum(m.present for m in matches[i]),
            -_first_column(distinctive & row_terms[i], rows[i]),
            -i,
        )

    by_id = [i for i in candidates if id_hits(i)]
    named_by_id = len(by_id) == 1  # an identifier of one row only ("room R7" is many rows')
    best = by_id[0] if named_by_id else max(candidates, key=rank)
    full = [i for i in candidates if all(m.present for m in matches[i])]
    if (
        not named_by_id
        and len({v.text for v in values}) >= 3
        and len(full) == 1
        and best != full[0]
        and not _short_cells_name(distinctive & row_terms[best], rows[best])
    ):
        # three values or more that one row holds all of name that row before words only a
        # note of another row has ("15:20: FC 1.6, pH 7.4, 31.5" is the 15:20 row, not the
        # row whose note says "FC"); a name in a short cell still names its row (the values
        # of another row said of it are what the check is for)
        best = full[0]
    row = rows[best] + caption
    entity = distinctive & row_terms[best]
    # a totals line that names the claim's row ("used in January: WM-4 41.5 m³; WM-9 30.2 m³")
    # says something of that row: the part of it (between semicolons) that names the row
    said_of = [
        part.strip()
        for i in table_level
        if data and i > min(data)
        for part in rows[i].split(";")
        if entity & content_terms(part)
    ]
    if said_of:
        row += "".join(f"\n{part}" for part in said_of)
        matches[best] = match_values(values, row, missing_quantity_unit=True)
    if not entity and not named_by_id:
        # no entity named: the claim's row is the one holding most of its values, read with
        # the table's totals lines
        totals = "".join(f"\n{rows[i]}" for i in table_level)
        in_rows = set().union(*cand_terms) if cand_terms else set()
        own = [i for i in table_level if (terms & row_terms[i]) - in_rows]
        if own:
            # a word only a totals line has ("Finishers: four" against "entries 6 |
            # finishers 5"): that line is the claim's row
            best = max(own, key=lambda i: (len((terms & row_terms[i]) - in_rows), -i))

            # ... read with the data row holding most of the claim's values ("flow on two of
            # the four nights, 41 l/h on 3 November" against "nights with flow: 2" and the
            # 3 November row)
            def said(i: int) -> int:
                return sum(m.present for m in matches[i])

            held = max(candidates, key=lambda i: (said(i), -i))
            if said(held) >= 2:  # a row the claim names by two of its values
                caption += f"\n{rows[held]}"
            line = match_values(values, rows[best] + caption, missing_quantity_unit=True)
            # a value every row holds (the year of all of them) is said of the table too
            matches[best] = [
                m
                if m.present or not all(matches[i][k].present for i in candidates)
                else ValueMatch(m.value, True, False)
                for k, m in enumerate(line)
            ]
            row = rows[best] + caption
        else:
            for i in candidates if totals else ():
                matches[i] = match_values(values, rows[i] + totals, missing_quantity_unit=True)
            best = max(candidates, key=lambda i: (sum(m.present for m in matches[i]), -i))
            row = rows[best] + totals
    absent = [k for k, m in enumerate(matches[best]) if not m.present]
    blank = cut_values(content, values, keep_offsets=True)  # clause offsets still hold
    named_too = _clause_rows(blank, values, absent, distinctive, row_terms, matches, best, pairs)
    listed = set(_listed_rows(content, values, rows, row_terms, matches, best))
    # a value whose clause names no row ("Inspections falling due in 2034: …") is said of
    # the rows the other clauses name
    unnamed = {k for k in absent if not _names_any(blank, values, k, distinctive, pairs)}
    for i in sorted(listed | named_too.keys()):
        row += f"\n{rows[i]}"
        # a row a clause names holds that clause's values only ("car 22 2nd Dec, car 7
        # 23rd Nov": car 22's row names 22, not the 23rd Nov of car 7's clause)
        absent = [
            k
            for k in absent
            if not (
                matches[i][k].present and (i in listed or k in named_too.get(i, ()) or k in unnamed)
            )
        ]
    # a value the claim's row holds, said in a clause whose name with a number names
    # another row which does not hold it ("car 22 23rd Nov, car 7 23rd Nov": car 7 is due
    # on 2 Dec)
    named_off: list[str] = []
    for k in range(len(values)):
        clause = _clause_of(blank, values, k, distinctive, pairs)
        names = clause.pairs & distinctive
        others = [i for i in range(len(rows)) if names & (row_terms[i] - row_terms[best])]
        if (
            k not in absent
            and others
            and not any((clause.words | names) & (row_terms[best] - row_terms[i]) for i in others)
            and not any(matches[i][k].present for i in others)
        ):
            # (a clause that names the claim's row too, "Ada swam 31.2 in lane 3", is the
            # row's: the other name is the value out of place)
            named_off.append(values[k].text)
    if entity:
        for i in table_level:
            for k in list(absent):
                part = _labelled(content, values[k], rows[i])
                if part is not None:
                    row += f"\n{part}"
                    absent.remove(k)
    if _CHANGE.search(content):
        # "dropped from 1.048 to 1.030" by day 3: the value it changed from is an earlier
        # row's (a table's row above the claim's), or another record's ("down to 287 from
        # 412 on admission" against a ``previous`` record)
        earlier = [i for i in range(len(rows)) if not (i in data and best in data and i > best)]
        absent = [
            k
            for k in absent
            if not (_FROM.search(values[k].lead) and any(matches[i][k].present for i in earlier))
        ]
    # a value the row's field names hold ("1:48.1/500m" against ``split_500m: 1:48.1``) is
    # said of every row by the table's header, never another row's value
    keys = " ".join(_fields(rows[best]))
    absent = [k for k in absent if not _in_field_name(values[k], keys)]
    missing = [values[k] for k in absent]
    other = [
        v.text
        for v in missing
        if (not _count_word(v) or _counts_field(content, v, rows[best]))
        and any(
            any(m.present and m.value == v for m in matches[i])
            for i in range(len(rows))
            if i != best
        )
    ]
    counting = counts_rows(content, values) or any(
        _count_word(v) and not _counts_field(content, v, rows[best]) for v in values
    )
    swapped: list[str] = []
    if distinctive & row_terms[best] and not listed and not counting:
        swapped = _swapped_cells(terms, rows, best, candidates)
    return RowCheck(
        True,
        row,
        tuple(v.text for v in missing) + tuple(named_off),
        tuple(other) + tuple(named_off),
        tuple(swapped),
    )


def _first_column(terms: set[str], row: str) -> int:
    """The position of the first field of ``row`` whose cell holds one of ``terms`` (the
    number of fields when none does)."""
    cells = list(_fields(row).values())
    return next((k for k, cell in enumerate(cells) if terms & content_terms(cell)), len(cells))


def _short_cells_name(terms: set[str], row: str) -> bool:
    """Whether ``row`` holds one of ``terms`` outside its notes (a field named for a note —
    notes, comments, remarks — whose value has more than four words): a note's words ("post
    faecal release 1618 (formed). FC >= 2.0 …") name no row; a long name ("Old Mill loop via
    Hartley Woods and the weir") and a line that is no field (a search result's title) do."""
    return bool(terms & _cell_terms(row))


def _cell_terms(row: str) -> set[str]:
    """The terms of ``row`` outside its notes (a field named for a note whose value has more
    than four words: :func:`_short_cells_name`); a note field's name is kept."""
    kept = []
    for line in row.split("\n"):
        kv = field(line)
        note = kv is not None and _NOTE_KEY.search(kv[0]) and len(kv[1].split()) > 4
        kept.append(kv[0].replace("_", " ") if kv and note else line)
    return set(content_terms("\n".join(kept)))


_NOTE_KEY = re.compile(r"note|comment|remark|memo", re.IGNORECASE)
#: The name of a field that holds a row's state.
_STATE_KEY = re.compile(r"status|state|condition|outcome|result", re.IGNORECASE)


def _in_field_name(v: Value, keys: str) -> bool:
    """Whether ``v`` is a quantity written with its unit, spaces dropped, that is a whole
    word of a field name of ``keys`` (the casefolded field names of a row, joined): "500m"
    of ``split_500m``; never a bare number or a date ("3" of ``reading_m3``)."""
    written = re.sub(r"\s+", "", v.text).casefold()
    if v.kind != "quantity" or not re.fullmatch(r"[\d.]+[a-zµ/]+", written):
        return False
    return written in re.split(r"[_\s]+", keys)


#: A claim that says a value changed, and the word before the value it changed from.
_CHANGE = re.compile(
    r"\b(?:dropped|dropping|fell|fallen|falling|rose|risen|rising|climbed|increased|decreased"
    r"|reduced|went|gone|down|up|moved|changed|improved|slipped|jumped|grew|shrank)\b",
    re.IGNORECASE,
)
_FROM = re.compile(r"\bfrom\s+(?:about\s+|around\s+|roughly\s+)?$", re.IGNORECASE)


def _fields(record: str) -> dict[str, str]:
    return {kv[0].casefold(): kv[1] for kv in map(field, record.split("\n")) if kv}


def _swapped_cells(
    terms: set[str], rows: Sequence[str], best: int, candidates: Sequence[int]
) -> list[str]:
    """Words of another row said of the claim's row: the claim names its row ("BK-7")
    and gives a field the words of another row's cell in that field ("yellow" for its queen) where
    its own row has other words and the claim says none of them. Short cells only (a
    colour, a status, a name, a treatment: four words at most), and only words the claim's
    row has nowhere; values (numbers, dates, times) are the value check's. Not for a claim
    that counts rows ("two are calm, one defensive"): it speaks of the table."""
    own = _fields(rows[best])
    own_terms = content_terms(rows[best])
    out: list[str] = []
    for i in candidates:
        if i == best:
            continue
        for key, cell in _fields(rows[i]).items():
            mine = own.get(key)
            if mine is None or len(cell.split()) > 4 or len(mine.split()) > 4:
                continue
            said = content_terms(cell) - content_terms(mine)
            if (
                said
                and content_terms(mine)
                and said <= terms
                and not said & own_terms
                and not terms & (content_terms(mine) - content_terms(cell))
                and cell not in out
            ):
                out.append(cell)
    return out


def _clause_rows(
    blank: str,
    values: Sequence[Value],
    absent: Sequence[int],
    distinctive: set[str],
    row_terms: Sequence[set[str]],
    matches: Sequence[Sequence[ValueMatch]],
    best: int,
    pairs: Sequence[tuple[str, tuple[int, int]]] = (),
) -> dict[int, set[int]]:
    """Rows that a clause of the claim names for itself, each with the positions of the
    missing values whose clause names it: "Water charge: £9.50; membership: £5." gives each
    item its amount, "MOTs: car 22 23rd Nov, car 7 2nd Dec" each car its date (``pairs``:
    the names with a number, :func:`_numbered_names`, and their spans). A missing value's
    clause (between commas and semicolons, dashes, "and", "but", "while": "SC-102 is the
    gala while SC-104 is on sale") that names another row holding the value — by words or
    identifiers that row has and the claim's row lacks ("… and Delphine Marchbank at 10:30",
    "1 on EHU-C5") — and nothing that only the claim's row has, speaks of that row; a clause
    that also names the claim's row ("Tomasz paid £24.50 through ParentPay") does not. Words
    both rows have (the clinician of two appointments) name neither. A clause with no such
    words names the row of the same entity that holds all its other values ("then -2.8°C
    by 15:45": the 15:45 reading). The row holds that
    clause's value only, not the other values the claim's row lacks (``blank``: the claim
    with its values blanked, offsets kept)."""
    out: dict[int, set[int]] = {}
    for k in absent:
        for i in _clause_names(blank, values, k, distinctive, row_terms, matches, best, pairs):
            if matches[i][k].present:
                out.setdefault(i, set()).add(k)
    return out


@dataclass(frozen=True)
class _Clause:
    """What the clause of one of a claim's values (between commas and semicolons, dashes,
    "and", "but", "while") names rows by: ``words``, its words that only some rows have;
    ``pairs``, its names with a number (:func:`_numbered_names`); ``ids``, the positions of
    the claim's other values in it that are identifiers; ``others``, those of all its other
    values."""

    words: frozenset[str]
    pairs: frozenset[str]
    ids: tuple[int, ...]
    others: tuple[int, ...] = ()


def _clause_of(
    blank: str,
    values: Sequence[Value],
    k: int,
    distinctive: set[str],
    pairs: Sequence[tuple[str, tuple[int, int]]],
) -> _Clause:
    """The clause of value ``k`` (``blank``: the claim with its values blanked, offsets
    kept)."""
    # a sign before a blanked value is the value's, no dash between clauses ("to -2.8°C")
    for v in values:
        if v.span[0] > 0 and blank[v.span[0] - 1] in "-−":
            blank = blank[: v.span[0] - 1] + " " + blank[v.span[0] :]
    start, end = _clause_bounds(blank, values[k].span, _ITEM_SPLIT)
    return _Clause(
        frozenset(content_terms(blank[start:end]) & distinctive),
        frozenset(pair for pair, (a, b) in pairs if start <= a and b <= end),
        tuple(
            j
            for j, v in enumerate(values)
            if j != k and v.kind == "identifier" and start <= v.span[0] and v.span[1] <= end
        ),
        tuple(
            j for j, v in enumerate(values) if j != k and start <= v.span[0] and v.span[1] <= end
        ),
    )


def _names_any(
    blank: str,
    values: Sequence[Value],
    k: int,
    distinctive: set[str],
    pairs: Sequence[tuple[str, tuple[int, int]]],
) -> bool:
    """Whether the clause of value ``k`` names any row: a word only some rows have, a name
    with a number or an identifier."""
    clause = _clause_of(blank, values, k, distinctive, pairs)
    return bool(clause.words or clause.pairs or clause.ids)


def _clause_names(
    blank: str,
    values: Sequence[Value],
    k: int,
    distinctive: set[str],
    row_terms: Sequence[set[str]],
    matches: Sequence[Sequence[ValueMatch]],
    best: int,
    pairs: Sequence[tuple[str, tuple[int, int]]],
) -> list[int]:
    """The rows other than ``best`` that the clause of value ``k`` names and ``best`` does
    not (see :func:`_clause_rows`; ``blank``: the claim with its values blanked)."""
    clause = _clause_of(blank, values, k, distinctive, pairs)
    own = clause.words | (clause.pairs & distinctive)
    if own or clause.ids:
        return [
            i
            for i in range(len(row_terms))
            if i != best
            and _names_over(own, clause.ids, row_terms, matches, i, best)
            and not _names_over(own, clause.ids, row_terms, matches, best, i)
        ]
    # a clause that names no row by words names the row holding every other value it says
    # where the claim's row lacks one ("IS-02 at -3.4°C at 15:30, then -2.8°C by 15:45": the
    # 15:45 row), when that row is the same entity's — it holds every word that names the
    # claim's row ("Jonas went 6:21.2, 1:52.9 at 32" with Hattie's split and rate is Jonas's
    # claim, the split another row's value)
    entity = distinctive & row_terms[best]
    return [
        i
        for i in range(len(row_terms))
        if i != best
        and clause.others
        and all(matches[i][x].present for x in clause.others)
        and not all(matches[best][x].present for x in clause.others)
        and entity
        and entity <= row_terms[i]
        # ... and no word the claim's row lacks ("Aurora Star" is not "Aurora")
        and not any(t.isalpha() for t in row_terms[i] - row_terms[best])
    ]


def _names_over(
    own: frozenset[str],
    ids: Sequence[int],
    row_terms: Sequence[set[str]],
    matches: Sequence[Sequence[ValueMatch]],
    i: int,
    j: int,
) -> bool:
    """Whether a clause (its words ``own``, the positions ``ids`` of its identifiers) names
    row ``i`` by something row ``j`` lacks."""
    return bool(own & (row_terms[i] - row_terms[j])) or any(
        matches[i][x].present and not matches[j][x].present for x in ids
    )


def _labelled(content: str, value: Value, line: str) -> str | None:
    """The part of a table's totals ``line`` (between ``|``, ``;`` and commas) that holds
    ``value`` under a word the claim writes beside it ("1st of 6 entries" against ``entries
    6 | finishers 5``), or None: a total the claim names by its label is said of the
    table, whichever row the claim is about."""
    blank = cut_values(content, [value], keep_offsets=True)
    near = (
        _WORDS_NEAR.findall(blank[: value.span[0]])[-2:]
        + _WORDS_NEAR.findall(blank[value.span[1] :])[:2]
    )
    said = {w.casefold() for w in near}
    for part in re.split(r"[|;,]", line):
        found = [v for v in read_values(part) if match_values([value], v.text)[0].present]
        if len(found) != 1:
            continue
        label = cut_values(part, found).strip()
        # the label alone: a word or two, no identifier, no other value ("entries 6", not
        # "WM-9 30.2 m³"), every word of it beside the value in the claim — and no total
        # ("total loaves: 135" is the sum over rows, not said of one)
        words = _WORDS_NEAR.findall(label)
        if (
            _LABEL.fullmatch(label)
            and words
            and {w.casefold() for w in words} <= said
            and not _TOTAL.search(label)
        ):
            return part.strip()
    return None


_WORDS_NEAR = re.compile(r"[^\W\d_]+")
_LABEL = re.compile(r"[^\W\d_]+(?:\s+[^\W\d_]+)?\s*:?\s*")


def cut_values(text: str, values: Sequence[Value], *, keep_offsets: bool = False) -> str:
    """``text`` without the spans of ``values``: each cut to one space, or blanked to spaces
    of its own width (``keep_offsets``, so that other offsets into ``text`` still hold)."""
    for v in sorted(values, key=lambda v: -v.span[0]):
        if v.span[1] <= len(text):
            gap = v.span[1] - v.span[0] if keep_offsets else 1
            text = text[: v.span[0]] + " " * gap + text[v.span[1] :]
    return text


_LIST_JOIN = re.compile(r"\s*(?:,\s*(?:and|or)?|and|or|&)\s*", re.IGNORECASE)


def _lists(content: str, values: Sequence[Value]) -> list[list[int]]:
    """The positions of the claim's values listed together: of one kind, joined by "and" /
    "or" / commas ("on 1 and 2 November", "HM-12 and HM-21")."""
    groups: list[list[int]] = []
    for k in sorted(range(len(values)), key=lambda k: values[k].span):
        last = values[groups[-1][-1]] if groups else None
        v = values[k]
        if (
            last is not None
            and v.kind == last.kind
            and _LIST_JOIN.fullmatch(content[last.span[1] : v.span[0]])
        ):
            groups[-1].append(k)
        else:
            groups.append([k])
    return [g for g in groups if len(g) > 1]


def _listed_rows(
    content: str,
    values: Sequence[Value],
    rows: Sequence[str],
    row_terms: Sequence[set[str]],
    matches: Sequence[Sequence[ValueMatch]],
    best: int,
) -> list[int]:
    """The other rows a claim that lists values is about: "there was no night flow on 1 and
    2 November" speaks of two rows. A value listed with a value of the claim's row and
    missing from it is in another row that says the same of it — it holds every other value
    and every word of the claim that the claim's row holds — or it stays missing (a value
    from another row: "LR-771 and LR-779 were approved" where only LR-771's row says
    approved)."""
    out: list[int] = []
    note_free = _cell_terms(rows[best])
    for group in _lists(content, values):
        if not any(matches[best][k].present for k in group):
            continue
        said_all = content_terms(cut_values(content, [values[k] for k in group])) & row_terms[best]
        # a word of the row's notes says nothing of a row that shares the row's state ("running"
        # of "pound above running low" is no status the other open locks must share); a
        # row with no such state must hold it ("Cancelled: BA-101, BA-205" where only
        # BA-101's remarks say cancelled)
        others = [k for k in range(len(values)) if k not in group and matches[best][k].present]
        for k in group:
            if matches[best][k].present:
                continue
            for i, row_matches in enumerate(matches):
                if (
                    i != best
                    and i not in out
                    and row_matches[k].present
                    and all(row_matches[j].present for j in others)
                    and said_all & (note_free if _shared_state(rows, best, i) else said_all)
                    <= row_terms[i]
                ):
                    out.append(i)
                    break
    return out


def _shared_state(rows: Sequence[str], best: int, i: int) -> bool:
    """Whether rows ``best`` and ``i`` hold the same word or words (no digit) in a status
    field (:data:`_STATE_KEY`), where some other row holds something else there: a state the
    two share (``status: open`` of two locks where a third is ``closed``; not ``clinic:
    cardio``, a category)."""
    a, b = _fields(rows[best]), _fields(rows[i])
    every = [_fields(r) for r in rows]
    for key, cell in a.items():
        said = cell.strip().casefold()
        if not _STATE_KEY.search(key) or not re.fullmatch(r"[^\W\d_]+(?:[ _-][^\W\d_]+)*", said):
            continue
        if b.get(key, "").strip().casefold() == said and any(
            f.get(key, "").strip().casefold() != said for f in every
        ):
            return True
    return False


_COUNT_OF = re.compile(
    r"\s+of\s+(?:(?:the|its|their|our|his|her|these|those|which|whom)\b|['’]em\b)",
    re.IGNORECASE,
)


def field(line: str) -> tuple[str, str] | None:
    """(key, value) of a ``key: value`` line (``courier required: yes``), or None."""
    m = _KV.match(line)
    return (m.group(1), m.group(2).strip()) if m else None


def stem(word: str) -> str:
    """A crude stem for matching a field's words in a claim: a plural ``s``, then ``ed`` /
    ``ing``, then a final ``e`` or doubled consonant cut, and the first six letters of the
    rest ("required" / "requirement" / "requires"; "trips" / "tripped")."""
    w = word.casefold()
    if w.endswith("s") and not w.endswith("ss") and len(w) > 4:
        w = w[:-1]
    for suffix in ("ed", "ing", "al"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and (w.endswith("e") or (w[-1] == w[-2] and w[-1] not in "aeiouls")):
        w = w[:-1]
    return w[:6]


def _stems(text: str) -> set[str]:
    """The stemmed content words of ``text`` (:func:`stem`)."""
    return {stem(w) for w in content_terms(text)}


def stem_overlap(claim: str, unit: str) -> float:
    """The share of the claim's stemmed content words (:func:`stem`) that ``unit`` holds:
    "watch the rooms" says the same predicate as "watches every room" (1.0 for a claim
    without content words)."""
    terms = _stems(claim)
    return len(terms & _stems(unit)) / len(terms) if terms else 1.0


_HYPHENED = re.compile(r"\b[^\W\d_]+-[^\W\d_]+\b")


def said_fields(
    claim: str, unit: str, *, shortest: int = 1, empty: bool = False
) -> Iterator[tuple[str, str]]:
    """(the line as written, its value) of each ``key: value`` field of ``unit``
    (:func:`field`) whose name the claim says: every content word of the name of at least
    ``shortest`` letters, by :func:`stem`; a word of three or four letters may be the
    abbreviation of a longer word of the claim (``cas_care_expiry`` of "casualty care
    expiry"); a unit ending the name (:data:`UNIT_SUFFIXES`) need not be said.
    ``empty``: fields with no value (``expiry:``) too, their value ``""``."""
    words = content_terms(claim)
    # a hyphened word says the field it spells run together ("hook-up" of ``hookup``)
    words |= {m.group(0).replace("-", "") for m in _HYPHENED.finditer(claim.casefold())}
    said = {stem(t) for t in words}

    def spoken(t: str) -> bool:
        return stem(t) in said or (
            3 <= len(t) <= 4 and any(len(w) > len(t) and w.startswith(t) for w in words)
        )

    for part in field_parts(unit):
        kv = field(part)
        if kv is None and empty:
            bare = _EMPTY_FIELD.match(part)
            kv = (bare.group(1), "") if bare else None
        if kv is None:
            continue
        terms = {
            t
            for t in name_terms(kv[0])
            if len(t) >= shortest and not any(ch.isdigit() for ch in t)  # "trips_24h"
        }
        # a unit that ends the name need not be said ("True heading 214°" names
        # ``true_heading_deg``), where other words name the field
        last = re.findall(r"[a-z]+", kv[0].casefold())[-1:]
        if last and last[0] in UNIT_SUFFIXES and terms - {last[0]}:
            terms.discard(last[0])
        if terms and all(spoken(t) for t in terms):
            yield part.strip(), kv[1].casefold()


def name_terms(key: str) -> set[str]:
    """The content words of a field's name (``cas_care_expiry``: cas, care, expiry)."""
    return content_terms(key.replace("_", " "))


#: What separates the fields of a unit: lines, or "k: v; k: v" (a JSON object as the
#: chunker writes it).
_FIELD_SPLIT = re.compile(r"[;\n]")


def field_parts(unit: str) -> list[str]:
    """The parts of ``unit`` that may each be one ``key: value`` field (:func:`field`):
    its lines, the pieces of "k: v; k: v" (a JSON object as the chunker writes it), and,
    after a line that holds two or more ``key=value`` pairs (a log's "GAME END
    result=ESCAPED time=54:11 hints=3"), each pair as ``key: value``."""
    return [piece for part in _FIELD_SPLIT.split(unit) for piece in _with_pairs(part)]


#: One ``key=value`` pair of a log line (``hints=3``, ``GM=Jonas K.`` reads ``GM: Jonas``).
_PAIR = re.compile(r"(?<![\w=./:-])([A-Za-z][\w.-]{0,30})=(\S+)")


def _with_pairs(part: str) -> list[str]:
    pairs = _PAIR.findall(part)
    if len(pairs) < 2:
        return [part]
    return [part, *(f"{key}: {value.strip(chr(34))}" for key, value in pairs)]


_EMPTY_FIELD = re.compile(r"^\s*([^:\n|]{1,60}?)\s*:\s*$")


def _sorts(v: Value) -> frozenset[str]:
    """What a value measures, for :func:`field_conflict`: a date, a time of day (a datetime
    is both), an amount of one dimension (a bare number is an amount of none), a version,
    dimensions; nothing for a name, an identifier or text."""
    if v.kind in ("date", "week", "weekday"):
        return frozenset({"date"})
    if v.kind == "datetime":
        return frozenset({"date", "time"})
    if v.kind in ("time", "time12"):
        return frozenset({"time"})
    if v.kind == "quantity":
        return frozenset({f"amount {v.key[1]}"})
    if v.kind == "number":
        return frozenset({"amount"})
    if v.kind in ("version", "dimensions"):
        return frozenset({v.kind})
    return frozenset()


#: Words before a value that bound it or make it one end of a range: not the field's value.
_BOUNDED = re.compile(
    r"\b(?:between|before|after|by|until|till|from|since|around|about|approx\w*|circa"
    r"|roughly|nearly|almost|under|over|within|to|than|least|most)\s*$",
    re.IGNORECASE,
)
#: Words that make a clause's amount one worked out from a field's by taking something off
#: ("sixty after her deposit came off", "£50 less the deposit"), not the field's own. Not
#: "net", "refund", "discount" or "after": those name fields ("Net pay was £2,200" against
#: ``net: £1,800``; "the total after VAT").
_WORKED = re.compile(
    r"\b(?:less|minus|deducted|(?:came|come|comes|coming|taken|knocked|went)\s+off)\b",
    re.IGNORECASE,
)
#: Field-name words that say only what sort of value a field holds ("date", "time"): a
#: claim that says one (or its plural: "dates", "days") names no field by it.
_SORT_WORDS = frozenset(
    w + s for w in "date time day year month number value amount".split() for s in ("", "s")
)


def _telling_words(key: str) -> set[str]:
    """The words of three letters or more of a field's name that say more than the sort of
    its value ("preferred", "groomer" of ``preferred_groomer``; none of ``date``): a claim
    that says them names the field."""
    return {t for t in name_terms(key) if len(t) >= 3 and t not in _SORT_WORDS}


#: Superlatives that say a value is the most or the least of its column.
_MOST = frozenset("highest biggest largest longest heaviest warmest hottest greatest".split())
_LEAST = frozenset("lowest smallest shortest lightest coldest coolest fewest".split())
#: Nouns of a fall, a loss or a debt: their size is a negative number's absolute value.
_SHORTFALL = re.compile(
    r"\b(?:drops?|falls?|declines?|decreases?|loss(?:es)?|deficits?|debts?|overdrafts?|"
    r"shortfalls?|deductions?|negative|cuts?|reductions?)\b",
    re.IGNORECASE,
)
_SUPERLATIVE = re.compile(
    r"(?<!second )(?<!third )(?<!2nd )(?<!3rd )\b(?P<w>"
    + "|".join(sorted(_MOST | _LEAST))
    + r"|(?:the|its)\s+(?:most|least))\b",
    re.IGNORECASE,
)


def _holds(v: Value, cell: str) -> bool:
    return match_values([v], cell)[0].present


def superlative_conflict(
    content: str, values: Sequence[Value], source_text: str
) -> tuple[str, ...]:
    """A value the claim calls the highest or the lowest ("Lowest pre-donation Hb of the
    morning was ND-1992268 at 15.0 g/dL") that another row of the table beats in the same
    column (a donor at 13.4 g/dL). The claim's one amount in the superlative's sentence is
    checked in every column of the table's data rows that holds it; rows whose cell of that
    column no parser reads are left out. Not for "second highest", nor for a claim without
    exactly one superlative or one amount."""
    found = list(_SUPERLATIVE.finditer(content))
    amounts = [v for v in values if magnitude(v) is not None and not _count_word(v)]
    if len(found) != 1 or len(amounts) != 1:
        return ()
    word = found[0].group("w").casefold().split()[-1]
    most = word in _MOST or word == "most"
    # "the largest drop, at -3.2%": a size of a fall or a debt, whatever its sign
    size = abs if _SHORTFALL.search(content) else (lambda m: m)
    v = amounts[0]
    rows = tabular_records(source_text)
    if rows is None:
        return ()
    data = [_fields(r) for r in rows if "\n" in r.strip()]
    if len(data) < 2:
        return ()
    for key in sorted({k for row in data for k, c in row.items() if _holds(v, c)}):
        cells = [read_values(row.get(key, "")) for row in data]
        sizes = [None if len(c) != 1 or (m := magnitude(c[0])) is None else size(m) for c in cells]
        known = [m for m in sizes if m is not None]
        mine = [m for m, row in zip(sizes, data, strict=True) if _holds(v, row.get(key, ""))]
        # the value may stand in several rows ("-10.6" for each sensor at 16:45): one size
        if len(known) < 2 or len(set(mine)) != 1 or mine[0] is None:
            continue
        if (max(known) > mine[0]) if most else (min(known) < mine[0]):
            return (v.text,)
    return ()


#: A comparison of two things ("The glory hole runs hotter than the furnace"): the word
#: that says which way, and what the second thing is.
_COMPARATIVE = re.compile(
    r"\b(?:(?P<up>hotter|warmer|higher|longer|bigger|larger|deeper|heavier|taller|faster"
    r"|greater|dearer|wider|older)|(?P<down>colder|cooler|lower|shorter|smaller|shallower"
    r"|lighter|slower|cheaper|narrower|younger))\s+than\s+(?P<other>[^,.;:!?]+)",
    re.IGNORECASE,
)
#: Verbs a comparison says its first thing with ("runs hotter", "went deeper"): no name.
_COMPARING_VERBS = frozenset(
    "runs run ran goes went gets got stays stayed sits sat reads measures measured burns "
    "burned looks feels".split()
)


def comparative_conflict(content: str, source_text: str) -> bool:
    """Whether the claim compares two things one way ("The glory hole runs hotter than the
    furnace") that the source's amounts of them compare the other way ("The furnace runs at
    1,150 °C; the glory hole at about 1,050 °C"): each thing is named by words of its own (the
    first's before the comparison, the second's after "than", verbs aside) in one part of the
    source (a line, a sentence or a semicolon part) holding one amount, the two amounts of one
    dimension. Equal amounts contradict the comparison too."""
    m = _COMPARATIVE.search(content)
    if m is None:
        return False
    first = content_terms(content[: m.start()]) - _COMPARING_VERBS
    second = content_terms(m.group("other")) - _COMPARING_VERBS
    first, second = first - second, second - first
    if not first or not second:
        return False
    parts = sentence_parts(source_text)

    def amount(mine: set[str], theirs: set[str]) -> Value | None:
        held = [p for p in parts if mine & content_terms(p) and not theirs & content_terms(p)]
        amounts = [
            found for p in held if (found := [v for v in read_values(p) if v.kind == "quantity"])
        ]
        # the one part naming the thing with an amount, and one amount there
        return amounts[0][0] if len(amounts) == 1 and len(amounts[0]) == 1 else None

    a, b = amount(first, second), amount(second, first)
    if a is None or b is None or a.key[1] != b.key[1]:
        return False
    size_a, size_b = magnitude(a), magnitude(b)
    assert size_a is not None and size_b is not None
    return size_a <= size_b if m.group("up") else size_a >= size_b


def _touched(clause: str, unit: str) -> list[str]:
    """The values of the fields of ``unit`` whose name shares a word with ``clause`` (by
    :func:`stem`): a field the clause may speak of ("moisture" of ``moisture_pct``)."""
    said = _stems(clause)
    fields = (field(part) for part in field_parts(unit))
    return [
        kv[1] for kv in fields if kv is not None and {stem(t) for t in name_terms(kv[0])} & said
    ]


def field_conflict(content: str, values: Sequence[Value], unit: str) -> tuple[str, ...]:
    """Claim values that the field the claim names gives otherwise: the clause of a value
    (between commas, semicolons, dashes, "and", "but") says the name of a ``key: value``
    field of ``unit`` (:func:`said_fields`: every word of three letters or more of the
    name, not only words such as "date" or "time"), that field holds a value of the same
    sort (:func:`_sorts`: a time for a time, a length for a length), and no field the
    clause speaks of holds the claim's value ("The aircraft had been requested at 14:20"
    against ``aircraft: Coastguard R936 requested 14:02`` and a log line at 14:20). The
    named field settles the value: one elsewhere in the record is not support. Not for a
    clause with two values of one sort ("301 of its 420 seats": which the name is said of
    is unsure), a bound or an end of a range ("before 06:30", "from 9 to 11"), a part of
    something ("£170 of the total") or a count in words."""
    if not values or ":" not in unit:
        return ()
    blank = cut_values(content, values, keep_offsets=True)
    out: list[str] = []
    for v in values:
        sorts = _sorts(v)
        if (
            not sorts
            or _count_word(v)
            or v.bound is not None
            or _BOUNDED.search(v.lead)
            or _COUNT_OF.match(content, v.span[1])
        ):
            continue
        start, end = _clause_bounds(blank, v.span, _ITEM_SPLIT)
        if any(w is not v and start <= w.span[0] < end and _sorts(w) & sorts for w in values):
            continue
        clause = blank[start:end]
        if _WORKED.search(clause) and any(s.startswith("amount") for s in sorts):
            continue  # an amount worked out from the field's ("sixty after her deposit came off")
        named = [
            kv[1]
            for part, _ in said_fields(clause, unit, shortest=3)
            if (kv := field(part)) is not None and _telling_words(kv[0])
        ]
        same = [c for c in named if any(_sorts(w) & sorts for w in read_values(c))]
        if same and not any(match_values([v], c)[0].present for c in _touched(clause, unit)):
            out.append(v.text)
    return tuple(out)


#: A capitalised word of a field's value: a name ("Marek", "R. Dunstable").
_PROPER = re.compile(r"\b[A-Z][a-z][\w'’-]*")
#: Capitalised values that are no names, and titles, which say nobody by themselves.
_NO_NAMES = frozenset("true false yes no none n/a unknown mr mrs ms miss mx dr prof sir".split())
#: A name of words: a capital, then lower-case letters ("Carys", "Marsh-Ashdown"; not "OK",
#: "FC", "I've" or "K-20817").
_WORD_NAME = re.compile(r"[A-Z][a-z]+(?:[-'’][A-Za-z]+)*")
#: The most words of a field value read as a name (a longer one is prose: a rule, a note),
#: and a word that makes it no name ("Nervous of dryers": "of" and "van" may join a name).
_NAME_WORDS = 6
_LOWER_WORD = re.compile(r"(?<![\w'’-])[a-z]{4,}\b")
#: An initial of a name ("R. Dunstable", "T Vosper").
_INITIAL = re.compile(r"\b([A-Z])\.?(?=\s+[A-Z])")
#: Words that may stand between a field's name and the name the claim gives it: "groomer's
#: Carys", "venue is Holloway Green Library", "Mr Pruett as my assistant", "test was with
#: Ferreira" — not "owner lives in Hayle", which says something else of the owner.
_NAME_LINKS = frozenset(
    "is was are were be been being the a an my our your his her their its as named called "
    "with by now currently still s mr mrs ms miss mx dr prof sir".split()
)
_TOKEN = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")


def _plain(text: str) -> str:
    """``text`` casefolded without accents ("Zoë" → "zoe")."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _names_the_field(content: str, name: str, key: str) -> bool:
    """Whether ``name`` stands next to the words of field name ``key`` in the claim, only
    :data:`_NAME_LINKS` and initials between them ("groomer's Carys", "Quarrie is the
    mechanic", "issued by M. Pascoe")."""
    terms = {stem(t) for t in _telling_words(key)}
    words = [w.casefold().removesuffix("'s").removesuffix("’s") for w in _TOKEN.findall(content)]
    at_name = [i for i, w in enumerate(words) if w == name.casefold()]
    at_field = [i for i, w in enumerate(words) if stem(w) in terms]
    return any(
        all(w in _NAME_LINKS or len(w) == 1 for w in words[min(a, f) + 1 : max(a, f)])
        for a in at_name
        for f in at_field
    )


def name_field_conflict(content: str, absent: Sequence[str], unit: str) -> tuple[str, ...]:
    """Names of the claim that its source lacks (``absent``) given as the value of a field
    that holds another name ("His preferred groomer's Carys" against ``preferred_groomer:
    Marek``; "Dafne Quarrie is the mechanic" against ``mechanic: Priya Lockhart``): the named
    field settles who it is, as :func:`field_conflict` does for values. The name must stand
    next to the field's words in the claim (:func:`_names_the_field`: "Juniper's owner lives
    in Hayle" gives the owner no name). Only names of words (not identifiers, "OK" or
    "I've"), fields named by a word of three letters or more that says more than a value's
    sort, and a value that reads as a name: at most six words, a capitalised one other than
    a title, none of them said by the claim (accents aside: "Zoe" is "Zoë"), no initial
    that could be the claim's name ("Talan" against "T. Vosper"), and no lower-case word of
    four letters or more ("Nervous of dryers", a note, is no name)."""
    absent = tuple(n for n in absent if _WORD_NAME.fullmatch(n))
    if not absent or ":" not in unit:
        return ()
    said = set(_TOKEN.findall(_plain(content)))
    out: list[str] = []
    for part, _ in said_fields(content, unit, shortest=3):
        kv = field(part)
        if (
            kv is None
            or not _telling_words(kv[0])
            or len(kv[1].split()) > _NAME_WORDS
            or _LOWER_WORD.search(kv[1])
        ):
            continue
        held = [w for w in _PROPER.findall(kv[1]) if w.casefold() not in _NO_NAMES]
        if not held or any(_plain(w) in said for w in held):
            continue
        initials = set(_INITIAL.findall(kv[1]))
        out += [
            n
            for n in absent
            if n[0] not in initials and n not in out and _names_the_field(content, n, kv[0])
        ]
    return tuple(out)


def without_keys(text: str) -> str:
    """``text`` with the key of each ``key: value`` line cut (``meter: FVW-88302`` →
    ``FVW-88302``): what a record says, not the names of its fields."""
    out = []
    for line in text.split("\n"):
        kv = field(line)
        out.append(kv[1] if kv else line)
    return "\n".join(out)


#: A status a claim counts by another word than its rows' cells ("we got four of them done"
#: counts the ``completed`` rows): each group's words count the rows holding any of them.
_STATUS_GROUPS = (
    frozenset("done completed complete finished".split()),
    frozenset("cancelled canceled".split()),
    frozenset("paid settled".split()),
)
_STATUS_ALIKE: dict[str, frozenset[str]] = {w: g for g in _STATUS_GROUPS for w in g}


def _rows_with(term: str, row_terms: Sequence[set[str]]) -> set[int]:
    """The rows holding ``term`` or a word of its status group (:data:`_STATUS_GROUPS`)."""
    words = _STATUS_ALIKE.get(term, frozenset((term,)))
    return {i for i, rt in enumerate(row_terms) if words & rt}


def _rows_with_forms(term: str, row_terms: Sequence[set[str]]) -> set[int]:
    """The rows holding ``term``'s singular or plural (:func:`_number_forms`)."""
    forms = _number_forms(term)
    return {i for i, rt in enumerate(row_terms) if forms & rt}


def _rows_with_stem(term: str, row_terms: Sequence[set[str]]) -> set[int]:
    """The rows holding a word of ``term``'s stem (:func:`stem`: "requests" of a log's
    ``REQUESTED`` lines)."""
    root = stem(term)
    return {i for i, rt in enumerate(row_terms) if any(stem(w) == root for w in rt)}


def _rows_holding(term: str, row_terms: Sequence[set[str]]) -> int:
    """How many rows hold ``term`` or a word of its status group (:data:`_STATUS_GROUPS`)."""
    return len(_rows_with(term, row_terms))


def _rows_holding_inflected(term: str, row_terms: Sequence[set[str]]) -> int:
    """:func:`_rows_holding`, or where no row holds the word as written, how many hold its
    singular or plural ("three on nights" counts the ``night`` rows; "news" counts no
    ``new`` row where a row says "news"). Only ever a further way for a count to be borne
    out: a count the word as written bears out, or does not, stays so."""
    return _rows_holding(term, row_terms) or _rows_holding_forms(term, row_terms)


def _rows_holding_forms(term: str, row_terms: Sequence[set[str]]) -> int:
    """How many rows hold ``term``'s singular or plural (:func:`_number_forms`)."""
    return len(_rows_with_forms(term, row_terms))


def _number_forms(term: str) -> frozenset[str]:
    """``term`` with its plural and, for a word ending in ``s`` (not "-ss", "-us", "-is":
    "class", "bonus", "analysis"), its singular."""
    forms = {term, term + "s"}
    if len(term) > 3 and term.endswith("s") and not term.endswith(("ss", "us", "is")):
        forms.add(term[:-1])
        if term.endswith("ies"):
            forms.add(term[:-3] + "y")
        elif term.endswith(("ches", "shes", "xes", "sses")):
            forms.add(term[:-2])
    return frozenset(forms)


_RANGE_JOIN = re.compile(r"\s*(?:to|through|till|until|-|–)\s*$", re.IGNORECASE)


def range_ends(content: str, values: Sequence[Value]) -> tuple[str, ...]:
    """The values that open or close a range of the claim ("tuesday to saturday", "8-12
    May"): what a claim that counts rows says of the table's span, not of one row."""
    out: list[str] = []
    for a, b in pairwise(values):
        if a.kind == b.kind and _RANGE_JOIN.fullmatch(content[a.span[1] : b.span[0]]):
            out += [a.text, b.text]
    return tuple(out)


def counts_rows(content: str, values: Sequence[Value]) -> bool:
    """Whether the claim counts records ("two of the three books have not been returned"):
    a number followed by "of the / its / …" (whether or not the rows bear the count out)."""
    return any(
        v.kind == "number" and _COUNT_OF.match(content, v.span[1]) is not None for v in values
    )


def counted(content: str, values: Sequence[Value], source_text: str) -> tuple[str, ...]:
    """The claim's counts that the rows of ``source_text`` (a table's, or a log's timestamped
    lines: :func:`log_lines`) bear out: a small whole number
    opening "N of the …" ("two of the four departures run daily", "three of its hives")
    equals the number of records that hold a word of the claim said after it which some
    records hold and others do not ("daily" in two of the four rows); the total said right
    after "of the" ("four") is borne out when it is the number of records."""
    data = _data_rows(source_text)
    events = log_lines(source_text)
    in_log = bool(events) and len(events) != len(data)
    if in_log:
        # a log the table reader does not read one row a line (no header: its first line
        # taken for one) counts its lines
        data = events
    if not data:
        return ()
    row_terms = [content_terms(r) for r in data]
    out: list[str] = []
    for v in values:
        if v.kind != "number" or not float(v.key).is_integer():
            continue
        if not 0 <= v.key <= 12 and v.key != len(data):
            continue  # a larger number counts the whole table only ("13 sessions on Mon")
        of = _COUNT_OF.match(content, v.span[1])
        if of is None:
            noun = (
                _COUNTED_NOUN.match(content, v.span[1])
                or (_HAS.search(content, 0, v.span[0]) and _CLAUSE_END.match(content, v.span[1]))
                or _heading_count(content, v, data)
                or (_OPENS.search(content, 0, v.span[0]) and _LIST_HEAD.match(content, v.span[1]))
                or (
                    _LIST_START.search(content, 0, v.span[0]) and _cell_word_after(content, v, data)
                )
                or _count_word(v)
            )
            if noun and _count_borne(content, v, values, data, whole=not in_log):
                # "2 vehicles kept by Ines Vardakis", "has three of them", "two were DNA":
                # a count in words counts rows whatever follows it (a label's number is
                # written in digits: "chair 2")
                out.append(v.text)
            continue
        total = [
            w
            for w in values
            if w.kind == "number"
            and w.key == len(data)
            and not content[of.end() : w.span[0]].strip()
        ]
        after = content[v.span[1] :]
        for w in values:  # the values said after it are not the predicate
            if w.span[0] >= v.span[1]:
                start, end = w.span[0] - v.span[1], w.span[1] - v.span[1]
                after = after[:start] + " " * (end - start) + after[end:]
        hits = [_rows_holding_inflected(t, row_terms) for t in content_terms(after)]
        if any(0 < h < len(data) and h == int(v.key) for h in hits) or (
            v.key > 0 and _flag_count(after, data) == int(v.key)
        ):
            out += [v.text, *(w.text for w in total)]
    out += [v.text for v in values if _total_borne(content, v, values, data)]
    # the checks name values by their text: a count borne out once ("Priya has three of
    # them") must not excuse the same words unborne ("and Dafne has three")
    said = Counter(w.text for w in values)
    return tuple(t for t in dict.fromkeys(out) if said[t] <= out.count(t))


#: A list a count opens ("Three of them visitors: Sea Pinks, Gannet's Luck, Blue Tamarisk")
#: after at most six words and a colon, dash or bracket; or one it closes ("L13, L14, L15,
#: L18 (4)").
_LIST_AFTER = re.compile(r"(?:\s+[\w'’-]+){0,6}?\s*(?::|—|–|\s-|\()\s*([^.;:()!?]+)")
_LIST_BEFORE = re.compile(r"(?:^|[:—–(])\s*([^.;:()!?]+?)\s*\($")
#: Joins between the items of a listed count. Not :data:`_LIST_JOIN`: that one matches the gap
#: between two values already found, so its "and"/"or" need no word boundary; here the items
#: are free text and "and" must be a word ("Sandown" is one item).
_ITEM_JOIN = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+|&\s*)?|\s+and\s+|\s+or\s+|\s*&\s*)")
_ITEM = re.compile(r"(?:[\w'’.-]+\s+){0,4}[\w'’.-]+")


def listed_count(content: str, values: Sequence[Value], source_text: str) -> tuple[str, ...]:
    """The claim's counts of the items it lists itself: "Three of them visitors: Sea Pinks,
    Gannet's Luck, Blue Tamarisk", "Running normal: L13, L14, L15, L18 (4)". A small whole
    number is borne out when the list right after it (past a colon, dash or bracket) or
    right before it (a bracketed count) has exactly that many items, each of at most five
    words, each named (a capital or a digit) and found in ``source_text``; what the items
    say is checked as the rest of the claim is."""
    folded = " ".join(source_text.split()).casefold()
    out: list[str] = []
    for v in values:
        if v.kind != "number" or not float(v.key).is_integer() or not 1 <= v.key <= 12:
            continue
        after = _LIST_AFTER.match(content, v.span[1])
        lists = [after.group(1)] if after else []
        before = _LIST_BEFORE.search(content, 0, v.span[0])
        if before and content[v.span[1] : v.span[1] + 1] == ")":
            lists.append(before.group(1))
        for listed in lists:
            items = [i.strip() for i in _ITEM_JOIN.split(listed.strip().rstrip(",")) if i.strip()]
            if len(items) == int(v.key) and all(
                _ITEM.fullmatch(i)
                and re.search(r"[A-Z\d]", i)
                and " ".join(i.split()).casefold() in folded
                for i in items
            ):
                out.append(v.text)
                break
    return tuple(out)


def _data_rows(source_text: str) -> list[str]:
    """The records of ``source_text`` with two fields or more, when there are two of them or
    more (a table's rows); none for prose or a single record."""
    data = [r for r in records(source_text) or () if "\n" in r.strip()]
    return data if len(data) >= 2 else []


def totalled(content: str, values: Sequence[Value], source_text: str) -> tuple[str, ...]:
    """The claim's totals that a column of ``source_text``'s rows sums to exactly
    (:func:`_total_borne`) and that are no small count (above twelve, or not whole): an
    exact sum is the rows' own statement of the claim, however the claim words it ("That's
    1710 mL collected in all", "Together the groups who played paid 837 euro")."""
    data = _data_rows(source_text)
    if not data:
        return ()
    out = []
    for v in values:
        if v.kind not in ("number", "quantity"):
            continue
        amount = float(v.key) if v.kind == "number" else float(v.key[2])
        if (amount > 12 or not amount.is_integer()) and _total_borne(content, v, values, data):
            out.append(v.text)
    return tuple(out)


#: A claim that says a thing is full ("sold out", "fully booked", "no places left") ...
_FULL = re.compile(
    r"\b(?:sold\s+out|fully\s+booked|booked\s+up"
    # "is full." / "full on Saturday", not "full of history"
    r"|full(?:\s+up)?(?=\s*(?:[.,;!?]|$|\s+(?:on|for|at|today|tomorrow|now|already)\b))"
    r"|no\s+(?:places|spaces|seats|spots|slots|room)\s+(?:left|remaining|free|available)"
    r"|at\s+capacity)",
    re.IGNORECASE,
)
#: ... or that it has room ("three places left", "still has space", "seats available").
_ROOM = re.compile(
    r"\b(?:(?:places?|spaces?|seats?|spots?|slots?)\s+(?:left|remaining|free|available)"
    r"|still\s+(?:has|have|got)\s+(?:[\w-]+\s+)?(?:room|space|places?|spaces?|seats?|spots?"
    r"|availability)"
    r"|has\s+(?:room|availability)|(?:spaces?|places?|seats?)\s+to\s+spare)\b",
    re.IGNORECASE,
)
_CAPACITY_KEY = re.compile(r"capacity|\bcap\b|places|spaces|seats|max|limit", re.IGNORECASE)
_TAKEN_KEY = re.compile(r"booked|sold|taken|reserved|filled|registered|enrolled", re.IGNORECASE)


def capacity_state(content: str, record: str) -> bool | None:
    """Whether a record with one capacity field and one booked field (``capacity: 12``,
    ``booked: 12``) bears out what the claim says of its room: True where the claim says it
    is full ("sold out", "fully booked", "no places left") and it is, or says it has room
    ("three places left", "still has space") and it has; False where it says the other;
    None where the claim says neither or the record has no such pair of fields."""
    fields = _fields(record)
    cap = [c for k, c in fields.items() if _CAPACITY_KEY.search(k) and c.strip().isdigit()]
    taken = [
        c
        for k, c in fields.items()
        if _TAKEN_KEY.search(k) and not _CAPACITY_KEY.search(k) and c.strip().isdigit()
    ]
    if len(cap) != 1 or len(taken) != 1:
        return None
    full = int(taken[0]) >= int(cap[0])
    says_full = _FULL.search(content) is not None
    says_room = _ROOM.search(content) is not None
    if says_full and has_negation(content):
        says_full, says_room = False, True  # "isn't sold out"
    if says_full == says_room:
        return None
    return full if says_full else not full


#: Words that make a claim's amount what is left of, or between, two amounts of one record
#: ("still has five places" of ``capacity 12 | booked 7``, "34 minutes after the call" of
#: ``time 22:47``, ``arrived 23:21``, "£145 more").
_DIFFERENCE = re.compile(
    r"\b(?:left|remain(?:s|ing)?|spare|free(?!\s+of\b)|available|still\s+(?:has|have|got)"
    r"|more|less|fewer|short|behind|ahead|rise[sn]?|rising|increase[sd]?|difference|balance"
    r"|outstanding|owe[sd]?|owing|after|later|before|earlier|longer|shorter|extra)\b",
    re.IGNORECASE,
)
#: Words that make a claim's money a price worked out ("would cost £98", "would come to
#: £165", "Commission … would be £46.50").
_PRICED = re.compile(
    r"\b(?:would|cost(?:s|ing)?|comes?\s+to|came\s+to|total(?:s|led|ling)?|altogether"
    r"|in\s+all|all\s+told|charged?|pays?|paying|commission|fee)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"\n|(?<=[.!?;])\s+")


def sentence_parts(text: str) -> list[str]:
    """The non-blank lines of ``text``, each cut at its sentences' ends and semicolons: the
    parts one value of prose is said in (a worked-out amount's operands, a compared thing's
    amount, the sentence a claim's dates pick)."""
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


def _units(source_text: str) -> list[str]:
    """The records of ``source_text`` (:func:`records`), or for prose its
    :func:`sentence_parts`: the units one worked-out amount takes both its operands from."""
    return records(source_text) or sentence_parts(source_text)


def _whole(v: Value) -> bool:
    """Whether ``v`` is a bare whole number written without a decimal point ("7", "seven";
    not a price's "14.00")."""
    return v.kind == "number" and float(v.key).is_integer() and "." not in v.text


def derived(
    content: str, values: Sequence[Value], source_text: str, known: Sequence[str] = ()
) -> tuple[str, ...]:
    """The claim's amounts that one record of ``source_text`` (or one sentence of prose)
    works out from two of its own amounts, though no output states them (issue 23):

    * what is left or between, where the claim says so (:data:`_DIFFERENCE`): a whole
      number that is one whole number of the record less another ("still has five places"
      of ``capacity 12 | booked 7``), money one money less another ("£145 more" of £410
      and £265), a stretch of time that is one time of the record after another ("34
      minutes after the call" of ``time 22:47`` and ``arrived 23:21``);
    * a price, where the claim says so (:data:`_PRICED`): money that is a number the claim
      says ("seven", "three") times money of the record ("Buying all seven Dracunculus
      would cost £98" of ``stock 7 | price £14.00``, "three cylinders would come to £165" of
      "£55 each"), or a percentage of the record times money the claim says ("Commission on
      a £465 hammer price would be £46.50" of "Commission is 10% of the hammer price").

    The record must be the claim's: it holds another of the claim's values, or a word of
    the claim that not every record holds. Only amounts the outputs do not state are
    worked out, so a changed number the outputs state elsewhere is not excused."""
    wanted = [
        v
        for v in values
        if v.kind in ("number", "quantity") and v.bound is None and v.text not in known
    ]
    if not wanted:
        return ()
    stated = {m.value.span: m.present for m in match_values(list(values), [source_text])}
    written = {
        float(w.key) if w.kind == "number" else float(w.key[2])
        for w in read_values(source_text)
        if w.kind in ("number", "quantity")
    }
    # an amount whose number the outputs write (in another unit: "3100 ml" of "3100 l") is
    # no worked-out one
    wanted = [
        v
        for v in wanted
        if not stated.get(v.span, False)
        and (float(v.key) if v.kind == "number" else float(v.key[2])) not in written
    ]
    if not wanted:
        return ()
    units = _units(source_text)
    unit_terms = [content_terms(u) for u in units]
    claim_terms = content_terms(cut_values(content, values))
    picking = {t for t in claim_terms if 0 < sum(t in ut for ut in unit_terms) < len(units)}
    if len(units) == 1:
        picking = {t for t in claim_terms if len(t) >= 4 and t in unit_terms[0]}
    out: list[str] = []
    for v in wanted:
        others = [w for w in values if w.span != v.span and stated.get(w.span, False)]
        for unit, terms in zip(units, unit_terms, strict=True):
            have = read_values(unit)
            held = match_values(others, [unit]) if others else []
            if not (picking & terms or any(m.present for m in held)):
                continue
            if _difference_borne(content, v, unit, have) or _price_borne(content, v, values, have):
                out.append(v.text)
                break
    return tuple(out)


def _difference_borne(content: str, v: Value, unit: str, have: Sequence[Value]) -> bool:
    """Whether claim amount ``v`` is one amount of ``unit`` (its values ``have``) less
    another, where the claim says it is what is left or between (:func:`derived`): whole
    numbers that are whole cells of a record's fields (``capacity: 12``, ``booked: 7``),
    times of day, or money."""
    if not _DIFFERENCE.search(content):
        return False
    if _whole(v):
        target = float(v.key)
        whole = [float(c) for c in _fields(unit).values() if re.fullmatch(r"\s*\d+\s*", c)]
        return any(a - b == target for a in whole for b in whole)
    if v.kind != "quantity":
        return False
    if v.key[1] == "[time]":
        times = [m for w in have if (m := clock_minutes(w)) is not None]
        return any(abs((b - a) * 60 - float(v.key[0])) < 1e-6 for a in times for b in times)
    if not str(v.key[1]).startswith("[currency"):
        return False
    money = [float(w.key[0]) for w in have if w.kind == "quantity" and w.key[1] == v.key[1]]
    return any(abs(a - b - float(v.key[0])) < 0.005 for a in money for b in money)


def _price_borne(content: str, v: Value, values: Sequence[Value], have: Sequence[Value]) -> bool:
    """Whether claim money ``v`` is a number the claim says times money of ``have``, or a
    percentage of ``have`` times money the claim says, where the claim says it is a price
    (:func:`derived`)."""
    if (
        v.kind != "quantity"
        or not str(v.key[1]).startswith("[currency")
        or not _PRICED.search(content)
    ):
        return False
    target = float(v.key[0])
    counts = [float(w.key) for w in values if _whole(w) and w.span != v.span]
    said = [
        float(w.key[0])
        for w in values
        if w.span != v.span and w.kind == "quantity" and w.key[1] == v.key[1]
    ]
    prices = [float(w.key[0]) for w in have if w.kind == "quantity" and w.key[1] == v.key[1]]
    shares = [float(w.key[0]) for w in have if w.kind == "quantity" and w.key[1] == "[percent]"]
    return any(abs(n * p - target) < 0.005 for n in counts for p in prices if n > 1) or any(
        abs(s * m - target) < 0.005 for s in shares for m in said
    )


#: Words that make a claim's number a total of a column ("3 trips in total", "38 hours
#: between them", "adding up the hours column").
_TOTAL = re.compile(
    r"\b(?:totals?|totalled|totaled|in\s+all|altogether|together|combined|between\s+them"
    r"|all\s+told|across\s+the\s+lot"
    # "across both", "across four batches", "bringing in £140"
    r"|across\s+(?:both|all|(?:the\s+|its\s+|their\s+)?"
    r"(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\s+[^\W\d_]+)"
    r"|bring(?:s|ing)?\s+in|brought\s+in"
    r"|add(?:s|ing|ed)?\s+up|sum(?:med)?|come\s+to|comes\s+to|came\s+to)\b",
    re.IGNORECASE,
)
_CELL_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def _total_borne(content: str, v: Value, values: Sequence[Value], data: Sequence[str]) -> bool:
    """Whether a number the claim calls a total ("3 trips in total", "Live: 38 hours between
    them") is the sum of one numeric column over the rows a word of the claim picks out (in
    some rows, not all; a yes/no column it names: "the locally produced programmes"), or,
    where no word picks any out, over all rows ("12 players across the lot") or the rows
    sharing a word-valued cell ("status: completed": "the groups who played paid 837
    euro"). A quantity's unit must be named by the column ("hours_week" for hours). Only for
    a claim that says it totals."""
    if v.kind not in ("number", "quantity") or not _TOTAL.search(content):
        return False
    target = float(v.key) if v.kind == "number" else float(v.key[2])
    stem = "" if v.kind == "number" else str(v.key[3]).casefold().rstrip("s")[:3]
    fields = [_fields(r) for r in data]
    row_terms = [content_terms(r) for r in data]
    terms = content_terms(cut_values(content, values))
    subsets: list[list[int]] = []
    for term in terms:
        picked = [i for i, rt in enumerate(row_terms) if term in rt]
        if 0 < len(picked) < len(data):
            subsets.append(picked)
    for key in fields[0]:
        # a yes/no column the claim names ("the locally produced programmes": local = yes)
        if any(t.startswith(key) for t in terms if len(key) >= 4):
            flagged = [i for i, f in enumerate(fields) if f.get(key, "").casefold() == "yes"]
            if flagged:  # "the groups" names no yes/no column ``group``
                subsets.append(flagged)
    shared = set.intersection(*(set(f) for f in fields))
    if not subsets:
        # no word picks rows out: all of them ("27 heads across the lot"), or the rows that
        # share a word-valued cell ("the groups who played paid 837 euro": ``completed``)
        subsets = [list(range(len(data))), *_category_groups(fields, shared)]
    for w in values:
        # a value of the claim that some rows hold picks them out too ("38 players booked
        # for 14 June" of the rows dated 2025-06-14)
        if w.span != v.span and w.kind in ("date", "datetime", "time", "identifier", "text"):
            picked = [i for i, r in enumerate(data) if match_values([w], [r])[0].present]
            if 0 < len(picked) < len(data):
                subsets.append(picked)
    if len(subsets) > 1:
        # every word and value that picks rows, together ("Dan Colley … on 7 October")
        subsets.append(sorted(set.intersection(*(set(rows) for rows in subsets))))
    for key in shared:
        numbers = _column_amounts(v, stem, key, [f[key] for f in fields])
        if numbers is None:
            continue
        if any(abs(sum(numbers[i] for i in rows) - target) < 1e-6 for rows in subsets if rows):
            return True
    return False


def _column_amounts(v: Value, stem: str, key: str, cells: Sequence[str]) -> list[float] | None:
    """The amounts of one column's ``cells`` that a total ``v`` may sum, or None: bare
    numbers in every cell (a quantity's unit named by the column, ``apples_kg`` for kg), or
    for a quantity, cells that write its unit themselves (``£420``; "sold £465" — a cell
    with no amount, "unsold", adds nothing) with two or more amounts."""
    plain = [c.replace(",", "").strip() for c in cells]
    if all(_CELL_NUMBER.match(c) for c in plain):
        if stem and not any(t.startswith(stem) for t in re.split(r"[_\W]+", key) if t):
            return None
        return [float(c) for c in plain]
    if v.kind != "quantity":
        return None
    out: list[float] = []
    for cell in cells:
        found = [w for w in read_values(cell) if w.kind in ("quantity", "number", "identifier")]
        if not found:
            if re.search(r"\d", cell):
                return None  # another kind of value (a date): no column of amounts
            out.append(0.0)
            continue
        if len(found) != 1 or found[0].kind != "quantity" or found[0].key[1] != v.key[1]:
            return None
        out.append(float(found[0].key[2]))
    return out if sum(1 for x in out if x) >= 2 else None


def _category_groups(fields: Sequence[dict[str, str]], keys: set[str]) -> list[list[int]]:
    """The rows that share one word-valued cell of a column, for each such cell held by two
    rows or more but not by all ("status: completed", "paid"): the groups a total may be
    said of without the claim naming the cell ("the groups who played paid 837 euro")."""
    groups: list[list[int]] = []
    for key in sorted(keys):
        cells = [f[key].strip().casefold() for f in fields]
        if any(_CELL_NUMBER.match(c.replace(",", "")) for c in cells):
            continue
        for cell in sorted(set(cells) - {""}):
            picked = [i for i, c in enumerate(cells) if c == cell]
            if 2 <= len(picked) < len(cells):
                groups.append(picked)
    return groups


#: A count said bare after a verb of having, at the end of its clause ("… and Dafne
#: Quarrie has two."): what it counts is the sentence's noun.
_HAS = re.compile(r"\b(?:has|have|had|holds?|got|gets|handles?|handled)\s+(?:just\s+|only\s+)?$")
#: A heading that opens the claim or a sentence of it, a count after its colon ("Issued: 3",
#: "Refused: 2 (DRO/PAR/14/3 at 09:12, …)").
_HEADING = re.compile(r"(?:^|[.;!?]\s+)(?P<head>[^\W\d_][\w '’-]{0,40}):\s*$")
#: Where a count opens the claim, a clause or the next item of a list ("…, 8 control n 2
#: check"), not a label's number ("berth 2 north").
_LIST_START = re.compile(r"(?:^|[,;:(]|\b(?:and|n|&|plus|with))\s*$", re.IGNORECASE)
#: Where a count opens the claim or a sentence of it; and the words and colon after a count
#: that heads the list of what it counts ("2 done: Rendle's mackerel trip and Hannaford's
#: full day").
_OPENS = re.compile(r"(?:^|[.;!?]\s+)\s*$")
_LIST_HEAD = re.compile(r"(?:\s+[^\W\d][\w'’-]*){1,3}\s*:")
_CLAUSE_END = re.compile(r"\s*(?:[.;,!?]|$|\s+(?:and|but|while)\b)")
#: A plural noun or "of them" after a count ("2 vehicles", "3 open studio sessions", "three
#: of them").
_COUNTED_NOUN = re.compile(r"\s+(?:of\s+them\b|(?:[a-z]+\s+){0,2}?[a-z]{3,}s\b)", re.IGNORECASE)
_CLAUSE_SPLIT = re.compile(r"[;,:—–]|\s+-\s+|\s+and\s+|\s+but\s+|\s+while\s+", re.IGNORECASE)


#: The items of a claim that gives each its own value: a colon stays inside ("Water
#: charge: £9.50; membership: £5").
_ITEM_SPLIT = re.compile(r"[;,—–]|\s+-\s+|\s+(?:and|but|while|whereas)\s+", re.IGNORECASE)


def _clause_bounds(
    blank: str, span: tuple[int, int], split: re.Pattern[str] = _CLAUSE_SPLIT
) -> tuple[int, int]:
    """The clause of ``blank`` (a claim with its values blanked) around ``span``: between
    commas, semicolons, colons, dashes, "and", "but" and "while" (``split``)."""
    start = max((m.end() for m in split.finditer(blank, 0, span[0])), default=0)
    end = next((m.start() for m in split.finditer(blank, span[1])), len(blank))
    return start, end


def _heading_count(content: str, v: Value, data: Sequence[str]) -> bool:
    """Whether ``v`` follows a heading's colon (:data:`_HEADING`: "Issued: 3") whose words
    name no field of the rows ("Bed: 2" of a table with a ``bed`` column is a cell)."""
    m = _HEADING.search(content, 0, v.span[0])
    if m is None:
        return False
    keys = {w for row in data[:1] for k in _fields(row) for w in re.split(r"[_\W]+", k.casefold())}
    return not content_terms(m.group("head")) & keys


def _cell_word_after(content: str, v: Value, data: Sequence[str]) -> bool:
    """Whether the word after count ``v`` is the whole value of a cell of ``data``'s rows, a
    category the count counts ("8 control n 2 check" of a ``role`` column)."""
    after = re.match(r"\s+([^\W\d][\w'’-]*)", content[v.span[1] :])
    if after is None:
        return False
    word = after.group(1).casefold()
    return any(cell.strip().casefold() == word for row in data for cell in _fields(row).values())


def _count_borne(
    content: str, v: Value, values: Sequence[Value], data: Sequence[str], *, whole: bool = True
) -> bool:
    """Whether the rows bear out a count said of a noun ("2 vehicles kept by Ines Vardakis",
    "Priya has three of them", "lot VX-2207A went out in two consignments"): a word (or,
    where no row holds it, its singular or plural or a word of its stem: "three on nights",
    "two requests" of ``REQUESTED`` lines) or an identifier of the count's clause, not
    another value, is in exactly that many rows, fewer than all of them — or the count is
    the number of rows and no word of the clause picks some rows out ("four consignments"
    of a four-row shipments table).

    A count of a log's lines (``whole`` False), a count over twelve and a count borne out
    by a word's stem only are read more strictly: the rows holding every word of the clause
    that picks some rows out must number the count ("3 late deliveries" of three DELIVERED
    lines, one of them late, is not borne out); all of a log's lines are counted only where
    the clause calls them entries, lines, events or records, with no word before that noun
    which no line holds ("4 failed entries")."""
    blank = cut_values(content, values, keep_offsets=True)
    start, end = _clause_bounds(blank, v.span)
    clause = blank[start:end]
    if start > 0 and blank[start - 1] == ":":
        # a heading before a colon says what the items after it are ("Live: 6 programmes")
        clause = blank[_clause_bounds(blank, (start - 1, start - 1))[0] : start - 1] + clause
    row_terms = [content_terms(r) for r in data]
    folded_rows = [r.casefold() for r in data]
    n = int(v.key)
    everyone = len(data)
    terms = sorted(content_terms(clause))
    written = [_rows_with(term, row_terms) for term in terms]
    forms = [_rows_with_forms(term, row_terms) for term in terms]
    stemmed = [not w and not f for w, f in zip(written, forms, strict=True)]
    held = [
        w or f or _rows_with_stem(t, row_terms)
        for t, w, f in zip(terms, written, forms, strict=True)
    ]
    ids = [
        {i for i, r in enumerate(folded_rows) if str(w.key) in r}
        for w in values
        if w.kind == "identifier" and start <= w.span[0] and w.span[1] <= end
    ]
    # the identifiers a clause lists are the items it counts, together ("Refused: 2
    # (DRO/PAR/14/3 at 09:12, DRO/PAR/14/5 at 10:33)"); its words each qualify them
    listed = [set().union(*ids)] if ids else []
    # a date of the clause picks its rows out as a word does ("two groups booked for 14
    # June" of the rows dated 2025-06-14)
    dated = [
        {i for i, r in enumerate(data) if match_values([w], [r])[0].present}
        for w in values
        if w.kind in ("date", "datetime") and start <= w.span[0] and w.span[1] <= end
    ]
    listed += dated
    picking = [h for h in held + listed if 0 < len(h) < everyone]
    # (a dated count is read strictly too: the rows of that date that the clause's other
    # words pick out — "Three jobs were completed on 7 October" counts the completed ones)
    strict = not whole or n > 12 or bool(dated)
    if strict or any(len(h) == n and s for h, s in zip(held, stemmed, strict=True)):
        if picking:
            return len(set.intersection(*picking)) == n > 0
    elif any(
        len(h) == n > 0 and (n < everyone or _OF_THE.search(content, 0, v.span[0]))
        for h in held + ids
    ):
        # (a term every row holds bears out a count of all rows only as the total a part is
        # counted of: "two of the four routes run daily", not "14 pupils in drama club")
        return True
    if n > 0 and _flag_count(clause, data) == n:
        return True
    if not whole:
        # a log's lines are events of many kinds: "four errors" of four lines is no count of
        # them, "four entries" is; "4 failed entries" is not, where no line says failed
        nouns = [
            m for m in re.finditer(r"[^\W\d_]+", clause) if m.group(0).casefold() in _EVENT_NOUNS
        ]
        if not nouns:
            return False
        before = re.findall(r"[^\W\d_]+", clause[: nouns[0].start()])[-1:]
        if before and (word := before[0].casefold()) in terms and not held[terms.index(word)]:
            return False
    # (a singular or plural only ever adds a way to bear a count out: "four concerts" of a
    # four-row tour table whose rows say "concert" once stands)
    return n == everyone and not [h for h in written + ids if 0 < len(h) < everyone]


#: The words before the total a count is of ("two of the four routes").
_OF_THE = re.compile(r"\bof\s+(?:the|its|their|our|his|her|these|those)\s+$", re.IGNORECASE)
#: What a count of all of a log's lines calls them.
_EVENT_NOUNS = frozenset("entries entry lines line events event records record".split())


def _flag_count(clause: str, data: Sequence[str]) -> int | None:
    """How many rows have ``yes`` in the yes/no column the clause names by every word of its
    key ("hold the rope technician qualification" → ``rope_tech``; "are not rope
    technicians" counts the ``no`` rows); None when the clause names no such column."""
    terms = content_terms(clause)
    fields = [_fields(r) for r in data]
    want = "no" if has_negation(clause) else "yes"
    for key in fields[0]:
        parts = [w for w in re.split(r"[_\W]+", key) if len(w) >= 3]
        if not parts or not all(any(t.startswith(w) for t in terms) for w in parts):
            continue
        cells = [f.get(key, "").strip().casefold() for f in fields]
        if set(cells) <= {"yes", "no", ""} and "yes" in cells:
            return sum(c == want for c in cells)
    return None


_HANDLE = re.compile(r"(?<![\w.-])(?:[A-Z][a-z]+|\w+(?:[._-]\w+)+)(?![\w-])")


def _handles(text: str) -> list[str]:
    """Capitalised words not opening the text, and words joined by ``.``, ``-`` or ``_``."""
    return [
        m.group(0).rstrip(".")
        for m in _HANDLE.finditer(text)
        if m.start() > 0 or not m.group(0)[0].isupper()
    ]


_STAMP = re.compile(r"\s*\[?(?:\d{4}-\d{2}-\d{2}[T ])?\d{2}:\d{2}(?::\d{2})?")


def _is_log(lines: Sequence[str]) -> bool:
    """Whether non-blank ``lines`` are a log: three or more, seven in ten of them or more
    opening with a timestamp."""
    return len(lines) >= 3 and sum(bool(_STAMP.match(ln)) for ln in lines) >= 0.7 * len(lines)


def log_lines(source_text: str) -> list[str]:
    """The timestamped lines of a log (:func:`_is_log`), each an event a claim may count
    ("Three were issued and two refused"); none for any other text."""
    lines = [ln for ln in source_text.split("\n") if ln.strip()]
    return [ln for ln in lines if _STAMP.match(ln)] if _is_log(lines) else []


def log_other_line(content: str, values: Sequence[Value], source_text: str) -> tuple[str, ...]:
    """What a claim about one line of a log takes from another line (issue 23).

    A log is three or more lines, most opening with a timestamp; lines without one (a
    header: ``cluster=east-2 date=2035-06-02``) are said of every line. A claim that gives
    one time of day which exactly one line holds is about that line: its other values and
    its handles (a capitalised word, or words joined by ``.``, ``-`` or ``_`` such as
    ``m.lindqvist`` and ``node-3``) must be in it. A value or handle that line lacks and
    another line holds is returned ("the rollback at 09:12:05Z was started by r.okafor"
    when the 09:12:05 line says m.lindqvist). A claim with no time or with two (a summary of
    several lines) is not checked here."""
    lines = [ln for ln in source_text.split("\n") if ln.strip()]
    if not _is_log(lines):
        return ()
    times = [v for v in values if v.kind in ("time", "datetime")]
    if not times:
        return _log_name_elsewhere(content, values, lines)
    if len(times) != 1:
        return ()
    # lines without a timestamp (a header: "station=HW-Jetty date=2033-04-27") are said of
    # every line
    context = "".join(f"\n{ln}" for ln in lines if not _STAMP.match(ln))
    lines = [ln for ln in lines if _STAMP.match(ln)]
    found = [match_values(values, ln + context) for ln in lines]
    k = values.index(times[0])
    holding = [i for i, m in enumerate(found) if m[k].present]
    if len(holding) != 1:
        return ()
    line = holding[0]
    # a clause that names another line by its own words ("discharged 11 apr 21:50, gate out
    # 13 apr on truck LVQ-HT-2291") speaks of that line
    blank = cut_values(content, values, keep_offsets=True)
    line_terms = [content_terms(ln) for ln in lines]

    def elsewhere(j: int) -> bool:
        span = values[j].span
        start, end = _clause_bounds(blank, span)
        if start <= times[0].span[0] < end:
            return False  # the clause of the line's own time
        own = content_terms(blank[start:end]) - line_terms[line]
        return any(
            own & line_terms[i] and found[i][j].present for i in range(len(lines)) if i != line
        )

    other: list[str] = [
        v.text
        for j, v in enumerate(values)
        if not found[line][j].present
        and not _count_word(v)
        and any(m[j].present for i, m in enumerate(found) if i != line)
        and not elsewhere(j)
    ]
    own = (lines[line] + context).casefold()
    for name in _handles(cut_values(content, values)):
        word = re.compile(rf"(?<![\w.-]){re.escape(name.casefold())}(?![\w-])")
        if not word.search(own) and any(
            word.search(ln.casefold()) for i, ln in enumerate(lines) if i != line
        ):
            other.append(name)
    return tuple(other)


def _log_name_elsewhere(content: str, values: Sequence[Value], lines: list[str]) -> tuple[str, ...]:
    """The names of a claim with no time of day that the log's line of their clause lacks
    and another line has: "D. Ambrose-Kerr was the nurse who stopped the bleed on chair 3"
    against ``bleed stopped … chair 3 nurse=M. Tiwari`` (Ambrose-Kerr is on the session's
    opening line). The clause's line is the one line holding most of its other words (two
    at least, more than any other line has)."""
    blank = cut_values(content, values, keep_offsets=True)
    line_terms = [content_terms(ln) for ln in lines]
    folded = [ln.casefold() for ln in lines]
    handle_terms = set().union(*(content_terms(h) for h in _handles(blank)))
    other: list[str] = []
    for m in _HANDLE.finditer(blank):
        name = m.group(0).rstrip(".")
        if m.start() == 0 and name[0].isupper() and "." not in name and "-" not in name:
            continue  # the first word of the claim
        word = re.compile(rf"(?<![\w.-]){re.escape(name.casefold())}(?![\w-])")
        holders = [i for i, ln in enumerate(folded) if word.search(ln)]
        if not holders:
            continue
        start, end = _clause_bounds(blank, (m.start(), m.end()))
        said = content_terms(blank[start:end]) - content_terms(name) - handle_terms
        hits = [len(said & t) for t in line_terms]
        top = max(hits, default=0)
        if top < 2 or hits.count(top) > 1 or sorted(hits)[-2] >= top - 1:
            continue
        line = hits.index(top)
        if line not in holders:
            other.append(name)
    return tuple(dict.fromkeys(other))


#: Kinds of values whose sentence must hold them (identifiers and quoted text name things).
_SENTENCE_KINDS = frozenset(("number", "quantity", "time", "time12", "date", "datetime"))
SENTENCE_COVER = 0.6
"""Least share of a value's clause's content words (those the prose has) its sentence must
hold to be its own."""
_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]*")
_CLAUSE_SHARE = 0.4
"""... and least share of all the clause's content words (a chatty paraphrase speaks of no
one sentence)."""


def _in_name(content: str, v: Value) -> bool:
    """Whether a number is part of a name: a capitalised word right before or after it
    ("2005 Major League Baseball season", "PlayStation 4", "Screen 1")."""
    if v.kind != "number":
        return False
    beside = content[: v.span[0]].split()[-1:] + content[v.span[1] :].split()[:1]
    return any(word[:1].isupper() for word in beside)


#: Kinds of values :func:`line_other_value` reads: times (with or without am/pm) and dates
#: of events, and amounts.
_LINE_KINDS = frozenset(("time", "time12", "datetime", "date", "quantity"))
LINE_COVER = 0.5
"""Least share of a claim's words (its values cut, stemmed) the line it is said of must hold
(:func:`line_other_value`) ..."""
LINE_MARGIN = 0.4
"""... and by how much more than any line that holds the claim's value."""


@lru_cache(maxsize=512)
def _read_lines(
    source_text: str,
) -> tuple[tuple[str, ...], tuple[frozenset[str], ...], tuple[tuple[Value, ...], ...]]:
    """The non-blank lines of a source, each line's stemmed words and its values: read once
    per source, not once per claim routed to it."""
    lines = tuple(ln for ln in source_text.split("\n") if ln.strip())
    return (
        lines,
        tuple(frozenset(_stems(ln)) for ln in lines),
        tuple(tuple(read_values(ln)) for ln in lines),
    )


def _line_sorts(v: Value) -> frozenset[str]:
    """:func:`_sorts`, with a clock time said without am/pm ("quarter to four") a time."""
    return frozenset({"time"}) if v.kind == "time12" else _sorts(v)


#: What a rate is per, and the words that say it ("an hour", "per half hour", "/hr", "a
#: head", "nightly", "pp", "p.a.").
_PERIODS = {
    "half hour": "half hour",
    "half-hour": "half hour",
    "30 minutes": "half hour",
    "30 mins": "half hour",
    "30 min": "half hour",
    "15 minutes": "quarter hour",
    "15 mins": "quarter hour",
    "15 min": "quarter hour",
    "quarter hour": "quarter hour",
    "quarter-hour": "quarter hour",
    "half day": "half day",
    "half-day": "half day",
    "24 hours": "day",
    "hour": "hour",
    "hr": "hour",
    "h": "hour",
    "hourly": "hour",
    "minute": "minute",
    "min": "minute",
    "day": "day",
    "daily": "day",
    "night": "night",
    "nt": "night",
    "nightly": "night",
    "week": "week",
    "wk": "week",
    "pw": "week",
    "weekly": "week",
    "month": "month",
    "calendar month": "month",
    "pcm": "month",
    "monthly": "month",
    "year": "year",
    "annum": "year",
    "p.a.": "year",
    "pa": "year",
    "annually": "year",
    "yearly": "year",
    "season": "season",
    "person": "person",
    "head": "person",
    "pp": "person",
    "participant": "person",
    "guest": "person",
    "adult": "person",
}
#: The periods said in one word ("daily", "annually"): how often something happens.
ONE_WORD_PERIODS = {w: p for w, p in _PERIODS.items() if w.endswith("ly")}
_PERIOD = "|".join(sorted((re.escape(p) for p in _PERIODS), key=len, reverse=True))
#: One rate, as it follows an amount: "an hour", "per half hour", "/hr", "a head", or a word
#: of its own ("nightly", "pcm", "p.a.").
_ONE_RATE = (
    rf"(?:(?:per|an?|each|every)\s+|/\s*)(?P<p>{_PERIOD})s?\b"
    r"|(?P<w>hourly|daily|nightly|weekly|monthly|yearly|annually|pcm|pw|pp|p\.a\.)(?!\w)"
)
#: The rates right after an amount, one or a chain ("per person per night"); a "per" of
#: something that is no period goes on with the chain ("50p per toy per week").
_ANY_RATE = _ONE_RATE.replace("(?P<p>", "(?:").replace("(?P<w>", "(?:")
_CHAIN_RATE = rf"{_ANY_RATE}|per\s+[^\W\d_]+"
_RATES_AFTER = re.compile(
    rf"\s*(?:{_ANY_RATE})(?:\s*,?\s*(?:{_CHAIN_RATE}))*"
    rf"|\s*per\s+[^\W\d_]+(?:\s*,?\s*(?:{_CHAIN_RATE}))+",
    re.IGNORECASE,
)
_RATE = re.compile(_ONE_RATE, re.IGNORECASE)
#: ... or after the one word the amount counts ("4 mites per week", "4 mites/day").
_COUNTED_RATES_AFTER = re.compile(rf"\s+[^\W\d_]+(?={_RATES_AFTER.pattern})", re.IGNORECASE)
#: A rate that heads the amount right after it, as a table's cell or a label does
#: ("Storage, per day      1.50", "per night: £80"): nothing but spaces and punctuation
#: between ("Weekly fees, payable monthly in advance: full livery £172" is no monthly £172).
_RATE_BEFORE = re.compile(rf"(?:{_ANY_RATE})[\s:=()|-]*[£$€]?\s*$", re.IGNORECASE)


def _periods(text: str) -> set[str]:
    return {_PERIODS[(m.group("p") or m.group("w")).casefold()] for m in _RATE.finditer(text)}


def _rate_of(text: str, span: tuple[int, int], inner: str) -> set[str]:
    """The periods of the rate said of the amount at ``span`` of ``text`` (``inner``: the
    amount as read, which may hold its rate: "£75 an hour"): the rates right after it, else
    one heading it."""
    own = _periods(inner)
    if own:
        return own
    after = _RATES_AFTER.match(text, span[1])
    counted = _COUNTED_RATES_AFTER.match(text, span[1])
    if after is None and counted is not None:
        after = _RATES_AFTER.match(text, counted.end())
    if after is not None:
        return _periods(after.group(0))
    before = _RATE_BEFORE.search(text, 0, span[0])
    if before is not None:
        return _periods(before.group(0))
    # a field whose name says the rate (``nightly_rate: £16``, a table's column)
    kv = field(text)
    return _periods(kv[0].replace("_", " ")) if kv is not None else set()


def rate_conflict(content: str, values: Sequence[Value], source_text: str) -> tuple[str, ...]:
    """Claim amounts given as a rate that the evidence gives per something else: every
    place the evidence states the amount, it says a rate of it, and none shares a period
    with the claim's ("£75 an hour" against "Late exit is charged at £75 per half hour";
    "1,50 EUR per hour" against "Storage after day 30, band C only, per day  1.50"). The
    rate of an amount is the one right after it ("£80 per person per night": both) or after
    the one word it counts ("4 mites per week"), else the one heading it in its line, else the
    name of its field ("nightly_rate: £16"); a table is read by lines and again a field a
    line, each cell under its column's name. A place that says no rate of the amount settles
    nothing, and a bare number with no rate is no place of an amount of money ("5." numbering
    a clause)."""
    out: list[str] = []
    readings: list[list[tuple[str, list[Value]]]] | None = None  # the evidence's values
    for v in values:
        if v.kind not in ("quantity", "number"):
            continue
        want = _rate_of(content, v.span, v.text)
        if not want:
            continue
        if readings is None:
            # read once, by lines; a table also a field a line, each cell under its
            # column's name (``nightly_rate: £16``)
            data = _data_rows(source_text)
            texts = [source_text.splitlines()]
            texts += [[ln for r in data for ln in r.split("\n")]] if data else []
            readings = [[(ln, read_values(ln)) for ln in t if re.search(r"\d", ln)] for t in texts]
        for read in readings:
            placed = [
                (w, _rate_of(ln, w.span, w.text))
                for ln, held in read
                for w in held
                if match_values([v], w.text)[0].present
            ]
            # a bare number without a rate is no place of an amount ("£5 a week" is not the
            # "5." numbering a clause)
            said = [periods for w, periods in placed if periods or w.kind == v.kind]
            if said and all(periods and not periods & want for periods in said):
                out.append(v.text)
                break
    return tuple(out)


def line_other_value(content: str, values: Sequence[Value], source_text: str) -> tuple[str, ...]:
    """Claim values taken from another line of a record or a log than the line the claim
    speaks of (issue 23): "The casualty was handed to North Fells Ambulance at the Hollin Gill
    road end at 17:46" against a call-out record whose ``17:46`` line says "Lower complete at
    gully foot" and whose ``18:37`` line says "Casualty handed over to North Fells Ambulance at
    Hollin Gill road end". A time, date or amount is returned when the lines that hold it
    share little of the words of its clause (between commas, semicolons, dashes, "and",
    "but"; values cut, stemmed), and another line holds two of them or more, at least
    :data:`LINE_COVER` of them and :data:`LINE_MARGIN` more, and states a value of the same
    sort that the claim does not say. Only for a claim's one value of its sort (a claim with
    two times speaks of two lines), a clause of two words or more, and sources that are not
    tables (their rows are :func:`row_check`'s)."""
    lines, line_stems, line_values = _read_lines(source_text)
    if len(lines) < 3:
        return ()
    blank = cut_values(content, values, keep_offsets=True)
    out: list[str] = []
    for v in values:
        sorts = _line_sorts(v)
        if v.kind not in _LINE_KINDS or any(w is not v and _line_sorts(w) & sorts for w in values):
            continue
        start, end = _clause_bounds(blank, v.span)
        words = _stems(blank[start:end])
        if len(words) < 2:
            continue
        holding = [i for i, ln in enumerate(lines) if match_values([v], ln)[0].present]
        if not holding:
            continue
        other = [
            i
            for i in range(len(lines))
            if i not in holding
            and any(
                _line_sorts(w) & sorts and not match_values([w], content)[0].present
                for w in line_values[i]
            )
        ]
        if not other:
            continue
        share = [len(words & st) / len(words) for st in line_stems]
        best = max(other, key=lambda i: share[i])
        if (
            len(words & line_stems[best]) >= 2
            and share[best] >= LINE_COVER
            and share[best] - max(share[i] for i in holding) >= LINE_MARGIN
        ):
            out.append(v.text)
    return tuple(out)


_SEMICOLON = re.compile(r";\s+")


def prose_other_sentence(
    content: str, values: Sequence[Value], sentences: Sequence[str]
) -> tuple[str, ...]:
    """Claim values that prose holds only outside the sentence the value's clause speaks of
    (issue 23): "up to 4 public screenings a day" against "… up to two public screenings per
    day …" with a 4 in another paragraph. A value's clause (between commas, semicolons,
    dashes, "and", "but", "while") speaks of the one sentence holding the most of its
    lower-case content words (its predicate, not the names of its subject) that the prose has
    anywhere — at least two and :data:`SENTENCE_COVER` of them, more than any other sentence
    (or, where sentences tie, the one holding the most of the clause's names, words the
    prose also capitalises away from a sentence's start: "Disco on Ice is capped at 250"
    between "Public sessions are capped at 250 skaters" and "Disco on Ice is capped at 300
    skaters").
    A number, quantity, date or time that sentence lacks, where it states another of the same
    kind and none of the clause's other values (unless it states another measure in the
    value's own unit, :func:`_rival`), is returned. Numbers inside a name
    (:func:`_in_name`) are left alone. The parts a semicolon joins are read as sentences of
    their own, but a later part that only goes on with its sentence's predicate
    ("…; vehicles at least 45 minutes") is no other thing where the claim names its subject
    in words the source never says. The claim's first word, capitalised as any first word
    is, counts only where the rest of its clause says too little. ``sentences``: the
    premise's chunks (``pipeline.chunks``), in order."""
    # a semicolon parts what a sentence says of two things ("Concert: Saturday, 19:30,
    # Halifax Minster; call time 17:45")
    parts = [(n, p) for n, s in enumerate(sentences) for p in _SEMICOLON.split(s) if p.strip()]
    sentences = [p for _, p in parts]
    if len(sentences) < 2:
        return ()
    text = " ".join(sentences)
    blank = cut_values(content, values, keep_offsets=True)
    sentence_terms = [content_terms(s) for s in sentences]
    known = set().union(*sentence_terms)
    unsaid = content_terms(blank) - known
    # the claim's first word, and where its clause must start to hold it
    opening_at = len(blank) - len(blank.lstrip())
    first = _CAPITALISED.match(blank, opening_at)
    out: list[str] = []
    for v in values:
        if v.kind not in _SENTENCE_KINDS or _in_name(content, v):
            continue
        start, end = _clause_bounds(blank, v.span, _ITEM_SPLIT)
        clause_text = blank[start:end]
        # what the clause says, not whom it names: a sentence about its subject by a pronoun
        # ("He is first recorded living …") is found by its predicate
        named = {w.casefold() for w in _CAPITALISED.findall(clause_text)}
        said = content_terms(clause_text) - named
        if len(said & known) < 2 and first is not None and start <= opening_at:
            # the claim's first word, capitalised as any first word is, counts where the rest
            # says too little ("Kittens can start from 8 weeks")
            said |= content_terms(first.group(0)) & known
        terms = said & known  # chat the source never says aside
        lone = (
            terms
            if len(terms) == 1
            else terms & content_terms(first.group(0))
            if len(terms) == 2 and first is not None and start <= opening_at
            else set()
        )
        if any(_lone_word_elsewhere(v, w, terms, parts) for w in lone):
            # the clause's one word the source says (or its first word, of two) is only in a
            # sentence stating another value of its kind, never beside the value
            # ("Spectators are charged £65" of "… costs £65 per person; spectators pay £12")
            out.append(v.text)
            continue
        if len(terms) < 2:
            continue
        hits = sorted(((len(terms & st), i) for i, st in enumerate(sentence_terms)), reverse=True)
        best = hits[0][0]
        if best < max(2, SENTENCE_COVER * len(terms), _CLAUSE_SHARE * len(said)):
            continue
        # sentences alike in what they say are told apart by whom they name ("Public
        # sessions are capped at 250 skaters. Disco on Ice is capped at 300 skaters.")
        tied = [i for n, i in hits if n == best]
        i = (
            tied[0]
            if len(tied) == 1
            else _named_most(_names_in(clause_text, sentences), tied, sentence_terms)
        )
        if i is None:
            continue
        own = sentences[i]
        clause = [w for w in values if w is not v and start <= w.span[0] < end]
        if match_values([v], own)[0].present:
            continue  # the value is there
        if any(m.present for m in match_values(clause, own)) and not _rival(v, own):
            continue  # the clause joins two sentences ("16A with a 3.6 kW max" of "hook-ups
            # are 16 amp" and "combined load 3.6 kW"), unless the sentence states another
            # measure in the value's own unit ("one follow-up tuning within ninety days"
            # against "one follow-up tuning within 60 days")
        if unsaid and any(
            parts[j][0] == parts[i][0] and not (content_terms(part) & said) - content_terms(own)
            for j, part in enumerate(sentences)
            if j > i and match_values([v], part)[0].present
        ):
            continue  # a later part of the same sentence that shares no word of the clause
            # its own part lacks goes on with that part's predicate, where the claim names
            # its subject in words the source never says ("With a car, check in at least 45
            # minutes before departure" of "Foot passengers must check in at least 20
            # minutes before departure; vehicles at least 45 minutes"; not "Kittens can
            # start from 8 weeks" of "Kittens may start from 9 weeks; puppies from 8 weeks")
        if any(w.kind == v.kind for w in read_values(own)) and match_values([v], text)[0].present:
            out.append(v.text)
    return tuple(out)


def _lone_word_elsewhere(
    v: Value, word: str, terms: set[str], parts: Sequence[tuple[int, str]]
) -> bool:
    """Whether ``word`` is in one of the semicolon ``parts`` of the premise's sentences only
    (each part with its sentence's number), that part lacks ``v`` and states another value of
    its kind (of its unit, for a quantity), another part of the same sentence holds ``v``,
    and no part holding ``v`` holds more of the clause's ``terms``: a sentence that gives two
    things a value each ("… costs £65 per person; spectators pay £12")."""
    if v.kind != "quantity":
        return False  # a bare number, date or time is anything's (a result's "2." and date)
    holding = [(n, p) for n, p in parts if word in content_terms(p)]
    if len(holding) != 1 or match_values([v], holding[0][1])[0].present:
        return False
    n, own = holding[0]
    with_v = [p for m, p in parts if m == n and match_values([v], p)[0].present]
    if not with_v:
        return False
    if max(len(terms & content_terms(s)) for s in with_v) > len(terms & content_terms(own)):
        return False
    return _rival(v, own) or any(
        w.kind == "quantity" and w.key[1] == v.key[1] and str(w.key[1]).startswith("[currency")
        for w in read_values(own)
    )


def _rival(v: Value, sentence: str) -> bool:
    """Whether ``sentence`` states another quantity in ``v``'s unit as written (days against
    days, not "forty-five minutes" against "12 weeks to 6 months"); False for a value that
    is not a quantity."""
    if v.kind != "quantity":
        return False
    unit = v.key[3].casefold().removesuffix("s")
    return any(
        w.kind == "quantity"
        and w.key[1] == v.key[1]
        and w.key[3].casefold().removesuffix("s") == unit
        for w in read_values(sentence)
    )


def _named_most(
    names: set[str], tied: Sequence[int], sentence_terms: Sequence[set[str]]
) -> int | None:
    """The one sentence of ``tied`` (two or more) holding the most of ``names``, or None
    when two do."""
    ranked = sorted(((len(names & sentence_terms[i]), i) for i in tied), reverse=True)
    return ranked[0][1] if ranked[0][0] > ranked[1][0] else None


def _names_in(clause: str, sentences: Sequence[str]) -> set[str]:
    """The clause's names: its capitalised words that the ``sentences`` also capitalise away
    from a sentence's start ("Ice" of "Disco on Ice"; not "Weekend" opening a claim)."""
    said = {w.casefold() for w in _CAPITALISED.findall(clause)}
    return said & _inner_capitals(tuple(sentences))


@lru_cache(maxsize=256)
def _inner_capitals(sentences: tuple[str, ...]) -> frozenset[str]:
    """The words ``sentences`` capitalise away from a sentence's start, casefolded (cached:
    each tie of a premise asks it again)."""
    return frozenset(
        w.casefold()
        for s in sentences
        for part in re.split(r"(?<=[.!?])\s+", s.strip())
        for w in _CAPITALISED.findall(part.split(None, 1)[1] if " " in part.strip() else "")
    )
