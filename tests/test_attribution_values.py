"""Issue 23, support side (pure parts): values compared by meaning (dateparser, pint,
number-parser), structured outputs checked row by row, negation and antonym conflicts, the
lexical rescue that no longer accepts a value that is negated, antonymic or from another
row, and conflicts that make a claim ``contradicted``."""

from __future__ import annotations

import pytest

from pytest_provenai.attribution.decompose import claim_at
from pytest_provenai.attribution.pipeline import chunks
from pytest_provenai.attribution.polarity import ANTONYMS, polarity
from pytest_provenai.attribution.protected import check_values
from pytest_provenai.attribution.rows import (
    RowCheck,
    counted,
    field_conflict,
    listed_count,
    log_other_line,
    name_field_conflict,
    prose_other_sentence,
    rate_conflict,
    records,
    row_check,
    superlative_conflict,
    totalled,
)
from pytest_provenai.attribution.support import support_signals
from pytest_provenai.attribution.values import match_values, read_values, worked_out
from pytest_provenai.attribution.verdict import Judgement, decide

LEAVE = (
    "request_id | start | days | decision\n"
    "LR-771 | 2031-04-14 | 5 | approved\n"
    "LR-779 | 2031-05-26 | 3 | refused\n"
    "LR-784 | 2031-07-07 | 10 | pending\n"
    "rows: 3"
)
EMPLOYEES = (
    "employee_id: TJ-0388\nname: Rosalind Okafor\nbase pay: 16.40 GBP per hour\n\n"
    "employee_id: TJ-0412\nname: Tomasz Welland\nbase pay: 11.20 GBP per hour"
)


def present(claim: str, premise: str) -> list[bool]:
    return [m.present for m in match_values(read_values(claim), premise)]


@pytest.mark.parametrize(
    ("claim", "premise"),
    [
        ("Her last shift finished at 8 pm.", "last shift end: 20:00"),
        ("The loan ends on 3 May 2018.", "loan end: 2018-05-03"),
        ("The order was twelve rye loaves.", "qty: 12 rye loaves"),
        ("Readings are taken every 15 minutes.", "readings at 15-minute intervals"),
        ("Each loaf weighs 0.8 kg.", "weight: 800 g"),
        ("The novel came out in April 2011.", "first published: 2011-04"),
        ("Sunday overtime is paid at double the rate.", "Sundays: 2 times the base rate"),
        ("It was issued on the 14th of June 2031.", "issued: 2031-06-14"),
        ("Cancelling late costs 25 pounds.", "late cancellation fee: 25.00 GBP"),
        ("Reserving costs fifty pence.", "reservation fee: 0.50 GBP"),
        ("The car is 54 euros a day.", "daily rate: 54 EUR"),
        ("She weighs four and a quarter kilos.", "weight: 4.25 kg"),
        ("There are two and a half litres left.", "on hand: 2.5 l"),
        ("The visit lasted one and a half hours.", "duration: 90 minutes"),
        ("The sack holds 8 pounds of flour.", "flour: 8 lb"),
        # money per unit: the unit is part of the value, or left out of the claim
        ("Diesel is 1.62 EUR a litre at the quay.", "pump price: 1.62 EUR per litre"),
        ("Diesel at the quay is 1.62 EUR.", "pump price: 1.62 EUR per litre"),
        ("Cheddar sells at £14 a kilo.", "cheddar: 14.00 GBP per kilogram"),
        ("Cold storage is 3 GBP per square metre.", "cold storage: 3 GBP per square metre"),
        # tenth round: times, dates and durations as people write them
        ("The ferry leaves at 7.30pm.", "departure: 19:30"),
        ("Doors open at 6.45 pm.", "doors: 18:45"),
        ("It departs at 7:30 in the evening.", "departure: 19:30"),
        ("We meet at half seven on Friday.", "meeting: Fri 19:30"),
        ("The talk starts at eight.", "start: 20:00"),
        ("The lease starts on 01/03/2031.", "lease start: 2031-03-01"),
        ("The lease starts on the 1st of March 2031.", "start: 01/03/2031"),
        ("It was signed on 4.3.2031.", "signed: 4 March 2031"),
        ("The flight lasts an hour and a half.", "duration: 90 min"),
        ("The crossing takes an hour and 25 minutes.", "crossing time: 85 minutes"),
        ("The ride took 1 hr 20 min.", "duration: 80 minutes"),
        ("The ride took 1h 20m.", "ride_min: 80"),
        ("The proof needs three quarters of an hour.", "proof: 45 mins"),
        ("Allow half an hour for parking.", "parking: 30 minutes"),
        ("The parcel weighs half a kilo.", "weight: 500 g"),
        ("The club has a dozen members.", "members: 12"),
        ("Pack half a dozen eggs.", "eggs: 6"),
        # a number under a field or column named with its unit, converted
        ("The tank holds 2 litres.", "volume_ml: 2000"),
        ("The flight lasts an hour and a half.", "duration_min: 90"),
        ("The run took 2 hours.", "runner | time_min\nAsha | 120"),
        ("Vaccinated on 03-03-2031.", "vaccinated: 2031-03-03"),
        ("Vaccinated on 3 March 2031.", "vaccinated: 03/03/31"),
        ("Flour costs £1.20/kg.", "flour: 1.20 GBP per kg"),
        ("Bake at 220C.", "oven: 220 °C"),
        ("The route is graded 5.10a.", "grade: 5.10a"),
        ("Rex is a 2-year-old terrier.", "age: 2 years"),
        ("It is a 3-bed flat.", "bedrooms: 3"),
        ("The gig starts at 8.", "start: 20:00"),
        ("It ends at 10.15pm.", "end: 22:15"),
        # a hedge or a comparison bounds the value
        ("The walk takes about 40 minutes.", "duration: 38 min"),
        ("Some 300 people came.", "attendance: 312"),
        ("The room sleeps up to 4.", "sleeps: 4"),
        ("She waited at least 2 hours.", "wait: 2 h"),
        ("It exports to more than 106 countries.", "exports to more than 106 countries"),
        ("The grant is £1.2m.", "grant: 1,200,000 GBP"),
        ("The grant is £1.2 million.", "grant: £1,200,000"),
        ("The loan runs for 3 years.", "principal: 5000 GBP; term_months: 36"),
        ("It restarts once the wind drops below 22 m/s.", "restart: wind below 22 m/s"),
    ],
)
def test_values_are_compared_by_meaning(claim: str, premise: str) -> None:
    assert present(claim, premise) == [True] * len(present(claim, premise))
    assert present(claim, premise)  # the claim has a value at all


@pytest.mark.parametrize(
    ("claim", "premise", "conflicting"),
    [
        ("The payslip was made by LedgerLoom 4.1.", "generator: LedgerLoom 4.1.1", False),
        ("The payslip was made by LedgerLoom 4.1.2.", "generator: LedgerLoom 4.1.1", True),
        ("The array produced 2 kWh.", "output: 2 MWh", True),
        ("The crate weighs 16 lb.", "weight: 16 kg", True),
        ("Her last shift ended at 19:45.", "last shift end: 20:00", True),
        ("The break starts on 15 April 2031.", "start: 2031-04-14", True),
        ("Thirteen requests are on file.", "requests: 12", True),
        ("Cancelling late costs 30 pounds.", "late cancellation fee: 25.00 GBP", True),
        ("Reserving costs sixty pence.", "reservation fee: 0.50 GBP", True),
        ("She weighs four and a half kilos.", "weight: 4.25 kg", True),
        ("Diesel is 1.62 EUR a gallon.", "pump price: 1.62 EUR per litre", True),
        ("Cheddar sells at £14 a gram.", "cheddar: 14.00 GBP per kilogram", True),
        ("Diesel at the quay is 1.26 EUR.", "pump price: 1.62 EUR per litre", True),
        ("The ferry leaves at 7.30pm.", "departure: 07:30", True),
        ("It departs at 7:30 in the evening.", "departure: 07:30", True),
        ("The lease starts on 01/03/2031.", "lease start: 2031-01-03", True),
        ("The crossing takes an hour and 25 minutes.", "crossing time: 95 minutes", True),
        ("The tank holds 3 litres.", "capacity_l: 2", False),
        # a letter after a number that is no unit is a grade or a code, kept whole
        ("The route is graded 5.10b.", "grade: 5.10a", False),
        ("The route is graded 6b.", "grade: 6a+", False),
        ("The walk takes about 40 minutes.", "duration: 50 min", True),
        ("It took more than 30 minutes.", "wait: 25 min", True),
        ("Fewer than 10 seats are left.", "seats left: 14", True),
        # a larger number elsewhere in the premise is no "more than"
        ("It exports to more than 106 countries.", "exports to more than 100 countries", True),
        ("The release is LedgerLoom 2-beta.", "release: LedgerLoom 2-rc", False),
    ],
)
def test_a_changed_value_is_missing_and_conflicting(
    claim: str, premise: str, conflicting: bool
) -> None:
    check = check_values(claim, premise)
    assert check.missing and bool(check.conflicting) is conflicting


def test_kilos_are_kilograms_and_a_fraction_is_part_of_its_number() -> None:
    """pint reads "kilos" as kiloseconds and number-parser reads no fractions."""
    (kilos,) = read_values("four and a quarter kilos")
    assert kilos.kind == "quantity" and kilos.key[:3] == (4.25, "[mass]", 4.25)
    (mixed,) = read_values("two and three quarters")
    assert mixed.key == 2.75
    # "and" between two numbers is still no fraction
    assert [v.key for v in read_values("rooms 3 and 4")] == [3.0, 4.0]


def test_what_the_new_shapes_leave_alone() -> None:
    """Not read by the new shapes: "5 m" is five metres, not minutes; "a week" in a rate is
    no duration; "at seven people" is a count; "two apples and a half" is no quantity of
    apples."""
    assert [(v.kind, v.key[1]) for v in read_values("It was 5 m 2 s away")] == [
        ("quantity", "[length]"),
        ("quantity", "[time]"),
    ]
    assert [v.text for v in read_values("Open 3 days a week, 4 hours a day")] == [
        "3 days",
        "4 hours",
    ]
    assert [(v.kind, v.key) for v in read_values("A table at seven people")] == [("number", 7.0)]
    assert [v.text for v in read_values("two apples and a half")] == ["two"]
    # a bare hour is a time only at the end of a clause; "over" is no bound
    assert [(v.kind, v.bound) for v in read_values("at 8 kg over 3 weeks")] == [
        ("quantity", None),
        ("quantity", None),
    ]
    (year,) = read_values("LedgerLoom 1.2.2031")
    assert year.kind == "date"  # day.month.year, never a version ending in a year


def test_14_june_0715_is_a_date_and_a_time_and_versions_stay_whole() -> None:
    values = {v.kind: v.key for v in read_values("Boarding closes 14 June 07:15 on 4.1.1.")}
    assert values == {"date": (None, 6, 14), "time": 7 * 60 + 15, "version": "4.1.1"}


def test_an_unreadable_value_is_compared_as_text_and_says_so() -> None:
    check = check_values('The code word is "blue heron".', "code word: Blue Heron")
    assert check.missing == () and check.unparsed == ()
    check = check_values("It was filed on 31 February 2031.", "filed: 31 February 2031")
    assert check.unparsed == ("31 February 2031",) and check.missing == ()
    check = check_values("It was filed on 31 February 2031.", "filed: 2031-02-28")
    assert check.missing == ("31 February 2031",)


def test_records_of_tables_key_value_blocks_and_json() -> None:
    table = records(LEAVE)
    assert table is not None and len(table) == 4 and "decision: refused" in table[1]
    blocks = records(EMPLOYEES)
    assert blocks is not None and len(blocks) == 2 and "Tomasz" in blocks[1]
    listed = records('[{"id": "A-1", "size": 3}, {"id": "A-2", "size": 5}]')
    assert listed == ["id: A-1\nsize: 3", "id: A-2\nsize: 5"]
    assert records("Prose text. Nothing structured here.") is None


def test_a_value_from_another_row_is_not_support() -> None:
    own = row_check(
        "LR-779 starts on 26 May 2031.", read_values("LR-779 starts on 26 May 2031."), LEAVE
    )
    assert own.structured and own.missing == () and not own.conflict
    text = "LR-784 starts on 2031-05-26."
    other = row_check(text, read_values(text), LEAVE)
    assert other.missing == ("2031-05-26",) and other.other_row == ("2031-05-26",)
    text = "Okafor's base pay is 11.20 GBP per hour."
    swapped = row_check(text, read_values(text), EMPLOYEES)
    assert swapped.conflict and "Okafor" in swapped.row


READINGS = (
    "date | reading_m3 | night_flow_l_per_h\n2031-11-04 | 1,284.6 | 38\n"
    "2031-11-03 | 1,283.9 | 41\n2031-11-02 | 1,283.1 | 0\n2031-11-01 | 1,282.8 | 0\nrows: 4"
)
DECISIONS = (
    "request_id | start | days | decision\nLR-771 | 2031-04-14 | 5 | approved\n"
    "LR-779 | 2031-05-26 | 3 | refused\nLR-784 | 2031-07-07 | 10 | approved\nrows: 3"
)


@pytest.mark.parametrize(
    ("claim", "source", "other_row"),
    [
        # each listed value is in a row that says the same of it: both rows are the claim's
        ("There was no night flow on 1 and 2 November.", READINGS, ()),
        ("LR-771 and LR-784 were approved.", DECISIONS, ()),
        # a listed value whose row says otherwise stays a value from another row
        ("Night flow was 38 litres an hour on 3 and 4 November.", READINGS, ("3",)),
        ("LR-771 and LR-779 were approved.", DECISIONS, ("LR-779",)),
        ("LR-771 and LR-784 lasted 5 days.", DECISIONS, ("LR-784",)),
    ],
)
def test_listed_values_may_span_rows_that_agree(
    claim: str, source: str, other_row: tuple[str, ...]
) -> None:
    check = row_check(claim, read_values(claim), source)
    assert check.other_row == other_row and check.missing == other_row


def test_negation_and_antonyms_against_the_evidence_unit() -> None:
    assert polarity(
        "Overtime does not need a supervisor's approval.", "Overtime needs a supervisor's approval."
    ).negation
    assert not polarity(
        "Overtime needs a supervisor's approval.", "Overtime needs a supervisor's approval."
    ).conflict
    assert polarity("The request was granted.", "request LR-779: refused").antonym == (
        "granted",
        "refused",
    )
    assert polarity("The reading was below the limit.", "reading above the limit").antonym
    assert "approved" in ANTONYMS["refused"] and "refused" in ANTONYMS["approved"]


def test_the_rescue_refuses_negated_antonymic_and_other_row_values() -> None:
    def signals(content: str) -> object:
        return support_signals(
            content, [LEAVE], LEAVE, LEAVE.split("\n")[2], [LEAVE], structured=True
        )

    ok = support_signals(
        "Request LR-779 was refused.",
        [LEAVE],
        LEAVE,
        "LR-779 | 2031-05-26 | 3 | refused",
        [LEAVE],
        structured=True,
    )
    assert ok.conflict is None and ok.rescue_ok
    antonym = signals("Request LR-779 was approved.")
    assert antonym.conflict == "antonym_conflict" and not antonym.rescue_ok  # type: ignore[attr-defined]
    negated = signals("Request LR-779 was not refused.")
    assert negated.conflict == "negation_conflict" and not negated.rescue_ok  # type: ignore[attr-defined]
    other = signals("Request LR-779 starts on 2031-07-07.")
    assert other.conflict == "value_from_other_row" and not other.rescue_ok  # type: ignore[attr-defined]


def test_a_conflict_makes_the_claim_contradicted_whatever_the_score() -> None:
    from pytest_provenai.attribution.families import Attribution

    common = {
        "index": 0,
        "text": "Request LR-779 was approved.",
        "byte_range": (0, 28),
        "factual": True,
        "attribution": Attribution("unavailable"),
        "route_source": "db-leave",
        "route_tool": "leave_db",
        "route_family": "database",
        "route_score": 0.9,
        "route_margin": 0.5,
        "route_status": "routed",
        "judgement": Judgement(0.99, {"supported": 0.99, "not_enough_evidence": 0.01}),
        "error": None,
        "threshold": 0.4,
        "missing": (),
        "rescue_ok": False,
    }
    assert decide(**common).verdict == "supported"  # type: ignore[arg-type]
    d = decide(**common, conflict="antonym_conflict")  # type: ignore[arg-type]
    assert d.verdict == "contradicted" and d.reasons == ("antonym_conflict",)
    d = decide(**common, unparsed=("31 February",))  # type: ignore[arg-type]
    assert d.as_dict()["unparsed_values"] == ["31 February"]


# -- eleventh round: shapes found in domains written by other authors ------------------------


@pytest.mark.parametrize(
    ("claim", "evidence", "present"),
    [
        ("It was promised for midday on 16 June.", "promised for: 2032-06-16 12:00", True),
        ("It was promised for midnight.", "promised for: 2032-06-16 12:00", False),
        ("The JPEG is 4032 by 3024 pixels.", "type: image/jpeg, 4032x3024", True),
        ("The photo is 4032x3024.", "dimensions: 4032 x 3024", True),
        ("The photo is 4032x3042.", "dimensions: 4032 x 3024", False),
    ],
)
def test_noon_and_sizes_are_read_by_meaning(claim: str, evidence: str, present: bool) -> None:
    values = read_values(claim)
    assert all(m.present for m in match_values(values, [evidence])) is present


def test_a_size_needs_a_unit_after_by_and_one_is_a_pronoun_after_a_determiner() -> None:
    assert [v.kind for v in read_values("Sales rose to 4 by 2031.")] == ["number", "date"]
    assert read_values("That one is led by Mr Conall Breedon.") == []
    assert [v.key for v in read_values("Only one coach is booked.")] == [1.0]


def test_a_clause_that_names_another_row_takes_that_rows_value() -> None:
    invoice = (
        '{"lines": [{"item": "Water charge", "amount": 9.50}, '
        '{"item": "Society membership", "amount": 5.00}, '
        '{"item": "Half plot rent", "amount": 34.00}]}'
    )
    both = "Water charge: £9.50; membership: £5."
    assert row_check(both, read_values(both), invoice).other_row == ()
    swapped = "The water charge is £5."
    assert row_check(swapped, read_values(swapped), invoice).other_row == ("£5",)
    # a clause naming the claim's own row keeps the other row's value a conflict
    mixed = "The water charge, unlike membership, is £5."
    assert row_check(mixed, read_values(mixed), invoice).other_row == ("£5",)


def test_one_negative_in_two_forms_and_null_fields_are_no_conflict() -> None:
    rule = "A tenancy whose rent is not paid within 40 days of the due date may be ended."
    said = polarity(
        "A tenancy can be ended if the rent is still unpaid 40 days after the due date.", rule
    )
    assert not said.negation and said.antonym is None
    record = "tenant: Jun-ho Castellane\ndiscount: None\nmethod: bank transfer\nstatus: paid"
    assert not polarity("Jun-ho Castellane's bill was settled by bank transfer.", record).negation
    assert polarity("Jun-ho Castellane's bill has a discount.", record).negation
    assert polarity("The invoice is unpaid.", "status: paid\ntotal: 40").antonym is not None


# -- twelfth round: value shapes found in four more domains by other authors ------------------
@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        # a comma inside a number is no clause end: "at 3,600 W" is no clock time
        ("The socket is capped at 3,600 W.", "max load: 3600 watts", [True]),
        ("Visitors rose from 12,900 to 14,300.", "visits: 12,900 then 14,300", [True, True]),
        # compound durations with spaced letters; durations written as a clock
        ("The advert ran 2 min 45 s.", "advert dur=00:02:45", [True]),
        ("She finished in 52 minutes 41 seconds.", "elapsed | 52:41", [True]),
        ("The file runs for just over three hours.", '"duration": "03:00:07"', [True]),
        ("The advert ran 2 min 45 s.", "advert dur=00:03:10", [False]),
        ("The wait was 11 hours.", "opened 11:00", [False]),  # a time of day is no duration
        # hedged times of day within a quarter of an hour
        ("The fuse blew just after 10 pm.", "fuse blew 22:05", [True]),
        ("The fuse blew just after 10 pm.", "fuse blew 22:40", [False]),
        # "from 4 till 6 pm": the first hour takes the half of the day of the second
        ("The show runs from 4 till 6 pm.", "slot: 16:00-18:00", [True, True]),
        # day/month without a year, a day alone after "on the", EXIF dates
        ("It has been shut since 13/08.", "closed_since: 2032-08-13", [True]),
        ("It has been shut since 14/08.", "closed_since: 2032-08-13", [False]),
        ("The pump was fixed on the 13th and tested.", "2032-08-13 07:40 pump fixed", [True]),
        ("The photo was taken on 13 Aug.", "Date/Time Original : 2032:08:13 09:26:51", [True]),
        ("The photo was taken on 12 Aug.", "Date/Time Original : 2032:08:13 09:26:51", [False]),
        # electric units; sizes "by" without a unit when both have 3-5 digits
        ("Hook-ups are 16 amp.", "hook-ups: 16 amp", [True]),
        ("The inverter gives 3.6 kW.", "inverter: 3600 W", [True]),
        ("The scan is 6000 by 4000.", "Image Size : 6000x4000", [True]),
        # comparisons stated in other words
        ("It rained 41 mm in less than three hours.", "41 mm in under three hours", [True, True]),
        ("Start more than 4 minutes late and you are out.", "later than 4 minutes", [True]),
        ("Start more than 5 minutes late and you are out.", "later than 4 minutes", [False]),
    ],
)
def test_twelfth_round_values_by_meaning(claim: str, evidence: str, expected: list[bool]) -> None:
    assert present(claim, evidence) == expected, [(v.text, v.kind) for v in read_values(claim)]


def test_an_ordinal_after_the_is_a_day_only_when_nothing_follows_it() -> None:
    assert [v.kind for v in read_values("She finished the 3rd lap on the 14th.")] == [
        "number",
        "date",
    ]
    assert [v.kind for v in read_values("Sales rose to 4000 by 2031.")] == ["number", "date"]


