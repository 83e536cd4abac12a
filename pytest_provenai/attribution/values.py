"""Protected values read by their meaning (issue 23): dates and times with ``dateparser``,
quantities and units with ``pint``, number words with ``number-parser``; versions and
identifiers kept whole; what no library reads (spoken clock times, "7.30pm", day/month/year
with slashes or dots, durations in two units or with a fraction, "a dozen", "£1.2m", "noon",
sizes such as "4032 by 3024 pixels" = "4032x3024", "1850–70", "51°12.6′N", "45p", "GBP
619.50" in a field, units in capitals such as "330FT" from a short list) by the shapes here.
A hedge or a comparison before a number ("about 40 minutes", "up to 4") is kept as the
value's ``bound``; a bare hour after a time said with am/pm ("off by 10pm, out by 11") is a
time of that half of the day.

A value is found by its *shape* (a token with a digit, a month name, a number word, a
``am/pm`` time) and read by the library for its *meaning*: ``20:00`` = ``8 pm``,
``2018-05-03`` = ``3 May 2018``, ``twelve`` = ``12``, ``15-minute intervals`` = ``15
minutes`` (= ``900 s``), ``0.8 kg`` = ``800 g``. A version (``4.1.1``) or an identifier
(``LR-779``, ``INV-2031-0412``) is one whole token, never cut (``4.1`` is not ``4.1.1``).
A value a library cannot read is kept as text (``parsed`` False) and compared as text; the
caller records that.

The three libraries are the ``attribution`` extra; without them every value is compared as
text (and says so). Pure Python, no model code, no network: ``dateparser`` runs with fixed
settings (English, day-month order, a fixed relative base) so a text reads the same on every
machine.
"""

from __future__ import annotations

import csv
import datetime as _dt
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from itertools import pairwise
from typing import Any

__all__ = [
    "NUMBER_WORDS",
    "UNIT_SUFFIXES",
    "VERSION_WORD",
    "Value",
    "ValueMatch",
    "magnitude",
    "match_values",
    "read_values",
    "worked_out",
]

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
#: Months written in lower case ("eta 11 apr", "lodged 9 march"), read only beside a day:
#: "may" only after one and before a year or punctuation ("on 3 may." ; "Surgery 3 may
#: well" and "you may 3" are the verb).
_MONTH_LOWER = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
#: Days of the month as ordinal words ("the twenty-second of March"), read as digits.
_ORDINAL_DAYS = {
    w: i + 1
    for i, w in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
        "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth "
        "twentieth".split()
    )
}
_ORDINAL_DAYS.update({f"twenty-{w}": 20 + n for w, n in list(_ORDINAL_DAYS.items())[:9]})
_ORDINAL_DAYS.update({"thirtieth": 30, "thirty-first": 31})
_ORDINAL_DAY = (
    r"(?:"
    + "|".join(re.escape(w).replace("\\-", "[\\s-]") for w in sorted(_ORDINAL_DAYS, key=len)[::-1])
    + r")"
)
_DAY = rf"(?:(?:[0-3]?\d)(?:st|nd|rd|th)?|(?:the\s+)?{_ORDINAL_DAY})"
_YEAR = r"(?:1[5-9]\d\d|2\d\d\d)"
#: Number words, the one list (``statement`` reads an amount after a cue by them too).
NUMBER_WORDS = (
    "zero nought one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy "
    "eighty ninety hundred thousand million billion"
).split()
_NUMWORD = r"(?:" + "|".join(NUMBER_WORDS) + r")"
#: "and a half" / "and a quarter" / "and three quarters" after a number in words.
_FRACTION = r"\s+and\s+(?:a\s+half|a\s+quarter|three\s+quarters)"
_FRACTIONS = {"a half": 0.5, "a quarter": 0.25, "three quarters": 0.75}
#: Spoken decimals: "twelve point six", "seven point nine five".
_DIGIT_WORDS = {
    w: i for i, w in enumerate("zero one two three four five six seven eight nine".split())
}
_DIGIT_WORDS["oh"] = _DIGIT_WORDS["nought"] = 0
_POINT = r"\s+point(?:\s+(?:" + "|".join(_DIGIT_WORDS) + r"))+"
_NUMWORDS = (
    rf"{_NUMWORD}(?:(?:[\s-]+|\s+and\s+)(?!three\s+quarters){_NUMWORD})*"
    rf"(?:{_POINT}|{_FRACTION})?(?![a-z])"
)
_MULTIPLIERS = {"twice": 2.0, "double": 2.0, "triple": 3.0, "treble": 3.0, "quadruple": 4.0}
#: A number as written: thousands grouped by commas only in threes ("18,420", never the
#: "7," of "version 7, was" nor the "1,2" of a list), then an optional decimal part.
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+(?![\d])|\d+)(?:\.\d+)?"
_CURRENCY_CODES = frozenset({"gbp", "usd", "eur", "chf", "jpy", "nok", "sek", "dkk"})
#: A currency code in capitals before an amount, as a field's value ("fee: GBP 619.50",
#: "received 10/02: GBP -150.00", "(USD 45)"), with the amount's minus sign; not a header's
#: last word before a row ("total GBP" over "1  T1 beech …").
_CODE_FIRST = (
    r"(?:(?<=:[ \t])|(?<==[ \t])|(?<=\()|(?<=\n)|(?<!.))"
    rf"(?-i:{'|'.join(sorted(c.upper() for c in _CURRENCY_CODES))})[ \t]?(?:-[ \t]?)?"
    r"(?=\d[\d,.]*(?![\w]))"
)
_HOURS = "one two three four five six seven eight nine ten eleven twelve".split()
_HOUR = r"(?:" + "|".join(_HOURS) + r"|1[0-2]|0?[1-9])"
_HOUR_WORD = r"(?:" + "|".join(_HOURS) + r")"
#: What may follow a bare hour that is a time of day ("at eight.", "half seven on Friday");
#: "at seven people" is a count.
_AFTER_HOUR = (
    r"(?=\s*(?:,(?!\d)|[;!?)]|\.(?!\d)|$|\s+(?:in|on|at|and|to|sharp|tonight|today|tomorrow|"
    r"every|each|that|when|with|for|until|till|start|finish|[ap]\.?m\.?)\b))"
)
#: An hour in digits is a time only at the end of a clause ("starts at 8.", "open till 10
#: on Sundays"), never before a unit or a noun ("at 8 kg", "at 8 people") nor inside a
#: number ("at 3,600 W", "from 12,900").
_CLAUSE_END = r"(?=\s*(?:,(?!\d)|[;!?)]|\.(?!\d)|$|\s+(?:on|sharp|tonight|today|tomorrow)\b))"
#: Spoken clock times ("half past ten", "ten to six in the evening", "a quarter to eleven",
#: "five past four in the afternoon", "seven o'clock", British "half seven" = 7:30, an hour
#: in words after "at/from/until/till": "starts at eight"): no library reads these. Minutes
#: in digits only before "past": "3 to 4 pm" is a range, not 15:57.
_CLOCK = (
    r"\b(?:(?P<min>half|(?:a\s+)?quarter|five|ten|twenty(?:[\s-]five)?|\d{1,2}(?=\s+past)"
    # "twelve minutes past ten", "23 minutes to four"
    rf"|(?:{_NUMWORD}(?:[\s-]+{_NUMWORD})?|\d{{1,2}})\s+minutes?(?=\s+(?:past|to)\b))[\s-]+"
    rf"(?P<dir>past|to)[\s-]+(?P<h1>{_HOUR}|noon|midday|midnight)|(?P<h2>{_HOUR})\s+o['’]clock"
    rf"|half\s+(?P<h3>{_HOUR}){_AFTER_HOUR}"
    rf"|(?:(?<=\bat\s)|(?<=\bfrom\s)|(?<=\buntil\s)|(?<=\btill\s))"
    rf"(?:(?P<h4>{_HOUR_WORD}){_AFTER_HOUR}|(?P<h5>1[0-2]|[1-9]){_CLAUSE_END}))"
    r"(?:\s+(?P<part>in\s+the\s+(?:morning|afternoon|evening)|at\s+night|[ap]\.?m\.?))?"
)
_CLOCK_RE = re.compile(_CLOCK, re.IGNORECASE)
_SPOKEN_MINUTES = {"half": 30, "quarter": 15, "five": 5, "ten": 10, "twenty": 20}
#: Hours said by name ("noon", "five to midnight"): midnight is 24 before it.
_NAMED_HOURS = {"noon": 12, "midday": 12, "midnight": 24}


def _hour(word: str) -> int:
    """The hour a clock word or number says ("seven", "7", "midnight" = 24)."""
    word = word.casefold()
    if word in _NAMED_HOURS:
        return _NAMED_HOURS[word]
    return _HOURS.index(word) + 1 if word in _HOURS else int(word)


_DAY_PART = r"\s+(?:in\s+the\s+(?:morning|afternoon|evening)|at\s+night)\b"


def _in_day_part(minutes: int, part: str) -> int:
    """A time of day (``minutes`` after midnight, read on a twelve-hour clock) moved into the
    part of the day said with it: the one reading of "in the evening", "pm", "on tuesday
    evening" (:func:`_time`, :func:`_clock`, :func:`_day_part`). The morning and "am" keep
    it before noon, as do the small hours of the night ("2:10 that night", "12:30 at
    night" is 00:30)."""
    part, minutes = part.casefold(), minutes % 720
    if "morning" in part or re.fullmatch(r"\s*a\.?m\.?", part):
        return minutes
    if "night" in part and minutes < 5 * 60:
        return minutes
    return minutes + 720


#: Time units of a compound duration and their length in minutes.
_TIME_UNITS = {
    **dict.fromkeys(("second", "sec", "s"), 1 / 60),
    **dict.fromkeys(("minute", "min", "m"), 1.0),
    **dict.fromkeys(("hour", "hr", "h"), 60.0),
    "day": 1440.0,
    "week": 10080.0,
}
#: A time unit after its number: a word, or one letter written on the number ("1h 20m"; "5 m"
#: is five metres).
_TIME_UNIT = r"(?:[ \t]*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)|[hms])"
#: Durations no single library reads: two or three units ("1 hr 20 min", "1h 20m", "2 min
#: 45 s", "an hour and 25 minutes", "2 days and 3 hours", "3 hours, 4 minutes and 52
#: seconds"), a unit and a fraction after it ("an hour and a half"), a fraction of a unit
#: ("half an hour", "a quarter of an hour", "three quarters of an hour", "half a kilo").
_DURATION = (
    rf"\b(?:(?P<a>\d+(?:\.\d+)?|{_NUMWORDS})(?P<ua>{_TIME_UNIT}|[ \t]+h)\b,?[ \t]+(?:and[ \t]+)?"
    rf"|(?P<a1>an?|one)[ \t]+(?P<ua1>{_TIME_UNIT})\b[ \t]+and[ \t]+)"
    rf"(?P<b>\d+(?:\.\d+)?|{_NUMWORDS})(?P<ub>{_TIME_UNIT}|[ \t]+[hms])\b"
    rf"(?:,?[ \t]+(?:and[ \t]+)?(?P<c3>\d+|{_NUMWORDS})(?P<u3>{_TIME_UNIT}|[ \t]+[hms])\b)?"
    rf"|\b(?P<c>an?|one|\d+|{_NUMWORDS})\s+(?P<uc>[a-z]+?)s?\s+and\s+"
    r"(?P<fc>a\s+half|a\s+quarter|three\s+quarters)\b"
    # the fraction between the number and its unit ("7 and a half minutes")
    r"|\b(?P<g>\d+)\s+and\s+(?P<fg>a\s+half|a\s+quarter|three\s+quarters)\s+(?P<ug>[a-z]+)\b"
    r"|\b(?:(?P<half>half)\s+an?|(?:a\s+|one\s+)?(?P<quarter>quarter)\s+of\s+an?"
    r"|(?P<three>three\s+quarters)\s+of\s+an?)\s+(?P<ud>[a-z]+)\b"
    # "an hour and forty", "two hours and ten", "three hours ten": the minutes left unsaid
    rf"|\b(?P<e>an?|one|\d|{_NUMWORDS})[ \t]+hours?[ \t]+(?:and[ \t]+)?"
    rf"(?P<em>[1-5]\d|{_NUMWORDS})\b"
    r"(?![ \t]*(?:-|[a-z]))"
)
_PER_DISTANCE = r"[ \t]*(?:/[ \t]*|(?:per|a|an|each)[ \t]+)(?P<u>km|kilomet(?:re|er)|mi|mile)s?\b"
_PACE = (
    rf"(?<![\d:.])(?P<m>\d{{1,2}}):(?P<s>[0-5]\d){_PER_DISTANCE}"
    r"|\b(?P<m2>\d{1,2})[ \t]*(?:min|mins|minutes?)"
    r"(?:[ \t]*(?:and[ \t]+)?(?P<s2>\d{1,2})[ \t]*(?:s|sec|secs|seconds?))?"
    + _PER_DISTANCE.replace("<u>", "<u2>")
)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: Months named in full (a month alone is read only after a word that dates it).
_MONTH_NAMES = (
    "January February March April May June July August September October November December"
).split()
#: Fixed-width look-behinds for the words that date a month alone ("in", "by", "since",
#: "end of" …).
_AFTER_DATING = "|".join(
    rf"(?<=\b{w} )"
    for w in (
        "in",
        "In",
        "by",
        "By",
        "since",
        "Since",
        "until",
        "till",
        "from",
        "From",
        "during",
        "before",
        "after",
        "early",
        "late",
        "mid",
        "end of",
        "start of",
        "of",
    )
)
#: Fixed-width look-behinds for a day of the week, in full or short, before a day of the
#: month, with or without "the" ("Weds 16th", "Sat 19th", "Wednesday the 16th").
_AFTER_WEEKDAY = "|".join(
    rf"(?<=\b{day}{the})"
    for day in sorted(
        {*(w.capitalize() for w in _WEEKDAYS), "Mon", "Tue", "Tues", "Wed", "Weds"}
        | {"Thu", "Thur", "Thurs", "Fri", "Sat", "Sun"}
    )
    for the in (" ", " the ", ". ")
)
_DOZEN = r"\b(?:(?P<n>an?|one|two|three|four|five|six|half\s+an?|\d+)\s+)dozen\b(?!s)"
#: A latitude or longitude with its hemisphere: degrees, minutes and seconds ("54 deg 29'
#: 51.62\" N", "54°29'51.62\"N") or decimal degrees ("51.2843 N", "54.4977° N").
_COORDINATE = re.compile(
    r"\b(?P<d>\d{1,3})\s*(?:°|deg\b)\s*(?P<m>\d{1,2})\s*['’′]\s*(?P<s>\d{1,2}(?:\.\d+)?)"
    r"\s*(?:\"|”|″|''|’’)?\s*(?P<h1>[NSEW])\b"
    r"|\b(?P<dec>\d{1,3}\.\d{3,})\s*°?\s*(?P<h2>[NSEW])\b"
    # degrees and (decimal) minutes, a chart's and a GPS's "51°12.6′N"
    r"|\b(?P<d3>\d{1,3})\s*(?:°|deg\b)\s*(?P<m3>\d{1,2}(?:\.\d+)?)\s*['’′]\s*(?P<h3>[NSEW])\b"
)

# The shapes, most specific first; each character of a text is taken once.
#: Sterling said the way people say it: pounds and pence in words ("six pound forty",
#: "three pounds sixty"; the pence before a comma, a full stop or a function word, not a
#: unit: "6 pounds 40 minutes" stays two values) and the notes ("a fiver", "a tenner").
_SLANG_NOTES = {"fiver": 5.0, "tenner": 10.0}
_STERLING = (
    rf"\b(?:a[ \t]+)?(?:fiver|tenner)\b"
    rf"|(?:\b\d{{1,4}}|\b{_NUMWORDS})[ \t]+(?:pounds?|quid)[ \t]+(?:[1-9]\d|{_NUMWORDS})"
    r"(?=[ \t]*(?:[,.;:!?)]|$)|[ \t]+(?:and|for|on|off|each|a|an|the|per|to|in|with|but|so"
    r"|or|plus|gross|net|cash|card)\b)"
)

