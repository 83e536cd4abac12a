"""Issue 23, support side, second round: causes found on the shipped HotpotQA probes and the
hand-written validation domains, each pinned with invented text.

* "No. 2 Squadron" is a name with a number, not a negation;
* a sentence is not cut at a dotted initialism ("the U.S. Navy") when evidence is chunked;
* number words end at a word boundary ("under-fives" is no "five s", "sixteen" no "six");
* an identifier inside a longer token ("BX-40" in "bx-40_2032-01-09.log") is present;
* a quantity whose unit is a column header ("volume_m3 | 212.5") is present;
* the support forest is monotonic in similarity and in the conflict features, so a
  near-verbatim claim never scores under a looser one.

Fifth round (found on the hand-written train/validation domains):

* a pipe table or a JSON output is chunked by record, each row's cells under their headers,
  so that a claim about a row is compared with a row that says what its cells are;
* a word negated by its prefix ("non-refundable", "unlocked") is the opposite of the bare
  word.
"""

from __future__ import annotations

import pytest

from pytest_provenai.attribution.decompose import decompose
from pytest_provenai.attribution.pipeline import chunks
from pytest_provenai.attribution.polarity import polarity
from pytest_provenai.attribution.protected import check_values, claim_values
from pytest_provenai.attribution.rows import (
    capacity_state,
    comparative_conflict,
    counted,
    derived,
    prose_other_sentence,
    rate_conflict,
    row_check,
    totalled,
)
from pytest_provenai.attribution.support import support_signals
from pytest_provenai.attribution.values import match_values, read_values


@pytest.mark.parametrize(
    "claim",
    [
        "No. 4 Platoon held the ridge until dawn.",
        "The depot at no. 17 Quarry Lane opens at six.",
        "Nos. 3 and 5 Wharf Street were sold in 2029.",
        "No 9 Ferry Road is the harbourmaster's office.",
    ],
)
def test_a_numbered_name_is_not_a_negation(claim: str) -> None:
    unit = claim.replace("No. ", "").replace("no. ", "").replace("Nos. ", "").replace("No ", "")
    assert not polarity(claim, unit).negation


@pytest.mark.parametrize(
    ("claim", "unit"),
    [
        ("No ferries run on Sundays.", "Ferries run on Sundays and holidays."),
        ("There is no 7 pm sailing.", "There is a 7 pm sailing on weekdays."),
        ("The harbour has no 24-hour berth.", "The harbour has a 24-hour berth."),
    ],
)
def test_no_before_a_plain_noun_or_a_value_is_still_a_negation(claim: str, unit: str) -> None:
    assert polarity(claim, unit).negation


def test_chunks_do_not_cut_a_sentence_at_a_dotted_initialism() -> None:
    text = (
        "Marta Quill served on the U.S. Navy survey ship Petrel from 1961 to 1964. "
        "She later taught at the U.K. Hydrographic School.\nThe D.C.\nOffice closed."
    )
    assert chunks(text) == [
        "Marta Quill served on the U.S. Navy survey ship Petrel from 1961 to 1964.",
        "She later taught at the U.K. Hydrographic School.",
        "The D.C.",  # a line break still ends a chunk
        "Office closed.",
    ]
    assert chunks("Two parts. Second part.") == ["Two parts.", "Second part."]


def test_number_words_end_at_a_word_boundary() -> None:
    assert read_values("Under-fives ride the miniature railway free.") == []
    assert read_values("Tickets for the over-sixties are half price.") == []
    sixteen = check_values(
        "The club keeps sixteen rowing boats.", "The club keeps six rowing boats."
    )
    assert sixteen.missing == ("sixteen",) and sixteen.conflicting == ("sixteen",)
    assert check_values("Fourteen boats were repaired.", "boats repaired: 14").missing == ()


def test_an_identifier_inside_a_longer_token_is_present() -> None:
    log = '{"file": "BX-40_2032-01-09.log", "lines": 212}'
    assert check_values("The log of BX-40 has 212 lines.", log).missing == ()
    assert check_values("The log of BX-4 has 212 lines.", log).missing == ("BX-4",)
    longer = '{"file": "BX-40.5_2032.log"}'
    assert check_values("The log of BX-40 was kept.", longer).missing == ("BX-40",)


def test_a_quantity_with_its_unit_in_a_column_header_is_present() -> None:
    table = "day | volume_m3 | flow_l_per_min\n2032-02-03 | 212.5 | 14\nrows: 1"
    check = check_values("The tank held 212.5 cubic metres on 3 February 2032.", table)
    assert check.missing == () and check.conflicting == ()
    odometer = "date | odometer_km\n2032-02-03 | 7,420"
    changed = check_values("The van had done 7,420 miles.", odometer)
    assert changed.missing == ("7,420 miles",) and changed.conflicting == ("7,420 miles",)


def test_the_support_forest_is_monotonic_in_similarity_and_conflicts() -> None:
    pytest.importorskip("sklearn")
    from pytest_provenai.verify.forest import SUPPORT_MONOTONIC, fit_calibrator, load_table
    from pytest_provenai.verify.runtime import SHIPPED_TABLE

    cal = fit_calibrator(SHIPPED_TABLE)
    assert cal.identity["params"]["support_monotonic"] == SUPPORT_MONOTONIC
    rows = [dict(r["features"]) for r in load_table(SHIPPED_TABLE).split("validation")[:40]]
    for feature, direction in SUPPORT_MONOTONIC.items():
        low = [{**r, feature: 0.0} for r in rows]
        high = [{**r, feature: 1.0} for r in rows]
        for a, b in zip(cal.predict(low), cal.predict(high), strict=True):
            assert (b.p_support - a.p_support) * direction >= -1e-9, feature