def test_a_caption_is_said_of_every_row_and_a_footer_line_is_a_record() -> None:
    results = (
        "Spring race 5 - Sun 2033-04-27 - start 11:05\n"
        "| pos | helm | class | elapsed |\n|---|---|---|---|\n"
        "| 1 | Orla Pike | Merlin | 52:41 |\n| 2 | Ivo Marsh | Solo | 59:40 |\n"
        "| 3 | Ada Quist | GP14 | 57:50 |\n"
        "entries 3 | finishers 3 | OOD Gwen Hale"
    )
    split = records(results)
    assert split is not None and split[-1].startswith("entries 3")

    def check(claim: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        found = row_check(claim, read_values(claim), results)
        return found.missing, found.other_row

    # the caption's race and date are said of Orla's row, not of another record
    assert check("Orla Pike won race 5 on 27 April 2033 in her Merlin.") == ((), ())
    # a word only the footer has makes the footer the claim's row
    assert check("Finishers: three") == ((), ())
    assert check("Finishers: two") == (("two",), ())
    # another row's value is still another row's
    assert check("Orla Pike finished in 59:40.")[1] == ("59:40",)


def test_a_zero_count_field_agrees_with_a_negated_claim() -> None:
    row = "bollard: EHU-C1\npitch: C2\nkwh_24h: 5.8\ntrips_24h: 0"
    assert not polarity("C2 used 5.8 kWh and never tripped.", row).negation
    assert not polarity("C2 used 5.8 kWh with no trips.", row).negation
    # the field's digits ("24h") need not be said; a negated claim against a count does
    assert polarity("C2 used 5.8 kWh and never tripped.", row.replace(": 0", ": 2")).negation


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        ("The quiz is on Thursday.", "quiz | Thu | 19:00", [True]),
        ("The quiz is on Thursday.", "quiz | Wed | 19:00", [False]),
        ("The shop opens on Tuesdays.", "hours: Mon-Fri 09:00-17:00", [True]),
        ("The shop opens on Sundays.", "hours: Mon-Fri 09:00-17:00", [False]),
        ("The race was on Sunday.", "Race 5 - 2033-04-24", [True]),  # a Sunday
        ("The race was on Monday.", "Race 5 - 2033-04-24", [False]),
        ("The bins go out on Friday.", "collection: weekly, weekdays", [True]),
    ],
)
def test_a_day_of_the_week_is_a_value(claim: str, evidence: str, expected: list[bool]) -> None:
    assert present(claim, evidence)[-len(expected) :] == expected


def test_a_bound_the_other_way_does_not_state_a_value() -> None:
    rules = "Speech content will make up no less than 25% of output."
    assert present("Speech must be no more than 25% of output.", rules) == [False]
    assert present("Speech must be at least 25% of output.", rules) == [True]


# -- thirteenth round: value shapes and rows found in three more other-author domains ---------
@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        # an ISO time written with Z straight after the minutes
        ("The pump tripped at 09:12Z.", "tripped_at: 2035-06-02T09:12Z", [True]),
        ("The pump tripped at 9:12 am UTC.", "tripped_at: 2035-06-02T09:12Z", [True]),
        ("The pump tripped at 09:21Z.", "tripped_at: 2035-06-02T09:12Z", [False]),
        # "~" hedges with no word boundary before it
        ("The log is ~2.1 MB.", "size: 2,064,210 bytes", [True]),
        ("The log is ~3.1 MB.", "size: 2,064,210 bytes", [False]),
        ("The crane moved at ~6 pm.", "moved 18:05", [True]),
        # a bound in the evidence the same way as the claim's
        ("Alarms fire above 80 dB.", "An alarm fires when noise exceeds 80 dB.", [True]),
        ("Alarms fire above 85 dB.", "An alarm fires when noise exceeds 80 dB.", [False]),
        # thousands written with k
        ("Visits fell from ~9.2k to 7.5k.", "visits: 9240 then 7500", [True, True]),
        ("Visits fell to 7.4k.", "visits: 9240 then 7500", [False]),
        # a count out of a total kept whole
        ("The check failed 1/4 probes.", "probe check: failed 1/4", [True]),
        ("The check failed 2/4 probes.", "probe check: failed 1/4", [False]),
        ("Two of the four probes failed.", "probe check: failed 2/4", [True, True]),
        # a version inside a longer code is that code's
        ("Release rel-2035.06.02-4 went out.", "rel-2035.06.02-3 deployed", [False]),
        ("Release rel-2035.06.02-3 went out.", "rel-2035.06.02-3 deployed", [True]),
        # days of the month as ordinal words; a spoken time with hyphens
        ("It is due on the twenty-third of May.", "due: 2035-05-23", [True]),
        ("It is due on the twenty-fourth of May.", "due: 2035-05-23", [False]),
        ("The ferry is at quarter-past-six.", "dep 06:15", [True]),
        # a count after a grouped number is no size ("41,237 x 502" is not 237 by 502)
        ("There were 41,237 x 502 errors.", "http_502_count: 41237", [True, False]),
    ],
)
def test_thirteenth_round_values_by_meaning(
    claim: str, evidence: str, expected: list[bool]
) -> None:
    assert present(claim, evidence) == expected, [(v.text, v.kind) for v in read_values(claim)]


HIVES_CSV = (
    "hive,apiary,queen_colour,temper,frames\n"
    "BK-3,Larkrise,yellow,calm,9\n"
    "BK-7,Larkrise,green,defensive,5\n"
    "BK-9,Whinmoor,white,calm,7\n"
    "(3 rows)"
)


def test_csv_is_read_row_by_row_and_prose_with_commas_is_not() -> None:
    rows = records(HIVES_CSV)
    assert rows is not None and rows[0].split("\n")[0] == "hive: BK-3" and rows[-1] == "(3 rows)"
    assert (
        records("The shop opened, as planned, on Monday.\nSales rose, then fell.\nFine, all told.")
        is None
    )
    check = row_check("BK-7 has 9 frames.", read_values("BK-7 has 9 frames."), HIVES_CSV)
    assert check.structured and check.other_row == ("9",)


@pytest.mark.parametrize(
    ("claim", "swapped"),
    [
        ("BK-7's queen is marked yellow.", ("yellow",)),  # BK-3's colour said of BK-7
        ("BK-9 is a defensive colony.", ("defensive",)),
        ("BK-7's queen is marked green and the colony is defensive.", ()),
        ("BK-7 is at Larkrise.", ()),  # every row's apiary word
        ("BK-3 and BK-9 are both calm.", ()),  # two rows named: a listing
        ("Two of the colonies are calm, one is defensive.", ()),  # counts rows
    ],
)
def test_a_cell_of_another_row_said_of_the_claims_row_is_swapped(
    claim: str, swapped: tuple[str, ...]
) -> None:
    assert row_check(claim, read_values(claim), HIVES_CSV).swapped == swapped


def test_a_totals_line_that_names_the_row_speaks_of_it() -> None:
    table = (
        "meter,site,read_at,reading_m3\n"
        "WM-4,North Yard,2035-01-01,300.0\nWM-4,North Yard,2035-02-01,341.5\n"
        "WM-9,South Yard,2035-01-01,120.0\nWM-9,South Yard,2035-02-01,150.2\n"
        "# used in January: WM-4 41.5 m³; WM-9 30.2 m³"
    )
    own = row_check("WM-4 used 41.5 m³ in January.", read_values("WM-4 used 41.5 m³"), table)
    assert not own.missing and not own.other_row
    swapped = row_check("WM-4 used 30.2 m³ in January.", read_values("WM-4 used 30.2 m³"), table)
    assert [v[:4] for v in swapped.other_row] == ["30.2"]  # the value as read ("30.2 m")


KILN_RECORD = "kiln: K-2\nstatus: active\nlocation: Bay 4\nalarm: tripped\nfirmware: 3.2.1"


@pytest.mark.parametrize(
    ("claim", "conflict"),
    [
        (
            "Kiln K-2 is listed as inactive.",
            "antonym_conflict",
        ),  # the status line, not the best chunk
        ("K-2's alarm has not tripped.", "negation_conflict"),  # a one-word field value negated
        ("K-2's alarm was never tripped.", "negation_conflict"),
        ("K-2's alarm has tripped.", None),
        ("Kiln K-2 is active in Bay 4.", None),
    ],
)
def test_a_one_record_source_is_read_whole_for_antonyms_and_negated_fields(
    claim: str, conflict: str | None
) -> None:
    best_chunk = KILN_RECORD.split("\n")[0]
    got = support_signals(
        claim, [KILN_RECORD], KILN_RECORD, best_chunk, [KILN_RECORD], structured=True
    )
    assert got.conflict == conflict


DEPLOY_LOG = (
    "[deploys] cluster=east-2 date=2035-06-02\n"
    "2035-06-02T08:01:10Z build api-7.4.0 started by r.okafor (ticket OPS-311)\n"
    "2035-06-02T08:20:44Z canary on node-3, node-5 passed 4/4 checks\n"
    "2035-06-02T09:12:05Z rollback api-7.3.9 started by m.lindqvist\n"
    "2035-06-02T09:15:30Z error rate back under 0.5%"
)


@pytest.mark.parametrize(
    ("claim", "other"),
    [
        ("The rollback at 09:12:05Z was started by r.okafor.", ("r.okafor",)),
        ("At 08:20:44Z the canary passed 3/4 checks.", ()),  # no other line has 3/4: missing
        ("Errors were back under 0.5% by 08:20:44Z.", ("0.5%",)),
        ("The rollback at 09:12:05Z was started by m.lindqvist.", ()),
        ("On 2 June the rollback started at 09:12:05Z.", ()),  # the header's date is every line's
        # a summary of two lines gives two times: not checked here
        ("The build started at 08:01:10Z and was rolled back at 09:12:05Z by m.lindqvist.", ()),
    ],
)
def test_a_claim_about_one_log_line_takes_nothing_from_another_line(
    claim: str, other: tuple[str, ...]
) -> None:
    assert log_other_line(claim, read_values(claim), DEPLOY_LOG) == other


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        # months in lower case beside a day ("eta 14 jun", "lodged 2 oct")
        ("eta 14 jun per the booking.", "eta: 2035-06-14", [True]),
        ("eta 15 jun per the booking.", "eta: 2035-06-14", [False]),
        ("lodged it oct 2, cleared 4 oct", "lodged: 2035-10-02\ncleared: 2035-10-04", [True, True]),
        ("due back 9 may.", "due: 2035-05-09", [True]),
        # "may" after a number is the verb unless a year or punctuation follows
        ("Bay 3 may well have room.", "bay: 3", [True]),
        # a number that is the last group of a code names it
        ("7719 cleared customs today.", "entry: CE-2035-7719\nstatus: cleared", [True]),
        ("7718 cleared customs today.", "entry: CE-2035-7719\nstatus: cleared", [False]),
        ("We logged 404 of them.", "http_404_count: 12", [False]),
    ],
)
def test_fourteenth_round_values_by_meaning(
    claim: str, evidence: str, expected: list[bool]
) -> None:
    assert present(claim, evidence) == expected, [(v.text, v.kind) for v in read_values(claim)]


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        # "has" after a number is the verb, not hectares; "double-" opens a word
        ("Only the 40 has any left.", "sprocket: 40 teeth\nleft: 3", [True]),
        ("Worth double-checking the seals.", "seals: 4", []),
        # hedges that bound a number within a tenth; "grand" is a thousand
        ("A bit over 61,000 visits in total.", "total_visits: 61,480", [True]),
        ("Just shy of 70 kg on the scale.", "weight_kg: 68.9", [True]),
        ("The deposit was twenty grand.", "deposit: 20,000 GBP", [True]),
        # a unit written on a field's name, before or after "_"; beside another mass
        ("A 96 kHz, 16-bit take.", '{"rate_hz": 96000, "bit_depth": 16}', [True, True]),
        ("A 44.1 kHz take.", '{"rate_hz": 96000, "bit_depth": 16}', [False]),
        ("Rex weighs 28.2 kg.", "weight_kg: 28.2\ndose: 0.5 mg/kg", [True]),
        ("Rex weighs 22.8 kg.", "weight_kg: 28.2\ndose: 0.5 mg/kg", [False]),
        # minutes left unsaid after "an hour and"
        ("It runs an hour and fifty.", "runtime_min: 110", [True]),
        ("It runs an hour and forty.", "runtime_min: 110", [False]),
        # a time written h.mm, a number closing a code, a section's abbreviation
        ("She'll call round 8.15 tomorrow.", "visit: about 8:15", [True]),
        ("She'll call round 8.45 tomorrow.", "visit: about 8:15", [False]),
        ("Scanned in CT bay 3.", "station: CT-BAY-3", [True]),
        ("Scanned in CT bay 4.", "station: CT-BAY-3", [False]),
        ("Store cold (handbook s4.2).", "Section 4.2: storage", [True]),
        ("Store cold (handbook s4.3).", "Section 4.2: storage", [False]),
        # two sizes against width and height fields
        ("The scan is 2480 by 3508 pixels.", "PageWidth: 2480\nPageHeight: 3508", [True]),
        ("The scan is 3508 by 2480 pixels.", "PageWidth: 2480\nPageHeight: 3508", [False]),
    ],
)
def test_fifteenth_round_values_by_meaning(claim: str, evidence: str, expected: list[bool]) -> None:
    assert present(claim, evidence) == expected, [(v.text, v.kind) for v in read_values(claim)]


def test_a_day_of_the_month_before_a_dash_is_a_date() -> None:
    found = [(v.kind, v.key) for v in read_values("Sold out by noon on the 3rd — wow.")]
    assert ("date", (None, None, 3)) in found


def test_a_totals_line_is_read_with_the_row_named_by_two_values() -> None:
    table = "date | visits | late\n2035-02-01 | 40 | 2\n2035-02-02 | 55 | 0\ndays: 2; days late: 1"
    # the claim's words are the totals line's; its values name the 1 February row
    claim = "Lateness on one of the two days, with 40 visits on 1 February."
    assert row_check(claim, read_values(claim), table).missing == ()
    wrong = "Lateness on one of the two days, with 55 visits on 1 February."
    assert row_check(wrong, read_values(wrong), table).other_row == ("55",)


def test_a_clause_that_names_another_log_line_speaks_of_that_line() -> None:
    log = (
        "2035-05-01 06:10  Dock 2  unloaded\n2035-05-01 09:45  Dock 2  sealed, van HX-77\n"
        "2035-05-02 07:30  Depot   arrived"
    )
    both = "unloaded at 06:10 on 1 May, sealed the same day into van HX-77."
    assert log_other_line(both, read_values(both), log) == ()
    # one clause: the van is said of the 06:10 line, which another line holds
    one = "unloaded at 06:10 on 1 May into van HX-77."
    assert log_other_line(one, read_values(one), log) == ("HX-77",)


@pytest.mark.parametrize(
    ("claim", "unit", "negation"),
    [
        # a "not" in another sentence of the chunk does not negate the claim's sentence
        (
            "The dose is 2 mg/kg once daily by mouth.",
            "Dose: 2 mg/kg once daily by mouth. Courses may not run past 10 days.",
            False,
        ),
        (
            "Courses may run past 10 days.",
            "Dose: 2 mg/kg once daily by mouth. Courses may not run past 10 days.",
            True,
        ),
        ("Parked w/o a permit for zone 4.", "parked without a valid permit for zone 4", False),
        (
            "Permit P-9 issued 2 May | expires 2 June.",
            "Permit P-9 | Issued 2 May | Audit: not yet done",
            False,
        ),
    ],
)
def test_negation_is_read_in_the_claims_own_sentence(claim: str, unit: str, negation: bool) -> None:
    assert polarity(claim, unit).negation is negation


@pytest.mark.parametrize(
    ("claim", "record", "flag"),
    [
        # a field the claim names, given another person's name or another colour
        ("Keeper Aldo Brisk, Plot 9.", "plot: 9\nkeeper: Mina Castell", "keeper: Mina Castell"),
        ("The plot keeper is Ms Castell.", "plot: 9\nkeeper: Mina Castell", None),
        (
            "Plot 9's gate is painted green.",
            "plot: 9\ngate painted: 2033 (red)",
            "gate painted: 2033 (red)",
        ),
        ("Plot 9's gate is painted red.", "plot: 9\ngate painted: 2033 (red)", None),
        # a snake_case yes/no field; "-al" nouns stem with their verbs
        ("No lease renewal on it.", "plot: 9\nlease_renewed: true", "lease_renewed: true"),
        ("The lease was renewed.", "plot: 9\nlease_renewed: true", None),
    ],
)
def test_a_named_field_given_another_value_is_a_conflict(
    claim: str, record: str, flag: str | None
) -> None:
    assert polarity(claim, record).flag == flag


def test_a_numbered_list_item_holds_no_value() -> None:
    rules = "1. Entry. Free before 10:00.\n2. Guests. Up to three per member.\n3. Pets. None."
    assert present("Members may bring up to 3 guests.", rules) == [True]
    assert present("Members may bring up to 2 guests.", rules) == [False]


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        # a value read after a code is not hidden by it ("…-04 serves four hundred and …")
        ("db-node-04 serves three hundred and six users.", "db-node-04 users: 306", [True, True]),
        ("db-node-04 serves three hundred and nine users.", "db-node-04 users: 306", [True, False]),
        # a unit cut short where a code follows it ("11 kn G18" read as 11 knots)
        ("It blew 11 knots at noon.", "12:00 WIND S 11 kn G18", [True, True]),
        # a unit with "/" on it; a word after a unit is not a second unit
        ("Gusts of 22 m/s on the col.", "gust_ms: 22", [True]),
        ("A wind of twenty km/h.", "wind: 20 km/h", [True]),
        ("A wind of twenty km/h.", "wind: 30 km/h", [False]),
        ("18 cm in 12 hrs at the top.", "fresh: 18 cm", [True, False]),
        # a version named in words against "v" and its number; "1080p" is a frame height
        ("Signed on form version 2.4.", "form: CF v2.4", [True]),
        ("Signed on form version 2.5.", "form: CF v2.4", [False]),
        ("Shot in 720p.", "frame_size: 1280x720", [True]),
        ("Shot in 1080p.", "frame_size: 1280x720", [False]),
        ("Final table: 9 pts.", "team | points\nOwls | 9", [True]),
        # durations of three units, "hours ten", a clock's seconds left unsaid
        ("Finished in 4h 02m 09s.", "chip: 4:02:09", [True]),
        ("Finished in 4h 02m 19s.", "chip: 4:02:09", [False]),
        ("So four hours twelve, near enough.", "chip: 4:12:09", [True]),
        ("So four hours thirteen, near enough.", "chip: 4:12:09", [False]),
        # month/year; four-digit times of day
        ("Use by June 2035.", "use_by: 06/2035", [True]),
        ("Use by July 2035.", "use_by: 06/2035", [False]),
        ("Gate shut at 0745, per the log.", "07:45 gate shut", [True]),
        ("Gate shut 1930 hrs.", "19:30 gate shut", [True]),
        ("Gate shut 1930 hrs.", "19:45 gate shut", [False]),
        # a number named a version is compared with versions only
        ("Per handbook rev 6, crews rest 6 hours.", "Handbook (Rev. 6): rest 6 h", [True, True]),
        (
            "Per handbook rev 7, crews rest 6 hours.",
            "Handbook (Rev. 6): rest 6 h, 7 crews",
            [False, True],
        ),
        # "exceed" bounds its number like "exceeds"
        ("Close the pool above 30 °C.", "close when water temperatures exceed 30 °C", [True]),
        # a pace is a time per distance: the distance unit counts
        ("Her pace was 4:48 per km.", "pace: 4:48/km", [True]),
        ("Her pace was 4:48 per mile.", "pace: 4:48/km", [False]),
        ("Roughly 6 min 10 sec a km.", "pace: 6:10/km", [True]),
        ("Pace 5:12/km.", "name | pace_min_km\nAda | 5:12", [True]),
        # a speed unit and a period written on a field's name
        ("Gusts of 20 m/s.", '{"gust_kmh": 72}', [True]),
        ("Gusts of 21 m/s.", '{"gust_kmh": 72}', [False]),
        ("Rain: 12 mm in 48 hours.", '{"rain_48h_mm": 12}', [True, True]),
        ("Rain: 12 mm in 24 hours.", '{"rain_48h_mm": 12}', [True, False]),
        ("Pace 5:12 a mile.", "name | pace_min_km\nAda | 5:12", [False]),
        # "one" after an article and its modifiers is a pronoun
        (
            "A stop at 10:02, then a longer one at 11:40.",
            "10:02 stop\n11:40 stop",
            [True, True],
        ),
    ],
)
def test_sixteenth_round_values_by_meaning(claim: str, evidence: str, expected: list[bool]) -> None:
    assert present(claim, evidence) == expected, [(v.text, v.kind) for v in read_values(claim)]


def test_a_bare_count_after_has_is_counted_and_each_use_of_a_word_counts_alone() -> None:
    jobs = "ref | mechanic\nJ-1 | Ana Kerr\nJ-2 | Ana Kerr\nJ-3 | Bo Lund\nJ-4 | Ana Kerr"
    right = "Ana Kerr has three of them and Bo Lund has one."
    assert set(counted(right, read_values(right), jobs)) == {"three", "one"}
    # the same word borne out once does not excuse it where the rows say otherwise
    wrong = "Ana Kerr has three of them and Bo Lund has three."
    assert counted(wrong, read_values(wrong), jobs) == ()


def test_a_count_of_rows_named_by_an_identifier_or_of_the_whole_table() -> None:
    ships = (
        "ship | lot | dest\nS-1 | L-7A | Ayr\nS-2 | L-7B | Oban\nS-3 | L-7A | Troon\n"
        "S-4 | L-7C | Ayr"
    )
    by_lot = "Lot L-7A went out in two consignments."
    assert counted(by_lot, read_values(by_lot), ships) == ("two",)
    assert (
        counted(
            "Lot L-7A went out in three consignments.",
            read_values("Lot L-7A went out in three consignments."),
            ships,
        )
        == ()
    )
    assert counted(
        "Four consignments so far.", read_values("Four consignments so far."), ships
    ) == ("Four",)
    # a word that picks some rows out: the total is not their count
    assert (
        counted("Four consignments to Ayr.", read_values("Four consignments to Ayr."), ships) == ()
    )


