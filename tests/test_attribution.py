"""The attribution layer's pure parts: families, decomposition, protected values, routing,
verdicts, repair, the pipeline over model-free parts, the trace graph and the metrics."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_provenai._io import sha256_text
from pytest_provenai.attribution.decompose import claim_at, decompose, is_template
from pytest_provenai.attribution.families import (
    Attribution,
    canonical_phrase,
    compatible,
    find_attribution,
    implied_attribution,
)
from pytest_provenai.attribution.graph import AnswerNode, completeness, graph_sha256, trace_graph
from pytest_provenai.attribution.lexical import FeatureChecker, LexicalEncoder
from pytest_provenai.attribution.metrics import ATTRIBUTION_METRICS, macro_f1
from pytest_provenai.attribution.pipeline import (
    AnswerResult,
    Verifier,
    named_or_routed,
    stated_route,
)
from pytest_provenai.attribution.protected import check_values, content_terms, overlap, rescue
from pytest_provenai.attribution.record import Auditor
from pytest_provenai.attribution.repair import FALLBACK, repair
from pytest_provenai.attribution.routing import Route, anchor, centroid, cosine, on_topic, route
from pytest_provenai.attribution.verdict import (
    CONFLATION_MARGIN,
    RESCUE_MARGIN,
    VALUES_MARGIN,
    Judgement,
    answer_verdict,
    decide,
)
from pytest_provenai.audit.metrics import aggregate
from pytest_provenai.frozen.traces import (
    ToolCall,
    ToolOutput,
    canonical_arguments,
    collect_evidence,
)

TOOLS = {"lookup_account": "record", "web_search": "search", "fetch_policy": "document"}


def out(source: str | None, text: str) -> ToolOutput:
    return ToolOutput(source, text, sha256_text(text))


def call(index: int, tool: str, *outputs: ToolOutput, error: bool = False) -> ToolCall:
    args = {"i": index}
    return ToolCall(index, tool, args, canonical_arguments(args)[1], tuple(outputs), error)


RECORD = "customer: Velmora Ostrand\nplan: Kestrel Gold\nmonthly fee: 24.50 EUR"
POLICY = "The Kestrel Gold plan includes 40 GB of data. A late payment costs 7 EUR."
SEARCH = "Kestrel Telecom was founded in 2019 in Harrowgate."
CALLS = (
    call(0, "lookup_account", out("acct-1", RECORD)),
    call(1, "fetch_policy", out("doc-1", POLICY)),
    call(2, "web_search", out("web-1", SEARCH)),
)


# -- families -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "status", "family", "tool"),
    [
        ("According to the search results, X is Y.", "stated", "search", None),
        ("The account record shows that the fee is 5 EUR.", "stated", "record", None),
        ("The policy document states the fee is 20 EUR.", "stated", "document", None),
        ("In the database, the total is 3.", "stated", "database", None),
        ("The lookup_account tool returned a balance of 5.", "stated", "record", "lookup_account"),
        ("According to the sources, X is Y.", "ambiguous", None, None),
        (
            "Scott Derrickson (born July 16, 1966) is an American director.",
            "unavailable",
            None,
            None,
        ),
        ("He published in the paper Nature in 1990.", "unavailable", None, None),
    ],
)
def test_find_attribution(text: str, status: str, family: str | None, tool: str | None) -> None:
    a = find_attribution(text, TOOLS)
    assert (a.status, a.family, a.tool) == (status, family, tool)


def test_attribution_span_covers_adjacent_phrases() -> None:
    text = "According to the search results from web_search, X is Y."
    a = find_attribution(text, TOOLS)
    assert a.phrase == "According to the search results from web_search, "
    assert (a.family, a.tool) == ("search", "web_search")


def test_two_families_in_one_claim_are_ambiguous() -> None:
    a = find_attribution("According to the record and according to the search results, X.", TOOLS)
    assert a.status == "ambiguous" and a.family is None


def test_implied_only_when_the_trace_has_one_family() -> None:
    none = Attribution("unavailable")
    assert implied_attribution(none, {"record"}) == Attribution("implied", family="record")
    assert implied_attribution(none, {"record", "search"}).status == "unavailable"


def test_compatible() -> None:
    stated = find_attribution("According to the search results, X.", TOOLS)
    assert compatible(stated, "web_search", "search") is True
    assert compatible(stated, "lookup_account", "record") is False
    assert compatible(Attribution("ambiguous"), "web_search", "search") is None
    by_tool = find_attribution("The lookup_account tool returned 5.", TOOLS)
    assert compatible(by_tool, "lookup_account", "record") is True
    assert compatible(by_tool, "web_search", "search") is False


def test_canonical_phrase_reads_back_as_its_family() -> None:
    for family in ("record", "search", "database", "document", "metadata"):
        text = f"{canonical_phrase(family, 'some_tool')} the value is 3."
        a = find_attribution(text, {"some_tool": family})
        assert a.family == family, text


# -- decomposition ------------------------------------------------------------------------
def test_decompose_keeps_byte_ranges_values_and_attribution() -> None:
    answer = (
        "According to the account record, the plan is Gold and the fee is 1,250.00 EUR; "
        "the card ends in 4471. Café Ørsted opened on 2031-09-14. Please consult your bank."
    )
    claims = decompose(answer, TOOLS)
    data = answer.encode("utf-8")
    assert [data[c.start : c.end].decode("utf-8") for c in claims] == [c.text for c in claims]
    assert [c.text for c in claims] == [
        "According to the account record, the plan is Gold",
        "the fee is 1,250.00 EUR",
        "the card ends in 4471.",
        "Café Ørsted opened on 2031-09-14.",
        "Please consult your bank.",
    ]
    first, fee, second, third, fourth = claims
    assert first.content == "The plan is Gold"
    assert "1,250.00" in fee.values and fee.attribution.family == "record"
    assert second.attribution.family == "record"  # the clause keeps its sentence's phrase
    assert third.values == ("2031-09-14",)
    assert fourth.start == answer.index("Please") + 2  # bytes: é and Ø take two each
    assert not fourth.factual and fourth.attribution.status == "unavailable"


def test_decompose_model_output_sections_and_citations() -> None:
    raw = "Answer: no [R0]\nEvidence: X is an American director [R1].\nReasoning: Both differ."
    claims = decompose(raw, {}, question="Were X and Y of the same nationality?")
    assert [c.section for c in claims] == ["answer", "evidence", "reasoning"]
    assert claims[0].content == "Were X and Y of the same nationality? no"
    assert claims[0].cites == ("R0",) and claims[0].factual
    assert claims[1].content == "X is an American director."
    unknown = decompose("Answer: unknown", {}, question="Who?")
    assert not unknown[0].factual


def test_template_with_a_value_stays_factual() -> None:
    assert is_template("Please consult a professional.")
    assert not is_template("Please note the fee is 7 EUR.")
    # "please note …" states what follows; a disclaimer is one by what it says
    assert not is_template("Please note that tracking and insurance are excluded.")
    assert not is_template("Please note: couriers collect from the front desk.")
    assert not is_template("Please note the pharmacy is closed on Sundays.")
    assert is_template("Please note this is not legal advice.")
    # "consult" is a disclaimer's verb, not a word's beginning ("consultant", "Consulting")
    assert is_template("Consult your GP before travel.")
    assert not is_template("Our consultant, Dr Imes, saw her on Monday.")
    assert not is_template("It was checked and certified by Norcastle Consulting.")
    assert not is_template("A formal consultation with hauliers would come first.")
    assert is_template("I am not a lawyer.")
    assert not is_template("I am not aware of any fee for that.")
    assert decompose("Please note the fee is 7 EUR.", {})[0].factual


def test_claim_at_refuses_a_range_inside_a_character() -> None:
    text = "Café opened."
    assert claim_at(text, (0, 5), {}).text == "Café"
    with pytest.raises(ValueError, match="character boundaries"):
        claim_at(text, (0, 4), {})


def test_quotes_are_never_split() -> None:
    text = 'According to the record from x, "A; B, but more." Next one.'
    assert len(decompose(text, {"x": "record"})) == 2


# -- protected values ---------------------------------------------------------------------
def test_check_values_missing_and_conflicting() -> None:
    v = check_values("The fee is 42.50 EUR since 2031-09-14.", RECORD + "\nsince: 2031-09-14")
    assert v.missing == ("42.50 EUR",) and v.conflicting == ("42.50 EUR",)
    v = check_values('The code is "K-220" and the fee is 24.50.', RECORD)
    assert v.missing == ("K-220",) and v.conflicting == ()
    assert check_values("The fee is 24.50 EUR.", RECORD).missing == ()


def test_overlap_and_rescue() -> None:
    assert content_terms("The plan is Gold's.") == {"plan", "gold"}
    assert overlap("plan Kestrel Gold", RECORD) == 1.0
    values = check_values("The plan is Kestrel Gold.", RECORD)
    assert rescue(values, 0.9, structured=True)
    assert not rescue(values, 0.9, structured=False)
    assert not rescue(values, 0.5, structured=True)
    assert not rescue(values, 0.9, structured=True, conflict=True)
    fee = check_values("Velmora pays 24.50 EUR a month.", RECORD)
    # a monthly amount is read as a rate and shown whole; against the record's plain amount
    # the amounts as written are compared
    assert fee.values == ("24.50 EUR a month",) and rescue(fee, 0.6, structured=True)
    # with its values all present, half of a claim's words in the row is enough
    assert rescue(fee, 0.5, structured=True) and not rescue(fee, 0.49, structured=True)
    wrong = check_values("Velmora pays 42.50 EUR a month.", RECORD)
    assert wrong.conflicting == ("42.50 EUR a month",) and not rescue(wrong, 0.9, structured=True)
    assert not rescue(check_values("Velmora pays 42.50 EUR.", RECORD), 0.9, structured=True)


# -- routing ------------------------------------------------------------------------------
def test_route_picks_the_top_centroid_and_records_the_margin() -> None:
    cents = {"a": centroid([[1.0, 0.0], [1.0, 0.2]]), "b": centroid([[0.0, 1.0]])}
    r = route([1.0, 0.1], cents)
    assert r.source == "a" and r.status == "routed"
    assert math.isclose(r.margin, r.ranking[0][1] - r.ranking[1][1])
    assert route([1.0, 0.0], {"only": [1.0, 0.0]}).status == "single_source"
    empty = route([1.0], {})
    assert (empty.source, empty.status) == (None, "no_evidence")
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0


def test_route_ties_go_to_the_first_source() -> None:
    assert route([1.0, 1.0], {"x": [1.0, 0.0], "y": [0.0, 1.0]}).source == "x"


_BOOKINGS = {
    "b1": "booking: KT-4410\nguest: Odile Marchetti\nrefund: refused\namount: 312.00 EUR",
    "b2": "booking: KT-4401\nguest: Odile Marchetti\nrefund: accepted\namount: 96.50 EUR",
}


def test_a_claim_goes_to_the_one_output_holding_all_its_values() -> None:
    """Two records that look alike: the centroid picked b1, but only b2 has the claim's
    identifier and amount, and nothing the claim says is only in b1."""
    r = route([1.0, 0.0], {"b1": [1.0, 0.0], "b2": [0.8, 0.6]})
    claim = "Booking KT-4401's refund of 96.50 EUR was accepted."
    moved = anchor(r, claim, claim, _BOOKINGS)
    assert (moved.source, moved.status) == ("b2", "value_anchored")
    assert math.isclose(moved.score, 0.8) and math.isclose(moved.margin, 0.8 - 1.0)
    assert moved.ranking == r.ranking
    # a stated record in the attribution phrase anchors too (the whole text is read)
    stated = "The refund of 96.50 EUR was accepted, per booking KT-4401's record."
    assert anchor(r, stated, "The refund of 96.50 EUR was accepted.", _BOOKINGS).source == "b2"


def test_value_anchoring_reads_a_records_field_names_as_its_words() -> None:
    """ "Hb" is said by the guidance text the centroid picked, and by the donor record only
    in a field's name (``last_hb_g_dl``): the record holds both values, so the claim is
    anchored there, not kept by a word the record says in its field names."""
    outputs = {
        "g1": "Women need an Hb of at least 12.5 g/dL to give whole blood.",
        "d1": "donor: ND-1\nlast_donation: 2033-10-14 (whole blood)\nlast_hb_g_dl: 13.1",
    }
    r = route([1.0, 0.0], {"g1": [1.0, 0.0], "d1": [0.8, 0.6]})
    claim = "She last gave whole blood on 14 October 2033, with an Hb of 13.1 g/dL."
    moved = anchor(r, claim, claim, outputs)
    assert (moved.source, moved.status) == ("d1", "value_anchored")
    # a name the record does not say at all still keeps the claim where it is
    other = "She last gave whole blood at Kelso on 14 October 2033, with an Hb of 13.1 g/dL."
    kelso = {**outputs, "g1": outputs["g1"] + " Kelso holds sessions weekly."}
    assert anchor(r, other, other, kelso) is r


_PETS = {
    "c1": "client: C-31\nowner: Ilse Varga\npet: Moss\ngroomer: Tamsin\ninterval_weeks: 6",
    "c2": "client: C-44\nowner: Bram Oduya\npet: Juniper\ngroomer: Lewin\ninterval_weeks: 8",
    "s1": "title: Coat care for spaniels\nurl: https://example.org/coat\nsnippet: brush weekly",
}
_TOOLS = {"c1": "get_client", "c2": "get_client", "s1": "web_search"}
_FAMILIES = {"c1": "record", "c2": "record", "s1": "search"}


def test_a_claim_that_names_no_record_is_about_the_one_the_answer_named() -> None:
    """Two client files of one tool: "He's groomed every six weeks" names neither, and the
    answer is about Juniper (c2), so the claim is checked against c2 even though the
    centroid (and c1's matching value) picked c1."""
    r = route([1.0, 0.0], {"c1": [1.0, 0.0], "c2": [0.8, 0.6], "s1": [0.0, 1.0]})
    earlier = ["What's on Juniper's file?", "Juniper belongs to Bram Oduya."]
    moved = on_topic(r, "He's groomed every six weeks.", earlier, _PETS, _TOOLS, _FAMILIES)
    assert (moved.source, moved.status) == ("c2", "topic_anchored")
    # the request alone names the record too
    alone = on_topic(r, "Groomed every six weeks.", ["Juniper's file?"], _PETS, _TOOLS, _FAMILIES)
    assert alone.source == "c2"
    # a claim that names a record, an answer that compares both, or none named: unmoved
    assert on_topic(r, "Moss sees Tamsin.", earlier, _PETS, _TOOLS, _FAMILIES) is r
    both = ["Both Moss and Juniper are booked."]
    assert on_topic(r, "Groomed every six weeks.", both, _PETS, _TOOLS, _FAMILIES) is r
    assert on_topic(r, "Groomed every six weeks.", [""], _PETS, _TOOLS, _FAMILIES) is r
    # records of another shape (a totals object and a per-host table) are not siblings
    other = {**_PETS, "c2": "host,p95_ms\nwh-1,240\nwh-2,5120"}
    assert on_topic(r, "p95 peaked.", ["wh-2 was worst."], other, _TOOLS, _FAMILIES) is r


def test_a_name_the_claim_gives_a_field_does_not_say_its_record() -> None:
    """ "His groomer is Tamsin" names Tamsin, but as the groomer: a value the claim states,
    held only in c1's ``groomer`` field, not the record the claim is about. The answer is
    about Juniper (c2), so the claim is checked against c2 (where the groomer is Lewin)."""
    r = route([1.0, 0.0], {"c1": [1.0, 0.0], "c2": [0.8, 0.6], "s1": [0.0, 1.0]})
    earlier = ["What's on Juniper's file?"]
    moved = on_topic(r, "His groomer is Tamsin.", earlier, _PETS, _TOOLS, _FAMILIES)
    assert (moved.source, moved.status) == ("c2", "topic_anchored")
    # a name not in a field the claim names, or an identifier, says what it is about
    assert on_topic(r, "Moss sees Tamsin.", earlier, _PETS, _TOOLS, _FAMILIES) is r
    stated = "Client C-31's groomer is Tamsin."
    assert on_topic(r, stated, earlier, _PETS, _TOOLS, _FAMILIES) is r
    # a value every record holds tells nothing apart: the claim is left where it is
    wing = {s: t + "\nwing: Bluebell" for s, t in _PETS.items()}
    assert on_topic(r, "His wing is Bluebell.", earlier, wing, _TOOLS, _FAMILIES) is r
    # a claim whose values anchored it to the other record moves too: a value only that
    # record holds is no support for a claim about this one
    anchored = Route(r.source, r.score, r.margin, r.ranking, "value_anchored")
    again = on_topic(anchored, "He's groomed every 6 weeks.", earlier, _PETS, _TOOLS, _FAMILIES)
    assert (again.source, again.status) == ("c2", "topic_anchored")
    # an earlier text names a record by a field's value too ("the one with groomer Lewin")
    lewin = ["Which dog has groomer Lewin?"]
    assert on_topic(r, "Groomed every six weeks.", lewin, _PETS, _TOOLS, _FAMILIES).source == "c2"
    # the field the answer named its record by turns to another record ("Owner Ilse Varga"
    # after "Owner Bram Oduya"): the claim stays
    owners = ["Owner Bram Oduya books weekly."]
    assert on_topic(r, "Owner Ilse Varga books monthly.", owners, _PETS, _TOOLS, _FAMILIES) is r


def test_forty_fifth_round_a_name_opening_the_claim_says_its_record() -> None:
    """ "Larch has no frost damage" opens with the name only s2 holds: routed to s1 (whose
    ``frost_damage: none`` its words matched), it is checked against s2. A name the claim
    says after its verb may be a swapped value, and a first word no record writes as a name
    says nothing: both stay."""
    beds = {
        "s1": 'bed: B1 "Rowan"\nfrost_damage: none\nleader: Ama Osei',
        "s2": 'bed: B2 "Larch"\nfrost_damage: severe\nleader: Tom Hale',
    }
    tools = {"s1": "get_bed", "s2": "get_bed"}
    families = {"s1": "record", "s2": "record"}
    r = route([1.0, 0.0], {"s1": [1.0, 0.0], "s2": [0.8, 0.6]})
    moved = on_topic(r, "Larch has no frost damage.", [""], beds, tools, families)
    assert (moved.source, moved.status) == ("s2", "topic_anchored")
    assert on_topic(r, "Rowan has no frost damage.", [""], beds, tools, families) is r
    assert on_topic(r, "The first bed is led by Tom Hale.", [""], beds, tools, families) is r
    assert on_topic(r, "Frost damage is none.", [""], beds, tools, families) is r


def test_a_field_name_does_not_hold_a_claim_in_its_record() -> None:
    """ "meter" is only a field name of the meter record (``meter: KW-5512``): the claim's
    reading and date are in the readings table, so it goes there; a word the record says as
    a value ("ultrasonic") still holds it."""
    outputs = {
        "meter": "meter: KW-5512\nmeter type: ultrasonic\nleak alert: active",
        "readings": "date | reading_m3\n2031-03-02 | 402.7\n2031-03-01 | 401.9",
    }
    r = route([1.0, 0.0], {"meter": [1.0, 0.0], "readings": [0.8, 0.6]})
    claim = "The meter read 402.7 cubic metres on 2 March 2031."
    assert anchor(r, claim, claim, outputs).source == "readings"
    valued = "The ultrasonic meter read 402.7 cubic metres on 2 March 2031."
    assert anchor(r, valued, valued, outputs) is r


def test_a_value_written_differently_does_not_hold_a_claim_in_the_choice() -> None:
    """The news item says "24 July" in words, the gauge feed ``2032-07-24T06:00``: the
    date is compared by meaning, so its words ("july", "24") do not keep the claim in the
    news item, which holds none of its values."""
    outputs = {
        "news": "A flood alert covers Felling Weir; levels peak early on 24 July.",
        "gauge": '{"station": "Felling Weir", "readings": [{"time": "2032-07-24T06:00", '
        '"level": 1.26}]}',
    }
    r = route([1.0, 0.0], {"news": [1.0, 0.0], "gauge": [0.8, 0.6]})
    claim = "The Felling Weir level read 1.26 at 06:00 on 24 July 2032."
    assert anchor(r, claim, claim, outputs).source == "gauge"


def test_anchoring_leaves_the_route_alone_when_it_cannot_tell() -> None:
    r = route([1.0, 0.0], {"b1": [1.0, 0.0], "b2": [0.8, 0.6]})
    # the centroid's choice holds every value: nothing to move
    held = "Booking KT-4410 was for 312.00 EUR."
    assert anchor(r, held, held, _BOOKINGS) is r
    # values split over both outputs: no single output holds them all
    split = "Booking KT-4410 was for 96.50 EUR."
    assert anchor(r, split, split, _BOOKINGS) is r
    # no values at all
    assert anchor(r, "The refund was accepted.", "The refund was accepted.", _BOOKINGS) is r
    # a word of the claim that only the centroid's choice has ("refused"): moving the claim
    # would make a value taken from another record pass
    mixed = "The 96.50 EUR refund was refused."
    assert anchor(r, mixed, mixed, _BOOKINGS) is r
    # a name only the centroid's choice has
    other = {**_BOOKINGS, "b2": _BOOKINGS["b2"].replace("Odile Marchetti", "Hugo Brandt")}
    named = "Odile Marchetti paid 96.50 EUR."
    assert anchor(r, named, named, other) is r
    # a name is a whole word: "Odile Marchetti-Roux" is someone else
    hyphen = {**_BOOKINGS, "b2": _BOOKINGS["b2"].replace("Marchetti", "Marchetti-Roux")}
    assert anchor(r, named, named, hyphen) is r
    single = route([1.0, 0.0], {"b2": [1.0, 0.0]})
    assert anchor(single, "KT-4401 paid 96.50 EUR.", "KT-4401 paid 96.50 EUR.", _BOOKINGS) is single


# -- verdicts -----------------------------------------------------------------------------
def _decide(**kw: Any) -> Any:
    base: dict[str, Any] = {
        "index": 0,
        "text": "t",
        "byte_range": (0, 1),
        "factual": True,
        "attribution": Attribution("unavailable"),
        "route_source": "s",
        "route_tool": "lookup_account",
        "route_family": "record",
        "route_score": 0.8,
        "route_margin": 0.2,
        "route_status": "routed",
        "judgement": Judgement(0.9, {"not_enough_evidence": 0.7, "contradicted": 0.3}),
        "error": None,
        "threshold": 0.5,
        "missing": (),
        "rescue_ok": False,
    }
    base.update(kw)
    return decide(**base)


def test_decide_precedence() -> None:
    assert _decide(factual=False).verdict == "non_factual"
    failed = _decide(error="RuntimeError: boom")
    assert (failed.verdict, failed.reasons) == ("failed", ("failed_component",))
    routed_nowhere = _decide(route_source=None, route_status="no_evidence", judgement=None)
    assert routed_nowhere.reasons == ("not_routed",)
    assert _decide().verdict == "supported"
    head = {"contradicted": 0.6, "unsupported": 0.3, "not_enough_evidence": 0.1}
    swap = _decide(missing=("42.50",), judgement=Judgement(0.99, head))
    assert (swap.verdict, swap.reasons) == ("contradicted", ("missing_protected_values",))
    assert swap.missing_values == ("42.50",)  # a high score never excuses a missing value
    low = _decide(judgement=Judgement(0.2, {"not_enough_evidence": 0.7, "contradicted": 0.3}))
    assert (low.verdict, low.reasons) == ("not_enough_evidence", ("insufficient_support",))
    rescued = _decide(judgement=Judgement(0.46, {}), rescue_ok=True)
    assert rescued.verdict == "supported" and rescued.rescued
    # far under the threshold the score outweighs the words a claim shares with its row
    assert RESCUE_MARGIN == 0.05
    far = _decide(judgement=Judgement(0.44, {"contradicted": 1.0}), rescue_ok=True)
    assert far.verdict == "contradicted" and not far.rescued
    quote = _decide(judgement=Judgement(0.2, {}), rescue_ok=True, quoted=True)
    assert quote.verdict == "supported" and quote.rescued  # a quotation, whatever its score
    summed = _decide(judgement=Judgement(0.3, {}), rescue_ok=True, summed=True)
    assert summed.verdict == "supported" and summed.rescued  # a column's exact sum, too
    assert _decide(judgement=Judgement(0.3, {}), rescue_ok=False, summed=True).verdict != (
        "supported"
    )
    # two values or more all present: supported a wider margin under the threshold
    assert VALUES_MARGIN == 0.15
    valued = _decide(judgement=Judgement(0.36, {"contradicted": 1.0}), valued=True)
    assert (valued.verdict, valued.reasons) == ("supported", ("values_borne",))
    assert not valued.rescued
    under = _decide(judgement=Judgement(0.34, {"contradicted": 1.0}), valued=True)
    assert (under.verdict, under.reasons) == ("contradicted", ("insufficient_support",))
    # ... never with a value missing
    gone = _decide(judgement=Judgement(0.4, {"contradicted": 1.0}), valued=True, missing=("7",))
    assert gone.verdict == "contradicted"
    wrong = find_attribution("According to the search results, t", TOOLS)
    assert _decide(attribution=wrong).verdict == "conflated"
    assert _decide(attribution=wrong, judgement=Judgement(0.4, {}), valued=True).verdict == (
        "conflated"
    )
    nli = Judgement(0.99, {}, {"contradiction": 0.95, "entailment": 0.05, "neutral": 0.0})
    assert _decide(judgement=nli).reasons == ("high_confidence_contradiction",)


def test_the_named_source_decides_only_where_the_content_route_does_not_support() -> None:
    """ "The member file says X" whose words route to the handbook: the member file settles
    it when it supports X, or contradicts it by a stated conflict; a claim the content route
    supports stays conflated unless the named source supports it at least as well (a
    conflation probe's named source shares a value and scores lower: fail closed)."""
    named_ok = _decide(route_source="m", route_status="stated_source")
    routed_low = _decide(
        route_source="h",
        route_family="document",
        judgement=Judgement(0.2, {"not_enough_evidence": 0.6, "contradicted": 0.4}),
    )
    assert named_or_routed(routed_low, named_ok) is named_ok
    assert named_or_routed(routed_low, None) is routed_low
    wrong = find_attribution("According to the search results, t", TOOLS)
    conflated = _decide(attribution=wrong)
    assert conflated.verdict == "conflated"
    named_lower = _decide(
        route_source="m",
        route_status="stated_source",
        judgement=Judgement(0.7, {"not_enough_evidence": 0.7, "contradicted": 0.3}),
    )
    assert named_lower.verdict == "supported"
    assert named_or_routed(conflated, named_lower) is conflated
    assert named_or_routed(conflated, named_ok) is named_ok  # as well as the content route
    by_score = _decide(judgement=Judgement(0.2, {"contradicted": 0.9}))
    assert by_score.verdict == "contradicted"
    assert named_or_routed(routed_low, by_score) is routed_low
    by_row = _decide(conflict="value_from_other_row")
    assert named_or_routed(routed_low, by_row) is by_row
    failed = _decide(error="RuntimeError: boom")
    assert named_or_routed(routed_low, failed) is routed_low


def test_a_stated_source_of_another_family_near_the_threshold_is_conflated() -> None:
    """Thirty-fourth round: a claim whose words match a source of another family than the
    one it names, scored just under the threshold, is conflated (reasons conflation and
    insufficient support); far under it, with a missing value or a compatible statement it
    is rejected as before, and a named source that settles it still decides."""
    wrong = find_attribution("According to the search results, t", TOOLS)
    assert wrong.status == "stated"
    near = Judgement(0.5 - CONFLATION_MARGIN, {"contradicted": 0.9})
    d = _decide(attribution=wrong, judgement=near)
    assert (d.verdict, d.reasons) == ("conflated", ("conflation", "insufficient_support"))
    assert d.attribution_compatible is False
    far = _decide(attribution=wrong, judgement=Judgement(0.29, {"contradicted": 0.9}))
    assert (far.verdict, far.reasons) == ("contradicted", ("insufficient_support",))
    missing = _decide(attribution=wrong, judgement=near, missing=("42.50",))
    assert missing.verdict == "contradicted"
    right = find_attribution("According to the account record, t", TOOLS)
    assert _decide(attribution=right, judgement=near).verdict == "contradicted"
    assert _decide(judgement=near).verdict == "contradicted"  # no statement: unavailable
    named_ok = _decide(route_source="m", route_status="stated_source")
    assert named_or_routed(d, named_ok) is named_ok
    assert named_or_routed(d, _decide(judgement=Judgement(0.2, {}))) is d


class HandbookFirst(LexicalEncoder):
    """Routes every claim to the handbook (its words do not decide here)."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        near = ("desk", "as lapsed.")  # the handbook's chunks and the claim
        return [[1.0, 0.0] if any(w in t for w in near) else [0.6, 0.8] for t in texts]


def test_a_claim_naming_a_source_is_also_checked_against_it() -> None:
    tools = {"get_member": "record", "read_handbook": "document"}
    member = "member: M-31\nname: Ines Rask\nstatus: lapsed"
    handbook = (
        "A member whose status lapses loses locker access. Lapsed members may rejoin at the "
        "desk; the status of a lapsed member shows at the desk."
    )
    calls = (
        call(0, "get_member", out("member-M-31", member)),
        call(1, "read_handbook", out("handbook", handbook)),
    )
    evidence = collect_evidence(calls, tools)
    claim = "The member record shows Ines Rask's status as lapsed."
    attribution = find_attribution(claim, tools)
    assert attribution.family == "record"
    to_handbook = route([1.0, 0.0], {"handbook": [1.0, 0.0], "member-M-31": [0.6, 0.8]})
    named = stated_route(attribution, to_handbook, evidence)
    assert named is not None and (named.source, named.status) == ("member-M-31", "stated_source")
    assert stated_route(attribution, named, evidence) is None  # already the named source
    result = Verifier(HandbookFirst(), FeatureChecker("premise_overlap", 0.6)).verify(
        claim, evidence, tools
    )
    assert result.claims[0].verdict == "supported" and result.claims[0].source == "member-M-31"
    assert result.claims[0].route_status == "stated_source"  # its words went to the handbook


def test_a_source_nothing_resolves_is_never_a_pass() -> None:
    """A claim that names a source the trace cannot resolve ("the Wexmoor Whispers blog
    says") blocks as ``conflated`` with reason ``unresolved_attribution``, however well it
    is supported; a generic phrase ("according to the sources") names no source and does
    not; several families are not an unresolved source either."""
    unknown = find_attribution("The Harwick quarterly bulletin notes that t", TOOLS)
    assert (unknown.status, unknown.reason) == ("ambiguous", "unresolved_phrase")
    blocked = _decide(attribution=unknown, judgement=Judgement(0.99, {}))
    assert (blocked.verdict, blocked.reasons) == ("conflated", ("unresolved_attribution",))
    generic = find_attribution("According to the sources, t", TOOLS)
    assert generic.reason == "generic_source"
    assert _decide(attribution=generic).verdict == "supported"
    several = Attribution("ambiguous", reason="several_families")
    assert _decide(attribution=several).verdict == "supported"


def test_answer_verdict_fails_closed() -> None:
    assert answer_verdict("  ", []).reasons == ("empty_answer",)
    ok = _decide()
    bad = _decide(index=1, missing=("9",))
    v = answer_verdict("text", [ok, bad])
    assert (v.verdict, v.blocking, v.reasons) == ("block", (1,), ("missing_protected_values",))
    assert answer_verdict("text", [ok]).allowed
    only_template = _decide(factual=False)
    assert answer_verdict("I hope this helps.", [only_template]).reasons == (
        "no_evidence_requiring_claim",
    )


# -- the pipeline over model-free parts ---------------------------------------------------
def lexical_verifier() -> Verifier:
    return Verifier(LexicalEncoder(), FeatureChecker("premise_overlap", 0.6))


def test_pipeline_routes_supports_and_flags_conflation() -> None:
    evidence = collect_evidence(CALLS, TOOLS)
    v = lexical_verifier()
    ok = v.verify(
        "According to the account record, Velmora Ostrand is on the Kestrel Gold plan.",
        evidence,
        TOOLS,
    )
    assert ok.verdict.allowed and ok.claims[0].source == "acct-1"
    conflated = v.verify(
        "The policy document states that Velmora Ostrand is on Kestrel Gold.", evidence, TOOLS
    )
    assert conflated.claims[0].verdict == "conflated"
    assert conflated.verdict.reasons == ("conflation",)
    swapped = v.verify("The monthly fee of Velmora Ostrand is 42.50 EUR.", evidence, TOOLS)
    # the field the claim names ("monthly fee") holds another amount: contradicted
    assert swapped.claims[0].verdict == "contradicted"
    assert swapped.claims[0].reasons == ("field_conflict",)
    assert swapped.claims[0].missing_values == ("42.50 EUR",) and not swapped.verdict.allowed


def test_empty_trace_routes_nothing_and_blocks() -> None:
    empty = collect_evidence((), TOOLS)
    result = lexical_verifier().verify("Velmora Ostrand is on Kestrel Gold. It costs 5.", empty, {})
    assert [c.reasons for c in result.claims] == [("not_routed",), ("not_routed",)]
    assert not result.verdict.allowed


class RaisingChecker:
    threshold = 0.5

    @property
    def identity(self) -> dict[str, Any]:
        return {"kind": "raises"}

    def score(self, rows: Any) -> list[Judgement]:
        raise RuntimeError("checker down")


def test_a_raising_checker_fails_its_claims_and_blocks() -> None:
    v = Verifier(LexicalEncoder(), RaisingChecker())
    result = v.verify(
        "Velmora Ostrand is on the Kestrel Gold plan.", collect_evidence(CALLS, TOOLS), TOOLS
    )
    assert result.claims[0].verdict == "failed"
    assert result.claims[0].error == "RuntimeError: checker down"
    assert result.verdict.reasons == ("failed_component",)


# -- repair -------------------------------------------------------------------------------
def test_repair_reattributes_rewrites_prunes_and_reverifies() -> None:
    evidence = collect_evidence(CALLS, TOOLS)
    v = lexical_verifier()
    text = (
        "The policy document states that Velmora Ostrand is on the Kestrel Gold plan. "
        "Kestrel Telecom has 9 million customers."
    )
    result = v.verify(text, evidence, TOOLS)
    assert not result.verdict.allowed
    seen: list[str] = []

    def verify(t: str) -> Any:
        seen.append(t)
        return v.verify(t, evidence, TOOLS)

    fixed = repair(result, verify, max_iterations=1)
    assert fixed.passed and fixed.method == "rewrite"
    assert "policy document" not in fixed.final_text
    assert fixed.final_text.startswith("According to the record from lookup_account,")
    assert seen == [fixed.final_text]  # the same verifier re-checked the revision


def test_repair_quotes_the_evidence_for_a_claim_conflated_only_near_the_threshold() -> None:
    """Its content is not supported well enough to keep under another attribution: the
    routed source's best chunk is quoted instead; a fully supported conflation keeps its
    content under the routed source's name."""
    wrong = find_attribution("According to the search results, t", TOOLS)
    near = _decide(
        attribution=wrong,
        judgement=Judgement(0.5 - CONFLATION_MARGIN, {}),
        best_chunk="Velmora Ostrand: Kestrel Gold",
    )
    full = _decide(attribution=wrong, best_chunk="Velmora Ostrand: Kestrel Gold")
    assert (near.verdict, full.verdict) == ("conflated", "conflated")
    allowed = AnswerResult("ok", (), answer_verdict("ok", []))
    for d, action in ((near, "evidence_rewrite"), (full, "reattribute")):
        blocked = AnswerResult("t", (d,), answer_verdict("t", [d]))
        fixed = repair(blocked, lambda t: allowed, max_iterations=1)
        assert fixed.steps[0].actions == ((0, action),)


def test_repair_falls_back_when_nothing_can_be_grounded() -> None:
    evidence = collect_evidence(CALLS, TOOLS)
    v = lexical_verifier()
    result = v.verify("Zorbleck invented the moon landing.", evidence, TOOLS)
    fixed = repair(result, lambda t: v.verify(t, evidence, TOOLS), max_iterations=2)
    assert fixed.method == "fallback" and fixed.final_text == FALLBACK and fixed.passed
    assert fixed.final.verdict.reasons == ("no_evidence_requiring_claim",)


def test_repair_bounds() -> None:
    evidence = collect_evidence(CALLS, TOOLS)
    result = lexical_verifier().verify("Velmora Ostrand is on Kestrel Gold.", evidence, TOOLS)
    assert not repair(result, lambda t: result, max_iterations=1).attempted
    for bad in (0, 4):
        with pytest.raises(ValueError, match=r"1\.\.3"):
            repair(result, lambda t: result, max_iterations=bad)


# -- evidence and graph -------------------------------------------------------------------
def test_evidence_fallbacks_dedupe_conflicts_and_errors() -> None:
    calls = (
        call(0, "calc", out(None, "4")),
        call(1, "calc", out(None, "5")),
        call(2, "web_search", out("w", "a"), out("w", "a")),
        call(3, "web_search", out("w", "b")),
        call(4, "web_search", out("x", "c"), error=True),
    )
    ev = collect_evidence(calls, TOOLS)
    assert [e.source for e in ev.items] == ["calc", "calc@1", "w", "w@3"]
    assert ev.conflicts == ("w",)
    assert ev.items[0].family == "unknown" and ev.items[2].family == "search"


def test_graph_is_stable_and_checks_completeness() -> None:
    node = AnswerNode("a0", "text", ("acct-1",), (((0, 4), "supported", "acct-1"),))
    g1 = trace_graph("s", CALLS, TOOLS, answers=[node])
    g2 = trace_graph("s", CALLS, TOOLS, answers=[node])
    assert graph_sha256(g1) == graph_sha256(g2)
    types = {e["type"] for e in g1["edges"]}
    assert types == {"made", "returned", "cites", "has", "routed_to"}
    ok, missing = completeness(g1, [("acct-1", sha256_text(RECORD))])
    assert ok and missing == []
    ok, missing = completeness(g1, [("acct-1", "0" * 64), ("nowhere", "1" * 64)])
    assert not ok and missing == ["acct-1", "nowhere"]


# -- metrics ------------------------------------------------------------------------------
def _claim(
    gold: str, got: str, gold_source: str | None = "s", source: str | None = "s"
) -> dict[str, Any]:
    return {
        "gold": {"verdict": gold, "gold_source": gold_source},
        "verdict": got,
        "source": source,
    }


def _record(claims: list[dict[str, Any]], **attribution: Any) -> dict[str, Any]:
    answer = {
        "role": "answer",
        "expected": "block",
        "verdict": {"verdict": "block"},
        "claims": claims,
        "decomposition": {
            "gold": 2,
            "decomposed": 3,
            "recalled": 2,
            "precise": 2,
            "value_pairs": 1,
            "values_exact": 0,
        },
        "repair": {"passed": True},
    }
    return {
        "case_id": "c",
        "attribution": {"answers": [answer], "graph": {"complete": True}, **attribution},
    }


def test_claim_metrics_pool_over_claims() -> None:
    r1 = _record([_claim("supported", "supported"), _claim("contradicted", "supported")])
    r2 = _record(
        [
            _claim("unsupported", "unsupported", source="t"),
            _claim("non_factual", "non_factual", None, None),
            _claim("conflated", "conflated"),
            _claim("not_enough_evidence", "not_enough_evidence", None, "s"),
        ]
    )
    agg = aggregate([r1, r2], ATTRIBUTION_METRICS)
    assert agg["reject_precision"]["value"] == 1.0
    assert agg["reject_recall"]["value"] == pytest.approx(3 / 4)
    assert agg["reject_f1"]["value"] == pytest.approx(6 / 7)
    assert agg["verdict_accuracy"]["value"] == pytest.approx(5 / 6)
    assert agg["source_accuracy"]["value"] == pytest.approx(3 / 4)
    assert agg["source_relation_accuracy"]["value"] == pytest.approx(2 / 4)
    assert agg["decomposition_precision"]["value"] == pytest.approx(4 / 6)
    assert agg["literal_exactness"]["value"] == 0.0
    assert agg["verdict_macro_f1"]["ci"] is not None


def _results(records: list[dict[str, Any]]) -> Any:
    from pytest_provenai.report.results import build_results

    return build_results(
        run={"id": "r"},
        models={},
        options={"seed": 42},
        records={"suites/test_attribution.py::test_trace": records},
        gates=[],
        fixture_errors=[],
        produced_by={},
        influence_costs={},
        timings={},
        cache={},
        seed=42,
        attribution_costs={"suites/test_attribution.py::test_trace[c]": {"seconds": 0.1}},
    )


def test_attribution_results_are_computed_once_and_rendered_by_summary_json_and_compare() -> None:
    from pytest_provenai.report.compare import compare_runs
    from pytest_provenai.report.results import results_from_json
    from pytest_provenai.report.summary import summary_lines

    base_records = [
        dict(
            _record([_claim("supported", "supported"), _claim("contradicted", "supported")]),
            case_id="a",
        ),
        dict(
            _record([_claim("unsupported", "unsupported"), _claim("conflated", "conflated")]),
            case_id="b",
        ),
        dict(_record([_claim("supported", "contradicted")]), case_id="c"),
    ]
    base = _results(base_records)
    summary = base.tests["suites/test_attribution.py::test_trace"].attribution
    assert summary is not None
    # the probe and session rates do not apply to trace records: left out, not shown as 0
    assert "probe_block_rate" not in summary and "session_allow_rate" not in summary
    counts = summary["verdict_macro_f1"].counts
    assert counts is not None
    pooled = macro_f1(counts)
    assert summary["verdict_macro_f1"].value == pytest.approx(pooled)
    assert summary["reject_recall"].denominator == 3
    lines = summary_lines(base)
    assert any(
        line.endswith("attribution n=3  (pooled over claims, 95% CI by trace)") for line in lines
    )
    assert any(line.strip().startswith("reject_recall") and "(2/3)" in line for line in lines)
    again = results_from_json(base.to_json())
    assert again.tests["suites/test_attribution.py::test_trace"].attribution == summary
    assert again.attribution_costs == base.attribution_costs

    fixed = [dict(r) for r in base_records]
    fixed[2] = dict(_record([_claim("supported", "supported")]), case_id="c")
    comparison = compare_runs(base, _results(fixed))
    diffs = {m.metric: m for m in comparison.metrics}
    f1 = diffs["verdict_macro_f1"]
    new_summary = _results(fixed).tests["suites/test_attribution.py::test_trace"].attribution
    assert new_summary is not None
    # the comparison uses the same pooled statistic as the summaries, not a per-case mean
    assert f1.base == pytest.approx(summary["verdict_macro_f1"].value)
    assert f1.new == pytest.approx(new_summary["verdict_macro_f1"].value)
    assert f1.diff is not None and f1.diff > 0 and f1.ci is not None
    assert diffs["verdict_accuracy"].diff == pytest.approx(4 / 5 - 3 / 5)


def test_macro_f1() -> None:
    counts = {"support:a": 2, "tp:a": 1, "fn:a": 1, "fp:b": 1, "support:b": 1, "fn:b": 1}
    assert macro_f1(counts) == pytest.approx((2 / 3 + 0.0) / 2)
    assert macro_f1({}) is None


def test_probe_metrics_use_exact_binomial_intervals() -> None:
    def probe(blocked: bool) -> dict[str, Any]:
        answers = [
            {
                "role": "probe",
                "verdict": {"verdict": "block" if blocked else "allow"},
                "claims": [{"verdict": "conflated" if blocked else "supported", "gold": None}],
                "repair": {"passed": True},
            },
            {
                "role": "control",
                "verdict": {"verdict": "allow"},
                "claims": [],
                "repair": {"passed": True},
            },
        ]
        return {
            "case_id": "p",
            "attribution": {
                "answers": answers,
                "graph": {"complete": True},
                "probe": {"wrong_attribution_retained": False},
            },
        }

    agg = aggregate([probe(True)] * 50, ATTRIBUTION_METRICS)
    assert agg["probe_block_rate"]["value"] == 1.0
    lo, hi = agg["probe_block_rate"]["ci"]
    assert hi == 1.0 and lo == pytest.approx(0.9289, abs=1e-3)  # Clopper–Pearson 50/50
    assert agg["wrong_attribution_retained_rate"]["value"] == 0.0
    assert aggregate([probe(False)], ATTRIBUTION_METRICS)["conflation_label_rate"]["value"] == 0


def test_auditor_identity_names_the_repair_budget() -> None:
    a = Auditor(lexical_verifier(), 2)
    assert a.identity["repair_iterations"] == 2
    assert a.identity["encoder"]["name"] == "lexical-hashed-terms"


def test_a_repair_that_quotes_the_wrong_familys_own_output_retains_nothing() -> None:
    """The probe gate's "wrong attribution retained": the probe's wrong family named for
    anything but a word-for-word quote of that family's own output."""
    from pytest_provenai.attribution.record import _wrongly_stated
    from pytest_provenai.frozen.traces import Evidence, EvidenceSet

    web = "Harrow Mills Bakery gave 400 loaves to the shelter in 2034, a local paper reported."
    evidence = EvidenceSet(
        (
            Evidence("acct-7", "lookup_account", "record", "donor: Harrow Mills Bakery", "x", 0),
            Evidence("web-1", "web_search", "search", web, "y", 1),
        )
    )
    quoted = f'According to the search results from web_search, "{web}"'
    assert not _wrongly_stated(quoted, TOOLS, "search", evidence)
    # the probe's own sentence, or a quote the search never said, keeps the wrong family
    probe = "Harrow Mills Bakery is donor D-7, a web search shows."
    assert _wrongly_stated(probe, TOOLS, "search", evidence)
    made_up = 'According to the search results, "Harrow Mills Bakery is donor D-7."'
    assert _wrongly_stated(made_up, TOOLS, "search", evidence)
    assert not _wrongly_stated("Harrow Mills Bakery is donor D-7.", TOOLS, "search", evidence)


def test_twenty_first_round_a_name_only_the_other_output_has_outweighs_a_word() -> None:
    """Two street calendars: the claim names Larkspur Road, which only the second has, and
    holds its date and weekday; "emptied", said only in the first one's notes, no longer
    keeps it there. A name only the chosen output has still does."""
    outputs = {
        "fennimore": "street: Fennimore Close\ndate | day | bins\n2031-06-12 | Thu | blue\n"
        "2031-06-26 | Thu | blue (brown bins may be emptied later)",
        "larkspur": "street: Larkspur Road\ndate | day | bins\n2031-06-17 | Tue | blue\n"
        "2031-06-24 | Tue | black",
    }
    r = route([1.0, 0.0], {"fennimore": [1.0, 0.0], "larkspur": [0.8, 0.6]})
    claim = "For Larkspur Road, the blue bin will be emptied on Tuesday 17 June."
    assert anchor(r, claim, claim, outputs).source == "larkspur"
    unnamed = "The blue bin will be emptied on Tuesday 17 June."
    assert anchor(r, unnamed, unnamed, outputs) is r
    both = "For Larkspur Road and Fennimore Close, the blue bin will be emptied on Tuesday 17 June."
    assert anchor(r, both, both, outputs) is r


def test_a_choice_holding_none_of_two_values_does_not_keep_the_claim() -> None:
    """The terms page the centroid picked says "daily rate" and "deposit" but holds neither
    of the claim's two amounts; the booking holds both: the claim is checked there (its
    words no longer keep it in the page). One value alone, or a page holding one of the
    two, still keeps it."""
    outputs = {
        "terms": "Standard terms: the daily rate and the deposit are set per booking. "
        "A deposit is refunded within 14 days of return.",
        "booking": "booking: HX-2201\nvehicle: Skoda Fabia\nrate_per_day_eur: 61\n"
        "security_hold_eur: 250",
    }
    r = route([1.0, 0.0], {"terms": [1.0, 0.0], "booking": [0.8, 0.6]})
    claim = "The car costs 61 euros a day, with a 250 euro deposit."
    assert (anchor(r, claim, claim, outputs).source, anchor(r, claim, claim, outputs).status) == (
        "booking",
        "value_anchored",
    )
    one = "The deposit is 250 euros."
    assert anchor(r, one, one, outputs) is r
    held = {**outputs, "terms": outputs["terms"] + " Typical deposit: 250 euros."}
    assert anchor(r, claim, claim, held) is r
    # a word the choice holds as a field's value or a table's cell says which record the
    # claim is about: the other record's two values said of it are a contradiction to be
    # read there (a review's invented pairs, which the first form of the rule moved)
    for chosen, other, swapped in (
        (
            "vehicle: estate\nrate_per_day_eur: 74\ndeposit_eur: 400",
            "vehicle: hatchback\nrate_per_day_eur: 49\ndeposit_eur: 250",
            "The estate costs 49 euros a day with a 250 euro deposit.",
        ),
        (
            "room,temp_c,humidity_pct\nkitchen,19,40\nhall,18,45",
            "sensor: SN-4\nlocation: bedroom\nreading_c: 22\nrh_pct: 55",
            "The kitchen is at 22 degrees with 55% humidity.",
        ),
    ):
        picked = route([1.0, 0.0], {"chosen": [1.0, 0.0], "other": [0.8, 0.6]})
        pair = {"chosen": chosen, "other": other}
        assert anchor(picked, swapped, swapped, pair) is picked


def test_a_claim_naming_a_tool_is_also_checked_against_that_tools_output() -> None:
    """Two record tools: the claim names the water-test log, and its words went to the
    plant-feed record (the same family, so no conflation to decide): the named tool's
    output is read too. A claim naming only the family, or the routed tool itself, is not
    routed again."""
    tools = {"get_water_test_log": "record", "get_plant_feed": "record"}
    calls = (
        call(0, "get_plant_feed", out("feed-1", "feed: hypochlorite\nrate_ml_h: 140\nalarm: none")),
        call(1, "get_water_test_log", out("wq-1", "time: 13:10\nfree_chlorine_ppm: 0.7")),
    )
    evidence = collect_evidence(calls, tools)
    claim = "The water test log has free chlorine at 0.7 ppm at 13:10."
    attribution = find_attribution(claim, tools)
    assert attribution.tool == "get_water_test_log"
    to_feed = route([1.0, 0.0], {"feed-1": [1.0, 0.0], "wq-1": [0.6, 0.8]})
    named = stated_route(attribution, to_feed, evidence)
    assert named is not None and (named.source, named.status) == ("wq-1", "stated_source")
    assert stated_route(attribution, named, evidence) is None  # already the named tool's
    family_only = find_attribution("The record has free chlorine at 0.7 ppm.", tools)
    assert family_only.tool is None and stated_route(family_only, to_feed, evidence) is None
    # the named tool's output is another person's: a name the claim and its routed output say
    # and that output lacks keeps it away (a review's invented pair)
    pupils = {"get_pupil": "record", "get_reading_log": "record"}
    logs = collect_evidence(
        (
            call(0, "get_pupil", out("pupil-1", "pupil: Jake Moss\nyear: 4\nminutes_week: 20")),
            call(
                1, "get_reading_log", out("rl-1", "pupil: Amy Moss\nbook: Owl Babies\nminutes: 35")
            ),
        ),
        pupils,
    )
    jake = "The reading log shows Jake Moss read for 35 minutes."
    to_pupil = route([1.0, 0.0], {"pupil-1": [1.0, 0.0], "rl-1": [0.6, 0.8]})
    assert stated_route(find_attribution(jake, pupils), to_pupil, logs, jake) is None
    amy = "The reading log shows Amy Moss read for 35 minutes."
    named_amy = stated_route(find_attribution(amy, pupils), to_pupil, logs, amy)
    assert named_amy is not None and named_amy.source == "rl-1"


def test_fifty_first_session_what_a_source_is_for_stays_in_the_claim() -> None:
    tools = {"get_ledger_card": "database", "get_inspection_record": "record"}

    def content(text: str) -> str:
        (claim,) = decompose(text, tools)
        return claim.content

    # the thing the source is for is what the claim is about: it stays to be checked
    assert content("The ledger card for UHT milk shows 40 cartons.") == "40 cartons (UHT milk)."
    assert content("The inspection record for Pier 1 gives severity 4.") == (
        "Gives severity 4 (Pier 1)."
    )
    # named again in the claim, a source's own number, or a source itself: nothing added
    assert content("The ledger card for UHT milk shows UHT milk at 40.") == "UHT milk at 40."
    assert content("The inspection record for IR-2291 shows severity 4.") == "Severity 4."
    assert content("According to the results of the web search, it opens at 9.") == (
        "It opens at 9."
    )
    # whom the source belongs to, unless a thing or its own number
    tools["get_candidate_record"] = "record"
    assert content("Pia's candidate record shows no access arrangements.") == (
        "No access arrangements (Pia)."
    )
    assert content("Photo's ledger card shows 40.") == "40."
    assert content("Van 12's candidate record shows 40.") == "40 (Van 12)."
    # the author of a report is not whom it is about
    tools["get_inspection_report"] = "document"
    assert content("Sam Reid's inspection report says the pier is sound.") == "The pier is sound."
    assert content("Meter FVW-88320's candidate record shows 40.") == "40."
    # a key the source is looked up by (an identifier, one value) is not what it is about
    assert content("C17's candidate record shows 40.") == "40."
    assert content("The ledger card for the 14th shows 40 cartons.") == "40 cartons."
    # "as X puts it": the source and its "puts it" go
    assert content("As the inspection record puts it, the pier is sound.") == "The pier is sound."
