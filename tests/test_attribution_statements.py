"""Issue 23 (A, B): stated families found by cue shapes and resolved from the trace itself;
decomposition into claims (conjunctions, distributed attribution, protected values kept
whole) and non-factual sentences.

The pleasantry lists at the bottom are HELD OUT: written after the rules were frozen and
never used to tune them (the rules were fitted on the hand-written train/validation sets'
sentences). A sentence here that the rules get wrong is reported by the rate test, not fixed
by adding its words to the rules.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_provenai.attribution.decompose import claim_at, decompose, is_pleasantry
from pytest_provenai.attribution.families import (
    Attribution,
    find_attribution,
    implied_attribution,
)
from pytest_provenai.attribution.pipeline import Verifier, resolve_by_similarity
from pytest_provenai.attribution.statement import (
    FAMILY_DESCRIPTIONS,
    Listing,
    find_spans,
    listing_of,
    resolve,
)

# An invented trace's tools (not from any fixture set).
TOOLS = {
    "get_parcel": "record",
    "depot_db": "database",
    "fetch_shipping_terms": "document",
    "web_search": "search",
    "label_scan_info": "metadata",
}


# -- cue shapes -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "family", "phrase"),
    [
        # possessives and modifiers before the head noun
        ("The depot's stock table lists 14 crates.", "database", "The depot's stock table lists "),
        ("Our parcel database shows it left on 2 May.", "database", "Our parcel database shows "),
        ("The file's metadata says it was scanned at 09:12.", "metadata", None),
        ("Per her parcel record, it weighs 4.2 kg.", "record", "Per her parcel record, "),
        # verbs and shapes beyond "says"
        ("A web search turned up that the depot opened in 2029.", "search", None),
        ("The depot query returned two late vans.", "database", None),
        ("Going by the shipping terms, refunds take 14 days.", "document", None),
        ("Under the shipping terms, a signature is needed.", "document", None),
        # sentence-final and parenthetical
        ("Refunds take 14 days, according to the terms.", "document", ", according to the terms"),
        ("The van left at 06:40, the depot table shows.", "database", ", the depot table shows"),
        ("The firm, news reports say, employs 40 drivers.", "search", ", news reports say,"),
        # tool name words decide ("terms" is fetch_shipping_terms), then the lexicon
        ("The terms say parcels over 30 kg cost extra.", "document", None),
        ("Online sources say the depot is in Harwick.", "search", None),
        ("The scan info lists the label as printed at 08:03.", "metadata", None),
        ("As the handbook notes, drivers rest every 4 hours.", "document", None),
        # prefaces, brackets, passives with "by", "what X says"
        ("That fits the handbook: drivers rest every 4 hours.", "document", None),
        ("The van left at 06:40 (per the depot table).", "database", " (per the depot table)"),
        ("Looking at the depot table, the van left at 06:40.", "database", None),
        ("The refund was confirmed by the parcel record.", "record", " by the parcel record"),
        ("According to what the terms say, refunds take 14 days.", "document", None),
        # joined phrases: the part's source names the family, a date is not a source
        ("The data from the depot table shows the van left at 06:40.", "database", None),
        ("Per VX-226's entry in the depot table, it is due on 5 May.", "database", None),
        ("According to the parcel record in March, it weighed 4 kg.", "record", None),
        ("VX-226 is listed in the depot table as due for service.", "database", None),
        ("I checked the depot table: the van left at 06:40.", "database", None),
        # a bare source phrase after "per" that names a tool or no rate's unit; "says X"
        # closing the claim; a label with a code; a frame closed by "that"; "->"; "csv"
        ("Van 7 left at 06:40 per depot table.", "database", " per depot table"),
        ("Van 7 left at 06:40, per parcel record.", "record", ", per parcel record"),
        ("Signatures are needed, says shipping terms section 4.", "document", None),
        ("Terms S-4: signatures are needed on delivery.", "document", "Terms S-4: "),
        (
            "It has been confirmed from the depot table that van 7 left at 06:40.",
            "database",
            "from the depot table that ",
        ),
        (
            "It is recorded by reference to the parcel record that it weighs 4 kg.",
            "record",
            None,
        ),
        ("I checked the depot table -> van 7 left at 06:40.", "database", None),
        ("The depot csv has van 7 leaving at 06:40.", "database", None),
    ],
)
def test_cue_shapes_find_the_stated_family(text: str, family: str, phrase: str | None) -> None:
    a = find_attribution(text, TOOLS)
    assert (a.status, a.family) == ("stated", family), a
    assert a.rule in ("tool_name", "alias")
    if phrase is not None:
        assert a.phrase == phrase
    assert a.span is not None and text[a.span[0] : a.span[1]] == a.phrase


@pytest.mark.parametrize(
    "text",
    [
        "The courier charges 2.00 GBP per hour of waiting.",  # "per hour" is a rate
        "The parcel was found in the depot in March.",  # "in the depot" is a place
        "Bay 4 holds 860 parcels.",  # an entity, not a source
        "The 16 October show is sold out.",  # "show" is a noun here
        "Overnight traffic showed up on two nights.",
        "Hope you find the parcel quickly!",
        "The label has been reprinted twice.",
        "The humidity must stay under 55 percent.",
        "The failed payments were caused by an expired card.",
        "The van has one rule: drive slowly.",
        "Copies cost 10p per printed page.",  # a rate, not a source
        "Two complaints are on file for van 7.",  # recorded; no source named
        "Returns are free, says Tom.",  # a person, not a source
    ],
)
def test_shapes_that_state_no_source(text: str) -> None:
    assert find_attribution(text, TOOLS).status == "unavailable", text


def test_unknown_source_is_ambiguous_with_a_reason_never_a_family() -> None:
    a = find_attribution("The shipping manifest says the van carried 40 boxes.", {})
    assert (a.status, a.family, a.reason) == ("ambiguous", None, "unresolved_phrase")
    assert a.noun_phrase == "shipping manifest"
    generic = find_attribution("According to the sources, the van carried 40 boxes.", TOOLS)
    assert (generic.status, generic.reason) == ("ambiguous", "generic_source")
    two = find_attribution(
        "According to the parcel record and a web search, the van carried 40 boxes.", TOOLS
    )
    assert (two.status, two.reason) == ("ambiguous", "several_families")
    assert implied_attribution(a, {"record"}) == a  # a stated-but-unknown phrase stays so


def test_record_names_the_rule() -> None:
    by_tool = find_attribution("The terms say parcels over 30 kg cost extra.", TOOLS)
    assert by_tool.as_dict() == {
        "status": "stated",
        "family": "document",
        "tool": "fetch_shipping_terms",
        "phrase": "The terms say ",
        "rule": "tool_name",
        "reason": "",
    }
    by_alias = find_attribution("Per the handbook, drivers rest every 4 hours.", TOOLS)
    assert by_alias.rule == "alias"


def test_resolution_order_tool_name_then_description_then_lexicon() -> None:
    # the trace's tool name beats the lexicon: "sheet" alone would be weak database
    tools = {"fetch_recipe_sheet": "document", "brew_db": "database"}
    assert resolve("the recipe sheet", tools).family == "document"
    assert resolve("the recipe sheet", tools).rule == "tool_name"
    # a lexicon noun matches a tool only when the tool's name ends with it
    tools2 = {"get_record_metadata": "metadata", "lookup_member": "record"}
    assert resolve("the member record", tools2).family == "record"
    # a description, when a caller has the tool listing
    listing = listing_of([("brew_db", {})], tools, {"brew_db": "Fermentation readings per batch"})
    r = resolve("the fermentation readings", tools, listing)
    assert (r.family, r.tool, r.rule) == ("database", "brew_db", "tool_description")
    # strong head noun before a modifier's family marker; markers before weak heads
    assert resolve("the online database", {}).family == "database"
    assert resolve("news reports", {}).family == "search"
    assert resolve("the report", {}).family == "document"
    assert resolve("the shipping manifest", {}).reason == "unresolved_phrase"
    # the electronic form of a tool's word: "the eCRF" is get_crf_entry, "the e-waybill" too
    tools3 = {"get_crf_entry": "record", "fetch_waybill": "document"}
    assert resolve("the eCRF", tools3).tool == "get_crf_entry"
    assert resolve("the e-waybill", tools3).tool == "fetch_waybill"
    assert resolve("the echo", tools3).family == "search"  # a word of its own stays one


def test_what_a_call_opened_names_its_tool() -> None:
    # the lexicon would say database for "csv" and "sheet"; the trace says which tool opened
    # the file, so the phrase names that tool (invented tools and paths)
    tools = {"open_file": "document", "stock_db": "database", "web_search": "search"}
    calls = [
        ("open_file", {"path": "depot/grit_supply_plan_v2.csv"}),
        ("stock_db", {"sql": "SELECT bin, tonnes FROM salt_bins WHERE depot = 'D4'"}),
        ("web_search", {"query": "grit supply winter forecast report"}),
    ]
    listing = listing_of(calls, tools)
    for phrase in ("the supply csv", "the grit supply sheet", "the csv"):
        r = resolve(phrase, tools, listing)
        assert (r.family, r.tool, r.rule) == ("document", "open_file", "tool_arguments"), phrase
    assert resolve("the supply csv", tools).family == "database"  # no listing: the lexicon
    # a SQL query's table is what the database tool opened
    r = resolve("the salt bins table", tools, listing)
    assert (r.family, r.tool) == ("database", "stock_db")
    # a search query is a topic, not a source: "the forecast report" stays the lexicon's
    assert resolve("the forecast report", tools, listing).rule == "alias"
    # words that name no source stay unresolved: "the grit supply" has no source noun
    assert resolve("the grit supply", tools, listing).family is None
    # a strong head noun keeps its family ("the bins record" is a record even though the
    # query read salt_bins); "the bins list" has no lexicon head: a place, not a source
    assert resolve("the bins record", tools, listing).rule == "alias"
    assert resolve("the salt bins list", tools, listing).family is None


def test_an_identifier_a_tool_was_called_with_names_that_tool() -> None:
    tools = {"get_job": "record", "parts_db": "database"}
    calls = [("get_job", {"job": "QX-7731"}), ("parts_db", {"sql": "SELECT * FROM parts"})]
    listing = listing_of(calls, tools)
    a = find_attribution("Per ticket QX-7731, the rear hub was rebuilt.", tools, listing)
    assert (a.status, a.family, a.tool, a.rule) == ("stated", "record", "get_job", "tool_arguments")
    # an identifier alone is the thing the claim is about, not a source
    alone = find_attribution("QX-7731 remains listed as open.", tools, listing)
    assert alone.family is None
    # without the listing the phrase names nothing the trace knows
    assert find_attribution("Per ticket QX-7731, the rear hub was rebuilt.", tools).family is None
    # dates, times and short codes are no identifiers; a query's values filter its rows
    dated = listing_of([("get_job", {"day": "2033-04-02", "at": "08:15", "bay": "B4"})], tools)
    assert dated.identifiers == ()
    queried = listing_of(
        [("parts_db", {"sql": "SELECT * FROM parts WHERE job = 'QX-7731'"})], tools
    )
    assert queried.identifiers == ()
    assert queried.opened == (("parts_db", frozenset({"part"})),)


def test_spans_do_not_overlap_and_are_in_order() -> None:
    text = "According to the terms, and as the depot table shows, the fee is 3 EUR."
    spans = find_spans(text, lambda np: resolve(np, TOOLS).family is not None)
    assert [s.start for s in spans] == sorted(s.start for s in spans)
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))


# -- the phrase is stripped from what is scored ------------------------------------------------
@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Per her parcel record, it weighs 4.2 kg.", "It weighs 4.2 kg."),
        ("Refunds take 14 days, according to the terms.", "Refunds take 14 days."),
        ("The firm, news reports say, employs 40 drivers.", "The firm employs 40 drivers."),
        ("A web search turned up that the depot opened in 2029.", "The depot opened in 2029."),
        # a content verb carries meaning: only the source is cut
        ("The shipping terms allow returns within 30 days.", "Allow returns within 30 days."),
        ("According to the parcel record in March, it weighed 4 kg.", "In March, it weighed 4 kg."),
        ("VX-226 is listed in the depot table as due.", "VX-226 is listed as due."),
    ],
)
def test_claim_content_has_no_attribution_phrase(text: str, content: str) -> None:
    assert claim_at(text, (0, len(text.encode())), TOOLS).content == content


class _Unit:
    """A toy encoder: one axis per family keyword, so similarity is predictable."""

    AXES = ("record", "search", "database", "document", "metadata", "manifest")

    @property
    def identity(self) -> dict[str, Any]:
        return {"kind": "toy"}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for t in texts:
            low = t.lower()
            v = [float(low.count(a)) for a in self.AXES]
            if "manifest" in low:  # a manifest reads like a document
                v[3] += 1.0
            n = sum(x * x for x in v) ** 0.5 or 1.0
            out.append([x / n for x in v])
        return out

    def align(self, claim: str, premise_chunks: Sequence[str]) -> tuple[float, float]:
        return 0.0, 0.0

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def test_similarity_resolves_an_unknown_phrase_with_a_margin() -> None:
    unknown = find_attribution("The shipping manifest says the van carried 40 boxes.", {})
    got = resolve_by_similarity(_Unit(), [unknown])
    assert (got[0].status, got[0].family, got[0].rule) == ("stated", "document", "similarity")
    # nothing close enough: stays ambiguous, never silently a family
    vague = Attribution("ambiguous", reason="unresolved_phrase", noun_phrase="blue van")
    assert resolve_by_similarity(_Unit(), [vague]) == [vague]
    assert set(FAMILY_DESCRIPTIONS) == {"record", "search", "database", "document", "metadata"}


def test_verifier_applies_similarity_before_scoring() -> None:
    from pytest_provenai.attribution.lexical import FeatureChecker

    v = Verifier(_Unit(), FeatureChecker("premise_overlap", 0.5))
    claims = decompose("The shipping manifest says the van carried 40 boxes.", {})
    assert claims[0].attribution.status == "ambiguous"
    assert v.resolve_attributions(claims)[0].attribution.family == "document"


# -- decomposition ----------------------------------------------------------------------------
def test_conjunctions_split_into_claims_and_share_subject_and_attribution() -> None:
    text = "Harwick Freight was founded in 1982 and employs 2,895 people, according to the terms."
    claims = decompose(text, TOOLS)
    assert [c.text for c in claims] == [
        "Harwick Freight was founded in 1982",
        "employs 2,895 people, according to the terms.",
    ]
    assert claims[1].content == "Harwick Freight employs 2,895 people."
    assert [c.attribution.family for c in claims] == ["document", "document"]
    opening = decompose("Per the depot table, the van left at 06:40 and the fee was 3 EUR.", TOOLS)
    assert [c.attribution.family for c in opening] == ["database", "database"]
    assert opening[1].content == "The fee was 3 EUR."


def test_clause_lists_split_but_values_and_noun_lists_stay_whole() -> None:
    clauses = decompose(
        "The mash is 60 minutes, the boil is 90 minutes, and fermentation takes 10 days.", {}
    )
    assert len(clauses) == 3
    for text in (
        "The room has to stay between 45 and 55 percent humidity.",
        "Rye, oats and barley are sold at the shop.",
        "Marks and Spencer opened in 1884 in Leeds.",
        "The fee is 3 EUR and 5 EUR on Sundays.",
        "Ratios of 1.5 and 2.0 were measured.",
    ):
        assert len(decompose(text, {})) == 1, text
    kept = decompose("Version 4.1.1 shipped on 14 June 07:15 and fixed the login bug.", {})
    assert kept[0].text == "Version 4.1.1 shipped on 14 June 07:15"
    assert kept[1].content == "Version 4.1.1 fixed the login bug."


@pytest.mark.parametrize(
    ("sentence", "pleasantry"),
    [
        # an exclamation or a sign-off: what follows it decides
        ("Good news though, the permit was granted on Friday!", False),
        ("Great result for the Owls, they won 3-1.", False),
        ("Thanks for waiting, the refund is 40 EUR.", False),
        ("Sorry about that - the van leaves at 07:10.", False),
        ("Good news!", True),
        ("Lovely result for a cold spring!", True),
        ("Warm regards, Tobias Venn, Bookings Desk, Unit 7", True),
        ("Thanks, Priya.", True),
        ("Sorry for the wait - hope that helps!", True),
        # chat and business closings
        ("Hit us up if you have more questions!", True),
        ("Don't hesitate to get in touch if anything is unclear.", True),
        ("See y'all on Saturday!", True),
        ("What a season!", True),
        ("Right, so here's the situation with the boiler.", True),
    ],
)
def test_exclamations_and_sign_offs(sentence: str, pleasantry: bool) -> None:
    """An opening exclamation ("Good news though, …", "Thanks for waiting, …") is judged by
    what follows it: a fact after it is asserted (a contradiction there must not pass as
    small talk); a signature, nothing or another pleasantry is not."""
    assert is_pleasantry(sentence) is pleasantry


@pytest.mark.parametrize(
    ("sentence", "pleasantry"),
    [
        ("I'd ring the gatehouse before the driver sets off.", True),
        ("I would recommend booking the 07:15 crossing.", True),
        ("You might want to book early.", True),
        ("It might be worth asking the depot first.", True),
        ("Do ring the practice if you'd like to swap either slot.", True),
        ("That's everything I could find on the branch itself.", True),
        ("I'd say the ferry leaves at 8.", False),
        ("I'd been told the office shuts at 5.", False),
        ("It would be worth 40 GBP at auction.", False),
        ("That's the last sailing of the day.", False),
        ("Call the depot on 01632 960 441.", False),
    ],
)
def test_advice_and_closings_assert_nothing(sentence: str, pleasantry: bool) -> None:
    """First-person advice, "you might want to", "do ring … if you …" and "that's everything I
    could find" assert nothing; a hedged claim, a reported fact or a value does."""
    assert is_pleasantry(sentence) is pleasantry