def test_a_clause_after_while_names_its_own_row_and_a_change_starts_in_an_earlier_row() -> None:
    table = "code | date | status\nK-1 | 2035-03-01 | gala\nK-2 | 2035-03-02 | on sale"
    both = "K-1 is the gala while K-2 is on sale"
    assert row_check(both, read_values(both), table).other_row == ()
    readings = "day | level\n1 | 4.8\n3 | 3.9\n5 | 3.1"
    down = "By day 3 the level had fallen from 4.8 to 3.9."
    assert row_check(down, read_values(down), readings).missing == ()
    # a value it changed from must come before the claim's row
    later = "By day 3 the level had fallen from 3.1 to 3.9."
    assert row_check(later, read_values(later), readings).other_row == ("3.1",)


def test_a_total_is_a_columns_sum_over_all_rows_or_the_rows_a_word_picks() -> None:
    shows = (
        "show | format | local | hours\nDawn | live | yes | 10\nNoon | live | yes | 5\n"
        "Jazz | recorded | yes | 2\nNight | automated | no | 20"
    )
    for claim, borne in [
        ("Live: 2 shows, 15 hours between them.", {"2", "15 hours"}),
        ("Live: 2 shows, 16 hours between them.", {"2"}),
        ("The local shows come to 17 hours in total.", {"17 hours"}),
        ("The local shows come to 37 hours in total.", set()),
        ("37 hours in all across the schedule.", {"37 hours"}),
        # no word of totalling: a sum is not what the claim says
        ("Dawn runs 37 hours.", set()),
    ]:
        assert set(counted(claim, read_values(claim), shows)) == borne, claim


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        # an hour and its minutes either side of an "h"
        ("The scope was parked at 18h40 UT.", "parked: 2035-02-11 18:40 UT", [True]),
        ("The scope was parked at 18h50 UT.", "parked: 2035-02-11 18:40 UT", [False]),
        # a unit in a column's name, converted, each side as rounded where it is written
        ("The sensor sits at 79.8 K.", "sensor | temp_c\nS-3 | -193.4", [True]),
        ("The sensor sits at 85.0 K.", "sensor | temp_c\nS-3 | -193.4", [False]),
        ("Gusts reached 27 km/h.", '{"gust_speed_ms": 7.5}', [True]),
        ("Gusts reached 35 km/h.", '{"gust_speed_ms": 7.5}', [False]),
        ("Median latency: 4.87 s.", '{"median_ms": 4870}', [True]),
        ("Median latency: 5.87 s.", '{"median_ms": 4870}', [False]),
        # a count of a duration is no pair of sizes
        ("Four takes of two minutes each.", "takes: 4 x 120 s", [True, True]),
        # an hour letter after a space in a compound duration
        ("Used so far: 7 h 15 min.", "team,hours_used\nB,7.25", [True]),
        ("Used so far: 7 h 45 min.", "team,hours_used\nB,7.25", [False]),
        # a number's plural ("502s") against the number; another number stays missing
        ("The proxy logged 502s all morning.", "status (502) count=118", [True]),
        ("The proxy logged 503s all morning.", "status (502) count=118", [False]),
    ],
)
def test_eighteenth_round_values_by_meaning(
    claim: str, evidence: str, expected: list[bool]
) -> None:
    assert present(claim, evidence) == expected, claim


def test_unless_and_until_are_no_negated_less_and_til() -> None:
    rule = "Appeals must be lodged not less than 10 days before the hearing, unless agreed."
    assert not polarity(
        "Appeals must be lodged not less than ten days before the hearing.", rule
    ).negation
    assert polarity("Appeals must be lodged less than ten days before the hearing.", rule).negation
    # the two negative forms still meet: "unpaid" is "not paid"
    assert not polarity("The invoice was not paid.", "invoice INV-4: unpaid").negation


def test_a_version_in_the_attribution_stays_a_value_to_check() -> None:
    text = "Shipping policy rev 5 puts the refund window at 14 days."
    claim = claim_at(text, (0, len(text.encode())), {"get_policy": "document"})
    assert claim.attribution.family == "document"
    assert "5" in claim.values and "14" in claim.values


def test_nineteenth_round_negations_that_say_nothing_against_the_evidence() -> None:
    pumps = "pump | status | last_service\nP-4 | running | 2031-05-02\nP-7 | stopped | 2030-11-19"
    row = "pump: P-4\nstatus: running\nlast_service: 2031-05-02"
    # "not … since <a time>" says when it last happened
    assert not polarity("Pump P-4 has not been serviced since 2031-05-02.", row).negation
    assert polarity("Pump P-4 was not serviced on 2031-05-02.", row).negation
    # a negation over words the evidence never speaks of negates nothing it says
    assert not polarity("P-4 is running, which is not a worry.", row).negation
    assert polarity("P-4 is not running.", row).negation
    assert pumps  # the table the row is read from
    # ... and the evidence's own negation over words the claim never says
    rule = "Parcels not signed for within 7 days go back to the depot. Lockers open at 06:00."
    assert not polarity("Lockers open at six in the morning.", rule).negation
    assert polarity("Parcels signed for within 7 days go back to the depot.", rule).negation


def test_nineteenth_round_antonyms_against_a_zero_field_and_a_like_word() -> None:
    member = "member: M-12\nfee_gbp: 35\nfee_paid_gbp: 0"
    # a field named "paid" that holds 0 says "unpaid"
    assert polarity("M-12's £35 fee is still unpaid.", member).antonym is None
    assert polarity("M-12's £35 fee is still unpaid.", member.replace(": 0", ": 35")).antonym
    # the unit says the claim's own word in another form: no opposite, whatever else it says
    loan = "loan: L-88\nstatus: outstanding\nnotes: paid in part on 2032-03-01"
    assert polarity("Loan L-88 is overdue.", loan).antonym is None
    assert polarity("Loan L-88 is overdue.", "loan: L-88\nstatus: paid").antonym == (
        "overdue",
        "paid",
    )