SOURCE = (
    "Harrow Vale Lifeboat\nThe Harrow Vale lifeboat station was opened in 1911 by the "
    "Coastal Rescue Guild. It launched forty-two times in 2030, mostly to kayakers caught "
    "by the ebb tide. The station did not answer any call in February."
)


@pytest.mark.parametrize(
    ("claim", "sentence", "expected"),
    [
        # the sentence less its quote marks and a word of punctuation
        (
            "the Harrow Vale lifeboat station was opened in 1911 by the Coastal Rescue Guild",
            "The Harrow Vale lifeboat station was opened in 1911 by the Coastal Rescue Guild.",
            True,
        ),
        # a pronoun subject replaced by the name the source states
        (
            "The Harrow Vale lifeboat launched forty-two times in 2030, mostly to kayakers "
            "caught by the ebb tide.",
            "It launched forty-two times in 2030, mostly to kayakers caught by the ebb tide.",
            True,
        ),
        # a name the source never states
        (
            "The Calder Point lifeboat launched forty-two times in 2030, mostly to kayakers "
            "caught by the ebb tide.",
            "It launched forty-two times in 2030, mostly to kayakers caught by the ebb tide.",
            False,
        ),
        # a run that leaves a negation behind in the sentence
        (
            "The station did answer any call in February",
            "The station did not answer any call in February.",
            False,
        ),
        ("The station answered calls.", "The station answered calls in February.", False),
        # a paraphrase is no quotation (the calibrated score decides it)
        (
            "The Coastal Rescue Guild opened the Harrow Vale station in 1911.",
            "The Harrow Vale lifeboat station was opened in 1911 by the Coastal Rescue Guild.",
            False,
        ),
    ],
)
def test_a_claim_that_repeats_its_sentence_is_a_quotation(
    claim: str, sentence: str, expected: bool
) -> None:
    from pytest_provenai.attribution.support import verbatim

    assert verbatim(claim, sentence, SOURCE) is expected


def test_a_quotation_is_rescued_only_without_a_conflict_or_a_missing_value() -> None:
    from pytest_provenai.attribution.support import support_signals

    sentence = "It launched forty-two times in 2030, mostly to kayakers caught by the ebb tide."

    def rescued(claim: str) -> bool:
        return support_signals(
            claim, [sentence], SOURCE, sentence, [SOURCE], structured=False
        ).rescue_ok

    assert rescued(
        "The Harrow Vale lifeboat launched forty-two times in 2030, mostly to kayakers "
        "caught by the ebb tide."
    )
    assert not rescued(
        "The Harrow Vale lifeboat launched forty-three times in 2030, mostly to kayakers "
        "caught by the ebb tide."
    )


# -- third round (issue 23): values written another way, found on train/validation -------


def test_thousands_are_grouped_in_threes_only() -> None:
    values = [(v.text, v.key) for v in read_values("The crest, version 4, sold 12,480 prints.")]
    assert values == [("4", 4.0), ("12,480", 12480.0)]
    assert [v.key for v in read_values("bins 3,4 and 5")] == [3.0, 4.0, 5.0]


def test_a_count_per_period_is_a_number_not_a_quantity_of_its_period() -> None:
    record = "crew_id: K-11\nrostered hours: 42.5 per week\nrate: 19.10 GBP per hour"
    assert check_values("Kit is rostered for 42.5 hours a week.", record).missing == ()
    assert check_values("Kit works a 42.5-hour week.", record).missing == ()
    assert check_values("Kit is rostered for 40 hours a week.", record).missing == ("40 hours",)


def test_a_rate_is_stated_by_its_amount_and_its_named_period() -> None:
    terms = "The weekly allowance is 900 km; each extra kilometre costs 0.22 EUR."
    assert check_values("You may drive 900 km a week.", terms).missing == ()
    assert check_values("You may drive 900 km a day.", terms).missing == ("900 km a day",)
    assert check_values("You may drive 950 km a week.", terms).missing == ("950 km a week",)


def test_a_year_is_stated_by_a_full_date_of_that_year() -> None:
    meta = "file: winter-2032-rota.pdf\nissued: 2032-11-03"
    assert check_values("The winter 2032 rota came out on 3 November 2032.", meta).missing == ()
    assert check_values("The winter 2033 rota came out in November.", meta).missing == ("2033",)


def test_a_function_word_after_a_number_is_no_unit() -> None:
    # "has" would be read as hectare-seconds after "and"
    assert [v.kind for v in read_values("The club began in 2019 and has 40 members.")] == [
        "number",
        "number",
    ]


def test_day_and_hour_ranges_share_the_month_and_the_half_of_the_day() -> None:
    dates = [v.key for v in read_values("The hall was shut on 6 and 7 March 2032.")]
    assert dates == [(2032, 3, 6), (2032, 3, 7)]
    assert [v.key for v in read_values("Closed 11-13 May.")] == [(None, 5, 11), (None, 5, 13)]
    times = [v.key for v in read_values("Viewing runs from 2 to 5 pm, or 10 to 12 pm.")]
    assert times == [14 * 60, 17 * 60, 10 * 60, 12 * 60]
    table = "date | visitors\n2032-03-06 | 0\n2032-03-07 | 0\n2032-03-08 | 55"
    assert check_values("Nobody came on 6 and 7 March.", table).missing == ()
    assert check_values("Nobody came on 5 and 7 March.", table).missing == ("5",)