_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("coordinate", _COORDINATE),
    # an elapsed time in minutes, seconds and tenths ("6:33.6" for a 2k, "1:48.1/500m"): a
    # duration, never a time of day
    ("elapsed", re.compile(r"(?<![\d:.])\d{1,2}:[0-5]\d\.\d(?![\d:])")),
    # ISO, and EXIF's "2032:08:13 09:26:51": the seconds are the time's (no count of 51)
    (
        "datetime",
        re.compile(r"\b\d{4}([-:])\d{2}\1\d{2}[ Tt]\d{1,2}:\d{2}(?::[0-5]\d(?:\.\d+)?)?(?!\d|:\d)"),
    ),
    ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{4}/\d{2}/\d{2}\b")),
    # day/month/year with slashes, dots or dashes ("01/03/2031", "4.3.2031", "03-03-2031",
    # "03/03/31"): day first, as the settings read every date; a version never has a year
    # as its last part
    (
        "date",
        re.compile(
            r"\b(?:0?[1-9]|[12]\d|3[01])([/.-])(?:0?[1-9]|1[0-2])\1(?:1[5-9]|2\d)\d\d\b"
            r"|\b(?:0?[1-9]|[12]\d|3[01])/(?:0?[1-9]|1[0-2])/\d\d\b(?![/.]\d)"
            # month first, where the day cannot be a month ("6/21/32", "3/13/2033")
            r"|\b(?:0?[1-9]|1[0-2])/(?:1[3-9]|2\d|3[01])/(?:\d\d|(?:19|20)\d\d)\b(?![/.]\d)"
        ),
    ),
    # a year in two digits after an apostrophe ("since '94", "end of March '37"), not a
    # quotation that opens with a number ("'12 bins' it said")
    (
        "shortyear",
        re.compile(
            rf"(?:\b{_MONTH}\s+)?(?<![\w'’])['’]\d\d(?![\w'’])(?![^'’\n]*['’](?!\w))",
            re.IGNORECASE,
        ),
    ),
    # month/year ("expiry 03/2034"): no day; before a ratio reads it as a count
    ("monthyear", re.compile(r"(?<![\w/.])(?:0?[1-9]|1[0-2])/(?:19|20)\d\d\b(?![/.]\d)")),
    # day/month without a year ("since 13/08"), the month in two digits ("1/2" is a half)
    ("daymonth", re.compile(r"\b(?:0?[1-9]|[12]\d|3[01])/(?:0[1-9]|1[0-2])\b(?![/.]\d)")),
    # a day of the month alone ("on the 13th and …"); "the 3rd lap" is an ordinal
    (
        "dayordinal",
        re.compile(
            r"(?:(?<=\bon the )|(?<=\bby the )|(?<=\bsince the )|(?<=\buntil the )"
            r"|(?<=\bfrom the )|(?<=\btill the )|(?<=\bbefore the )|(?<=\bafter the )"
            # the part of a day ("on the morning of the 13th", "the evening of the 12th")
            r"|(?<=\bof the )"
            # the end of a range of days ("8th to 12th", "the 7th-9th")
            r"|(?<=\d[snrt][tdh] to )|(?<=\d[snrt][tdh]-)|(?<=\d[snrt][tdh]–)"
            r"|(?<=\d[snrt][tdh] to the )"
            # the start of one ("7th to 18th July", "12th-19th August")
            r"|(?=(?:[12]?\d|3[01])(?:st|nd|rd|th)\s*(?:to|-|–|till|until)\s*(?:the\s+)?"
            r"(?:[12]?\d|3[01])(?:st|nd|rd|th)\b)"
            # after a day of the week ("Weds 16th", "Sat 19th", "Wednesday the 16th")
            rf"|{_AFTER_WEEKDAY}"
            # a list of days after a comma ("on the tank log, the 14th, 15th and 16th"), and
            # the next days of a list (kept as days only after a day: :func:`_list_days`)
            r"|(?<=, the )(?=\d{1,2}(?:st|nd|rd|th),? (?:and )?\d{1,2}(?:st|nd|rd|th)\b)"
            r"|(?<=\d[snrt][tdh], )|(?<=\d[snrt][tdh] and )|(?<=\d[snrt][tdh], and ))"
            r"(?:[12]?\d|3[01])(?:st|nd|rd|th)\b(?=\s*(?:[,.;:!?)—–]|-\d|$|\s+(?:and|at|to|in|"
            r"when|but|so|or|from|until|till|with|by|the"
            # a verb after it ("the showing on the 14th starts at 19:45"), not a noun
            r"|is|was|are|were|will|would|has|had|starts?|begins?|opens?|closes?|ends?"
            r"|runs?|kicks?|falls?|finishes)\b))",
            re.IGNORECASE,
        ),
    ),
    # sterling as people say it ("six pound forty", "a fiver", "a tenner"): GBP
    ("sterling", re.compile(_STERLING, re.IGNORECASE)),
    # a pace: a time per distance ("4:01 per mile", "5:01/km", "5 min 1 sec a km")
    ("pace", re.compile(_PACE, re.IGNORECASE)),
    ("duration", re.compile(_DURATION, re.IGNORECASE)),
    ("dozen", re.compile(_DOZEN, re.IGNORECASE)),
    # a version stands alone: inside a longer code ("cfg-2034.03.14-3") it is that code's
    ("version", re.compile(r"(?<![\w.-])[vV]?\d+(?:\.\d+){2,}(?![\w.]*\d|-\w)")),
    ("week", re.compile(r"\b\d{4}-W\d{2}\b")),
    (
        "date",
        re.compile(
            # (a day is no clock's minutes: "08:00-18:00 April to September")
            rf"(?<!:)\b{_DAY}(?:\s+of)?\s+{_MONTH}(?:,?\s+{_YEAR})?\b"
            rf"|\b{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?\b(?!:)"
            rf"|\b{_MONTH}\s+{_YEAR}\b|\b{_YEAR}-(?:0[1-9]|1[0-2])\b(?!-)"
            rf"|(?<!:)\b{_DAY}(?:\s+of)?\s+(?:{_MONTH_LOWER}(?:,?\s+{_YEAR})?\b(?![\w-])"
            rf"|may(?:,?\s+{_YEAR}\b|(?=[ \t]*(?:[,.;:!?)]|$))))"
            rf"|\b{_MONTH_LOWER}\s+{_DAY}(?:,?\s+{_YEAR})?\b(?![:\w-])"
            # "may" before a day only with an ordinal, a year or punctuation ("opens may
            # 3rd", "preview may 1,"; "you may 3" is the verb)
            rf"|\bmay\s+[0-3]?\d(?:(?:st|nd|rd|th)\b(?:,?\s+{_YEAR}\b)?|,?\s+{_YEAR}\b"
            r"|(?=[ \t]*(?:[,.;:!?)]|$)))"
        ),
    ),
    ("clock", _CLOCK_RE),
    # two sizes of one thing ("4032x3024", "4032 x 3024", "4032 by 3024 pixels"); "by" with
    # a unit after it, or between two numbers of 3-5 digits the second no year ("6000 by
    # 4000"; "rose to 4 by 2031", "4000 by 2031" are no sizes)
    (
        "dimensions",
        re.compile(
            r"(?<![\d,.])\b\d{1,5}[ \t]*[x×][ \t]*\d{1,5}\b"
            # "6 x 300 s": six of a duration, not two sizes
            r"(?![ \t]*(?:s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)\b)"
            r"|\b\d{1,5}[ \t]+by[ \t]+\d{1,5}(?=[ \t]*(?:px|pixels?|mm|cm|m|metres?|meters?|"
            r"in|inches|ft|feet)\b)"
            # without a unit, two sizes of three or more digits, the second no year
            r"|\b\d{3,5}[ \t]+by[ \t]+(?!(?:1[5-9]|2\d)\d\d\b)\d{3,5}\b",
            re.IGNORECASE,
        ),
    ),
    (
        "time",
        re.compile(
            r"\b\d{1,2}(?::\d{2}){1,2}(?:[ \t]*[ap]\.?m\.?(?![a-z])|" + _DAY_PART + r")?"
            r"|\b\d{1,2}(?:\.[0-5]\d)?(?:[ \t]*[ap]\.?m\.?(?![a-z])|" + _DAY_PART + r")"
            r"|\b(?:noon|midday|midnight)\b"
            # the German "14.30 Uhr"
            r"|\b(?:[01]?\d|2[0-3])\.[0-5]\d(?=[ \t]*Uhr\b)",
            re.IGNORECASE,
        ),
    ),
    # a time of day in four digits ("cam frame taken 0815", "1400 hrs"): with a leading zero,
    # or with "hrs"/"h" after it ("1400 hours" may be a duration), or "h" between ("18h40")
    (
        "hhmm",
        re.compile(
            r"(?<![\w./:-])(?:0\d[0-5]\d(?:\b|(?=hrs?\b|h\b))(?![.,/:-]?\d)"
            r"|(?:1\d|2[0-3])[0-5]\d(?=[ \t]*(?:hrs|h)\b)"
            # the hour and its minutes either side of an "h" ("18h40", "09h05")
            r"|(?:[01]\d|2[0-3])h[0-5]\d\b)"
        ),
    ),
    # an age group ("Under-14", "under 14s", "Under-8s", "U14"): one identifier, ``u14``
    (
        "agegroup",
        re.compile(
            r"\b(?:[Uu]nder-(?P<a>\d{1,2})s?|[Uu]nder[ \t]+(?P<b>\d{1,2})s|U-?(?P<c>\d{1,2})s?)"
            r"(?![\w-])"
        ),
    ),
    # a count out of a total ("failed 2/3 checks", "40/40 busy"); day/month took its dates
    ("ratio", re.compile(r"(?<![\w./])\d{1,4}/\d{1,4}(?![\w/]|\.\d)")),
    (
        "identifier",
        re.compile(
            # pence are money, no code ("45p per mile"); "1080p" is a video format
            r"(?<![\w.£$€])(?!\d{1,2}(?:\.\d+)?p(?![\w/-]|\.\w))"
            r"(?=[\w./-]*[A-Za-z])(?=[\w./-]*\d)[A-Za-z0-9][\w./-]*[A-Za-z0-9]"
            r"(?![\w-])"
        ),
    ),
    (
        "quantity",
        re.compile(
            rf"(?:[£$€][ \t]?|\b{_CODE_FIRST})?(?:{_DIGITS}|\b{_NUMWORDS})(?:[ \t]*-[ \t]*|[ \t]*)"
            r"(?:%|°[ \t]?[CF]\b"
            # a function word before another number is no unit ("£28 for forty-five
            # minutes": "for" is no unit of the 28)
            r"|(?!(?:for|to|and|or|of|in|on|at|by|from|with|than)\s+"
            rf"(?:\d|{_NUMWORD}\b))"
            r"[A-Za-zµ]+[²³]?(?:/[A-Za-z]+\b"
            r"|[ \t]+(?:per|an?|/)[ \t]+(?:(?:cubic|square)[ \t]+)?[A-Za-z]+"
            r"|[ \t]+[A-Za-z]+)?)?",
            re.IGNORECASE,
        ),
    ),
    # "double-checking", "double-booked" are no multipliers
    (
        "multiplier",
        re.compile(r"\b(?:twice|double|triple|treble|quadruple)\b(?!-\w)", re.IGNORECASE),
    ),
    # a month alone, named in full after a word that dates ("posted to you in September",
    # "by August", "until the end of March"); a day or a year beside it was read above
    (
        "month",
        re.compile(rf"(?:{_AFTER_DATING})(?:{'|'.join(_MONTH_NAMES)})\b(?!\s*\d|[-'’])"),
    ),
    # a day of the week, written in full ("on Thursday", "Sundays")
    ("weekday", re.compile(rf"\b(?:{'|'.join(_WEEKDAYS)})s?\b", re.IGNORECASE)),
)
_YEAR_ONLY = re.compile(rf"^{_YEAR}$")
#: Unit words pint would read in a surprising way (``in`` = inch, ``a`` = annum, ``are`` =
#: 100 m², ``at`` = technical atmosphere, ``bags`` = 94 lb, ``points`` and ``hands`` =
#: lengths …): never units after a number.
_NOT_UNITS = frozenset(
    """a an and are as at by for from in is it of on or per than the to was were with am pm
    th st nd rd x day's has pts fps all each every whole other told
    bag bags point points hand hands link links pole poles chain chains rod rods shot shots
    """.split()
)
#: Units written in capitals ("330FT AGL", "WI 5NM", "12 KG") and the unit each shouts:
#: only these, so "200 US dollars" is no 200 µs and "Gate 4 AB" no area. "NM" is nautical
#: miles and "KT" knots as aviation and the sea write them; "MM" and "MG" are millimetres
#: and milligrams, never pint's megamolar and megagauss.
_SHOUTED = {
    **{u: u.lower() for u in "FT KM KG CM MIN MINS HR HRS SEC SECS LB LBS OZ GAL YDS".split()},
    **{"MM": "mm", "MG": "mg", "KW": "kW", "KWH": "kWh", "KMH": "km/h", "HZ": "Hz"},
    **{"KHZ": "kHz", "MHZ": "MHz"},
    **{"NM": "nmi", "KT": "knot", "KTS": "knot", "LTR": "l", "LTRS": "l", "RPM": "rpm"},
}
#: Fraction words after a smaller count: a share ("three quarters" = 75 %).
_SHARES = {
    w: n
    for n, forms in (
        (2, "half halves"),
        (3, "third thirds"),
        (4, "quarter quarters"),
        (5, "fifth fifths"),
        (10, "tenth tenths"),
    )
    for w in forms.split()
}
#: Dimensions a quantity is compared in; other pint readings of a word are kept as text.
_DIMENSIONS = frozenset(
    {
        "[length]",
        "[mass]",
        "[time]",
        "[length] ** 3",
        "[length] ** 2",
        "[mass] * [length] ** 2 / [time] ** 2",
        "[mass] * [length] ** 2 / [time] ** 3",
        "[temperature]",
        "[length] / [time]",
        "[length] ** 3 / [time]",
        "[time] / [length]",
        "[information]",
        "[currency]",
        "[current]",
        "1 / [time]",
        "[mass] * [length] ** 2 / [time] ** 3 / [current]",
        # concentrations: "14.2 g/dL" is "142 g/L"; "5.4 mmol/L" (a g/L-for-g/dL swap is a
        # changed unit, not two bare numbers that happen to differ)
        "[mass] / [length] ** 3",
        "[substance] / [length] ** 3",
    }
)
_RATE_FIRST = re.compile(r"(?:per|an?|each|every)\s+[A-Za-z]|/", re.IGNORECASE)
"""A unit text that opens with a rate word: the number before it is a count per period."""
_CURRENCIES = {"£": "GBP", "$": "USD", "€": "EUR"}
#: Currency words after a number -> (code, factor to the code's unit). "pounds" is not
#: here: pint reads it as mass, and :func:`_sterling` lets it also stand for GBP.
_CURRENCY_WORDS = {
    "euro": ("EUR", 1.0),
    "euros": ("EUR", 1.0),
    "dollar": ("USD", 1.0),
    "dollars": ("USD", 1.0),
    "quid": ("GBP", 1.0),
    "pence": ("GBP", 0.01),
    "penny": ("GBP", 0.01),
    "p": ("GBP", 0.01),  # "45p per mile", against the number only (see ``_read``)
}
_SCALES = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6}
_SCALES |= {"bn": 1e9, "billion": 1e9, "grand": 1e3}
#: A scale after a number: words always ("1.25 thousand"), letters only after a currency
#: symbol ("£1.2m"; "5 m" is five metres).
_SCALE_WORDS = r"(thousand|million|billion|grand)\b\s*"
_SCALE = r"(k|mn|m|bn|thousand|million|billion|grand)\b\s*"
_RELEASE_WORDS = r"(?:alpha|beta|dev|pre|post|final|release|patch|build|stable|lts)"
#: One-letter units written on a number ("800g", "15m", "2h", "5s", "2l"; "220C" is degrees);
#: any other letter after a number is a grade or a code ("5.10a", "6b"), not a unit pint
#: happens to know.
_LETTER_UNITS = frozenset({"g", "m", "h", "s", "l"})
#: Electrical units written on a number, upper case only ("16A", "230V", "900W").
_ELECTRIC_LETTERS = frozenset({"A", "V", "W"})
#: Informal unit words pint reads otherwise ("kilos" would be kiloseconds) or not at all
#: ("gig").
_UNIT_ALIASES = {
    "kilo": "kilogram",
    "kilos": "kilogram",
    "kgs": "kilogram",
    "gig": "gigabyte",
    "gigs": "gigabyte",
    "meg": "megabyte",
    "megs": "megabyte",
}


@dataclass(frozen=True)
class Value:
    """One protected value: its text, its kind and its meaning.

    ``kind``: date | time | datetime | week | weekday | version | identifier | dimensions |
    ratio | quantity | number | multiplier | coordinate | text. ``key`` is the meaning
    compared: a date as ``(year, month, day)`` with None for a part not stated; a weekday as
    0 (Monday) to 6; a time as minutes after midnight; a coordinate as (``lat``/``lon``,
    signed decimal degrees, half its last stated digit); dimensions as
    the tuple of sizes; a ratio ("2/3") as (part, whole); a quantity as
    (magnitude in base units, dimensionality, magnitude as written, unit as written); a
    number as its float; a version / identifier / text as the casefolded string.
    ``parsed`` is False when no library could read it (then it is compared as text).
    ``bound`` is how a hedge or a comparison before a number or quantity bounds it: ``~``
    ("about 40 minutes": any value within 10 % states it), ``>``, ``>=``, ``<``, ``<=``
    ("more than 30", "at least 30", "fewer than 30", "up to 30": stated by the same bound,
    or ``>=`` / ``<=`` by the value itself); None: the value itself."""

    text: str
    kind: str
    key: Any
    parsed: bool = True
    span: tuple[int, int] = (0, 0)
    bound: str | None = None
    #: up to 30 characters of the text before the value (not compared: the same value read
    #: from another sentence is the same value)
    lead: str = field(default="", compare=False)
    #: up to 20 characters of the text after the value (not compared either)
    tail: str = field(default="", compare=False)


