"""Where a claim says its fact comes from: attribution spans found by cue *shapes*, and the
noun phrase they name resolved to a tool or a provenance family.

Shapes (case-insensitive; a noun phrase is an optional determiner or possessive pronoun and
up to :data:`MAX_NP_WORDS` words, possessives ``X's`` and one ``of`` inside it allowed):

* **cue before** — ``according to NP``, ``as per NP``, ``going by NP``, ``based on NP``,
  ``as stated/listed/… in NP``, ``in line with NP``; ``per NP`` only with a determiner, an
  identifier (``per ticket JT-5519``), a tool's name or a strong source noun (``per hour``
  and ``£2 per page`` are rates, and so is a bare noun before a joiner: ``twice per patient
  in each calendar year``; ``per section 7 of the manual`` cites a part); anywhere in the
  text, also sentence-final (``…, according to the lease.``), and a numbered part of a
  source closing the claim (``…, clause 3.3 of our terms``, when what follows "of" names a
  source itself);
* **weak cue** — ``in/from/under/on NP`` counts only when NP resolves to a source and the
  phrase ends at a comma or at the end of the sentence (``Under the lease, …``, ``… listed
  in the fleet table.``): ``published in the paper Nature in 1990`` states nothing; opening
  the claim (spoken fillers and "please note that" aside) ``in/on/under/by/from NP`` needs
  no comma when NP ends on a source noun and a name, pronoun, determiner, number or a
  subject before its verb follows (``In our staff records Lukas is …``, ``By the house
  rules the GM …``, ``Off the EXIF it's …``; not ``In the records office Lukas …``, ``off
  the record``); the part a cue cites may stand before its comma (``Under the procedures at
  6.5, …``: a part noun or a dotted number, never a bare year); after a participle of
  entering no comma is needed (``listed in the register on the B4172``); a first-
  person check (``I checked NP and …``, ``I checked NP (…) and …``, ``I've had a look at
  NP for you, and …``, ``I've just pulled up NP and …``, a sentence opening ``Checked NP:
  …`` / ``Looked at NP - …`` / ``Looking at NP for Thursday the 12th, …``, ``Right, so I'm
  looking at NP, and …``) with any NP that resolves; a look on the web (``I had a look
  online and …``, ``Upon searching the web I find that …``); a source the writer has up,
  its NP a strong source noun or a tool's name (``I've got her licence record up, and …``,
  ``I have your job card before me, and …``, ``ok got the results db up - …``); a first or
  last row of a source before its verb (``Last game of the day in the bookings database was
  …``); a date between an opening source and its claim stays the claim's (``In the booking
  database for 19.03.2033 we had …``);
* **verb after** — a clause-initial NP followed by a reporting verb (``says``, ``notes``,
  ``lists``, ``returned``, ``turned up``, ``came back with``, ``shows``, ``flags``, …) —
  with any NP — or by a
  content verb (``calls for``, ``recommends``, ``warns``, ``puts``, ``places``, ``has``,
  ``'s got``, ``reckons``, ``lets``, …) only when NP resolves to a source (a bare weak
  noun only when it heads a tool's name: ``log has …`` for ``get_trip_log``; a source's
  section or version and identifier are its own: ``SOP 2.3 allows``, ``Inspection Record
  IR-2291 states``), an adverb
  (``still``, ``simply``, ``itself``, …) allowed between, spoken fillers (``um``, ``okay so``)
  before, ``does not`` / ``don't`` / ``won't`` + a content verb (the negation stays the
  claim's); a clause opens after a comma, a
  colon, a dash, a sentence's end inside the claim ("Not in. Berth database still has …"),
  "and", "but", "that", "as", "which", "what"; a source whose name runs on through joined
  phrases (up to ten words, brackets skipped, no verb or negation) before a present-tense
  reporting verb, when its head is a strong source noun or names a tool (``The file
  properties for image 47 (…) show …``, ``the incident record for CMRT-2033-038 on Scarth
  Fell shows …``: only ``the incident record`` is the attribution, the rest stays the
  claim's); also parenthetical and sentence-final (``…, the SCADA data shows.``,
  ``Thistlebrook, the online articles say, is …``) and ``as NP suggests``; after a frame
  with no comma (``At 06:40 the depot table shows …``) only a determiner, a source noun
  and a present-tense reporting verb;
* **label** — a note's opening noun phrase of two or more words, not all capitalised (a
  title is a name), before a colon and a space or an arrow (``Appeals db: …``, ``Local
  news search -> …``) whose head is a strong source noun, a multi-word source name or a
  family marker; a time or section between the name and the colon stays the claim's
  (``Learner test log 16:55: …``); one strong source noun with its section is a label too
  (``Procedures, 3.5: …``, the section its own);
* **version** — a source named after its version (``that's all off v4.1 of the terms``,
  ``rev 7.2 of the manual``): the noun phrase must resolve; the version stays the claim's
  (a wrong version is a wrong value).

When a ``verb_after`` phrase opens the claim (the source is its subject), an ``in/on NP``
phrase later in it is what the source says, not a second source (``The procedure does not
require closures to be entered in the night log``; :func:`.families.find_attribution`).

Resolution of the noun phrase, in order (the first rule that gives one family wins; the rule
is recorded): **tool name** — the NP is a tool's name, or its head noun is a word of a
tool's name (``the recipe sheet`` → ``fetch_recipe_sheet``; ties between families broken by
the other words); **tool description** — the same against the words of a tool's
description in the server's tool listing (:class:`Listing`; a frozen trace holds them in
its ``descriptions`` field), only for a phrase headed by a source noun (a description's
other words say what the tool returns: "the honey" is no source); **tool arguments** —
what a call of the trace was given names its tool: an identifier in the phrase that a
record, document or metadata tool was called with, beside a source noun (``per ticket
JT-5519``; "K3CL0142 remains listed" names the case, not a source), or a
source-noun head with another word of the phrase among the words of a path, file, document
or SQL table a tool opened (``the supply csv`` → the tool that opened
``ops/water_supply_v2.csv``); a search query is a topic and a query's filters pick rows, so
neither names a source, and a strong head noun keeps its family ("the plot record" is a
record even when a query read the plots table); **alias** — the head noun in the family
lexicon (:data:`HEAD_NOUNS`, strong nouns), then a modifier naming a tool (not an owner
before a source noun: "the council's website" is a web page; where the modifiers' words
name tools of several families, a word fewer descriptions hold counts for more), then a
modifier that marks a family (``news``, ``online``, ``web`` → search), then weak head nouns
(``report`` → document). A thing found inside a search ("the news item in the search
results") is the search's, before any of these but the tool's own name. A generic head
(``sources``, ``data``) with nothing else is
*generic*; anything else is *unresolved* — never silently a family (after a strong cue
or before a present-tense reporting verb the head is matched against the descriptions
whatever it is, ``named``: "per the approval"). The pipeline may then
resolve an unresolved NP by sentence-embedding similarity to family descriptions with a
margin (:data:`FAMILY_DESCRIPTIONS`); that needs a model, so it is not here.

Pure Python, no model code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_provenai.attribution.values import NUMBER_WORDS

__all__ = [
    "FAMILY_DESCRIPTIONS",
    "HEAD_NOUNS",
    "MAX_NP_WORDS",
    "RULES",
    "SPEAKS_NOW",
    "Listing",
    "Resolution",
    "Span",
    "find_spans",
    "heads_a_tool",
    "listing_of",
    "names_a_source_noun",
    "resolve",
]

MAX_NP_WORDS = 6
"""Words a source noun phrase may have (determiners and ``of`` not counted)."""

#: The rules that may resolve a noun phrase, in the order they are tried.
RULES = ("tool_name", "tool_description", "tool_arguments", "alias", "similarity")

#: Head nouns per family: (strong, weak). A strong head decides the family before a
#: modifier does; a weak one only when no modifier says more ("news reports" is search).
HEAD_NOUNS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "record": (
        frozenset("record records dossier profile account registry entry casefile".split()),
        frozenset("file card ticket form forms confirmation".split()),
    ),
    "search": (
        frozenset("search searches hit hits googling".split()),
        frozenset(
            "coverage article articles story stories news headline headlines result "
            "results website post posts review reviews write-up writeup piece forum "
            "forums blog blogs webpage webpages homepage".split()
        ),
    ),
    "database": (
        frozenset(
            "database databases db table tables query queries sql warehouse spreadsheet "
            "dataset ledger".split()
        ),
        frozenset(
            "log logs sheet sheets row rows readings system register registers tracker "
            "trackers inventory roster rota csv planner planners diary diaries calendar "
            "calendars timetable timetables".split()
        ),
    ),
    "document": (
        frozenset(
            "document documents documentation doc docs policy policies manual manuals "
            "handbook guide "
            "guidance agreement agreements contract contracts lease terms conditions rules "
            "regulations regulation rulebook brochure leaflet faq specification procedure "
            "procedures notice memo minutes charter code constitution bylaws "
            "instructions paper passage chapter section clause appendix schedule "
            "tariff notes note sop protocol formulary amendment amendments addendum "
            "t&c t&cs ts&cs".split()
        ),
        frozenset(
            "report reports page pages text wording licence licences license licenses "
            "commitments certificate certificates cert certs".split()
        ),
    ),
    "metadata": (
        frozenset(
            "metadata meta properties exif header headers checksum attributes tags "
            "listing catalog catalogue".split()
        ),
        frozenset("info information details caption captions".split()),
    ),
}

#: Multi-word source names that beat their head word ("fact sheet" is a document).
PHRASES: dict[str, str] = {
    "fact sheet": "document",
    "data sheet": "document",
    "spec sheet": "document",
    "index card": "metadata",
    "patient chart": "record",
    "medical chart": "record",
    "file properties": "metadata",
    "file info": "metadata",
    "file details": "metadata",
    "file props": "metadata",
    "search results": "search",
    "search result": "search",
    "query results": "database",
    "query result": "database",
    "meta data": "metadata",
    "data warehouse": "database",
    "web page": "search",
    "price list": "document",
    "practice direction": "document",
    "image description": "metadata",
    "local paper": "search",
    "review site": "search",
    "review sites": "search",
    "web site": "search",
}

#: Modifiers that mark a family whatever the head ("online sources", "news reports").
MARKERS: dict[str, str] = {
    "news": "search",
    "online": "search",
    "web": "search",
    "internet": "search",
    "press": "search",
    "media": "search",
    "google": "search",
    "yelp": "search",
    "tripadvisor": "search",
    "trustpilot": "search",
    "newspaper": "search",
    "gazette": "search",
    "echo": "search",
    "herald": "search",
    "chronicle": "search",
    "tribune": "search",
    "sql": "database",
    "exif": "metadata",
}

#: Nouns for a copy of a source, named by the source before them ("the tracker export").
_COPIES = frozenset("export exports printout printouts".split())
#: Nouns that name a source without saying which: a phrase of only these is generic.
GENERIC = (
    frozenset(
        "source sources tool tools data evidence information output outputs result results "
        "lookup call entry entries".split()
    )
    | _COPIES
)

#: What each family is, for the embedding fallback (pipeline).
FAMILY_DESCRIPTIONS: dict[str, str] = {
    "record": "a record of one item: an account, customer, employee, booking or case record "
    "with its fields",
    "search": "web search results: news reports, online articles and press coverage",
    "database": "a database query: rows of a table, a log or a spreadsheet of entries",
    "document": "a document: a policy, manual, guide, contract, terms, rules or regulations",
    "metadata": "file metadata: the properties of a file, image or device such as author, "
    "created date, size and version",
}

# Tool-name words that say what a tool does, not what it returns.
_TOOL_VERBS = frozenset(
    "get fetch lookup look up list read find retrieve load run call open show "
    "tool api v1 v2".split()
)
_EXPAND = {
    "db": "database",
    "meta": "metadata",
    "docs": "document",
    "doc": "document",
    "props": "properties",
}
#: Short forms of source nouns in a noun phrase ("Permit rec has RP-4471 as inactive").
_SHORT_NOUNS = {
    "rec": "record",
    "recs": "records",
    "regs": "regulations",
    "spec": "specification",
    "specs": "specification",
}

_SAY = (
    "say says said state states stated note notes noted list lists listed report reports "
    "reported mention mentions mentioned indicate indicates indicated confirm confirms "
    "confirmed return returns returned show shows showed shown suggest suggests suggested "
    "find finds found flags flagged highlights highlighted identify identifies identified "
    "agree agrees agreed"
)
_CONTENT = (
    "record records recorded give gives gave put puts place places placed name names named "
    "count counts counted recommend recommends recommended warn warns warned allow allows "
    "allowed require requires required ask asks asked specify specifies specified describe "
    "describes described contain contains contained has have had hold holds held set sets "
    "estimate estimates estimated rate rates rated credit credits credited tell tells told "
    "add adds added explain explains explained stipulate stipulates stipulated "
    "prescribe prescribes prescribed advise advises advised cap caps capped limit limits "
    "limited date dates dated cover covers covered ran runs carried carries permit permits "
    "permitted define defines defined forbid forbids prohibit prohibits prohibited got "
    "reckon reckons reckoned ties tied logged lets welcomes wants defer defers deferred "
    "entitle entitles entitled shuts reads want let logs bills marks quotes cites"
)
_VERB_WORDS = frozenset((_SAY + " " + _CONTENT).split())
_SAY_WORDS = frozenset(_SAY.split())
#: Reporting verbs in the present tense: after a frame inside a clause only these make an
#: attribution ("the WX-2 record shows"); a participle there is the claim's ("has the
#: booking confirmed").
_SPEAKS = frozenset(
    "say says state states note notes list lists mention mentions indicate indicates "
    "confirm confirms show shows suggest suggests report reports flag flags".split()
)
#: The third person of those: a source speaking now ("the letter confirms"), where "the crew
#: flagged" may be an agent's past (:func:`.families.find_attribution`).
SPEAKS_NOW = frozenset(w for w in _SPEAKS if w.endswith("s"))
#: Words that cannot open what a source says ("the condition reports too").
_NOT_AN_OBJECT = frozenset("too also as and or either".split()) | frozenset(("",))
#: Bare forms of content verbs after "does not" ("our SOP does not permit …").
_NEGATED_BASE = frozenset(
    "permit allow require cover apply include refund let need give put list".split()
)
#: Bare forms of reporting verbs after "does"/"did" ("the policy does say …").
_SAY_BASE = frozenset("say state note list mention show suggest indicate confirm".split())
#: Contracted negations before those bare forms ("our terms don't apply any excess").
_NEGATED_AUX = frozenset("doesn't don't didn't won't".split())
_NOT = re.compile(r"n['’]t$")
_STOP = frozenset(
    """is are was were be been being will would can could may might must shall should do does
    did that which who whom whose when where while because since although though if than
    then to at by for with from on in into onto over under about after before and or but
    not no as per within during until between across through throughout via without
    against towards toward among upon""".split()
) | frozenset(  # contracted negations are single tokens ("can't"): they end a noun phrase
    f"{w}{q}t"
    for w in "can won don doesn didn isn aren wasn weren hasn haven hadn couldn wouldn "
    "shouldn mustn ain".split()
    for q in "'’"
)


@dataclass(frozen=True)
class Span:
    """A detected attribution phrase: ``[start, end)`` characters of the text (with the
    comma, ``that`` or colon it carries), the noun phrase and where it is, the shape, and
    whether an unresolved noun phrase still counts (a reporting verb or a strong cue)."""

    start: int
    end: int
    noun_phrase: str
    np_start: int
    np_end: int
    shape: str
    strong: bool


@dataclass(frozen=True)
class Resolution:
    """What a noun phrase names: ``family`` (and ``tool`` when one tool), the ``rule`` that
    decided, or none of them with a ``reason`` (``generic_source``,
    ``unresolved_phrase``, ``several_families``)."""

    family: str | None = None
    tool: str | None = None
    rule: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class Listing:
    """What a trace says of its tools besides their families (hashable, so resolutions
    are cached per listing): each tool's ``descriptions`` in the server's tool listing, the
    words of what each tool ``opened`` (path, file, document and table arguments of its
    calls) and the ``identifiers`` it was called with. Build one with :func:`listing_of`."""

    descriptions: tuple[tuple[str, str], ...] = ()
    opened: tuple[tuple[str, frozenset[str]], ...] = ()
    identifiers: tuple[tuple[str, frozenset[str]], ...] = ()


#: Argument names whose value names the thing a tool opens (not a filter or a topic).
_OPENED_KEYS = frozenset(
    "path paths file files filename document documents doc docs name table tables sheet "
    "report policy url uri resource title".split()
)
#: File extensions, which head a phrase as a source noun ("the supply csv").
_FILE_TYPES = frozenset(
    "csv tsv pdf docx doc xlsx xls json txt md png jpg jpeg tif tiff gif html xml".split()
)
_PATH_LIKE = re.compile(r"[/\\]|\.[A-Za-z]{2,5}$")
_SQL = re.compile(r"^\s*(?:select|with|insert|update|delete)\b", re.IGNORECASE)
_SQL_TABLE = re.compile(r"\b(?:from|join|update|into)\s+([A-Za-z_][\w.]*)", re.IGNORECASE)
#: An identifier: letters and digits, joined by "-", "_" or "/" ("JT-5519") or starting with
#: a letter and four characters or more ("K3CL0142"); not a date, a time or "v2".
_IDENTIFIER = re.compile(
    r"^(?=[\w/-]*\d)(?=[\w/-]*[A-Za-z])"
    r"(?:[A-Za-z][A-Za-z0-9]{3,}|[A-Za-z0-9]+(?:[-_/][A-Za-z0-9]+)+)$"
)
_OPENED_STOP = frozenset("ops tmp data file files v1 v2 v3 v4 final draft copy new old".split())


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def _path_words(value: str) -> set[str]:
    words = set()
    for part in re.split(r"[/\\_\-.\s]+|(?<=[a-z])(?=[A-Z])", value):
        w = part.lower()
        if len(w) >= 3 and not any(ch.isdigit() for ch in w) and w not in _OPENED_STOP:
            words.add(singular(w))
        elif w in _FILE_TYPES:
            words.add(w)
    return words


def listing_of(
    calls: Iterable[tuple[str, Mapping[str, Any]]],
    families: Mapping[str, str],
    descriptions: Mapping[str, str] | None = None,
) -> Listing:
    """The :class:`Listing` of a trace: ``calls`` are (tool, arguments) pairs, ``families``
    tool → family, ``descriptions`` tool → listed description. A search tool opens nothing
    (its query is a topic); a database tool opens the tables of its SQL, and its other
    arguments filter rows, so they name no source; identifiers are what a record, document
    or metadata tool was asked for."""
    opened: dict[str, set[str]] = {}
    identifiers: dict[str, set[str]] = {}
    for tool, arguments in calls:
        family = families.get(tool)
        if family in (None, "search"):
            continue
        for key, value in arguments.items():
            for text in _strings(value):
                tables = _SQL_TABLE.findall(text) if _SQL.search(text) else []
                for table in tables:
                    opened.setdefault(tool, set()).update(_path_words(table))
                if tables:
                    continue  # a query's filters name rows, not the source
                if key.lower() in _OPENED_KEYS or _PATH_LIKE.search(text):
                    opened.setdefault(tool, set()).update(_path_words(text))
                if family == "database":
                    continue  # a database tool's arguments filter rows
                for token in re.split(r"[\s,;]+", text):
                    token = token.strip("'\"()[]")
                    if _IDENTIFIER.match(token):
                        identifiers.setdefault(tool, set()).add(token.lower())
    return Listing(
        descriptions=tuple(
            sorted((t, d) for t, d in (descriptions or {}).items() if t in families)
        ),
        opened=tuple(sorted((t, frozenset(w)) for t, w in opened.items() if w)),
        identifiers=tuple(sorted((t, frozenset(w)) for t, w in identifiers.items() if w)),
    )


# -- words ------------------------------------------------------------------------------------
def singular(word: str) -> str:
    """A plain English singular (enough to match ``notes`` with ``note``)."""
    w = word.lower()
    if len(w) <= 3 or w.endswith(("ss", "us", "is", "news", "ics", "series")):
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("s"):
        return w[:-1]
    return w


def _owners(phrase: str) -> list[str]:
    """The words of a noun phrase that own what follows ("council" in "the council's
    website")."""
    return [m.group(1).lower() for m in re.finditer(r"([^\W_][\w\-]*)['’]s\b", phrase)]


def _np_words(phrase: str) -> list[str]:
    """Lower-cased content words of a noun phrase, determiners and possessive marks cut,
    ``of`` kept as a separator."""
    out: list[str] = []
    # "4.2" stays one word: a section or version number is no two numbers
    for m in re.finditer(r"[^\W_](?:[\w\-]|&(?=[^\W_])|\.(?=\d))*", phrase.replace("’", "'")):
        w = m.group(0).lower()
        if w in ("the", "a", "an", "this", "that", "these", "those", "your", "our", "its"):
            continue
        if w in ("their", "his", "her", "my", "s"):
            continue
        out.append(_SHORT_NOUNS.get(w, w))
    return out


def _tool_words(name: str) -> list[str]:
    """The words of a tool's name that say what it returns, in order (the last is the
    name's head: ``get_record_metadata`` returns metadata)."""
    parts = re.split(r"[_\-.\s/]+|(?<=[a-z])(?=[A-Z])", name)
    out: list[str] = []
    for p in parts:
        w = p.lower()
        if not w or w in _TOOL_VERBS or w.isdigit():
            continue
        out.append(singular(_EXPAND.get(w, w)))
    return out


def _tool_variants(tool: str) -> set[str]:
    words = [w.lower() for w in re.split(r"[_\-.\s]+", tool) if w]
    out = {tool.lower(), " ".join(words)}
    if len(words) > 1:
        out.add(" ".join(reversed(words)))
    return out


# -- resolution -------------------------------------------------------------------------------
#: An "e-" (electronic) form of a word: "ecrf", "e-invoice" (three letters or more after it).
_E_PREFIX = re.compile(r"^e-?(?=[a-z]{3,}$)")
#: The head nouns of the family lexicon, strong and weak, singular.
_LEXICON_NOUNS = frozenset(
    singular(w) for nouns in HEAD_NOUNS.values() for group in nouns for w in group
)
_SOURCE_NOUNS = (
    _LEXICON_NOUNS | frozenset(MARKERS) | frozenset(w for p in PHRASES for w in p.split())
)
#: Heads that make a phrase a source for the listing's rules: lexicon nouns and file types.
_SOURCE_HEADS = _LEXICON_NOUNS | _FILE_TYPES
#: The strong head nouns of every family, singular ("policy", "record", "database").
_STRONG_NOUNS = frozenset(singular(w) for nouns in HEAD_NOUNS.values() for w in nouns[0])


def _head(piece: str) -> str:
    """The head noun of a noun phrase's piece: its last word, or the part noun before a
    closing number ("section 3", "rule 7" → "section", "rule"; "History paper 1" is a
    thing, its head "1" names no source)."""
    words = piece.split()
    if len(words) > 2 and any(ch.isdigit() for ch in words[-1]) and words[-2] in _VERSION_WORDS:
        words = words[:-2]  # "formulary rev 4.2", "policy doc version 5": the thing versioned
    elif len(words) > 1 and re.fullmatch(r"\d+(?:\.\d+)+", words[-1]):
        words = words[:-1]  # "SOP 2.3": a numbered part of the thing
    if len(words) > 1 and any(ch.isdigit() for ch in words[-1]) and words[-2] in _PART_NOUNS:
        return words[-2]
    return words[-1]


def names_a_tool(noun_phrase: str, tools: Mapping[str, str]) -> bool:
    """Whether the phrase names one of the trace's tools by its name ("query" and "search"
    aside): every word of a tool of two or more words ("Ward board" for
    ``query_ward_board``), a tool's words before a source noun ("Appointments log" for
    ``query_appointments``), or, in two or more words, the last word of a tool's name as its
    head ("the screening schedule" for ``get_schedule``) — "the patient" alone is the
    patient, not ``get_patient``, but "the runbook" alone is ``read_runbook``: a document
    tool is named for the document it returns."""
    words = [singular(_EXPAND.get(w, w)) for w in _np_words(noun_phrase)]
    words = [w for w in words if w not in _JOINERS and not any(ch.isdigit() for ch in w)]
    if not words:
        return False
    for tool in tools:
        own = [w for w in _tool_words(tool) if w not in ("query", "search")]
        if len(own) >= 2 and set(own) <= set(words):
            return True
        if own and set(own) <= set(words) and words[-1] in _SOURCE_NOUNS:
            return True  # "Appointments log" for query_appointments
        if own and len(words) >= 2 and words[-1] == own[-1]:
            return True
        if own and tools[tool] == "document" and words == own[-1:]:
            return True  # "the runbook" for ``read_runbook``: a document is named for itself
    return False


def heads_a_tool(word: str, tools: Mapping[str, str]) -> bool:
    """Whether a lexicon noun on its own is the last word of a tool's name ("log" for
    ``get_trip_log``, "register" for ``query_tpo_register``): with no determiner it names
    that tool before a content verb ("log has J. Tregear on deck"); "page" for no tool
    stays a fact's noun ("Page limit for bundles: 200")."""
    head = singular(_EXPAND.get(word.lower(), word.lower()))
    return head in _LEXICON_NOUNS and any((_tool_words(tool) or [""])[-1] == head for tool in tools)


def names_a_source_noun(noun_phrase: str) -> bool:
    """Whether the phrase's head (or a family marker in it) is a word of the family lexicon
    ("the recipe sheet", "online reports") — not only an entity a tool is named after
    ("Bay B9", "the meter", "the paper's PDF"). Weak cues and content verbs need one: "Bay
    B9 holds 860 plants" states no source."""
    if re.fullmatch(r"\s*[A-Za-z]\w*_\w+\s*", noun_phrase):
        return True  # a tool's own name, "from web_search"
    words = _np_words(noun_phrase)
    while len(words) > 1 and words[-1].lower() in _COPIES:
        words = words[:-1]  # "the penalty tracker export": the tracker's
    heads = [_head(p) for p in re.split(r" (?:of|for|from|in|on) ", " ".join(words)) if p.split()]
    return any(singular(h) in _SOURCE_NOUNS for h in heads) or any(w in MARKERS for w in words)


def _head_family(word: str, strength: int) -> str | None:
    for family, nouns in HEAD_NOUNS.items():
        if word in nouns[strength] or singular(word) in {singular(n) for n in nouns[strength]}:
            return family
    return None


def _by_modifier(
    piece: str,
    owners: list[str],
    heads: list[str],
    tools: Mapping[str, str],
    names: Mapping[str, set[str]],
) -> tuple[str, str] | None:
    """(family, tool) of the one tool whose name holds a word before the head of ``piece``
    (the phrase before its first joiner) that names no family itself, when those words
    name exactly one tool and the head names no family but the tool's, and that only
    weakly; None otherwise ("the search results", "the account record" and "the policy
    document" are the lexicon's). An owner ("the patient's discharge PDF") is what the
    source is about, not the source, except for metadata, which is a thing's own ("the
    photo's EXIF data")."""
    words = [
        w
        for w in piece.split()[:-1]
        if w not in GENERIC
        and len(w) > 2
        and w not in MARKERS
        and _head_family(w, 0) is None
        and _head_family(w, 1) is None
    ]
    matched = sorted(
        {
            t
            for t in tools
            for w in words
            if singular(w) in names[t] and (w not in owners or tools[t] == "metadata")
        }
    )
    if len(matched) != 1 or not heads:
        return None
    family = tools[matched[0]]
    if any(
        _head_family(h, 0) is not None or _head_family(h, 1) not in (None, family) for h in heads
    ):
        return None  # a head that names a family decides ("the harbour's website")
    return family, matched[0]


def _pick(
    candidates: list[str], tools: Mapping[str, str], words: list[str], vocab: Mapping[str, set[str]]
) -> tuple[str | None, str | None] | None:
    """(family, tool) from tools whose vocabulary matched; None when nothing matched;
    (None, None) when they disagree even after counting the other words."""
    if not candidates:
        return None
    families = {tools.get(t, "") for t in candidates} - {""}
    if len(families) == 1:
        family = next(iter(families))
        return family, candidates[0] if len(candidates) == 1 else None
    stems = {singular(w) for w in words} | {singular(p) for w in words for p in w.split("-")}
    # a word few of the candidates have says more than one most of them have ("missed" of
    # "missed-bin report" against "bin", which three descriptions mention)
    df = {w: sum(w in vocab[t] for t in candidates) for w in stems}
    scores = {t: sum(1 / df[w] for w in stems & vocab[t]) for t in candidates}
    best = max(scores.values())
    top = [t for t, s in scores.items() if s == best]
    top_families = {tools.get(t, "") for t in top} - {""}
    if len(top_families) == 1:
        return next(iter(top_families)), top[0] if len(top) == 1 else None
    return None, None


def _by_arguments(
    words: list[str],
    heads: list[str],
    content: list[str],
    tools: Mapping[str, str],
    listing: Listing,
    named: bool = False,
) -> tuple[str | None, str | None] | None:
    """(family, tool) of the tool whose calls were given an identifier of the phrase (with
    a source noun beside it: "ticket JT-5519", "VP-66210's record"; alone when ``named``:
    "according to CH-40217", "HB-3318 shows"), or opened what the
    phrase names (a source-noun head and another word of the phrase among
    the words of what it opened; a file type alone: "the csv"); None when none."""
    idents = {w for w in words if _IDENTIFIER.match(w)}
    if not named and not any(singular(w) in _LEXICON_NOUNS for w in words if w not in idents):
        # "K3CL0142 remains listed" is the case, not a source: "ticket JT-5519" is one, and
        # so is an identifier a call asked for after "according to" or before "says"
        idents = set()
    by_id = sorted(t for t, ids in listing.identifiers if t in tools and ids & idents)
    opened: dict[str, set[str]] = {t: set() for t in tools}
    opened.update((t, set(w)) for t, w in listing.opened if t in tools)
    own = {singular(h) for h in heads}
    # a strong head noun keeps its family: "the plot record" is a record even when a SQL
    # query read the plots table
    strong = {f for f in (_head_family(h, 0) for h in heads) if f is not None}
    hit = _pick(by_id, tools, content, opened)
    if hit is None and own & _SOURCE_HEADS:
        others = {singular(w) for w in content if w not in heads and w not in GENERIC}
        others |= own & _FILE_TYPES
        found = sorted(t for t, ws in opened.items() if ws & others)
        hit = _pick(found, tools, content, opened)
    if hit is None or (strong and hit[0] not in strong):
        return None
    return hit


def resolve(
    noun_phrase: str,
    tools: Mapping[str, str],
    listing: Listing | None = None,
    *,
    named: bool = False,
) -> Resolution:
    """The tool or family ``noun_phrase`` names (see the module docstring for the order).
    ``named``: the phrase is a source beyond doubt (after "according to", "per", before
    "says"), so its head is matched against the tools' descriptions whatever it is ("per
    the approval" → the tool that returns "the CASA area approval")."""
    words = _np_words(noun_phrase)
    if not words:
        return Resolution(reason="unresolved_phrase")
    joined = " ".join(words)
    # 1. the phrase is a tool's name ("web_search", "the lookup account tool")
    bare = re.sub(r"\s+(?:tool|output|outputs|call|lookup|results?)$", "", joined)
    for tool in sorted(tools):
        if bare in _tool_variants(tool) or noun_phrase.strip().lower() == tool.lower():
            return Resolution(tools[tool], tool, "tool_name")
    # a participle after the noun says where it was found, like a joiner ("the council's
    # news page found online")
    pieces = re.split(r" (?:of|for|from|in|on|found|posted|published) ", joined)
    heads = [_head(p) for p in pieces if p.split()]
    if len(heads) > 1:
        heads.sort(key=lambda h: h in _PART_NOUNS)  # the part's source first
    for piece in pieces:  # "the search results from web_search"
        for tool in sorted(tools):
            if piece in _tool_variants(tool):
                return Resolution(tools[tool], tool, "tool_name")
    # a thing found inside a search ("the news item in the search results", "the campaign
    # FAQ in the web results"): the search it was found in is the source
    inside = re.split(r" (?:from|in|on|found|posted|published) ", joined)
    if len(inside) > 1:
        container = inside[-1]
        marked = {MARKERS[w] for w in container.split() if w in MARKERS}
        marked |= {family for p, family in PHRASES.items() if p in container}
        if not marked and _head(container) not in GENERIC:
            # "a boater on the Narrowlines forum": a forum, a website, a review
            marked = {f for f in [_head_family(_head(container), 1)] if f == "search"}
        if marked == {"search"}:
            return Resolution("search", None, "alias")
    # a page of the web ("the web listings", "the study's web page"), unless its head is
    # another family's strong noun
    if any(
        p.split()[-2:-1] == ["web"] and _head_family(_head(p), 0) in (None, "search", "metadata")
        for p in pieces
    ):
        return Resolution("search", None, "alias")  # not "the web database"
    content = [w for w in words if w not in _JOINERS]
    ordered = {t: _tool_words(t) for t in tools}
    names = {t: set(w) for t, w in ordered.items()}
    # a description names what a tool returns ("honey harvest weights"): only a phrase
    # headed by a source noun ("the harvest table") is matched against it
    described = named or any(singular(h) in _SOURCE_HEADS for h in heads)
    desc = {
        t: {singular(w) for w in _np_words(d)} - _TOOL_VERBS
        for t, d in (listing.descriptions if listing is not None and described else ())
        if t in tools
    }
    # 2. the head noun is a word of a tool's name, then of a tool's description
    for rule, vocab in (("tool_name", names), ("tool_description", desc)):
        if rule == "tool_description":
            # a word before a generic or unnamed head that only one tool's name has ("the
            # photo's EXIF data" is get_photo_exif, though "data" or "details" names none)
            # (step 5 reads modifiers after arguments and lexicon nouns; this one only a name
            # the head does not contradict)
            by_name = _by_modifier(pieces[0], _owners(noun_phrase), heads, tools, names)
            if by_name is not None:
                return Resolution(by_name[0], by_name[1], "tool_name")
        for head in heads:
            h = singular(head)
            matched = [t for t in sorted(vocab) if h in vocab[t]]
            if not matched and _E_PREFIX.match(h):
                # "the eCRF", "the e-invoice": the electronic form of a tool's "crf"
                matched = [t for t in sorted(vocab) if _E_PREFIX.sub("", h) in vocab[t]]
            if head in GENERIC:
                # "the race 5 results" is query_results; "the results" alone names nothing
                matched = [t for t in matched if ordered[t] and ordered[t][-1] == h]
                if any(w in MARKERS for w in content) or any(p in joined for p in PHRASES):
                    matched = []  # "the search results" is a search, not get_lab_results
            if rule == "tool_name" and _head_family(head, 0) is not None:
                # "the account record" is not get_record_metadata: a lexicon noun only
                # matches a tool whose name ends with it
                matched = [t for t in matched if ordered[t] and ordered[t][-1] == h]
            hit = _pick(matched, tools, content, vocab)
            if hit is not None and hit[0] is not None:
                return Resolution(hit[0], hit[1], rule)
    # 3. what a call of the trace opened or was called with ("the supply csv")
    if listing is not None:
        hit = _by_arguments(words, heads, content, tools, listing, named)
        if hit is not None and hit[0] is not None:
            return Resolution(hit[0], hit[1], "tool_arguments")
    # 4. multi-word names and strong head nouns
    for k in (3, 2):
        for piece in pieces:
            pw = piece.split()
            if len(pw) >= k and " ".join(pw[-k:]) in PHRASES:
                return Resolution(PHRASES[" ".join(pw[-k:])], None, "alias")
    for head in heads:
        family = _head_family(head, 0)
        if family is not None:
            return Resolution(family, None, "alias")
    # 5. a modifier naming a tool ("the SCADA data", "the ticketing system"); an owner
    # before a source noun is not the source ("the council's website" is a web page even
    # when get_council_document is in the trace)
    owners = {singular(o) for o in _owners(noun_phrase)}
    if any(singular(h) in _LEXICON_NOUNS for h in heads):
        content_mods = [w for w in content if singular(w) not in owners]
    else:
        content_mods = content
    modifiers = [w for w in content_mods if w not in heads and w not in GENERIC]
    for rule, vocab in (("tool_name", names), ("tool_description", desc)):
        found: set[str] = set()
        for w in modifiers:
            for part in {w, *w.split("-")} - {""}:  # "missed-bin": "missed" and "bin"
                found |= {t for t in vocab if singular(part) in vocab[t]}
        hit = _pick(sorted(found), tools, content, vocab)
        if hit is not None and hit[0] is not None:
            return Resolution(hit[0], hit[1], rule)
    # 6. a modifier that marks a family, then weak head nouns
    marked = {MARKERS[w] for w in content if w in MARKERS}
    if len(marked) == 1:
        return Resolution(next(iter(marked)), None, "alias")
    if len(marked) > 1:
        return Resolution(reason="several_families")
    for head in heads:
        family = _head_family(head, 1)
        if family is not None:
            return Resolution(family, None, "alias")
    if all(w in GENERIC for w in content):
        return Resolution(reason="generic_source")
    return Resolution(reason="unresolved_phrase")


# -- spans ------------------------------------------------------------------------------------
_STRONG_CUE = re.compile(
    r"\b(?P<cue>according\s+to|acc\.?\s+to|as\s+per|going\s+by|judging\s+by|in\s+line\s+with|"
    r"as\s+(?:(?:is|was|are|were)\s+)?(?:stated|reported|listed|shown|noted|recorded|given|"
    r"described|set\s+out|specified|mentioned|laid\s+out)\s+(?:in|by|on)|"
    r"(?<![\w'’])it\s+(?:says|said|states|stated|shows|showed)\s+(?:on|in)|per)\s+(?=\S)",
    re.IGNORECASE,
)
#: A check the writer made ("I checked the invoice", "Looked at the log"): the verb alone
#: says that what follows is a source.
_LOOKED_VERBS = (
    r"(?:(?:just\s+)?(?:checked|looked\s+at|looked\s+up|queried|searched|pulled\s+up)"
    r"|had\s+a\s+(?:quick\s+)?look\s+at)"
)
_WEAK_CUE = re.compile(
    r"\b(?P<cue>in|from|under|on|off|within|based\s+on|looking\s+at|checking|consulting|"
    rf"(?:(?:i|we|i've|we've|i\s+have|we\s+have)\s+)?{_LOOKED_VERBS}|going\s+off|"
    r"(?:confirmed|reported|shown|recorded|backed\s+up|supported|borne\s+out|indicated|"
    r"listed|stated|noted|given|returned)\s+by(?!\s+reference)|"
    r"fits|matches|agrees\s+with|tallies\s+with|consistent\s+with|"
    r"(?:by|with)\s+reference\s+to|by)\s+(?=\S)",
    re.IGNORECASE,
)
#: A frame that a source closes with "that": "It has been confirmed from the shipments
#: database that …", "It is recorded in the batch record that …".
#: A participle of entering just before "in"/"on" ("listed in the register on the B4172").
_ENTERED = re.compile(
    r"\b(?:listed|recorded|logged|entered|noted|registered|written)[ \t]+$", re.IGNORECASE
)
#: The part of a source a weak cue cites before its comma ("Under the procedures at 6.5,").
_CITED_PART = re.compile(
    r"[ \t]+(?:at|in|under)[ \t]+(?:(?:section|para(?:graph)?|clause|rule|s\.?|§)[ \t]*"
    r"\d[\d.]*[a-z]?|\d+(?:\.\d+)+)(?=[ \t]*,)",
    re.IGNORECASE,
)
"""A bare number is no part ("From the ledger in 2023, …": the year is the claim's)."""
_CONFIRMED = re.compile(
    r"\b(?:confirmed|recorded|noted|shown|stated|established|documented|indicated|verified"
    r"|evident|clear|apparent)[ \t]*$",
    re.IGNORECASE,
)
_THAT = re.compile(r"[ \t]+that[ \t]+")
_LOOKED = re.compile(rf"(?:(?:i|we)\S*\s+(?:have\s+)?)?{_LOOKED_VERBS}|looking\s+at")
#: Who is looking, before a look in the present tense ("I'm looking at the lab log, …").
_LOOKER = r"(?:(?:i|we)(?:['’]m|['’]re|[ \t]+am|[ \t]+are)[ \t]+(?:just[ \t]+)?)?"
_LOOK_SUBJECT = re.compile(_LOOKER + "$", re.IGNORECASE)
#: What may stand before a look that opens its sentence: spoken fillers and who is looking
#: ("Right, so I'm looking at the lab log, and …").
_LOOK_OPENS = re.compile(
    r"(?:^|[.!?:;\n-])[ \t]*(?:(?:right|so|ok|okay|well|now|yeah)[ \t]*,?[ \t]+)*" + _LOOKER + "$",
    re.IGNORECASE,
)
#: What a check was for, up to its comma ("Looking at the rota for Thursday the 12th, …",
#: "I've pulled up her record this morning, …").
_LOOKED_FOR = re.compile(r"[ \t]+[^,.;:!?]{1,40},[ \t]*")
_SAID_IN_TAIL = re.compile(r"\b(?:is|are|was|were|has|have|had|shows?|says?)\b", re.IGNORECASE)
_CLAUSE_START = re.compile(
    r"(?:^|(?<=[,;:—–(?!])|(?<=[.](?=[ \t]))|(?<=\s-)|(?<=\band)|(?<=\bbut)|(?<=\bthat)|(?<=\bas)"
    r"|(?<=\bwhich)|(?<=\bwhat))[ \t]*",
    re.IGNORECASE,
)
#: A determiner inside a clause, where a source's noun phrase may open after a frame.
_INNER_DETERMINER = re.compile(
    r"(?<=[ \t])(?=(?:the|our|your|their|his|her|its)[ \t])", re.IGNORECASE
)
_DETERMINERS = frozenset(
    "the a an this that these those your our its their his her my what".split()
)
_PRONOUNS = frozenset("it this that they he she we i you there".split())
_JOINERS = frozenset(("of", "for", "from", "in", "on"))
#: Joiners whose second part must name a source itself ("the data from the fleet table"),
#: so that "the record in March" stays "the record".
_LOCATIVE = frozenset(("from", "in", "on"))
#: Nouns for a part of a source: the other part of a joined phrase names the source
#: ("VX-226's entry in the fleet table" is the fleet table).
_PART_NOUNS = frozenset(
    "entry entries section page row line part field column item paragraph clause rule "
    "article appendix chapter annex".split()
)
#: Words that give a source's version after its name ("formulary rev 4.2").
_VERSION_WORDS = frozenset("rev revision version ver v issue edition".split())
#: A version of a source: "version 4.2", "rev. 3", "edition 2033/1", "v4.1" (the words of
#: :data:`_VERSION_WORDS` but "issue": "issue 2 of the release notes" is a numbered item as
#: often as a version).
_VERSION = re.compile(
    r"\b(?:"
    + "|".join(sorted(_VERSION_WORDS - {"issue", "v"}, key=len, reverse=True))
    + r")\.?[ \t]*\d[\w./-]*|\bv\d[\w./-]*",
    re.IGNORECASE,
)
_OF = re.compile(r"[ \t]+of[ \t]+", re.IGNORECASE)
#: A look on the web: "I had a look online and", "Upon searching the web I find that".
#: The writer as the subject of a look: "I", "we", "I've", "we have".
_WRITER = r"\b(?:i|we)(?:['’]ve|[ \t]+have)?[ \t]+"
_LOOK_ONLINE = re.compile(
    rf"(?:(?P<upon>\b(?:upon|after|on)[ \t]+)|{_WRITER}|(?=had[ \t]+a[ \t]))"
    r"(?:had[ \t]+a[ \t]+(?:quick[ \t]+)?look|looked|searched|checked|searching|looking)"
    r"[ \t]+(?P<where>on[ \t]*line|on[ \t]+(?:the[ \t]+)?(?:internet|web|net)|on[ \t]+t['’]internet"
    r"|the[ \t]+(?:web|internet))\b"
    r"(?:[ \t]*,?[ \t]+and[ \t]+|(?P<found>[ \t]+(?:i|we)[ \t]+(?:find|found|see|saw|read)"
    r"[ \t]+that[ \t]+)|[ \t]*,[ \t]*|[ \t]+[-–—][ \t]+)",
    re.IGNORECASE,
)
#: A subject that picks one of a source's rows by its order ("Last game of the day", "The
#: earliest scan"), before "in the <source> was".
_FIRST_OR_LAST = re.compile(
    r"(?:^|[.!?;:]\s+)(?:the\s+)?(?:last|first|latest|earliest|next|final|newest|oldest)\b"
    r"[^,.;:!?]*$",
    re.IGNORECASE,
)
#: A possessive or definite determiner opening a source's noun phrase ("in the", "in our").
_DEFINITE = re.compile(r"(?:the|our|their|its|your)\s", re.IGNORECASE)
#: A verb of being right after a source's noun phrase ("… database was …").
_BE_AFTER = re.compile(r"[ \t]+(?:is|was|are|were)\b")
#: A source the writer has open: "I've got her licence record up, and", "I have your job
#: card before me, and", "ok got the results db up - …" (the noun phrase is resolved).
_HAVE_OPEN = re.compile(
    rf"(?:{_WRITER}|(?<![\w'’])(?:ok|okay)[ \t]*,?[ \t]+)"
    r"(?:got|have)[ \t]+"
    r"(?P<np>(?:[\w'’-]+[ \t]+){0,5}?[\w'’-]+)[ \t]+"
    r"(?:up|before[ \t]+me|in[ \t]+front[ \t]+of[ \t]+me)"
    r"(?:[ \t]*,?[ \t]+and[ \t]+|[ \t]*,[ \t]*|[ \t]+[-–—][ \t]+|[ \t]*:[ \t]*)",
    re.IGNORECASE,
)
#: A bracket inside a claim ("(DRO_PAR_14_3_vol1_0047.tif)"), skipped in a long source name.
_BRACKETED = re.compile(r"\([^()]*\)")
#: A short aside in brackets inside a clause, a word before and after it (not a citation of
#: its own: "(see the enclosed transcription)").
_ASIDE = re.compile(
    r"(?<=\w)[ \t]+\((?![ \t]*(?:see|cf|source|from|via|per)\b)[^()]{1,30}\)(?=[ \t]+\w)",
    re.IGNORECASE,
)
#: Words that end a long source name before its verb: a verb or a function word other
#: than a joiner ("The parcel record that was lost in March shows …" is a claim).
_NOT_IN_A_NAME = (_STOP - _JOINERS) | _VERB_WORDS | {"never"}
#: Reporting verbs a long source name may run on to (present tense, either number).
_SPEAKS_AFTER = re.compile(
    r"\b(?:says|say|shows|show|notes|lists|states|explains|indicates)(?=[ \t]+\w)",
    re.IGNORECASE,
)
_BE = frozenset("is are was were be been being will would can could may might must".split())
#: Source nouns a rate is also counted in ("10p per printed page", "£1 per extra sheet").
_RATE_NOUNS = frozenset("page row line item entry ticket sheet copy card file".split())
#: Reporting verbs that name an attribution even when the noun phrase is unknown ("the
#: shipping manifest says"): only forms that are not also common nouns ("show", "report").
_REPORTING = frozenset(
    "says said states stated notes noted lists listed reports reported mentions mentioned "
    "indicates indicated confirms confirmed returned shows showed suggests suggested flags "
    "flagged highlights highlighted".split()
)
#: A word that opens an amount rather than a source's name ("15", "two", "fifty-five").
_AMOUNT_WORD = re.compile(rf"\d[\w.,/:-]*|(?:{'|'.join(NUMBER_WORDS)}|several|few|many)(?:-\w+)?")
_COUNT_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve most many some few "
    "all both several".split()
)
#: Adverbs that may stand between a source and its reporting verb.
_ADVERBS = frozenset(
    "also still now clearly only even just already actually currently simply always usually "
    "normally definitely further itself".split()
)
#: Spoken fillers before a clause's source ("um the vet log has …", "okay so the stock sheet
#: has …"): skipped, they are no part of its noun phrase.
_FILLERS = frozenset("um umm uh er erm hmm okay ok yeah yep so oh ah".split())
#: What may stand before a weak cue that opens the claim without a comma ("In our staff
#: records Lukas is on reception", "Um, under the guidance they're deferred").
_OPENS_CLAIM = re.compile(
    r"[ \t]*(?:(?:um+|uh|er|erm|so|okay|ok|yeah|yep|oh|and|but|also"
    r"|(?:please|kindly)[ \t]+note[ \t]+that)[ \t]*,?[ \t]*)*",
    re.IGNORECASE,
)
#: Reporting verbs in the progressive ("is showing"): a source speaking, not a fact's verb.
_SAYING = frozenset(
    "saying showing listing stating reporting suggesting indicating noting flagging".split()
)
_PHRASAL_HEAD = frozenset(
    "turn turns turned call calls called set sets point points came comes lays lay rules "
    "rule spells".split()
)
_PHRASAL_TAIL = frozenset("up for out to down".split())
#: A word: letters, digits, and "-", ".", "/" inside it; "&" between letters ("T&Cs").
_TOKEN = re.compile(
    r"[^\W_](?:[\w\-./]|&(?=[^\W_]))*(?:['’]s\b|(?<=n)['’]t\b|(?<=s)['’](?![\w'’]))?"
)
_GAP = re.compile(r"[ \t]*")