def test_nineteenth_round_rows_said_of_every_row() -> None:
    order = (
        '{"order": "ORD-7731", "customer": "Halvard Stene", "lines": '
        '[{"sku": "KT-2", "qty": 3}, {"sku": "KT-9", "qty": 1}]}'
    )

    def check(claim: str, source: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        found = row_check(claim, read_values(claim), source)
        assert found.structured
        return found.missing, found.other_row

    # a JSON object's own fields around its list are said of each of its records
    assert check("Order ORD-7731 has 3 of KT-2.", order) == ((), ())
    assert check("Order ORD-7731 has 3 of KT-9.", order) == (("3",), ("3",))
    # a key: value document's title is said of every record under it
    rules = (
        "RIVERSIDE ALLOTMENTS - RULE BOOK EDITION 6\n\n"
        "Water: taps are off from 1 November to 1 March.\n\n"
        "Bonfires: not permitted between April and September."
    )
    assert check("Edition 6 turns the taps off from 1 November.", rules) == ((), ())
    assert check("Edition 7 turns the taps off from 1 November.", rules)[0] == ("7",)
    # a total the claim names by the totals line's own label is the table's
    heat = (
        "lane | swimmer | time\n1 | Ada Lund | 31.2\n2 | Ben Ruiz | 33.0\n3 | Cas Mbeki | 32.1\n"
        "entrants 3 | heats 2"
    )
    assert check("Ada Lund swam 31.2 against 3 entrants.", heat) == ((), ())
    # ... not a value beside another word, nor a total ("total loaves: 135")
    assert check("Ada Lund swam 31.2 in lane 3.", heat) == (("3",), ("3",))


def test_nineteenth_round_clauses_that_name_their_own_rows() -> None:
    book = (
        "time | patient | dentist | treatment\n09:15 | Lin Wei | Dr Okoro | filling\n"
        "11:00 | Sam Hart | Dr Okoro | extraction\n14:30 | Ama Boateng | Dr Vale | check-up"
    )
    both = "Dr Okoro sees Lin Wei at 09:15 for a filling and Sam Hart at 11:00 for an extraction."
    found = row_check(both, read_values(both), book)
    assert not found.missing and not found.other_row  # the dentist both rows share names neither
    swapped = "Dr Okoro sees Lin Wei at 11:00 for a filling."
    assert row_check(swapped, read_values(swapped), book).other_row == ("11:00",)
    # identifiers name a clause's row too
    faults = "unit | bay | faults\nFE-11 | B2 | 3\nFE-14 | B5 | 1\nFE-20 | B7 | 0"
    listed = "3 on FE-11 (B2), 1 on FE-14 (B5)"
    found = row_check(listed, read_values(listed), faults)
    assert not found.missing and not found.other_row


def test_nineteenth_round_a_count_the_rows_bear_out_is_no_value_from_another_row() -> None:
    vans = (
        "plate | model | keeper\nVX12 ABC | Transit | Mira Holt\nVX19 DEF | Vivaro | Mira Holt\n"
        "LK70 GHJ | Ducato | Oren Pike"
    )
    claim = "2 vans are kept by Mira Holt: VX12 ABC and VX19 DEF."
    found = support_signals(claim, [vans], vans, vans, [vans], structured=True)
    assert found.conflict is None and not found.row.other_row
    # a day of the month before a verb is a date, not a count
    assert [v.kind for v in read_values("The auction on the 9th starts at 10:00.")] == [
        "date",
        "time",
    ]


def test_nineteenth_round_a_minus_sign_and_a_bare_c_or_f() -> None:
    # a minus sign is part of the value: -5 is no 5, either way round
    assert present("The low was -5 °C.", "overnight low: 5 °C") == [False]
    assert present("The low was 5 °C.", "overnight low: -5 °C") == [False]
    assert present("The low was -5 °C.", "overnight low: -5 °C") == [True]
    freezer = "FZ-3 | 06:00 | 18.5"
    assert present("Freezer FZ-3 read -18.5 at 06:00.", freezer) == [True, False, True]
    # ... and a dash between two numbers is a range, not a sign
    assert present("Dose 6-8 mg.", "dose: 6-8 mg") == [True, True]
    # a capital C or F alone after a number is degrees
    assert present("The kiln peaked at 1,220 C.", "kiln_peak_c: 1220") == [True]
    assert present("Core temp -40.0 F.", "core_temp_c: -40.0") == [True]  # the same point
    assert present("Core temp -20.0 F.", "core_temp_c: -20.0") == [False]


def test_twentieth_round_a_value_of_one_record_said_of_its_sibling() -> None:
    # two records of one lookup (a household's two boiler visits): a claim that names one
    # visit by what only that record has and gives it the other visit's value
    first = (
        "visit: BV-2041\nhousehold: Orrin Castellane\nappliance: Vellmark Combi 24\n"
        "engineer: Sunniva Pratt\ncharge: 96.00 EUR\nstatus: part ordered"
    )
    second = (
        "visit: BV-2048\nhousehold: Orrin Castellane\nappliance: Dorrow wall heater (hall)\n"
        "engineer: Sunniva Pratt\ncharge: 35.00 EUR\nstatus: fixed"
    )

    def signals(claim: str) -> tuple[str | None, tuple[str, ...]]:
        found = support_signals(
            claim, [first], first, first, [first, second], structured=True, siblings=[second]
        )
        return found.conflict, found.row.other_row

    # the wall heater is the second visit's; 96.00 EUR is the first's charge
    assert signals("The wall heater visit was charged at 96.00 EUR.") == (
        "value_from_other_row",
        ("96.00 EUR",),
    )
    # the first visit's own appliance, or words both records share, name no other record
    assert signals("The Combi 24 visit was charged at 96.00 EUR.") == (None, ())
    assert signals("Orrin Castellane's visit by Sunniva Pratt came to 96.00 EUR.") == (None, ())
    # without a sibling of the same tool there is nothing to compare
    alone = support_signals(
        "The wall heater visit was charged at 96.00 EUR.",
        [first],
        first,
        first,
        [first],
        structured=True,
    )
    assert alone.conflict is None


def test_twentieth_round_a_value_closes_a_negations_scope() -> None:
    rule = "Kayaks not returned within 2 hours of the hire slip incur a late fee of 8 EUR per hour."
    # the rule negates returning within two hours; "the hire slip" is outside its scope
    claim = "Kayaks kept more than two hours past the hire slip are charged 8 EUR an hour."
    assert not polarity(claim, rule).negation
    # ... a claim that speaks of returning them within the two hours still meets it
    assert polarity("Kayaks returned within 2 hours are charged a late fee.", rule).negation
    # a scope of values alone still negates them
    assert polarity("The hire is not 2 hours.", "hire: 2 hours").negation


def test_twentieth_round_an_identifier_the_call_asked_for() -> None:
    rows = "day | kwh | stop\n2040-01-05 | 61.2 | none\n2040-01-06 | 12.5 | 06:10"
    asked = "sql: SELECT day, kwh, stop FROM daily WHERE pump = 'PS-14'"

    def missing(claim: str, source: str = rows, asked: str = asked) -> tuple[str, ...]:
        found = support_signals(
            claim, [source], source, source, [source], structured=True, asked=asked
        )
        return (*found.values.missing, *found.names_missing)

    # the rows of a query for PS-14 are PS-14's, though no row repeats it
    assert missing("PS-14 used 12.5 kWh on 6 January 2040.") == ()
    # ... not another pump's, nor PS-14's when the call asked for nothing
    assert "PS-15" in missing("PS-15 used 12.5 kWh on 6 January 2040.")
    assert "PS-14" in missing("PS-14 used 12.5 kWh on 6 January 2040.", asked="")
    # an output that states its identifiers settles them by its rows
    listed = "pump | kwh\nPS-14 | 61.2\nPS-15 | 12.5"
    found = support_signals(
        "PS-14 used 12.5 kWh.",
        [listed],
        listed,
        listed,
        [listed],
        structured=True,
        asked="sql: SELECT * FROM daily WHERE pump IN ('PS-14')",
    )
    assert found.conflict == "value_from_other_row"


def test_twentieth_round_a_count_of_which_the_rows_bear_out() -> None:
    kit = "item | state\nrope | ok\nharness | ok\nhelmet | worn\ncarabiner | ok"
    assert counted(
        "Four items, three of which are ok.", read_values("Four items, three of which are ok."), kit
    ) == ("Four", "three")
    assert counted(
        "Four items, two of which are ok.", read_values("Four items, two of which are ok."), kit
    ) == ("Four",)


def test_twentieth_round_a_value_from_another_sentence_of_prose() -> None:
    guide = (
        "Members may borrow up to three tools per week from the shed. "
        "The shed opens at 09:00 on Saturdays. "
        "He was first elected treasurer in 2031, after the old shed burned down. "
        "4 volunteers run the Saturday rota."
    )

    def other(claim: str) -> tuple[str, ...]:
        return prose_other_sentence(claim, read_values(claim), chunks(guide))

    # "4" is in the guide, but the sentence about borrowing tools says three
    assert other("Members can borrow up to 4 tools a week from the shed.") == ("4",)
    assert other("Members can borrow up to three tools a week from the shed.") == ()
    # a sentence about its subject by a pronoun is found by its predicate, not the name
    assert other("Ansel Marr was first elected treasurer in 2031.") == ()
    # a number inside a name, and a clause that joins two sentences, are left alone
    assert other("Shed 4 opens at 09:00 on Saturdays.") == ()
    assert other("The shed opens at 09:00 with 4 volunteers on the Saturday rota.") == ()
    # a chatty clause that speaks of no one sentence is left alone
    assert other("Honestly, what a lovely bunch, 4 of them and such a cheerful team!") == ()


def test_twentieth_round_a_share_in_words() -> None:
    assert present("At least three quarters of every plot.", "At least 75% of every plot") == [True]
    assert present("Two thirds of members voted.", "67% of members voted") == [True]
    assert present("Two thirds of members voted.", "60% of members voted") == [False]
    # a quarter is no mass of 28 lb, and four quarters no share
    assert read_values("three quarters")[0].key[1] == "[percent]"
    assert read_values("four quarters of growth")[0].key[1] != "[percent]"


def test_twentieth_round_strengthening_against_easing() -> None:
    outlook = "Swell of 2 m along the Brantholm coast until noon; easing through the evening."
    assert polarity("The swell is strengthening through the evening.", outlook).antonym
    assert polarity("The swell eases in the evening.", outlook).antonym is None
    assert polarity("Her cough has worsened.", "cough improved since Tuesday").antonym


def test_twenty_first_round_a_version_field() -> None:
    fees = '{"schedule": "civil fees", "version": "2034.1", "effective_from": "2034-01-02"}'
    claim = "The schedule in force is version 2034.1."
    assert [(m.present, m.conflicting) for m in match_values(read_values(claim), fees)] == [
        (True, False)
    ]
    wrong = "The schedule in force is version 2034.2."
    assert [(m.present, m.conflicting) for m in match_values(read_values(wrong), fees)] == [
        (False, True)
    ]
    assert present("It runs firmware version 4.1.1.", "firmware_version: 4.1.1") == [True]


def test_twenty_first_round_cubic_and_square_metres() -> None:
    (volume,) = read_values("It used 58.4 m³.")
    assert volume.key[1] == "[length] ** 3"
    assert present("It used 58.4 m³.", "ML-2 58.4 m³") == [True]
    assert present("It used 58.4 m.", "ML-2 58.4 m³") == [False]
    assert present("The hall is 120 m².", "hall: 120 square metres") == [True]


def test_twenty_first_round_a_duration_between_two_fields() -> None:
    sailing = "departs: 2031-06-14 07:15\narrives: 2031-06-14 08:40\ncapacity: 42"
    assert present("The crossing takes an hour and 25 minutes.", sailing) == [True]
    assert present("The crossing takes 85 minutes.", sailing) == [True]
    assert present("The crossing takes an hour and 35 minutes.", sailing) == [False]
    ringing = "ringed: 2033-09-02\nretrapped: 2033-09-11"
    assert present("Retrapped nine days after ringing.", ringing) == [True]
    assert present("Retrapped ten days after ringing.", ringing) == [False]
    # only consecutive moments: 07:00 to 12:00 skips the 09:30 between them
    log = "07:00 gate open\n09:30 first van\n12:00 gate shut"
    assert present("The gate was open for 5 hours.", log) == [False]
    assert present("The first van came 2.5 hours after the gate opened.", log) == [True]


def test_twenty_first_round_a_year_in_two_digits_and_a_day_after_its_weekday() -> None:
    assert [v.key for v in read_values("in since '94")] == [(1994, None, None)]
    assert [v.key for v in read_values("good thru end of March '37.")] == [(2037, 3, None)]
    assert present("good thru end of March '37.", "expires: 2037-03-31") == [True]
    assert present("good thru end of March '38.", "expires: 2037-03-31") == [False]
    # "the '80s" is no year of its own, and a quotation is no year
    assert all(v.kind != "date" for v in read_values("it said '12 bins' twice"))
    back = "return: 2037-07-16 09:30"
    assert present("Back Weds 16th, 09:30.", back) == [True, True]
    assert present("Back Sat 19th by 09:30.", back) == [False, True]
    assert [v.key for v in read_values("shut until Wednesday the 16th.")][-1] == (None, None, 16)
    # an ordinal after no weekday stays a rank
    assert [v.kind for v in read_values("She finished 3rd on Sunday.")] == ["number", "weekday"]


def test_twenty_first_round_a_month_alone_a_blank_last_cell_and_a_count_word_in_prose() -> None:
    faq = "From 6 October 2031 bins go three-weekly. Your calendar will be posted in September."
    month = [(m.present, m.conflicting) for m in match_values(read_values("in August"), faq)]
    assert month == [(False, True)]
    assert present("It will be posted to you in September.", faq) == [True]
    assert [v.key for v in read_values("since the 8th of July")] == [(None, 7, 8)]
    # "May" is a month only after a word that dates it
    assert [v.text for v in read_values("You may book by the end of May.")] == ["May"]
    # a piped row whose last cell is empty is a row of its table, not a new header
    calendar = (
        "date | day | bins | notes\n2031-06-05 | Thu | black |\n2031-06-12 | Thu | blue |\n"
        "2031-06-19 | Thu | black | crew change"
    )
    rows = records(calendar)
    assert rows is not None and rows[1] == "date: 2031-06-12\nday: Thu\nbins: blue\nnotes: "
    swapped = row_check(
        "The black bin goes on 12 June.", read_values("The black bin goes on 12 June."), calendar
    )
    assert swapped.other_row == ("12 June",)
    # in prose a count in words is a value like any other
    guide = (
        "3.1 Book at least 24 hours ahead. 3.2 Every boat must have at least two crew able to "
        "work the locks. 3.3 Part 3 of the guide covers locks."
    )
    claim = "The guide wants at least three crew on every boat who can work the locks."
    assert prose_other_sentence(claim, read_values(claim), chunks(guide)) == ("three",)


def test_twenty_second_round_an_amount_ends_at_its_number() -> None:
    # the words after an amount that is no rate are not its unit
    reads = [v.text for v in read_values("The rooms came to £1,210 between them.")]
    assert reads == ["£1,210"]
    assert [v.text for v in read_values("A rate of £4 a kilo.")] == ["£4 a kilo"]
    # British "half 8 start" is 08:30
    assert [v.key for v in read_values("Booked Thursday, half 8 start.")] == [3, 8 * 60 + 30]


def test_twenty_second_round_a_count_of_a_yes_no_column() -> None:
    crew = (
        "id | name | grade | first_aid | boat_driver\n"
        "C-1 | Ama | lead | yes | yes\nC-2 | Bo | full | yes | no\n"
        "C-3 | Cy | full | no | no\nC-4 | Di | trainee | yes | no"
    )

    def count(claim: str) -> tuple[str, ...]:
        return counted(claim, read_values(claim), crew)

    assert count("Three of them hold the first aid certificate.") == ("Three",)
    assert count("Two of them hold the first aid certificate.") == ()
    assert count("Two of them are not first aid holders.") == ()  # one "no" row
    assert count("Three of 'em can't drive the boat.") == ()  # "driver" is not "drive"
    assert count("Three of 'em are not boat drivers.") == ("Three",)


def test_twenty_second_round_a_coordinate_in_another_notation() -> None:
    exif = "GPS Latitude: 50 deg 7' 12.30\" N\nGPS Longitude: 5 deg 32' 6.10\" W"
    said = "Shot at 50°07'12.30\"N, 5°32'06.10\"W."
    assert [(m.present, m.conflicting) for m in match_values(read_values(said), exif)] == [
        (True, False),
        (True, False),
    ]
    # decimal degrees to four places name the same place; a wrong one conflicts
    near = match_values(read_values("Shot at 50.1201 N, 5.5350 W."), exif)
    assert [(m.present, m.conflicting) for m in near] == [(True, False), (True, False)]
    far = match_values(read_values("Shot at 50.1201 N, 5.5450 W."), exif)
    assert [(m.present, m.conflicting) for m in far] == [(True, False), (False, True)]
    # a double quote after a digit marks seconds, not a quotation
    from pytest_provenai.attribution.protected import claim_values

    assert [v.kind for v in claim_values(said)] == ["coordinate", "coordinate"]
    assert [v.text for v in claim_values('The sign said "closed 2 May".')][-1] == "closed 2 May"


def test_twenty_third_round_the_field_a_claim_names_settles_its_value() -> None:
    from pytest_provenai.attribution.rows import field_conflict

    launch = (
        "service: RNLB Marjorie Hale\ndate: 2030-08-02\ncrew_paged: 06:12\ncrew: 6\n"
        "launched: 06:25\nrecovered: 08:40\n"
        "log:\n06:40 on scene, yacht aground\n07:05 tow established"
    )

    def conflict(claim: str, unit: str = launch) -> tuple[str, ...]:
        return field_conflict(claim, read_values(claim), unit)

    # the launched field holds the launch time; 06:40 is another line's
    assert conflict("The boat launched at 06:40.") == ("06:40",)
    assert conflict("The boat launched at 06:25.") == ()
    assert conflict("She was recovered at 07:05, after the tow.") == ("07:05",)
    # a datetime of a JSON record is a time too
    upload = '{"file": "T-4.csv", "uploaded": "2031-06-08T18:25:00", "rows": 11}'
    assert conflict("The file was uploaded at 16:25.", upload) == ("16:25",)
    assert conflict("The file was uploaded at 18:25.", upload) == ()
    # not named: only a sort word ("date"), or no field's name at all
    assert conflict("The date of the next exercise is 2030-09-14.") == ()
    assert conflict("The tow was established at 07:05.") == ()
    # another sort: a length is no count of crew
    assert conflict("The crew waded 40 m to the yacht.") == ()
    # a field the clause also speaks of holds the value ("crew" of ``crew_paged``)
    assert conflict("The crew launched at 06:12.") == ()
    # two values of one sort in a clause, a bound or a range, a part of something
    assert conflict("Launched at 06:25 or 06:30 at the latest.") == ()
    assert conflict("The boat launched before 06:30.") == ()
    assert conflict("The boat launched between 06:20 and 06:30.") == ()
    assert conflict("Four of the crew were on the boat.") == ()


def test_twenty_third_round_a_field_conflict_contradicts() -> None:
    launch = "service: RNLB Marjorie Hale\nlaunched: 06:25\nrecovered: 08:40"
    claim = "The boat launched at 08:40."
    signals = support_signals(claim, [launch], launch, launch, [launch], structured=False)
    assert signals.conflict == "field_conflict" and not signals.rescue_ok


def test_twenty_third_round_no_value_recorded_is_a_negation_borne_out() -> None:
    row = "member_id: K-7\nname: Ayo Brennan\ngrade: trainee\nfirst_aid_exp:  \nboat: no"
    # "no ... expiry recorded" against an empty field (named by its abbreviation): agreed
    assert not polarity("Ayo has no first aid expiry recorded.", row).negation
    # an empty field the claim gives a value for is no negation either way
    assert not polarity("Ayo's first aid expiry is in May.", row).negation
    # a field that holds a value is still negated
    assert polarity("Ayo has no grade recorded.", row).negation


def test_twenty_third_round_spoken_numbers_and_units() -> None:
    def read(text: str) -> list[tuple[str, object]]:
        return [(v.text, v.key) for v in read_values(text)]

    # a spoken decimal is one number, not "twelve" and a typographic point
    assert present("Weighed in at twelve point six kilos.", "weight_kg: 12.6") == [True]
    assert present("Weighed in at twelve point five kilos.", "weight_kg: 12.6") == [False]
    assert read("Make that two point oh five m.")[0][0] == "two point oh five m"
    # a function word after an amount is no unit: the duration after it is read whole
    said = read("The intro is £28 for forty-five minutes.")
    assert [t for t, _ in said] == ["£28", "forty-five minutes"]
    assert read("Band B covers 5 to 6 items.") == [("5", 5.0), ("6", 6.0)]
    # informal storage units
    assert present("A big one, 9.4 gig.", "File Size: 9.4 GB") == [True]
    assert present("A big one, 9.4 gig.", "File Size: 9.4 MB") == [False]


def test_twenty_third_round_a_superlative_is_checked_against_its_column() -> None:

    runs = "boat | crew | time_min\nB-1 | 4 | 52.5\nB-2 | 6 | 48.0\nB-3 | 5 | 61.2"

    def conflict(claim: str) -> tuple[str, ...]:
        return superlative_conflict(claim, read_values(claim), runs)

    assert conflict("The longest run was B-1's, at 52.5 minutes.") == ("52.5 minutes",)
    assert conflict("The longest run was B-3's, at 61.2 minutes.") == ()
    assert conflict("The shortest run took 48.0 minutes.") == ()
    assert conflict("The shortest run took 52.5 minutes.") == ("52.5 minutes",)
    # not a superlative of the value: second place, "12 min", or two amounts
    assert conflict("The second longest run took 52.5 minutes.") == ()
    assert conflict("B-1 took 52.5 min.") == ()
    assert conflict("The longest run was 61.2 minutes with 5 crew.") == ()


def test_twenty_fourth_round_a_value_from_another_line_of_a_record() -> None:
    from pytest_provenai.attribution.rows import line_other_value

    callout = (
        "incident: CR-041\ndate: 2033-10-18\nteam_leader: R. Ashe\nlog:\n"
        "16:48 Stretcher lower started: 3 pitches\n"
        "17:46 Lower complete at gully foot; carry-out begun\n"
        "18:37 Casualty handed over to the ambulance at the road end"
    )

    def other(claim: str) -> tuple[str, ...]:
        return line_other_value(claim, read_values(claim), callout)

    # the clause's words are another line's, whose time is not the claim's
    assert other("The casualty was handed over to the ambulance at the road end at 17:46.") == (
        "17:46",
    )
    assert other("The lower was completed at the gully foot at 16:48.") == ("16:48",)
    assert other("The casualty was handed over to the ambulance at the road end at 18:37.") == ()
    # two times speak of two lines; a clause of one word is not read
    assert other("The lower started at 16:48 and was complete at 17:46.") == ()
    assert other("Handed over at 17:46.") == ()
    # one shared word is not enough
    assert other("The team was in the gully at 16:48.") == ()


def test_twenty_fourth_round_a_count_in_words_counts_rows() -> None:
    table = (
        "slot | donor | status\n09:30 | A. Bell | attended\n09:45 | C. Dunn | DNA\n"
        "10:00 | E. Fox | attended\n10:15 | G. Hale | DNA\n10:30 | I. Ives | cancelled"
    )
    # "two were DNA": a count in words with no noun after it is counted from the rows
    claim = "Two attended, two were DNA and one cancelled."
    assert set(counted(claim, read_values(claim), table)) == {"Two", "two", "one"}
    wrong = "Three were DNA."
    assert counted(wrong, read_values(wrong), table) == ()
    # a label's number in digits is no count ("chair 2")
    label = "The alarm was at chair 2."
    assert counted(label, read_values(label), table) == ()


def test_twenty_fourth_round_sterling_as_people_say_it() -> None:
    # pounds and pence in words, "quid", and the notes
    assert present("The part was six pound forty.", "price: 6.40 GBP") == [True]
    assert present("The part was six pound forty.", "price: 6.04 GBP") == [False]
    assert present("Three pounds sixty, please.", "fee: £3.60") == [True]
    assert present("You put two quid in the tin.", "donation: £2.00") == [True]
    assert present("You put two quid in the tin.", "donation: £3.00") == [False]
    assert present("Donation: a fiver.", "donation: 5.00 GBP") == [True]
    assert present("The tenner deposit is kept.", "deposit: £10") == [True]
    assert present("The tenner deposit is kept.", "deposit: £20") == [False]
    # pence only before a comma, a full stop or a function word: "40 minutes" is a duration
    said = [(v.text, v.kind) for v in read_values("It was 6 pounds 40 minutes ago.")]
    assert said[1] == ("40 minutes", "quantity")


def test_twenty_fifth_round_only_when_is_not_unless() -> None:
    # "only when accompanied" says what "must not … unless accompanied" says
    unit = "2.5 Trainees must not deploy onto the hill unless accompanied by a party leader."
    same = "Trainees may deploy onto the hill only when accompanied by a party leader."
    assert not polarity(same, unit).negation
    # a plain negation against the rule is still one
    assert polarity("Trainees may not deploy onto the hill.", same).negation


def test_twenty_fifth_round_a_status_counted_by_another_word() -> None:
    table = (
        "dog | groomer | status\nBiscuit | Carys | completed\nPepper | Jodie | completed\n"
        "Otis | Marek | cancelled\nMabel | Carys | no-show\nZiggy | Jodie | completed"
    )
    # "done" counts the completed rows
    claim = "We got three of them done."
    assert counted(claim, read_values(claim), table) == ("three",)
    wrong = "We got four of them done."
    assert counted(wrong, read_values(wrong), table) == ()


def test_twenty_fifth_round_a_hedged_time_in_words() -> None:
    # "shortly before half past twelve", "about ten past 7": within 15 minutes, either half
    # of the day; unhedged it is the time itself
    assert present("It came back shortly before half past twelve.", "returned 12:27") == [True]
    assert present("It cooled by about ten past 7.", "2033-04-15 19:08 95C") == [True]
    assert present("It cooled by about ten past 7.", "2033-04-15 19:40 95C") == [False]
    assert present("It cooled by ten past 7.", "2033-04-15 19:08 95C") == [False]


def test_twenty_fifth_round_a_count_before_two_modifiers() -> None:
    table = (
        "session | kind | status\nS-1 | open studio | running\nS-2 | class | full\n"
        "S-3 | open studio | cancelled\nS-4 | open studio | full"
    )
    claim = "There are 3 open studio sessions this week."
    assert counted(claim, read_values(claim), table) == ("3",)
    wrong = "There are 2 open studio sessions this week."
    assert counted(wrong, read_values(wrong), table) == ()


def test_twenty_fifth_round_the_span_a_count_runs_over_is_no_rows_value() -> None:
    table = (
        "session | day | status\nS-1 | Tuesday | running\nS-2 | Wednesday | cancelled\n"
        "S-3 | Thursday | full\nS-4 | Saturday | cancelled"
    )
    parts = chunks(table)
    claim = "The bookings table has four sessions tuesday to saturday, two of them cancelled."
    sig = support_signals(claim, parts, table, parts[0], [table], structured=True)
    assert sig.conflict is None and not sig.row.other_row
    # a weekday said of one row is still that row's
    one = "The session on tuesday was cancelled."
    sig = support_signals(one, parts, table, parts[0], [table], structured=True)
    assert sig.conflict == "value_from_other_row"


def test_twenty_fifth_round_an_identifier_of_one_row_names_the_row() -> None:
    table = (
        "ref | title | dates | access\nDRO/PAR/22 | Kellaby Parva parish records | 1662-1866 | "
        "mixed\nDRO/PAR/22/2 | Register of burials | 1754-1812 | open\n"
        "DRO/PAR/22/4 | Churchwardens' accounts | 1702-1811 | open"
    )
    # the place name picks the collection's row; the identifier names the claim's own
    right = "The accounts for Kellaby Parva, DRO/PAR/22/4, cover 1702 to 1811."
    assert row_check(right, read_values(right), table).other_row == ()
    wrong = "The accounts for Kellaby Parva, DRO/PAR/22/4, cover 1754 to 1812."
    assert row_check(wrong, read_values(wrong), table).other_row == ("1754", "1812")


def test_twenty_sixth_round_a_day_of_the_month_said_alone() -> None:
    log = "2033-05-12 | 18:00 | Metformin | R\n2033-05-13 | 03:05 | Paracetamol | A"
    # "the morning of the 13th" is a day, not the number 13
    assert present("Paracetamol at five past three on the morning of the 13th.", log) == [
        True,
        True,
    ]
    assert present("Paracetamol on the morning of the 14th.", log) == [False]
    # "of the 3rd lap" is an ordinal, not a day
    assert [v.kind for v in read_values("at the start of the 3rd lap")] == ["number"]
    # the start of a range of days has the month of its end; a lone end is a day too
    first, last = read_values("first put out for 7th to 18th July.")
    assert (first.kind, first.key, last.key) == ("date", (None, 7, 7), (None, 7, 18))
    assert [v.key for v in read_values("five entries, 8th to 12th.")][1:] == [
        (None, None, 8),
        (None, None, 12),
    ]
    assert present("closed 7th to 18th July", "stoppage 2036-07-07 to 2036-07-18") == [True, True]
    assert present("closed 6th to 18th July", "stoppage 2036-07-07 to 2036-07-18") == [False, True]


def test_twenty_sixth_round_about_a_time_against_a_timestamp() -> None:
    stamp = '"eta_utc_est": "2033-08-12T17:20Z"'
    assert present("AIS puts her ETA about 17:20 UTC.", stamp) == [True]
    assert present("AIS puts her ETA about 17:10 UTC.", stamp) == [True]  # within 15 min
    assert present("AIS puts her ETA about 17:40 UTC.", stamp) == [False]
    # unhedged, a time is the time itself
    assert present("AIS puts her ETA at 17:10 UTC.", stamp) == [False]


def test_twenty_sixth_round_count_nouns_pint_knows_are_no_units() -> None:
    # pint reads "bags" as 94 lb and "points" and "hands" as lengths
    claim = "You've had four bags this year, 12 points and 3 hands on deck."
    assert [v.kind for v in read_values(claim)] == ["number"] * 3


def test_twenty_sixth_round_an_amount_worked_out_from_two_stated_ones() -> None:
    lines = "homestay 4 weeks | £920.00\nhomestay 3 weeks | £690.00\ntuition | £1,185.00"
    claim = "The two homestay lines come to £1,610 between them, £920 and £690."
    assert worked_out(read_values(claim), lines) == ("£1,610",)
    # a wrong total is not excused, nor is a total worked out from a changed operand
    wrong = "The two homestay lines come to £1,710 between them, £920 and £690."
    assert worked_out(read_values(wrong), lines) == ()
    changed = "The two homestay lines come to £1,710 between them, £1,020 and £690."
    assert worked_out(read_values(changed), lines) == ()
    # a difference, a bare number against a quantity as written
    hours = "hours_used: 7.25\nhours_allocated: 24.0"
    left = "It is at 7.25 of 24.0 allocated hours; 16.75 h remain."
    assert worked_out(read_values(left), hours) == ("16.75 h",)
    # a count the rows bear out is an operand too
    ten = "Ten lessons, and two of those were cancelled, so eight went ahead."
    assert worked_out(read_values(ten), "2 cancelled", known=("Ten",)) == ("eight",)
    assert worked_out(read_values(ten), "2 cancelled") == ()
    # amounts of different units are not added, even as written
    mixed = "It took 12 minutes over 8 km, 20 in all."
    assert worked_out(read_values(mixed), "12 minutes; 8 km") == ()
    same = "It took 12 minutes and 8 minutes, 20 minutes in all."
    assert worked_out(read_values(same), "12 minutes; 8 minutes") == ("20 minutes",)


def test_twenty_sixth_round_a_count_of_the_items_the_claim_lists() -> None:
    berths = (
        "berth | vessel | kind\nB04 | Sea Pinks | visitor\nB05 | Gannet's Luck | visitor\n"
        "B07 | Blue Tamarisk | visitor\nB09 | Morwenna Rose | resident"
    )
    three = "Three of them visitors: Sea Pinks, Gannet's Luck, Blue Tamarisk."
    assert listed_count(three, read_values(three), berths) == ("Three",)
    two = "Two of them visitors: Sea Pinks, Gannet's Luck, Blue Tamarisk."
    assert listed_count(two, read_values(two), berths) == ()
    closing = "Visitors: B04, B05, B07 (3)"
    assert listed_count(closing, read_values(closing), berths) == ("3",)
    # items the output does not hold count for nothing
    made_up = "Three of them visitors: Sea Pinks, Gannet's Luck, Red Admiral."
    assert listed_count(made_up, read_values(made_up), berths) == ()


def test_twenty_sixth_round_spoken_numbers_on_the_phone() -> None:
    record = "right_sphere: -1.25\nright_cyl: -0.50\nright_axis: 170\nleft_sphere: -1.75"
    # "minus" signs a number in words, "nought" is zero, "one-seventy" is 170
    said = "Your right eye is minus one point two five, minus nought point five at one-seventy."
    assert present(said, record) == [True, True, True]
    assert present("Your right eye is minus two point five.", record) == [False]
    assert present("Your right eye is one point two five.", record) == [False]
    # minutes in words past or to an hour
    exif = "DateTimeOriginal: 2033:04:26 10:12:04"
    assert present("It was taken at twelve minutes past ten.", exif) == [True]
    assert present("It was taken at fourteen minutes past ten.", exif) == [False]
    assert present("It went at twenty-three minutes to four.", "dispatched 15:37") == [True]


def test_twenty_sixth_round_a_time_in_four_digits() -> None:
    log = "2033-03-14 13:10 | FC 0.7\n2033-03-14 18:00 | lane swim | 34"
    assert present("Retest 1310, FC down to 0.7 ppm.", log) == [True, True]
    assert present("Retest 1320, FC down to 0.7 ppm.", log) == [False, True]
    # read as a year, it is the time where the evidence states no year alone
    assert present("Eve lane swim 1800: 34 booked.", log) == [True, True]
    assert present("It was founded in 1800.", log) == [False]
    assert present("Founded 1800.", log + "\nfounded 1805") == [False]


def test_twenty_seventh_round_a_range_of_days_reads_alike_in_claim_and_evidence() -> None:
    # the start of a range takes the month of its end wherever it is read, so an output's
    # "7th to 18th July" dates the 7th too (one rule, in ``_day_ranges``)
    assert present("closed on 7 July", "stoppage: 7th to 18th July") == [True]
    assert present("closed on 7 August", "stoppage: 7th to the 18th July") == [False]
    assert [v.key for v in read_values("from the 8th to the 12th of May")] == [
        (None, 5, 8),
        (None, 5, 12),
    ]


def test_twenty_seventh_round_dates_in_figures_read_month_first() -> None:
    exif = "DateTimeOriginal: 2033:03:11 10:14:22"
    # "3/11" is 11 March in the US and 3 November elsewhere: either reading may match
    assert present("the photo was taken 3/11 at 10:14 am", exif) == [True, True]
    assert present("the photo was taken 11/3 at 10:14 am", exif) == [True, True]
    assert present("the photo was taken 3/12 at 10:14 am", exif) == [False, True]
    log = "2033-03-08 feed ate all\n2033-03-13 feed refused"
    assert present("feeds logged 3/8-3/13", log) == [True, True]
    assert present("feeds logged 3/8-3/14", log) == [True, False]
    # a day after 12 can only be the day: month first, with its year
    (arrival,) = read_values("she came in 6/21/32 under permit")
    assert (arrival.kind, arrival.key) == ("date", (2032, 6, 21))
    # with a year, the settings' day-first reading stands
    assert present("The lease starts on 01/03/2031.", "lease start: 2031-01-03") == [False]
    # a count out of a total is no date where the evidence dates nothing
    assert present("rated 4/5", "rating: 4/5") == [True]
    assert present("rated 4/5", "rating: 3/5") == [False]


def test_twenty_seventh_round_a_day_and_month_with_a_dot() -> None:
    rota = "date: 2033-03-19\nstaff: 5"
    assert present("The rota has five people on 19.03.", rota) == [True, True]
    assert present("The rota has five people on 18.03.", rota) == [True, False]
    # a decimal is still a number
    assert present("Hb 19.03", "hb: 19.03") == [True]


def test_twenty_seventh_round_may_before_a_day() -> None:
    news = "Jelly Drift opens 2033-05-03; members' preview 2033-05-01."
    said = "jelly drift opens may 3rd, with a member preview may 1"
    assert present(said, news) == [True, True]
    assert present("jelly drift opens may 4th", news) == [False]
    # the verb is no month
    assert [v.kind for v in read_values("you may 3 times try")] == ["number"]


def test_twenty_seventh_round_a_fraction_between_a_number_and_its_unit() -> None:
    clip = "duration: 00:07:30\nresolution: 1920x1080"
    assert present("The video is 7 and a half minutes long.", clip) == [True]
    assert present("The video is 6 and a half minutes long.", clip) == [False]
    # no unit, no amount of one: "3 and a half stars" keeps its 3
    assert [v.kind for v in read_values("3 and a half stars")] == ["number"]


def test_twenty_seventh_round_a_no_noun_is_no_negation() -> None:
    row = "time: 14:00\nroom: Pharaoh's Vault\nbooking_ref: RW-33-0419\nstatus: no-show"
    claim = "Our booking RW-33-0419 was for 14:00 in Pharaoh's Vault."
    assert not polarity(claim, row).negation
    # "no-one" still negates
    assert polarity("No-one booked the 14:00 in Pharaoh's Vault.", row.replace("no-show", "x"))


def test_twenty_seventh_round_a_csv_under_a_record_is_read_row_by_row() -> None:
    record = (
        "animal_id: CT-02\nname: Wendell\nstatus: medical hold since 2033-02-27\n\n"
        "date,time,keeper,item,notes\n"
        "2033-03-07,11:30,Dr. A. Whitcomb,ceftazidime,dose 4 of 6\n"
        "2033-03-10,11:25,Dr. A. Whitcomb,ceftazidime,dose 5 of 6\n"
        "2033-03-13,11:15,Dr. A. Whitcomb,ceftazidime,dose 6 of 6; course complete"
    )
    found = records(record)
    assert found is not None and len(found) == 4 and found[0].startswith("animal_id: CT-02")
    wrong = "Dr. Whitcomb gave Wendell dose 5 of 6 on 3/7."
    # "dose 5" names its row (thirtieth round): the date is then the other row's value
    assert row_check(wrong, read_values(wrong), record).other_row == ("3/7",)
    right = "Dr. Whitcomb gave Wendell dose 5 of 6 on 3/10."
    check = row_check(right, read_values(right), record)
    assert check.structured and not check.missing and not check.other_row


def test_twenty_seventh_round_an_age_group() -> None:
    rules = "A3. Children under 14 must be supervised by a responsible adult."
    assert present("Under 14s need a responsible adult.", rules) == [True]
    assert present("Under 12s need a responsible adult.", rules) == [False]
    assert [v.kind for v in read_values("Under 14s")] == ["identifier"]  # not 14 seconds
    assert present("the Lynx Under-14 training", "Ice hockey training - Lynx U14") == [True]
    assert present("the Lynx Under-16 training", "Ice hockey training - Lynx U14") == [False]


def test_twenty_eighth_round_a_negated_comparative_bounds_the_other_way() -> None:
    rules = "B3. Horses need boosters no more than 12 months apart."
    assert present("boosters can't be more than 12 months apart", rules) == [True]
    assert present("boosters must not be longer than 12 months apart", rules) == [True]
    assert present("boosters can't be more than 6 months apart", rules) == [False]
    # the bound is "at most", not "more than": the evidence's "more than" is the other way
    (v,) = read_values("it must not exceed 40 kg")
    assert v.bound == "<="
    (w,) = read_values("it can't be less than 3 metres")
    assert w.bound == ">="


def test_twenty_eighth_round_a_column_named_by_its_unit() -> None:
    diary = (
        "appt | dog     | mins | quoted_gbp\n"
        "A-1  | Biscuit |  120 | 58.00\n"
        "A-2  | Otis    |   75 | 42.00"
    )
    assert present("Biscuit, two hours booked", diary) == [True]
    assert present("Biscuit, three hours booked", diary) == [False]
    log = "date,asset,result,hours\n2033-10-10,CH-03,pass,1489"
    assert present("passed at 1489 hrs", log) == [True]
    assert present("passed at 1498 hrs", log) == [False]
    # a currency named on a field, and a nautical mile as "nm"
    ticket = "parts_used: EL-0218 (£6.40)\ndonation_gbp: 5.00"
    assert present("Donation: a fiver", ticket) == [True]
    assert present("Donation: a tenner", ticket) == [False]
    ais = '{"position_accuracy": "low (>10 m)", "distance_to_harbour_nm": 11.8}'
    assert present("11.8 nm out", ais) == [True]
    assert present("11.8 km out", ais) == [False]


def test_twenty_eighth_round_a_bare_hour_joined_to_a_time_of_day() -> None:
    locks = "lock | name | passage_hours\nL16 | Hobb's Lock | 09:00-16:00"
    assert present("keeper-assisted only on Sat, 9 till 4, so don't dawdle", locks) == [
        True,
        True,
    ]
    assert present("keeper-assisted only on Sat, 10 till 4, so go early", locks) == [
        False,
        True,
    ]


def test_twenty_eighth_round_a_paragraph_named_by_its_number() -> None:
    sop = (
        "2.4 A hasty party of no fewer than three members may be sent ahead.\n"
        "2.5 Trainee members must not deploy onto the hill unless accompanied."
    )
    assert present("Under 2.5, trainees may deploy only when accompanied.", sop) == [True]
    assert present("Under 2.6, trainees may deploy only when accompanied.", sop) == [False]
    # "under" bounds a number ("under 2.5 hours") but not a paragraph's; a list's numbers
    # are labels, not values, unless a word names the part
    rules = "3. Children under 14 must be supervised.\n4. Dogs must be kept on a lead."
    assert present("Per rule 4, dogs go on a lead.", rules) == [True]
    assert present("Per rule 5, dogs go on a lead.", rules) == [False]
    assert present("They had 4 dogs on a lead.", rules) == [False]


def test_twenty_eighth_round_a_value_taken_back_is_not_said() -> None:
    said = "Otis was down with Marek at, um, half nine, no, half ten on Thursday."
    assert [v.text for v in read_values(said)] == ["half ten", "Thursday"]
    assert [v.text for v in read_values("twelve, sorry, eleven frames")] == ["eleven"]
    # "no" before another word is no correction, and values of two kinds both stand
    assert [v.text for v in read_values("it was 12, no more")] == ["12"]
    assert [v.text for v in read_values("3, no, 4 hours")] == ["3", "4 hours"]
    # a text without values reads as none (the first version of this rule failed there)
    assert read_values("She set up a standing order.") == []


def test_twenty_eighth_round_a_count_of_rows_by_a_plural() -> None:
    rota = (
        "shift | staff_name | role\n"
        "late  | Gethin     | nurse\n"
        "night | Ines       | nurse\n"
        "night | Precious   | senior carer\n"
        "night | Femi       | carer"
    )
    right = "we had three on nights: a nurse, a senior carer and a carer."
    assert "three" in counted(right, read_values(right), rota)
    wrong = "we had two on nights: a nurse and a carer."
    assert "two" not in counted(wrong, read_values(wrong), rota)


def test_twenty_eighth_round_a_decimal_comma_before_a_unit_or_after_a_currency() -> None:
    fees = "courier_eur: 32.50\nhandling_fee_eur: 15.00\nweight_kg: 2.4\nsize: 3.8 MB"
    said = "You paid 15,00 EUR handling, 32,50 EUR courier; the bag is 2,4 kg, the photo 3,8 MB."
    assert present(said, fees) == [True, True, True, True]
    assert present("the courier costs 32,40 EUR", fees) == [False]
    # the value keeps its text as written; a thousands comma and a list stay as they were
    (fee,) = read_values("a fee of € 3,50")
    assert (fee.text, fee.key[2]) == ("€ 3,50", 3.5)
    assert [v.key for v in read_values("1,500 EUR")] == [(1500.0, "[currency:EUR]", 1500.0, "EUR")]
    assert [v.text for v in read_values("lanes 5,6 are shut")] == ["5", "6"]


def test_twenty_eighth_round_times_as_other_countries_write_them() -> None:
    log = "2033-03-05 09:54 found at seat 14C\n2033-03-05 10:12 registered at LP-2"
    assert present("found at 09.54 Uhr, registered at 10.12 Uhr", log) == [True, True]
    assert present("found at 09.45 Uhr", log) == [False]
    trip = "08:20 ling 18 lb kept\n10:40 conger released"
    assert present("ling kept 0820hrs, conger released 1040hrs", trip) == [True, True]
    # engine hours stay a duration where the minutes cannot be minutes
    (hours,) = read_values("serviced at 1489 hrs")
    assert hours.kind == "quantity"


def test_twenty_eighth_round_pounds_of_money_under_a_currency_column() -> None:
    stock = (
        "part_no,description,qty,unit_cost_gbp\n"
        "MW-17,Music wire 1 lb coil,6,21.75\n"
        "BS-B6,Bass set,0,212.00"
    )
    assert present("A set costs two hundred and twelve pounds.", stock) == [True]
    assert present("A set costs two hundred and fifteen pounds.", stock) == [False]


def test_twenty_eighth_round_review_cases_stay_apart() -> None:
    # a long negated modal still bounds the other way, and "no longer than" is "at most"
    assert present("it shouldn't be longer than 20 minutes", "no longer than 20 minutes") == [True]
    # quantities in small base units compare relatively (5e-6 m³ is no 6e-6 m³)
    assert present("5 ml", "dose: 6 ml") == [False]
    assert present("532 nm", "laser at 533 nm") == [False]
    assert present("532 nm", "wavelength_nm: 533") == [False]
    assert present("11.8 nautical miles out", '{"distance_nm": 11.8}') == [True]
    # "under 4" is a bound, not paragraph 4; a line opening with a number is no label
    rules = "3. Children under 14 must be supervised.\n4. Dogs must be kept on a lead."
    assert present("Children under 4 must be supervised.", rules) == [False]
    assert present("The wait is under 30", "30 minutes wait") == [False]
    # a tally is no self-correction
    assert [v.text for v in read_values("3 yes, 2 no, 1 abstained")] == ["3", "2", "1"]
    # a decimal comma keeps its digits when converted, and a CSV keeps its separators
    assert present("the bag is 2,4 kg", "weight_g: 2600") == [False]
    assert [v.text for v in read_values("laps,time\n4,15 min\n5,16 min")] == [
        "4",
        "15 min",
        "5",
        "16 min",
    ]
    # a unit column's own numbers only; pounds said of a weight stay a weight
    stock = "part_no,description,qty,unit_cost_gbp\nMW-17,Music wire 1 lb coil,6,21.75"
    assert present("A coil costs 6 pounds.", stock) == [False]
    assert present("the fish weighed 25 pounds", "ling 18 lb kept\nfee_gbp: 25") == [False]
    assert present("the build took 1.2 hours", "stage | min | max\nbuild | 12 | 72") == [False]


def test_twenty_eighth_round_a_plural_counts_only_where_the_word_is_not_written() -> None:
    rows = (
        "id | kind  | state\n"
        "1  | news  | new\n"
        "2  | sport | new\n"
        "3  | news  | closed\n"
        "4  | sport | closed\n"
        "5  | sport | closed"
    )
    right = "two of the items were news"
    assert "two" in counted(right, read_values(right), rows)
    wrong = "three of the items were news"
    assert "three" not in counted(wrong, read_values(wrong), rows)


def test_twenty_eighth_round_mends_after_the_first_test_reading() -> None:
    # "no later than 3 hours before" is at least 3 hours before: "later"/"earlier" keep the
    # reading they had (the first version of the negated comparatives made it "at most")
    rider = "Percussion load-in: no later than three hours before downbeat."
    assert present("Percussion comes in at least three hours before downbeat.", rider) == [True]
    # a singular or plural only ever adds a way for a count to be borne out: the count of
    # all rows stands where the singular picks some rows out
    tour = (
        "date | venue | kind\n"
        "2031-10-03 | Halle | concert\n"
        "2031-10-05 | Aula | talk\n"
        "2031-10-08 | Forum | recital\n"
        "2031-10-10 | Dom | recital"
    )
    said = "The tour has four concerts."
    assert "four" in counted(said, read_values(said), tour)


def test_twenty_ninth_round_concentrations_are_quantities() -> None:
    # "14.2 g/dL" is "142 g/L"; a g/L-for-g/dL swap is a changed unit, not a match
    assert present("Hb 14.2 g/dL", "Hb 142 g/L") == [True]
    assert present("Hb 14.2 g/L", "Hb 14.2 g/dL") == [False]
    assert match_values(read_values("Hb 14.2 g/L"), "Hb 14.2 g/dL")[0].conflicting
    assert present("glucose 5.4 mmol/L", "glucose: 5.4 mmol/l") == [True]
    assert present("creatinine 287 µmol/L", "creatinine 0.287 mmol/L") == [True]
    # a bare number under a unit-named field is still met as written
    assert present("with an Hb of 13.1 g/dL", "last_hb_g_dl: 13.1") == [True]
    # a row's own unit field or column gives its number's unit
    lab = (
        '{"test": "creatinine", "value": 287, "unit": "umol/L"}\n'
        '{"test": "urea", "value": 18.6, "unit": "mmol/L"}\n'
        "comment: down from 412 umol/L on admission"
    )
    assert present("Creat down to 287 µmol/L from 412", lab) == [True, True]
    assert present("Creat down to 0.287 mmol/L", lab) == [True]
    assert present("Creat down to 288 µmol/L", lab) == [False]
    table = "test,value,unit\ncreatinine,287,umol/L\nnote,412,umol/L"
    assert present("creatinine 287 µmol/L", table) == [True]


def test_twenty_ninth_round_elapsed_times_and_clock_halves() -> None:
    # an erg time in minutes, seconds and tenths is a duration, never a time of day
    (split,) = read_values("went 6:33.6 at 31")[:1]
    assert (split.text, split.kind) == ("6:33.6", "quantity")
    assert present("sol 6 min 29.6 sec at 34 spm", "sol,6:29.6,34") == [True, True]
    assert present("you went 6:33.6", "| 6:33.7 |") == [False]
    assert present("ada 7:12.4 - 1:48.1/500m", "7:12.4,1:48.1") == [True, True, False]
    # a one-digit hour with no am/pm is either half of the day; "03:46" is not
    assert present("first on in the afternoon, at 3:46", "start: 15:46") == [True]
    assert present("at 3:46", "start: 03:46") == [True]
    assert present("at 3:46", "start: 15:47") == [False]
    assert present("at 03:46", "start: 15:46") == [False]
    # and a note's "7:30" is either half of the day too
    assert present("asking to pop in around 7.30 before work", "visit about 7:30?") == [True]
    # the evidence's one-digit hour is on a 24-hour clock: only a claim's may be either half
    assert present("at 15:46", "started at 3:46") == [False]


def test_twenty_ninth_round_days_of_a_list_and_pence_per_litre() -> None:
    log = "2033-10-14 PD-17\n2033-10-15 PD-22\n2033-10-16 PD-17"
    assert present("collections on the 14th, 15th and 16th", log) == [True, True, True]
    assert present("collections on the 14th, 15th and 17th", log) == [True, True, False]
    # an ordinal place stays a number ("3rd on the list")
    assert [v.kind for v in read_values("the 4- is 3rd on the list")] == ["number", "number"]
    news = "Pennock Dale will hold its standard litre price at 41.25ppl for October."
    assert present("holding October at 41.25 pence a litre", news) == [True]
    assert present("holding October at 41.5 pence a litre", news) == [False]


def test_twenty_ninth_round_an_exact_sum_of_a_column_is_the_rows_statement() -> None:
    bookings = (
        "group | players | price_eur | status\n"
        "Oduya | 4 | 112.00 | completed\n"
        "Vantrell | 6 | 174.00 | no-show\n"
        "Quizzly | 3 | 96.00 | completed\n"
        "Mira | 2 | 70.00 | cancelled\n"
        "Hollis | 6 | 186.00 | completed"
    )
    # the rows sharing a cell ("completed"), though the claim never says the word
    said = "Together the groups who played paid 394 euro."
    assert totalled(said, read_values(said), bookings) == ("394 euro",)
    # all rows, where no word of the claim picks some out
    every = "21 players booked across the lot."
    assert totalled(every, read_values(every), bookings) == ("21",)
    # no sum of the column: not borne; a small count is a count's business, not a total's
    off = "Together they paid 400 euro."
    assert totalled(off, read_values(off), bookings) == ()
    small = "Together 6 players came."
    assert totalled(small, read_values(small), bookings) == ()
    # a claim that says no total is not summed ("paid 394 euro" may be anything)
    plain = "The groups who played paid 394 euro."
    assert totalled(plain, read_values(plain), bookings) == ()
    chunks_ = bookings.split("\n")
    sums = support_signals(said, chunks_, bookings, chunks_[1], [bookings], structured=True)
    assert sums.summed and sums.rescue_ok and sums.conflict is None
    assert not support_signals(
        plain, chunks_, bookings, chunks_[1], [bookings], structured=True
    ).summed


def test_twenty_ninth_round_an_empty_field_keeps_a_record_a_record() -> None:
    # a JSON object as the chunker writes it, with an empty field: the negation of a field
    # the claim does not speak of ("extra_bed: not required") is not the claim's
    unit = (
        "reservation: R-2033-44871; nights: 3; adults: 2; children: 1; "
        "extra_bed: not required; housekeeping_notes: ; turndown: 20:30"
    )
    said = "Reservation R-2033-44871 is for 3 nights, for two adults and one child."
    assert not polarity(said, unit).negation
    assert polarity("An extra bed is required for reservation R-2033-44871.", unit).negation


def test_twenty_ninth_round_a_plain_text_table_ruled_by_dashes() -> None:
    schedule = (
        "MINIBAR CHARGES SCHEDULE MB-2033/2\n"
        "\n"
        "Item                       Unit             Price (INR)\n"
        "-------------------------  ---------------  -----------\n"
        "Packaged drinking water    500 ml bottle             60\n"
        "Packaged drinking water    1 litre bottle           110\n"
        "Potato chips               60 g                     120\n"
        "Baby cot                   per night      complimentary\n"
        "\n"
        "Notes: disputes within 7 days."
    )
    rows = records(schedule)
    assert rows is not None
    assert any(r.endswith("Unit: 1 litre bottle\nPrice (INR): 110") for r in rows)
    # a right-aligned cell wider than its column stays whole
    assert "Item: Baby cot\nUnit: per night\nPrice (INR): complimentary" in rows
    # a price from another row of the table is another row's value
    wrong = "The 1 litre water bottle is charged at INR 120."
    assert row_check(wrong, read_values(wrong), schedule).other_row == ("120",)
    right = "The 1 litre water bottle is charged at INR 110."
    assert not row_check(right, read_values(right), schedule).conflict


def test_twenty_ninth_round_a_value_in_a_field_name_is_every_rows() -> None:
    ergs = (
        "name,time,split_500m,notes\n"
        "Jonas,6:21.2,1:35.3,PB\n"
        "Ada Okafor,7:12.4,1:48.1,PB\n"
        "Hattie,7:31.6,1:52.9,went out too hard - 1:47 first 500"
    )
    said = "ada 7:12.4 - 1:48.1/500m avg, pb"
    assert not row_check(said, read_values(said), ergs).conflict
    wrong = "ada 7:12.4 - 1:52.9/500m avg"
    assert row_check(wrong, read_values(wrong), ergs).other_row == ("1:52.9",)


def test_twenty_ninth_round_review_cases_stay_apart() -> None:
    invoices = (
        "client | status | amount_gbp\n"
        "Ashby | paid | 120\n"
        "Brook | paid | 180\n"
        "Cole | unpaid | 45\n"
        "Dunn | unpaid | 75"
    )
    # a word that picks rows out decides the rows a total is over: never all rows or a group
    for wrong in (
        "The unpaid invoices come to 300 in total.",
        "Ashby and Cole together paid 420.",
    ):
        assert totalled(wrong, read_values(wrong), invoices) == (), wrong
    right = "The unpaid invoices come to 120 in total."
    assert totalled(right, read_values(right), invoices) == ("120",)
    # a bare number is no part of a field name ("2" of term_2_absences)
    terms = "name,term_1_absences,term_2_absences\nMia,5,1\nLeo,2,3"
    said = "Mia had 5 absences in term 2."
    assert row_check(said, read_values(said), terms).other_row == ("2",)
    # a 24-hour log's "9:05" is 09:05; a claim's 24-hour time makes its "9:15" one too
    assert present("The ferry departed at 21:05.", "departure: 9:05") == [False]
    assert present("The pump went off at 21:15.", "17:02,pump on\n9:15,pump off") == [False]
    assert present("off at 9:15, on at 17:02", "21:15 off\n17:02 on") == [False, True]
    # places are no days: a list continues as days only after a day
    assert [v.kind for v in read_values("She finished 3rd, 5th and 9th.")] == ["number"] * 3
    assert [v.kind for v in read_values("1st: Lukas, 2nd: Mia")] == ["number"] * 2
    assert [v.kind for v in read_values("on the 14th and 15th")] == ["date", "date"]


def test_thirtieth_round_units_in_capitals_and_rounded_durations() -> None:
    notam = "UA OPS WI 1NM OF WIRRAWAY FLATS. SFC TO 330FT AGL. GLIDING WI 5NM, SFC TO 6500 FT."
    assert present("Surface to 330 ft.", notam) == [True]
    assert present("Surface to 330 m.", notam) == [False]
    # NM is a nautical mile, however the claim writes it
    assert present("Gliding within 5 nm of the field.", notam) == [True]
    assert present("Gliding within 6 nm of the field.", notam) == [False]
    assert present("Gliding up to 6,500 ft.", notam) == [True]
    # only units shout: "MM" is millimetres (no megamolar), "AB" and "US" are no units
    assert present("The rod is 5 MM thick.", "rod: 5 mm") == [True]
    assert present("The rod is 5 MM thick.", "rod: 5 cm") == [False]
    assert present("Fan at 900 RPM.", "fan: 900 rpm") == [True]
    assert [v.kind for v in read_values("Meet at Gate 4 AB at noon.")] == ["number", "time"]
    assert present("They paid 200 US dollars.", "paid: $200") == [True]
    # a whole number of minutes is a duration written with its seconds, rounded
    log = "summary: 2 sorties, 56 min 07 s airborne, 2,088 images"
    assert present("56 min airborne all up", log) == [True]
    assert present("57 min airborne all up", log) == [False]
    assert present("It took 2 hours.", "duration: 2 h 20 min") == [True]
    assert present("It took 3 hours.", "duration: 2 h 20 min") == [False]
    # the smaller part is dropped, never rounded up; one number is no two parts; a bound
    # keeps its reading
    assert present("It took 57 min.", "took 56 min 40 s") == [False]
    assert present("It took 3 hours.", "took 2.6 hours") == [False]
    assert present("It took 1 hour.", "took 3,000 s") == [False]
    assert present("It took at least 57 min.", "took 56 min 40 s") == [False]
    # "call it" is a rounding; a ground sample distance is a length per pixel
    assert present("80 m AGL, call it 260 ft", "height_limit: 80 m AGL") == [True, True]
    assert present("80 m AGL, call it 300 ft", "height_limit: 80 m AGL") == [True, False]
    assert present("GSD 2.5 cm/px", "target_gsd: 2.5 cm/px") == [True]
    assert present("GSD 2.5 mm/px", "target_gsd: 2.5 cm/px") == [False]
    # "next one" is a pronoun, not a count
    assert [v.text for v in read_values("Last service 1 Sep, next one due 1 Dec.")] == [
        "1 Sep",
        "1 Dec",
    ]


def test_thirtieth_round_signs_and_units_of_columns() -> None:
    ledger = "id,when,client,kind,amount\nDL-8862,2034-03-08,Gus Whitcombe,refund,-120.00"
    said = "A refund: $120 back to Gus Whitcombe."
    found = match_values(read_values(said), ledger, missing_quantity_unit=True)
    assert [m.present for m in found] == [True]
    # only an amount the claim says came back is a bare "-120.00"; a balance or a profit
    # keeps its sign
    assert present("The account balance is $120.", "balance: -$120.00") == [False]
    loss = "net_profit_gbp: -5000"
    found = match_values(read_values("A profit of £5,000."), loss, missing_quantity_unit=True)
    assert [m.present for m in found] == [False]
    # a temperature's sign still matters, in a field named by its unit too
    assert present("The low was -5 °C.", "low_c: 5") == [False]
    assert present("The low was -5 °C.", "low_c: -5") == [True]
    # a number under another column is no amount in the unit a column names
    register = (
        "| ID | Spans | Length (m) | Restriction |\n"
        "|----|-------|------------|-------------|\n"
        "| HB-012 | 1 | 8.4 | headroom 4.88 m |"
    )
    assert present("Headroom is restricted to 4.88 ft.", register) == [False]
    assert present("Headroom is restricted to 4.88 m.", register) == [True]
    assert present("It is 27.6 ft long.", register) == [True]
    # a field as the chunker writes it, "; " between fields
    chunk = "date: 2031-05-03; max_temp_c: 31.6; min_humidity_pct: 52; days above 28 C: 2"
    assert present("It peaked at 31.6 °C.", chunk) == [True]


def test_thirtieth_round_numbered_search_results_are_records() -> None:
    results = (
        "1. BSIM 22 Issue 4: Inspection of highway structures | Standards Board\n"
        "   https://hssb.example/bsim-22\n"
        "   2032-11-01\n"
        "   Issue 4 sets General Inspections at intervals not exceeding 2 years.\n"
        "2. BSIM 41 Issue 2: Assessment of arch bridges | Standards Board\n"
        "   https://hssb.example/bsim-41\n"
        "   2030-06-15\n"
        "   Replaces Issue 1 (2019).\n"
        "3. County names four firms to £9.6m framework\n"
        "   https://constructwire.example/framework\n"
        "   12 December 2033\n"
        "   Ferriby Masonry Ltd wins Lot 1."
    )
    # the "Title | Publisher" lines are no pipe table's header and row
    rows = records(results)
    assert rows is not None and len(rows) == 3 and rows[2].endswith("wins Lot 1.")
    assert len(chunks(results)) == 3
    # a header with rows keeps them across a note line; a rule line of dashes alone is one
    stock = "item | qty\n----------\napple | 3\npear | 5\n(2 rows)\nplum | 7\nfig | 9"
    assert row_check("Fig stock is 7.", read_values("Fig stock is 7."), stock).other_row == ("7",)
    right = "A report of 12 December 2033 says the County named four firms to a £9.6m framework."
    assert not row_check(right, read_values(right), results).conflict
    wrong = "BSIM 41 Issue 2 (2030) replaced Issue 4."
    assert row_check(wrong, read_values(wrong), results).other_row == ("4",)
    # one-line numbered clauses stay prose; a table's rule lines keep it a table
    assert records("1. No dogs.\n2. No fires.\n3. Quiet after 22:00.") is None
    sql = "batch | colour\n------+-------\nIB-1 | red\nIB-2 | black\n(2 rows)"
    assert records(sql) == ["batch: IB-1\ncolour: red", "batch: IB-2\ncolour: black", "(2 rows)"]


def test_thirtieth_round_a_negation_is_read_in_the_sentence_of_its_words() -> None:
    row = (
        "batch_id: IB-1047\ncolor: Traditional Red\nlot_no: RB-TR-7912\nopened: 2034-03-10\n"
        "status: in use\nnote: replaces IB-1042; lot not in recall"
    )
    assert not polarity("red IB-1047, lot RB-TR-7912, opened 3/10, not in the recall", row).negation
    assert polarity("red IB-1047, lot RB-TR-7912, opened 3/10, in the recall", row).negation
    # among sentences with as many of its words, the one with its identifier
    lots = "Lot RB-TR-7912 is in the recall. Lot RB-TR-7913 is not in the recall."
    assert polarity("Lot RB-TR-7912 is not in the recall.", lots).negation
    assert not polarity("Lot RB-TR-7912 is in the recall.", lots).negation


def test_thirtieth_round_a_name_with_a_number_names_its_row() -> None:
    elements = "element | severity | extent\nPier 1 | 2 | A\nPier 2 | 4 | B\nSpan 3 | 3 | C"
    wrong = "Pier 1 was assessed at severity 4."
    assert row_check(wrong, read_values(wrong), elements).other_row == ("4",)
    for right in ("Pier 2 was assessed at severity 4.", "Pier 1 was assessed at severity 2."):
        assert not row_check(right, read_values(right), elements).conflict, right
    # a number after a function word is an amount, not a name's number
    counted_ = "At 2 piers the severity was 4."
    assert not row_check(counted_, read_values(counted_), elements).conflict


def test_thirty_first_round_values() -> None:
    # a datetime's seconds are the time's, in either case of "T"
    for text in ("pob: 2034-11-18T04:38:50", "pob: 2034-11-18t04:38:50"):
        assert [(v.kind, v.key) for v in read_values(text)] == [("datetime", (2034, 11, 18, 278))]
    assert present("POB 04:38 on the 18th", "pob: 2034-11-18T04:38:50") == [True, True]
    # a span of years with its end in two digits
    assert present("the register for 1850–70", "baptisms 1850-1870") == [True, True]
    assert present("the register for 1850–75", "baptisms 1850-1870") == [True, False]
    # degrees and decimal minutes
    gps = "GPS Latitude : 51 deg 12' 33.40\" N\nGPS Longitude : 1 deg 48' 7.90\" W"
    assert present("roughly 51°12.6′N, 1°48.1′W", gps) == [True, True]
    assert present("roughly 51°13.6′N, 1°48.1′W", gps) == [False, True]
    # a bare hour before "at" after "till" is a time
    assert present("sun 7 may, 10 till 12 at Tollgate", "7 May, 10:00-12:00") == [True] * 3
    # a currency code before an amount, and its minus sign
    ledger = "less deposit received 10/02/2034: GBP -150.00\nbalance due: GBP 545.00"
    assert present("leaving £545 to pay", ledger) == [True]
    assert present("leaving £554 to pay", ledger) == [False]
    assert [v.kind for v in read_values("GBP -150.00")] == ["quantity"]
    assert present("a balance of £150", ledger) == [False]  # -150 is no balance of 150
    # pence glued to the number are money
    assert present("45p per mile", "mileage: £0.45 per mile") == [True]
    assert present("45p per kilometre", "mileage: £0.45 per mile") == [False]
    # "min" after a word of time is minutes (a column "temp_min" stays a minimum)
    trips = "job,dist_mi,dur_min,wait_min\nLC-1,17.9,34,3.5\nLC-2,5.8,20,2.5"
    assert present("17.9 mi in 34 min, 3.5 min waiting", trips) == [True, True, True]
    assert present("17.9 km in 34 min", trips) == [False, True]
    # a bare hour after a time with am/pm: "by 11", "clear 1.49"
    hall = "Music and PA off by 22:00; the hall vacated by 23:00."
    assert present("music off by 10pm, everyone out by 11", hall) == [True, True]
    assert present("music off by 10pm, everyone out by 12", hall) == [True, False]
    assert present("POB 1.26am, clear 1.49 at 4 Brindle Ct", "pob 01:26, clear 01:49") == [
        True,
        True,
        False,
    ]
    for text in ("open at 9am, cost rose by 11", "at 1.30pm, 2.50 each", "at 10pm. By 11, done"):
        assert read_values(text)[-1].kind == "number", text
    # "all day", "each" are no units
    assert [v.kind for v in read_values("sun is tariff 2 all day")] == ["number"]
    # a review's cases: a margin, a count before "at", a rate in pence per unit, a code
    # before words, a year with "to", a datetime before a colon
    assert read_values("At 8pm the home side won by 9.")[-1].kind == "number"
    assert present("The queue grew from 8 at launch to 40.", "08:00 launch, queue 12") == [
        False,
        False,
    ]
    assert present("The tariff is 30p/kWh.", "included: 30 kWh; rate 24.5p/kWh") == [False]
    assert [v.text for v in read_values("cost: GBP twelve")] == ["twelve"]
    assert [v.kind for v in read_values("Membership rose in 2019 to 42.")] == ["date", "number"]
    assert [v.kind for v in read_values("2032-08-13 10:00: ok")] == ["datetime"]
    assert read_values("in 1080p at 60 fps")[0].kind == "identifier"
    # pence against the number only, in any position; a spaced "p" is no money
    assert [v.kind for v in read_values("the August average at 40.26p")] == ["quantity"]
    assert [v.kind for v in read_values("they pay 0.55p for every 0.1")] == ["quantity", "number"]
    assert [v.kind for v in read_values("pages 10 p 12")] == ["number", "number"]


def test_thirty_first_round_rows() -> None:
    fleet = (
        "car  reg       seats  plate    mot_due\n"
        "---  --------  -----  -------  ----------\n"
        "3    BK81 RDV  4      PH-0613  14/09/2035\n"
        "7    BK30 HNO  4      PH-0588  02/12/2034\n"
        "19   BK81 OXC  8      PH-0620  11/06/2035\n"
        "22   BK30 TTU  4      PH-0597  23/11/2034\n"
        "31   BK34 WAV  6      PH-0651  09/10/2035\n"
        "(5 vehicles; plates issued by Brackwater Borough Council)"
    )

    def check(said: str) -> RowCheck:
        return row_check(said, read_values(said), fleet)

    # a name with a number finds its row's field ("car 22" of ``car: 22``); each clause's
    # value is its own name's row's
    assert not check("MOTs: car 22 23rd Nov, car 7 2nd Dec").conflict
    assert set(check("MOTs: car 22 2nd Dec, car 7 23rd Nov").other_row) == {"23rd Nov", "2nd Dec"}
    # ... and a value the claim's row holds, said of a row that lacks it
    assert check("MOTs: car 22 23rd Nov, car 7 23rd Nov").other_row == ("23rd Nov",)
    # a value whose clause names no row is said of the rows the other clauses name
    assert not check("Due in 2034: car 22 on 23rd Nov, car 7 on 2nd Dec").conflict
    # a count in words after the field that names it is that field's value
    assert check("Tourneo, car 19, seats six.").other_row == ("six",)
    assert not check("car 19 seats eight").conflict
    # a note in brackets under a ruled table is no row
    assert not check("Car 22 = BK30 TTU, council plate PH-0597.").swapped
    # a log's lines are no rows to count: nothing bears out "four errors"
    log = "09:00:01 INFO boot\n09:00:05 INFO ready\n09:02:11 WARN slow\n09:05:40 INFO stop"
    assert counted("There were four errors.", read_values("There were four errors."), log) == ()


def test_thirty_first_round_fields_and_premise() -> None:
    # a value's own "; " stays in its field: a null field beside it is no negation
    job = (
        "job_ref: LC-0430; customer account: None; allocated car: 3; allocated driver: "
        "Rehana Qadir; complaint: None; notes: SMS sent 2034-11-17T20:00; pax ready early"
    )
    assert not polarity("LC-0430: car 3, driver R. Qadir", job).conflict
    # rows alike in words may crowd the claim's own row out of the premise: a value that
    # row holds is not missing
    rows = "\n".join(f"LC-{i:04d},Quay St,{i}.5,{10 + i}" for i in range(1, 10))
    source = "job,zone,dist_mi,dur_min\n" + rows
    claim = "Quay St trip: 9.5 mi in 19 min."
    chunks_ = chunks(source)
    far = [c for c in chunks_ if "LC-0009" not in c]
    signals = support_signals(claim, far[:2], source, far[0], [source], structured=True)
    assert signals.values.missing == ()
    wrong = support_signals(
        "Quay St trip: 9.5 mi in 21 min.", far[:2], source, far[0], [source], structured=True
    )
    assert wrong.values.missing != () or wrong.conflict is not None


def test_thirty_second_round_values() -> None:
    def present(claim: str, evidence: str) -> bool:
        return match_values(read_values(claim), evidence)[0].present

    # a number under a field whose name names no unit is no length, though another field's
    # name says metres ("Lanes: 1" beside "Depth (m): 1.6": 2 ft is 0.61 m, not 1 m)
    record = "Pool: Harcourt Baths\nLanes: 1\nDepth (m): 1.6\nNote: shallow end 0.9 m"
    assert not present("The pool is 2 ft deep.", record)
    for deep in ("1.6 m", "about 5 ft", "5 ft 3 in"):
        assert present(f"The pool is {deep} deep.", record)
    # ... unless a ``units`` field names the unit of every number of the record
    gauge = "station: Pike Ford\nunits: m\nrange_low_m: 0.35\ndepth: 1.2"
    assert present("the gauge shows 120 cm", gauge)
    undeclared = gauge.replace("units: m\n", "")
    assert not present("the gauge shows 120 cm", undeclared)
    # ... (a ``uom`` that names no unit does not), or a heading above the fields names it
    assert not present("it weighs 2.2 lb", "uom: each\nQty: 1\nweight_kg: 3")
    assert present("Leeds is about 200 miles", "Distances (km)\nLeeds: 320")
    assert not present("-6.6 ft", "Floor: -2\nHeight (m): 8.4")
    # ... while a field named by its unit still states its number in that unit
    assert present("about 4 litres", "tank: T2\nvolume_ml: 4000")
    # a rate's period is named on its own line (or its table's header), not on another line
    tariff = "Day hire: 30.00 GBP per day.\nLate return: 12 GBP per hour."
    assert not present("hire is 30 GBP per hour", tariff)
    assert present("day hire is 30 GBP per day", tariff)
    assert present("late return is 12 GBP per hour", tariff)
    # a bare number is no rate's numerator where the text states such quantities
    launches = "Day hire: 30 GBP per day\nDeposit: 50 GBP\nLaunches: 12 per hour"
    assert not present("launches are 12 GBP per hour", launches)
    # a line that names no period takes the one period the text names
    pump = "Pump P3\nFlow (per hour)\nRated: 500 L"
    assert present("the pump moves 500 L per hour", pump)
    table = "| boat | rate (per day) |\n| Skiff | 40 GBP |"
    assert present("the skiff is 40 GBP a day", table)


def test_thirty_second_round_prose_binding() -> None:
    # sentences alike in what they say are told apart by the names they hold
    rules = [
        "Day walks take at most 12 people.",
        "Owl Prowl walks take at most 8 people and leave at dusk.",
    ]
    said = "Owl Prowl walks take up to 12 people."
    assert prose_other_sentence(said, read_values(said), rules) == ("12",)
    right = "Owl Prowl walks take up to 8 people."
    assert prose_other_sentence(right, read_values(right), rules) == ()
    # a capitalised word opening the claim is no name
    open_ = "Weekend sessions are capped at 250 skaters."
    alike = [
        "Sessions on Saturdays and Sundays are capped at 250 skaters.",
        "Disco on Ice sessions at the weekend are capped at 300 skaters.",
    ]
    assert prose_other_sentence(open_, read_values(open_), alike) == ()
    # names that both sentences hold, or neither, tell nothing apart
    plain = "Walks take up to 12 people."
    assert prose_other_sentence(plain, read_values(plain), rules) == ()


_CLIENT = (
    "client: C-44\nowner: Bram Oduya\npet: Juniper\ngroomer: Lewin Adeyemi\n"
    "microchipped: Yes\nnotes: Nervous of dryers; book Lewin Adeyemi or Sal if he is away"
)


def test_thirty_third_round_a_named_field_settles_a_name() -> None:
    # a name the record lacks, where the field the claim names holds another name
    wrong = "His groomer is Tamsin."
    assert name_field_conflict(wrong, ("Tamsin",), _CLIENT) == ("Tamsin",)
    one = support_signals(
        wrong, [_CLIENT], _CLIENT, "groomer: Lewin Adeyemi", [_CLIENT], structured=True
    )
    assert one.conflict == "field_conflict" and not one.rescue_ok
    right = "His groomer is Lewin Adeyemi."
    assert (
        support_signals(
            right, [_CLIENT], _CLIENT, "groomer: Lewin Adeyemi", [_CLIENT], structured=True
        ).conflict
        is None
    )
    # the claim says a name the field holds: no conflict, whatever else it adds
    assert name_field_conflict("His groomer is Lewin, with Tamsin.", ("Tamsin",), _CLIENT) == ()
    # not names: capitals ("OK", "FC"), "I've", identifiers
    for absent in (("OK",), ("FC",), ("I've",), ("C-45",)):
        assert name_field_conflict("His groomer is fine, OK.", absent, _CLIENT) == ()
    # a field holding no name (a yes/no) or prose (a note of many words) settles nothing
    assert name_field_conflict("Microchipped by Tamsin.", ("Tamsin",), _CLIENT) == ()
    assert name_field_conflict("The notes say ask Tamsin.", ("Tamsin",), _CLIENT) == ()
    # a field the claim does not name, or text with no fields
    assert name_field_conflict("Tamsin walks him.", ("Tamsin",), _CLIENT) == ()
    # the name must be the one the claim gives the field, not another of the claim's
    assert name_field_conflict("His groomer bathes him in Hayle.", ("Hayle",), _CLIENT) == ()
    assert name_field_conflict("Tamsin is his groomer.", ("Tamsin",), _CLIENT) == ("Tamsin",)
    # accents, an initial, a title: the same person, or no name
    staff = "keyworker: Zoë Marsh\nskipper: T. Vosper\ndoctor: Dr Tom Ng"
    assert name_field_conflict("Her keyworker is Zoe.", ("Zoe",), staff) == ()
    assert name_field_conflict("The skipper, Talan, sails at six.", ("Talan",), staff) == ()
    assert name_field_conflict("Her doctor is Dr Lee.", ("Lee",), staff) == ("Lee",)
    assert name_field_conflict(wrong, ("Tamsin",), "Lewin Adeyemi grooms him.") == ()


def test_thirty_third_round_antonyms() -> None:
    assert polarity("Fees are decreasing in May.", "Fees are increasing in May.").antonym
    assert polarity("Fees are increasing in May.", "Fees are decreasing in May.").antonym
    assert polarity("A 10% discount applies.", "A 10% surcharge applies.").antonym
    # "high" / "low" and "fit" / "unfit" are no pairs: too many senses ("the high street",
    # "a low clearance" against "high-sided vehicles"; "fit through the door")
    assert polarity("The high street branch closes at 5pm.", "Stock is low.").antonym is None
    assert polarity("The sofa will fit the alcove.", "The old frame was unfit.").antonym is None


def test_thirty_fourth_round_opposites_on_a_field() -> None:
    resident = "resident_id: HM-0231\nfalls_risk: high (score 17, reviewed 2033-05-13)"
    assert polarity("Falls risk: low, reviewed 13 May.", resident).antonym == ("low", "high")
    assert polarity("Falls risk: high, reviewed 13 May.", resident).antonym is None
    # a field named by another word of its value; "on" / "off" only at a clause's end
    meta = "File Name : C22.mp4\nAudio : cabin mic off\nMax Speed : 58 mph"
    assert polarity("Cabin mic was ON.", meta).antonym == ("on", "off")
    assert polarity("The cabin mic was on the dashboard.", meta).antonym is None
    scan = '{\n  "abo_rhd": "B RhD positive",\n  "bag_no": "NB33-600220"\n}'
    assert polarity("The bag is B RhD negative.", scan).antonym == ("negative", "positive")
    row = "ref_code: DRO/PAR/14/5; access_status: unfit for production"
    assert polarity("DRO/PAR/14/5 is fit for production.", row).antonym == ("fit", "unfit")
    # not when the claim says the field's word too, when the unit says the claim's word
    # (two eyes: which one the claim means is unsure), or when no clause speaks of the field
    assert polarity("Falls risk is high, never low.", resident).antonym is None
    eyes = "left_eye_pressure: high\nright_eye_pressure: low"
    assert polarity("Eye pressure low on the right.", eyes).antonym is None
    assert polarity("Stock runs low on Fridays.", resident).antonym is None
    # the opposite must stand by a word of the field, in a short value, beside the held word
    diet = "diet: high fibre, sodium restricted"
    assert polarity("Sodium intake: low.", diet).antonym is None
    vitals = "blood_pressure: 150/95 high; potassium: 3.1 mmol/L (below range)"
    assert polarity("Blood pressure was 150/95 with low potassium.", vitals).antonym is None
    assert polarity("The room is fit for purpose.", row).antonym is None
    # "on" / "off": a field's only as its value's last word, a claim's only as a state
    assert polarity("The delivery was dropped off.", "delivery: on time").antonym is None
    alarm = "alarm: on (armed)\nevent: triggered 03:12"
    assert polarity("At 03:12 the alarm went off.", alarm).antonym is None
    assert polarity("Before take-off the mic was checked.", "mic: off").antonym is None
    assert polarity("Audio off.", "audio: on").antonym == ("off", "on")
    # a claim that counts rows is about the table, not one row's field
    counting = polarity("Two of the five tickets are low priority.", "priority: high", fields=False)
    assert counting.antonym is None


def test_thirty_fourth_round_a_field_names_sort_words_and_their_plurals() -> None:
    from pytest_provenai.attribution.rows import _telling_words

    assert _telling_words("lead_days") == {"lead"}
    assert _telling_words("opening_times") == {"opening"}
    assert _telling_words("dates") == set()
    # words that only begin like a sort word tell
    assert _telling_words("timing") == {"timing"}
    assert _telling_words("dated_by") == {"dated"}


def test_thirty_seventh_round_a_row_that_holds_every_value_is_the_claims() -> None:
    """Three values one row holds name that row before a word in another row's note; a
    name in a short cell still names its row."""
    table = (
        "pool,time,fc,ph,temp,notes\n"
        "Learner,12:20,1.7,7.4,31.4,\n"
        "Learner,15:20,1.6,7.4,31.5,\n"
        'Learner,16:55,2.2,7.3,31.4,"FC >= 2.0 after release, reopened 1700"\n'
    )
    claim = "15:20: FC 1.6, pH 7.4, 31.5."
    assert not row_check(claim, read_values(claim), table).conflict
    wrong = "16:55: FC 1.6, pH 7.4, 31.5."
    assert row_check(wrong, read_values(wrong), table).conflict


def test_thirty_seventh_round_a_log_line_named_by_its_words() -> None:
    """A claim with no time of day is about the one line holding most of its words: a name
    that line lacks and another line has is another line's."""
    log = (
        "2033-10-14 08:40:12 session opened team_lead=D. Brook chairs=3\n"
        "2033-10-14 10:29:51 ALARM chair 3 mixer flow low\n"
        "2033-10-14 10:37:18 bleed stopped volume=300mL chair 3 nurse=M. Tiwari\n"
        "2033-10-14 12:32:14 session closed bags_packed=4\n"
    )
    wrong = "D. Brook was the nurse who stopped the bleed on chair 3."
    assert log_other_line(wrong, read_values(wrong), log) == ("Brook",)
    right = "M. Tiwari was the nurse who stopped the bleed on chair 3."
    assert log_other_line(right, read_values(right), log) == ()
    # a claim that says what two lines say names no one line
    both = "D. Brook opened the session and M. Tiwari stopped the bleed."
    assert log_other_line(both, read_values(both), log) == ()


def test_thirty_seventh_round_a_day_after_a_weekday() -> None:
    assert next(v.kind for v in read_values("tue 21st the pick, W 13 kn")) == "date"


def test_thirty_seventh_round_a_number_named_by_its_word_s_initial() -> None:
    """ "jam 9" is the evidence's ``J09``; "jam 8" is not, nor is "lane 4" ``L14``."""

    def present(claim: str, evidence: str) -> list[bool]:
        return [m.present for m in match_values(read_values(claim), evidence)]

    assert present("forearms in P1 jam 9", "P1  J09  14:33  BRU  #13") == [True, True]
    assert present("forearms in P1 jam 8", "P1  J09  14:33  BRU  #13") == [True, False]
    assert present("lane 4 is shut", "L14 closed") == [False]


def test_thirty_seventh_round_a_long_name_still_names_its_row() -> None:
    """Only a note's words give way to a row holding every value; a long name does not."""
    table = (
        "route,length_km,climb_m,time_h\n"
        "Old Mill loop via Hartley Woods and the weir,12,300,4\n"
        "Castle ridge walk,9,450,3\n"
        "Harbour and lighthouse circuit from the quay,14,120,5\n"
    )
    claim = "The Old Mill loop is 14 km with 120 m of climb and takes 5 hours."
    assert row_check(claim, read_values(claim), table).conflict


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The turnout was 14 voters.", "Ward W14: turnout 22 voters"),
        ("The tent sleeps 4 people.", "Tent model S4, sleeps 2"),
        ("The patient scored 12 on the scale.", "Patient bed S12, score 9"),
        ("We have 8 crates left.", "Crates: 5 (stored in hall H8)"),
    ],
)
def test_thirty_seventh_round_a_count_is_no_code(claim: str, evidence: str) -> None:
    assert not match_values(read_values(claim), evidence)[0].present