@cache
def _registry() -> Any:
    import pint

    return pint.UnitRegistry()


def _libraries() -> bool:
    try:
        import dateparser  # noqa: F401
        import number_parser  # noqa: F401
        import pint  # noqa: F401
    except ImportError:
        return False
    return True


_BASE = _dt.datetime(2000, 1, 1)
_DP_SETTINGS = {
    "DATE_ORDER": "DMY",
    "PREFER_DAY_OF_MONTH": "first",
    "RELATIVE_BASE": _BASE,
    "RETURN_AS_TIMEZONE_AWARE": False,
    "STRICT_PARSING": False,
}


@lru_cache(maxsize=65536)
def _parse_date(text: str) -> _dt.datetime | None:
    import dateparser

    parsed = dateparser.parse(text, languages=["en"], settings=_DP_SETTINGS)
    return parsed if isinstance(parsed, _dt.datetime) else None


@lru_cache(maxsize=65536)
def _number_words(text: str) -> float | None:
    """A number in words ("twenty-five", "two and a half", "twelve point six");
    number_parser reads no fractions or spoken decimals, so a trailing "and a half / a
    quarter / three quarters" or "point <digits>" is added here."""
    from number_parser import parse_number

    fraction = 0.0
    m = re.search(rf"{_FRACTION}$", text, re.IGNORECASE)
    if m is not None:
        part = " ".join(m.group(0).split()[1:]).casefold()
        fraction, text = _FRACTIONS[part], text[: m.start()]
    m = re.search(rf"{_POINT}$", text, re.IGNORECASE)
    if m is not None:  # "twelve point six": the digits after "point" one by one
        digits = "".join(str(_DIGIT_WORDS[w.casefold()]) for w in m.group(0).split()[1:])
        fraction, text = float(f"0.{digits}"), text[: m.start()]
    words = re.sub(r"\bn[ao]ught\b", "zero", text.replace("-", " "), flags=re.IGNORECASE)
    m = _HUNDREDS_SPOKEN.fullmatch(words.strip())
    if m is not None:  # "one-seventy" is 170, "two fifty" 250
        words = f"{m.group(1)} hundred {m.group(2)}"
    n = parse_number(words)
    return None if n is None else float(n) + fraction


#: Hundreds said without "hundred" ("axis one-seventy", "two fifty"), read as hundreds.
_HUNDREDS_SPOKEN = re.compile(
    r"(one|two|three|four|five|six|seven|eight|nine)\s+"
    r"((?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
    r"(?:\s+(?:one|two|three|four|five|six|seven|eight|nine))?)",
    re.IGNORECASE,
)