def test_a_count_of_rows_is_what_the_rows_count() -> None:
    from pytest_provenai.attribution.protected import claim_values
    from pytest_provenai.attribution.rows import counted

    table = (
        "route | bus | days\nR1 | Kestrel | daily\nR2 | Kestrel | weekdays\n"
        "R3 | Osprey | daily\nR4 | Osprey | daily\nrows: 4"
    )

    def count(claim: str) -> tuple[str, ...]:
        return counted(claim, claim_values(claim), table)

    assert count("Three of the four routes run daily.") == ("Three", "four")
    assert count("Three of the five routes run daily.") == ("Three",)
    assert count("Two of the routes use the Osprey.") == ("Two",)
    # the "two" is not borne out; "four routes" is (every row is a route: the header's
    # "route" is said of each row, and "routes" counts it since the twenty-eighth round)
    assert count("Two of the four routes run daily.") == ("four",)
    assert count("Three of the routes use the Osprey.") == ()
    # a count said of a plural noun: borne out by the rows holding a word of its clause
    assert count("Three routes run daily.") == ("Three",)
    assert count("Two routes run daily.") == ()
    assert count("The Osprey has two of them.") == ("two",)
    assert count("The Osprey has three of them.") == ()
    assert count("Three buses.") == ()  # no word of the clause is in three rows
    from pytest_provenai.attribution.support import support_signals

    claim = "Three of the four routes run daily."
    signals = support_signals(
        claim, [table], table, "R1 | Kestrel | daily", [table], structured=True
    )
    assert signals.values.missing == () and signals.row.missing == ()
    wrong = support_signals(
        "Two of the four routes run daily.", [table], table, "", [table], structured=True
    )
    assert wrong.values.missing == ("Two",)