Token = tuple[str, int, int]  # (lower-cased word without a possessive 's, start, end)

NamesSource = Callable[[str], bool]


def _tokens(text: str, pos: int, limit: int = 14) -> list[Token]:
    """Word tokens from ``pos`` up to the first clause punctuation (a word's trailing
    full stop ends the run; ``4.1.1`` and ``e.g.`` stay words)."""
    out: list[Token] = []
    i = pos
    while len(out) < limit:
        gap = _GAP.match(text, i)
        j = gap.end() if gap else i
        m = _TOKEN.match(text, j)
        if m is None:
            break
        token = m.group(0)
        stripped = token.rstrip(".")
        end = m.start() + len(stripped)
        low = re.sub(r"['’]s$|(?<=s)['’]$", "", stripped.lower())
        if not low:
            break
        out.append((low, m.start(), end))
        if end < m.end():
            break
        i = end
    return out


def _past_asides(text: str) -> str:
    """``text`` with each short aside in brackets after a noun blanked (same length): "The
    runbook (rev 7) defines …" reads "The runbook defines …"; an aside after a verb stays
    ("The context sheet shows (1045) as …": "shows … as" is the source speaking)."""
    out = text
    if "(" not in text:
        return out
    for m in _ASIDE.finditer(text):
        before = re.search(r"(\w+)\W*$", text[: m.start()])
        if before is not None and before.group(1).lower() in _VERB_WORDS | _BE:
            continue
        out = out[: m.start()] + " " * (m.end() - m.start()) + out[m.end() :]
    return out