@pytest.mark.parametrize(
    ("sentence", "pleasantry"),
    [
        # formal closings and offers of what "can be provided on request"
        ("We trust the above answers the committee's query.", True),
        ("I remain at your service should anything be unclear.", True),
        ("Additional records can readily be supplied on request.", True),
        ("Minutes of the meeting can be supplied on request.", False),
        ("Refunds can be provided on request within 14 days.", False),
        # promises without a subject, texting, radio sign-offs and hand-overs
        ("will follow up with the depot tmrw", True),
        ("can dig out the invoices if u need", True),
        ("any issues just shout", True),
        ("Over to the night crew.", True),
        ("Cheers, over and out.", True),
        ("Over 200 bags were sorted on Friday.", False),
        ("Will Ashdown chased the invoice on 3 May.", False),
    ],
)
def test_closings_in_other_registers(sentence: str, pleasantry: bool) -> None:
    """A formal close ("I remain at your service"), an offer of more on request, a promise
    with its subject dropped ("will follow up …") and a radio sign-off assert nothing; a
    policy that something is provided on request, or a sentence that only opens with
    "Over"/"Will", does."""
    assert is_pleasantry(sentence) is pleasantry


def test_frames_and_asides_are_not_the_claims_content() -> None:
    """ "It should be noted, for the avoidance of doubt, that …" frames a proposition: the
    content checked is the proposition, and an aside between commas is no clause."""
    claims = decompose(
        "It should be noted, for the avoidance of doubt, that van 12 was not serviced.", {}
    )
    assert [c.content for c in claims] == ["Van 12 was not serviced."]
    claims = decompose("The depot has, to the best of our knowledge, been closed since May.", {})
    assert [c.content for c in claims] == ["The depot has been closed since May."]
    assert decompose("It seems the ferry leaves at 9.", {})[0].content == "The ferry leaves at 9."


