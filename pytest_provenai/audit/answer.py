"""Answer correctness: the ProvenAI normalised match and the official HotpotQA EM/F1.

Two independent measures of one answer against its gold answer:

* :func:`provenai_correct` — the paper's "lightweight normalisation": bracketed citation
  tags (``[R1]``, ``(R2)``) stripped, lowercased, trimmed (trailing punctuation dropped),
  yes/no gold answers matched by prefix. Used for ``answer.correct`` and the
  ``answer_accuracy`` metric.
* :func:`exact_match` / :func:`f1_score` — a faithful re-implementation of the logic of
  ``hotpot_evaluate_v1.py`` (SQuAD normalisation; the yes/no/noanswer rule; token overlap
  counted as a multiset). Computed on the prediction with its bracketed citation tags
  stripped; a bare ``R32`` (``BMW R32``) is answer text, as it is to the official script.

Pure Python, no pytest import.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Any

__all__ = [
    "answer_scores",
    "exact_match",
    "f1_score",
    "normalize_answer",
    "normalize_provenai",
    "provenai_correct",
    "strip_citation_tags",
]

# --- citation tags -------------------------------------------------------------------------

# Inside brackets (case-insensitive): one id ("R1", "R 1"), a list separated by "," ";" "/"
# "&" "and" or plain whitespace ("R1, R2", "R1 R2"), or a range ("R1-R3", "R1–R3"). Only
# bracketed ids are tags: a bare "R32" is answer text ("BMW R32", "the R101 airship"), as it
# is to the official HotpotQA script, which never sees tags and is applied to the gold as is.
_BR_ID = r"R[ \t]?\d+"
_BR_SEP = r"(?:\s*[,;/&\-–]\s*|\s+and\s+|\s+)"
_BRACKETED = rf"(?i:[\[(]\s*{_BR_ID}(?:{_BR_SEP}{_BR_ID})*\s*[\])])"
# One match is a run of adjacent tags ("[R1][R2]", "[R1] (R2)"), each taking the whitespace
# before it along. A match may only start at the beginning of the text or right after a
# non-space, so a long run of spaces is scanned once (no quadratic backtracking).
_TAG_RE = re.compile(rf"(?:^|(?<=\S))(?:\s*{_BRACKETED})+")


def _tag_replacement(m: re.Match[str]) -> str:
    # A tag glued between two words ("foo[R1]bar") leaves one space; anywhere else it
    # vanishes together with the whitespace before it ("Yes [R1]." -> "Yes.").
    s = m.string
    before = s[m.start() - 1] if m.start() > 0 else ""
    after = s[m.end()] if m.end() < len(s) else ""
    if before.isalnum() and after.isalnum():
        return " "
    return ""


def strip_citation_tags(text: str) -> str:
    """Remove resource citation tags from ``text`` and trim it.

    Removed: tags in square or round brackets, any case, holding one id (``R1``, ``R 1``), a
    list (``,`` ``;`` ``/`` ``&`` ``and`` or whitespace) or a range (``-``): ``[R0]``,
    ``[R1, R2]``, ``[r3]``, ``(R1)``, ``[R1-R3]``. A bare ``R<number>`` is kept: it is answer
    text as often as a tag (``BMW R32``), and the gold answer is never stripped, so removing
    it would make EM/F1 depart from the official script. A tag takes the whitespace before
    it along, so ``"Yes [R1]."`` becomes ``"Yes."``; a tag glued between two words leaves one
    space (``"foo[R1]bar"`` -> ``"foo bar"``). Other whitespace is left as it is; the result
    is stripped at both ends.
    """
    return _TAG_RE.sub(_tag_replacement, text).strip()


# --- ProvenAI normalised match -------------------------------------------------------------

_TRAILING_PUNCT = ".,;:!?"
_WS_RE = re.compile(r"\s+")
_YES_NO = frozenset({"yes", "no"})


def _normalize_plain(text: str) -> str:
    text = _WS_RE.sub(" ", text.lower()).strip()
    return text.rstrip(_TRAILING_PUNCT + " ")


def normalize_provenai(text: str) -> str:
    """The paper's lightweight normalisation.

    Citation tags stripped (:func:`strip_citation_tags`), lowercased, runs of whitespace
    collapsed to one space, trimmed, and any trailing run of ``. , ; : ! ?`` (with spaces
    between them) removed: ``"Yes [R1]."`` -> ``"yes"``, ``"Ed Wood!"`` -> ``"ed wood"``.
    Inner punctuation, quotes and articles are kept (that is the SQuAD normalisation's job,
    :func:`normalize_answer`).
    """
    return _normalize_plain(strip_citation_tags(text))


def provenai_correct(prediction: str, gold: str) -> bool:
    """Normalised match of ``prediction`` against ``gold`` (the ``answer.correct`` field).

    The prediction is normalised with :func:`normalize_provenai`. The gold answer gets the
    same normalisation *without* tag stripping (a gold answer is never a citation; a gold
    ``"[R2]"`` stays ``"[r2]"``; a bare ``"R2"`` is kept on both sides). Equal strings are
    correct. When the normalised gold is ``"yes"`` or ``"no"``, a prediction that starts
    with that word followed by the end, whitespace or punctuation is also correct
    (``"yes, both are American"`` for ``"yes"``; not ``"yesterday"``, not ``"no-one"``). An
    empty gold answer matches only an empty prediction.
    """
    pred = normalize_provenai(prediction)
    ref = _normalize_plain(gold)
    if pred == ref:
        return True
    if ref in _YES_NO and pred.startswith(ref):
        nxt = pred[len(ref)]
        return nxt.isspace() or nxt in _TRAILING_PUNCT or nxt in "\"')"
    return False


# --- official HotpotQA metrics (logic of hotpot_evaluate_v1.py) ----------------------------

_PUNCT = frozenset(string.punctuation)
_ARTICLES_RE = re.compile(r"\b(a|an|the)\b")
_SPECIAL = frozenset({"yes", "no", "noanswer"})


def normalize_answer(text: str) -> str:
    """SQuAD normalisation, in the official order: lowercase, remove ASCII punctuation
    (``string.punctuation``), replace the articles a/an/the by a space, collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES_RE.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    """1.0 when the SQuAD-normalised strings are equal, else 0.0."""
    return 1.0 if normalize_answer(prediction) == normalize_answer(gold) else 0.0