def _before_owner(text: str, words: list[Token]) -> list[Token]:
    """``words`` up to an owner after a source noun: with no comma between, a possessive
    after the source opens the claim ("according to the rota Priya's on teas" → "the
    rota")."""
    for i in range(1, len(words)):
        if re.search(r"['’]s$", text[words[i][1] : words[i][2]]) and (
            singular(words[i - 1][0]) in _SOURCE_NOUNS
        ):
            return words[:i]
    return words


def _paired_modifier(tokens: list[Token], i: int, out: list[Token]) -> int:
    """How many tokens from ``i`` an "and" joining two modifiers of one source noun takes
    ("safety and admissions policy": "and admissions policy", 3); 0 when the word at ``i``
    is no such "and" ("the invoice and receipt", "the log and the rota" are two things)."""
    if tokens[i][0] != "and" or not out or out[-1][0] in _JOINERS:
        return 0
    if singular(out[-1][0]) in _SOURCE_NOUNS:
        return 0  # "the policy and rules": the first noun is a source already
    for width in (2, 3):
        tail = tokens[i + 1 : i + width]
        if len(tail) < width - 1 or any(t[0] in _STOP | _DETERMINERS for t in tail):
            return 0
        if any(ch.isdigit() for t in tail for ch in t[0]):
            return 0
        if singular(tail[-1][0]) in _STRONG_NOUNS:
            return width
    return 0