def test_pleasantries_are_non_factual_even_with_a_value() -> None:
    assert not decompose("Happy to look up other depots near 4410 if that helps.", {})[0].factual
    assert decompose("Happy Valley Depot opened in 2019.", {})[0].factual


# Written after the rules were frozen; not tuned on (see the module docstring).
HELD_OUT_PLEASANTRIES = [
    "Hope this gives you what you need for the audit.",
    "I hope the move goes smoothly.",
    "We hope the new schedule works for your team!",
    "Have a great weekend!",
    "Have fun at the festival!",
    "Best of luck with the inspection.",
    "All the best for the launch.",
    "Wishing you a calm shift tonight.",
    "Safe journey home!",
    "Bon voyage!",
    "Take care on the icy roads.",
    "Stay warm out there!",
    "Thank you for waiting while I checked.",
    "Many thanks for the extra details.",
    "Apologies for the slow reply.",
    "I'm sorry the parcel is running late.",
    "So sorry about the confusion over the dates.",
    "I'd be glad to compare the other quotes as well.",
    "Glad to run the same check for next month.",
    "Feel free to send over the second invoice.",
    "Do let me know whether the totals match your records.",
    "Just ask if the summary needs more detail.",
    "Give me a shout when the new readings are in.",
    "Would you like me to check the other branch?",
    "Shall I pull the figures for last year too?",
    "Anything else I can look into?",
    "Want me to draft a reply to the supplier?",
    "Congratulations on the promotion!",
    "Great news for the volunteers!",
    "What a fantastic season for the club!",
    "No worries at all.",
    "You're welcome!",
    "Fingers crossed the weather holds.",
    "Well done to the whole kitchen team!",
    "If you need the raw numbers, I can send them.",
]

HELD_OUT_FACTUAL = [
    "Happy Valley Farm opened its second shop in 2019.",
    "Hope Street station closes at 23:30 on Sundays.",
    "Thanks to the new pump, output rose by 12 percent.",
    "Good Luck Café serves breakfast until 11:00.",
    "Enjoy Park is closed for repairs until 4 March.",
    "The welcome pack lists three emergency contacts.",
    "Safe Harbour Insurance covers the trailer up to 5,000 EUR.",
    "The stay was extended to 14 nights.",
    "Keeper Mills supplied 40 tonnes of flour in May.",
    "The apology letter was sent on 2 June 2031.",
    "The team hoped to finish by Friday but finished on Monday.",
    "Sorrel Quay handles 12 ferries a day.",
    "The festival had 8,400 visitors over three days.",
    "Her luck ran out in the final round, which she lost 2-3.",
    "The fun run raised 3,200 GBP for the hospice.",
    "The care home has 46 beds.",
    "The thank-you dinner is booked for 19:30.",
    "Glad Tidings Choir performs on 24 December.",
    "The greeting card range grew to 120 designs.",
    "Brilliant Lighting Ltd installed the stage lamps.",
    "The great hall seats 350 people.",
    "The shop stays open late on Thursdays.",
    "The help desk answered 1,250 calls in April.",
    "Drivers must keep an eye on the load gauge, the handbook says.",
    "The crossing takes 45 minutes in calm weather.",
    "The warm-up session starts at 09:15.",
    "The hive produced twelve frames of honey.",
    "The refund was approved on 3 May 2031.",
    "Best Western Lodge has 88 rooms.",
    "The final score was 4-1 to the visitors.",
    "Wishbone Kitchens fitted the counters in 2030.",
    "The safe deposit box is rented until 2032.",
]


def test_held_out_pleasantries_and_factual_look_alikes() -> None:
    """Measured when written: 35/35 pleasantries non-factual, 32/32 look-alikes factual.
    The bound leaves room for a rule change elsewhere, not for tuning on these."""
    assert len(HELD_OUT_PLEASANTRIES) >= 30 and len(HELD_OUT_FACTUAL) >= 30
    non_factual = [s for s in HELD_OUT_PLEASANTRIES if not any(c.factual for c in decompose(s, {}))]
    factual = [s for s in HELD_OUT_FACTUAL if all(c.factual for c in decompose(s, {}))]
    assert len(non_factual) / len(HELD_OUT_PLEASANTRIES) >= 0.9, set(HELD_OUT_PLEASANTRIES) - set(
        non_factual
    )
    assert len(factual) / len(HELD_OUT_FACTUAL) >= 0.95, set(HELD_OUT_FACTUAL) - set(factual)
    assert all(is_pleasantry(s) for s in non_factual[:5])


_PIECES = [
    "According to",
    "the",
    "record",
    "says",
    ",",
    ".",
    " and ",
    "per",
    "hour",
    "'s",
    "Hope",
    "4.1.1",
    "14 June 07:15",
    "between 45 and 55",
    "web_search",
    "?",
    "!",
    "Café",
    "\n",
    "of",
    "the depot table shows",
    "news reports",
    "",
]


@pytest.mark.parametrize("seed", range(40))
def test_any_text_decomposes_without_raising_and_ranges_hold(seed: int) -> None:
    rng = random.Random(seed)
    text = " ".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 30)))
    data = text.encode("utf-8")
    for c in decompose(text, TOOLS):
        assert data[c.start : c.end].decode("utf-8") == c.text
        a = c.attribution
        assert a.status in ("stated", "ambiguous", "implied", "unavailable")
        assert (a.family is not None) == (a.status == "stated") or a.status == "implied"
        assert a.rule is None or a.status == "stated"


@pytest.mark.parametrize(
    ("sentence", "pleasantry"),
    [
        ("Morning! Here's where things stand with M-03.", True),
        ("Hi Sam, here's where the Pellow Cove fieldwork stands.", True),
        ("Good morning, Sam!", True),
        ("I'll send reminders to the families who still owe.", True),
        ("Any other questions from Devika, just forward them on.", True),
        # a greeting or a framing before a fact keeps the fact checkable
        ("Dear customer, the fee is £40.", False),
        ("Morning! The fee is £40.", False),
        ("Here's what the invoice says: £40 is due.", False),
        ("I'll note that the invoice was £40.", False),
        ("Morning high water is at 10:52.", False),
        ("Hello Fresh delivered 3 boxes.", False),
    ],
)
def test_greetings_framings_and_the_agents_own_plans_assert_nothing(
    sentence: str, pleasantry: bool
) -> None:
    assert is_pleasantry(sentence) is pleasantry


@pytest.mark.parametrize(
    ("sentence", "phrase"),
    [
        (
            "According to the consent tracker, 54 of the 62 students invited have returned "
            "their forms.",
            "According to the consent tracker, ",
        ),
        ("Six forms are still outstanding, and two families have said no.", None),
        ("Tarnby Coaches Ltd confirmed booking TC-88417 for a 70-seat coach.", None),
        ("The shipping manifest says 40 crates left.", "The shipping manifest says "),
    ],
)
def test_an_unknown_subject_of_a_reporting_verb_needs_a_determiner_and_no_number(
    sentence: str, phrase: str | None
) -> None:
    spans = find_spans(sentence, lambda noun_phrase: False)
    assert [sentence[s.start : s.end] for s in spans] == ([phrase] if phrase else [])


# -- twelfth round: cue shapes found in four more domains by other authors --------------------
@pytest.mark.parametrize(
    ("text", "family", "phrase"),
    [
        # first-person checks: "and", a dash or a colon ends the attribution
        ("I checked the parcel and it weighs 4.2 kg.", "record", "I checked the parcel and "),
        (
            "I checked the parcel (P-118, Ada Quist) and it weighs 4.2 kg.",
            "record",
            "I checked the parcel (P-118, Ada Quist) and ",
        ),
        ("Checked the shipping terms: refunds take 14 days.", "document", None),
        ("Looked at the depot log - van 3 left at 06:40.", "database", None),
        # sentence-initial "In/On the X," with nouns of the lexicon
        ("In the depot register, crate 14 is down as lost.", "database", None),
        ("On the price list, a re-delivery is £4.", "document", "On the price list, "),
        # per + an identifier; reporting verbs "flags", "came back with"
        ("Per parcel P-118, the label was reprinted.", "record", "Per parcel P-118, "),
        ("The depot tracker flags that crate 14 is late.", "database", None),
        ("The web search came back with a 2029 opening date.", "search", None),
        # a part noun before a number, the head of the phrase
        ("Section 4 of the shipping terms says refunds take 14 days.", "document", None),
        # newspaper names and content verbs ("covers", "ran", "caps", "dates")
        ("The Harwick Gazette ran the story on 3 May.", "search", "The Harwick Gazette "),
        ("A Harwick Echo piece from 2 June covers the depot fire.", "search", None),
        ("No, the terms doc caps parcels at 30 kg.", "document", "the terms doc "),
        ("The scan - the label info dates it to 09:12.", "metadata", None),
        # a generic head naming a tool whose name ends with it
        ("The depot 4 results show two late vans.", "database", None),
    ],
)
def test_twelfth_round_cue_shapes(text: str, family: str, phrase: str | None) -> None:
    tools = {**TOOLS, "depot_results": "database", "label_info": "metadata"}
    a = find_attribution(text, tools)
    assert (a.status, a.family) == ("stated", family), (text, a)
    if phrase is not None:
        assert a.phrase == phrase