def test_thirty_eighth_round_a_unit_ending_a_field_name_need_not_be_said() -> None:
    """ "True heading 214°" names ``true_heading_deg`` without saying "deg": the field's 211
    settles it, though another field (``cog_deg``) holds 214."""
    record = '{\n  "sog_kts": 7.4,\n  "cog_deg": 214.0,\n  "true_heading_deg": 211\n}'
    wrong = "True heading 214°."
    assert field_conflict(wrong, read_values(wrong), record) == ("214",)
    right = "True heading 211°."
    assert field_conflict(right, read_values(right), record) == ()


def test_thirty_eighth_round_a_log_line_s_pairs_are_fields() -> None:
    """ "key=value" pairs of a log line are fields: "only 2 hints" against ``hints=3``."""
    log = (
        "2033-03-19 12:02:10 SUB GAME START  timer=60:00\n"
        "2033-03-19 12:56:21 SUB GAME END  result=ESCAPED  time=54:11  hints=3\n"
    )
    wrong = "The birthday team escaped with 54:11 and only 2 hints."
    assert field_conflict(wrong, read_values(wrong), log) == ("2",)
    right = "The birthday team escaped with 54:11 and 3 hints."
    assert field_conflict(right, read_values(right), log) == ()
    # two groups that each end a game: which the claim speaks of is unsure
    two = log + "2033-03-19 17:33:02 SUB GAME END  result=FAILED  time=60:00  hints=2\n"
    assert field_conflict(wrong, read_values(wrong), two) == ()