def _digits(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _date_key(text: str) -> tuple[int | None, int | None, int | None] | None:
    parsed = _parse_date(text)
    if parsed is None:
        return None
    has_year = re.search(r"\b\d{4}\b|^\d{1,2}/\d{1,2}/\d{2}$", text.strip()) is not None
    has_day = re.search(r"(?<![\d-])\d{1,2}(?:st|nd|rd|th)?\b(?![:\d])", text) is not None or (
        re.search(r"\d{4}[-/]\d{2}[-/]\d{2}", text) is not None
    )
    if re.fullmatch(rf"{_YEAR}-\d{{2}}", text.strip()):
        has_day = False
    return (
        parsed.year if has_year else None,
        parsed.month,
        parsed.day if has_day else None,
    )


def _money_rate(
    amount: float, code: str, per: str, number: float, unit: str
) -> tuple[float, str, float, str] | None:
    """Money per unit ("1.87 GBP per litre", "£2 a kilo"): the amount per base unit of the
    denominator, so 1.87 GBP per litre is not 1.87 GBP per cubic metre; None when the
    denominator is no unit ("per person", "a night": then the amount alone is compared)."""
    per = _UNIT_ALIASES.get(per.casefold(), per)
    ureg = _registry()
    for name in (per, per[:-1] if per.endswith("s") else None):
        if not name or name.split()[0].casefold() in _NOT_UNITS:
            continue
        try:
            base = ureg.Quantity(1.0, ureg.parse_units(name)).to_base_units()
        except Exception:
            continue
        dim = str(base.dimensionality)
        if dim in _DIMENSIONS and dim != "[currency]" and base.magnitude:
            return (amount / float(base.magnitude), f"[currency:{code}] / {dim}", number, unit)
    return None


def _quantity(number: float, unit_text: str) -> tuple[float, str, float, str] | None:
    unit = unit_text.strip().strip("-").strip()
    # "°C", and a capital C or F alone after a number ("-95.2 C"): degrees, not coulombs
    unit = re.sub(r"^(?:°\s?)?C$", "degC", unit)
    unit = re.sub(r"^(?:°\s?)?F$", "degF", unit)
    unit = re.sub(r"\s+an?\s+", " / ", unit)
    unit = re.sub(r"\s+per\s+", " / ", unit)
    # a ground sample distance ("2.5 cm/px"): a length on the ground per pixel of the image
    unit = re.sub(r"\s*/\s*(?:px|pixels?)$", "", unit, flags=re.IGNORECASE)
    if not unit or unit.split()[0].casefold() in _NOT_UNITS:
        return None
    if unit.casefold() == "ppl":  # the milk and fuel trades' pence per litre
        unit = "pence / litre"
    money, _, per = unit.partition(" / ")
    if per and money.casefold() in _CURRENCY_CODES.union(_CURRENCY_WORDS):
        code, factor = _CURRENCY_WORDS.get(money.casefold(), (money.upper(), 1.0))
        return _money_rate(number * factor, code, per, number, unit)
    if unit.casefold() in _CURRENCY_CODES:
        code = unit.upper()
        return (number, f"[currency:{code}]", number, code)
    if unit.casefold() in _CURRENCY_WORDS:
        code, factor = _CURRENCY_WORDS[unit.casefold()]
        return (number * factor, f"[currency:{code}]", number, unit)
    unit = _UNIT_ALIASES.get(unit.casefold(), unit)
    unit = unit.replace("²", "**2").replace("³", "**3")  # "961.0 m³" is a volume
    parts = _SHARES.get(unit.casefold())
    if parts is not None and 0 < number < parts:
        # "three quarters", "two thirds": a share (pint reads a quarter as 28 lb)
        return (number / parts, "[percent]", 100.0 * number / parts, unit.casefold())
    if unit == "%":
        return (number / 100.0, "[percent]", number, "%")
    if unit in ("MM", "MG"):  # pint would read megamolar and megagauss
        unit = _SHOUTED[unit]
    ureg = _registry()
    try:
        q = ureg.Quantity(number, ureg.parse_units(unit))
        base = q.to_base_units()
    except Exception:  # an unknown word: not a unit
        if unit in _SHOUTED:  # a unit in capitals: the unit it shouts
            return _quantity(number, _SHOUTED[unit])
        singular = unit[:-1] if unit.endswith("s") else None
        if not singular:
            return None
        try:
            q = ureg.Quantity(number, ureg.parse_units(singular))
            base = q.to_base_units()
        except Exception:
            return None
    dim = str(q.dimensionality)
    if dim == "dimensionless" and re.search(r"(?:bytes?|bits?|[kMGTP]?i?B)$", unit):
        dim = "[information]"  # pint counts bits as dimensionless
    if dim not in _DIMENSIONS or dim == "[currency]":
        return None
    return (float(base.magnitude), dim, number, unit)


def _clock(text: str, span: tuple[int, int]) -> Value | None:
    m = _CLOCK_RE.fullmatch(text) or _CLOCK_RE.fullmatch("at " + text, 3)  # "at eight"
    if m is None:
        return None
    hour_text = next((h for h in m.group("h1", "h2", "h3", "h4", "h5") if h), "").casefold()
    # "one minute to midnight" is 23:59, "ten past noon" 12:10: the named hour says the half
    # of the day
    named = hour_text in _NAMED_HOURS
    hour = _hour(hour_text)
    minutes = 30 if m.group("h3") else 0  # "half seven" is 7:30
    if m.group("min"):
        word = m.group("min").casefold().replace("a ", "").replace("-", " ")
        if word.split()[-1] in ("minute", "minutes"):
            word = " ".join(word.split()[:-1])
            word = word if word.isdigit() else str(int(_number_words(word) or 0))
        minutes = (
            int(word)
            if word.isdigit()
            else 25
            if word == "twenty five"
            else _SPOKEN_MINUTES.get(word.split()[-1], 0)
        )
        if m.group("dir").casefold() == "to":
            hour, minutes = hour - 1, 60 - minutes
    part = m.group("part") or ""
    if named:
        return Value(text, "time", (hour % 24) * 60 + minutes, True, span)
    if not part:
        return Value(text, "time12", (hour % 12) * 60 + minutes, True, span)
    return Value(text, "time", _in_day_part((hour % 12) * 60 + minutes, part), True, span)


def _time(bare: str, span: tuple[int, int]) -> Value:
    """A time of day: "20:00", "8 pm", "7.30pm", "7:30 in the evening" (the part of the day
    moves an hour before noon into the afternoon or evening)."""
    if bare.casefold() in _NAMED_HOURS:  # dateparser reads none of the three
        return Value(bare, "time", (_hour(bare) % 24) * 60, True, span)
    part = re.search(_DAY_PART + r"$", bare, re.IGNORECASE)
    clock = bare[: part.start()] if part else bare
    clock = re.sub(r"^(\d{1,2})\.([0-5]\d)", r"\1:\2", clock.strip())
    if re.fullmatch(r"\d{1,2}", clock):
        clock += ":00"
    parsed = _parse_date(clock)
    if parsed is None:
        return Value(bare, "text", bare.casefold(), False, span)
    minutes = parsed.hour * 60 + parsed.minute
    if not part and re.fullmatch(r"[1-9]:[0-5]\d", clock):
        # "at 3:46" with no am/pm and no leading zero: said on a twelve-hour clock, so
        # either 03:46 or 15:46 (a 24-hour clock writes "03:46")
        return Value(bare, "time12", minutes % 720, True, span)
    if part:
        minutes = _in_day_part(minutes, part.group(0))
    return Value(bare, "time", minutes, True, span)


def _amount(text: str) -> float | None:
    word = text.strip().casefold()
    if word in ("a", "an", "one"):
        return 1.0
    return _digits(word) if word[0].isdigit() else _number_words(word)


def _time_unit(word: str) -> float | None:
    """Minutes in one ``word`` ("hours", "min", "h"); None for no time unit."""
    word = word.casefold()
    return _TIME_UNITS.get(word, _TIME_UNITS.get(word[:-1]) if word.endswith("s") else None)


def _duration(bare: str, span: tuple[int, int]) -> Value | None:
    """A duration or amount of :data:`_DURATION`, as a quantity in minutes (or in the unit
    of "half a kilo"); None when its words are no units ("two apples and a half")."""
    m = re.fullmatch(_DURATION, bare, re.IGNORECASE)
    if m is None:
        return None
    if m.group("ub"):
        words = ((m.group("ua") or m.group("ua1")).strip(), m.group("ub").strip())
        third = (m.group("u3") or "").strip()
        if "," in bare and 1 in (len(words[0]), len(words[1]), len(third)):
            return None  # "1413hrs, 1.1m": a time and a length; "3 hours, 4 minutes" is one
        a, b = _amount(m.group("a") or m.group("a1")), _amount(m.group("b"))
        ua, ub = _time_unit(words[0]), _time_unit(words[1])
        if a is None or b is None or ua is None or ub is None or ua <= ub:
            return None  # "20 minutes 1 hour", "3 days, 4 days": no one duration
        if "," in bare and (b * ub >= ua or re.match(r"\d{4}", bare)):
            # "ETA 1400 hrs, 30 minutes late": a clock, then a delay; "2 hours, 90 minutes":
            # a part worth a whole larger unit
            return None
        if m.group("u3"):  # "3h 31m 52s"
            c, uc = _amount(m.group("c3")), _time_unit(third)
            if c is None or uc is None or ub <= uc or ("," in bare and c * uc >= ub):
                return None
            return _in_minutes(bare, a * ua + b * ub + c * uc, span)
        return _in_minutes(bare, a * ua + b * ub, span)
    if m.group("em"):
        hours, minutes = _amount(m.group("e")), _amount(m.group("em"))
        if hours is None or minutes is None or not 10 <= minutes < 60:
            return None
        return _in_minutes(bare, hours * 60 + minutes, span)
    if m.group("uc") or m.group("ug"):
        amount = _amount(m.group("c") or m.group("g"))
        fraction = _FRACTIONS[" ".join((m.group("fc") or m.group("fg")).split()).casefold()]
        unit = m.group("uc") or m.group("ug")
    else:
        amount = 0.0
        fraction = 0.5 if m.group("half") else 0.25 if m.group("quarter") else 0.75
        unit = m.group("ud")
        if unit.casefold() == "dozen":
            return Value(bare, "number", 12.0 * fraction, True, span)
    if amount is None:
        return None
    total = amount + fraction
    minutes_per = _time_unit(unit)
    if minutes_per is not None:
        return _in_minutes(bare, total * minutes_per, span)
    quantity = _quantity(total, unit)
    return None if quantity is None else Value(bare, "quantity", quantity, True, span)


def _in_minutes(bare: str, minutes: float, span: tuple[int, int]) -> Value | None:
    quantity = _quantity(minutes, "minute")
    return None if quantity is None else Value(bare, "quantity", quantity, True, span)


def _sterling_said(bare: str, span: tuple[int, int]) -> Value | None:
    """GBP of "six pound forty" (6.40), "a fiver" (5), "a tenner" (10)."""
    note = bare.split()[-1].casefold()
    if note in _SLANG_NOTES:
        amount: float | None = _SLANG_NOTES[note]
    else:
        pounds, pence = re.split(r"[ \t]+(?:pounds?|quid)[ \t]+", bare, flags=re.IGNORECASE)
        whole = _digits(pounds) if pounds[:1].isdigit() else _number_words(pounds)
        part = _digits(pence) if pence[:1].isdigit() else _number_words(pence)
        if whole is None or part is None or not 0 < part < 100:
            return None
        amount = whole + part / 100
    return Value(bare, "quantity", (amount, "[currency:GBP]", amount, "GBP"), True, span)


def _read(kind: str, text: str, span: tuple[int, int]) -> Value | None:
    bare = text.strip()
    if kind == "sterling":
        return _sterling_said(bare, span)
    if kind in ("version", "identifier", "week"):
        compound = re.fullmatch(rf"({_DIGITS})-([a-z]{{3,}})-[a-z]+(?:-[a-z]+)*", bare)
        if kind == "identifier" and compound:  # "2-year-old": 2 years ("12-B-3" stays a code)
            number = _digits(compound.group(1))
            quantity = _quantity(number, compound.group(2)) if number is not None else None
            if quantity is not None:
                return Value(bare, "quantity", quantity, True, span)
        if kind == "identifier" and re.fullmatch(rf"{_DIGITS}-?[A-Za-z%]+", bare):
            # "800g", "15-minute", "30-hour": a quantity; "12th": an ordinal, not a value
            if re.fullmatch(r"\d+(?:st|nd|rd|th)", bare):
                return None
            letters = bare.lstrip("0123456789.,-")
            if letters.casefold() == "k":  # "8.4k": thousands
                number = _digits(bare[: -len(letters)].rstrip("-"))
                return None if number is None else Value(bare, "number", number * 1000, True, span)
            if letters.casefold() in ("c", "f"):  # "220C": degrees, not coulombs
                degrees = _read("quantity", f"{bare[: -len(letters)]} °{letters.upper()}", span)
                return degrees and Value(bare, degrees.kind, degrees.key, True, span)
            if (
                letters == "%"
                or letters.casefold() in _LETTER_UNITS | {"x"}
                or letters in _ELECTRIC_LETTERS
                or (len(letters) > 1 and _quantity(1.0, letters) is not None)
            ):
                return _read("quantity", bare.replace("-", " "), span)
            counted = re.fullmatch(rf"({_DIGITS})-(?!{_RELEASE_WORDS}$)[a-z]{{3,}}", bare)
            if counted:  # "3-bed", "4-seater": a count of what the word names ("2-beta" stays)
                number = _digits(counted.group(1))
                return None if number is None else Value(bare, "number", number, True, span)
            # "5.10b", "6a", "7c": a grade or a code, kept whole ("5.10a" is not "5.10b")
        return Value(
            bare,
            kind,
            bare.casefold().lstrip("v") if kind == "version" else bare.casefold(),
            True,
            span,
        )
    if kind == "agegroup":
        return Value(bare, "identifier", f"u{int(re.sub(r'[^0-9]', '', bare))}", True, span)
    if kind == "weekday":
        return Value(bare, "weekday", _WEEKDAYS.index(bare.casefold().rstrip("s")), True, span)
    if kind == "ratio":
        part, whole = (int(n) for n in bare.split("/"))
        return Value(bare, "ratio", (part, whole), True, span)
    if kind == "multiplier":
        return Value(bare, "number", _MULTIPLIERS[bare.casefold()], True, span)
    if kind == "elapsed":
        minutes_text, seconds_text = bare.split(":")
        elapsed = _quantity(int(minutes_text) + float(seconds_text) / 60, "minute")
        return None if elapsed is None else Value(bare, "quantity", elapsed, True, span)
    if kind == "pace":
        m = re.fullmatch(_PACE, bare, re.IGNORECASE)
        assert m is not None
        minutes = int(m.group("m") or m.group("m2")) + int(m.group("s") or m.group("s2") or 0) / 60
        distance = (m.group("u") or m.group("u2")).casefold()
        pace = _quantity(minutes, "minute / " + ("km" if distance.startswith("k") else "mile"))
        return None if pace is None else Value(bare, "quantity", pace, True, span)
    if kind == "month":
        return Value(bare, "date", (None, _MONTH_NAMES.index(bare) + 1, None), True, span)
    if kind == "shortyear":
        # '37 is 2037 and '94 is 1994 (the POSIX pivot: 69-99 are the 1900s)
        yy = int(bare[-2:])
        named = _parse_date(bare[:-3].strip()) if len(bare) > 3 else None
        year = 2000 + yy if yy <= 68 else 1900 + yy
        return Value(bare, "date", (year, named.month if named else None, None), True, span)
    if kind == "monthyear":
        month, year = (int(n) for n in bare.split("/"))
        return Value(bare, "date", (year, month, None), True, span)
    if kind == "hhmm":
        return Value(bare, "time", int(bare[:2]) * 60 + int(bare[-2:]), True, span)
    if kind == "daymonth":
        day, month = (int(n) for n in bare.split("/"))
        return Value(bare, "date", (None, month, day), True, span)
    if kind == "dayordinal":
        return Value(bare, "date", (None, None, int(re.sub(r"\D", "", bare))), True, span)
    if kind == "datetime":
        bare = re.sub(r"^(\d{4}):(\d{2}):(\d{2})", r"\1-\2-\3", bare)  # EXIF
    if kind in ("date", "datetime"):
        # "the twenty-second of March" is read as "22 of March"
        digits = re.sub(
            rf"^(?:the\s+)?({_ORDINAL_DAY})\b",
            lambda m: str(_ORDINAL_DAYS[re.sub(r"[\s-]+", "-", m.group(1).casefold())]),
            bare,
            flags=re.IGNORECASE,
        )
        key = _date_key(re.sub(r"^(\d{1,2})[.-](\d{1,2})[.-](\d{4})$", r"\1/\2/\3", digits))
        if key is None:
            return Value(bare, "text", bare.casefold(), False, span)
        if kind == "datetime":
            parsed = _parse_date(bare)
            assert parsed is not None
            return Value(bare, "datetime", (*key, parsed.hour * 60 + parsed.minute), True, span)
        return Value(bare, "date", key, True, span)
    if kind == "dimensions":
        sizes = tuple(int(n) for n in re.findall(r"\d+", bare))
        return Value(bare, "dimensions", sizes, True, span)
    if kind == "coordinate":
        return _coordinate(bare, span)
    if kind == "clock":
        return _clock(bare, span)
    if kind == "time":
        return _time(bare, span)
    if kind == "duration":
        return _duration(bare, span)
    if kind == "dozen":
        m = re.fullmatch(_DOZEN, bare, re.IGNORECASE)
        assert m is not None
        count = m.group("n").casefold()
        n = 0.5 if count.startswith("half") else _amount(count)
        return None if n is None else Value(bare, "number", 12.0 * n, True, span)
    # quantity / number
    coded = re.match(_CODE_FIRST, bare)
    if coded is not None:
        # "GBP 619.50", "GBP -150.00": the code's money, its number read alone (a minus
        # sign stays before the value, where :func:`_negative` looks)
        inner = _read(kind, bare[coded.end() :], (span[0] + coded.end(), span[1]))
        if inner is None or inner.kind != "number":
            return inner
        currency = bare[:3]
        return replace(
            inner, kind="quantity", key=(inner.key, f"[currency:{currency}]", inner.key, currency)
        )
    m = re.match(
        rf"([£$€])?\s?({_DIGITS}|{_NUMWORDS})\s*-?\s*(.*)$", bare, re.IGNORECASE | re.DOTALL
    )
    if m is None:
        return None
    symbol, number_text, unit = m.group(1), m.group(2), m.group(3)
    if re.match(r"p\b", unit) and bare[m.end(2) : m.end(2) + 1] != "p":
        unit = ""  # pence only written against the number ("45p"; "page 10 p 12" is none)
    if number_text[0].isdigit():
        number = _digits(number_text)
    else:
        number = _number_words(number_text)
    if number is None:
        if any(ch.isdigit() for ch in bare):
            return Value(bare, "text", bare.casefold(), False, span)
        return None
    scale = re.match(_SCALE if symbol else _SCALE_WORDS, unit, re.IGNORECASE)
    if scale:  # "£1.2m", "£1.2 million", "1.25 thousand"
        number *= _SCALES[scale.group(1).casefold()]
        unit = unit[scale.end() :]
    elif _YEAR_ONLY.match(number_text) and not unit:
        return Value(bare, "date", (int(number), None, None), True, span)
    if symbol:
        code = _CURRENCIES[symbol]
        per = re.match(r"(?:per|an?)\s+(.+)$|/\s*(.+)$", unit, re.IGNORECASE)
        rate = per and _money_rate(number, code, per.group(1) or per.group(2), number, unit)
        if rate:
            return Value(bare, "quantity", rate, True, span)
        # the words after an amount that is no rate are not its unit ("£1,610 between them")
        shown = bare[: len(bare) - len(unit)].rstrip(" -")
        return Value(
            shown,
            "quantity",
            (number, f"[currency:{code}]", number, code),
            True,
            (span[0], span[0] + len(shown)),
        )
    shown = bare
    words = unit.split()
    if len(words) == 2 and words[1].casefold() in _NOT_UNITS:
        unit = words[0]  # "32 cm in 24 hrs": centimetres, not cm·inch
        shown = bare[: bare.index(unit, m.start(3)) + len(unit)]
    nautical = re.match(r"nautical\s+miles?\b", unit, re.IGNORECASE)
    if nautical:  # "11.8 nautical miles": not statute miles
        shown = bare[: bare.index(nautical.group(0), m.start(3)) + len(nautical.group(0))]
        unit = "nautical_mile"
    quantity = _quantity(number, unit) if unit else None
    if quantity is None and _RATE_FIRST.match(unit):
        # "37.5 per week", "2 a day": a rate whose numerator names no unit — a number,
        # never a quantity of its period (37.5 weeks)
        unit = ""
    for word in unit.split()[:2] if quantity is None and unit and " " in unit else ():
        if word.casefold() in _NOT_UNITS:
            break  # "2017 and has": a word after "and" is no unit of the number
        quantity = _quantity(number, word)
        if quantity is not None:
            shown = bare[: bare.index(word, m.start(3)) + len(word)]
            break
    if quantity is not None:
        return Value(shown, "quantity", quantity, True, (span[0], span[0] + len(shown)))
    lead = len(text) - len(text.lstrip())
    return Value(
        number_text,
        "number",
        number,
        True,
        (span[0] + lead + m.start(2), span[0] + lead + m.end(2)),
    )


def _untaken(
    pattern: re.Pattern[str], text: str, taken: list[tuple[int, int]]
) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` in ``text`` outside the ``taken`` spans (a list that
    grows as the caller takes what it reads). A match running into a taken span is cut
    short before it ("14 kn" of "14 kn G21" where "G21" is taken), and the search goes on
    after the span: a match that starts inside one ("07 hosts four" in "wh-velm-07 hosts
    four hundred and twelve") never hides what follows it."""
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        start, end = m.span()
        clash = [(s, e) for s, e in taken if s < end and start < e]
        if not clash:
            yield m
            pos = max(end, start + 1)
            continue
        first = min(s for s, _ in clash)
        if first > start:
            cut = pattern.match(text, start, first)
            if cut is not None and cut.group(0).strip():
                yield cut
        pos = max(max(e for _, e in clash), start + 1)


#: A decimal comma ("2,5 kg", "15,00 EUR", "€ 3,50"): one or two digits after the comma,
#: a unit or currency after the number or a currency before it; read as a decimal point.
#: A thousands comma has three digits after it ("1,500 EUR"), a list a space ("5, 6").
_DECIMAL_COMMA = re.compile(
    r"(?<![\d,.])\d{1,4},\d{1,2}(?![\d]|,\d)"
    r"(?=[ \t]?(?:EUR|€|euros?|CHF|kg|g|km|m|cm|mm|l|ml|t|kn|nm|h|min|°C?|%|[kKMGT]B)(?!\w))"
    r"|(?:€|\bEUR)[ \t]?\d{1,4},\d{1,2}(?![\d]|,\d)"
)


def _csv_like(text: str) -> bool:
    """Whether ``text`` has two lines or more with commas, none of them followed by a space."""
    lines = [ln for ln in text.splitlines() if "," in ln]
    return len(lines) >= 2 and not any(re.search(r",\s", ln) for ln in lines)


@lru_cache(maxsize=16384)
def _read_values(text: str) -> tuple[Value, ...]:
    if not _libraries():
        return tuple(
            Value(m.group(0), "text", m.group(0).casefold(), False, m.span())
            for m in re.finditer(r"\S*\d\S*", text)
        )
    # same length: the spans stand, and each value keeps its text as written; a CSV's
    # commas are its separators ("laps,time\n4,15 min")
    written = text
    if not _csv_like(text):
        text = _DECIMAL_COMMA.sub(lambda m: m.group(0).replace(",", "."), text)
    taken: list[tuple[int, int]] = []
    out: list[Value] = []
    for kind, pattern in _SHAPES:
        for m in _untaken(pattern, text, taken):
            start, end = m.span()
            piece = m.group(0).rstrip(" -")
            end = start + len(piece)
            if not piece.strip() or any(s < end and start < e for s, e in taken):
                continue
            if kind == "quantity" and not any(ch.isdigit() for ch in piece):
                if not re.match(_NUMWORDS, piece, re.IGNORECASE):
                    continue
            value = _read(kind, piece, (start, end))
            if value is None:
                continue
            taken.append(value.span if kind in ("quantity",) else (start, end))
            out.append(value)
    out.sort(key=lambda v: v.span)
    read = [
        replace(
            _bounded(v, text),
            lead=text[max(0, v.span[0] - 30) : v.span[0]],
            tail=text[v.span[1] : v.span[1] + 20],
        )
        for v in _later_hours(_day_ranges(out, text), text)
    ]
    if written != text:
        read = [
            replace(
                v,
                text=written[v.span[0] : v.span[1]],
                lead=written[max(0, v.span[0] - 30) : v.span[0]],
                tail=written[v.span[1] : v.span[1] + 20],
            )
            for v in read
        ]
    return tuple(_list_days(_clock_halves(read, written)))


#: A time that a 24-hour clock writes: a leading zero or an hour after noon ("07:15", "17:02").
_TWENTY_FOUR = re.compile(r"(?<![\d:.])(?:0\d|1[3-9]|2[0-3])[:.][0-5]\d(?![\d:])")
_ONE_DIGIT_HOUR = re.compile(r"[1-9]:[0-5]\d")


def _on_a_24_hour_clock(v: Value) -> Value:
    """``v`` as a 24-hour time when it is a one-digit hour read as either half of the day
    ("9:15" is 09:15); any other value unchanged."""
    if v.kind == "time12" and _ONE_DIGIT_HOUR.fullmatch(v.text):
        return replace(v, kind="time")
    return v


def _clock_halves(values: list[Value], text: str) -> list[Value]:
    """A one-digit hour with no am/pm ("at 3:46") is either half of the day (``time12``) —
    unless the text writes a 24-hour time elsewhere ("off at 9:15, on again at 17:02"): then
    it is on that clock too. (The evidence's are always on it: :func:`match_values`.)"""
    return [_on_a_24_hour_clock(v) for v in values] if _TWENTY_FOUR.search(text) else values


#: A day ordinal that continues a list of them ("the 14th, 15th and 16th"), and one read
#: after ", the " only before such a list.
_LIST_DAY = re.compile(r"\d[snrt][tdh](?:,|,? and) $")


def _list_days(values: list[Value]) -> list[Value]:
    """A day ordinal read as continuing a list stays a day only when the ordinal before it
    is a day: "on the 14th, 15th and 16th" are three days, "finished 3rd, 5th and 9th"
    three places."""
    out: list[Value] = []
    for v in values:
        if (
            v.kind == "date"
            and re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)", v.text)
            and _LIST_DAY.search(v.lead)
            and not (out and out[-1].kind == "date" and out[-1].key[:2] == (None, None))
        ):
            v = replace(v, kind="number", key=float(v.key[2]))
        out.append(v)
    return out


#: A modal's negation before a comparative ("can't be more than", "must not exceed"): the
#: bound it makes is the opposite of the comparative's.
_MUST_NOT = (
    r"(?:can(?:'|’)?t|cannot|can\s+not|must\s+not|mustn(?:'|’)?t|may\s+not|should\s+not"
    r"|shouldn(?:'|’)?t|won(?:'|’)?t|will\s+not|never|not)"
)
#: Words before a number that make it a bound, not the value itself ("over" is not here: "14
#: concerts over 3 weeks" is during; "under" only before a space: "under-5s" is an age group).
_BOUNDS = (
    (
        "<=",
        r"no\s+more\s+than|not\s+more\s+than|at\s+most|up\s+to|within"
        # "can't be more than 12 months", "must not be longer than 20 minutes"
        # ("later"/"earlier" are not here: "no later than 3 hours before" is at least 3 hours)
        rf"|(?:{_MUST_NOT}\s+(?:be\s+)?|no\s+)(?:more|longer|greater|higher|bigger|larger)"
        r"\s+than"
        rf"|{_MUST_NOT}\s+(?:exceed|go\s+over|go\s+above)",
    ),
    (
        "~",
        r"about|around|roughly|approximately|approx\.?|nearly|almost|some|circa|just\s+over"
        r"|call\s+it"
        r"|just\s+under|close\s+to|(?:a\s+(?:bit|little|touch|shade)|just|slightly)\s+"
        r"(?:over|under|more\s+than|less\s+than|above|below)|just\s+shy\s+of",
    ),
    (
        ">=",
        r"at\s+least|no\s+less\s+than|not\s+less\s+than|no\s+fewer\s+than|a\s+minimum\s+of"
        rf"|(?:{_MUST_NOT}\s+(?:be\s+)?|no\s+)(?:less|fewer|shorter|lower|smaller)"
        r"\s+than"
        rf"|{_MUST_NOT}\s+(?:go\s+below|drop\s+below|fall\s+below)",
    ),
    (
        ">",
        r"more\s+than|above|exceeds?|exceeding|exceeded|upwards\s+of|in\s+excess\s+of"
        r"|(?:later|longer|greater|higher|"
        r"larger|bigger|older)\s+than",
    ),
    (
        "<",
        r"less\s+than|fewer\s+than|below|under|(?:shorter|earlier|lower|smaller|younger)\s+than",
    ),
)
#: "~" has no word boundary before it ("at ~3.4 kB").
_TILDE = r"|(?<!\w)~"
_BOUND_RES = tuple(
    (b, re.compile(rf"(?:\b(?:{words}){_TILDE if b == '~' else ''})\s*$", re.IGNORECASE))
    for b, words in _BOUNDS
)


#: Hedges before a time of day ("just after 10 pm" against 22:05): within :data:`_NEAR_MINUTES`.
_NEAR_TIME = re.compile(
    r"(?:\b(?:(?:just|shortly|soon|right)\s+(?:after|before)|about|around|roughly|approximately"
    r"|approx\.?|circa|c\.)|(?<!\w)~)\s*(?:at\s+)?$",
    re.IGNORECASE,
)
_NEAR_MINUTES = 15


def _bounded(v: Value, text: str) -> Value:
    before = text[max(0, v.span[0] - 40) : v.span[0]]
    if v.kind in ("time", "time12") and _NEAR_TIME.search(before):
        return Value(v.text, v.kind, v.key, v.parsed, v.span, "~")
    if v.kind not in ("number", "quantity"):
        return v
    for bound, pattern in _BOUND_RES:
        if pattern.search(before):
            return Value(v.text, v.kind, v.key, v.parsed, v.span, bound)
    return v


#: What a bare hour after a time ends with: its clause, or a place or day after it.
_ENDS_AN_HOUR = re.compile(r"\s*(?:[,;!?)]|\.(?!\d)|$|\s(?:at|on|sharp|latest)\b)")
#: "by 11" is an hour; "rose by 11" an amount.
_BY_AN_HOUR = re.compile(r"\b(?:by|till|until|before)\s+$", re.IGNORECASE)
_CHANGED_BY = re.compile(
    r"\b(?:rose|fell|up|down|cut|grew|increased|decreased|reduced|dropped|raised|lowered|"
    r"went|go|goes|rise|rises|fall|falls|won|win|wins|beat|beaten|lost|lose|led|lead|leads|"
    r"late|early|ahead|behind|short|over|under)\s+by\s+$",
    re.IGNORECASE,
)


def _later_hours(values: list[Value], text: str) -> list[Value]:
    """A bare hour after a time said with am/pm in the same sentence ("music off by 10pm,
    everyone out by 11") is a time in that half of the day, not a number: only an hour
    after "by/till/until/before" at the end of its clause (or before "at"/"on"), never a
    margin ("rose by 11", "won by 9")."""
    out = list(values)
    said: Value | None = None
    for i, v in enumerate(out):
        if v.kind == "time" and re.search(r"\d\s*[ap]\.?m\.?\W?$", v.text, re.IGNORECASE):
            said = v
            continue
        if (
            said is None
            or v.kind != "number"
            or not re.fullmatch(r"1[0-2]|[1-9]", v.text)
            or re.search(r"[.!?](?:\s|$)", text[said.span[0] : v.span[0]])
            or not _ENDS_AN_HOUR.match(text, v.span[1])
        ):
            continue
        lead = text[max(0, v.span[0] - 40) : v.span[0]]  # the words just before it
        if not _BY_AN_HOUR.search(lead) or _CHANGED_BY.search(lead):
            continue
        minutes = (int(v.text) % 12) * 60 + (720 if said.key >= 720 else 0)
        if minutes > said.key:
            out[i] = Value(v.text, "time", minutes, True, v.span)
    return out


_RANGE_JOIN = re.compile(r"\s*(?:-|–|&|and|to|or|till|until)\s*(?:the\s+)?$", re.IGNORECASE)


def _day_ranges(values: list[Value], text: str) -> list[Value]:
    """A bare day number joined to the date after it ("1 and 2 November", "3-5 June 2031",
    "14 or 15 May") is a date of that month and year, not a number, and a day of the month
    said alone takes the month of the date it is joined to ("7th to 18th July", "the 8th to
    the 12th of May"); a bare hour joined to a time of day after it ("3 to 4 pm", "9-11 am",
    "from 4 till 6 pm") is a time in the same half of the day, and a bare hour joined to a
    bare hour read as a time ("9 till 4") a time of either half."""
    out = list(values)
    for i in range(len(out) - 1):
        v, nxt = out[i], out[i + 1]
        if (
            v.kind == "date"
            and v.key[:2] == (None, None)
            and nxt.kind == "date"
            and nxt.key[1] is not None
            and _RANGE_JOIN.fullmatch(text[v.span[1] : nxt.span[0]])
        ):
            out[i] = replace(v, key=(nxt.key[0], nxt.key[1], v.key[2]))
            continue
        if (
            v.kind == "date"
            and re.fullmatch(r"1[5-9]\d\d|20\d\d", v.text)
            and nxt.kind == "number"
            and re.fullmatch(r"\d\d", nxt.text)
            and int(nxt.text) > int(v.text[2:])
            and text[v.span[1] : nxt.span[0]] in ("-", "–")
        ):
            # "for 1850–70": the end of a span of years written with its last two digits
            year = int(v.text[:2] + nxt.text)
            out[i + 1] = Value(nxt.text, "date", (year, None, None), True, nxt.span)
            continue
        if v.kind != "number" or not re.fullmatch(r"[0-3]?\d", v.text):
            continue
        if not _RANGE_JOIN.fullmatch(text[v.span[1] : nxt.span[0]]):
            continue
        n = int(v.key)
        if nxt.kind == "date" and nxt.key[1] is not None and nxt.key[2] is not None:
            if 1 <= n <= 31:
                out[i] = Value(v.text, "date", (nxt.key[0], nxt.key[1], n), True, v.span)
        elif nxt.kind == "time" and 1 <= n <= 12 and re.search(r"[ap]\.?m\.?$", nxt.text, re.I):
            start = (n % 12) * 60 + (720 if nxt.key >= 720 else 0)
            if start > nxt.key >= 720:  # "10 to 12 pm": from 10 am
                start -= 720
            out[i] = Value(v.text, "time", start, True, v.span)
        elif (
            nxt.kind == "number"
            and 1 <= n <= 12
            and re.fullmatch(r"1[0-2]|[1-9]", nxt.text)
            and re.fullmatch(r"\s*(?:till|until)\s*", text[v.span[1] : nxt.span[0]], re.I)
        ):
            # "10 till 12": two bare hours joined by "till" are times of day
            out[i] = Value(v.text, "time12", (n % 12) * 60, True, v.span)
            out[i + 1] = Value(nxt.text, "time12", (int(nxt.text) % 12) * 60, True, nxt.span)
        elif nxt.kind == "time12" and 1 <= n <= 12 and re.fullmatch(r"\d{1,2}", nxt.text):
            # "Sat, 9 till 4": a bare hour joined to a bare hour read as a time of day
            out[i] = Value(v.text, "time12", (n % 12) * 60, True, v.span)
    return out


def read_values(text: str) -> list[Value]:
    """The protected values of ``text`` in text order (see the module docstring). Number
    words that are not a count ("one of them", "no one") are values too; a claim's value is
    only ever compared with its evidence's values, so a stray word costs nothing but a
    miss on a number nobody states. A value the text takes back at once ("twelve, no,
    eleven") is not said."""
    values = [v for v in _read_values(text) if not _filler(v, text)]
    taken_back = {
        i
        for i, (v, nxt) in enumerate(pairwise(values))
        if nxt.kind == v.kind and _RETRACTED.fullmatch(text[v.span[1] : nxt.span[0]])
    }
    return [
        one
        for i, v in enumerate(values)
        if i not in taken_back
        for one in _hours_apart(_day_part(v, text))
    ]


#: "ten to noon" after "from" / "between": two hours of a range, not 11:50.
_HOUR_TO = re.compile(rf"({_HOUR})(\s+to\s+)({_HOUR}|noon|midday|midnight)", re.IGNORECASE)


def _hours_apart(v: Value) -> list[Value]:
    """A clock time "H to H2" said after "from" or "between" ("open from ten to noon") read
    as the range's two hours; any other value as it is."""
    m = _HOUR_TO.fullmatch(v.text) if v.kind in ("time", "time12") else None
    if m is None or not re.search(r"\b(?:from|between)\s+$", v.lead, re.IGNORECASE):
        return [v]
    out = []
    for group in (1, 3):
        word = m.group(group).casefold()
        start = v.span[0] + m.start(group)
        span = (start, start + len(word))
        if word in _NAMED_HOURS:
            out.append(Value(m.group(group), "time", (_hour(word) % 24) * 60, True, span))
        else:
            out.append(Value(m.group(group), "time12", (_hour(word) % 12) * 60, True, span))
    return out


#: The part of a day said after a weekday, "that" or "the same" ("6:24 on tuesday evening",
#: "9:04 tuesday morning"): it settles which half of the day a clock time is in.
_LATER_DAY_PART = re.compile(
    r"\s+(?:on\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|that|the\s+same)\s+"
    r"(morning|afternoon|evening|night)\b",
    re.IGNORECASE,
)


def _day_part(v: Value, text: str) -> Value:
    """A time said without am/pm followed by the part of its day (:data:`_LATER_DAY_PART`),
    read as that time of day: a ``time12``, or a morning time written with an hour of one
    or two figures and no leading zero ("6:05" read as 06:05 beside "13:10")."""
    bare = v.kind == "time" and v.key < 720 and re.fullmatch(r"(?:1[0-2]|[1-9])[:.]\d\d", v.text)
    m = _LATER_DAY_PART.match(text, v.span[1]) if v.kind == "time12" or bare else None
    if m is None:
        return v
    return replace(v, kind="time", key=_in_day_part(v.key, m.group(1)))


#: A spoken self-correction between two values of one kind ("half nine, no, half ten",
#: "twelve, sorry, eleven", "the fifty-two, I mean the fifty-four"): the first is taken back.
_RETRACTED = re.compile(
    r"\s*,\s*(?:(?:um|uh|er|erm),?\s+)?(?:no|sorry|I\s+mean|I\s+meant|or\s+rather|wait)"
    r"\s*,\s*(?:(?:um|uh|er|erm),?\s+)?(?:the\s+|it's\s+|it\s+was\s+)?",
    re.IGNORECASE,
)


#: What follows "the one" that makes it a pronoun: a clause or a place ("the one you want",
#: "the one on the left", "the one that broke"); a noun makes it a count ("the one sheet"),
#: and so do "just the one," / "only the one" and "the one in stock" / "on hand".
_PRONOUN_AFTER = re.compile(
    r"\s+(?:you|that|which|who|i|we|they|he|she|it|with|from|by)\b"
    r"|\s+(?:on|in|at|for|to)\s+(?:the|your|my|our|his|her|their|its)\b|\s*[,.;:!?)]",
    re.IGNORECASE,
)


def _filler(v: Value, text: str) -> bool:
    """``one`` in "one of", "no one", "that one", "each one", "a shorter 12-second one", "the
    one you want"…: a pronoun, not a count."""
    if v.kind != "number" or v.text.casefold() != "one":
        return False
    after = text[v.span[1] : v.span[1] + 4].casefold()
    before = text[max(0, v.span[0] - 40) : v.span[0]].casefold()
    return (
        after.startswith(" of")
        or after.startswith("'s")
        or re.search(
            r"\b(?:that|this|which|another|each|any|every|no|next|last|other|new|old)\s+$", before
        )
        is not None
        or re.search(rf"\b(?:a|an|the)\s+(?:(?!{_NOT_MODIFIERS}\s)[\w'’-]+\s+){{1,3}}$", before)
        is not None
        or (
            re.search(r"(?<!just )(?<!only )\bthe\s+$", before) is not None
            and _PRONOUN_AFTER.match(text, v.span[1]) is not None
        )
    )


#: Words between an article and "one" that make it a count, not a pronoun ("the total was
#: one", "a total of one").
_NOT_MODIFIERS = (
    r"(?:is|was|were|are|be|been|has|had|have|holds?|got|with|of|to|at|in|on|for|just|only"
    r"|exactly|total)"
)


@dataclass(frozen=True)
class ValueMatch:
    """How one claim value fares against evidence values: ``present`` (same meaning),
    ``conflicting`` (absent, and the evidence states another value of its kind — a
    swapped value, a changed unit or version), ``parsed`` (False: compared as text)."""

    value: Value
    present: bool
    conflicting: bool


def _sterling(v: Value) -> Value:
    """A quantity in "pound(s)" read as GBP (pint reads the word as mass; "25 pounds"
    against a fee of "25.00 GBP" is the same money); any other value unchanged."""
    if v.kind == "quantity" and str(v.key[3]).casefold() in ("pound", "pounds"):
        return Value(v.text, v.kind, (v.key[2], "[currency:GBP]", v.key[2], "GBP"), True, v.span)
    return v


def _money_of_rate(a: Value, b: Value) -> bool:
    """Whether one of ``a``, ``b`` is a plain amount of the currency the other, a rate, is
    priced in ("1.87 GBP" said of "1.87 GBP per cubic metre", or the other way round): then
    the amounts as written are compared. Only two rates with different units ("per litre"
    against "per cubic metre") conflict."""
    da, db = str(a.key[1]), str(b.key[1])
    plain, rate = (da, db) if " / " in db else (db, da)
    return plain.startswith("[currency:") and " / " not in plain and rate.startswith(f"{plain} / ")


def clock_minutes(v: Value) -> int | None:
    """A time of day's or a date and time's minutes after midnight; None for other values."""
    if v.kind == "time":
        return int(v.key)
    if v.kind == "datetime" and len(v.key) == 4 and v.key[3] is not None:
        return int(v.key[3])
    return None


def _within(a: Value, b: Value) -> bool:
    """Whether evidence value ``b`` states claim value ``a`` with its bound (see
    :class:`Value`): "about 40 minutes" against 38 min, "up to 4" against 4, "more than
    106 countries" against "more than 106 countries"."""
    if b.bound == a.bound and _same_as_written(replace(a, bound=None), b):
        return True
    if a.kind == "time":  # "about 17:20" against 17:18, or a timestamp's 2033-08-12T17:20Z
        if b.kind == "time12":  # against "twenty past five" said in the evidence
            gap = abs(a.key % 720 - b.key)
            return a.bound == "~" and min(gap, 720 - gap) <= _NEAR_MINUTES
        minutes = clock_minutes(b)
        return minutes is not None and a.bound == "~" and abs(a.key - minutes) <= _NEAR_MINUTES
    if a.kind == "time12":  # "about ten past 7" against 19:08, either half of the day
        minutes = (
            b.key if b.kind in ("time", "time12") else b.key[3] if b.kind == "datetime" else None
        )
        if minutes is None or a.bound != "~":
            return False
        gap = abs(minutes % 720 - a.key)
        return bool(min(gap, 720 - gap) <= _NEAR_MINUTES)
    ka, kb = _sterling(a).key, _sterling(b).key
    if a.kind == "quantity" and b.kind == "quantity" and ka[1] == kb[1]:
        x, y = float(ka[0]), float(kb[0])
    elif a.kind == "number" and b.kind in ("number", "quantity"):
        x, y = float(ka), float(kb if b.kind == "number" else kb[2])
    else:
        return False
    if a.bound == "~":
        return _near(y, x, "~")
    # "at least 2 hours" / "up to 4" is stated by the value itself; any larger or smaller
    # value would do only if it were the claim's subject's, and a premise holds many numbers
    # ("more than 106 countries" must not be met by a year or a head count)
    # ... unless the evidence bounds it the other way ("no more than 25%" against "no less
    # than 25%")
    opposite = {">=": ("<=", "<"), "<=": (">=", ">")}.get(a.bound or "", ())
    return (
        a.bound in (">=", "<=")
        and b.bound not in opposite
        and (abs(y - x) <= 1e-9 * max(1.0, abs(x)) or _nautical(a, b))
    )


def _coordinate(bare: str, span: tuple[int, int]) -> Value | None:
    """A coordinate as (axis, signed decimal degrees, half the last stated digit): the
    same place written in degrees-minutes-seconds or decimal degrees is the same value."""
    m = _COORDINATE.fullmatch(bare)
    if m is None:
        return None
    if m.group("dec"):
        number, hemisphere = m.group("dec"), m.group("h2")
        degrees = float(number)
        tolerance = 0.5 * 10 ** -len(number.split(".")[1])
    elif m.group("d3"):
        minutes, hemisphere = m.group("m3"), m.group("h3")
        degrees = float(m.group("d3")) + float(minutes) / 60
        places = len(minutes.split(".")[1]) if "." in minutes else 0
        tolerance = 0.5 * 10**-places / 60
    else:
        seconds, hemisphere = m.group("s"), m.group("h1")
        degrees = float(m.group("d")) + float(m.group("m")) / 60 + float(seconds) / 3600
        places = len(seconds.split(".")[1]) if "." in seconds else 0
        tolerance = 0.5 * 10**-places / 3600
    axis = "lat" if hemisphere in "NS" else "lon"
    sign = -1.0 if hemisphere in "SW" else 1.0
    return Value(bare, "coordinate", (axis, sign * degrees, tolerance), True, span)


def _signs_agree(a: Value, b: Value) -> bool:
    """Whether claim value ``a`` and evidence value ``b`` have one sign: "-5 °C" is no 5 °C,
    "-88.0" no 88.0, a balance of $120 no "-$120.00"; only an amount of money that the claim
    says came back ("one refund: $120") is a ledger's bare "-120.00"."""
    if _negative(a) == _negative(b):
        return True
    return (
        a.kind == "quantity"
        and str(a.key[1]).startswith("[currency")
        and not _negative(a)
        and b.kind == "number"
        and _REFUNDED.search(a.lead) is not None
    )


#: Words before an amount that say it was paid back ("one refund: $120 back to Gus").
_REFUNDED = re.compile(r"\b(?:refund\w*|repaid|reimburs\w*|credited|paid\s+back)\b", re.I)


def _same(a: Value, b: Value) -> bool:
    """Whether evidence value ``b`` states claim value ``a`` (a pound amount as mass or as
    GBP; within ``a``'s bound when it has one)."""
    if a.kind in _SIGNED and b.kind in _SIGNED and not _signs_agree(a, b):
        return False
    if a.bound is not None:
        return _within(a, b)
    sa, sb = _sterling(a), _sterling(b)
    return _same_as_written(a, b) or ((sa, sb) != (a, b) and _same_as_written(sa, sb))


#: A date in figures without a year that may be read month first ("3/11", "3/8") and a day
#: and month joined by a dot ("19.03", "19.03."), as :func:`_numeric_date_readings` reads them.
_SLASHED = re.compile(r"(\d{1,2})/(\d{1,2})")
_DOTTED = re.compile(r"(0?[1-9]|[12]\d|3[01])\.(0[1-9]|1[0-2])\.?")


def _numeric_date_readings(a: Value) -> list[tuple[int | None, int | None, int | None]]:
    """The (year, month, day) readings, the year None, of a date in figures without a year
    that the settings' day-first reading misses: month first ("3/11" is 11 March in the US,
    "3/8-3/13" a week in March), and a day and month with a dot ("on 19.03."), which reads
    as a number. With a year the settings' day-first reading stands ("01/03/2031" is 1
    March; "6/21/32", whose day cannot be a month, is read month first as it is written).
    The reading that is taken stays the value's key; these are only compared with the
    evidence's dates, so "4/5 stars" is no date unless the evidence dates a 5 April."""
    if a.kind in ("date", "ratio") and (m := _SLASHED.fullmatch(a.text)):
        first, second = int(m.group(1)), int(m.group(2))
        out: list[tuple[int | None, int | None, int | None]] = []
        if 1 <= first <= 12 and 1 <= second <= 31:
            out.append((None, first, second))
        if a.kind == "ratio" and 1 <= second <= 12 and 1 <= first <= 31:
            out.append((None, second, first))
        return out
    if a.kind == "number" and (m := _DOTTED.fullmatch(a.text)):
        return [(None, int(m.group(2)), int(m.group(1)))]
    return []


#: The key of an age group ("Under-14", "U14": ``u14``).
_AGE_GROUP = re.compile(r"u(\d{1,2})")

#: Kinds whose number a minus sign before it negates (:func:`_negative`).
_SIGNED = frozenset({"number", "quantity"})


def _nautical(a: Value, b: Value) -> bool:
    """Whether "nm" on one side and "NM" (nautical miles) on the other are one distance
    ("within 5 nm" against "WI 5NM")."""
    if a.kind != "quantity" or b.kind != "quantity":
        return False
    units = {str(a.key[3]).casefold(), str(b.key[3]).casefold()}
    return units == {"nm", "nmi"} and a.key[2] == b.key[2]


def _whole_units_of(a: Value, b: Value) -> bool:
    """Whether duration ``a``, a whole number of one unit ("56 min", "2 hours"), is
    duration ``b`` written in two parts ("56 min 07 s", "2 h 20 min", "56:07") with the
    smaller part dropped: "56 min" is 56 min 07 s, "57 min" is not 56 min 40 s."""
    if a.key[1] != "[time]" or b.key[1] != "[time]" or not float(a.key[2]).is_integer():
        return False
    if not re.fullmatch(r"\d+", a.text.split()[0]) or not _TWO_PARTS.fullmatch(b.text):
        return False
    unit = float(a.key[0]) / float(a.key[2]) if a.key[2] else 0.0
    return unit > 0 and 0 <= float(b.key[0]) / unit - float(a.key[2]) < 1


#: A duration written in two parts: "56 min 07 s", "2 h 20 min", "56:07".
_TWO_PARTS = re.compile(r"\d+[ \t]*[a-z]+\.?[ \t]+\d+[ \t]*[a-z]+\.?|\d+:\d\d", re.I)


def _same_as_written(a: Value, b: Value) -> bool:
    ka, kb = a.key, b.key
    if a.kind == "text" or b.kind == "text":
        return str(a.text).casefold() in str(b.text).casefold() if a.kind == "text" else False
    if a.kind == "coordinate" or b.kind == "coordinate":
        # the coarser of the two says how near is the same place
        return (
            a.kind == b.kind and ka[0] == kb[0] and abs(ka[1] - kb[1]) <= max(ka[2], kb[2]) + 1e-9
        )
    if b.kind in ("date", "datetime") and any(
        all(x is None or x == y for x, y in zip(reading, kb[:3], strict=True))
        for reading in _numeric_date_readings(a)
    ):
        return True  # "3/11" (11 March in the US), "19.03." (19 March) against 2033-03-11
    if a.kind in ("date", "datetime") and b.kind in ("date", "datetime"):
        da, db = ka[:3], kb[:3]
        if any(x is not None and x != y for x, y in zip(da, db, strict=True)):
            return False
        if a.kind == "datetime" and b.kind == "datetime":
            return bool(ka[3] == kb[3])
        return True
    if a.kind == "time":
        return (
            (b.kind == "time" and ka == kb)
            or (b.kind == "datetime" and kb[3] == ka)
            or (b.kind == "time12" and ka % 720 == kb)  # "15:46" against "quarter to four"
        )
    if a.kind == "time12":  # no am/pm said: either half of the day
        if b.kind == "time12":
            return bool(ka == kb)
        minutes = kb if b.kind == "time" else kb[3] if b.kind == "datetime" else None
        return minutes is not None and minutes % 720 == ka
    if a.kind == "number" and b.kind == "week":  # "week 12" against 2031-W12
        return bool(str(kb).endswith(f"w{int(ka):02d}")) if float(ka).is_integer() else False
    if a.kind == "date" and b.kind == "number" and ka[1] is None and ka[2] is None:
        return bool(ka[0] == kb)
    if a.kind == "number" and b.kind in ("date", "datetime") and _YEAR_ONLY.match(a.text):
        return bool(ka == kb[0])  # "the summer 2031 timetable" against 2031-04-30
    if a.kind == "identifier" and b.kind == "number" and b.bound == "<":
        # an age group against "children under 14"
        return (m := _AGE_GROUP.fullmatch(ka)) is not None and float(m.group(1)) == kb
    if a.kind in ("version", "identifier", "week", "dimensions", "ratio"):
        return b.kind == a.kind and ka == kb
    if a.kind == "number" and b.kind == "ratio":  # "2 of the 3 checks" against "2/3"
        return float(ka) in (float(kb[0]), float(kb[1]))
    if a.kind == "quantity":
        if b.kind == "quantity" and _money_of_rate(a, b):
            # "1.87 GBP" said of "1.87 GBP per cubic metre": the amount as written
            return bool(abs(ka[2] - kb[2]) <= 1e-9 * max(1.0, abs(kb[2])))
        if b.kind == "quantity" and ka[1] == kb[1] == "[percent]" and str(ka[3]) != "%":
            # a share in words ("two thirds") is the percentage as the evidence rounds it
            shown = re.search(r"\d+(?:\.(\d+))?", b.text)
            places = len(shown.group(1) or "") if shown else 0
            return bool(abs(ka[2] - kb[2]) <= 0.5 * 10.0**-places + 1e-9)
        if _nautical(a, b):
            return True
        if b.kind == "quantity":
            # relative: base units may be tiny ("5 ml" is 5e-6 m³, "532 nm" 5.32e-7 m)
            if ka[1] == kb[1] and abs(ka[0] - kb[0]) <= 1e-6 * abs(kb[0]) + 1e-300:
                return True
            return _whole_units_of(a, b)
        return False
    if a.kind == "number":
        if b.kind == "number":
            return bool(abs(ka - kb) <= 1e-9 * max(1.0, abs(kb)))
        if b.kind == "quantity":
            return bool(abs(ka - kb[2]) <= 1e-9 * max(1.0, abs(kb[2])))
        if b.kind == "date" and kb[1] is None and kb[2] is None:
            return bool(ka == kb[0])
    return False


def _kin(a: Value, b: Value) -> bool:
    """Whether ``b`` is a value of the same kind as ``a`` (its presence makes a missing
    ``a`` a conflict rather than an absence)."""
    if a.kind == "quantity":
        return b.kind == "quantity" and (
            b.key[1] == a.key[1]
            or _sterling(b).key[1] == _sterling(a).key[1]
            or _money_of_rate(a, b)
        )
    if a.kind in ("date", "datetime"):
        return b.kind in ("date", "datetime")
    if a.kind in ("time", "time12"):
        return b.kind in ("time", "time12", "datetime")
    if a.kind == "number":
        return b.kind in ("number", "quantity")
    if a.kind in ("version", "week", "dimensions", "ratio"):
        return b.kind == a.kind
    if a.kind == "coordinate":
        return b.kind == a.kind and b.key[0] == a.key[0]
    return False


#: Lower-case unit names in column headers ("weight_kg", "output_mwh", "size_kb") that pint
#: would read otherwise (``mwh`` as milliwatt-hours, ``kb`` as kilobarns).
_HEADER_UNITS = {
    "kb": "kB",
    "mb": "MB",
    "gb": "GB",
    "tb": "TB",
    "wh": "Wh",
    "kwh": "kWh",
    "mwh": "MWh",
    "gwh": "GWh",
    "kw": "kW",
    "mw": "MW",
    "kg": "kg",
    "g": "g",
    "lb": "lb",
    "lbs": "lb",
    "km": "km",
    "mi": "mi",
    "miles": "mile",
    "m": "m",
    "m2": "m**2",
    "m3": "m**3",
    "cm": "cm",
    "mm": "mm",
    "l": "L",
    "ml": "mL",
    "litres": "L",
    "liters": "L",
    "min": "min",
    "mins": "min",
    "h": "h",
    "hours": "hour",
    "days": "day",
    "weeks": "week",
    "months": "month",
    "years": "year",
    "yrs": "year",
    "c": "degC",
    "f": "degF",
    "hz": "Hz",
    "khz": "kHz",
    "mhz": "MHz",
    "ghz": "GHz",
    "bit": "bit",
    "bits": "bit",
    "kmh": "km/h",
    "kph": "km/h",
    "mph": "mph",
    "kn": "knot",
    "ms": "ms|m/s",  # "p95_ms" is milliseconds, "wind_speed_ms" metres a second
    "mps": "m/s",
    "k": "K",
    "kt": "knot",
    "kts": "knot",
    "nm": "nmi|nm",  # "distance_nm" is nautical miles at sea, nanometres in a lab
    "nmi": "nmi",
    "gbp": "GBP",
    "eur": "EUR",
    "usd": "USD",
}
#: The last words of a field's name that say the unit its value is written in, not what the
#: value is ("true_heading_deg", "occupancy_pct"): a claim need not say them to name the
#: field. Not a time zone ("received_utc"): "13:02 BST" may be that field's 12:02.
UNIT_SUFFIXES = frozenset(_HEADER_UNITS) | frozenset(
    "deg degs degrees pct percent sec secs".split()
)
#: Units a field or column is named by for :func:`_in_unit_field`: the header units but no
#: bare "min" (a statistics column: minimum, not minutes).
_FIELD_UNITS = {**_HEADER_UNITS, "min": ""}


def _named_units(folded_evidence: str, *, attached: bool) -> list[tuple[float, str, float, str]]:
    """The units the evidence names as header words ("reading_m3", "weight_kg",
    "Weight (kg)"), each read as one of its unit; ``attached``: only those written on a
    field or column name after ``_`` or ``(``, or before ``_`` ("bit_depth")."""
    pattern = r"(?:_|\()([a-z0-9]+)\b|\b([a-z]{3,})(?=_)" if attached else r"([a-z0-9]+)"
    out = []
    for groups in set(re.findall(pattern, folded_evidence)):
        token = "".join(groups) if isinstance(groups, tuple) else groups
        for unit in _HEADER_UNITS.get(token, "").split("|"):
            one = _quantity(1.0, unit) if unit else None
            if one is not None:
                out.append(one)
    return out


def _header_units(v: Value, folded_evidence: str) -> tuple[bool, bool]:
    """(the evidence names the claim quantity's own unit, it names another unit of the same
    dimension) — units written as header words ("reading_m3", "weight_kg")."""
    own = _quantity(1.0, str(v.key[3]))
    same = other_named = False
    if own is None:
        return same, other_named
    for other in _named_units(folded_evidence, attached=False):
        if other[1] != v.key[1]:
            continue
        if abs(other[0] - own[0]) > 1e-9 * max(abs(own[0]), 1.0):
            other_named = True
        else:
            same = True
    return same, other_named


def _near(number: float, claimed: float, bound: str | None) -> bool:
    """Whether ``number`` is the ``claimed`` number: within a tenth when the claim says
    "about" / "a bit over" (bound ``~``), else equal."""
    if bound == "~":
        return abs(number - claimed) <= 0.1 * abs(claimed)
    return abs(number - claimed) <= 1e-6 * max(1.0, abs(claimed))


def _signed(v: Value) -> Value:
    """Quantity ``v`` with the minus sign written before it: a sign matters once a unit
    has an offset ("-95.2 C" is 178 K)."""
    if not _negative(v):
        return v
    signed = _quantity(-float(v.key[2]), str(v.key[3]))
    return v if signed is None else replace(v, key=signed)


def magnitude(v: Value) -> float | None:
    """The size of a number or quantity ``v`` with the minus sign written before it (a
    quantity in its base unit: "-10.6 °C" is colder than "-9.8 °C"); None for other kinds."""
    if v.kind == "number":
        return -float(v.key) if _negative(v) else float(v.key)
    if v.kind == "quantity":
        return float(_signed(v).key[0])
    return None


def _in_header_unit(
    v: Value, have: Sequence[Value], folded_evidence: str, texts: Sequence[str]
) -> bool:
    """Whether the evidence states quantity ``v`` as a number under a field or column whose
    name ends in a unit of its dimension ("2 litres" against ``volume_ml: 2000``, "an hour
    and a half" against ``duration_min | 90``); not in a table with columns named by a
    unit, which :func:`_in_unit_field` read cell by cell ("Spans | 1" beside "Length (m)"
    states no length), nor a number that a field whose name names no unit holds (the same
    table's row read as a record: ``Spans: 1`` beside ``Length (m): 8.4``)."""
    if any(_unit_columns(text) for text in texts):
        return False
    unnamed = {n for text in texts for n in _unitless_numbers(text)}
    v = _signed(v)
    own = _to_base(str(v.key[3]))
    for one in _named_units(folded_evidence, attached=True):
        header = _to_base(one[3])
        if one[1] != v.key[1] or not one[0] or own is None or header is None:
            continue
        for b in have:
            if b.text.lstrip("-") in unnamed:
                continue
            number = b.key if b.kind == "number" else None
            if b.kind == "date" and b.key[1:] == (None, None):  # 2000 read as a year
                number = b.key[0]
            if number is None:
                continue
            if _negative(b):
                number = -number
            stated = header[0] * number + header[1]
            if v.bound == "~":
                if _near(stated, v.key[0], "~"):
                    return True
            elif _rounded_alike(v, own, header, stated, b.text):
                return True
    return False


#: Words before "pounds" that make them a weight ("the fish weighed 25 pounds").
_WEIGHED = re.compile(r"\b(?:weigh\w*|heav\w*|mass)\b", re.IGNORECASE)
#: A field's number: ``donation_gbp: 5.00``, ``"distance_nm": 11.8`` (the number the whole
#: value).
_FIELD_NUMBER = re.compile(
    r"(?m)\"?([A-Za-z][\w ()/-]{0,40}?)\"?[ \t]*[:=][ \t]*\"?(-?\d+(?:,\d{3})*(?:\.\d+)?)\"?"
    # the value ends the field: a separator, the line's end, or the next field's key (a
    # premise joins a record's lines with spaces: "age: 12 y bodyweight_kg: 3.9 owner: …")
    r"(?=[ \t]*(?:[,;}\]\r\n]|$)|[ \t]+[A-Za-z][\w()/-]*:)"
)


def _unit_of(name: str) -> str:
    """The unit a field or column name ends in ("unit_cost_gbp", "Weight (kg)", "mins"),
    as :data:`_FIELD_UNITS` reads it; "" for none."""
    parts = _key_words(name)
    if len(parts) >= 2 and parts[-1] in ("min", "mins") and _TIMED.intersection(parts):
        return "min"  # "dur_min", "wait_min": minutes, not a minimum
    return _FIELD_UNITS.get(parts[-1], "") if parts else ""


#: Words of a field's name that make its "min" minutes ("dur_min", "wait_min").
_TIMED = frozenset(
    "dur duration wait waiting elapsed delay break drive ride trip travel idle transit "
    "journey turnaround".split()
)


#: Columns and JSON fields that hold a row's unit, and those that hold its number in it.
_UNIT_COLUMNS = frozenset(("unit", "units", "uom"))
_VALUE_COLUMNS = frozenset(("value", "result", "reading", "amount", "level", "qty", "quantity"))
_JSON_VALUE = re.compile(
    r'"(?:' + "|".join(sorted(_VALUE_COLUMNS)) + r')"\s*:\s*"?(-?\d+(?:\.\d+)?)"?'
)


def _table_rows(text: str) -> list[list[str]]:
    """The cells of a pipe table's or a CSV's lines, the header first; [] for other text."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    piped = [ln for ln in lines if "|" in ln and not re.fullmatch(r"[\s|:+-]+", ln)]
    if len(piped) >= 2:
        return [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in piped]
    if _csv_like(text):
        return list(csv.reader([ln for ln in lines if "," in ln]))
    return []


@lru_cache(maxsize=1024)
def _unit_columns(text: str) -> bool:
    """Whether ``text`` is a pipe table or a CSV with a column named by a unit ("Length
    (m)"): its numbers are then read column by column (:func:`_in_unit_field`)."""
    rows = _table_rows(text)
    return bool(rows) and any(_unit_of(h) for h in rows[0])


@lru_cache(maxsize=4096)
def _unit_cells(text: str) -> tuple[tuple[str, str], ...]:
    """(unit, number as written) for each number of ``text`` that a field or a table column
    names the unit of: ``key: value`` and JSON fields, the cells under a pipe table's or a
    CSV's header (read once per text: every quantity of every claim asks)."""
    out = [(_unit_of(m.group(1)), m.group(2)) for m in _FIELD_NUMBER.finditer(text)]
    rows = _table_rows(text)
    if rows:
        units = [_unit_of(h) for h in rows[0]]
        named = [h.strip().casefold() for h in rows[0]]
        # a unit column beside a value column ("test | value | unit"): each row its own unit
        unit_at = next((i for i, h in enumerate(named) if h in _UNIT_COLUMNS), None)
        value_at = [i for i, h in enumerate(named) if h in _VALUE_COLUMNS]
        for row in rows[1:]:
            if len(row) == len(units):
                out += [(u, c) for u, c in zip(units, row, strict=True) if u and c]
                if unit_at is not None:
                    out += [(row[unit_at], row[i]) for i in value_at if row[unit_at]]
    # a JSON object with its own unit: {"test": "creatinine", "value": 287, "unit": "umol/L"}
    for obj in re.finditer(r"\{[^{}\n]*\}", text):
        unit = re.search(r'"units?"\s*:\s*"([^"]{1,20})"', obj.group(0))
        if unit is not None:
            out += [(unit.group(1), n) for n in _JSON_VALUE.findall(obj.group(0))]
    return tuple((u, n) for u, n in out if u and re.fullmatch(r"-?\d+(?:,\d{3})*(?:\.\d+)?", n))


#: A field that names the unit of a record's numbers (``units: m``, ``"uom": "kg"``): its value.
_UNITS_FIELD = re.compile(r'(?im)(?:^|[\s{,;"])(?:units?|uom)"?[ \t]*[:=][ \t]*"?([^\s",;}]+)')


@lru_cache(maxsize=4096)
def _names_unit(word: str) -> bool:
    """Whether ``word`` (casefolded) is a unit: a header unit or one pint reads."""
    return bool(word) and (word in _HEADER_UNITS or _quantity(1.0, word) is not None)


@lru_cache(maxsize=4096)
def _unitless_numbers(text: str) -> frozenset[str]:
    """The numbers, as written and without their sign, that only ``key: value`` fields
    whose names name no unit in any word hold in ``text`` (``Spans: 1``; not
    ``hours_completed: 18``, not a JSON field, whose unit its parent may name, not a number
    a unit's field holds too). None at all where a ``units`` field names a unit
    (``units: m``) or a line without a value names one as a heading ("Distances (km)",
    ``depth_m:``): the unit of the fields under it."""
    if any(_names_unit(m.group(1).casefold()) for m in _UNITS_FIELD.finditer(text)):
        return frozenset()
    for line in text.splitlines():
        heading = line.strip().rstrip(":").strip()
        if heading and not re.search(r"\d", heading) and ":" not in heading:
            if any(_names_unit(w) for w in _key_words(heading)[-1:]):
                return frozenset()
    named = {n.lstrip("-") for _, n in _unit_cells(text)}
    return frozenset(
        m.group(2).lstrip("-")
        for m in _FIELD_NUMBER.finditer(text)
        if '"' not in m.group(0)
        and not any(_names_unit(w) for w in _key_words(m.group(1)))
        and m.group(2).lstrip("-") not in named
    )


def _key_words(name: str) -> list[str]:
    """The casefolded words of a field's or heading's name ("Length (m)": length, m)."""
    return [w for w in re.split(r"[_\s()/]+", name.casefold()) if w]


def _under_other_unit(v: Value, have: Sequence[Value], texts: Sequence[str]) -> bool:
    """Whether every place the evidence writes quantity ``v``'s number bare is a field or
    column that names a unit, none of ``v``'s dimension ("650 litres" against ``apples_kg:
    650``). A pound is left alone: it is money as often as mass."""
    if _sterling(v) != v or "/" in str(v.key[1]):
        return False  # (a rate's field names its two units: ``night_flow_l_per_h``)
    claimed = float(v.key[2])
    bare = sum(1 for b in have if b.kind == "number" and _near(b.key, claimed, v.bound))
    dims: list[set[str]] = []
    for text in texts:
        for unit_text, written in _unit_cells(text):
            try:
                number = float(written.replace(",", ""))
            except ValueError:
                continue
            if _near(number, claimed, v.bound):
                units = [_quantity(1.0, u) for u in unit_text.split("|") if u]
                dims.append({str(u[1]) for u in units if u is not None})
    return bool(dims) and len(dims) >= bare and all(len(d) == 1 and v.key[1] not in d for d in dims)


def _in_unit_field(v: Value, texts: Sequence[str]) -> bool:
    """Whether quantity ``v`` is a number of the evidence in the unit its field or column
    names (:func:`_unit_cells`): that field's or column's numbers only, not any number of the
    output ("two hours" against a ``mins`` column holding 120, not against a count of 2)."""
    v = _signed(v)
    own = _to_base(str(v.key[3]))
    if own is None:
        return False
    for text in texts:
        for unit_text, written in _unit_cells(text):
            for unit in unit_text.split("|"):
                one, header = _quantity(1.0, unit), _to_base(unit)
                if one is None or header is None or one[1] != v.key[1]:
                    continue
                stated = header[0] * float(written.replace(",", "")) + header[1]
                if _rounded_alike(v, own, header, stated, written):
                    return True
    return False


@cache
def _to_base(unit: str) -> tuple[float, float] | None:
    """(scale, offset) taking a number in ``unit`` to its base unit (°C: (1, 273.15)), read
    once per unit; None for no unit of :data:`_DIMENSIONS`."""
    zero, one = _quantity(0.0, unit), _quantity(1.0, unit)
    if zero is None or one is None:
        return None
    return one[0] - zero[0], zero[0]


def _negative(v: Value) -> bool:
    """Whether a minus sign is written just before ``v``'s number ("| -193.4", "at -95.2 C";
    not the dash of a range or a code, "10-12", "AX-12")."""
    return _minus_before(v.lead)


_MINUS = re.compile(r"(?:^|[\s|:,;(=\[])[-−]$|\b(?:minus|negative)\s+$", re.IGNORECASE)


@lru_cache(maxsize=8192)
def _minus_before(lead: str) -> bool:
    """:func:`_negative` of a value's lead, read once per lead: every claim value is compared
    with every evidence value, so the same leads come round thousands of times (bounded:
    leads are as many as the evidence's values)."""
    return _MINUS.search(lead) is not None


def _decimals(text: str) -> int:
    """Digits after the decimal point (or decimal comma, "2,4 kg") of the first number
    written in ``text``."""
    text = _DECIMAL_COMMA.sub(lambda m: m.group(0).replace(",", "."), text)
    m = re.search(r"\d[\d,]*(?:\.(\d+))?", text)
    return len(m.group(1) or "") if m else 0


def _rounded_alike(
    a: Value, own: tuple[float, float], header: tuple[float, float], stated: float, written: str
) -> bool:
    """Whether quantity ``a`` (claimed; ``own`` its unit's :func:`_to_base`) is the amount
    ``stated`` in base units (a number the evidence writes as ``written`` in the unit whose
    :func:`_to_base` is ``header``), each as rounded where it is written: equal in one unit;
    across units ("79.8 K" against -193.4 °C, "27 km/h" against 7.5 m/s) within half a unit of
    the last digit of each, in ``a``'s unit."""
    if abs(a.key[0] - stated) <= 1e-6 * abs(stated) + 1e-300:
        return True
    ratio = header[0] / own[0]
    if abs(ratio - 1.0) < 1e-9 and abs((header[1] - own[1]) / own[0]) < 1e-9:
        return False  # one unit in two spellings ("litres", "L"): equal only as written
    converted = (stated - own[1]) / own[0]
    slack = 0.5 * 10.0 ** -_decimals(a.text) + 0.5 * 10.0 ** -_decimals(written) * abs(ratio)
    return abs(converted - float(a.key[2])) <= slack + 1e-9


def _identifier_within(key: str, folded_evidence: str) -> bool:
    """Whether identifier ``key`` occurs in the evidence as a whole part of a longer token
    ("HM-12" in "hm-12_2031-06-08.csv"): not preceded or followed by a letter or digit,
    nor followed by a separator and a digit ("HM-12" is not in "hm-12.5" or "hm-12-3")."""
    pattern = rf"(?<![a-z0-9]){re.escape(key)}(?![a-z0-9])(?![.\-/]\d)"
    return re.search(pattern, folded_evidence) is not None


#: Words people cut short and glue to a number ("rd3", "bd1", "wk12"), and what they stand
#: for. A table, not a rule: "letters in order" finds "rd" in "ranked" and "wk" in "worked".
_CUT_WORDS: dict[str, tuple[str, ...]] = {
    "rd": ("round", "rd"),
    "rds": ("rounds",),
    "bd": ("board", "bd"),
    "wk": ("week", "wk"),
    "rm": ("room",),
    "ch": ("chapter",),
    "pt": ("part",),
    "qtr": ("quarter",),
    "yr": ("year",),
    "fl": ("floor",),
    "pl": ("platform",),
    "vol": ("volume",),
    "ep": ("episode",),
    "lvl": ("level",),
}


def _abbreviated(key: str, folded_evidence: str) -> bool:
    """Whether identifier ``key`` is a word of :data:`_CUT_WORDS` cut short and glued to
    its number ("rd3", "bd1", "wk12") that the evidence writes out: the word, then the
    number ("round 3", "board: 1", "Week #12", "bd: 1"), not the first of a range ("boards:
    1-7")."""
    m = re.fullmatch(r"([a-z]{2,3})(\d{1,3})", key)
    if m is None or m.group(1) not in _CUT_WORDS:
        return False
    words = "|".join(_CUT_WORDS[m.group(1)])
    pattern = rf"\b(?:{words})[ \t]*(?:(?:[:#]|no\.?)[ \t]*)?0*{m.group(2)}(?![\w.]|[,\-–]\d)"
    return re.search(pattern, folded_evidence) is not None


_PERIOD_WORDS = {"daily": "day", "hourly": "hour", "weekly": "week", "monthly": "month"}
_PERIOD_WORDS |= {"yearly": "year", "annual": "year", "annually": "year", "nightly": "night"}
_RATE_DENOMINATOR = re.compile(
    r"(?:\b(?:per|an?|each|every)\s+|/\s*|_per_)([a-z]+)|\b(" + "|".join(_PERIOD_WORDS) + r")\b"
)


def _same_unit(a: str, b: str) -> bool:
    if a.casefold() == b.casefold():
        return True
    qa, qb = _quantity(1.0, a), _quantity(1.0, b)
    return bool(qa and qb and qa[1] == qb[1] and abs(qa[0] - qb[0]) <= 1e-9 * abs(qb[0]))


def _rate_stated(v: Value, texts: Sequence[str]) -> bool:
    """Whether the evidence states the claim's rate ("250 km a day") as its numerator
    ("250 km", or 250 under a ``km`` header) with its period ("daily", "per day", "/day",
    "…_per_d") named on the numerator's line or in the header of the table that line is a
    row of — or, where that line names no period and the text is no table, named in the
    text and no other period is ("Flow (per hour)" above "Rated: 500 L"). Another line's
    period is not the rate's ("30 GBP per hour" against "Day hire: 30 GBP per day" above
    "Late return: 12 GBP per hour")."""
    numerator, _, denominator = str(v.key[3]).partition("/")
    quantity = _quantity(float(v.key[2]), numerator.strip())
    if quantity is None or not denominator.strip():
        return False
    part = Value(v.text, "quantity", quantity, True, v.span)
    period = denominator.strip()
    for text in texts:
        # a bare number is the numerator only where the text states no such quantity
        bare = not any(b.kind == "quantity" and b.key[1] == quantity[1] for b in _read_values(text))
        rows = _table_rows(text)
        header = " | ".join(rows[0]) if rows else ""
        width = len(rows[0]) if rows else 0
        unnamed = False
        for line in _lines_with_number(text, float(v.key[2])):
            row = header if width > 1 and line.count("|") + line.count(",") >= width - 1 else ""
            if not match_values([part], f"{row}\n{line}", missing_quantity_unit=bare)[0].present:
                continue
            named = _periods(f"{row} {line}")
            if any(_same_unit(word, period) for word in named):
                return True
            unnamed = unnamed or not named
        if unnamed and not rows:  # a table's periods are its columns', not the text's
            named = _periods(text)
            if named and all(_same_unit(word, period) for word in named):
                return True
    return False


def _lines_with_number(text: str, number: float) -> list[str]:
    """The lines of ``text`` that write ``number`` (as a number or a quantity's number), read
    once with the whole text: only they can state a rate's numerator."""
    starts = [0, *(m.end() for m in re.finditer(r"\n", text))]
    lines = text.split("\n")
    out: list[int] = []
    for b in _read_values(text):
        said = b.key if b.kind == "number" else b.key[2] if b.kind == "quantity" else None
        if isinstance(said, float) and abs(said - number) <= 1e-9 * max(1.0, abs(number)):
            at = bisect_right(starts, b.span[0]) - 1
            if at not in out:
                out.append(at)
    return [lines[i] for i in sorted(out)]


def _periods(text: str) -> list[str]:
    """The periods ``text`` names a rate by ("per day", "hourly", "/h", "…_per_d")."""
    said = " ".join(text.split()).casefold()
    words = [
        _PERIOD_WORDS.get(m.group(2) or "", m.group(1) or "")
        for m in _RATE_DENOMINATOR.finditer(said)
    ]
    return [w for w in words if w]


_CLOCK_DURATION = re.compile(r"(?<![\d:.])(\d{1,3}):([0-5]\d)(?::([0-5]\d))?(?![\d:])")


_DURATION_WORD = re.compile(
    r"\b(?:dur|duration|elapsed|length|runtime|run\s+time|lasted|took|time\s+taken|"
    r"corrected|playing\s+time|total\s+time)\b[^\n\d]{0,12}$"
)


def _moment(v: Value) -> tuple[str, float] | None:
    """A time, date or date-time as (its kind of moment, seconds on a common clock); None
    for a partial date ("the 13th") or any other value."""
    if v.kind == "time":
        return ("time", float(v.key) * 60.0)
    if v.kind in ("date", "datetime") and None not in v.key[:3]:
        try:
            day = _dt.date(*v.key[:3]).toordinal() * 86400.0
        except ValueError:  # no such day
            return None
        return ("date", day) if v.kind == "date" else ("datetime", day + v.key[3] * 60.0)
    return None


def _spans(values: Sequence[Value]) -> list[float]:
    """Seconds from each moment of one evidence text to the next moment of the same kind, in
    reading order: a duration a claim works out from two consecutive fields ("the crossing
    takes an hour and 25 minutes" of ``departs: 07:15`` / ``arrives: 08:40``, "retrapped nine
    days after ringing" of two dates). Only consecutive moments: a wrong duration should not
    find its match among every pair of a long log's timestamps."""
    moments = [m for m in map(_moment, sorted(values, key=lambda v: v.span)) if m is not None]
    return [b - a for (kind_a, a), (kind_b, b) in pairwise(moments) if kind_a == kind_b and b > a]


def _clock_durations(folded_evidence: str) -> list[Value]:
    """Durations written as a clock: h:mm:ss, and both m:ss and h:mm for two parts — the
    two parts only where no time of day can be meant: a duration word just before
    ("dur=00:02:45", "elapsed: 52:41"), more than 23 hours ("52:41"). A claim may drop the
    seconds ("three hours ten" against a chip time of 3:10:12): h:mm:ss is read with and
    without them."""
    out: list[Value] = []
    for m in _CLOCK_DURATION.finditer(folded_evidence):
        a, b = int(m.group(1)), int(m.group(2))
        before = folded_evidence[max(0, m.start() - 40) : m.start()]
        if not (a > 23 or m.group(3) or _DURATION_WORD.search(before)):
            continue
        if m.group(3) is not None:
            readings = [a * 60 + b + int(m.group(3)) / 60, a * 60 + b]
        else:
            readings = [a + b / 60, a * 60 + b]
        for minutes in readings:
            quantity = _quantity(minutes, "minute")
            if quantity is not None:
                out.append(Value(m.group(0), "quantity", quantity, True, m.span()))
    return out


_ABBREVIATIONS = tuple(d[:3] for d in _WEEKDAYS)
_WEEKDAY = rf"({'|'.join(_ABBREVIATIONS)})[a-z]*"
_DAY_WORD = re.compile(rf"\b{_WEEKDAY}\b")
_DAY_RANGE = re.compile(rf"\b{_WEEKDAY}\s*(?:-|–|to|till|until|through)\s*{_WEEKDAY}\b")


def _weekday_match(v: Value, folded: str, have: Sequence[Value]) -> ValueMatch:
    """A day of the week is stated by its name or abbreviation ("Thu"), a range holding it
    ("Mon-Fri"), "daily" / "every day" / "weekdays" / "weekends", or a full date that falls
    on it; another day named instead is a conflict ("Thursday" against "Wed")."""
    day = int(v.key)
    named = {_ABBREVIATIONS.index(m.group(1)) for m in _DAY_WORD.finditer(folded)}
    for m in _DAY_RANGE.finditer(folded):
        first, last = _ABBREVIATIONS.index(m.group(1)), _ABBREVIATIONS.index(m.group(2))
        named |= {(first + k) % 7 for k in range((last - first) % 7 + 1)}
    if re.search(r"\b(?:daily|every\s+day|7\s+days\s+a\s+week)\b", folded):
        named |= set(range(7))
    if re.search(r"\bweekdays?\b", folded):
        named |= set(range(5))
    if re.search(r"\bweekends?\b", folded):
        named |= {5, 6}
    for b in have:
        if b.kind in ("date", "datetime") and None not in b.key[:3]:
            try:
                named.add(_dt.date(*b.key[:3]).weekday())
            except ValueError:
                continue
    return ValueMatch(v, day in named, day not in named and bool(named))


#: The number of a numbered list item ("4. Photography. …"): no value of the evidence.
_LIST_NUMBER = re.compile(r"(?m)^([ \t]*)(\d{1,2})(?=[.)][ \t]+[A-Z])")


def _blank_number(m: re.Match[str]) -> str:
    return m.group(1) + " " * len(m.group(2))


def match_values(
    claim_values: Sequence[Value],
    evidence: Iterable[str] | str,
    *,
    missing_quantity_unit: bool = True,
) -> list[ValueMatch]:
    """Match each claim value against the values of the evidence texts (by meaning; text
    values by casefolded substring). A quantity whose unit the evidence never states (a
    table with the unit in its header, "qty | 40") is present when the evidence has the
    same number as written and no quantity of that dimension at all, or the number in the
    unit a field or column names ("2 litres" against ``volume_ml: 2000``)."""
    texts = [evidence] if isinstance(evidence, str) else list(evidence)
    have: list[Value] = []
    per_text: list[tuple[Value, ...]] = []
    for t in texts:
        # a log's "9:15" is 09:15, never 21:15: only a claim's "3:46" is either half of the day
        read = _read_values(_LIST_NUMBER.sub(_blank_number, t))
        per_text.append(tuple(_on_a_24_hour_clock(v) for v in read))
        have.extend(per_text[-1])
    folded = " ".join(" ".join(t.split()).casefold() for t in texts)
    out: list[ValueMatch] = []
    for v in claim_values:
        if v.kind == "text":
            present = v.key in folded
            out.append(ValueMatch(v, present, False))
            continue
        if v.kind == "weekday":
            out.append(_weekday_match(v, folded, have))
            continue
        if v.kind == "number" and _VERSION_LEAD.search(v.lead):
            # "rev 5", "version 3.1": the evidence's version of it, never any 5 or 3.1
            present = _version(v, folded)
            named = _VERSION_NAMED.search(folded) is not None
            out.append(ValueMatch(v, present, not present and named))
            continue
        present = any(_same(v, b) for b in have)
        if not present and v.kind == "quantity" and "/" in str(v.key[3]):
            present = _rate_stated(v, texts)
        if not present and v.kind == "identifier":
            present = _identifier_within(str(v.key), folded) or _abbreviated(str(v.key), folded)
        if not present and v.kind == "number" and re.fullmatch(r"\d{3,}", v.text):
            # "4471 is still in transit" names shipment FX-SH-4471: the number is the last
            # group of a code that starts with a letter ("ce-2035-7719", not "http_502_n")
            tail = rf"(?<![\w-])[a-z][a-z\d-]*[-_/]0*{v.text}(?!\w|[.,]\d)"
            present = re.search(tail, folded) is not None
        if not present and v.kind == "quantity" and re.fullmatch(r"\d{3,}s", v.text):
            # "upstream 502s", "the 1990s": a number's plural, seconds only where the
            # evidence has them
            plural = float(v.text[:-1])
            present = any(b.kind == "number" and b.key == plural for b in have)
        if not present and v.kind == "quantity" and v.key[1] == "[time] / [length]":
            present = _pace_as_clock(v, folded)
        if not present and v.kind == "quantity" and v.key[1] == "[time]":
            present = (
                any(_same(v, b) for b in _clock_durations(folded))
                or _period_in_name(v, folded)
                or any(
                    abs(float(v.key[0]) - span) < 1.0 for read in per_text for span in _spans(read)
                )
            )
        if not present and v.kind == "quantity":
            # "two hours booked" against a column ``mins`` holding 120; "two hundred and
            # twelve pounds" (pint's mass) against ``unit_cost_gbp`` holding 212.00
            present = _in_unit_field(v, texts) or (
                _sterling(v) != v
                and not _WEIGHED.search(v.lead)
                and _in_unit_field(_sterling(v), texts)
            )
        if not present and v.kind == "quantity" and missing_quantity_unit:
            same_dim = any(b.kind == "quantity" and b.key[1] == v.key[1] for b in have)
            if same_dim:
                # "BW 31.4 kg" against ``bodyweight_kg: 31.4`` beside "0.2 mg/kg"
                present = _in_header_unit(v, have, folded, texts)
            else:
                present = any(
                    b.kind == "number" and _near(b.key, v.key[2], v.bound) and _signs_agree(v, b)
                    for b in have
                )
                own_named, other_named = _header_units(v, folded) if present else (False, False)
                # "9,860 miles" against a column "odometer_km | 9,860": another unit's number;
                # "650 litres" against ``apples_kg: 650`` beside ``juice_litres: 377``: a
                # number the evidence writes only under another dimension's unit
                under = present and _under_other_unit(v, have, texts)
                other_unit = present and ((other_named and not own_named) or under)
                converted = not under and _in_header_unit(v, have, folded, texts)
                if other_unit and not converted:
                    out.append(ValueMatch(v, False, True))
                    continue
                present = (present and not other_unit) or converted
        if not present and v.kind == "number":
            present = (
                _clock_number(v, have) or _named_number(v, folded) or _paragraph_label(v, texts)
            )
        if (
            not present
            and v.kind == "date"
            and v.key[1:] == (None, None)
            and not re.search(r"\b(?:in|since|of|year|until|till|by)\s+$", v.lead, re.I)
            and not any(b.kind == "date" and b.key[1:] == (None, None) for b in have)
        ):
            # "swim 1800" read as a year is 18:00 where the evidence has that time and no
            # year alone
            present = _clock_number(v, have)
        if not present and v.kind == "identifier":
            present = _section(str(v.key), folded) or _lines(str(v.key), have)
        if not present and v.kind == "dimensions":
            present = _width_height(v, folded)
        conflicting = not present and any(_kin(v, b) for b in have)
        out.append(ValueMatch(v, present, conflicting))
    return out


_PERIOD_ABBREVIATIONS = {60.0: "h|hr|hrs|hours?", 1.0: "m|min|mins|minutes?", 1440.0: "d|days?"}


def _period_in_name(v: Value, folded: str) -> bool:
    """ "32 cm in 24 hrs" against ``new_snow_24h_cm``: a period in hours, minutes or days
    written on a field's name, its number and the unit's abbreviation joined."""
    minutes = _time_unit(str(v.key[3]))
    abbreviations = _PERIOD_ABBREVIATIONS.get(minutes or 0.0)
    number = float(v.key[2])
    if abbreviations is None or not number.is_integer() or v.bound is not None:
        return False
    pattern = rf"(?<![\d.]){int(number)}[_-]?(?:{abbreviations})(?![a-z\d])"
    return re.search(pattern, folded) is not None


def _pace_as_clock(v: Value, folded: str) -> bool:
    """ "4:30/km" against a pace column ``avg_pace_min_km | 4:30``: the same minutes and
    seconds as a bare m:ss, where the evidence names the claim's distance unit and not the
    other one (km against miles)."""
    minutes = float(v.key[2])
    whole = int(minutes)
    clock = f"{whole}:{round((minutes - whole) * 60):02d}"
    if re.search(rf"(?<![\d:.]){clock}(?![\d:])", folded) is None:
        return False
    km = re.search(r"km|kilomet", folded) is not None
    miles = re.search(r"(?<![a-z])mi(?![a-z])|mile", folded) is not None
    return (km and not miles) if str(v.key[3]).endswith("km") else (miles and not km)


def _clock_number(v: Value, have: Sequence[Value]) -> bool:
    """ "around 7.30" is the time 7:30 (or 19:30) when the evidence has that time: a number
    written h.mm, the minutes in two digits; "retest 1310" is 13:10 when the evidence has
    that time or a timestamp at it (a 24-hour clock in four digits, as shift notes write
    it)."""
    m = re.fullmatch(r"([01]?\d|2[0-3])\.([0-5]\d)", v.text)
    if m is not None:
        minutes = int(m.group(1)) * 60 + int(m.group(2))
        return any(
            (b.kind == "time" and b.key in (minutes, minutes + 720))
            or (b.kind == "time12" and b.key == minutes % 720)
            for b in have
        )
    m = re.fullmatch(r"(1\d|2[0-3])([0-5]\d)", v.text)
    if m is None:
        return False
    minutes = int(m.group(1)) * 60 + int(m.group(2))
    return any(
        (b.kind == "time" and b.key == minutes) or (b.kind == "datetime" and b.key[3] == minutes)
        for b in have
    )


def _named_number(v: Value, folded: str) -> bool:
    """A number that closes a name the evidence writes as one code: "XR room 2" against
    ``station: XR-ROOM-2`` (the word before it and the number joined by ``-`` or ``_`` at
    the end of a token of the evidence), or by the word's first letter before the number
    ("jam 9" against ``P1  J09``, "lane 4" against ``L4``)."""
    word = re.search(r"([a-z]+)\s+$", v.lead.casefold())
    if not v.text.isdigit() or word is None:
        return False
    code = rf"{re.escape(word.group(1))}[-_]0*{v.text}"
    if re.search(rf"(?<![a-z]){code}(?!\w|[.,-]\d)", folded) is not None:
        return True
    if not _CODE_NAME.fullmatch(word.group(1)) or not _CLOSES_NAME.match(v.tail):
        return False
    initial = rf"(?<![\w.-]){word.group(1)[0]}0*{v.text}(?![\w-]|[.,]\d)"
    return len(v.text) <= 3 and re.search(initial, folded) is not None


#: A word that may name a thing by its number ("jam 9", "lane 4"): a noun, not a verb's
#: form or a function word ("scored 12", "sleeps 4", "was 14").
_CODE_NAME = re.compile(
    r"(?!(?:was|were|has|had|have|are|is|the|and|with|from|into|over|under|about|than|only"
    r"|just|some|every|each|per|by|of|at|to|for|top|all)$)[a-z]{3,}(?<!ed)(?<!ing)(?<!s)"
)
#: What may follow a number that closes a name: the end of its clause or a function word,
#: never the noun it counts ("14 voters", "4 people").
_CLOSES_NAME = re.compile(
    r"\s*(?:$|[,.;:!?)]|(?:and|or|but|is|was|in|on|at|with|for|to|from|which|where|when|"
    r"after|before|while)\b)",
    re.IGNORECASE,
)


#: A number named a version ("version 7", "rev 5"), and a version the evidence names.
#: The words that put a version before its number ("version 3.1", "rev. 7", "ver 2").
VERSION_WORD = r"(?:version|ver\.?|rev(?:ision)?\.?)"
_VERSION_LEAD = re.compile(rf"\b{VERSION_WORD}\s+$", re.IGNORECASE)
#: between a version word and its number: space, or a field's colon and quotes
#: (``version: 2034.1``, ``"version": "2034.1"``)
_VERSION_GAP = r"[\"']?\s*(?:[:=]\s*[\"']?)?"
_VERSION_NAMED = re.compile(rf"(?<![a-z\d.])(?:v\.?|{VERSION_WORD}{_VERSION_GAP})\d")


#: Words that name a numbered paragraph before its number ("see clause 4", "per rule 7.2";
#: "Under 2.5, trainees may …" only before a number with a dot: "under 4" is a bound).
_PARAGRAPH_LEAD = re.compile(
    r"\b(?:see|per|section|sect?\.|clause|para(?:graph)?|rule|point|item|§)\s*$", re.IGNORECASE
)
_UNDER_LEAD = re.compile(r"\bunder\s+$", re.IGNORECASE)


def _paragraph_label(v: Value, texts: Sequence[str]) -> bool:
    """ "Per rule 4, dogs …" against a list "4. Dogs must …", "Under 2.5, trainees may not …"
    against "2.5 Trainee members …": a number after a word that names a part is the label a
    line of the evidence opens with ("4." or "4)", or a number with a dot: "2.5")."""
    dotted = re.fullmatch(r"\d+(?:\.\d+)+", v.text) is not None
    if not (_PARAGRAPH_LEAD.search(v.lead) or (dotted and _UNDER_LEAD.search(v.lead))):
        return False
    after = "[.)]?" if dotted else "[.)]"
    label = re.compile(rf"(?m)^[ \t]*(?:§[ \t]*)?{re.escape(v.text)}{after}[ \t]+[A-Za-z]")
    return any(label.search(t) for t in texts)


def _version(v: Value, folded: str) -> bool:
    """ "version 7" / "ICF version 3.1" / "rev 5" against "label-v7.ai" / "ICF v3.1" /
    "Rev. 5" / ``"version": "2034.1"``: a number named a version is the evidence's version
    of that number."""
    n = re.escape(v.text)
    return (
        re.search(
            rf"(?<![a-z\d.])(?:v\.?|{VERSION_WORD}{_VERSION_GAP}){n}(?!\d|\.\d)",
            folded,
        )
        is not None
    )


def _lines(key: str, have: Sequence[Value]) -> bool:
    """ "1080p" against "1920x1080": a video's lines are the height of its frame size."""
    m = re.fullmatch(r"(\d{3,4})[pi]", key)
    return m is not None and any(
        b.kind == "dimensions" and len(b.key) == 2 and b.key[1] == int(m.group(1)) for b in have
    )


def _section(key: str, folded: str) -> bool:
    """An identifier that abbreviates the name of a numbered part: "s7.3" / "ch 61" /
    "sec. 4" against "Section 7.3" / "Chapter 61" (the letters open the evidence's word
    before the same number)."""
    m = re.fullmatch(r"([a-z]{1,3})\.?(\d+(?:\.\d+)*)", key)
    if m is None:
        return False
    letters, number = m.group(1), re.escape(m.group(2))
    return re.search(rf"\b{letters}[a-z]*\.?\s+{number}(?![\d.]\d)", folded) is not None


def _width_height(v: Value, folded: str) -> bool:
    """ "5472 by 3648 pixels" against the fields ``ImageWidth: 5472`` and ``ImageHeight:
    3648``: a width field with the first size, a height field with the second."""
    if len(v.key) != 2:
        return False
    width, height = v.key
    found = [
        re.search(rf"\b[\w ]*{word}[\w ]*[\"']?\s*[:=|]\s*[\"']?{n}(?!\d)", folded)
        for word, n in (("width", width), ("height", height))
    ]
    return all(found)


def _amounts(v: Value) -> list[tuple[str, float]]:
    """A number or quantity as (dimension, magnitude) pairs for sums: a quantity in its
    base unit (money in its currency) and as written (``#`` and its dimension), which a
    bare number of the same claim may join ("7.25 of 24.0 hours; 16.75 h remain")."""
    if v.kind == "number":
        return [("", float(v.key))]
    if v.kind == "quantity":
        w = _sterling(v)
        return [(str(w.key[1]), float(w.key[0])), (f"#{w.key[1]}", float(w.key[2]))]
    return []


def _joins(a: str, b: str) -> bool:
    """Whether amounts of dimensions ``a`` and ``b`` (:func:`_amounts`) may be added: the
    same dimension, or a bare number and a quantity as written."""
    return a == b or (a == "" and b.startswith("#")) or (b == "" and a.startswith("#"))


def worked_out(
    values: Sequence[Value], evidence: Iterable[str] | str, known: Sequence[str] = ()
) -> tuple[str, ...]:
    """The claim's amounts it works out from two of its other amounts that the evidence
    states: a sum ("£920 for her four weeks and £690 for his three, £1,610 between them")
    or a difference ("7.25 of 24.0 allocated hours used; 16.75 h remain", "ten lessons, two
    cancelled, so eight went ahead"), of one dimension. An amount the evidence states
    itself is no worked-out one; the operands must be stated (or ``known``: counts the rows
    bear out), so a changed number is not excused by arithmetic on another changed number."""
    amounts = [(v, _amounts(v)) for v in values]
    if sum(1 for _, a in amounts if a) < 3:
        return ()  # a worked-out amount needs two others: skip the evidence search
    texts = [evidence] if isinstance(evidence, str) else list(evidence)
    matches = match_values([v for v, a in amounts if a], texts)
    stated = {m.value.span: m.present or m.value.text in known for m in matches}
    out: list[str] = []
    for v, reps in amounts:
        if not reps or stated.get(v.span, True) or v.bound is not None:
            continue
        for dim, target in reps:
            ops = [
                (d, x)
                for w, others in amounts
                if w.span != v.span and stated.get(w.span)
                for d, x in others
                if _joins(d, dim)
            ]
            tol = 1e-6 * max(1.0, abs(target))
            if any(
                _joins(dx, dy) and (abs(x + y - target) <= tol or abs(abs(x - y) - target) <= tol)
                for i, (dx, x) in enumerate(ops)
                for dy, y in ops[i + 1 :]
            ):
                out.append(v.text)
                break
    return tuple(out)