@pytest.mark.parametrize(
    "text",
    [
        "It costs £2 per page.",  # a rate: "per" + a weak noun without an identifier
        "Tickets are £9 per ticket.",
        "The parcel was checked the day before and passed.",  # no first person, mid-sentence
        "Her best mark was 84 out of 100, in History paper 1.",  # a thing, not a source
        "The show ran for two hours.",
        "The plan covers three sites.",
    ],
)
def test_twelfth_round_shapes_that_state_no_source(text: str) -> None:
    assert find_attribution(text, TOOLS).status == "unavailable", text


@pytest.mark.parametrize(
    ("sentence", "pleasantry"),
    [
        ("Sure, here's a draft for the bulletin.", True),
        ("Hi Ola, here's the count for March that you were after.", True),
        ("Can re-run it for the 15th if you want to compare.", True),
        ("I can trim the photo for the bulletin if that helps.", True),
        ("Hi Ola, it's good news on the sales front, so here's a quick recap.", True),
        # offers that assert: a fact with a condition, a framing with a colon
        ("Parcels can be collected from the depot if you want.", False),
        ("Here's the count: 6 parcels.", False),
        ("Right, the van left at 06:40.", False),
    ],
)
def test_twelfth_round_offers_and_framings(sentence: str, pleasantry: bool) -> None:
    assert is_pleasantry(sentence) is pleasantry


@pytest.mark.parametrize(
    ("sentence", "pleasantry"),
    [
        ("That's all from me for today.", True),
        ("Ping me anything that looks off.", True),
        ("Raise any concerns with the site lead.", True),
        ("Summary drafted from the two tickets; comments welcome.", True),
        ("Feedback is always welcome!", True),
        # assertions that open or close the same way
        ("That's all for the 2035 season: 14 fixtures.", False),
        ("The welcome desk opens at 8.", False),
        ("Flag 7 was raised at 10:05.", False),
    ],
)
def test_thirteenth_round_closings_and_invitations(sentence: str, pleasantry: bool) -> None:
    assert is_pleasantry(sentence) is pleasantry


@pytest.mark.parametrize(
    ("text", "family", "phrase"),
    [
        # a "from" aside after the fact: a dash, a comma, "straight from"
        ("The van left at 06:40 — straight from the depot table!", "database", None),
        ("Refunds take 14 days, from the shipping terms.", "document", None),
        # the trace's own tool named in full, or a tool's name with a source noun
        ("Stock ledger has crate 14 in bay 2.", "database", "Stock ledger "),
        ("Pallet log: crate 14 left at 06:40.", "database", "Pallet log: "),
        # a bracketed citation closing the claim, its section number aside
        ("Refunds take 14 days (shipping terms s4.2).", "document", None),
        # a source that is clear on the fact
        ("Oh — the shipping terms are crystal clear that refunds take 14 days.", "document", None),
        # "the search results" is a search even where a tool's name ends in "results"
        ("Bay 2 reopened on 3 May, per the search results.", "search", None),
        # after a question that opens the claim
        ("And the label? The scan info lists it as printed at 08:03.", "metadata", None),
    ],
)
def test_fifteenth_round_cue_shapes(text: str, family: str, phrase: str | None) -> None:
    tools = {**TOOLS, "query_stock_ledger": "database", "get_pallets": "database"}
    tools["get_scan_results"] = "record"
    a = find_attribution(text, tools)
    assert (a.status, a.family) == ("stated", family), (text, a)
    if phrase is not None:
        assert a.phrase == phrase


@pytest.mark.parametrize(
    "text",
    [
        "The parcel came from the depot.",  # "from" closing a plain sentence
        "Crate 14 (the blue one) is late.",  # a bracket that names no source
        "The driver is clear that she left at 06:40.",  # no source noun
        "The parcel has a dent.",  # a one-word tool name alone is the thing itself
    ],
)
def test_fifteenth_round_shapes_that_state_no_source(text: str) -> None:
    tools = {**TOOLS, "get_parcel": "record"}
    assert find_attribution(text, tools).status == "unavailable", text


@pytest.mark.parametrize(
    ("sentence", "pleasantry"),
    [
        ("Text me if the gate is locked.", True),
        ("Any problems overnight, just buzz me!", True),
        ("Right, off home.", True),
        # questions that assert
        ("Can you believe the hall holds 900 people?", False),
        ("Who could resist a 3-course lunch for £12?", False),
        ("The late show starts at 22:40 — could it be any later?", False),
        # a question that offers stays a question
        ("I can hold two seats — would you like that?", True),
        ("Is the 14th any good for you?", True),
        ("Signing off at 17:00 sharp is the rule here.", False),
    ],
)
def test_fifteenth_round_requests_and_rhetorical_questions(sentence: str, pleasantry: bool) -> None:
    assert is_pleasantry(sentence) is pleasantry


@pytest.mark.parametrize(
    ("text", "family", "phrase"),
    [
        # a source that speaks after a frame with no comma
        ("At 06:40 the depot table shows crate 14 on bay 2.", "database", "the depot table shows "),
        ("It looks like the parcel record shows a dent on the lid.", "record", None),
        ("From what the depot table shows, crate 14 left at 06:40.", "database", None),
        # more verbs a document has; "does say"
        ("Clause 4 of the shipping terms permits one redelivery.", "document", None),
        ("The shipping terms define a late parcel as one over 5 days.", "document", None),
        ("The shipping terms does say refunds take 14 days.", "document", None),
        # an amendment is a document; a version after the name leaves the name the head
        ("The carriage amendment requires a signature on delivery.", "document", None),
        ("Shipping policy rev 3 puts the refund window at 14 days.", "document", None),
        # after signs that are no words ("! 📦 The terms …") the clause still opens there
        ("Good news! 📦 The shipping terms allow one free redelivery.", "document", None),
    ],
)
def test_eighteenth_round_cue_shapes(text: str, family: str, phrase: str | None) -> None:
    a = find_attribution(text, TOOLS)
    assert (a.status, a.family) == ("stated", family), (text, a)
    if phrase is not None:
        assert a.phrase == phrase


@pytest.mark.parametrize(
    "text",
    [
        "Parcel P-12's record comes to £40 in total.",  # an amount, not a source speaking
        "The parcel record still shows as unpaid.",  # "shows as": a state
        "The van has the depot booking confirmed for Friday.",  # a participle inside
        "Just say if you need the depot reports too.",  # "reports" a noun
        "Label limit for each crate: 3.",  # a bare weak noun and a verb
    ],
)
def test_eighteenth_round_shapes_that_state_no_source(text: str) -> None:
    assert find_attribution(text, TOOLS).status != "stated", text


def test_nineteenth_round_an_ampersand_inside_a_source_name() -> None:
    tools = {"get_hire_terms": "document", "get_booking": "record"}
    text = "If you cancel late, the T&Cs say the deposit is kept."
    claim = claim_at(text, (0, len(text.encode())), tools)
    assert claim.attribution.family == "document"
    assert "T&Cs" not in claim.content


@pytest.mark.parametrize(
    ("sentence", "pleasantry"),
    [
        ("Dear Ms Arkwright, thank you for writing to us about the hedge.", True),
        ("Dear Dr. Pell, we are so sorry to hear about the delay.", True),
        # a salutation before an assertion asserts
        ("Dear Mr Penhallow, your bin will be emptied on Tuesday.", False),
        ("Hello Mount Pleasant Primary, the trip is on 3 May.", False),
    ],
)
def test_twenty_first_round_a_salutation_with_a_title(sentence: str, pleasantry: bool) -> None:
    assert is_pleasantry(sentence) is pleasantry


def test_twenty_second_round_an_owner_before_a_source_noun_is_not_the_source() -> None:
    # "the harbour's website" is a web page even when a tool is named after the harbour
    tools = {"get_harbour_document": "document", "web_search": "search"}
    assert resolve("the harbour's website", tools).family == "search"
    assert resolve("the harbour's news page found online", tools).family == "search"
    # without the possessive the modifier still names the tool
    assert resolve("the harbour document", tools).family == "document"


def test_twenty_second_round_a_rarer_description_word_decides() -> None:
    # "missed" is in one description, "drop" in all three: the rare word names the tool
    tools = {"get_claim": "record", "depot_db": "database", "get_van_log": "record"}
    listing = listing_of(
        [],
        tools,
        {
            "get_claim": "One customer's claim for missed drops, by reference.",
            "depot_db": "Rows of the depot's drop table.",
            "get_van_log": "A van's drops for one day.",
        },
    )
    r = resolve("your missed-drop report", tools, listing)
    assert (r.family, r.tool) == ("record", "get_claim")


@pytest.mark.parametrize(
    ("text", "family"),
    [
        ("Parcel rec has P-12 as lost.", "record"),  # "rec" is a record
        ("Depot csv also flags crate 14 on bay 2.", "database"),  # an adverb between
    ],
)
def test_twenty_second_round_cue_shapes(text: str, family: str) -> None:
    a = find_attribution(text, TOOLS)
    assert (a.status, a.family) == ("stated", family), (text, a)


def test_twenty_second_round_an_idiom_after_on_is_no_source() -> None:
    # "on notice as": no determiner, no name: an idiom; the table is the only source
    a = find_attribution("The depot table gives the fee for a parcel on notice as £3.", TOOLS)
    assert (a.status, a.family) == ("stated", "database"), a