def _noun_phrase(tokens: list[Token]) -> list[Token]:
    """The noun phrase at the start of ``tokens``: a determiner skipped, then words until a
    function word (one ``of``/``for`` joiner allowed inside), at most MAX_NP_WORDS."""
    i = 0
    while i < min(2, len(tokens)) and tokens[i][0] in _DETERMINERS:
        i += 1  # "what the terms say"
    out: list[Token] = []
    joined = False
    while i < len(tokens):
        word = tokens[i][0]
        if word in _JOINERS and out and not joined and i + 1 < len(tokens):
            joined = True
            out.append(tokens[i])
            i += 1
            if tokens[i][0] in _DETERMINERS:
                i += 1
            continue
        modifier = (  # "the before photo's file details": a modifier after a determiner
            word in ("before", "after")
            and not out
            and i > 0
            and tokens[i - 1][0] in _DETERMINERS
            and i + 1 < len(tokens)
            and tokens[i + 1][0] not in _STOP | _DETERMINERS
        )
        if (
            word == "and"
            and out
            and out[-1][0] == "terms"
            and i + 1 < len(tokens)
            and tokens[i + 1][0] == "conditions"
        ):
            out += tokens[i : i + 2]  # "our terms and conditions" is one source
            i += 2
            continue
        paired = _paired_modifier(tokens, i, out)
        if paired:
            # "the safety and admissions policy": two modifiers of one source noun
            out += tokens[i : i + paired]
            i += paired
            continue
        if (word in _STOP or word in _DETERMINERS) and not modifier:
            break
        if len([t for t in out if t[0] not in _JOINERS]) >= MAX_NP_WORDS:
            break
        out.append(tokens[i])
        i += 1
    while out and out[-1][0] in _JOINERS:
        out.pop()
    return out


