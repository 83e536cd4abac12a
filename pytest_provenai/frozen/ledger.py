"""The citation resolver: does a citation's quoted text resolve to retained original bytes?

A citation is a JSON object ``{"id": str, "digest": str, "range": [start, end]}`` and,
optionally, ``"quote": str``. ``range`` counts **bytes** of the cited entry's UTF-8 text,
end-exclusive (``start < end``). :func:`resolve` checks it against a fixture's ledger (its
originals and generated aids) and gives exactly one of :data:`OUTCOMES`, first failing check
first:

1. ``malformed_citation`` -- the object is not a mapping, has a key other than id / digest /
   range / quote, or a key it has holds the wrong type or value (id not a non-empty string;
   digest not 64 lowercase hex; range not two integers -- booleans are not integers -- with
   ``0 <= start < end``; quote not a string). A key that is *absent* only counts when its
   check is reached: ``{"id": "aid-v1"}`` is a ``generated_target``, ``{"id": "src-v1"}``
   (an original, no digest) is ``malformed_citation``.
2. ``unresolved_id`` -- no ledger entry has that id.
3. ``generated_target`` -- the entry is a generated aid: generated text is never evidence.
4. ``snapshot_mismatch`` -- the citation's digest is not the sha256 of the retained bytes (or
   the entry's own pinned sha256 no longer matches its text).
5. ``unresolved_range`` -- ``end`` lies past the entry's bytes, or an offset falls inside a
   multi-byte UTF-8 character.
6. ``quote_match`` / ``quote_mismatch`` -- the quoted text compared with the bytes in range
   under the normalisation policy.

The quoted text comes from the ``quote`` argument or the citation's ``"quote"`` key (both
given and different: ``malformed_citation``). A citation that reaches step 6 without any
quoted text is ``malformed_citation``: a quotation check needs the words it checks, and a
locator alone never counts as a match.

Normalisation policies (:data:`POLICIES`, name -> version recorded in every
:class:`Resolution`):

* ``exact`` (``quote-exact/1``, the default): the quote's UTF-8 bytes must equal the bytes in
  range.
* ``nfc_ws`` (``quote-nfc-ws/1``): both sides are put in Unicode NFC (canonical composition
  only), then every run of whitespace (``str.isspace``) becomes one space and leading and
  trailing whitespace is dropped. Compatibility normalisation (NFKC/NFKD) is never applied:
  "ﬁ" does not match "fi", fullwidth "１" does not match "1".

:func:`resolve` never raises on a citation or quote, whatever their types; an unknown policy
name is a ``ValueError`` (a configuration error, not a citation outcome).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pytest_provenai.frozen.model import LedgerEntry

__all__ = [
    "CITATION_KEYS",
    "OUTCOMES",
    "POLICIES",
    "Resolution",
    "locate",
    "normalise",
    "resolve",
]

OUTCOMES = (
    "unresolved_id",
    "generated_target",
    "snapshot_mismatch",
    "unresolved_range",
    "quote_match",
    "quote_mismatch",
    "malformed_citation",
)

#: Normalisation policy name -> its version string (recorded with every resolution).
POLICIES: Mapping[str, str] = {"exact": "quote-exact/1", "nfc_ws": "quote-nfc-ws/1"}

#: The keys a citation object may have (``quote`` is optional).
CITATION_KEYS = ("id", "digest", "range", "quote")

_HEX64_RE = re.compile(r"[0-9a-f]{64}")
_SHOWN = 60


@dataclass(frozen=True)
class Resolution:
    """The outcome of one citation, with everything needed to review it.

    ``raw_quote`` / ``target_raw`` are the quoted text and the cited bytes as given (bytes
    decoded as UTF-8); ``normalised_quote`` / ``target_normalised`` are what the policy
    compared. Fields a check never reached are None.
    """

    outcome: str
    reason: str
    policy: str
    policy_version: str
    citation_id: str | None = None
    origin: str | None = None  # "original" / "generated": the kind of the entry the id names
    range: tuple[int, int] | None = None
    raw_quote: str | None = None
    normalised_quote: str | None = None
    target_raw: str | None = None
    target_normalised: str | None = None

    @property
    def ok(self) -> bool:
        """True when the quote resolves to the original bytes it claims."""
        return self.outcome == "quote_match"

    def as_dict(self) -> dict[str, Any]:
        """A JSON-able dict (range as a list) for records."""
        out = asdict(self)
        out["range"] = list(self.range) if self.range is not None else None
        return out


def _check_policy(policy: Any) -> str:
    if not isinstance(policy, str) or policy not in POLICIES:
        raise ValueError(
            f"unknown normalisation policy {policy!r}; expected one of {', '.join(POLICIES)}"
        )
    return POLICIES[policy]


def normalise(text: str, policy: str = "exact") -> str:
    """``text`` as the policy compares it (see the module docstring)."""
    _check_policy(policy)
    if policy == "exact":
        return text
    return " ".join(unicodedata.normalize("NFC", text).split())


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_int(value: Any) -> bool:
    return type(value) is int  # bool is an int subclass, and not an offset


def _shape_problem(citation: Any) -> str | None:
    """Why the citation object is malformed, judging only what it has; None if well-formed."""
    if not isinstance(citation, Mapping):
        return (
            f"a citation must be an object with id, digest and range, got {type(citation).__name__}"
        )
    for key in citation:
        if key not in CITATION_KEYS:
            return (
                f"unexpected key {_shown(key)}: a citation has only "
                f"{', '.join(CITATION_KEYS)} (quote optional)"
            )
    if "id" not in citation:
        return "missing id: a citation names the ledger entry it cites"
    cid = citation["id"]
    if not isinstance(cid, str) or not cid:
        return f"id must be a non-empty string, got {_shown(cid)}"
    if "digest" in citation:
        digest = citation["digest"]
        if not isinstance(digest, str) or not _HEX64_RE.fullmatch(digest):
            return (
                "digest must be the sha256 of the cited entry's UTF-8 bytes as 64 lowercase "
                f"hex characters, got {_shown(digest)}"
            )
    if "range" in citation:
        problem = _range_problem(citation["range"])
        if problem is not None:
            return problem
    if "quote" in citation:
        quote = citation["quote"]
        if not isinstance(quote, str):
            return f"quote must be a string, got {_shown(quote)}"
        if not _encodable(quote):
            return "quote is not valid Unicode text (it holds a lone surrogate)"
    return None


def _range_problem(value: Any) -> str | None:
    if not isinstance(value, list | tuple) or len(value) != 2:
        return f"range must be [start, end] (two byte offsets), got {_shown(value)}"
    start, end = value
    if not (_is_int(start) and _is_int(end)):
        return f"range offsets must be integers, got {_shown(value)}"
    if start < 0 or end < 0:
        return f"range offsets must not be negative, got {_shown(value)}"
    if start > end:
        return f"range is inverted (start > end), got {_shown(value)}"
    if start == end:
        return f"range is empty (end is exclusive, so start < end), got {_shown(value)}"
    return None


def resolve(
    citation: Any,
    ledger: Sequence[LedgerEntry],
    quote: str | None = None,
    *,
    policy: str = "exact",
) -> Resolution:
    """Resolve ``citation`` against ``ledger`` (see the module docstring for the order of
    checks, the outcomes and the policies). Never raises on a bad citation or quote: those
    give ``malformed_citation`` with a reason. Raises ``ValueError`` for an unknown policy or
    a ledger with two entries of one id (a fixture the loader would have refused)."""
    version = _check_policy(policy)
    entries: dict[str, LedgerEntry] = {}
    for item in ledger:
        if item.id in entries:
            raise ValueError(f"ledger has two entries with id {item.id!r}")
        entries[item.id] = item

    def result(outcome: str, reason: str, **fields: Any) -> Resolution:
        return Resolution(outcome, reason, policy, version, **fields)

    problem = _shape_problem(citation)
    if problem is None and quote is not None:
        if not isinstance(quote, str):
            problem = f"quoted text must be a string, got {type(quote).__name__}"
        elif not _encodable(quote):
            problem = "quoted text is not valid Unicode text (it holds a lone surrogate)"
        elif "quote" in citation and citation["quote"] != quote:
            problem = "the citation's quote and the quote given differ; give one"
    if problem is not None:
        return result("malformed_citation", problem)
    assert isinstance(citation, Mapping)
    cid: str = citation["id"]
    said: str | None = quote if quote is not None else citation.get("quote")
    seen: dict[str, Any] = {"citation_id": cid}

    entry = entries.get(cid)
    if entry is None:
        known = ", ".join(sorted(entries)) or "none"
        return result(
            "unresolved_id", f"no ledger entry has id {_shown(cid)} (ids: {known})", **seen
        )
    seen["origin"] = entry.kind
    if entry.kind != "original":
        parent = f" of original {entry.parent!r}" if entry.parent else ""
        what = f"a generated {entry.aid_kind} aid" if entry.aid_kind else f"a {entry.kind} entry"
        return result(
            "generated_target",
            f"{cid!r} is {what}{parent}: generated text is never evidence; cite the original",
            **seen,
        )

    if "digest" not in citation:
        return result(
            "malformed_citation", "missing digest: pin the cited original's sha256", **seen
        )
    if not _encodable(entry.text):
        return result(
            "snapshot_mismatch", f"the retained text of {cid!r} is not valid Unicode", **seen
        )
    data = entry.text.encode("utf-8")
    retained = hashlib.sha256(data).hexdigest()
    if entry.sha256 != retained:
        return result(
            "snapshot_mismatch",
            f"the ledger pins {cid!r} at sha256 {entry.sha256[:12]}… but its retained text "
            f"hashes to {retained[:12]}…",
            **seen,
        )
    if citation["digest"] != retained:
        return result(
            "snapshot_mismatch",
            f"the citation pins sha256 {citation['digest'][:12]}… but the retained "
            f"{cid!r} (version {entry.version}) is {retained[:12]}…",
            **seen,
        )

    if "range" not in citation:
        return result("malformed_citation", "missing range: give [start, end) byte offsets", **seen)
    start, end = citation["range"]
    seen["range"] = (start, end)
    if end > len(data):
        return result(
            "unresolved_range",
            f"range [{start}, {end}) ends past the {len(data)} bytes of {cid!r}",
            **seen,
        )
    target = data[start:end]
    seen["target_raw"] = target.decode("utf-8", errors="replace")
    split = [n for n in (start, end) if n < len(data) and (data[n] & 0xC0) == 0x80]
    if split:
        return result(
            "unresolved_range",
            f"byte offset {split[0]} falls inside a multi-byte UTF-8 character of {cid!r}",
            **seen,
        )
    target_text = target.decode("utf-8")
    seen["target_normalised"] = normalise(target_text, policy)

    if said is None:
        return result(
            "malformed_citation",
            "no quoted text: pass quote= or give the citation a quote to check",
            **seen,
        )
    seen["raw_quote"] = said
    seen["normalised_quote"] = normalise(said, policy)
    if policy == "exact":
        same = said.encode("utf-8") == target
    else:
        same = seen["normalised_quote"] == seen["target_normalised"]
    if same:
        return result(
            "quote_match", f"the quote is the text at [{start}, {end}) of {cid!r}", **seen
        )
    return result(
        "quote_mismatch",
        f"the quote differs from the text at [{start}, {end}) of {cid!r} under policy "
        f"{policy} ({version})",
        **seen,
    )


def locate(entry: LedgerEntry, quote: str, occurrence: int = 0) -> dict[str, Any] | None:
    """The citation object for the ``occurrence``-th (0-based) exact occurrence of ``quote``
    in ``entry`` (digest = sha256 of the entry's UTF-8 text), or None if there is none."""
    data = entry.text.encode("utf-8")
    needle = quote.encode("utf-8")
    if not needle:
        return None
    at = -1
    for _ in range(occurrence + 1):
        at = data.find(needle, at + 1)
        if at < 0:
            return None
    return {
        "id": entry.id,
        "digest": hashlib.sha256(data).hexdigest(),
        "range": [at, at + len(needle)],
    }