def test_a_totals_line_is_about_the_table_not_a_row() -> None:
    """A claim about the whole table reads its totals line with the rows; a claim about one
    row does not, so a total said of that row is a value from another record."""
    from pytest_provenai.attribution.protected import claim_values
    from pytest_provenai.attribution.rows import row_check

    table = (
        "oven | fired | loaves | burnt\nAshdown | 2033-02-14 | 60 | 2\n"
        "Birchley | 2033-02-14 | 45 | 0\nCedarholt | 2033-02-15 | 30 | 1\n"
        "rows: 3; total loaves: 135; ovens with burnt loaves: 2"
    )

    def check(claim: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        found = row_check(claim, claim_values(claim), table)
        assert found.structured
        return found.missing, found.other_row

    # about the table: its totals, with values every row shares (the year)
    assert check("The bakery baked 135 loaves in 2033 across three ovens.") == ((), ())
    assert check("Two of the three ovens burnt some loaves.") == ((), ())
    # a wrong total is missing, not taken from a row
    assert check("The bakery baked 153 loaves in 2033.") == (("153",), ())
    # about one row: the total is another record's value, and another row's value is too
    assert check("The Birchley oven baked 135 loaves.") == (("135",), ("135",))
    assert check("The Birchley oven baked 60 loaves.") == (("60",), ("60",))
    assert check("The Birchley oven baked 45 loaves on 14 February 2033.") == ((), ())


def test_a_table_is_chunked_by_row_with_its_headers() -> None:
    table = (
        "sailing | vessel | departs | status\n"
        "SK-0702 | Morwen | 07:10 | on time\n"
        "SK-0715 | Corran Bright | 09:40 | cancelled\n"
        "rows: 2; cancelled: 1"
    )
    assert chunks(table) == [
        "sailing: SK-0702; vessel: Morwen; departs: 07:10; status: on time",
        "sailing: SK-0715; vessel: Corran Bright; departs: 09:40; status: cancelled",
        "rows: 2; cancelled: 1",
    ]
    rows = '[{"sailing": "SK-0702", "status": "on time"}, {"sailing": "SK-0715", "status": "late"}]'
    assert chunks(rows) == ["sailing: SK-0702; status: on time", "sailing: SK-0715; status: late"]
    # key: value records and prose keep their lines and sentences
    assert chunks("vessel: Morwen\nstatus: on time") == ["vessel: Morwen", "status: on time"]
    assert chunks("One | two. Three.") == ["One | two.", "Three."]


@pytest.mark.parametrize(
    ("claim", "unit", "words"),
    [
        (
            "Tickets are refundable up to 48 hours before the show.",
            "Tickets are non-refundable, but can be exchanged up to 48 hours before.",
            ("refundable", "non-refundable"),
        ),
        ("The deposit is nonrefundable.", "deposit: refundable", ("nonrefundable", "refundable")),
        ("The side gate was unlocked at 6 am.", "side gate: locked", ("unlocked", "locked")),
    ],
)
def test_a_prefix_negated_word_is_the_opposite_of_the_bare_word(
    claim: str, unit: str, words: tuple[str, str]
) -> None:
    assert polarity(claim, unit).antonym == words


@pytest.mark.parametrize(
    ("claim", "unit"),
    [
        ("Unless it rains, the gate stays open.", "gate: open; less traffic after 6"),
        ("The form is non-binding.", "The form is non-binding and free of charge."),
        ("Until March the shop is closed on Mondays.", "The shop is closed on Mondays."),
        ("The crate was unpacked under supervision.", "crate: unpacked; supervision: courier"),
    ],
)
def test_no_prefix_opposite_where_both_sides_agree(claim: str, unit: str) -> None:
    assert polarity(claim, unit).antonym is None


@pytest.mark.parametrize(
    ("claim", "unit", "flag"),
    [
        (
            "Loan KX-88 has no courier requirement.",
            "courier required: yes",
            "courier required: yes",
        ),
        (
            "A courier is required for loan KX-80.",
            "loan_id: KX-80\nobjects: 5\ncourier required: no",
            "courier required: no",
        ),
        (
            "Step-free access is available.",
            "show: 19:30; step-free access: no",
            "step-free access: no",
        ),
        ("The cottage has no parking.", "parking: yes; garden: no", "parking: yes"),
        ("Pets are not allowed in the cabin.", "pets allowed: TRUE", "pets allowed: TRUE"),
    ],
)
def test_a_claim_against_a_yes_no_field_is_a_negation_conflict(
    claim: str, unit: str, flag: str
) -> None:
    """A yes/no field is a statement: a claim that says its words with the other polarity
    contradicts it, though one field shares too few words with the claim for the plain
    negation rule (issue 23, found on a train domain)."""
    from pytest_provenai.attribution.support import support_signals

    pol = polarity(claim, unit)
    assert pol.flag == flag and pol.negation
    signals = support_signals(claim, [unit], unit, unit, [unit], structured=True)
    assert signals.conflict == "negation_conflict"


@pytest.mark.parametrize(
    ("claim", "unit"),
    [
        ("Loan KX-88 has no courier requirement.", "courier required: no"),
        ("A courier is required for loan KX-80.", "courier required: yes"),
        # the claim does not say every word of the field
        ("The courier was not paid.", "courier required: yes"),
        ("The pond has no fence.", "garden pond: yes"),
        # not a yes/no field
        ("The loan was not approved.", "loan status: no decision yet"),
    ],
)
def test_no_yes_no_conflict_where_the_field_agrees_or_is_not_said(claim: str, unit: str) -> None:
    assert polarity(claim, unit).flag is None


@pytest.mark.parametrize(
    ("claim", "unit", "negation"),
    [
        # the claim's "no" is what a no / 0 / none field says: no negation mismatch
        (
            "There was no night flow on 1 November.",
            "date: 2031-11-01\nreading_m3: 1,282.8\nnight_flow_l_per_h: 0",
            False,
        ),
        ("The flat has no open repair requests.", "flat: 4B\nopen repair requests: none", False),
        ("No late fees were charged to flat 4B.", "flat: 4B\nlate fees charged: 0.00", False),
        # another value: the negation still conflicts
        (
            "There was no night flow on 3 November.",
            "date: 2031-11-03\nreading_m3: 1,283.9\nnight_flow_l_per_h: 41",
            True,
        ),
    ],
)
def test_a_negated_claim_agrees_with_a_none_field(claim: str, unit: str, negation: bool) -> None:
    assert polarity(claim, unit).negation is negation


def test_a_yes_no_column_is_read_per_row_and_not_against_a_count() -> None:
    from pytest_provenai.attribution.support import support_signals

    table = (
        "title | returned\nSalt Roads | yes\nThe Glass Orchard | no\nWinter Ledger | no\n"
        "rows: 3; returned: 1; not returned: 2"
    )
    first = "title: Salt Roads; returned: yes"

    def conflict(claim: str) -> str | None:
        return support_signals(claim, [table], table, first, [table], structured=True).conflict

    assert conflict("Salt Roads has not been returned.") == "negation_conflict"
    assert conflict("The Glass Orchard has not been returned.") is None
    # a count of rows is about the table, not one row's field
    assert conflict("Two of the three listed books have not been returned.") is None


def test_a_json_record_is_read_field_by_field_for_negation() -> None:
    """A JSON object (chunked as ``k: v; k: v``) whose ``"inspection": "none"`` field the
    claim does not talk about does not make an affirmative claim a negation conflict; a
    claim that negates a field it names still is one."""
    record = (
        '{\n  "permit": "PM-0412",\n  "holder": "Quill & Fenn",\n  "inspection": "none",\n'
        '  "renewed": true,\n  "fee": "310.00 EUR"\n}'
    )
    for unit in [record, *chunks(record)]:
        assert not polarity("Quill & Fenn renewed permit PM-0412 for 310 EUR.", unit).conflict
        assert polarity("The permit was not renewed.", unit).negation


@pytest.mark.parametrize(
    ("claim", "unit"),
    [
        ("Club rules allow barbecues on the terrace.", "Barbecues are banned on the terrace."),
        ("The path was widened to 3 m.", "The path was narrowed to 3 m last spring."),
        ("Queue times are rising at the east gate.", "Queue times at the east gate are falling."),
    ],
)
def test_fourteenth_round_antonyms(claim: str, unit: str) -> None:
    assert polarity(claim, unit).antonym is not None


def test_thirty_sixth_round_a_surname_after_an_initial_is_a_name() -> None:
    """ "issued by M. Pascoe": the full stop of an initial opens no sentence, so "Pascoe" is
    one of the claim's names; given to a field that names someone else, it conflicts."""
    from pytest_provenai.attribution.support import names, support_signals

    assert "Pascoe" in names("The boots were issued by M. Pascoe.")
    assert "Ambrose-Kerr" in names("D. Ambrose-Kerr was the nurse on chair 3.")
    assert "Then" not in names("It rained all day. Then the boots came back.")
    unit = (
        '{"ticket": "T-5531", "customer": "Ola Berg", "pair_no": "F-21", "issued_by": "R. Tamblyn"}'
    )

    def conflict(claim: str) -> str | None:
        return support_signals(claim, [unit], unit, unit, [unit], structured=True).conflict

    assert conflict("The boots on ticket T-5531 were issued by M. Pascoe.") == "field_conflict"
    assert conflict("The boots on ticket T-5531 were issued by R. Tamblyn.") is None


@pytest.mark.parametrize(
    ("claim", "unit"),
    [
        (
            "The co-op is reducing its rate per kilo for hotels.",
            "The co-op raised its rate per kilo for hotels.",
        ),
        ("The brine was at its warmest at 16:45.", "Brine temperature: coldest at 16:45, -10.6 C."),
        (
            "The model 6 was the shortest of the uprights.",
            "The model 6 was the longest of the uprights.",
        ),
        ("Her reversing is still slow.", "Reversing: quick and accurate now."),
    ],
)
def test_thirty_sixth_round_antonyms(claim: str, unit: str) -> None:
    assert polarity(claim, unit).antonym is not None


def test_thirty_seventh_round_the_same_negation_is_no_conflict() -> None:
    """A claim that negates what the unit negates agrees with it, even where the unit's
    sentence most like the claim is another one; a negation of what the unit affirms still
    conflicts."""
    unit = "Fall at 02:40. No head injury seen. Skin tear 2 cm left forearm, cleaned and dressed."
    claim = "The nurse found no head injury, only a skin tear of 2 cm on her left forearm."
    assert not polarity(claim, unit).negation
    assert polarity("The nurse found no skin tear on her left forearm.", unit).negation


def test_thirty_seventh_round_a_yes_no_field_is_negated_only_by_name() -> None:
    """ "… with no damage" negates the damage, not ``deposit_returned: True``."""
    unit = "ticket: H-2201\ndeposit_returned: True\ncondition_on_return: no damage"
    ok = "Ticket H-2201 had its deposit returned, and the skates came back with no damage."
    assert polarity(ok, unit).flag is None
    assert polarity("Ticket H-2201 did not get its deposit returned.", unit).flag is not None


@pytest.mark.parametrize(
    ("claim", "unit"),
    [
        # a negation the unit says of another thing, and affirms of the claim's
        (
            "Flight BA12 was not delayed.",
            "Flight BA10 was not delayed. Flight BA12 was delayed 40 minutes.",
        ),
        ("Room 5 has no heating.", "Room 4 has no heating. Room 5 heating on, 21 C."),
        ("The boat has no damage.", "The car has no damage. The boat has hull damage to the bow."),
        (
            "The pool was not closed on Monday.",
            "The gym was not closed on Monday. The pool was closed on Monday for repairs.",
        ),
        # every negation of the claim must be the unit's too
        (
            "The nurse found no head injury, and no skin tear on her left forearm.",
            "Fall at 02:40. No head injury seen. Skin tear 2 cm left forearm, cleaned and dressed.",
        ),
    ],
)
def test_thirty_seventh_round_a_negation_said_of_another_thing_still_conflicts(
    claim: str, unit: str
) -> None:
    assert polarity(claim, unit).negation


def test_thirty_seventh_round_a_negation_that_names_nothing_else_negates_the_field() -> None:
    unit = "van: V-3\ninspected: True\nmileage: 4000"
    assert polarity("Van V-3's MOT inspection: never done.", unit).flag == "inspected: True"


def test_thirty_eighth_round_none_of_a_field_that_holds_someone_is_a_conflict() -> None:
    """ "no observer" against ``observer: T. Nguyen-Bale``; not against an empty field, nor
    where the claim does not deny it."""
    unit = "flight_id: FL-0914-02\nremote_pilot: R. Marchetti\nobserver: T. Nguyen-Bale"
    assert polarity("Wednesday I flew the north solo, no observer.", unit).flag == (
        "observer: T. Nguyen-Bale"
    )
    assert polarity("I flew the north with an observer, T. Nguyen-Bale.", unit).flag is None
    for empty in ("none", "n/a", "-", "0", "not required"):
        alone = unit.replace("T. Nguyen-Bale", empty)
        assert polarity("Wednesday I flew the north solo, no observer.", alone).flag is None

    # a value that itself says there is none ("Off, Did not fire") is no one there
    exif = "File: IMG_0412.jpg\nFlash: Off, Did not fire\nModel: Halden Nova 8"
    assert polarity("The photo was shot without flash.", exif).flag is None


@pytest.mark.parametrize(
    ("claim", "unit"),
    [
        (
            "GAS-05's back to active on the register",
            "GAS-05 | Kestrel M4E | grounded - gimbal fault",
        ),
        ("GAS-05 is grounded.", "GAS-05 | Kestrel M4E | active"),
    ],
)
def test_thirty_eighth_round_antonyms(claim: str, unit: str) -> None:
    assert polarity(claim, unit).antonym is not None


@pytest.mark.parametrize(
    ("claim", "unit"),
    [
        ("There was no booking fee.", "booking: B-12\nbooking_fee: £0.00"),
        ("I flew with no observer.", "flight: F-2\nobserver: TBC"),
        ("The tenant has no rent arrears.", "tenant: A. Lee\nrent: £900"),
        ("No late fee until the 5th.", "tenant: A. Lee\nlate_fee: £15 after the 5th"),
        ("No driver complaints this month.", "route: R4\ndriver: J. Bloggs"),
        ("There's no wifi in the rooms.", "hotel: Quay\nwifi: lobby only"),
    ],
)
def test_thirty_eighth_round_what_no_field_denial_is(claim: str, unit: str) -> None:
    """A field that holds nothing, a noun or condition after the name, or a value that says
    it only in part: no denial of the field."""
    assert polarity(claim, unit).flag is None


def test_thirty_eighth_round_without_any_field() -> None:
    unit = "flight: F-2\nobserver: T. Nguyen-Bale"
    assert polarity("We flew without any observer.", unit).flag == "observer: T. Nguyen-Bale"


@pytest.mark.parametrize(
    ("claim", "unit", "antonym"),
    [
        # the other side of the same moment, by meaning
        (
            "Gluten-free loaves are sliced after 6 am.",
            "Gluten-free loaves are sliced before 06:00.",
            ("after", "before"),
        ),
        ("Deliveries arrive before 14:00.", "Deliveries arrive after 2 pm.", ("before", "after")),
        # the other way to a named place
        (
            "The clinic is moving to the Abbey Road surgery.",
            "The clinic will move from Abbey Road to Elm Street.",
            ("to", "from"),
        ),
        # a stretch of time on the other side of the same thing
        (
            "The shop shuts 20 minutes after the hall.",
            "The shop shuts at 17:40, twenty minutes before the hall.",
            ("after", "before"),
        ),
        # a move whose two dates the claim swaps
        (
            "The fete moved from 9 June to 2 June.",
            "The fete has moved from 2 June to 9 June.",
            ("from", "to"),
        ),
        # another interval by the same word before it
        (
            "The gutters are cleared weekly.",
            "Gutters are cleared monthly; drains yearly.",
            ("week", "month"),
        ),
        # forty-fifth round pairs
        ("The parking permit is active.", "permit: P-77\nstatus: lapsed", ("active", "lapsed")),
        ("Her £50 bond was refunded.", "bond: £50 (retained)", ("refunded", "retained")),
        (
            "The late bus will continue.",
            "The late bus is withdrawn from May.",
            ("continue", "withdrawn"),
        ),
    ],
)
def test_forty_fifth_round_opposites(claim: str, unit: str, antonym: tuple[str, str]) -> None:
    assert polarity(claim, unit).antonym == antonym


@pytest.mark.parametrize(
    ("claim", "unit"),
    [
        (
            "Gluten-free loaves are sliced before 6 am.",
            "Gluten-free loaves are sliced before 06:00.",
        ),
        ("Deliveries arrive after 14:00.", "Deliveries arrive after 2 pm, never before 14:00."),
        (
            "The clinic is moving to Elm Street.",
            "The clinic will move from Abbey Road to Elm Street.",
        ),
        (
            "The clinic moves from Abbey Road.",
            "The clinic will move from Abbey Road to Elm Street.",
        ),
        ("The fete moved from 2 June to 9 June.", "The fete has moved from 2 June to 9 June."),
        # one end of a span said alone is no swap ("open from" what was "shut to")
        ("The lane works run from 3 May.", "The lane works run from 1 April to 3 May."),
        ("The gutters are cleared monthly.", "Gutters are cleared monthly; drains yearly."),
        ("Drains are looked at weekly.", "Gutters are cleared monthly; drains yearly."),
    ],
)
def test_forty_fifth_round_no_opposite_where_the_sides_agree(claim: str, unit: str) -> None:
    assert polarity(claim, unit).antonym is None


def test_forty_fifth_round_a_negation_is_read_on_stemmed_words() -> None:
    """ "does not need to lock the gates" says the predicate of "locks the main gate": the
    negation is a conflict once the words are stemmed."""
    unit = "The warden locks the main gate at dusk."
    claim = "The warden does not need to lock the gates at dusk."
    got = support_signals(claim, [unit], unit, unit, [unit], structured=False)
    assert got.conflict == "negation_conflict"
    agree = "The warden locks the gate at dusk."
    assert support_signals(agree, [unit], unit, unit, [unit], structured=False).conflict is None


# forty-sixth round: shapes from invented traces in twenty further domains (issue 23)

_TOURS = (
    "tour_id | tour | start | guide | capacity | booked | price_gbp\n"
    "T-501 | Tower climb | 10:30 | Fr Aldous Penn | 12 | 12 | 14.00\n"
    "T-503 | Tower climb | 14:30 | Margaret Iles | 12 | 7 | 14.00\n"
)


@pytest.mark.parametrize(
    ("claim", "source", "borne"),
    [
        # what is left of two whole cells of the claim's row
        ("The 2:30 pm tower climb still has five places.", _TOURS, ("five",)),
        # a number the claim says times the row's price
        (
            "Buying all seven Dracunculus would cost £98.",
            "sku | plant | stock | price\nRP-1187 | Begonia | 11 | £16.50\n"
            "RP-1203 | Dracunculus vulgaris | 7 | £14.00\n",
            ("£98",),
        ),
        # ... or a sentence's price for each
        (
            "Fitting three anti-snap cylinders would come to £165.",
            "Anti-snap cylinders are £55 each fitted when replacing three or more.",
            ("£165",),
        ),
        # a stretch of time between two times of one record
        (
            "Marek reached the Brennan lockout 34 minutes after the call.",
            '[{"job": "LS-3390", "time": "2025-02-14 22:47", "customer": "A. Brennan", '
            '"technician": "Marek", "arrived": "23:21"}, {"job": "LS-3391", "time": '
            '"2025-02-15 08:10", "customer": "Dunmore Dental", "technician": "Sian", '
            '"arrived": "08:52"}]',
            ("34 minutes",),
        ),
    ],
)
def test_forty_sixth_round_amounts_one_record_works_out(
    claim: str, source: str, borne: tuple[str, ...]
) -> None:
    assert derived(claim, claim_values(claim), source) == borne


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        # a wrong difference
        ("The 2:30 pm tower climb still has four places.", _TOURS),
        # no word says the amount is left or between
        ("The 2:30 pm tower climb has five guides.", _TOURS),
        # "free of charge" says no room is free
        ("We found five cracked pins, replaced free of charge.", _TOURS),
        # a number the output writes in another unit is a changed unit, not arithmetic
        (
            "After the cut the tank was refilled with 3100 ml of water.",
            "06:52:30 RS-02 water tank filled vol=3100 l temp=60C\n"
            "07:05:04 RS-02 cut start\n07:17:48 RS-02 cut complete",
        ),
    ],
)
def test_forty_sixth_round_no_amount_worked_out(claim: str, source: str) -> None:
    assert derived(claim, claim_values(claim), source) == ()