@pytest.mark.parametrize(
    ("text", "family"),
    [
        # a source with "got" after its possessive or "has"
        ("Depot table's got crate 14 on bay 2.", "database"),
        ("The parcel record has got P-12 as lost.", "record"),
        # a second sentence of one claim opens a clause
        ("Not in. Depot table still has crate 14 on bay 2.", "database"),
        # more content verbs and adverbs between a source and its verb
        ("Our shipping terms simply ask for a signature.", "document"),
        ("The shipping policy only lets couriers leave parcels with a neighbour.", "document"),
        ("The depot database reckons each drop takes 4 minutes.", "database"),
        # a writer's own look at a source, and what the look was for
        ("I've had a look at the depot table for you, and crate 14 is on bay 2.", "database"),
        ("Looking at the depot table for Thursday the 12th, crate 14 is on bay 2.", "database"),
        ("I've just pulled up the parcel record and P-12 is lost.", "record"),
        # a plural possessive, "before"/"after" as a modifier, a planner of rows
        ("The couriers' shipping terms say parcels wait 3 days.", "document"),
        ("The before scan's label info says 2.4 kg.", "metadata"),
        ("The drops planner has P-12 out on Tuesday.", "database"),
    ],
)
def test_twenty_fourth_round_cue_shapes(text: str, family: str) -> None:
    a = find_attribution(text, TOOLS)
    assert (a.status, a.family) == ("stated", family), (text, a)


def test_twenty_fourth_round_a_label_is_not_read_as_a_verb() -> None:
    # "log" stays a noun: "Appointments log: …" is a label, "logs" no verb of a source
    tools = {"appointments_log": "database", "get_parcel": "record"}
    a = find_attribution("Appointments log: Pickle home at 09:00.", tools)
    assert (a.status, a.family) == ("stated", "database"), a
    # a decimal point is no sentence end
    assert find_attribution("Crate 14 weighs 4.5 kg.", TOOLS).status == "unavailable"


def test_twenty_fourth_round_what_a_look_was_for_is_no_fact() -> None:
    # a short tail before the comma goes with the look; a tail that says something stays
    a = find_attribution("I checked the depot table this morning, crate 14 is on bay 2.", TOOLS)
    assert (a.status, a.phrase) == ("stated", "I checked the depot table this morning, ")
    b = find_attribution("I checked the depot table the total is 40, so pay it.", TOOLS)
    assert "total" not in b.phrase


def test_twenty_fifth_round_an_amount_after_a_cue_is_no_source() -> None:
    # "within 15 minutes" / "in fifty-five minutes": an amount (and "minutes" is no document
    # here); "within" ends a noun phrase ("SARCALL within 15 minutes")
    for text in (
        "Members respond on SARCALL within 15 minutes, giving their ETA.",
        "She had the whole job done in fifty-five minutes.",
        "The farm produced 44 kg of honey from three hives.",
    ):
        a = find_attribution(text, TOOLS)
        assert a.status == "unavailable", (text, a)
    # a year after a determiner is part of the source's name
    a = find_attribution("In the 2033 shipping terms, parcels wait 3 days.", TOOLS)
    assert (a.status, a.family) == ("stated", "document"), a
    # "till" stays a noun ("the till log"), not a preposition
    tools = {"get_till_log": "record", "query_bookings": "database"}
    a = find_attribution("The till log shows four sales on Thursday.", tools)
    assert (a.status, a.family) == ("stated", "record"), a


@pytest.mark.parametrize(
    ("text", "family", "phrase"),
    [
        # a weak cue that opens the claim with no comma, the claim's words right after it
        ("In our staff records Lukas is on reception.", "record", "In our staff records"),
        ("Under the guidance they're deferred for three months.", "document", "Under the guidance"),
        ("By the house rules the GM need not watch the cameras.", "document", "By the house rules"),
        (
            "From the clip's file properties we see it was 4 MB.",
            "metadata",
            "From the clip's file properties",
        ),
        ("In the web results a team gave it 5 of 5.", "search", "In the web results"),
        ("Um, in the staff records she is on nights.", "record", "in the staff records"),
        # spoken fillers before a source and its verb
        ("um the vet log has her next jab due in March", "record", "the vet log "),
        # "does not" + a content verb: only the source goes, the negation stays the claim's
        ("Kindly note that our SOP does not permit staff to enter.", "document", "our SOP "),
        # a thing found inside a search is the search's
        ("According to the news item in the search results, rates fall.", "search", None),
        # a note's label with its time or section after it: the time stays the claim's
        ("Learner test log 16:55: FC 2.2, pH 7.3.", "record", "Learner test log"),
        (
            "Our operating procedures, s4 v4.1: FC 1.0-2.0 mg/l.",
            "document",
            "Our operating procedures",
        ),
        # a source that is clear, after "and" or an owner
        ("And our terms are dead clear, you must give notice.", "document", None),
        ("No fires on site, the council's guidance note is clear on that.", "document", None),
        # a forum is a search's
        ("A boater on the Narrowlines forum says Lock 19 is shut.", "search", None),
    ],
)
def test_twenty_ninth_round_cue_shapes(text: str, family: str, phrase: str | None) -> None:
    tools = {
        "get_staff_records": "record",
        "get_vet_log": "record",
        "get_sop": "document",
        "get_house_rules": "document",
        "get_guidance": "document",
        "get_clip_metadata": "metadata",
        "get_test_log": "record",
        "get_procedures": "document",
        "get_terms": "document",
        "web_search": "search",
        "query_linen": "database",
    }
    a = find_attribution(text, tools)
    assert (a.status, a.family) == ("stated", family), a
    if phrase is not None:
        assert a.phrase == phrase, a


def test_twenty_ninth_round_shapes_that_name_no_source() -> None:
    tools = {
        "get_guidance": "document",
        "get_staff_records": "record",
        "query_bookings": "database",
    }
    for text in (
        "In the morning we had rain.",  # no source noun
        "The booking was signed off by the guidance team.",  # "by" inside: an agent
        "In the staff records, as of today,",  # a comma: the old shapes decide
        "Match result 3: a win.",  # a label that names no source
        # a title and a history are no sources (the goldens showed both read as ones when
        # "letters" and "history" were source nouns)
        "The paper appeared in Quellmouth Marine Letters.",
        "It is not the 71st season in the club's football history.",
    ):
        a = find_attribution(text, tools)
        assert a.status != "stated" or text.startswith("In the staff records"), (text, a)
    # a noun that goes on with the phrase names no source; "terms and conditions" is one
    for text in ("In the records office Lukas is on reception.", "From the policy side, fine."):
        assert find_attribution(text, {"get_staff_records": "record"}).status != "stated"
    a = find_attribution(
        "Our terms and conditions say refunds take 5 days.", {"get_terms": "document"}
    )
    assert a.phrase == "Our terms and conditions say ", a
    # the negation after "does not" is never part of the attribution phrase
    a = find_attribution("The guidance does not say that dogs are allowed.", tools)
    assert "not" not in a.phrase and a.family == "document", a


_THIRTIETH_TOOLS = {
    "get_trip_log": "record",
    "get_formulary": "document",
    "get_boaters_guide": "document",
    "get_pool_procedures": "document",
    "get_charter_terms": "document",
    "get_inspection_record": "record",
    "get_assessment_report": "document",
    "query_structure_register": "database",
    "read_image_exif": "metadata",
    "web_search": "search",
}


@pytest.mark.parametrize(
    ("text", "family", "phrase"),
    [
        # a bare lexicon noun that heads a tool's name, before a content verb
        ("log has J. Tregear on deck with you lot saturday", "record", "log "),
        ("register's got the ash at no. 20 revoked", "database", "register's "),
        # a source's version or section number after its name
        ("Formulary rev 4.2 puts cat bupe at 0.02 mg/kg.", "document", "Formulary rev 4.2 "),
        # "up to" after a content verb is an amount's bound, no phrasal verb
        ("Guide allows up to two dogs a boat.", "document", "Guide "),
        # a one-word label with its section; a weak cue with the part it cites
        ("Procedures, 3.5: an expired NPLQ can't be rostered.", "document", "Procedures, 3.5: "),
        (
            "Under the procedures at 6.5, ropes are inspected within 24 hours.",
            "document",
            "Under the procedures at 6.5, ",
        ),
        # a numbered part of a source closing the claim
        ("no booze at sea, clause 3.3 of our terms", "document", ", clause 3.3 of our terms"),
        # a source noun with its identifier before the verb is the source, not a verb
        (
            "Finding 1: Inspection Record IR-2291 states that the inspection was on 11 March.",
            "record",
            "Inspection Record IR-2291 states that ",
        ),
        ("The load-rating report itself records the AADT at 6,850.", "document", None),
        # a participle of entering before "in"/"on": no comma needed
        ("Six structures are listed in the register on the B4172.", "database", None),
        # "off" opening the claim, as "by" does
        ("Off the EXIF it's an RTK fixed shot.", "metadata", "Off the EXIF"),
        # review sites are searches
        ("one yelp reviewer said the wait was about five months", "search", None),
        ("IMG_1352, per its image description: span 2 soffit", "metadata", None),
    ],
)
def test_thirtieth_round_cue_shapes(text: str, family: str, phrase: str | None) -> None:
    a = find_attribution(text, _THIRTIETH_TOOLS)
    assert (a.status, a.family) == ("stated", family), a
    if phrase is not None:
        assert a.phrase == phrase, a