def _named_source(text: str, pos: int, noun_phrase: str) -> bool:
    """Whether the noun phrase at ``pos`` opens with a determiner or a capital, holds an
    owner or cites a numbered part ("in the fleet table", "in Table 3", "in VX-226's record",
    "under clause 4 of the constitution"); a bare lower-case noun after "in"/"on" is an
    idiom ("on notice", "in stock")."""
    first = _tokens(text, pos, 3)
    return bool(first) and (
        first[0][0] in _DETERMINERS
        or text[first[0][1]].isupper()
        or re.search(r"['’]s\b", noun_phrase) is not None
        or (len(first) == 3 and _cited_number(first, 1))
    )


def _is_verb(tokens: list[Token], k: int) -> int:
    """How many tokens the verb at ``k`` takes (0: not a verb of the lists)."""
    word = tokens[k][0]
    following = [t[0] for t in tokens[k + 1 : k + 3]]
    if word in ("came", "comes", "come") and following == ["back", "with"]:
        return 3  # "the search came back with …"
    if word == "makes" and following[:1] == ["it"]:
        return 1  # "the log makes it 7"; "the ticket makes a good bookmark" is no source
    if word in ("came", "comes", "come") and following[:1] == ["to"]:
        return 0  # "the invoice comes to £40" is an amount, not a source speaking
    if word in _PHRASAL_HEAD and k + 1 < len(tokens) and tokens[k + 1][0] in _PHRASAL_TAIL:
        return 2
    if word in ("does", "do", "did") and following[:1] and following[0] in _SAY_BASE:
        return 2  # "the policy does say …"
    if word in ("is", "are", "was", "were") and following[:1] and following[0] in _SAYING:
        return 2  # "the hut's website is showing …"
    if word in ("does", "do", "did") and following[:1] == ["not"] and following[1:2]:
        if following[1] in _SAY_BASE | _NEGATED_BASE:
            return 3  # "our SOP does not permit …": the negation stays the claim's
    if _NOT.sub("n't", word) in _NEGATED_AUX and following[:1]:
        if following[0] in _SAY_BASE | _NEGATED_BASE:
            return 2  # "our terms don't apply …", "the guide won't let …"
    return 1 if word in _VERB_WORDS else 0