_CSV_JOBS = (
    "job,address,date,sweep,price,status\n"
    "CS-1201,14 Orchard Row,2025-10-07,Dan Colley,£65,completed\n"
    "CS-1202,The Old Forge,2025-10-07,Dan Colley,£75,completed - cert issued\n"
    "CS-1203,2 Mill Lane,2025-10-07,Ria Patel,£95,rescheduled to 2025-10-14\n"
    "CS-1204,Bramble Cottage,2025-10-08,Ria Patel,£75,booked\n"
)


@pytest.mark.parametrize(
    ("claim", "borne"),
    [
        # a total of money cells the rows a name picks hold, "bringing in"
        ("Dan Colley did two jobs on 7 October, bringing in £140.", ("two", "£140")),
        # a count of the rows of a date
        ("Three jobs were scheduled for 7 October.", ("Three",)),
        # ... that the clause's other words pick out further: two were completed, not three
        ("Three jobs were completed on 7 October.", ()),
        ("Two jobs were completed on 7 October.", ("Two",)),
    ],
)
def test_forty_sixth_round_totals_and_counts_of_money_cells_and_dates(
    claim: str, borne: tuple[str, ...]
) -> None:
    values = claim_values(claim)
    got = counted(claim, values, _CSV_JOBS) + totalled(claim, values, _CSV_JOBS)
    assert tuple(dict.fromkeys(got)) == borne