def test_thirtieth_round_a_source_beyond_doubt_is_named_by_its_description() -> None:
    tools = {"get_casa_permission": "document", "search_weather_notam": "search"}
    listing = listing_of(
        [],
        tools,
        {
            "get_casa_permission": "Returns the CASA RPA area approval as numbered conditions.",
            "search_weather_notam": "Searches NOTAMs, forecasts and aviation news.",
        },
    )
    a = find_attribution("Observer needed past 500 m, per the approval", tools, listing)
    assert (a.status, a.family, a.rule) == ("stated", "document", "tool_description"), a
    # so does a reporting verb in the present tense; in the past the phrase may be an agent
    a = find_attribution("Our approval says no flying during gliding.", tools, listing)
    assert (a.status, a.family) == ("stated", "document"), a
    crew = {"get_collection_log": "record"}
    crew_listing = listing_of([], crew, {"get_collection_log": "The crew's log of a round."})
    a = find_attribution("The crew flagged your bin as not presented.", crew, crew_listing)
    assert a.status != "stated", a
    # without the listing the phrase stays unresolved; without a cue it is no source
    assert find_attribution("Per the approval, we stop at 5.", tools).status == "ambiguous"
    assert find_attribution("The approval came through.", tools, listing).status == "unavailable"


def test_thirtieth_round_shapes_that_name_no_source() -> None:
    for text, tools in (
        # a bare weak noun that heads no tool's name, before a content verb
        ("Sheet has four rows on it.", {"query_bookings": "database"}),
        ("Page limit for bundles: 200 pages.", {"get_practice_direction": "document"}),
        # a one-word label without its section
        ("Note: the pool shuts at 9.", {"get_pool_procedures": "document"}),
        ("Policy: no dogs on the pontoon.", {"get_policy": "document"}),
        # idioms
        ("Off the record he said no.", {"get_record": "record"}),
        ("We paid him off the books.", {"query_books": "database"}),
        ("We met in room 4 of the hall.", {"get_policy": "document"}),
        # a review's cases: a bare number is no cited part, a part of no source is none
        ("From the ledger in 2023, revenue was £5m.", {"get_ledger": "record"}),
        ("In the log at 14, the pump was dry.", {"get_log": "record"}),
        ("Our seats are in row F, section 114 of the stadium.", {"get_policy": "document"}),
    ):
        a = find_attribution(text, tools)
        assert a.status != "stated", (text, a)


_THIRTY_FIRST_TOOLS = {
    "query_registers": "database",
    "get_file_metadata": "metadata",
    "get_insurance_certificate": "document",
    "get_penalty_log": "record",
    "web_search": "search",
}


@pytest.mark.parametrize(
    ("text", "family"),
    [
        # "agrees" and "identifies" report what a source says
        ("The burial register agrees, giving her burial on 15 Sept. 1878.", "database"),
        ("Malcolm's photo metadata also identifies Josiah as a carter.", "metadata"),
        # a certificate is a document, and so is its short form
        ("our Quadline cert has £5m any one occurrence", "document"),
        ("Per the insurance certificate, skaters are covered.", "document"),
        # an export is the source it was exported from
        ("penalty tracker export has us on 8 pens to their 5", "record"),
    ],
)
def test_thirty_first_round_cue_shapes(text: str, family: str) -> None:
    a = find_attribution(text, _THIRTY_FIRST_TOOLS)
    assert (a.status, a.family) == ("stated", family), a


def test_thirty_first_round_shapes_that_name_no_source() -> None:
    for text in (
        # an export alone names nothing; agreeing people are no source
        ("Export has grown by 5% this year."),
        ("The family agrees she was born in 1852."),
    ):
        a = find_attribution(text, _THIRTY_FIRST_TOOLS)
        assert a.status != "stated", (text, a)


@pytest.mark.parametrize(
    ("sentence", "pleasantry"),
    [
        # a greeting with a name and nothing after it, or two names
        ("hey marta", True),
        ("hiii jonah!", True),
        ("Hello Rhian and Joss, how lovely to hear from you!", True),
        # sign-offs: "with" before them, love, kisses, a job title in brackets
        ("With warm regards, Odile Brant, Registrar (Lettings)", True),
        ("Much love, Sunniva xx", True),
        ("ta Bryn", True),
        # offers and asks by their short forms, and old-fashioned closings
        ("lmk if the florist wants the dates", True),
        ("any q's ring me", True),
        ("dm us the sizes and we'll hold them!", True),
        ("Kindly advise which slot suits.", True),
        ("We remain, dear Sir, yours faithfully, the Trustees.", True),
        ("hope he likes the colour!", True),
        # names and words that only look like those shapes assert
        ("Love Lane is closed to traffic on Sunday.", False),
        ("Ta Prohm opens at 7:30.", False),
        ("Hi-vis vests are required on the quay.", False),
        ("Hey Duggan, the van is booked for 9.", False),
        ("Hope Street car park charges £2 an hour.", False),
        ("Any queries about invoice 4471 go to accounts.", False),
        # short lines of a rota or timetable, and facts after a short form
        ("- Morning session full", False),
        ("Dear customer", False),
        ("Great Yarmouth", False),
        ("TA: Bryn Hughes", False),
        ("Love: 15-40", False),
        ("any q's, the office is open until 5pm on Friday.", False),
        ("Hope she enjoys the course, which starts at 9am on 3 May.", False),
        ("Fair winds are forecast for Saturday, force 3.", False),
        ("We remain closed on Sundays while yours is being repaired.", False),
        ("Kindly note the fee is £40.", False),
        # a formal offer or request ("I should be grateful for …"), not a statement of mood
        ("I should be grateful for your instructions on the lease.", True),
        ("We would be delighted to show you round.", True),
        ("We should be happy with the new roof, it holds.", False),
        ("We should be grateful if the fee of £40 were paid.", False),
    ],
)
def test_thirty_third_round_conversation_shapes(sentence: str, pleasantry: bool) -> None:
    assert is_pleasantry(sentence) is pleasantry


@pytest.mark.parametrize(
    ("sentence", "pleasantry"),
    [
        # a feeling that leads in to a statement: the statement asserts
        ("I am sorry to tell you that the soundboard has a crack in it.", False),
        ("Dear Sir, I am happy to report that the pitch raise was completed in March.", False),
        ("We're pleased to confirm the hall is booked.", False),
        ("Sorry to say, the bike is not ready.", False),
        # an apology after two opening words, then a fact
        ("Oh and sorry, the right one's thirty-one and a half.", False),
        # the same feelings with nothing or a pleasantry after them stay conversation
        ("Sorry to say.", True),
        ("Oh and sorry for the delay!", True),
        ("Oh and thanks, Priya!", True),
        ("I am happy to help.", True),
        ("So sorry to hear that, thanks for telling me.", True),
        # a wish after a lead-in that carries a value confirms something
        ("Pleased to confirm, see you at 7pm on Friday at the Harbour Inn.", False),
        ("Glad to confirm — have a great stay in Room 214 from 3 to 5 May.", False),
        ("Pleased to report, all the best seats are taken.", False),
        ("All the best seats are gone.", False),
        ("All the best for Saturday!", True),
        # offers stay offers
        ("Happy to let you know if anything changes.", True),
        ("I'm happy to confirm if you'd like me to.", True),
        ("Happy to report back once I hear.", True),
    ],
)
def test_thirty_fourth_round_lead_ins(sentence: str, pleasantry: bool) -> None:
    assert is_pleasantry(sentence) is pleasantry


def test_thirty_fourth_round_a_row_that_names_no_table() -> None:
    # "in a row" is one after another, "Mill Row" a street; "row 4" and "the stock row" are
    # a table's
    for text in (
        "She was sent home after two refusals in a row, then ate.",
        "The Ashdowns lived in Mill Row with four children.",
    ):
        assert find_attribution(text, {}).status == "unavailable", text
    for text in ("It is listed in row 4.", "According to the stock row, 4 are left."):
        a = find_attribution(text, {})
        assert (a.status, a.family) == ("stated", "database"), text


@pytest.mark.parametrize(
    ("text", "family", "phrase"),
    [
        # "it says in/on <source>", with its "that"
        ("It says on your file you phoned on the sixteenth.", "record", "It says on your file"),
        ("It says in the policy that fees apply.", "document", "It says in the policy that "),
        # "as is recorded in" as "as recorded in"
        ("The dose was 150 mg, as is recorded in the patient record.", "record", None),
        # a photo's caption and a file's "props" are its metadata
        ("The caption says felted mats behind both ears.", "metadata", "The caption says "),
        ("file props say it's 4032 by 3024", "metadata", "file props say "),
    ],
)
def test_thirty_fourth_round_source_shapes(text: str, family: str, phrase: str | None) -> None:
    a = find_attribution(text, {})
    assert (a.status, a.family) == ("stated", family), a
    if phrase is not None:
        assert a.phrase == phrase


def test_thirty_fourth_round_it_says_needs_a_source() -> None:
    for text in (
        "It says in big letters that the shop is shut.",
        "He said it says on the tin that it holds 4 litres.",
        # a source noun that only begins the noun phrase names nothing
        "It showed in the table tennis final that Li was stronger.",
        "It says on the notice board that we close at 5.",
    ):
        assert find_attribution(text, {}).status == "unavailable", text