def f1_score(prediction: str, gold: str) -> tuple[float, float, float]:
    """Official HotpotQA answer F1 as ``(f1, precision, recall)``.

    If either normalised string is ``yes``, ``no`` or ``noanswer`` and the two differ, the
    score is 0. Otherwise token overlap is counted as a multiset (``Counter`` intersection);
    no overlap — including two empty strings — scores 0, as in the official script.
    """
    pred = normalize_answer(prediction)
    ref = normalize_answer(gold)
    zero = (0.0, 0.0, 0.0)
    if (pred in _SPECIAL or ref in _SPECIAL) and pred != ref:
        return zero
    pred_tokens = pred.split()
    ref_tokens = ref.split()
    common = Counter(pred_tokens) & Counter(ref_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return zero
    precision = num_same / len(pred_tokens)
    recall = num_same / len(ref_tokens)
    f1 = 2 * precision * recall / (precision + recall)
    return f1, precision, recall


def answer_scores(prediction: str, gold: str) -> dict[str, Any]:
    """The ``answer`` part of a record.

    ``{"prediction": <as given>, "gold": <as given>, "correct": bool, "em": float,
    "f1": float}``. ``correct`` is :func:`provenai_correct`; ``em`` and ``f1`` are the
    official HotpotQA scores of the prediction with citation tags stripped
    (:func:`strip_citation_tags`), so ``"Paris [R1]"`` scores like ``"Paris"``.
    """
    stripped = strip_citation_tags(prediction)
    return {
        "prediction": prediction,
        "gold": gold,
        "correct": provenai_correct(prediction, gold),
        "em": exact_match(stripped, gold),
        "f1": f1_score(stripped, gold)[0],
    }