def test_forty_sixth_round_a_total_across_some_batches() -> None:
    source = "batch,cheese,wheels\nCV-88,Tomme,40\nCV-91,Blue,24\nCV-95,Tomme,38\n"
    claim = "There are 102 wheels in the cave across three batches."
    assert totalled(claim, claim_values(claim), source) == ("102",)
    wrong = "There are 112 wheels in the cave across three batches."
    assert totalled(wrong, claim_values(wrong), source) == ()


_EMAIL = (
    "From: Gwen Pritchard <chair@twinning.example>\nTo: committee@twinning.example\n"
    "Date: 20 May 2025\nSubject: Coach for the July visit\n\n"
    "Hi all, I've booked the coach for the airport pick-up on 8 July: 49 seats. The flight "
    "lands at 14:20. The civic reception with the mayor is on 9 July at 18:00 in the "
    "Guildhall. We still need one more host family.\nGwen"
)


def test_forty_sixth_round_an_emails_body_is_read_as_prose() -> None:
    """An email's header lines make it look like records; its body is prose, one sentence
    against another: the pick-up's date is no date of the reception."""
    parts = chunks(_EMAIL)
    wrong = "The civic reception is on 8 July."
    got = support_signals(wrong, parts, _EMAIL, parts[-3], [_EMAIL], structured=False)
    assert got.conflict == "value_from_other_row"
    right = "The civic reception is on 9 July."
    got = support_signals(right, parts, _EMAIL, parts[-3], [_EMAIL], structured=False)
    assert got.conflict is None