@pytest.mark.parametrize(
    ("text", "family"),
    [
        # the source is the claim's subject: "in/on the X" in what it says is the claim's
        ("The manual does not require spills to be written in the shift log.", "document"),
        (
            "Section 4 of the terms requires every crate to stand on its own pallet system.",
            "document",
        ),
        # contracted negations before a bare content verb
        ("Our terms don't apply any surcharge to a return.", "document"),
        ("The visitor guide won't let dogs past the gate.", "document"),
        # more verbs a source speaks with, and phrasal ones
        ("The stock database also lays down a minimum of 4 crates.", "database"),
        ("The fire policy rules out any open flame in the loft.", "document"),
        ("The depot log makes it 12 parcels.", "database"),
        ("Her parcel record logs the scan at 10:02.", "record"),
        # a form and a confirmation are sources
        ("Your booking confirmation says the van comes at 9.", "record"),
        ("On your claim form the parcel is listed as lost.", "record"),
        # a source named after its version
        ("that's all off v4.1 of the shipping terms", "document"),
        ("This is all off rev 7.2 of the manual.", "document"),
        # "what X shows" and a look in the present tense
        ("Two vans left late, which is what the depot log shows.", "database"),
        ("Right, so I'm looking at the parcel record, and it went out on Monday.", "record"),
        # a bare site or marker before a content verb
        ("yelp has us at 4.2 from 90 reviews", "search"),
        # a look on the web
        ("I had a quick look online and the depot moves in May.", "search"),
        ("Upon searching the web I find that the depot opened in 1962.", "search"),
        # a source whose name runs on before its reporting verb
        ("The parcel record on her before photo says it was dented.", "record"),
        (
            "The parcel record for PX-221 (the blue crate) on the north run shows a late scan.",
            "record",
        ),
    ],
)
def test_thirty_sixth_round_source_shapes(text: str, family: str) -> None:
    a = find_attribution(text, {})
    assert (a.status, a.family) == ("stated", family), a


def test_thirty_sixth_round_shapes_that_name_no_source() -> None:
    for text in (
        # "per" + a bare noun + a joiner is a rate, whatever follows the joiner
        "The fee is waived twice per patient in each calendar year.",
        "Refunds are capped at one per parcel in the depot table each week.",
        # a participle is no verb of a source
        "Five crates marked fragile.",
        # a version of what is not a source
        "The router runs firmware version 2.1 since the update.",
        "She sat version 4.3 of the placement test.",
        # a look that does not open its sentence
        "The van was looking at the depot log, oddly.",
        # a name that runs on with a verb in it is a claim
        "The parcel record that was lost in March shows up again.",
        "C. Brannigan's 11:30, the last appointment on the list, was cancelled.",
        # ... and one whose head is a weak noun
        "The results of the vote in Leeds show a swing to Labour.",
        "The register for class 4 on Monday shows 3 absent.",
        # a look on the web that is somebody's story, not the writer's check
        "After looking online, she bought a bike.",
        "The kids looked online, then went outside.",
        "My mum searched online and bought a kettle for £30.",
        "He checked the internet, the router and the cables before calling.",
        # "makes" only as "makes it"
        "The ticket makes a good bookmark.",
        # a numbered item, and a noun phrase with a verb in it, before a version
        "The patch fixes issue 2 of the release notes.",
        "The waiver uses form version 7.2.0.",
        # a contracted negation ends a noun phrase
        "The policy for members can't say dogs are allowed.",
    ):
        assert find_attribution(text, TOOLS).status != "stated", text


def test_thirty_sixth_round_a_contracted_negation_stays_the_claims() -> None:
    a = find_attribution("The visitor guide won't let dogs past the gate.", {})
    assert a.phrase == "The visitor guide "
    # a version stays the claim's too: a wrong version is a wrong value
    a = find_attribution("that's all off v4.1 of the shipping terms", {})
    assert "4.1" not in a.phrase
    # and what a long source name says of which record it is
    a = find_attribution("The parcel record for PX-221 on the north run shows a late scan.", {})
    assert a.phrase == "The parcel record"


def test_thirty_sixth_round_a_contracted_negation_is_never_swallowed() -> None:
    a = find_attribution("The fleet log hasn't got a scan before 9.", {"fleet_log": "database"})
    assert "hasn't" not in a.phrase
    a = find_attribution(
        "Per the yard rules, ponies aren't allowed out.", {"yard_rules": "document"}
    )
    assert (a.status, a.phrase) == ("stated", "Per the yard rules, ")


@pytest.mark.parametrize(
    ("text", "family", "tools"),
    [
        # a person on a forum, a page of the web: the search they were found in
        ("A reader on the Millbrook forum says the ferry is cancelled.", "search", {}),
        ("According to the web listings, the fair runs from 3 to 9 May.", "search", TOOLS),
        ("The rowing club's web page: founded 1921, two boathouses", "search", TOOLS),
        # a date between an opening source and its claim stays the claim's
        ("In the parcel database for 03.04.2033 we had 12 parcels.", "database", {}),
        # a subject said of a source's rows
        ("The latest scan in the depot database was at 10:02.", "database", {}),
        # a source the writer has open
        ("I've got her account record up, and she's paid in full.", "record", {}),
        ("ok got the stock db up - 14 crates left", "database", {}),
        (
            "I have your job card before me, and the van came at 9.",
            "record",
            {"get_job_card": "record"},
        ),
    ],
)
def test_thirty_seventh_round_source_shapes(text: str, family: str, tools: dict[str, str]) -> None:
    a = find_attribution(text, tools)
    assert (a.status, a.family) == ("stated", family), a


def test_thirty_seventh_round_shapes_that_name_no_source() -> None:
    for text in (
        "An hour in a manual is £41.",  # "in a …" names no source before its verb
        "The oldest tree in the park is 300 years old.",
        "They have the record up and running.",  # someone else's, not the writer's look
        "We have the log open - three entries.",  # a weak noun that names no tool
    ):
        assert find_attribution(text, TOOLS).status != "stated", text
    # the date after an opening source is the claim's value, not the source's name
    a = find_attribution("In the parcel database for 03.04.2033 we had 12 parcels.", {})
    assert "2033" not in a.phrase


def test_thirty_seventh_round_what_is_open_or_in_a_thing_is_no_source() -> None:
    for text in (
        "We have the north section open - two lifts are running.",
        "Got the east section open, and the ski lift runs until 16:00.",
        "We have the back table open, and it seats 6.",
        "The deadlock in the orders database was resolved at 10:02.",
        "The balance in your account is £40.",
    ):
        assert find_attribution(text, TOOLS).status != "stated", text
    # "web" before another family's strong noun leaves it that family's
    assert find_attribution("According to the web database, the fee is 4.", {}).family == "database"


@pytest.mark.parametrize(
    ("sentence", "pleasantry"),
    [
        # an offer of more material, whatever its subject and its condition
        ("Full-resolution originals can be supplied to the Agency on request.", True),
        ("Copies of the orders can be provided to the auditors if required.", True),
        ("Further detail can be requested from the coordinator should the board wish.", True),
        ("The image can be circulated to members on request.", True),
        # ... not with a value, nor said of the past or of a rule's conditions
        ("Receipts can be provided for 2 years on request.", False),
        ("The report was provided on request.", False),
        ("Refunds can be arranged within a fortnight.", False),
        # a message to pass on, a call the writer will make, a request to the reader
        ("Tell him call up at the entrance.", True),
        ("Tell her skipper we'll keep the kettle on.", True),
        # ... not a relayed fact, a promise with a value, a service, or what follows "glad
        # that" / "nothing to report," / "bear with us," (a helper's review)
        ("Tell them the ferry leaves at 06:40 from Pier 3.", False),
        ("Tell her the deposit is non-refundable.", False),
        ("Will send the replacement battery by 12 March.", False),
        ("A loan car can be provided to customers if needed.", False),
        ("Interpreters can be arranged at no extra cost if needed.", False),
        ("The hall can be made available free of charge should the parish council wish.", False),
        ("I'm glad that the refund was approved.", False),
        ("Nothing further to report, the roof survey found no asbestos.", False),
        ("Bear with us, lift out of order.", False),
        ("Will ring the garage first thing.", True),
        ("will forward it to their bookings team tonight x", True),
        ("Please tell me if I should send the invoice today.", True),
        ("Do telephone me at home if anything is unclear.", True),
        ("Will call times are listed at the box office.", False),
        ("Telling him was easy.", False),
        # "good day" greets; "here is the report" opens one
        ("Good day, and thank you for your message to the Lost Property Office.", True),
        ("Good day, the fee is £40.", False),
        ("Good day for sailing: force 3.", False),
        ("Hello Mr. Halvorsen, here is the short report for Saturday.", True),
        ("Here is the report: 3 faults.", False),
        ("I am so glad you spotted it, as it really was a lovely afternoon.", True),
        ("I'm glad you asked: the fee is £40.", False),
        ("Nothing else of note.", True),
        ("Nothing else of note until 14:00, then two faults.", False),
        # comfort and holding on, and pictographs after the words
        ("don't fret, you're doing grand", True),
        ("Don't worry!", True),
        ("Don't worry, the fee is waived.", False),
        ("Hiya Mrs Varnham, yes of course, bear with me one sec.", True),
        ("Yes of course the fee is waived.", False),
        ("Great news! 🎉", True),
        ("The fee is waived 🎉", False),
    ],
)
def test_forty_seventh_round_offers_messages_and_calls(sentence: str, pleasantry: bool) -> None:
    assert is_pleasantry(sentence) is pleasantry