def _closing(text: str, end: int) -> tuple[int, str]:
    """What follows a phrase ending at ``end``: ("," end after the comma and spaces),
    ("." end unchanged: the sentence or text ends), or ("", end)."""
    m = re.compile(r"[ \t]*,[ \t]*").match(text, end)
    if m is not None:
        return m.end(), ","
    m = re.compile(r"[ \t]*:[ \t]*").match(text, end)
    if m is not None:
        return m.end(), ":"
    if re.compile(r"[ \t]*(?:[.!?;)\]\"”]|$)").match(text, end):
        return end, "."
    return end, ""


def _with_context(text: str, start: int, end: int, closing: str) -> tuple[int, int]:
    """Widen a span so that the claim reads without it: a final ``…, according to X.``
    takes its comma and the spaces before it; a parenthetical ``, X says,`` takes the comma
    before it and keeps the one after out."""
    opened = re.search(r"[ \t]*\([ \t]*$", text[:start])
    shut = re.compile(r"[ \t]*\)").match(text, end)
    if opened is not None and shut is not None:
        return opened.start(), shut.end()  # "(per the fleet table)"
    before = re.search(r"[ \t]*,?[ \t]*$", text[:start])
    lead = before.start() if before else start
    has_comma = "," in text[lead:start]
    if closing == "." and start > 0:
        return lead, end
    if closing == "," and has_comma and start > 0:
        stop = text.rfind(",", start, end)
        return lead, stop + 1 if stop > start else end
    return start, end


def _names_by_itself(words: list[Token] | None) -> bool:
    """Whether a noun phrase without a determiner names a source after ``per``: it holds an
    identifier ("ticket JT-5519"), a tool's name ("fleet_lookup") or a strong source noun
    ("company policy"); a bare weak noun ("page", "ticket") is a rate's unit."""
    if not words:
        return False
    if any(any(ch.isdigit() for ch in w[0]) or "_" in w[0] for w in words):
        return True
    return any(singular(w[0]) in _STRONG_NOUNS for w in words)


def _names_a_thing(text: str, tokens: list[Token], words: list[Token]) -> bool:
    """Whether an unknown noun phrase before a reporting verb may be a source: it has a
    determiner or a possessive ("the shipping manifest says", "the file's notes say") and
    no number ("54 of the 62 students have returned", "two families have said" and "Tarnby
    Coaches Ltd confirmed" are what the claim asserts, not where it comes from)."""
    if any(any(ch.isdigit() for ch in w[0]) or w[0] in _COUNT_WORDS for w in words):
        return False
    determined = tokens[0][0] in _DETERMINERS
    possessive = any(re.search(r"['’]s$", text[w[1] : w[2]]) for w in words)
    return determined or possessive


#: A source named as the label of a note: "Appeals db: …", "Local news search -> …" (two or
#: more words before a colon or an arrow at the start of the claim).
_LABEL = re.compile(
    r"^[ \t]*(?:[-*•][ \t]+)?(?P<np>[^\W\d_][\w'’./-]*(?:[ \t]+[\w'’./-]+){0,5}?)"
    # the time or section of the note it labels ("Learner test log 16:55: …", "Main pool
    # test log, 12:15: …", "Our operating procedures, s4 v4.1: …")
    r"(?:,?[ \t]+(?:\d{1,2}:\d{2}|[svSV]?\d[\w.]*|pp?\.[ \t]*\d[\w.]*))*"
    r"[ \t]*(?::[ \t]|->|→)[ \t]*(?=\S)"
)


#: A bracketed citation closing the claim: "(formulary s7.3)", "(see the fee policy)".
_CITED = re.compile(
    r"[ \t]*\([ \t]*(?:see[ \t]+|cf\.?[ \t]+|source:?[ \t]+|from[ \t]+|via[ \t]+|per[ \t]+)?"
    r"(?P<np>[^\W\d_][^(),;]{0,60}?)[ \t]*\)[ \t]*[.!]?[ \t]*$",
    re.IGNORECASE,
)
#: A reporting verb and its source closing the claim: "…, says policy section 3.4."
_SAYS_AFTER = re.compile(
    r"[ \t]*[,;—–][ \t]*(?:says|said|states|stated|notes|noted|reads)[ \t]+"
    r"(?P<np>[^\W\d_][^,;!?]{0,50}?)[ \t]*[.!]?[ \t]*$",
    re.IGNORECASE,
)
#: A numbered part of a source closing the claim: "…, clause 3.3 of our terms."
_PART_OF = re.compile(
    r"[ \t]*[,;—–][ \t]*(?P<np>(?:clause|section|para(?:graph)?|rule|page|item|s\.?|§)"
    r"[ \t]*\d[\w.]*[ \t]+(?:of|in)[ \t]+(?P<src>[^\W\d_][^,;!?]{0,50}?))[ \t]*[.!]?[ \t]*$",
    re.IGNORECASE,
)
#: A source that is clear on the fact: "the policy is crystal clear that …".
_CLEAR = re.compile(
    r"(?:^|(?<=[,;:—–(?!])|(?<=\s-))[ \t]*(?:(?:and|but|so)[ \t]+)?"
    r"(?P<np>(?:the|this|our|your|their|its|[A-Za-z]+['’]s)[ \t]+[^,;:.!?—–]{1,50}?)"
    r"(?:[ \t]+(?:is|was|are|were)|['’]s)[ \t]+(?:(?:crystal|very|quite|pretty|perfectly|"
    r"totally|absolutely|really|dead)[ \t]+)?(?:clear|explicit|unambiguous)"
    r"(?:[ \t]+(?:that|on[ \t]+(?:this|that))|[ \t]*,)[ \t]*",
    re.IGNORECASE,
)


def _names_strongly(noun_phrase: str) -> bool:
    """Whether a label's noun phrase names a source beyond doubt: a strong head noun of a
    family (numbers aside: "Policy doc s3.2"), a multi-word source name or a family marker
    ("File metadata", "Appeals db", "Local news search"); "Match result" and "Storage fee"
    label a fact, not a source."""
    words = [w for w in _np_words(noun_phrase) if not any(ch.isdigit() for ch in w)]
    text = " ".join(words)
    return (
        any(singular(_EXPAND.get(w, w)) in _STRONG_NOUNS for w in words[-2:])
        or any(p in text for p in PHRASES)
        or any(w in MARKERS for w in words)
    )


#: Who or what a rule applies to, opening the claim after its source ("Under the tower rules
#: anyone under 16 needs …", "Per our terms no refund is given").
_INDEFINITE = frozenset(
    "anyone anybody everyone everybody nobody someone somebody all any each every no none "
    "only".split()
)


def _cited_number(part: list[Token], j: int) -> bool:
    """Whether the number at ``part[j]`` numbers a part of the source that follows it
    ("clause 4 of the constitution", "paragraph 7.3 of the direction"): the number of a part
    noun, with "of" after it."""
    return (
        0 < j < len(part) - 1
        and part[j - 1][0] in _PART_NOUNS
        and part[j + 1][0] == "of"
        and re.fullmatch(r"\d+(?:\.\d+)*[a-z]?", part[j][0]) is not None
    )


def _opening_source(
    text: str,
    words: list[Token],
    following: list[Token],
    names_source: NamesSource,
    source_noun: NamesSource,
) -> list[Token] | None:
    """The longest start of ``words`` (the noun phrase after a weak cue that opens the
    claim with no comma) that ends on a source's noun and resolves, with no number in it
    (the values after it are the claim's), followed by what opens the claim's own clause — a
    name, a pronoun, a determiner, a number or a subject before its verb ("Under our terms
    dematting is …"), not a function word or a noun that goes on with the phrase ("In our
    staff records Lukas is …" → "our staff records"; "In the records office Lukas …" names
    no source; "In the record as …" is another shape)."""
    for n in range(len(words), 0, -1):
        part = words[:n]
        noun = text[part[0][1] : part[-1][2]]
        if part[-1][0] in _JOINERS or any(
            ch.isdigit() for j, w in enumerate(part) for ch in w[0] if not _cited_number(part, j)
        ):
            continue
        if singular(part[-1][0]) not in _SOURCE_NOUNS and not source_noun(part[-1][0]):
            continue
        nxt = following.index(part[-1]) + 1
        if (
            nxt + 2 < len(following)
            and following[nxt][0] == "for"
            and following[nxt + 1][0][0].isdigit()
        ):
            # "In the booking database for 19.03.2033 we had …": the date stays the claim's
            nxt += 2
        if nxt >= len(following) or (
            following[nxt][0] in _STOP | _JOINERS and following[nxt][0] not in _INDEFINITE
        ):
            continue
        after = following[nxt]
        verb = following[nxt + 1][0] if nxt + 1 < len(following) else ""
        if not (
            after[0] in _PRONOUNS | _DETERMINERS | _INDEFINITE
            or text[after[1]].isupper()
            or after[0][0].isdigit()
            or verb in _BE | {"has", "have", "had"}
        ):
            continue  # "In the records office …": the noun goes on, it is no source
        if names_source(noun) and source_noun(noun):
            return part
    return None


#: What may follow a source's noun phrase after "it says in/on": the claim itself.
_NP_ENDS = re.compile(
    r"[ \t]*(?:[,:;.!?—–-]|$)|[ \t]+(?:that|you|we|they|he|she|it|i|there|your|our|their|"
    r"his|her|the|a|an)\b",
    re.IGNORECASE,
)
_A_BEFORE = re.compile(r"(?:^|\W)an?\s+$", re.IGNORECASE)


def _no_row(text: str, words: list[Token]) -> bool:
    """Whether the noun phrase ``words`` is a "row" that names no table: "two refusals in a
    row" (one after another) or a street ("in Mill Row", "Savile Row")."""
    if words[-1][0] != "row":
        return False
    if len(words) == 1 and _A_BEFORE.search(text[: words[0][1]]):
        return True
    return (
        len(words) >= 2
        and text[words[-1][1] : words[-1][2]] == "Row"
        and text[words[-2][1] : words[-2][1] + 1].isupper()
    )