@pytest.mark.parametrize(
    ("claim", "other"),
    [
        ("Late returns are charged 50p per day.", ("50p per day",)),
        ("Late returns are charged 50p per week.", ()),
    ],
)
def test_forty_sixth_round_a_rate_after_a_per_of_something_else(
    claim: str, other: tuple[str, ...]
) -> None:
    source = "2. Late returns are charged 50p per toy per week."
    assert rate_conflict(claim, claim_values(claim), source) == other


@pytest.mark.parametrize(
    ("claim", "other"),
    [
        ("Spectators are charged £65.", ("£65",)),
        ("Agas only need to be out for 12 hours.", ("12 hours",)),
        ("Spectators are charged £12.", ()),
        ("Fires must be out for 12 hours.", ()),
    ],
)
def test_forty_sixth_round_the_one_word_a_semicolon_part_says(
    claim: str, other: tuple[str, ...]
) -> None:
    source = (
        "1. The Hawk Walk lasts 90 minutes and costs £65 per person; spectators pay £12.\n"
        "2. Let the fire go out at least 12 hours before; for Agas and range cookers allow "
        "24 hours.\n3. Dogs are not permitted."
    )
    assert prose_other_sentence(claim, claim_values(claim), chunks(source)) == other


def test_forty_sixth_round_a_row_named_by_its_leftmost_column() -> None:
    """Rows alike in how many of the claim's words they hold: the leftmost column names
    the row, and the other row's cell said of it is swapped."""
    source = (
        "booking | group | players | package\n"
        "PB-7710 | Harris stag party | 16 | Full day\n"
        "PB-7714 | Northgate Rugby U18 | 22 | Half day\n"
    )
    claim = "The rugby group is booked for a full day."
    got = row_check(claim, claim_values(claim), source)
    assert "Rugby" in got.row and got.swapped == ("Full day",)
    right = "The rugby group is booked for a half day."
    assert row_check(right, claim_values(right), source).swapped == ()