def test_thirty_eighth_round_a_table_aligned_by_spaces_is_read_by_rows() -> None:
    """A plain-text table with no rule, its columns aligned by spaces: each row a record."""
    rota = (
        "POOL STAFF ROTA\n"
        "date: 2033-03-14 (Mon)   version: 3\n"
        "NAME               ROLE  NPLQ_EXPIRY  START  END\n"
        "Jonah Okoye        DM    2033-12-02   1400   2230\n"
        "Priya Lambeth      LG    2034-02-19   1400   2200\n"
        "Sade Fairbrother   ST    -            1530   1800\n"
        "NOTES\n"
        "- CR NPLQ expires end of month\n"
    )
    found = records(rota)
    assert found is not None
    assert "NAME: Priya Lambeth\nROLE: LG\nNPLQ_EXPIRY: 2034-02-19\nSTART: 1400\nEND: 2200" in found
    wrong = "Priya's NPLQ good till 2033-12-02."
    assert row_check(wrong, read_values(wrong), rota).conflict
    right = "Priya's NPLQ good till 2034-02-19."
    assert not row_check(right, read_values(right), rota).conflict
    # words two spaces apart over lines that do not line up are no table
    prose = "Notes  from  today\nWe met at the hall and agreed the plan.\nNothing else to add here."
    assert records(prose) is None


