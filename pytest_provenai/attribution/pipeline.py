"""The attribution pipeline over given model parts (ProvenanceGuard §III).

evidence → decomposition → routing → premise selection (≤ :data:`PREMISE_BUDGET` tokens for
the premise–claim pair) → support (features + calibrated checker) → protected values →
contradiction → threshold → conflation → claim verdict → fail-closed answer verdict.
Repair is :mod:`pytest_provenai.attribution.repair`.

The model parts are Protocols, so this module holds no model code: an :class:`Encoder`
(sentence vectors, token alignment, token counts — MiniLM in :mod:`pytest_provenai.verify`),
a :class:`SupportChecker` (the calibrated random forest, or a baseline), optionally an
:class:`NLIJudge` and :class:`FeatureSource`\\ s (the LM feature). A checker or judge that
raises makes the claims it was asked about ``failed`` (the answer is then blocked); nothing
escapes. A :class:`ClaimJudge` (an LLM judge, :mod:`pytest_provenai.verify.judge`), when
given, decides support in place of the checker: one call per claim on its routed premise, a
call that raises fails that claim only, and the lexical rescue does not override it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from pytest_provenai.attribution.conversation import (
    ConversationModel,
    evidence_terms,
    may_be_conversation,
)
from pytest_provenai.attribution.decompose import Claim, decompose
from pytest_provenai.attribution.families import Attribution, compatible, implied_attribution
from pytest_provenai.attribution.features import Signals, claim_features
from pytest_provenai.attribution.routing import (
    Route,
    anchor,
    centroid,
    cosine,
    on_topic,
    route,
    says_name,
)
from pytest_provenai.attribution.rows import numbered_records, tabular_records
from pytest_provenai.attribution.statement import FAMILY_DESCRIPTIONS, Listing
from pytest_provenai.attribution.support import CONFLICT_REASONS, names, support_signals
from pytest_provenai.attribution.verdict import (
    AnswerVerdict,
    ClaimDecision,
    Judgement,
    answer_verdict,
    decide,
)
from pytest_provenai.audit.claims import split_sentences
from pytest_provenai.errors import AttributionError
from pytest_provenai.frozen.traces import Evidence, EvidenceSet

__all__ = [
    "PREMISE_BUDGET",
    "AnswerResult",
    "ClaimJudge",
    "Encoder",
    "FeatureSource",
    "NLIJudge",
    "PreparedClaim",
    "SupportChecker",
    "Verifier",
    "chunks",
    "prepare_claims",
    "resolve_by_similarity",
]

PREMISE_BUDGET = 512
"""Token budget of the premise–claim pair (the seed's service default)."""


SIMILARITY_MINIMUM = 0.35
"""Least cosine between an unknown source phrase and a family description to resolve it."""
SIMILARITY_MARGIN = 0.08
"""Least lead of the best family over the second (otherwise the phrase stays ambiguous)."""


def resolve_by_similarity(
    encoder: Encoder,
    attributions: Sequence[Attribution],
    *,
    minimum: float = SIMILARITY_MINIMUM,
    margin: float = SIMILARITY_MARGIN,
) -> list[Attribution]:
    """The last resolution rule (issue 23): an attribution phrase whose noun phrase neither
    the trace's tools nor the lexicon resolved (``ambiguous``, ``unresolved_phrase``) is
    compared with :data:`~pytest_provenai.attribution.statement.FAMILY_DESCRIPTIONS` by the
    encoder; the best family is taken only with cosine ≥ ``minimum`` and a lead ≥
    ``margin`` over the second (rule ``similarity``). Anything else is returned unchanged."""
    todo = [
        i
        for i, a in enumerate(attributions)
        if a.status == "ambiguous" and a.reason == "unresolved_phrase" and a.noun_phrase
    ]
    out = list(attributions)
    if not todo:
        return out
    names = list(FAMILY_DESCRIPTIONS)
    vectors = encoder.embed([FAMILY_DESCRIPTIONS[f] for f in names])
    phrases = encoder.embed([attributions[i].noun_phrase for i in todo])
    for i, q in zip(todo, phrases, strict=True):
        sims = sorted(
            ((cosine(q, v), f) for f, v in zip(names, vectors, strict=True)), reverse=True
        )
        (best, family), (second, _) = sims[0], sims[1]
        if best >= minimum and best - second >= margin:
            out[i] = replace(
                attributions[i], status="stated", family=family, rule="similarity", reason=""
            )
    return out


_INITIALISM_END = re.compile(r"(?:^|[\s(\"'“])(?:[A-Za-z]\.){2,}$")
"""A piece ending in a dotted initialism ("U.S.", "D.C.", "e.g."): the sentence splitter
ends a sentence there when a capital follows ("the U.S. Army"), which cuts one sentence
in two; :func:`chunks` joins such pieces again."""


def chunks(text: str) -> list[str]:
    """The chunks of an evidence text for routing and premise selection: its sentences,
    line by line (a piece that ends in a dotted initialism such as "U.S." is joined to the
    next piece of the same line); never empty for a text with any non-blank character.

    A JSON output or a pipe table is chunked by record instead, each record on one line
    with its cells under their headers (``performance: 2031-10-17 19:30; sold: 420; status:
    sold out``): a bare table row (``2031-10-17 19:30 | 420 | 420 | sold out``) says too
    little for an embedding to match a sentence about it, which routed claims about a table
    to a document of the same trace and left their premise without the row. Numbered search
    results are chunked by result likewise (a result's date line alone says nothing of it)."""
    table = tabular_records(text) or numbered_records(text)
    if table is not None:
        return [r.replace("\n", "; ") for r in table]
    out: list[str] = []
    for line in text.split("\n"):
        joined: list[str] = []
        for piece in split_sentences(line):
            if joined and _INITIALISM_END.search(joined[-1]):
                joined[-1] = f"{joined[-1]} {piece}"
            else:
                joined.append(piece)
        out.extend(joined)
    return out if out else ([text.strip()] if text.strip() else [])


@runtime_checkable
class Encoder(Protocol):
    """Sentence embeddings and token alignment (MiniLM by default)."""

    @property
    def identity(self) -> dict[str, Any]: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text."""
        ...

    def align(self, claim: str, premise_chunks: Sequence[str]) -> tuple[float, float]:
        """(share of the claim's content tokens aligned to some token of the premise
        chunks, mean best alignment) from contextual token embeddings."""
        ...

    def count_tokens(self, text: str) -> int: ...


@runtime_checkable
class SupportChecker(Protocol):
    """Scores feature rows: p(supported by the routed source) and the verdict head."""

    @property
    def identity(self) -> dict[str, Any]: ...

    @property
    def threshold(self) -> float: ...

    def score(self, rows: Sequence[Mapping[str, Any]]) -> list[Judgement]: ...


@runtime_checkable
class NLIJudge(Protocol):
    """A local NLI classifier: probabilities of entailment, neutral, contradiction."""

    @property
    def identity(self) -> dict[str, Any]: ...

    def judge(self, premise: str, claim: str) -> dict[str, float]: ...


@runtime_checkable
class ClaimJudge(Protocol):
    """Reads a claim and its routed premise and gives the verdict itself (an LLM judge):
    with one, the checker's rows are not scored. Raises when it has no verdict."""

    @property
    def identity(self) -> dict[str, Any]: ...

    @property
    def threshold(self) -> float: ...

    def judge(self, premise: str, claim: str) -> Judgement: ...


@runtime_checkable
class FeatureSource(Protocol):
    """Extra named features of a (premise, claim) pair (e.g. the LM log-likelihood)."""

    @property
    def identity(self) -> dict[str, Any]: ...

    def features(self, premise: str, claim: str) -> dict[str, float]: ...


@dataclass(frozen=True)
class PreparedClaim:
    """A claim routed and featurised, ready for the checker."""

    claim: Claim
    route: Route
    evidence: Evidence | None
    premise: str
    row: dict[str, Any] | None
    missing: tuple[str, ...] = ()
    rescue_ok: bool = False
    best_chunk: str = ""
    conflict: str | None = None
    unparsed: tuple[str, ...] = ()
    quoted: bool = False
    summed: bool = False
    valued: bool = False
    # the claim routed to the source it names, when the content route went elsewhere
    # ("the player record says he is suspended" routed by its words to the rulebook)
    stated: PreparedClaim | None = None


@dataclass(frozen=True)
class AnswerResult:
    """The verification of one answer text."""

    text: str
    claims: tuple[ClaimDecision, ...]
    verdict: AnswerVerdict
    prepared: tuple[PreparedClaim, ...] = field(default=(), compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.as_dict(),
            "claims": [c.as_dict() for c in self.claims],
        }


class Verifier:
    """Verifies answers against an evidence set with the given model parts."""

    def __init__(
        self,
        encoder: Encoder,
        checker: SupportChecker,
        *,
        nli: NLIJudge | None = None,
        extra: Sequence[FeatureSource] = (),
        premise_budget: int = PREMISE_BUDGET,
        judge: ClaimJudge | None = None,
        conversation: ConversationModel | None = None,
    ) -> None:
        if conversation is not None and dict(conversation.encoder) != encoder.identity:
            raise AttributionError(
                "the conversation model was fitted with another encoder "
                f"({dict(conversation.encoder)}, this verifier's is {encoder.identity}); "
                "fit it again with 'provenai verify conversation'"
            )
        self.encoder = encoder
        self.checker = checker
        self.nli = nli
        self.extra = tuple(extra)
        self.premise_budget = premise_budget
        self.judge = judge
        self.conversation = conversation

    @property
    def identity(self) -> dict[str, Any]:
        return {
            "encoder": self.encoder.identity,
            "checker": self.checker.identity,
            "threshold": self._threshold(),
            "nli": self.nli.identity if self.nli is not None else None,
            "extra": [f.identity for f in self.extra],
            "premise_budget": self.premise_budget,
            **({"judge": self.judge.identity} if self.judge is not None else {}),
            **(
                {"conversation": self.conversation.identity}
                if self.conversation is not None
                else {}
            ),
        }

    def _threshold(self) -> float:
        return self.judge.threshold if self.judge is not None else self.checker.threshold

    def prepare(
        self, claims: Sequence[Claim], evidence: EvidenceSet, request: str = ""
    ) -> list[PreparedClaim]:
        return prepare_claims(
            self.encoder,
            claims,
            evidence,
            extra=self.extra,
            budget=self.premise_budget,
            request=request,
        )

    # -- verification ----------------------------------------------------------------
    def resolve_attributions(self, claims: Sequence[Claim]) -> list[Claim]:
        """The claims with unknown source phrases resolved by similarity where the margin
        allows (:func:`resolve_by_similarity`); an encoder that fails leaves them
        ambiguous (never a family)."""
        try:
            resolved = resolve_by_similarity(self.encoder, [c.attribution for c in claims])
        except Exception:
            return list(claims)
        return [
            c if a is c.attribution else replace(c, attribution=a)
            for c, a in zip(claims, resolved, strict=True)
        ]

    def find_conversation(
        self, claims: Sequence[Claim], evidence: EvidenceSet
    ) -> tuple[list[Claim], set[int]]:
        """The claims with those the conversation model takes for conversation made
        non-factual, and their indexes (:mod:`.conversation`). No model, or an encoder that
        fails, leaves every claim as it was: a claim is only ever left unchecked on the
        model's word."""
        model = self.conversation
        if model is None:
            return list(claims), set()
        terms = evidence_terms(evidence)
        candidates = [c for c in claims if may_be_conversation(c, terms, model.max_shared)]
        if not candidates:
            return list(claims), set()
        try:
            vectors = self.encoder.embed([c.text.strip() for c in candidates])
            marked = {
                c.index
                for c, v in zip(candidates, vectors, strict=True)
                if model.probability(v) >= model.threshold
            }
        except Exception:
            return list(claims), set()
        return [replace(c, factual=False) if c.index in marked else c for c in claims], marked

    def verify_claims(
        self, text: str, claims: Sequence[Claim], evidence: EvidenceSet, *, request: str = ""
    ) -> AnswerResult:
        """Verify given claims of ``text`` (gold claims of a fixture, or decomposed ones).
        The support text of each claim is its ``content``: the claim without its attribution
        phrase (stripped by the decomposer), so support is judged on the fact alone and the
        stated family is checked separately (conflation). ``request``: what the answer
        answers, for the record a claim that names none is about (:func:`.routing.on_topic`)."""
        claims, conversational = self.find_conversation(self.resolve_attributions(claims), evidence)
        families = evidence.families()
        try:
            prepared = self.prepare(claims, evidence, request)
            prep_error: str | None = None
        except Exception as exc:  # a failed component never lets a claim through
            prepared = [PreparedClaim(c, route([], {}), None, "", None) for c in claims]
            prep_error = f"{type(exc).__name__}: {exc}"
        scored_items = [p for p in prepared if p.row is not None]
        scored_items += [p.stated for p in scored_items if p.stated and p.stated.row is not None]
        judgements: dict[int, Judgement] = {}  # id(prepared) -> its judgement
        error: str | None = prep_error
        claim_errors: dict[int, str] = {}
        if scored_items and error is None and self.judge is not None:
            for p in scored_items:  # one call per claim: a failed call fails that claim only
                try:
                    j = self.judge.judge(p.premise, p.claim.content)
                    nli = self.nli.judge(p.premise, p.claim.content) if self.nli else None
                    judgements[id(p)] = Judgement(j.p_support, j.head, nli)
                except Exception as exc:
                    claim_errors[id(p)] = f"{type(exc).__name__}: {exc}"
        elif scored_items and error is None:
            try:
                scored = self.checker.score([p.row for p in scored_items if p.row is not None])
                if len(scored) != len(scored_items):
                    raise ValueError(
                        f"checker returned {len(scored)} scores for {len(scored_items)}"
                    )
                for p, j in zip(scored_items, scored, strict=True):
                    nli = self.nli.judge(p.premise, p.claim.content) if self.nli else None
                    judgements[id(p)] = Judgement(j.p_support, j.head, nli)
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"

        def decision(p: PreparedClaim) -> ClaimDecision:
            c = p.claim
            ev = p.evidence
            claim_error = error if (c.factual and (p.row is not None or prep_error)) else None
            claim_error = claim_error or claim_errors.get(id(p))
            return decide(
                index=c.index,
                text=c.text,
                byte_range=(c.start, c.end),
                factual=c.factual,
                attribution=implied_attribution(c.attribution, families),
                route_source=p.route.source,
                route_tool=ev.tool if ev else None,
                route_family=ev.family if ev else None,
                route_score=p.route.score,
                route_margin=p.route.margin,
                route_status=p.route.status if not prep_error else "failed",
                judgement=judgements.get(id(p)),
                error=claim_error,
                threshold=self._threshold(),
                missing=p.missing,
                rescue_ok=p.rescue_ok and self.judge is None,
                quoted=p.quoted,
                summed=p.summed,
                valued=p.valued and self.judge is None,
                best_chunk=p.best_chunk,
                conflict=p.conflict,
                unparsed=p.unparsed,
                conversational=c.index in conversational,
            )

        decisions = [
            named_or_routed(decision(p), decision(p.stated) if p.stated else None) for p in prepared
        ]
        return AnswerResult(
            text, tuple(decisions), answer_verdict(text, decisions), tuple(prepared)
        )

    def verify(
        self,
        text: str,
        evidence: EvidenceSet,
        tools: Mapping[str, str],
        *,
        question: str | None = None,
        listing: Listing | None = None,
    ) -> AnswerResult:
        """Decompose ``text`` and verify its claims (``listing``: the trace's tool listing,
        for attributions that name a tool by its description or by what it opened)."""
        claims = decompose(text, tools, question=question, listing=listing)
        return self.verify_claims(text, claims, evidence, request=question or "")


def _premise(
    encoder: Encoder, claim: str, parts: list[str], sims: list[float], budget: int
) -> list[str]:
    """The chunks of the routed source most similar to the claim, in source order, within
    the premise–claim token budget (the best chunk always)."""
    room = budget - encoder.count_tokens(claim)
    chosen: list[int] = []
    used = 0
    for i in sorted(range(len(parts)), key=lambda i: (-sims[i], i)):
        cost = encoder.count_tokens(parts[i])
        if chosen and used + cost > room:
            continue
        chosen.append(i)
        used += cost
    return [parts[i] for i in sorted(chosen)]


def prepare_claims(
    encoder: Encoder,
    claims: Sequence[Claim],
    evidence: EvidenceSet,
    *,
    extra: Sequence[FeatureSource] = (),
    budget: int = PREMISE_BUDGET,
    stated_routes: bool = True,
    request: str = "",
) -> list[PreparedClaim]:
    """Route every factual claim, select its premise and compute its feature row (the same
    function derives the calibration table and verifies answers). A claim whose stated
    source is not where its content routed it is also prepared against that source
    (:func:`stated_route`, ``PreparedClaim.stated``); the table is derived from the content
    routes only (``stated_routes=False``)."""
    texts: dict[str, list[str]] = {e.source: chunks(e.text) for e in evidence.items}
    flat = [c for parts in texts.values() for c in parts]
    vectors = encoder.embed(flat) if flat else []
    chunk_vecs: dict[str, list[list[float]]] = {}
    pos = 0
    for source, parts in texts.items():
        chunk_vecs[source] = vectors[pos : pos + len(parts)]
        pos += len(parts)
    centroids = {s: centroid(v) for s, v in chunk_vecs.items() if v}
    by_source = evidence.by_source()
    all_texts = [e.text for e in evidence.items]
    outputs = {e.source: e.text for e in evidence.items}
    factual = [c for c in claims if c.factual]
    claim_vecs = encoder.embed([c.content for c in factual]) if factual and centroids else []
    vec_of = {c.index: v for c, v in zip(factual, claim_vecs, strict=False)}

    def prepared(claim: Claim, q: list[float], r: Route) -> PreparedClaim:
        assert r.source is not None
        ev = by_source[r.source]
        parts = texts[r.source]
        sims = [cosine(q, v) for v in chunk_vecs[r.source]]
        best = max(range(len(parts)), key=lambda i: (sims[i], -i))
        best_any = max((cosine(q, v) for vs in chunk_vecs.values() for v in vs), default=0.0)
        premise_chunks = _premise(encoder, claim.content, parts, sims, budget)
        premise = " ".join(premise_chunks)
        signals = support_signals(
            claim.content,
            premise_chunks,
            ev.text,
            parts[best],
            all_texts,
            structured=ev.structured,
            siblings=[e.text for e in evidence.items if e.tool == ev.tool and e is not ev],
            asked=ev.asked,
        )
        ratio, mean = encoder.align(claim.content, premise_chunks)
        extra_features: dict[str, float] = {}
        for feature_source in extra:
            extra_features.update(feature_source.features(premise, claim.content))
        row = claim_features(
            content=claim.content,
            premise=premise,
            evidence_texts=all_texts,
            route=r,
            family=ev.family,
            values=signals.values,
            values_all=signals.values_all,
            signals=Signals(
                best_chunk_cos=sims[best],
                best_chunk_cos_any=best_any,
                best_chunk=parts[best],
                align_ratio=ratio,
                align_mean=mean,
                claim_tokens=encoder.count_tokens(claim.content),
                premise_tokens=encoder.count_tokens(premise),
            ),
            chunk_count=len(parts),
            rows=signals.row,
            polarity=signals.polarity,
            unit=signals.unit,
            names_missing=len(signals.names_missing),
            extra=extra_features,
        )
        return PreparedClaim(
            claim,
            r,
            ev,
            premise,
            row,
            signals.values.missing,
            signals.rescue_ok,
            parts[best],
            signals.conflict,
            signals.values.unparsed,
            quoted=signals.quoted,
            summed=signals.summed,
            valued=signals.valued,
        )

    tool_of = {e.source: e.tool for e in evidence.items}
    family_of = {e.source: e.family for e in evidence.items}
    out: list[PreparedClaim] = []
    for n, claim in enumerate(claims):
        if not claim.factual or not centroids:
            out.append(PreparedClaim(claim, route([], {}), None, "", None))
            continue
        q = vec_of[claim.index]
        r = anchor(route(q, centroids), claim.text, claim.content, outputs)
        earlier = [request, *(c.text for c in claims[:n])]
        r = on_topic(r, claim.text, earlier, outputs, tool_of, family_of)
        p = prepared(claim, q, r)
        if stated_routes:
            named = stated_route(claim.attribution, r, evidence, claim.text)
            if named is not None:
                p = replace(p, stated=prepared(claim, q, named))
        out.append(p)
    return out


def named_or_routed(routed: ClaimDecision, named: ClaimDecision | None) -> ClaimDecision:
    """The decision on the source a claim names, when its content route does not support
    the claim and the named source settles it: supported there, or contradicted there by a
    stated conflict ("the warehouse sheet has it on hold" against another row's status). A
    claim its content route supports keeps that decision: a fact its named source does not
    hold as well as another family's source does is conflated, however close the named one
    comes; one the named source supports at least as well (``p_support`` as high or higher:
    "Fleet register still has GAS-05 grounded" read from a flight log and from the register)
    is the named source's; one conflated only near the threshold (reason
    ``insufficient_support``) is not."""
    if named is None or "failed" in (named.verdict, routed.verdict):
        return routed
    if (
        routed.content_supported_elsewhere
        and named.verdict == "supported"
        and named.p_support is not None
        and routed.p_support is not None
        and named.p_support >= routed.p_support
    ):
        return named  # the source it names holds the fact as well: no conflation
    if routed.supported or routed.content_supported_elsewhere:
        return routed
    settled = named.verdict == "supported" or (
        named.verdict == "contradicted" and bool(set(named.reasons) & _CONFLICTS)
    )
    return named if settled else routed


#: Reasons that say what contradicts a claim (not only that the score was low).
_CONFLICTS = frozenset((*CONFLICT_REASONS, "high_confidence_contradiction"))


def stated_route(
    attribution: Attribution, r: Route, evidence: EvidenceSet, text: str = ""
) -> Route | None:
    """The route to the source a claim names, when its content route went to a source the
    stated attribution does not fit, or to another tool's output than the tool it names
    (then only an output of that tool that says every name of the claim's ``text`` that the
    routed output says: "The reading log shows Jake Moss read for 35 minutes", routed to
    Jake Moss's record, is not read against Amy Moss's log): the named tool's (or family's)
    output nearest the claim, with status ``stated_source``; None otherwise."""
    if attribution.status != "stated" or r.source is None:
        return None
    by_source = evidence.by_source()
    routed = by_source[r.source]
    scores = dict(r.ranking)
    fits = compatible(attribution, routed.tool, routed.family)
    if fits is False:
        named = [
            e.source
            for e in evidence.items
            if e.source in scores and compatible(attribution, e.tool, e.family)
        ]
    elif attribution.tool is not None and attribution.tool != routed.tool:
        # the claim names a tool, and its words went to another tool's output of the same
        # family ("on our test log" routed to the plant feed): the named tool's is read too
        said = [n for n in names(text) if says_name(routed.text, n)]
        named = [
            e.source
            for e in evidence.items
            if e.source in scores
            and e.tool == attribution.tool
            and all(says_name(e.text, n) for n in said)
        ]
    else:
        return None
    if not named:
        return None
    best = max(named, key=lambda s: scores[s])  # first of equals: the evidence's order
    return Route(best, scores[best], scores[best] - r.score, r.ranking, "stated_source")