@pytest.mark.parametrize(
    ("text", "content"),
    [
        (
            "No, you can't bring your dog to the car park.",
            "You can't bring your dog to the car park.",
        ),
        ("Sorry, they can't post plants abroad.", "They can't post plants abroad."),
        ("The Kaur hire seems to be confirmed.", "The Kaur hire is confirmed."),
        ("No dogs are allowed in the cave.", "No dogs are allowed in the cave."),
    ],
)
def test_forty_sixth_round_an_answers_yes_or_no_is_no_part_of_the_claim(
    text: str, content: str
) -> None:
    assert [c.content for c in decompose(text, {})] == [content]


def test_forty_sixth_round_a_clocks_minutes_are_no_day() -> None:
    read = read_values("Fuel dock hours: 08:00-18:00 April to September.")
    assert [(v.kind, v.text) for v in read] == [("time", "08:00"), ("time", "18:00")]


def test_forty_sixth_round_a_claims_date_picks_its_line() -> None:
    source = (
        "Toy library sessions - May 2025\nSat 10 May 10:00-12:30  Open session\n"
        "Sat 17 May  CLOSED - hall booked for election count"
    )
    claim = "The library is open on the morning of 17 May."
    got = support_signals(
        claim, [source], source, "Sat 10 May 10:00-12:30  Open session", [source], structured=False
    )
    assert got.conflict == "antonym_conflict"


def test_forty_sixth_round_a_claims_times_pick_their_sentence_not_the_whole_line() -> None:
    """A line of opening hours goes on past the claim's day ("… Closed Sunday."): the
    sentence holding the claim's times is what it speaks of."""
    source = (
        "Main pool hours - Monday to Friday, 6:30 to 21:00. Saturday, 8:00 to 18:00. "
        "Closed Sunday.\nLearner pool hours - Saturday, 9:00 to 12:00."
    )
    claim = "The main pool is open on Saturdays from 8:00 to 18:00."
    got = support_signals(claim, [source], source, source, [source], structured=False)
    assert got.conflict is None


@pytest.mark.parametrize(
    ("claim", "present"),
    [
        ("Guy pressed 650 litres of apples.", False),
        ("Guy pressed 650 kg of apples.", True),
        ("Guy got 377 litres of juice.", True),
        ("Guy paid twelve pounds.", True),
    ],
)
def test_forty_sixth_round_a_number_under_another_dimensions_unit(
    claim: str, present: bool
) -> None:
    row = "member: Guy Fennimore\napples_kg: 650\njuice_litres: 377\nfee_gbp: 12"
    assert match_values(claim_values(claim), [row])[0].present is present


@pytest.mark.parametrize(
    ("claim", "state"),
    [
        ("The morning tower climb is sold out.", (True, False)),
        ("The tower climb is fully booked.", (True, False)),
        ("There are places left on the tower climb.", (False, True)),
        ("The tower climb isn't sold out.", (False, True)),
        ("The tower climb is full of history.", (None, None)),
    ],
)
def test_forty_sixth_round_what_a_claim_says_of_a_records_room(
    claim: str, state: tuple[bool | None, bool | None]
) -> None:
    full = "tour: Tower climb\nstart: 10:30\ncapacity: 12\nbooked: 12"
    room = "tour: Tower climb\nstart: 14:30\ncapacity: 12\nbooked: 7"
    assert (capacity_state(claim, full), capacity_state(claim, room)) == state


@pytest.mark.parametrize(
    "claim",
    ["The nave isn't heated, so bring a coat.", "The start time hasn't changed."],
)
def test_forty_sixth_round_a_contracted_not_before_the_bare_word_agrees(claim: str) -> None:
    unit = "The nave is unheated; bring a coat. The start time is unchanged."
    assert polarity(claim, unit).antonym is None


@pytest.mark.parametrize(
    ("claim", "conflict"),
    [
        ("The glory hole runs hotter than the furnace.", True),
        ("The furnace is cooler than the glory hole.", True),
        ("The furnace runs hotter than the glory hole.", False),
        ("The glory hole is cooler than the furnace.", False),
        # a thing no part of the source gives an amount of is no comparison to check
        ("The annealer runs hotter than the furnace.", False),
    ],
)
def test_forty_sixth_round_a_comparison_the_amounts_turn_round(claim: str, conflict: bool) -> None:
    source = (
        "2. Didymium glasses are required when working at the glory hole.\n"
        "4. The furnace runs at 1,150 °C; the glory hole at about 1,050 °C.\n"
        "5. Pieces stay in the annealer overnight."
    )
    assert comparative_conflict(claim, source) is conflict