def test_forty_seventh_round_a_modifier_names_the_tool_before_a_description_or_argument() -> None:
    """ "the photo's EXIF data for RC-2033-0417" is the photo tool's, though the ticket tool
    was called with RC-2033-0417; "the before photo's file details" the photo tool's, though
    the client tool's description speaks of "contact details"."""
    tools = {"get_intake_ticket": "record", "get_photo_exif": "metadata"}
    listing = listing_of(
        [],
        tools,
        {
            "get_intake_ticket": "One intake ticket by ticket number.",
            "get_photo_exif": "The EXIF fields of a gallery photo.",
        },
    )
    r = resolve("the photo's EXIF data for RC-2033-0417", tools, listing)
    assert (r.family, r.tool, r.rule) == ("metadata", "get_photo_exif", "tool_name")
    tools = {"get_client_record": "record", "get_photo_metadata": "metadata"}
    listing = listing_of(
        [],
        tools,
        {
            "get_client_record": "One client's file: contact details, consents, dogs.",
            "get_photo_metadata": "A photo file's EXIF metadata.",
        },
    )
    r = resolve("the before photo's file details", tools, listing)
    assert (r.family, r.tool) == ("metadata", "get_photo_metadata")
    # a head of another family decides: "the photo's record" is no photo's metadata
    r = resolve("the photo's client record", tools, listing)
    assert r.family == "record"
    # an owner is what a record or a document is about, not its source
    tools = {"get_patient": "record", "read_file": "document"}
    calls = [
        ("get_patient", {"patient_id": "P-0412"}),
        ("read_file", {"path": "letters/discharge_summary_P-0412.pdf"}),
    ]
    listing = listing_of(
        calls, tools, {"get_patient": "Demographics.", "read_file": "A file of the share."}
    )
    r = resolve("the patient's discharge PDF", tools, listing)
    assert (r.family, r.tool) == ("document", "read_file")


@pytest.mark.parametrize(
    ("sentence", "pleasantry"),
    [
        # sign-offs with "very best wishes" / "with love", a role in brackets after the name
        ("With very best wishes, and thanks again for the lift, Rosalind", True),
        ("Very best wishes to you and the whole choir, Rosalind", True),
        ("With love, and I'll see you at practice, Rosalind", True),
        ("Cheers, Tomasz (treasurer and general dogsbody)", True),
        ("Cheers, Tomasz (the fee is £40)", False),
        ("Very best wishes to the 2031 winners", False),
        # an interjection and a verbless exclamation with no value
        ("Ooh, harvest supper, my favourite!", True),
        ("Oh Delyth, the poor old van!", True),
        ("Oh, the ferry was cancelled!", False),
        ("Wow, 3 new members!", False),
        ("Wow, three bedrooms and a sea view!", False),
        ("Oh, Cranmoor Rovers won!", False),
        ("Oh no, closed again!", False),
        ("Oh dear, such a shame, no refunds!", False),
        ("Oh, the boiler leaks again!", False),
        # "to" after a wish only: a feeling that leads in to a report still reports
        ("Sorry to report the boiler failed inspection.", False),
        ("OK to proceed with the refund.", False),
        ("Thanks, Dave (the boiler needs replacing, not repairing)", False),
        # a line that says what follows and to whom
        ("Rhian, re the caretaker's email", True),
        ("Rhian, notes for tomorrow's meeting below", True),
        ("figures for the newsletter, Rhian", True),
        ("Rhian, the hall hire is £30", False),
        ("Rhian, Pendry the winner", False),
        ("Rhian, the boiler needs a new valve.", False),
        ("Unfortunately, no update from the insurer yet.", False),
        ("Sam, stock below reorder level.", False),
        ("Priya, figures up on last year.", False),
        ("Priya, quick update: boiler working again.", False),
        # an offer to pass something on, its subject left out, no value
        ("can send the minutes over tonight", True),
        ("I can forward a copy first thing", True),
        ("can send the invoice for £40 tonight", False),
        ("We will send the refund by 3 May.", False),
        ("We will send the engineer tomorrow.", False),
        ("We can share the cost.", False),
    ],
)
def test_forty_eighth_session_sign_offs_interjections_and_preambles(
    sentence: str, pleasantry: bool
) -> None:
    assert is_pleasantry(sentence) is pleasantry


@pytest.mark.parametrize(
    ("text", "family", "phrase"),
    [
        # who a rule applies to opens the claim right after its source, with no comma
        (
            "Under the site rules anyone under 14 must wear a helmet.",
            "document",
            "Under the site rules",
        ),
        ("Per our terms no refund is given after 48 hours.", "document", "Per our terms"),
        # a numbered part of a named source, with or without a comma after it
        (
            "Under clause 9 of the hire agreement everyone pays a £50 deposit.",
            "document",
            "Under clause 9 of the hire agreement",
        ),
        (
            "Under section 3.2 of the loan agreement, the borrower insures the kit.",
            "document",
            "Under section 3.2 of the loan agreement, ",
        ),
        # two modifiers of one source noun
        (
            "Under paragraph 2 of the fire and safety policy, doors stay shut.",
            "document",
            "Under paragraph 2 of the fire and safety policy, ",
        ),
    ],
)
def test_fifty_first_session_opening_sources(text: str, family: str, phrase: str) -> None:
    tools = {
        "get_site_document": "document",
        "get_terms": "document",
        "get_hire_agreement": "document",
        "get_loan_agreement": "document",
        "get_policy": "document",
        "query_members": "database",
    }
    a = find_attribution(text, tools)
    assert (a.status, a.family, a.phrase) == ("stated", family, phrase), a


def test_fifty_first_session_shapes_that_stay_claims() -> None:
    tools = {"get_policy": "document", "get_invoice": "record", "query_rota": "database"}
    for text in (
        "Under clause 7 a result is guaranteed.",  # a part with no source named
        "In 2033 anyone could enter.",  # a year, no source
        "Under 16s all ride free.",  # an amount, no source
    ):
        a = find_attribution(text, tools)
        assert a.status == "unavailable", (text, a)
    # "and" between two sources, or after a source noun, joins two things, not modifiers
    a = find_attribution("Under the invoice and rota, all shifts are paid.", tools)
    assert a.noun_phrase != "invoice and rota", a


def test_fifty_first_session_a_document_tool_names_its_document() -> None:
    tools = {"read_runbook": "document", "get_incident": "record", "query_shifts": "database"}
    # a document tool is named for what it returns: "the runbook" with a content verb
    a = find_attribution("The runbook defines saturation as p95 over 2 s.", tools)
    assert (a.status, a.tool, a.phrase) == ("stated", "read_runbook", "The runbook "), a
    # a short aside in brackets between the source and its verb is read past
    a = find_attribution("The runbook (rev 7) sets the page-out at 5 minutes.", tools)
    assert (a.status, a.tool, a.phrase) == ("stated", "read_runbook", "The runbook (rev 7) "), a
    # an aside after the verb stays: "shows … as" is the source speaking
    tools["get_context_sheet"] = "record"
    a = find_attribution("The context sheet shows (1045) as recorded by T. Vale.", tools)
    assert (a.status, a.tool) == ("stated", "get_context_sheet"), a
    # an entity a record or database tool is named after is still the claim's subject
    for text in (
        "The incident was opened at 10:02.",
        "The incident (INC-4471) had two owners.",
        "The shifts cover the whole weekend.",
        "Sam (the manager) says it is fine.",
    ):
        a = find_attribution(text, tools)
        assert a.status == "unavailable", (text, a)


@pytest.mark.parametrize(
    ("text", "family", "phrase"),
    [
        # found on invented phrasings (a helper wrote 166 in twelve domains)
        ("acc. to the rota, Priya's on teas", "database", "acc. to the rota, "),
        ("The regs say no dogs in the hut.", "document", "The regs say "),
        ("The spec calls for 3 mm bleed.", "document", "The spec calls for "),
        ("The hut's website is showing full for May.", "search", "The hut's website is showing "),
        ("A couple of review sites reckon it runs small.", "search", "A couple of review sites "),
        ("Had a quick look online - oxalic acid is fine.", "search", "Had a quick look online - "),
        ("Orchard guide, p. 4: mulch 5 cm deep.", "document", "Orchard guide"),
        # a possessive after the source, with no comma, opens the claim
        ("According to the rota Priya's on teas.", "database", "According to the rota"),
    ],
)
def test_fifty_first_session_invented_shapes(text: str, family: str, phrase: str) -> None:
    tools = {"query_rota": "database", "get_hut_rules": "document", "web_search": "search"}
    a = find_attribution(text, tools)
    assert (a.status, a.family, a.phrase) == ("stated", family, phrase), a


def test_fifty_first_session_an_identifier_a_call_asked_for() -> None:
    tools = {"get_booking": "record", "query_rota": "database"}
    listing = Listing(
        descriptions=(), opened=(), identifiers=(("get_booking", frozenset({"hb-3318"})),)
    )
    # after a strong cue or before a reporting verb it names the call's output
    for text, phrase in (
        ("According to HB-3318, the party arrives on the 12th.", "According to HB-3318, "),
        ("HB-3318 shows the party arriving on the 12th.", "HB-3318 shows "),
    ):
        a = find_attribution(text, tools, listing)
        assert (a.status, a.tool, a.phrase) == ("stated", "get_booking", phrase), a
    # as the claim's subject otherwise it is what the claim is about; one no call asked
    # for names nothing
    for text in (
        "HB-3318 was cancelled on the 12th.",
        "HB-3318 has two guests.",
        "The guests in HB-3318 arrive on the 12th.",
        "HB-4000 shows the party arriving on the 12th.",
        # a phrasal verb is no reporting verb: the sample is what the claim is about
        "HB-3318 came up the pod at 06:38.",
    ):
        a = find_attribution(text, tools, listing)
        assert a.status != "stated", (text, a)
    # "site" alone is a place, "my mum had a look online" no source of the writer's
    for text in ("The site has 40 pitches.", "My mum had a look online and bought a kettle."):
        assert find_attribution(text, tools).status == "unavailable", text