def test_thirty_eighth_round_an_amount_worked_out_from_a_field_is_not_the_field_s() -> None:
    """ "sixty after her deposit came off" is no value of ``deposit``."""
    log = (
        "2033-03-17 10:02 SALE groom=full gross=70.00 deposit=10.00 paid=60.00 card\n"
        "2033-03-17 12:40 SALE groom=bath gross=48.00 deposit=10.00 paid=38.00 cash\n"
    )
    claim = "Biscuit's was the biggest bill, seventy quid gross, sixty after her deposit came off."
    assert field_conflict(claim, read_values(claim), log) == ()


@pytest.mark.parametrize(
    ("claim", "evidence", "conflict"),
    [
        (
            "running past curfew is £75 an hour",
            "6. Curfew. Late exit is charged at £75 per half hour or part of it.",
            True,
        ),
        (
            "After day 30 a storage charge of 1,50 EUR per hour applies.",
            "Storage after day 30, band C only, per day              1.50",
            True,
        ),
        ("Rooms are £80 a week.", "Room rate: £80 per night, breakfast £12 per person.", True),
        # the claim's rate, among others, or no rate at all in the evidence: nothing settled
        (
            "Lessons are £38 an hour.",
            "Lessons are charged at £38 per hour in a manual car and £41 per hour in an automatic.",
            False,
        ),
        ("Parking is £3 per hour.", "Parking costs £3.", False),
        ("The storage charge is 1,50 EUR per day.", "Storage, per day  1.50", False),
        ("Breakfast is £12 a head.", "Room rate: £80 per night, breakfast £12 per person.", False),
    ],
)
def test_thirty_eighth_round_a_rate_per_something_else(
    claim: str, evidence: str, conflict: bool
) -> None:
    assert bool(rate_conflict(claim, read_values(claim), evidence)) is conflict


@pytest.mark.parametrize(
    ("claim", "record"),
    [
        ("Net pay was £2,200.", "gross: £2,200\nnet: £1,800\ntax: £400"),
        ("The refund was £60.", "charge: £60\nrefund: £40"),
        ("The total after VAT was £100.", "subtotal: £100\nvat: £20\ntotal: £120"),
    ],
)
def test_thirty_eighth_round_a_field_named_by_a_word_of_working_still_settles_it(
    claim: str, record: str
) -> None:
    assert field_conflict(claim, read_values(claim), record)


def test_thirty_eighth_round_a_time_zone_ending_a_field_name_must_be_said() -> None:
    """ "13:02 BST" may be ``received_utc: 12:02``: the zone is no unit to drop."""
    claim = "Received at 13:02 BST."
    assert field_conflict(claim, read_values(claim), "id: 4\nreceived_utc: 12:02") == ()


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Rent is £900 a month.", "Rent: £900 per calendar month, payable a week in advance."),
        ("Rooms are £80 per night.", "Rooms: £80 per person per night."),
        ("The salary is £40,000 a year.", "Salary £40,000 p.a., paid monthly."),
        ("Extra time is £20 an hour.", "£20 per additional hour, max 3 hours a day."),
        ("Dinner is £12 a person.", "Dinner £12 pp, served daily."),
        (
            "full livery's £172 a week, part livery £118",
            "Weekly livery fees, payable monthly in advance: full livery £172.00; part £118.00.",
        ),
    ],
)
def test_thirty_eighth_round_a_rate_is_the_one_said_of_the_amount(
    claim: str, evidence: str
) -> None:
    """Another rate in the same line is not the amount's."""
    assert rate_conflict(claim, read_values(claim), evidence) == ()


GAUGE = (
    "reading_at,gauge,station,level_m\n"
    "2034-02-03T06:00:00,RG-4,Millbrook weir,1.42\n"
    "2034-02-03T06:00:00,RG-7,Cold Harbour,0.88\n"
    "2034-02-03T07:00:00,RG-4,Millbrook weir,1.57\n"
    "2034-02-03T07:00:00,RG-7,Cold Harbour,0.91\n"
    "2034-02-03T08:00:00,RG-4,Millbrook weir,1.71\n"
    "2034-02-03T08:00:00,RG-7,Cold Harbour,0.97\n"
)


def test_forty_sixth_round_a_clause_named_by_its_values_is_the_same_entity_s_row() -> None:
    """ "then 1.57 m by 07:00": the clause names no row by words, its time names the
    07:00 reading of the same gauge, which holds its level too."""
    right = (
        "The Millbrook weir gauge read 1.42 m at 06:00, rising to 1.57 m by 07:00 and 1.71 m"
        " at 08:00."
    )
    assert not row_check(right, read_values(right), GAUGE).conflict
    # a level with another reading's time is still another row's value
    swapped = "The Millbrook weir gauge read 1.42 m at 06:00, rising to 1.71 m by 07:00."
    assert row_check(swapped, read_values(swapped), GAUGE).conflict
    # a clause whose values are the other gauge's, said of Millbrook weir
    other = "The Millbrook weir gauge read 1.42 m at 06:00, then 0.91 m at 07:00."
    assert row_check(other, read_values(other), GAUGE).conflict


def test_forty_sixth_round_a_note_s_words_are_no_state_the_listed_rows_share() -> None:
    """ "Open: B1, B2, B3" lists three rows, though B2's note says "open" by chance."""
    berths = (
        "berth | status | notes\n"
        "B1 | available | -\n"
        "B2 | available | keep the gate open at night for the night watch crew\n"
        "B3 | available | -\n"
        "B4 | closed | dredging\n"
    )
    right = "Open: B1, B2, B3 (3)"
    assert not row_check(right, read_values(right), berths).conflict
    # a state a short cell holds still must be every listed row's
    wrong = "Closed: B3, B4"
    assert row_check(wrong, read_values(wrong), berths).conflict


def test_forty_sixth_round_counts_of_a_log_s_lines_and_counts_after_a_heading() -> None:
    """A log's timestamped lines are what a claim counts ("two delivered and one bounced"),
    a word matched by its stem ("requests" counts the ``REQUESTED`` lines); a count after a
    heading's colon ("Bounced: 1") counts the lines the heading names."""
    log = (
        "2034-05-02 09:01:12 REQUESTED batch=A-11 by=ops\n"
        "2034-05-02 09:03:40 DELIVERED batch=A-11 to=north-depot\n"
        "2034-05-02 09:15:05 REQUESTED batch=A-12 by=ops\n"
        "2034-05-02 09:44:19 BOUNCED batch=A-12 reason=address\n"
        "2034-05-02 10:02:51 REQUESTED batch=A-13 by=ops\n"
        "2034-05-02 10:30:00 DELIVERED batch=A-13 to=south-depot\n"
    )
    right = "The dispatch log has three requests placed, two delivered and one bounced."
    assert counted(right, read_values(right), log) == ("three", "two", "one")
    wrong = "The dispatch log has four requests placed."
    assert counted(wrong, read_values(wrong), log) == ()
    assert counted("Bounced: 1", read_values("Bounced: 1"), log) == ("1",)
    assert counted("Bounced: 2", read_values("Bounced: 2"), log) == ()
    # a log the table reader takes for a headed table still counts its lines
    piped = (
        "2034-05-02 09:01 | A-11 | REQUESTED | ops\n"
        "2034-05-02 09:03 | A-11 | DELIVERED | north\n"
        "2034-05-02 09:15 | A-12 | REQUESTED | ops\n"
        "2034-05-02 09:44 | A-12 | BOUNCED | address\n"
    )
    four = "The dispatch log shows four entries."
    assert counted(four, read_values(four), piped) == ("four",)


def test_forty_sixth_round_a_count_that_heads_a_list_or_names_a_category() -> None:
    """ "2 done: …" counts the rows its heading word names; "6 ground n 2 air" counts the
    rows whose cell is that word; a number over twelve counts the whole table only."""
    jobs = (
        "job | crew | kind | status\n"
        "J-1 | Ames | ground | completed\n"
        "J-2 | Ames | ground | completed\n"
        "J-3 | Brook | air | booked\n"
        "J-4 | Brook | ground | booked\n"
        "J-5 | Cole | air | cancelled\n"
    )
    done = "2 done: J-1 and J-2"
    assert counted(done, read_values(done), jobs) == ("2",)
    three = "3 done: J-1, J-2 and J-3"
    assert counted(three, read_values(three), jobs) == ()
    kinds = "5 jobs, 3 ground n 2 air"
    assert counted(kinds, read_values(kinds), jobs) == ("5", "3", "2")
    wrong = "5 jobs, 4 ground n 1 air"
    assert counted(wrong, read_values(wrong), jobs) == ("5",)
    rows = "".join(f"S-{i} | pool | booked\n" for i in range(13))
    table = "session | area | status\n" + rows
    thirteen = "13 sessions on the sheet"
    assert counted(thirteen, read_values(thirteen), table) == ("13",)
    fourteen = "14 sessions on the sheet"
    assert counted(fourteen, read_values(fourteen), table) == ()


def test_forty_sixth_round_two_values_present_in_the_claim_s_row_are_valued() -> None:
    """Two values or more, all in the claim's row, no name the source lacks, nothing in
    conflict: :attr:`SupportSignals.valued` (the verdict's ``values_borne``)."""

    def valued(claim: str) -> bool:
        rows = records(GAUGE) or []
        return support_signals(claim, rows[:1], GAUGE, rows[0], [GAUGE], structured=True).valued

    assert valued("Millbrook weir was up to 1.57 m by 07:00.")
    assert not valued("Millbrook weir was up to 1.57 m.")  # one value only
    assert not valued("Millbrook weir was up to 1.66 m by 07:00.")  # a value missing
    assert not valued("Millbrook weir was up to 1.71 m by 07:00.")  # another row's value
    assert not valued("The Ashby weir was up to 1.57 m by 07:00.")  # a name the source lacks
    # prose binds no value to another: both present is no evidence they belong together
    prose = "Route 157A was assigned in 1939. It runs through Albany County."
    swapped = "Albany County 157A was assigned in 1939."
    assert not support_signals(swapped, [prose], prose, prose, [prose], structured=False).valued


def test_forty_sixth_round_the_part_of_the_day_after_a_weekday() -> None:
    """ "6:24 on tuesday evening" is 18:24, not the 06:24 of the evidence."""
    evening = "it only reached top temperature at 6:24 on tuesday evening"
    assert match_values(read_values(evening), "06:24 TOP TEMP")[0].present is False
    assert match_values(read_values(evening), "18:24 TOP TEMP")[0].present is True
    morning = "it went in at 9:04 tuesday morning"
    assert match_values(read_values(morning), "09:04 LOADED")[0].present is True
    assert match_values(read_values(morning), "21:04 LOADED")[0].present is False
    # with no part of the day said, either half still matches
    bare = "it went in at 9:04 on tuesday"
    assert match_values(read_values(bare), "21:04 LOADED")[0].present is True


def test_forty_sixth_round_what_the_review_found() -> None:
    """Contradictions the first form of this round's rules let through (a helper's review)."""
    vitals = (
        "time,bed,patient,temp_c\n"
        "08:00,Bed 4,Ana Ruiz,38.2\n08:00,Bed 7,Tom Hale,37.0\n"
        "12:00,Bed 4,Ana Ruiz,37.8\n12:00,Bed 7,Tom Hale,36.6\n"
    )
    # a clause named by its values only: never where the claim names no entity ...
    nobody = "Her temperature was 38.2 at 08:00, easing to 36.6 by 12:00."
    assert row_check(nobody, read_values(nobody), vitals).conflict
    ships = (
        "date,vessel,teu\n2034-03-06,Aurora,120\n2034-03-06,Aurora Star,60\n"
        "2034-03-06,Baltic Wind,44\n2034-03-07,Aurora,80\n2034-03-07,Aurora Star,95\n"
        "2034-03-07,Baltic Wind,50\n"
    )
    # ... nor in a row with a word the claim's row lacks ("Aurora Star" is not "Aurora")
    star = "Aurora unloaded 120 TEU on 6 March, then 95 TEU on 7 March."
    assert row_check(star, read_values(star), ships).conflict
    right = "Aurora unloaded 120 TEU on 6 March, then 80 TEU on 7 March."
    assert not row_check(right, read_values(right), ships).conflict
    # a note's word is a state the other listed rows must hold unless they share a status
    flights = (
        "flight | gate | remarks\n"
        "BA-101 | 4 | cancelled due to fog at the destination airport\n"
        "BA-205 | 6 | boarding on schedule from gate six\n"
        "BA-310 | 2 | -\n"
    )
    cancelled = "Cancelled: BA-101, BA-205"
    assert row_check(cancelled, read_values(cancelled), flights).conflict
    clinic = (
        "patient | clinic | notes\n"
        "P-11 | cardio | discharged home on Tuesday with a follow-up booked\n"
        "P-12 | cardio | still on the ward awaiting echo results\n"
        "P-13 | renal | -\n"
    )
    discharged = "Discharged: P-11, P-12"  # a shared clinic is a category, no state
    assert row_check(discharged, read_values(discharged), clinic).conflict
    # counts: every word that picks lines out, not one of them; no qualifier no line holds
    log = (
        "2034-05-02 09:01 DELIVERED parcel=P-11 late\n"
        "2034-05-02 09:20 DELIVERED parcel=P-12\n"
        "2034-05-02 09:41 DELIVERED parcel=P-13\n"
        "2034-05-02 10:05 RETURNED parcel=P-14\n"
    )
    for wrong in ("3 late deliveries.", "The log has 4 failed entries.", "Parcels returned: 4"):
        assert counted(wrong, read_values(wrong), log) == (), wrong
    assert counted("Late deliveries: 1", read_values("Late deliveries: 1"), log) == ("1",)
    # a word every row holds bears out a count of all rows only as a total ("of the 14")
    club = "pupil | club\n" + "".join(
        f"P-{i} | {'drama' if i == 0 else 'chess'}\n" for i in range(14)
    )
    assert counted("14 pupils in drama club", read_values("14 pupils in drama club"), club) == ()
    part = "1 of the 14 pupils is in drama club"
    assert counted(part, read_values(part), club) == ("1", "14")
    # a label's number is no count: "Bed: 2" of a bed column, "berth 2 north"
    ward = "patient | bed | status\nAna Ruiz | 4 | stable\nTom Hale | 2 | stable\n"
    bed = "Ana Ruiz. Bed: 2"
    assert counted(bed, read_values(bed), ward) == ()
    berths = (
        "ship | berth | side\nAurora | 5 | north\nBaltic Wind | 7 | north\nCape Rose | 2 | south\n"
    )
    north = "Aurora is moored at berth 2 north."
    assert counted(north, read_values(north), berths) == ()
    # the part of the day settles a time read beside a 24-hour one
    pump = "The pump tripped at 13:10 and came back on at 6:05 that evening."
    assert [m.present for m in match_values(read_values(pump), "13:10 TRIP\n06:05 RESTART")] == [
        True,
        False,
    ]
    # two values present, each under another field than the one the claim names: not valued
    port = "vessel | arrived | departed\nAurora | 09:00 | 10:30\nCape Rose | 11:15 | 13:40\n"
    rows = records(port) or []
    swapped = "Aurora arrived at 10:30 and departed at 09:00."
    assert not support_signals(swapped, rows[:1], port, rows[0], [port], structured=True).valued


def test_forty_seventh_round_minutes_to_or_past_a_named_hour() -> None:
    """ "one minute to midnight" is 23:59, not a minute's duration and midnight;
    "ten past noon" 12:10; "twelve o'clock at night" midnight, not noon."""
    expiry = "The bag expires at one minute to midnight on 18 November 2033."
    assert [(v.kind, v.key) for v in read_values(expiry)] == [
        ("time", 23 * 60 + 59),
        ("date", (2033, 11, 18)),
    ]
    assert match_values(read_values(expiry), "expires 2033-11-18 23:59")[0].present
    assert not match_values(read_values(expiry), "expires 2033-11-18 23:00")[0].present
    assert [v.key for v in read_values("lunch from ten past noon")] == [12 * 60 + 10]
    assert [v.key for v in read_values("back by five past midnight")] == [5]
    assert [v.key for v in read_values("twelve o'clock at night")] == [0]
    # after "from" or "between" the two hours are a range's ends (a helper's review)
    saturday = "The shop is open from ten to noon on Saturdays."
    assert [(v.kind, v.key) for v in read_values(saturday)][:2] == [("time12", 600), ("time", 720)]
    assert [v.key for v in read_values("open from ten to four")] == [600, 240]
    # the small hours of the night stay in the morning, whichever way the time is said
    assert [v.key for v in read_values("half past two at night")] == [150]
    assert [v.key for v in read_values("12:30 at night")] == [30]
    assert [v.key for v in read_values("12:30 in the afternoon")] == [12 * 60 + 30]
    assert [v.key for v in read_values("five past eleven at night")] == [23 * 60 + 5]


