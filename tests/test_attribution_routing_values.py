"""Issue 23, third round: mechanisms found on the hand-written train/validation domains,
each pinned with invented text (no test-domain text).

* a claim is routed to the source that holds its values (identifiers first), unless a
  ``key: value`` line of the source its words chose gives the claim's key another value;
* a count stated in words is what a table's rows count;
* a call's arguments name what its output is about (``WHERE site='KX-7' AND year=2032``);
* rates keep their "per …" ("1.20 GBP per litre" is not "1.20 GBP per cubic metre");
* a day pair or range shares its month ("4 and 5 March").
"""

from __future__ import annotations

from pytest_provenai.attribution.protected import check_values, claim_values
from pytest_provenai.attribution.routing import Route, by_values
from pytest_provenai.attribution.rows import counted, keyed_conflict
from pytest_provenai.attribution.support import argument_values, source_missing, support_signals
from pytest_provenai.attribution.values import read_values

KILNS = (
    "kiln | firing | peak_c\nK-1 | stoneware | 1,280\nK-2 | raku | 1,000\n"
    "K-3 | stoneware | 1,260\nK-4 | earthenware | 1,100\nrows: 4"
)
POLICY = "Kilns must cool for a day before they are opened. Firings are logged by the studio."


def _route(*ranking: tuple[str, float]) -> Route:
    return Route(ranking[0][0], ranking[0][1], ranking[0][1] - ranking[1][1], ranking, "routed")


def test_a_claim_moves_to_the_source_holding_its_values() -> None:
    r = _route(("policy", 0.6), ("kilns", 0.4))
    claim = "The raku firing peaked at 1,000 °C."
    missing = {"policy": source_missing(claim, POLICY), "kilns": source_missing(claim, KILNS)}
    moved = by_values(r, missing)
    assert (moved.source, moved.ranking, moved.status) == ("kilns", r.ranking, "routed")
    assert moved.score == 0.4 and moved.margin < 0
    # already lacking fewest: unchanged
    assert by_values(r, {"policy": (0, 0), "kilns": (0, 0)}) is r


def test_identifiers_outrank_the_other_values_when_moving() -> None:
    a = "lot: LT-17\nbuyer: Ines Marr\nprice: 420 GBP"
    b = "lot: LT-71\nbuyer: Ines Mar\nprice: 380 GBP"
    claim = "Lot LT-17 sold for 380 GBP."  # a value of the other record
    assert source_missing(claim, a) == (0, 1) and source_missing(claim, b) == (1, 1)
    r = _route(("a", 0.5), ("b", 0.45))
    assert by_values(r, {"a": source_missing(claim, a), "b": source_missing(claim, b)}) is r


def test_a_keyed_line_with_another_value_keeps_the_claim_where_it_is() -> None:
    record = "lot: LT-17\nhammer price: 420 GBP\nbuyer: Ines Marr"
    claim = "The hammer price was 380 GBP."
    assert keyed_conflict(claim, claim_values(claim), record)
    assert not keyed_conflict("The buyer paid 420 GBP.", claim_values("paid 420 GBP"), record)
    assert not keyed_conflict(claim, claim_values(claim), POLICY)


def test_a_count_in_words_is_what_the_rows_count() -> None:
    def count(claim: str) -> bool:
        (value,) = [v for v in read_values(claim) if v.kind == "number"]
        return counted(claim, value, KILNS)

    assert count("Four kilns were fired.")
    assert count("Two of the kilns ran stoneware.")
    assert not count("Three of the kilns ran stoneware.")
    assert not count("Two kilns ran raku.")  # one row holds "raku"
    (value,) = read_values("Two kilns were fired.")
    assert not counted("Two kilns were fired.", value, POLICY)  # prose counts nothing
    signals = support_signals(
        "Two of the kilns ran stoneware.", KILNS, KILNS, KILNS, [KILNS], structured=True
    )
    assert signals.values.missing == () and signals.row.missing == ()


def test_a_calls_arguments_name_what_its_rows_are_about() -> None:
    args = "SELECT day, kwh FROM meter WHERE site='KX-7' AND year=2032 LIMIT 4"
    assert argument_values(args).split("\n") == ["KX-7", "2032"]
    rows = "day | kwh\n1 | 40\n2 | 38"
    claim = "Site KX-7 used 40 kWh on day 1 of 2032."
    assert source_missing(claim, rows) == (1, 2)
    assert source_missing(claim, rows, args) == (0, 0)
    # "LIMIT 4" is no fact about the rows
    assert source_missing("Site KX-7 logged 4 days.", rows, args)[1] == 1


def test_rates_keep_their_per() -> None:
    premise = "Diesel is charged at 1.20 GBP per litre; parking at 3 GBP an hour."
    assert check_values("Diesel costs 1.20 GBP a litre.", premise).missing == ()
    wrong = check_values("Diesel costs 1.20 GBP per cubic metre.", premise)
    assert wrong.missing == wrong.conflicting == ("1.20 GBP per cubic metre",)
    assert check_values("Parking is 3 GBP.", premise).missing == ()  # the amount alone
    assert check_values("The day rate is 54 EUR a day.", "day rate: 54.00 EUR").missing == ()
    assert check_values("Flow hit 41 litres an hour.", "flow_l_per_h | 41").missing == ()


def test_a_day_pair_shares_its_month() -> None:
    values = read_values("The pool was shut on 4 and 5 March 2032.")
    assert [(v.text, v.key) for v in values] == [
        ("4", (2032, 3, 4)),
        ("5 March 2032", (2032, 3, 5)),
    ]
    table = "date | open\n2032-03-04 | no\n2032-03-05 | no"
    assert check_values("It was shut on 4 and 5 March 2032.", table).missing == ()
    assert check_values("It was shut on 3 and 5 March 2032.", table).missing == ("3",)
