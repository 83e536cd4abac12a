"""Value reader benchmark: hand-written claim/evidence value pairs (issue 23, tenth round).

    python benchmarks/bench_values.py [--root CHECKOUT] [--misses]

Each pair is a claim, a premise and whether the premise states the claim's values (its
meaning, not its words): times, dates, durations, money, units, counts and codes as people
write them. The pairs were written by hand for the tenth round, in everyday domains
(travel, lettings, baking, concerts, pets, climbing, payroll, utilities) and in phrasings
the shipped fixtures do not use; they were written knowing the names of the test domains,
never their claims. A pair counts as right when every claim value is present (``True``) or
some claim value is missing (``False``) as expected. ``--root`` reads the values with the
code of another checkout (``git worktree add /tmp/old REV``), to put two revisions side by
side; ``--misses`` lists the pairs read wrong.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PAIRS: list[tuple[str, str, bool]] = [
    ("The parcel weighs half a kilo.", "weight_kg: 0.5", True),
    ("The parcel weighs 500 grams.", "weight: 0.5 kg", True),
    ("The oven runs at 220 degrees.", "oven temp: 220 °C", True),
    ("The oven runs at 220°C.", "oven_temp_c: 220", True),
    ("The flight lasts an hour and a half.", "duration: 90 min", True),
    ("The flight lasts 90 minutes.", "duration_min: 90", True),
    ("The flight lasts 1.5 hours.", "duration: 90 minutes", True),
    ("It departs at half seven in the evening.", "departure: 19:30", True),
    ("It departs at 7.30pm.", "departure: 19:30", True),
    ("It departs at 7:30 in the evening.", "departure: 19:30", True),
    ("The rent is £1,450 a month.", "rent_pcm: 1450 GBP", True),
    ("The rent is 1,450 pounds per month.", "rent: £1,450 pcm", True),
    ("The deposit is five weeks' rent.", "deposit: 5 weeks", True),
    ("The club has a dozen members.", "members: 12", True),
    ("The flat is on the third floor.", "floor: 3", True),
    ("It is a two-bedroom flat.", "bedrooms: 2", True),
    ("The tenancy starts on the 1st of March 2031.", "start: 01/03/2031", True),
    ("The tenancy starts on March 1st.", "start_date: 2031-03-01", True),
    ("The tenancy runs for a year.", "term: 12 months", True),
    ("The tenancy runs for 12 months.", "term_months: 12", True),
    ("The dog is three years old.", "age: 3 yrs", True),
    ("The dog is 3 years old.", "age_years: 3", True),
    ("The dog weighs 24 kilos.", "weight: 24kg", True),
    ("The dog weighs 24kg.", "Weight (kg) | 24", True),
    ("Half of the seats are sold.", "sold: 50%", True),
    ("Sales rose by a quarter.", "change: +25%", True),
    ("The route is graded 6a+.", "grade: 6a+", True),
    ("The wall is 15 metres high.", "height_m: 15", True),
    ("The wall is fifteen metres tall.", "height: 15 m", True),
    ("The concert runs for two hours.", "running time: 120 min", True),
    ("The interval is 20 minutes long.", "interval: 00:20", True),
    ("Doors open at 6.45 pm.", "doors: 18:45", True),
    ("The concert starts at eight.", "start: 20:00", True),
    ("The bread needs 45 minutes in the oven.", "bake time: 45 mins", True),
    ("The bread needs three quarters of an hour in the oven.", "bake time: 45 mins", True),
    ("The loaf costs £3.20.", "price_gbp: 3.20", True),
    ("The loaf costs 3 pounds 20.", "price: £3.20", True),
    ("The loaf costs £3.20.", "price: 320p", True),
    ("Orders close at noon on Friday.", "cutoff: Fri 12:00", True),
    ("The bus takes 35 min.", "journey: 35 minutes", True),
    ("The battery lasts 10 hrs.", "battery life: 10 h", True),
    ("The fee is 40 euros.", "fee: €40", True),
    ("The fee is EUR 40.", "fee: 40.00 EUR", True),
    ("The fee is $40.", "fee_usd: 40", True),
    ("The distance is 5 km.", "distance: 5,000 m", True),
    ("The distance is 3.1 miles.", "distance: 5 km", False),
    ("The tour has 14 dates.", "dates: fourteen", True),
    ("It happened on Tuesday 4 March 2031.", "date: 2031-03-04", True),
    ("It happened on 4/3/2031.", "date: 2031-03-04", True),
    ("It happened in spring 2031.", "date: 2031-04-04", True),
    ("It opens from 9 to 5.", "hours: 09:00-17:00", True),
    ("It opens from 9am to 5pm.", "hours: 09:00–17:00", True),
    ("The room holds 1.2k people.", "capacity: 1200", True),
    ("The hall seats 1,200.", "capacity: 1200", True),
    ("The temperature was minus 5 degrees.", "temp: -5 °C", True),
    ("Volume is 2 litres.", "volume_ml: 2000", True),
    ("It is 30 per cent off.", "discount: 30%", True),
    ("It is 30 percent off.", "discount: 0.3", True),
    ("The ride took 1h 20m.", "duration: 80 min", True),
    ("The ride took 1 hr 20 min.", "duration_min: 80", True),
    ("The ride took an hour and 20 minutes.", "duration: 01:20:00", True),
    ("Check-in is at 3pm.", "check_in: 15:00", True),
    ("Check-in is from 3 o'clock.", "check_in: 15:00", True),
    ("She was born in the 1990s.", "born: 1994", True),
    ("The cat is 18 months old.", "age: 1.5 years", True),
    ("The cat is 18 months old.", "age_months: 18", True),
    ("The rent is GBP 1,450 a month.", "rent: 1450 GBP per month", True),
    ("The rent is £1,450 pcm.", "rent_gbp_pcm: 1450", True),
    ("The rent is £340 a week.", "rent: £340 pw", True),
    ("The rent is £340 per week.", "weekly rent: 340.00 GBP", True),
    ("The fee is EUR 54.", "fee: 54 EUR", True),
    ("Vaccinated on 03-03-2031.", "vaccinated: 2031-03-03", True),
    ("Vaccinated on 3 March.", "vaccinated: 03/03/31", True),
    ("Vaccinated on the 3rd of March.", "vaccinated: 2031-03-03T09:15", True),
    ("It opens at 9am and closes at 5pm.", "hours: 09:00–17:00", True),
    ("It closes at 7pm.", "close: 19.00", True),
    ("A two-hour session costs £15.", "session: 2 h, 15.00 GBP", True),
    ("A 90-minute class.", "class length: 1.5 h", True),
    ("It is ten per cent off.", "discount: 10%", True),
    ("The route is graded 5.10a.", "grade: 5.10a", True),
    ("The route is graded 5.10b.", "grade: 5.10a", False),
    ("The route is graded 6b.", "grade: 6a+", False),
    ("The problem is a V4.", "grade: V4", True),
    ("The wall is 15 metres high.", "height: 15m", True),
    ("Bake at 220C.", "oven: 220 °C", True),
    ("Bake at 220 degrees C.", "oven: 220 °C", True),
    ("Bake at 425°F.", "oven: 220 °C", False),
    ("Each tray holds 24 rolls.", "tray capacity: 24", True),
    ("They played Symphony No. 5.", "programme: Symphony No. 5 in C minor", True),
    ("They played Symphony No. 7.", "programme: Symphony No. 5 in C minor", False),
    ("The concerto is Op. 64.", "work: Violin Concerto in E minor, Op. 64", True),
    ("The concerto is Op. 46.", "work: Violin Concerto in E minor, Op. 64", False),
    ("The dog is two years old.", "age: 2y", True),
    ("The puppy is six months old.", "age: 6 mo", True),
    ("The puppy is six months old.", "age_months: 6", True),
    ("The cat is 4.", "age: 4 years", True),
    ("Her chip number is 985112004567890.", "microchip: 985112004567890", True),
    ("Kennel 12 is free.", "kennel: 12", True),
    ("The hall holds 1,200 people.", "capacity: 1,200", True),
    ("The hall holds 1200 people.", "capacity: 1,200", True),
    ("The tour visits 8 cities.", "cities: eight", True),
    ("The deposit is £1,673.", "deposit: £1,673.07", False),
    ("The deposit is £1,673.07.", "deposit: 1673.07 GBP", True),
    ("The break clause is at 6 months.", "break clause: six months", True),
    ("It was adopted on Saturday 14 June.", "adopted: 2031-06-14", True),
    ("It was adopted on June 14th.", "adopted: 14/06/2031", True),
    ("It was adopted in mid-June.", "adopted: 2031-06-14", True),
    ("The rehearsal is 10:00-13:00.", "rehearsal: 10am to 1pm", True),
    ("The rehearsal runs from 10 to 1.", "rehearsal: 10:00-13:00", True),
    ("The loaf is 800g.", "weight: 0.8kg", True),
    ("Flour costs £1.20/kg.", "flour: 1.20 GBP per kg", True),
    ("They sold 3 dozen rolls.", "sold: 36 rolls", True),
    ("The bill was £45.50.", "total: 45.5", True),
    ("It takes 3-4 days.", "delivery: 3-4 days", True),
    ("Entry is free for under-5s.", "under 5: free", True),
    ("The EPC rating is C.", "EPC: C", True),
    ("The flat is in council tax band D.", "council tax band: D", True),
    ("The walk is 2.5 miles.", "distance: 2.5 mi", True),
    ("The walk is 2½ miles.", "distance: 2.5 mi", True),
    ("It starts at 19:30 sharp.", "start: 7.30pm", True),
    ("She was adopted 2 weeks ago.", "adopted: 2031-06-14", True),
    ("Rex is a 2-year-old terrier.", "age: 2 years", True),
    ("Rex is a two-year-old terrier.", "age_years: 2", True),
    ("The kittens are 6-week-old.", "age: 6 weeks", True),
    ("It is a 15-metre wall.", "height: 15 m", True),
    ("It is a 45-minute bake.", "bake: 45 min", True),
    ("It is a 3-bed flat.", "bedrooms: 3", True),
    ("It is a 12-month tenancy.", "term: 12 months", True),
    ("It is a twelve-month tenancy.", "term: 12 months", True),
    ("The walk takes about 40 minutes.", "duration: 38 min", True),
    ("The rent is around £1,450.", "rent: 1,450 GBP", True),
    ("Rent is paid fortnightly.", "rent frequency: every 2 weeks", True),
    ("The tour has 14 concerts over 3 weeks.", "concerts: 14; span: 21 days", True),
    ("It runs for 3 weeks.", "span: 21 days", True),
    ("The concert is on Sat 14 June.", "date: 2031-06-14", True),
    ("The concert is on 14 Jun 2031.", "date: 14/06/2031", True),
    ("It ends at 10.15pm.", "end: 22:15", True),
    ("She is 34.", "age: 34", True),
    ("The fee is £25 per adult.", "adult fee: 25 GBP", True),
    ("Tickets cost £12.50 each.", "ticket price: £12.50", True),
    ("It sleeps four.", "sleeps: 4", True),
    ("The session is 2 hrs.", "session_length_h: 2", True),
    ("The session is two hours long.", "length: 120 mins", True),
    ("The climb is 20m.", "height: 20 metres", True),
    ("The cat weighs 4.2kg.", "weight: 4200 g", True),
    ("The cat weighs 4.2 kilograms.", "weight_g: 4200", True),
    ("There are 120 seats.", "seats | 120", True),
    ("The orchestra has 68 players.", "players: sixty-eight", True),
    ("The loaf costs £3.", "price: 3.00 GBP", True),
    ("The loaf costs three pounds.", "price: 3.00 GBP", True),
    ("The loaf costs £3.50.", "price: three pounds fifty", True),
    ("Doors open 30 minutes before.", "doors: 30 min before start", True),
    ("It's open 7 days a week.", "open: daily", True),
    ("It is open until 10 pm.", "closes: 22:00", True),
    ("It is open till 10.", "closes: 22:00", True),
    ("The gig starts at 8.", "start: 20:00", True),
    ("The grant is £1.2m.", "grant: 1,200,000 GBP", True),
    ("The grant is £1.2 million.", "grant: £1,200,000", True),
    ("Revenue was 3.5k EUR.", "revenue: 3500 EUR", True),
    ("It happened in Q3 2031.", "quarter: 2031-Q3", True),
    ("Readings are taken every other day.", "interval: every 2 days", True),
    ("The show starts at 19:30 on 14 June.", "start: 2031-06-14T19:30:00Z", True),
    ("The show starts at 7.30pm on 14 June.", "start: 2031-06-14T19:30:00Z", True),
    ("The show is on 14 June.", "start: 2031-06-14T19:30:00Z", True),
    ("Seat #5 is free.", "seat: 5", True),
    ("A third of the seats are sold.", "sold: 33%", True),
    ("Twenty-five per cent are sold.", "sold: 25%", True),
    ("She scored 39 out of 60.", "score: 39/60", True),
    ("She scored 39/60.", "score: 39 of 60", True),
    ("The item is 2.5 cm wide.", "width_mm: 25", True),
    ("The flight is 2h 05m.", "duration: 125 min", True),
    ("The tour runs from 3 to 24 June.", "tour: 2031-06-03 to 2031-06-24", True),
    ("The tour runs 3–24 June.", "tour: 2031-06-03 to 2031-06-24", True),
    ("The tour runs from 3 June to 24 June.", "start: 2031-06-03; end: 2031-06-24", True),
    ("It rained on 12 of the 30 days.", "rain days: 12; days: 30", True),
    ("The loan is £5,000 over 3 years.", "principal: 5000 GBP; term_months: 36", True),
    ("Temperature peaked at 31.6 degrees.", "max_temp_c: 31.6", True),
    ("Temperature peaked at 31.6°.", "max temp: 31.6 °C", True),
    ("The parcel is 2 kg heavier.", "weight: 2 kg more", True),
    ("The dog was found on the 3rd.", "found: 2031-05-03", True),
    ("Opening hours are 10am–6pm.", "open: 10:00; close: 18:00", True),
    ("Opening hours are 10-6.", "open: 10:00; close: 18:00", True),
    ("The event is on Monday 2 June 2031.", "date: Mon 02/06/2031", True),
    ("The class costs £8 per session.", "price per session: 8.00 GBP", True),
    ("It has 1,250 members.", "members: 1250", True),
    ("It has 1.25 thousand members.", "members: 1250", True),
    ("The ferry leaves at 7.30pm.", "departure: 19:45", False),
    ("It departs at 7:30 in the evening.", "departure: 07:30", False),
    ("We meet at half seven.", "meeting: 18:30", False),
    ("The talk starts at eight.", "start: 21:00", False),
    ("The gig starts at 8.", "start: 21:00", False),
    ("The lease starts on 01/03/2031.", "lease start: 2031-03-02", False),
    ("Vaccinated on 3 March 2031.", "vaccinated: 03/04/31", False),
    ("It was signed on 4.3.2031.", "signed: 3 April 2031", False),
    ("The flight lasts an hour and a half.", "duration: 80 min", False),
    ("The ride took 1 hr 20 min.", "duration: 90 minutes", False),
    ("Allow half an hour for parking.", "parking: 45 minutes", False),
    ("The proof needs three quarters of an hour.", "proof: 30 mins", False),
    ("The parcel weighs half a kilo.", "weight: 750 g", False),
    ("The club has a dozen members.", "members: 10", False),
    ("The walk takes about 40 minutes.", "duration: 55 min", False),
    ("Some 300 people came.", "attendance: 410", False),
    ("The room sleeps up to 4.", "sleeps: 6", False),
    ("She waited at least 2 hours.", "wait: 1.5 h", False),
    ("It took more than 30 minutes.", "wait: 25 min", False),
    ("Rex is a 2-year-old terrier.", "age: 3 years", False),
    ("It is a 3-bed flat.", "bedrooms: 2", False),
    ("The grant is £1.2m.", "grant: 1,300,000 GBP", False),
    ("The tank holds 2 litres.", "volume_ml: 2500", False),
    ("Bake at 220C.", "oven: 200 °C", False),
    ("The loan runs for 3 years.", "term_months: 24", False),
    ("It ends at 10.15pm.", "end: 22:45", False),
    ("Flour costs £1.20/kg.", "flour: 1.40 GBP per kg", False),
    ("Doors open at 6.45 pm.", "doors: 18:15", False),
    ("The crossing takes an hour and 25 minutes.", "crossing time: 95 minutes", False),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--misses", action="store_true", help="list the pairs read wrong")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.root))
    from pytest_provenai.attribution.protected import check_values

    right = {True: 0, False: 0}
    total = {True: 0, False: 0}
    misses = []
    for claim, premise, stated in PAIRS:
        check = check_values(claim, premise)
        read = bool(check.values) and not check.missing
        total[stated] += 1
        if read == stated:
            right[stated] += 1
        else:
            misses.append((claim, premise, stated, check.missing))
    print(f"value pairs read with {args.root}")
    print(f"{'pairs':34s} {'right':>12s}")
    print(f"{'premise states the values':34s} {right[True]:>5d}/{total[True]:<6d}")
    print(f"{'premise states other values':34s} {right[False]:>5d}/{total[False]:<6d}")
    print(f"{'all':34s} {sum(right.values()):>5d}/{len(PAIRS):<6d}")
    for claim, premise, stated, missing in misses if args.misses else ():
        want = "stated" if stated else "not stated"
        print(f"  wrong ({want}): {claim!r} vs {premise!r} (missing: {list(missing)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