def test_forty_seventh_round_a_superlative_reads_the_minus_sign() -> None:
    """ "at its warmest ... -10.6 °C": -10.6 is the coldest of the column, though 10.6 would
    be the largest number; the value may stand in several rows of one reading."""
    brine = (
        "timestamp,sensor,brine_supply_c\n"
        "2033-11-19T15:00:00,IS-01,-9.8\n2033-11-19T15:00:00,IS-02,-9.8\n"
        "2033-11-19T16:00:00,IS-01,-9.4\n2033-11-19T16:00:00,IS-02,-9.4\n"
        "2033-11-19T16:45:00,IS-01,-10.6\n2033-11-19T16:45:00,IS-02,-10.6\n"
    )

    def conflict(claim: str) -> bool:
        return bool(superlative_conflict(claim, read_values(claim), brine))

    assert conflict("The brine supply was at its warmest at 16:45, at -10.6°C.")
    assert not conflict("The brine supply was at its coldest at 16:45, at -10.6°C.")
    assert not conflict("The brine was warmest at 16:00, at -9.4 °C.")
    assert conflict("The brine was coldest at 16:00, at -9.4 °C.")
    # the largest fall is the one of the largest size, whatever its sign
    change = "region,change_pct\nNorth,-3.2\nSouth,-1.0\nEast,0.5\nWest,1.8\n"
    largest = "The North saw the largest drop, at -3.2%."
    assert superlative_conflict(largest, read_values(largest), change) == ()
    smallest = "The North saw the smallest drop, at -3.2%."
    assert superlative_conflict(smallest, read_values(smallest), change) != ()


def test_forty_seventh_round_raise_is_an_increase() -> None:
    claim = "the cooperative is reducing its per-kg rate for hotels"
    unit = "The cooperative will raise its per-kg rate for hotels from INR 38 to INR 41."
    assert polarity(claim, unit).antonym is not None
    # the unit saying the claim's own word too is no conflict
    assert polarity(claim, unit + " " + claim).antonym is None


def test_forty_seventh_round_each_list_of_a_json_object_is_a_table() -> None:
    """A family-tree export holds "people" and "media": each person is a row (the longest
    list is the table), so the person's own ``verified: false`` is what a claim about that
    person is read against."""
    export = (
        '{"client": "QFR-2034-017", "software": "KinLedger 5.3.2",\n'
        ' "people": [\n'
        '  {"id": "I04", "name": "George Quarrendon", "born": "1866", "verified": true},\n'
        '  {"id": "I05", "name": "Josiah Quarrendon", "born": "c.1828", "verified": false}],\n'
        ' "media": [{"file": "IMG_1135.jpg", "caption": "headstone", "linked_to": ["I05"]}]}'
    )
    found = records(export)
    assert found is not None and len(found) == 3  # the head (with the picture), two people
    claim = "Josiah Quarrendon (c.1828): already verified"
    check = row_check(claim, read_values(claim), export)
    assert check.structured and "Josiah" in check.row
    assert polarity(claim, check.row).flag == "verified: False"
    george = "George Quarrendon (1866): verified"
    assert polarity(george, row_check(george, read_values(george), export).row).flag is None
    # lists of one length are no one table: a reading is no threshold's row
    station = (
        '{"station": "Kestrel Point",'
        ' "readings": [{"sensor": "A", "value": 3.1}, {"sensor": "B", "value": 2.4}],'
        ' "thresholds": [{"sensor": "A", "value": 5.0}, {"sensor": "B", "value": 4.5}]}'
    )
    highest = "Sensor A gave the highest reading, 3.1."
    assert superlative_conflict(highest, read_values(highest), station) == ()


def test_forty_seventh_round_not_until_says_when_not_whether() -> None:
    """ "will not reopen until 14:00" says the bridge reopens at 14:00."""
    unit = "Millrace Bridge closes at 07:45 and will not reopen until 14:00, once swept."
    assert not polarity("Millrace Bridge reopens at 14:00.", unit).negation
    assert not polarity("Millrace Bridge won't reopen till 14:00.", "It reopens at 14:00.").negation
    # a negation no time ends is still one, and one joined to the "until" by "and"
    assert polarity(
        "Millrace Bridge does not reopen today.", "Millrace Bridge reopens today."
    ).negation
    cafe = "The café doesn't take cards and stays open until 18:00."
    assert polarity("The café takes cards and stays open until 18:00.", cafe).negation
    vaccine = "The new vaccine will not be approved for children until the trials finish."
    assert polarity("The new vaccine is approved for children.", vaccine).negation


def test_forty_eighth_session_not_until_reads_the_time_as_values_do() -> None:
    """ "not … until" is read through ``read_values``: a spoken time or a span before
    "after" ends it like a clock time does; a count after "until" is a condition."""
    assert not polarity(
        "The ferry sails at half past ten.", "The ferry won't sail until half past ten."
    ).negation
    assert not polarity(
        "The balance is settled 28 weeks after the invoice date.",
        "The balance need not be settled until 28 weeks after the invoice date.",
    ).negation
    assert polarity(
        "Mr Okoro's loan is approved.",
        "Mr Okoro's loan will not be approved until 3 references arrive.",
    ).negation


def test_forty_eighth_session_durations_with_commas_and_the_one_you_want() -> None:
    """ "3 hours, 4 minutes and 52 seconds" is one duration (a clock's 3:04:52); a time and
    a length with a comma between stay two values; "the one you want" counts nothing."""
    said = "The tape runs to 2 hours, 10 minutes and 5 seconds."
    assert [v.text for v in read_values(said)] == ["2 hours, 10 minutes and 5 seconds"]
    assert [m.present for m in match_values(read_values(said), "Length : 2:10:05")] == [True]
    assert [m.present for m in match_values(read_values(said), "Length : 2:10:50")] == [False]
    assert [v.kind for v in read_values("LW wed 0912hrs, 2.3m")] == ["time", "quantity"]
    assert [v.kind for v in read_values("ETA 1400 hrs, 30 minutes late")] == ["time", "quantity"]
    assert [v.text for v in read_values("The one you want is tape_7.wav.")] == ["tape_7.wav"]
    assert [v.text for v in read_values("That's the one that broke.")] == []
    assert [v.key for v in read_values("Repairs: just the one, the boiler.")] == [1.0]
    assert [v.key for v in read_values("I have the one sheet left.")] == [1.0]
    assert [v.key for v in read_values("We have the one in stock.")] == [1.0]


def test_forty_eighth_session_an_abbreviated_word_glued_to_its_number() -> None:
    """ "rd3" / "bd1" / "wk12" against "round 3" / "board: 1" / "Week #12"; not a range's
    first number, not another number, not another word."""

    def present(claim: str, evidence: str) -> list[bool]:
        return [m.present for m in match_values(read_values(claim), evidence)]

    assert present("rd3 bd1 drawn", "Round 3, Board 1: drawn") == [True, True]
    assert present("wk12 rota", "Week #12 rota") == [True]
    assert present("bd1 drawn", "boards: 1-7") == [False]
    assert present("bd4 drawn", "board 14") == [False]
    assert present("rd3 drawn", "Round 3.5") == [False]
    assert present("rd3 drawn", "Board 3, Round 2") == [False]
    # a table of cut words, not "letters in order": "wk" is not "worked", "rd" not "ranked"
    assert present("wk12 rota", "week 14; the crew worked 12 shifts") == [False]
    assert present("rd3 drawn", "Team ranked 3, playing in round 5") == [False]


def test_forty_ninth_session_high_and_low_given_to_one_noun() -> None:
    """ "high" / "low" and "positive" / "negative" count in prose and log lines when both
    sides give them to one noun; a different noun, or a unit that says both, settles
    nothing."""
    log = "2033-11-19 13:38 RS-02 E-217 hydraulic pressure low - cut aborted"
    said = "E-217 was logged as a high hydraulic pressure fault."
    assert polarity(said, log).antonym == ("high", "low")
    assert polarity("E-217 was logged as a low hydraulic pressure fault.", log).antonym is None
    lab = "The ferritin screen was negative on 3 May."
    assert polarity("The ferritin screen was positive.", lab).antonym == ("positive", "negative")
    # another noun: "the high street" is no level of stock
    assert polarity("The high street branch closes at 5pm.", "Stock is low.").antonym is None
    assert polarity("Water was high at the weir.", "A low bridge crosses the weir.").antonym is None
    # the unit says the claim's word too: which one the claim means is unsure
    tides = "Low tide 12:05, high tide 18:10."
    assert polarity("The tide is high at 12:05.", tides).antonym is None


def test_forty_ninth_session_a_field_said_of_another_person_negates_nothing() -> None:
    """A yes/no field given, in a claim of several clauses, only to a named person the
    record does not hold ("<First Last> as a <field>") is another record's."""
    member = "member_id: M-046\nname: Callum Strand\ngrade: trainee\nparty_leader: no"
    both = "The database lists Callum Strand as a trainee and Tobias Wrenfield as a party leader."
    assert not polarity(both, member).conflict
    # said of the record's own person, the field still contradicts
    assert polarity("Callum Strand is a trainee and a party leader.", member).flag
    assert polarity("Callum Strand is a party leader.", member).flag


def test_forty_ninth_session_close_that_is_near_or_a_street_is_not_shut() -> None:
    """ "came close", "as close to", a street called "… Close": no opposite of "open"; the
    verb still is."""
    skate = "Lunchtime public skate: 231 booked, rink open"
    assert (
        polarity("The lunchtime skate came close as well, with 231 booked.", skate).antonym is None
    )
    assert polarity("Park as close to the rink as you can; it is open.", skate).antonym is None
    street = "Fennimore Close: bins emptied Tuesday; depot open"
    assert polarity("Bins on Fennimore Close are emptied Tuesday.", street).antonym is None
    assert polarity("The rink will close at lunchtime.", skate).antonym == ("close", "open")
    assert polarity("The depot is open Tuesday.", "The depot will close on Tuesday.").antonym


def test_forty_ninth_session_words_in_a_sense_no_opposite_has() -> None:
    """ "raised" a deviation is filed, not increased; "unsanctioned" agrees with
    ``sanctioned: False``. The other senses still oppose."""
    crf = "visit_status: completed - out of window (deviation PD-0093)\ndose: 100 mg (dose reduced)"
    filed = "The visit was completed out of window, so deviation PD-0093 was raised."
    assert polarity(filed, crf).antonym is None
    assert polarity("The nurse raised a concern about the dose.", crf).antonym is None
    assert polarity("The dose was raised to 150 mg.", crf).antonym == ("raised", "reduced")
    bout = "bout_id: BRD-34-04\nhome: Brackwell Rust Belles\nsanctioned: False"
    assert polarity("Rust Belles at half 7, unsanctioned.", bout).antonym is None
    sanctioned = bout.replace("False", "True")
    assert polarity("Rust Belles at half 7, unsanctioned.", sanctioned).antonym == (
        "unsanctioned",
        "sanctioned",
    )


def test_forty_ninth_session_a_negation_just_after_if_is_a_condition() -> None:
    """A negation a few words after "if" / "unless" / "whether" states a condition, not a
    fact; one further on, after "and", or in a code ("Form IF-12") still negates."""
    appt = "client: Renata Szabo\ndeposit_status: requested\nnotes: hold released if deposit not in"
    assert not polarity("Renata Szabo's deposit is the only one out.", appt).negation
    assert polarity("The deposit was not requested from Renata Szabo.", appt).negation
    rain = "Match cancelled due to rain."
    assert polarity("Even if it rains the match is not cancelled.", rain).negation
    assert polarity("Form IF-12 has not been signed.", "Form IF-12 signed by the tenant.").negation
    dnd = "If DND is on at 16:00 and the guest can be reached, staff wait."
    assert polarity(
        "If DND is on at 16:00 and the guest cannot be reached, staff wait.", dnd
    ).negation


def test_forty_ninth_session_review_cases_stay_conflicts() -> None:
    """What the first review of this round's rules found them getting wrong: each now
    decides as it should (a conflict where the two sides disagree, none where they agree)."""
    # another noun beside "high" / "low", another machine, a clause the claim does not say
    assert (
        polarity("Assessed as high risk of falls.", "Score 8: low risk of pressure ulcers").antonym
        is None
    )
    assert polarity("CPU usage high on web-01.", "web-02 CPU usage low").antonym is None
    assert polarity("Bookings were high in August.", "Bookings low in February").antonym is None
    # "raised" a quantity, "cleared" an alarm, a capitalised verb "Close"
    assert polarity(
        "Ops raised the alert threshold to 95%.", "Alert threshold lowered to 80%."
    ).antonym
    assert polarity("Ticket priority was raised to P1.", "Ticket priority lowered to P3.").antonym
    assert polarity("The zone 3 alarm was cleared for the night.", "Zone 3 alarm active").antonym
    assert polarity("Alarm cleared to normal.", "Zone 3 alarm active").antonym
    assert polarity("Applications Close 5 May.", "Applications open until 31 May.").antonym
    # a field given to no named person, or a record that names no person
    paid = "ref: B-1\ndeposit_paid: no\nname: Ann Lee"
    assert polarity("Booking B-1 is confirmed, and the deposit was paid by Tom Baker.", paid).flag
    member = "name: Callum Strand\nparty_leader: no"
    assert polarity("Callum is a trainee, and Sarah Khan says he is a party leader.", member).flag
    assert polarity(
        "Last Friday he trained, and The Riverside has him as a party leader.", member
    ).flag
    staff = "staff_id: S-12\nrole: nurse\nfirst_aider: no"
    assert polarity("Staff S-12 is a nurse, and Maria Lopez is a first aider.", staff).flag
    # a condition three words long at most, no article, no capital
    rain = "Match cancelled due to rain."
    assert polarity("If wet the match is not cancelled.", rain).negation
    assert polarity("Chase if overdue Invoice not paid", "Invoice paid").negation
    # a claim that negates the bare word agrees with the prefixed one
    terms = "refundable: no\nterms: non-refundable deposit"
    assert not polarity("The deposit is not refundable.", terms).conflict
    # one field says no, another yes: the prefixed word still conflicts
    jabs = "vaccinated_flu: no\nvaccinated_mmr: yes"
    assert polarity("The child is unvaccinated.", jabs).antonym == ("unvaccinated", "vaccinated")


def test_forty_ninth_session_second_review_cases() -> None:
    """What the second review of this round's rules found them getting wrong: each now
    decides as the old code did."""
    # a negated, conditional, capitalised or set-phrase "high"; another clause's words
    low_bp = "Blood pressure low."
    assert polarity("High blood pressure was never recorded.", low_bp).antonym is None
    assert (
        polarity("The High Court backlog figures were out.", "Court backlog low.").antonym is None
    )
    assert (
        polarity("Attendance at the high school was counted.", "School attendance low.").antonym
        is None
    )
    assert polarity("Page on-call if CPU usage is high.", "CPU usage low.").antonym is None
    sodium = "Sodium levels low."
    assert polarity("Sodium was checked; potassium levels were high.", sodium).antonym is None
    # a condition that hedges or names a subject is no condition
    refunds = "Refunds are given within 14 days."
    assert polarity("Unless stated otherwise no refunds are given.", refunds).negation
    assert polarity("If asked staff do not share passwords.", "Staff share passwords.").negation
    # a person named as the object of another verb keeps the record's field
    member = "name: Callum Strand\nparty_leader: no"
    replaced = "In March, Callum Strand replaced Tobias Wrenfield as party leader."
    assert polarity(replaced, member).flag
    # "raised" after "per", before a number; the claim says both "open" and "close"
    price = "Price per order reduced last month."
    assert polarity("The price per order was raised last month.", price).antonym
    assert polarity("Order 4471 was raised 20% after review.", "Order 4471 reduced 20%.").antonym
    rink = "The rink will close at 14:00."
    assert polarity("The rink is open; attendance came close to a record.", rink).antonym is None
    # a prefixed word only some bare uses of which the claim negates
    fees = "deposit: non-refundable\nbooking_fee: non-refundable"
    both = "The deposit is refundable, but the booking fee is not refundable."
    assert polarity(both, fees).antonym == ("refundable", "non-refundable")


def test_fiftieth_session_a_negated_opposite_agrees() -> None:
    """ "no balance outstanding" says the opposite of "outstanding": it agrees with "paid in
    full" (a probe's control was blocked by it); an opposite the unit says without a
    negation, or once without one, still conflicts."""
    account = "account_status: active - no balance outstanding"
    assert polarity("His course fees have been paid in full.", account).antonym is None
    owed = "account_status: active - balance outstanding"
    assert polarity("His course fees have been paid in full.", owed).antonym == (
        "paid",
        "outstanding",
    )
    mixed = "deposit: no balance outstanding\nfinal_invoice: £240 outstanding"
    assert polarity("The final invoice has been paid.", mixed).antonym == ("paid", "outstanding")


# forty-fifth round: what a helper's invented traces showed passing (texts written anew here)

HALL_RULES = [
    "3. Hire periods.",
    "Halls are hired by the half day; a half day runs for at most four hours.",
    "4. Refunds.",
    "Bookings cancelled more than 14 days ahead are refunded; a late cancellation "
    "within 21 days is refunded at half.",
]


def test_forty_fifth_round_a_measure_of_its_own_unit_in_the_clause_sentence() -> None:
    """A clause whose other value is in its sentence is still read against that sentence
    when the sentence states another measure of the value's own unit ("within 30 days"
    against "within 21 days", a "14 days" elsewhere); a measure of another unit keeps the
    clause joining two sentences."""
    policy = [
        "Tools are lent for 14 days at a time.",
        "Where a tool is returned damaged, one repair within 21 days is free of charge.",
    ]
    claim = "Where a tool comes back damaged, one repair within 14 days is free of charge."
    assert prose_other_sentence(claim, read_values(claim), policy) == ("14 days",)
    # another unit in that sentence ("2 weeks to 3 months") is no rival of "45 minutes"
    prices = ["Puppy intro (2 weeks to 3 months), 1 visit, 28.00, 45", "Walk, 30 minutes, 9.00"]
    claim = "The puppy intro is one visit for 30 minutes."
    assert prose_other_sentence(claim, read_values(claim), prices) == ()


def test_forty_fifth_round_the_parts_of_a_semicolon_sentence() -> None:
    """A semicolon parts what a sentence says of two things: the call time is the second
    part's, whatever the first holds; a part that only goes on with the other's predicate
    ("vans at least 40 minutes") is no other thing."""
    plan = [
        "Spring concert plan",
        "Concert: Friday 2031-06-06, 19:00, Corn Hall; call time 17:15",
    ]
    claim = "The concert's call time is 19:00."
    assert prose_other_sentence(claim, read_values(claim), plan) == ("19:00",)
    claim = "The concert's call time is 17:15."
    assert prose_other_sentence(claim, read_values(claim), plan) == ()
    ferry = [
        "Boarding.",
        "Foot passengers must board at least 15 minutes before sailing; vans at least 40 minutes.",
    ]
    claim = "With a van, you need to board at least 40 minutes before sailing."
    assert prose_other_sentence(claim, read_values(claim), ferry) == ()
    # ... where the claim names its subject in words the source says, it is that part's
    farm = ["Weaning.", "Lambs may be weaned from 10 weeks of age; calves from 12 weeks."]
    claim = "Lambs can be weaned from 12 weeks."
    assert prose_other_sentence(claim, read_values(claim), farm) == ("12 weeks",)
    claim = "Calves can be weaned from 12 weeks."
    assert prose_other_sentence(claim, read_values(claim), farm) == ()


@pytest.mark.parametrize(
    ("claim", "source", "conflict"),
    [
        # a rate after the counted word ("4 mites per week" against "4 mites/day")
        ("Hive 2's mite drop is 6 mites per week.", "hive: 2\nmite_drop: 6 mites/day", True),
        ("Hive 2's mite drop is 6 mites a day.", "hive: 2\nmite_drop: 6 mites/day", False),
        # a column's name says its cells' rate
        (
            "Biscuit's rate is £18 a week.",
            "kennel | dog | daily_rate\nK1 | Biscuit | £18\nK2 | Moss | £15",
            True,
        ),
        (
            "Biscuit's rate is £18 a day.",
            "kennel | dog | daily_rate\nK1 | Biscuit | £18\nK2 | Moss | £15",
            False,
        ),
        # a season is a period too
        ("The pitch fee is £300 a month.", "pitch: 12\nfee: £300 per season", True),
        # a clause's numbering is no place of the amount ("4." before "£4 per night")
        (
            "A second tent costs £4 a week.",
            "4. One tent per pitch; a second tent costs £4 per night.",
            True,
        ),
        (
            "A second tent costs £4 a night.",
            "4. One tent per pitch; a second tent costs £4 per night.",
            False,
        ),
    ],
)
def test_forty_fifth_round_rates(claim: str, source: str, conflict: bool) -> None:
    assert bool(rate_conflict(claim, read_values(claim), source)) is conflict


def test_forty_fifth_round_a_named_field_bears_out_its_one_value() -> None:
    """A claim with one value that names the field holding it, and says little else, is
    borne out by the record (``valued``): "Bins go out by half past six" of ``bins_out_by:
    06:30``; not a claim that says more than the field ("The 07:10 departure runs daily"),
    nor one whose value is the record's key."""
    record = "address: 4 Mill Lane\nround: Thursday A\nbins_out_by: 06:30\nfood_waste: weekly"

    def valued(claim: str, text: str = record) -> bool:
        return support_signals(claim, [text], text, text, [text], structured=True).valued

    assert valued("Bins need to be out by half past six in the morning.")
    assert not valued("Bins need to be out by seven in the morning.")
    timetable = "service: S-12\ndeparture: 07:10\ndays: Mon-Fri"
    assert not valued("The 07:10 departure runs every day.", timetable)
    fleet = "car: 22\nplate: KX71 ABC\nwheelchair: no\nseats: 4"
    assert not valued("Car 22 is wheelchair accessible.", fleet)
    assert not valued("Car 22's wheelchair ramp is fitted.", fleet)
    assert valued("The car has four seats.", fleet)