def find_spans(
    text: str,
    names_source: NamesSource,
    names_tool: NamesSource | None = None,
    names_last: NamesSource | None = None,
) -> list[Span]:
    """Every attribution phrase of ``text`` by shape (see the module docstring), in text
    order, not overlapping. ``names_source(noun_phrase)`` says whether a noun phrase names
    a source (weak cues and content verbs need one; the resolver decides);
    ``names_tool(noun_phrase)`` whether it names one of the trace's tools by its name
    (:func:`names_a_tool`), which a weak cue, a content verb or a label may stand on as on a
    source noun; ``names_last(word)`` whether a bare source noun is the head of a tool's
    name (:func:`heads_a_tool`), which lets it stand with a content verb ("log has …")."""
    out: list[Span] = []

    def source_noun(noun: str) -> bool:
        return names_a_source_noun(noun) or (names_tool is not None and names_tool(noun))

    def phrase(words: list[Token]) -> str:
        return text[words[0][1] : words[-1][2]]

    def add(start: int, end: int, words: list[Token], shape: str, strong: bool) -> None:
        """Keep the span [start, end) whose noun phrase is ``words``, unless it is empty or
        overlaps one already kept."""
        if end <= start or any(start < s.end and s.start < end for s in out):
            return
        if _no_row(text, words):
            return
        out.append(Span(start, end, phrase(words), words[0][1], words[-1][2], shape, strong))

    def longest_resolving(words: list[Token]) -> list[Token] | None:
        for n in range(len(words), 0, -1):
            part = words[:n]
            if part[-1][0] in _JOINERS:
                continue
            joins = [i for i, t in enumerate(part) if t[0] in _LOCATIVE and i > 0]
            if joins and not names_source(phrase(part[joins[0] + 1 :])):
                continue  # "the record in March" is "the record"
            if names_source(phrase(part)):
                return part
        return None

    for m in _STRONG_CUE.finditer(text):
        tokens = _tokens(text, m.end())
        words = _before_owner(text, _noun_phrase(tokens))
        if not words:
            continue
        has_det = bool(tokens) and tokens[0][0] in _DETERMINERS
        resolved = longest_resolving(words)
        it_says = m.group("cue").lower().startswith("it")  # "it says in/on …"
        if it_says and (resolved is None or not _NP_ENDS.match(text, resolved[-1][2])):
            # "it says on the tin", "it showed in the table tennis final": a source noun
            # phrase that ends where the claim begins ("that", a comma, "you phoned …")
            continue
        if (
            m.group("cue").lower() == "per"
            and not has_det
            and resolved is not None
            and len(resolved) > 1
            and resolved[1][0] in _JOINERS
            and resolved[0][0] not in _PART_NOUNS
            and singular(resolved[0][0]) not in _LEXICON_NOUNS
            and not (names_tool is not None and names_tool(resolved[0][0]))
        ):
            # "twice per patient in each calendar year": "patient" is a rate's unit ("per
            # section 7 of the manual" cites a part)
            continue
        if m.group("cue").lower() == "per" and not has_det and not _names_by_itself(resolved):
            # "per hour", "£2 per page" are rates; "per ticket JT-5519" is a source, and so is
            # a bare source noun phrase of two or more words that names a tool ("per snow
            # report", "per grooming log") or whose head no rate is counted in
            if not (
                resolved is not None
                and len(resolved) >= 2
                and source_noun(phrase(resolved))
                and (
                    (names_tool is not None and names_tool(phrase(resolved)))
                    or singular(resolved[-1][0]) not in _RATE_NOUNS
                )
            ):
                continue
        np = resolved or words
        # "according to the record and a web search": each source is a phrase of its own
        rest = tokens[tokens.index(np[-1]) + 1 :]
        if len(rest) > 1 and rest[0][0] == "and":
            second = longest_resolving(_noun_phrase(rest[1:]) or [])
            if second:
                end2, closing2 = _closing(text, second[-1][2])
                add(
                    np[-1][2],
                    end2 if closing2 == "," else second[-1][2],
                    second,
                    "cue_before",
                    True,
                )
        end, closing = _closing(text, np[-1][2])
        start, end = _with_context(text, m.start(), end, closing)
        if closing == "":
            end = np[-1][2]
            that = _THAT.match(text, end)
            if that is not None and it_says:
                end = that.end()  # "It says in the policy that …": "that" goes with it
        add(start, end, np, "cue_before", True)

    def closing_source(
        m: re.Match[str], start: int, end: int, shape: str, *, numbered: bool = False
    ) -> None:
        """Add [start, end) when the noun phrase of ``m``'s ``np`` group names a source
        (``numbered``: a part's number closing it is no source, "(formulary s7.3)")."""
        words = [t for t in _noun_phrase(_tokens(text, m.start("np"))) if t[2] <= m.end("np")]
        while numbered and words and any(ch.isdigit() for ch in words[-1][0]):
            words = words[:-1]
        resolved = longest_resolving(words) if words else None
        if resolved is not None and source_noun(phrase(resolved)):
            add(start, end, resolved, shape, True)

    # a citation in brackets that closes the claim: "… (formulary s7.3)", "(see the policy)"
    cited = _CITED.search(text)
    if cited is not None:
        closing_source(cited, cited.start(), cited.end(), "cue_before", numbered=True)
    # "…, says policy section 3.4.": the verb and its source close the claim
    says = _SAYS_AFTER.search(text)
    if says is not None:
        closing_source(says, says.start(), says.end(), "cue_before")
    # "no booze at sea, clause 3.3 of our terms": a part of a source closes the claim
    part_of = _PART_OF.search(text)
    if (
        part_of is not None
        and source_noun(part_of.group("src"))
        and names_source(part_of.group("src"))
    ):
        # the source after "of" names one itself ("section 114 of the stadium" does not)
        closing_source(part_of, part_of.start(), part_of.end(), "cue_before")
    # "the policy is (crystal) clear that …": the noun phrase and its judgement go
    for clear in _CLEAR.finditer(text):
        closing_source(clear, clear.start("np"), clear.end(), "verb_after")
    label = _LABEL.match(text)
    if label is not None:
        words = [t for t in _tokens(text, label.start("np")) if t[2] <= label.end("np")]
        # a title ("American Greetings Properties: …") is a name, not a note's label
        alpha = [t for t in words if text[t[1]].isalpha() and not any(c.isdigit() for c in t[0])]
        title = len(alpha) >= 2 and all(text[t[1]].isupper() for t in alpha)
        np = _noun_phrase(words)
        # a noun phrase, no verb in it ("The van has one rule: …" is a claim)
        whole = (
            bool(np)
            and np[-1][2] == words[-1][2]
            and not any(_is_verb(np, k) for k in range(1, len(np)))
        )
        # a time or section after the name stays the claim's ("… log 16:55: …")
        numbered = label.group(0)[label.end("np") - label.start() :].strip(" \t:,")
        # one word labels only with its section ("Procedures, 3.5: …"; "Note: …" is none)
        single = len(np) == 1 and bool(numbered) and singular(np[0][0]) in _STRONG_NOUNS
        named = (len(np) >= 2 or single) and whole and not title
        resolved = longest_resolving(np) if named else None
        if resolved is not None and (
            _names_strongly(phrase(resolved))
            or (names_tool is not None and names_tool(phrase(resolved)))
        ):
            # a one-word label's number is its own ("Record 2: …", "Procedures, 3.5: …")
            keep = numbered and not single
            add(0, resolved[-1][2] if keep else label.end(), resolved, "label", True)
    for m in _WEAK_CUE.finditer(text):
        following = _tokens(text, m.end())
        if following and _AMOUNT_WORD.fullmatch(following[0][0]):
            continue  # "within 15 minutes", "in fifty-five minutes": an amount, no source
        words = _before_owner(text, _noun_phrase(following))
        resolved = longest_resolving(words) if words else None
        cue = m.group("cue").lower()
        if cue == "on" and re.match(r"file\b", text[m.end() :], re.IGNORECASE):
            continue  # "two appeals on file": recorded, no source named
        opens = _OPENS_CLAIM.fullmatch(text, 0, m.start()) is not None
        if cue == "off" and re.match(r"the[ \t]+(?:record|books)\b", text[m.end() :], re.I):
            continue  # "off the record", "off the books": idioms
        if cue in ("by", "off") and not opens:
            # "signed by the manager": an agent; "By the house rules, …", "Off the EXIF it's
            # …": a source
            continue
        looked = _LOOKED.match(cue) is not None
        # "Under the procedures at 6.5, …": the part cited goes with its source
        cited = _CITED_PART.match(text, resolved[-1][2]) if resolved else None
        np_end = cited.end() if cited else resolved[-1][2] if resolved else 0
        closing = _closing(text, np_end)[1] if resolved else ""
        opener = (
            _opening_source(text, words, following, names_source, source_noun)
            if not closing
            and cue in ("in", "on", "under", "by", "from", "off")
            and opens
            and words
            and _named_source(text, m.end(), phrase(words))
            else None
        )
        if opener is not None:
            # "In our staff records Lukas is on reception", "Under the guidance they're
            # deferred": a source noun phrase opening the claim, what follows is the claim
            add(m.start(), opener[-1][2], opener, "weak_cue", False)
            continue
        if resolved is None or not (looked or source_noun(phrase(resolved))):
            continue  # "I checked the invoice": the verb says it is a source
        end, closing = _closing(text, np_end)
        that = _THAT.match(text, resolved[-1][2])
        if not closing and that is not None and _CONFIRMED.search(text, 0, m.start()):
            # "It has been confirmed from the shipments database that …": the source and its
            # "that" go; the frame is no part of the claim either (see decompose)
            add(m.start(), that.end(), resolved, "weak_cue", False)
            continue
        if looked:
            opens = _LOOK_OPENS.search(text[: m.start()]) is not None
            if not cue.startswith(("i", "we")) and not opens:
                continue  # "the bike was checked the day before" states no source
            joined = re.compile(
                r"(?:[ \t]*\([^()]*\))?(?:,?[ \t]+and[ \t]+(?:found[ \t]+(?:that[ \t]+)?)?"
                r"|[ \t]+[-–—][ \t]+|[ \t]*(?:->|→)[ \t]*)"
            ).match(text, resolved[-1][2])
            if not closing and joined is not None:
                # "I checked the invoice and the total is £40": the rest is the claim
                end, closing = joined.end(), ","
            framed = _LOOKED_FOR.match(text, resolved[-1][2])
            if framed is not None and (
                len(framed.group(0).split()) > 5 or _SAID_IN_TAIL.search(framed.group(0))
            ):
                framed = None  # "I checked the invoice the total is £40, …" says a fact
            if not closing and framed is not None:
                # "Looking at the staff rota for Thursday the 12th, we had three on": what
                # the look was for goes with it
                end, closing = framed.end(), ","
        if not closing and cue in ("in", "on"):
            as_follows = re.compile(r"[ \t]+as\b").match(text, resolved[-1][2])
            entered = _ENTERED.search(text, 0, m.start()) is not None
            # "Last game of the day in the bookings database was …": a subject said of a
            # source's rows, before its verb (a strong source noun only)
            subject = (
                cue == "in"
                and _FIRST_OR_LAST.search(text, 0, m.start()) is not None
                and _DEFINITE.match(text, m.end())
                and _BE_AFTER.match(text, resolved[-1][2])
                and _names_strongly(phrase(resolved))
            )
            if (as_follows is not None or entered or subject) and _named_source(
                text, m.end(), phrase(resolved)
            ):
                # "VX-226 is listed in the fleet table as due": the phrase goes, "as" stays;
                # with no determiner, name or owner it is an idiom ("on notice as GBP 303");
                # "Six structures are listed in the register on the B4172": a participle of
                # entering says the phrase is where the fact is written
                lead = re.search(r"[ \t]*$", text[: m.start()])
                start = lead.start() if lead else m.start()
                add(start, resolved[-1][2], resolved, "weak_cue", False)
            continue
        aside = re.search(
            r"(?:[,(—–]|\s-|\b(?:straight|right|directly|direct|fresh|taken|pulled|all))[ \t]*$",
            text[: m.start()],
            re.IGNORECASE,
        )
        if not closing or (closing == "." and m.group("cue").lower() == "from" and not aside):
            # "the page was from the physics paper." is a fact, not a source; "…, straight
            # from the screening schedule!" says where the fact comes from
            continue
        # "was confirmed by the record": the participle is the claim's, "by X" the source's
        cue_start = m.start() + (cue.rfind(" by") + 1 if cue.endswith(" by") else 0)
        looker = _LOOK_SUBJECT.search(text, 0, cue_start)  # matches, if only empty
        if looked and looker is not None:  # "I'm looking at the lab log, …": "I'm" goes too
            cue_start = looker.start()
        start, end = _with_context(text, cue_start, end, closing)
        if closing == "." and start > 0:
            end = resolved[-1][2]
        lead_in = text[:start]
        if closing == ":" and len(lead_in.split()) <= 3 and not re.search(r"[.!?;:]", lead_in):
            start = 0  # "That fits the manual: …" — the whole preface is the attribution
        add(start, end, resolved, "weak_cue", False)
    clause_starts = {m.end() for m in _CLAUSE_START.finditer(text)}
    # a source that speaks after a frame with no comma ("At 03:36 UT the WX-2 record shows",
    # "It looks like her appointment record shows"): a determiner inside the clause opens
    # it, and only a reporting verb after a source noun makes it an attribution
    inside = {m.start() for m in _INNER_DETERMINER.finditer(text)} - clause_starts
    # only signs since the last clause mark ("! 🎉 The terms …"): a clause start after all
    opening = {p for p in inside if not re.search(r"\w", re.split(r"[.!?;:,—–(]", text[:p])[-1])}
    clause_starts |= opening
    inside -= opening
    # a short aside in brackets between a source and its verb is read past ("The runbook
    # (rev 7) defines …", "Her record (BK-2291) shows …"); offsets stay the text's
    past_asides = _past_asides(text)
    for pos in sorted(clause_starts | inside):
        within = pos in inside
        tokens = _tokens(past_asides, pos)
        said_first = 0
        while said_first < len(tokens) - 1 and tokens[said_first][0] in _FILLERS:
            said_first += 1
        if said_first:  # "um the vet log has …": the filler is no part of the source's name
            pos, tokens = tokens[said_first][1], tokens[said_first:]
        if not tokens:
            continue
        skip = 1 if tokens[0][0] in _DETERMINERS else 0

        def up_to(i: int, tokens: list[Token] = tokens) -> bool:
            """ "allows up to two dogs": an amount's bound, no phrasal verb ("sets up")."""
            return tokens[i][0] == "up" and i + 1 < len(tokens) and tokens[i + 1][0] == "to"

        chosen: tuple[list[Token], int, int, bool] | None = None
        fallback: tuple[list[Token], int, int, bool] | None = None
        for k in range(skip + 1, min(len(tokens), skip + MAX_NP_WORDS + 2)):
            width = _is_verb(tokens, k)
            if not width:
                conditions = (
                    tokens[k][0] == "and"
                    and tokens[k - 1][0] == "terms"
                    and k + 1 < len(tokens)
                    and tokens[k + 1][0] == "conditions"
                )  # "Our terms and conditions say …": one source
                if tokens[k][0] in _STOP and tokens[k][0] not in _JOINERS and not conditions:
                    break
                continue
            nxt = tokens[k + width][0] if k + width < len(tokens) else ""
            # "the loan record shows", "Inspection Record IR-2291 states": a source noun
            # before a verb (its identifier between) is a noun
            named_next = (
                k + width + 1 < len(tokens)
                and any(ch.isdigit() for ch in nxt)
                and bool(_is_verb(tokens, k + width + 1))
            )
            if (
                (
                    nxt
                    and (_is_verb(tokens, k + width) or named_next)
                    and singular(tokens[k][0]) in _SOURCE_NOUNS
                )
                or (tokens[k][0] in ("show", "shows", "showed", "shown") and nxt == "as")
                or nxt in _BE
                or (width == 1 and nxt in ("up", "off", "out", "down") and not up_to(k + 1))
                or (tokens[k][0] in ("has", "have", "had") and nxt == "been")
            ):
                continue  # "the loan record shows": "record" is a noun; "the show is"
            # an adverb between the source and its verb ("the wh csv also flags …")
            adv = 1 if k - 1 > skip and tokens[k - 1][0] in _ADVERBS else 0
            words = _noun_phrase(tokens[: k - adv])
            if not words or words[-1][2] != tokens[k - 1 - adv][2]:
                break
            if any(w[0] in _PRONOUNS for w in words):
                break  # "Hope you find …" names no source
            # "does not permit": a content verb, its negation is the claim's
            negated = (width == 3 and tokens[k + 1][0] == "not") or (
                width == 2 and _NOT.search(tokens[k][0]) is not None
            )  # "won't let": the same
            say = (width >= 2 and not negated) or tokens[k][0] in _SAY_WORDS
            noun = phrase(words)
            if within and not (
                tokens[k][0] in _SPEAKS
                and (nxt not in _NOT_AN_OBJECT or _closing(text, tokens[k][2])[1] == ",")
                and source_noun(noun)
                and names_source(noun)
            ):
                # "has the coach booking confirmed": a participle is the claim's; "if you
                # need the condition reports too": a noun
                break
            if (
                not say
                and skip == 0
                and len(words) == 1
                and singular(words[0][0]) not in _STRONG_NOUNS
                and words[0][0] not in MARKERS
                and not (names_last is not None and names_last(words[0][0]))
            ):
                # "Page limit for …": a bare weak noun and a verb name no source; "log has
                # J. Tregear on deck" names get_trip_log by its head; "yelp has us at 4.7"
                # names a site
                break
            if names_source(noun) and (say or source_noun(noun)):
                chosen = (words, k, width, say)
                break
            if (
                fallback is None
                and tokens[k][0] in _REPORTING
                and _names_a_thing(text, tokens, words)
            ):
                fallback = (words, k, width, say)
        pick = chosen or fallback
        if pick is None:
            continue
        words, k, width, say = pick
        verb_end = tokens[k + width - 1][2]
        as_form = bool(re.search(r"\bas[ \t]*$", text[:pos], re.IGNORECASE))
        start = pos
        if as_form:
            start = text[:pos].lower().rstrip().rfind("as")
        put_it = re.compile(r"[ \t]+it\b").match(text, verb_end) if as_form else None
        if put_it is not None and _closing(text, put_it.end())[1] == ",":
            # "As the code of conduct puts it, …": the source and its "puts it" go
            verb_end, say = put_it.end(), True
        tail = re.compile(r"[ \t]+that\b[ \t]*|[ \t]*:[ \t]*|[ \t]+").match(text, verb_end)
        after, closing = _closing(text, verb_end)
        final = bool(closing) and bool(re.search(r",[ \t]*$", text[:start]))
        if not say and not final:
            # a content verb carries meaning ("the rules allow …", "the guide warns …"):
            # only the source noun phrase is the attribution
            verb_start = tokens[k][1]
            if closing == ".":
                continue
            add(start, verb_start, words, "verb_after", False)
            continue
        if closing:
            start, end = _with_context(text, start, after, closing)
            if closing == ".":
                end = verb_end
        else:
            end = tail.end() if tail else verb_end
        add(start, end, words, "verb_after", say)
    for look in _LOOK_ONLINE.finditer(text):
        # "I had a look online and …", "Upon searching the web I find that …": the writer's
        # own look, opening its sentence ("My mum searched online and bought a kettle" and
        # "After looking online, she bought a bike" state no source)
        if _LOOK_OPENS.search(text[: look.start()]) is None:
            continue
        if look.group("upon") is not None and look.group("found") is None:
            continue
        where = [t for t in _tokens(text, look.start("where")) if t[2] <= look.end("where")]
        if where and names_source(phrase(where[-1:])):
            add(look.start(), look.end(), where[-1:], "weak_cue", True)
    for held in _HAVE_OPEN.finditer(text):
        # the writer's own look, opening its sentence, at a source noun phrase it resolves
        # ("I've got Marigold Jean's licence record up, and she's showing as valid")
        if _LOOK_OPENS.search(text[: held.start()]) is None:
            continue
        np = [t for t in _tokens(text, held.start("np")) if t[2] <= held.end("np")]
        named = bool(np) and (
            _names_strongly(phrase(np)) or (names_tool is not None and names_tool(phrase(np)))
        )
        if named and names_source(phrase(np)):
            add(held.start(), held.end(), np, "weak_cue", True)
    speaks = list(_SPEAKS_AFTER.finditer(text))
    unbracketed = _BRACKETED.sub(lambda b: " " * len(b.group()), text) if speaks else text
    bare_starts = {m.end() for m in _CLAUSE_START.finditer(unbracketed)} | {0}
    for verb in speaks:
        # a source whose name runs on before its reporting verb: "The caption on her before
        # photo says …", "The file properties for image 47 (…) show …", "the incident record
        # for CMRT-2033-038 on Scarth Fell shows …"
        pos = max(p for p in bare_starts if p <= verb.start())
        head = _noun_phrase(_tokens(text, pos))
        if not head or head[0][1] - pos > 12:
            continue
        head = head[: next((i for i, t in enumerate(head) if t[0] in _JOINERS), len(head))]
        if not head:
            continue
        between = unbracketed[head[-1][2] : verb.start()]
        gap = between.split()
        if (
            not gap
            or gap[0].lower() not in _JOINERS
            or len(gap) > 10
            or any(
                (w.lower() in _NOT_IN_A_NAME or _NOT.search(w))
                # "her before photo": a modifier after a determiner
                and not (w.lower() in ("before", "after") and gap[i - 1].lower() in _DETERMINERS)
                for i, w in enumerate(gap)
            )
            or re.search(r"[,;:.!?]\s", between)
        ):
            continue
        strong = singular(head[-1][0]) in _STRONG_NOUNS or (
            names_tool is not None and names_tool(phrase(head))
        )
        if strong and names_source(phrase(head)):
            # only the source's own name is the attribution: what the joined phrases say
            # ("for CMRT-2033-038 on Scarth Fell") names which record, and stays the claim's
            add(pos, head[-1][2], head, "verb_after", True)
    for v in _VERSION.finditer(text):
        # a source named with its version states it: "that's all off v4.1 of the terms",
        # "rev 7.2 of the manual"; the version stays the claim's (a wrong version is a wrong
        # value)
        of = _OF.match(text, v.end())
        of_np = _noun_phrase(_tokens(text, of.end())) if of is not None else []
        if of_np and longest_resolving(of_np) == of_np:
            add(v.end(), of_np[-1][2], of_np, "version", False)
    out.sort(key=lambda s: s.start)
    return out
