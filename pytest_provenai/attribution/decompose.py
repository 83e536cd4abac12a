"""Rule-based claim decomposition (ProvenanceGuard §III-B).

An answer is split into claims, each meant to carry one factual proposition:

1. section headers of the model's three-line format (``Answer:``, ``Evidence:``,
   ``Reasoning:``) are markup, not claims;
2. each line is split into sentences at ``.``/``!``/``?`` followed by whitespace and a
   capital, digit, quote or bracket — not after an abbreviation, an initial, or inside a
   number;
3. a sentence is split further at ``;``, at a contrastive ``, but`` / ``, while`` /
   ``, whereas`` / ``, and also``, and at a conjunction or list comma that joins two
   clauses ("…, and the fee is 7 EUR") or two predicates of one subject ("founded in 1982
   and employs 2,895 people": the second claim is checked as "<subject> employs 2,895
   people"); never inside a quotation or a value ("between 45 and 55 percent", "1.5 and
   2.0"); every part keeps the attribution its sentence states, at its start or its end.

A claim keeps its exact text and its [start, end) UTF-8 byte range in the answer. Its
*content* — what is verified — is the text without the attribution phrase and without
citation tags (``[R0]``); literal values (numbers, units, dates, identifiers, quantities,
quoted values) are never rewritten. A claim is *non-factual* when it has no content terms,
when it is template text (a disclaimer, "consult a professional", "I could not find…")
that carries no protected value, or when it is conversation rather than assertion
(:func:`is_pleasantry`: greetings, thanks, apologies, wishes, offers of help, hedged
closings, questions to the reader): such claims are not evidence-bearing.

An answer-section claim in the three-line format is usually a bare value (``no [R0]``); when
the question is given, its content is the question followed by the value, so the claim
checked is "the answer to the question is …".

Pure Python.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_provenai.attribution.families import Attribution, find_attribution
from pytest_provenai.attribution.protected import content_terms, protected_values
from pytest_provenai.attribution.statement import Listing, names_a_source_noun
from pytest_provenai.attribution.values import VERSION_WORD
from pytest_provenai.audit.abstention import detect_abstention
from pytest_provenai.audit.claims import find_citations

__all__ = ["Claim", "claim_at", "decompose", "is_pleasantry", "is_template"]

_HEADER = re.compile(
    r"^[ \t]*(?:\*\*)?(?P<name>final answer|answer|evidence summary|evidence|chain of reasoning|"
    r"reasoning)(?:\*\*)?[ \t]*:[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)]*(?=\s+[\"'“(\[]?[A-Z0-9\[])")
_CLAUSE = re.compile(r";\s+|,\s+(?=(?:but|while|whereas|and also)\b)")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr vs no co inc ltd mt ft e.g i.e etc approx fig vol jan feb mar apr "
    "jun jul aug sep sept oct nov dec art sec p pp u.s u.k".split()
)
_TAG = re.compile(
    r"\s*(?:\[[ \t]*[RrAa][ \t]?\d+(?:[ \t]*[,;][ \t]*[RrAa]?[ \t]?\d+)*[ \t]*\]"
    r"|\([ \t]*[RrAa][ \t]?\d+(?:[ \t]*[,;][ \t]*[RrAa]?[ \t]?\d+)*[ \t]*\))"
)
_TEMPLATE = re.compile(
    r"\b(?:consult\s+(?:a|an|your|the|with|them|him|her|their)\b|"
    r"please\s+(?:verify|check|contact|confirm)|i\s+am\s+not\s+an?\b|"
    r"i['’]m\s+not\s+an?\b|not\s+(?:legal|medical|financial|professional)\s+advice|"
    r"for\s+more\s+(?:information|details)|hope\s+this\s+helps|let\s+me\s+know|feel\s+free|"
    r"i\s+(?:cannot|can['’]t|could\s+not|couldn['’]t|was\s+unable\s+to)\s+"
    r"(?:find|verify|determine|answer|confirm)|i\s+do\s+not\s+have|i\s+don['’]t\s+have|"
    r"(?:do|does)\s+not\s+(?:support|allow)\s+a\s+verified|no\s+verified\s+answer|"
    r"double[- ]check|seek\s+professional)",
    re.IGNORECASE,
)


# Conversation, not assertion: what a sentence opens with (after "Oh," / "And" / "Anyway,").
_PLEASANTRY = re.compile(
    r"""^[\W_]*(?:(?:oh|and|also|anyway|again|ok|okay|well|so|but|sure|right|in\s+any\s+case
    |yes,?\s+of\s+course|of\s+course|eh|ha|now\s+then|right\s+then)[,!]?\s+){0,3}
    (?:
      (?:i|we)\s+(?:do\s+|really\s+|sincerely\s+)?hope\b
    | hope\s+(?:this|that|that['’]s|it|it['’]s|you|your|the|everything|all|things|so|we|they)\b
    | hope\s+(?:she|he)\b[^\d]*$
    | (?:i|we)\s+trust\s+(?:this|that|it|you|the\s+(?:foregoing|above|attached|enclosed))\b
    | (?:i|we)\s+remain\s+at\s+your\s+(?:disposal|service)\b
    | (?:i|we)\s+remain\s*,[^.?!\d]*\b(?:servant|yours)\b
    | (?:i|we)\s+(?:should|shall|would)\s+be\s+(?:(?:very|most|more\s+than)\s+)?
      (?:glad|grateful|happy|pleased|delighted)\s+(?:to|if|for)\b[^\d]*$
    | (?:lmk|dm\s+(?:me|us)|kindly\s+(?:revert|advise|let\s+(?:me|us)\s+know))\b[^\d]*$
    | any\s+q['’]?s\b[^.?!\d]{0,25}[\s!.]*$
    | how\s+(?:lovely|nice|great|wonderful|good)\s+to\s+hear\s+from\s+you\b[^\d]*$
    | fair\s+winds[\s!.]*$
    | (?-i:hi+|hey+|hiya|heya|hello|ta)[ \t]+[a-z][\w'’-]*[ \t]*[!.]*$
    | [^.?!]*\b(?:these|they|this|those|it|(?:further|additional|more|other)\s+[a-z]+)\s+
      (?:can|could|will|may)\s+(?:gladly\s+|readily\s+|also\s+)?be\s+
      (?:provided|furnished|supplied|sent|shared|made\s+available|arranged)\s+
      (?:up)?on\s+request[\s!.]*$
    # an offer of more material, to someone or at the reader's wish ("Copies can be
    # provided to the auditors if required"); "Minutes can be supplied on request" alone may
    # be a policy, and a service offered ("a loan car can be provided if needed") is a claim
    | [^.?!]*\b(?:cop(?:y|ies)|originals?|details?|information|particulars|files?|images?|
      photos?|photographs?|scans?|reports?|minutes|documents?|records?|recordings?)
      \b[^.?!\d]{0,40}?\b(?:can|could|will|may)\s+(?:gladly\s+|readily\s+|also\s+)?be\s+
      (?:provided|furnished|supplied|sent|shared|made\s+available|arranged|requested|
      circulated|forwarded)
      (?!.*\b(?:free\s+of\s+charge|at\s+no\s+(?:extra\s+|additional\s+)?(?:cost|charge)))
      (?:\s+(?:to|from)\s+[^.?!\d]{1,40}?\s+(?:up)?on\s+request
      |[^.?!\d]{0,50}?\b(?:if\s+(?:required|needed|wanted|desired)
        |should\s+[^.?!\d]{1,30}\s+(?:wish|require|need|want)|if\s+you\s+(?:wish|like|prefer)))
      [\s!.]*$
    # an offer to pass a document on, nothing named with a value ("can send the file over
    # tonight", "Will forward a copy first thing"); "We will send the engineer tomorrow" and
    # "We can share the cost" promise a service
    | (?:(?:i|we)\s+)?(?:can|could|will)\s+(?:also\s+|happily\s+|gladly\s+)?
      (?:send|forward|email|bring|share|print|pass)\s+
      (?:a\s+copy|copies|(?:the|my|our)\s+(?:[a-z]+\s+)?(?:file|files|copy|link|notes|minutes|
      photos?|pictures?|spreadsheet|form|draft|pdf|list|summary|scans?|agenda|slides|write-?up))
      (?:\s+(?:over|across|along|on|round|through|back))?
      (?:\s+(?:tonight|tomorrow|later|today|now|first\s+thing|asap|in\s+the\s+morning))?
      [\s!.]*$
    | (?:i['’]ll\s+|i\s+will\s+|will\s+|can\s+)(?:also\s+)?(?:chase|follow\s+up|find\s+out|
      dig\s+out|get\s+back|keep\s+you\s+posted)\b
    # a call the writer will make, a message to pass on: nothing asserted with a value, nor
    # a relayed fact ("tell them the ferry leaves at 06:40", "tell her the deposit is …")
    | will\s+(?:ring|call|phone|text|email|forward|send)\s+
      (?:(?:the|him|her|them|you|u|it|back|round|first|tomorrow|later)\b|(?-i:[A-Z]))[^\d]*$
    | (?:just\s+|do\s+)?tell\s+(?:him|her|them|mum|mom|dad)\s+(?!the\b|that\b)[^\d]*$
    | over\s+to\s+(?:you|the\s+[a-z]+|[a-z]+\s+(?:shift|team|crew|desk))\b[^.?!\d]{0,20}[\s!.]*$
    | (?:over|out|over\s+and\s+out)[\s!.]*$
    | fingers\s+crossed
    | (?:many\s+|huge\s+|big\s+)?thanks\b(?!\s+to\b) | thank\s+you\b | cheers\b
    | (?:so\s+|very\s+|really\s+)?sorry\b | (?:my\s+)?apologies\b | i\s+apologi[sz]e
    | (?:i['’]m|i\s+am|we['’]re|we\s+are)\s+(?:so\s+|very\s+|truly\s+)?sorry
    | (?:i['’]d|i\s+would|i['’]m|i\s+am|we['’]d|we\s+would|we['’]re|we\s+are|i['’]ll|i\s+will)
      \s+(?:be\s+)?(?:(?:more\s+than|very|really|always)\s+)?
      (?:happy|glad|pleased|delighted|keen)\s+to
    | (?:i['’]d|i\s+would|we['’]d|we\s+would)\s+(?:also\s+|still\s+|probably\s+|definitely\s+)?
      (?:recommend|suggest|advise|ring|call|phone|email|contact|check|book|try|bring|allow|
      arrive|plan|aim|leave|double)\b
    | (?:you\s+(?:might|may|could)\s+(?:also\s+)?(?:want|wish|like)\s+to
      | it\s+(?:might|may|would|could)\s+(?:also\s+)?be\s+worth\s+(?:[a-z]+ing|a\s+call|a\s+look)
      | it['’]s\s+(?:also\s+)?worth\s+(?:[a-z]+ing|a\s+call|a\s+look))\b
    | (?:do\s+|please\s+)?(?:ring|call|phone|contact|email|message)\s+.*\bif\s+you\b
    | that['’]s\s+(?:everything|all|the\s+lot|about\s+all|it)\s+(?:i|we)\b
    | that['’]s\s+(?:it|all|everything)\s+(?:from|for)\s+(?:me|us|now|today)\b
    | (?:please\s+|do\s+)?(?:flag|ping|shout|raise|mention|send)\s+(?:me\s+|us\s+)?
      (?:anything|any\s+(?:questions?|issues?|problems?|concerns?|gaps?))\b
    | (?:(?:always|more\s+than|very)\s+)?(?:happy|glad|pleased|delighted)\s+to\s+
      (?!be\b|report\b(?!\s+back\b)|say\b|announce\b|confirm\b)[a-z]+
    | (?:glad|pleased|delighted)\s+(?:that|it|this|you)\b
    | (?:i['’]m|i\s+am|we['’]re|we\s+are)\s+(?:so\s+|very\s+|really\s+)?(?:glad|pleased|delighted)
      \s+(?:you|u)\s+(?:spotted|noticed|asked|enjoyed|liked|got\s+in\s+touch|wrote|rang|called)
      \b[^\d]*$
    | nothing\s+(?:else|more|further)\s+(?:of\s+note|to\s+(?:report|add))[\s!.]*$
    | (?:please\s+)?(?:do\s+)?let\s+(?:me|us)\s+know
    | (?:just\s+)?(?:say|ask|shout|holler|ping\s+me|hit\s+(?:me|us)\s+up)\s+if\b
    | (?:please\s+)?(?:do\s+not|don['’]t)\s+hesitate\b
    # comfort and holding on, with nothing asserted after them ("don't fret, you're doing
    # grand" comforts; "don't worry, the car was returned" asserts)
    | (?:please\s+)?(?:do\s+not|don['’]t)\s+(?:worry|fret|panic|stress|lose\s+sleep)
      (?:\s+(?:yourself|about\s+it|too\s+much|over\s+it))?
      (?:[\s!.]*$|,\s*(?:you['’]re|you\s+are)\s+doing\b[^.?!\d]{0,20}[\s!.]*$)
    | bear\s+with\s+(?:me|us)(?:\s+(?:one|a)\s+(?:sec|second|mo|moment|minute)
      |\s+while\s+(?:i|we)\s+(?:check|look))?[\s!.]*$
    | hang\s+on\s+a\s+(?:sec|second|mo|moment|minute)\b[\s!.]*$
    | give\s+(?:me|us)\s+a\s+(?:shout|call|nudge) | feel\s+free
    | (?:just\s+|do\s+)?(?:ring|call|phone|telephone|text|ping|page|message|buzz)\s+(?:me|us)\b
    | (?:just\s+)?(?:ring|call|phone|text|ping|page|message|buzz|shout)[\s!.]*$
    | any\s+(?:questions?|queries|problems?|probs|issues?)\b[^.?!]*\b(?:me|us)\b[\s!.]*$
    | any\s+(?:questions?|queries|problems?|probs|issues?)\b[^.?!\d]{0,25}
      (?:just\s+)?(?:text|ring|call|shout|ping|message|email)\b[^.?!\d]{0,15}[\s!.]*$
    | (?:i['’]m\s+|i\s+am\s+)?(?:off\s+(?:to\s+bed|home)|signing\s+off|logging\s+off)\b
      [^.?!\d]{0,20}[\s!.]*$
    | (?:do\s+|please\s+)?(?:tell|ask)\s+me\s+if
    | if\s+you\s+(?:need|want|would\s+like|['’]d\s+like|have)\b
      .*\b(?:me|i|i['’]ll|i['’]d|us|we|ask|know|shout|happy)\b
    | any\s+(?:other|more|further)\b.*\?\s*$ | anything\s+else\b | would\s+you\s+like
    | do\s+you\s+(?:want|need)\b | shall\s+i\b | should\s+i\b | want\s+me\s+to
    | (?:i\s+)?can\s+i\s+help | i\s+can\s+(?:also\s+)?(?:check|look|pull|send|dig|find|run|share)\b
      .*\bif\b
    | (?:(?:i|we)\s+)?can\s+(?:also\s+|easily\s+)?[a-z][\w-]*\b.*\bif\s+
      (?:(?:that|it|this)\s+(?:helps|would\s+help)
      | (?:you|u|ya)\s+(?:want|need|like|prefer|['’]d\s+like|would\s+like))\b
    | enjoy\b | have\s+(?:a|an|fun)\b | good\s+luck\b | best\s+of\s+luck
    | all\s+the\s+best(?=[\s,!.]*$|\s+(?:to|for|with|from)\b)
    | best\s+wishes | (?:wishing|wish)\s+you | safe\s+(?:travels?|journey|trip|flight|drive|
      crossing)\b | bon\s+voyage | (?:travel|drive|ride|fly)\s+safe(?:ly)?\b
    | stay\s+(?:safe|warm|dry|well|cool|healthy)\b | take\s+care\b | keep\s+(?:an\s+eye|safe|warm|
      well|me\s+posted|us\s+posted)\b | see\s+(?:you|ya|y['’]all|everyone)\b
    | speak\s+soon | talk\s+soon
    | welcome\s+(?:to|back|aboard)\b
    | congratulations\b | congrats\b | well\s+done\b | kudos\b | bravo\b | hooray\b
    | (?:what\s+(?:a|an)\s+)?(?:lovely|great|wonderful|fantastic|brilliant|excellent|nice|
      amazing|super|terrific|good|impressive|fine)\s+(?:result|results|news|work|job|choice|idea|
      question|outcome|effort|start|finish|day|week|season|summer|year|find|catch)\b
      (?:[ \t]+(?:all[ \t]+round|there|today|again|overall
        |(?:for|by|in|after|on|with)[ \t]+[^,;:.!?\d\n]{1,30})
      |,[ \t]*[A-Z][\w'’-]*)?
      [\s!.]*$
    | here(?:['’]s|\s+is|\s+are)\s+(?:where|what|how|(?:the|a|an)\s+(?:quick\s+|short\s+|
      brief\s+)?(?:latest|update|summary|rundown|run-down|round-?up|recap|picture|overview|
      draft|count|breakdown|figures|numbers|deal|story|situation|report)\b)[^:;]*$
    | what\s+an?\s+(?:[a-z]+\s+)?[a-z]+[\s!.]*$
    | (?:it['’]s\s+|that['’]s\s+)?(?:good|great|mixed)\s+news\b[\s!.]*$
    | i(?:['’]ll|\s+will|\s+shall|['’]m\s+going\s+to|\s+am\s+going\s+to)\s+
      (?!(?:be|have|need|note|confirm|say|add|mention|point|repeat|summari[sz]e|list|explain|
      quote|report|stress|flag)\b)[a-z]+
    | any\s+(?:other|more|further)\b[^.?!]*,\s*(?:just\s+)?(?:forward|send|pass|ask|bring|
      drop|let|tell)\b
    | no\s+(?:problem|worries)\b | you['’]re\s+welcome | my\s+pleasure | happy\s+(?:to\s+help|
      hunting|planning|brewing|baking|travels|travelling|traveling|holidays|reading|climbing)\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
#: An invitation that closes a sentence ("…; corrections welcome.", "Questions welcome!").
_WELCOME = re.compile(
    r"(?:^|[;,:(—–-]\s*)(?:any\s+)?(?:corrections?|comments?|questions?|feedback|edits?|"
    r"thoughts)\s+(?:are\s+|is\s+)?(?:very\s+|always\s+|most\s+)?welcome[.!)\s]*$",
    re.IGNORECASE,
)
#: An exclamation or a sign-off that opens a sentence ("Good news tho, …", "Thanks for
#: waiting - …", "Kind regards, …"): what follows it decides (a signature, nothing, or a
#: pleasantry: the sentence is one; a fact: it asserts).
_EXCLAMATION = re.compile(
    r"""^[\W_]*(?:(?:oh|ok|okay|well|so|but|and|alright)[,!]?\s+){0,2}
    (?:(?:many\s+|huge\s+|big\s+)?thanks(?!\s+to\b)|thank\s+you|cheers|(?:so\s+)?sorry
    |(?:my\s+)?apologies|congrats|congratulations|well\s+done
    |(?:with\s+)?(?:kind|best|warm|warmest)\s+regards|regards
    |(?:(?:with\s+)?(?:very\s+|all\s+(?:my|our|the)\s+)?best\s+wishes
      |with\s+(?:much\s+|all\s+(?:my|our)\s+)?love)(?:[ \t]+to[ \t]+[^,.!?;:—–\n\d]{1,40})?
    |all\s+the\s+best|(?:lots\s+of|much|all\s+my)\s+love
    |yours\s+(?:sincerely|truly|faithfully)|sincerely
    |(?:it['’]s\s+|that['’]s\s+)?(?:good|great|mixed|bad|sad)\s+news
      (?:\s+(?:tho|though|then|there|too|again|first))?
    |oof|phew|yay|gg|okay|ok|alright|perfect|brilliant|great|nice)
    (?:[ \t]+(?:for|about|on)[ \t]+[^,.!?;:—–\n\d]{1,40})?
    (?:[ \t]+(?:y['’]all|all|everyone|folks|team|guys|[A-Z][\w'’-]*))?
    [ \t]*(?:[,!.:;—–]+|[ \t]-[ \t])""",
    re.IGNORECASE | re.VERBOSE,
)
#: A signature: capitalised words, numbers and commas only ("Eleanor Pryce, Site 114",
#: "Nerys Quayle, Archivist (Searchroom Services)"), kisses after it ("Priya x").
_SIGNATURE = re.compile(r"^(?:\(?[A-Z0-9][\w'’.&-]*\)?[ \t,]*)+(?:x+)?[.!]?$")
#: A greeting that opens a sentence, a name (or two) after it ("Hi Sam, here's where …",
#: "Dear Mr Penhallow, thank you …", "Hello Imogen and Tobias!").
_GREETING = re.compile(
    r"^[\W_]*(?:hi+|hello|hey+|hiya|heya|dear|(?:good\s+)?(?:morning|afternoon|evening)|good\s+day)\b"
    r"(?:[ \t]+(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?)?(?:[ \t]+[A-Z][\w'’-]*){0,2}"
    r"(?:[ \t]+(?:and|&)[ \t]+[A-Z][\w'’-]*)?[ \t]*[,!.]",
    re.IGNORECASE,
)
#: A question that asserts what it asks about ("Can you believe …", "Who could resist a …").
_RHETORICAL = re.compile(
    r"^[\W_]*(?:(?:and|but|so|oh|now|honestly)[,]?\s+)?(?:(?:can|could|would)\s+you\s+believe"
    r"|who\s+(?:could|would|can|wouldn['’]t|couldn['’]t)\s+(?:possibly\s+|really\s+|ever\s+)?"
    r"(?:resist|argue|say\s+no|ask\s+for|beat|miss|complain|object)"
    r"|did\s+you\s+know|isn['’]t\s+it\s+(?:amazing|great|wonderful|something)\s+that)\b",
    re.IGNORECASE,
)
#: A question that offers or asks the reader to choose ("— would you like me to book it?").
_OFFER = re.compile(
    r"^[\W_]*(?:(?:and|so|or)\s+)?(?:would\s+you|do\s+you|shall\s+(?:i|we)|should\s+(?:i|we)"
    r"|want\s+me|can\s+(?:i|we)|could\s+(?:i|we)|may\s+(?:i|we)|are\s+you|will\s+you"
    r"|which|what\s+(?:time|day|date)\s+(?:would|do|suits))\b",
    re.IGNORECASE,
)
_PROPER_START = re.compile(r"^[\W_]*[A-Z][\w'’-]*\s+(?!I\b)[A-Z][\w'’-]*")
#: A feeling that only leads in to a statement ("I am sorry to tell you that the soundboard
#: has a crack", "We're pleased to report the pitch raise was done"): what follows decides.
_LEAD_IN = re.compile(
    r"""^[\W_]*(?:(?:oh|and|also|anyway|well|so|but|right)[,!]?\s+){0,2}
    (?:(?:i['’]m|i\s+am|we['’]re|we\s+are)\s+(?:(?:so|very|truly|really|ever\s+so)\s+)?)?
    (?:sorry|sad|happy|glad|pleased|delighted)\s+to\s+
    (?:(?:say|report|confirm|announce)(?!\s+(?:back|if|when|whether|once|anything|more)\b)
      (?:\s+that\b)?[ \t]*[,:—–-]?
    | (?:tell\s+(?:you|u)|inform\s+you|let\s+you\s+know)(?:\s+that\b|[ \t]*[,:—–-])
    )[ \t]*""",
    re.IGNORECASE | re.VERBOSE,
)


#: An interjection that opens a sentence, a name after it or not ("Ooh, show season, my
#: favourite!", "Oh Priya, the poor thing!"): an exclamation of feeling — a word of
#: :data:`_FEELING`, no value, no verb (:func:`_says_nothing`) — asserts nothing; "Oh, the
#: ferry was cancelled!" and "Wow, three bedrooms and a sea view!" do.
_INTERJECTION = re.compile(
    r"^[\W_]*(?:oh+|ooh+|ah+|aw+|ha(?:ha)*|wow|gosh|blimey|crikey|golly|cor)"
    r"(?:[ \t]+[A-Z][\w'’-]*)?[ \t]*[,!][ \t]*(?=\S)",
    re.IGNORECASE,
)
_FEELING = re.compile(
    r"\b(?:poor|lovely|favourite|favorite|bless|dear|diplomatic|classic|typical|as\s+ever"
    r"|marvellous|wonderful|gorgeous|brilliant|fab|splendid|what\s+a|such\s+a|bless\s+(?:him|her))\b",
    re.IGNORECASE,
)
#: A role in brackets closing a signature ("(Hon. Sec. and chief nagger)"); a bracket that
#: opens like a sentence ("(the venue is closed …)") is none.
_ROLE = re.compile(r"[ \t]*\((?!(?:the|a|an|it|we|i|they)\b)([^(),]*)\)[ \t]*[.!]?$")
#: Words that say how things stand, which a feeling does not ("such a shame, no refunds!").
_STATE = re.compile(
    r"\b(?:no|not|none|never|nothing|out|free|closed|open|cancelled|canceled|full|late|early"
    r"|empty|again|still|only|yet)\b",
    re.IGNORECASE,
)
#: A line that only says what follows and to whom ("Gareth, notes for tonight's cttee
#: below", "numbers for the minutes, Gareth", "Gareth, re V-H's email"): a name, a comma and
#: a few verbless words that open with a note, a version or a reply
#: (:data:`_PREAMBLE_OPENS`; :func:`_says_nothing`). "Unfortunately, no update yet" is no
#: name; "Sam, stock below reorder level" and "Priya, figures up on last year" compare.
_PREAMBLE = re.compile(
    r"^(?:(?-i:(?P<name>[A-Z][a-z'’-]+)),[ \t]+(?P<after>[^.!?\d:]{1,60}?)"
    r"|(?P<before>[^.!?\d,:]{1,60}?),[ \t]+(?-i:(?P<last>[A-Z][a-z'’-]+)))[ \t]*[.!]?$"
)
_PREAMBLE_OPENS = re.compile(
    r"^(?:re|(?:(?:short|quick|brief|rough|full|final)\s+)?(?:notes?|version|summary|update"
    r"|numbers|figures|rundown|round-?up|recap|answers?|reply|headlines?)"
    r"|on\s+(?:the|your|his|her|their)\s+[\w'’-]+\s+(?:q|question|query)"
    r"|for\s+the\s+[\w'’-]+,\s*(?:quick|short|brief)\s+version)\b",
    re.IGNORECASE,
)
_COMPARING = re.compile(
    r"\b(?:up|down|above|over|under|higher|lower|more|less|fewer)\b|\bbelow\b(?!\s*$)",
    re.IGNORECASE,
)
#: Sentence adverbs and fillers that open a line like a name ("Unfortunately, …").
_NOT_A_NAME = re.compile(
    r"[a-z]+ly|also|still|meanwhile|otherwise|however|anyway|overall|again|yes|no|ok|okay"
    r"|right|well|note|update|summary|sadly|currently|today|tonight|now|so|plus",
    re.IGNORECASE,
)
#: Words that make a phrase assert: verbs and auxiliaries a short exclamation or preamble
#: would need to say anything ("the poor thing" says nothing; "the loco is broken" does); an
#: "'s" only after a pronoun ("that's"), not a possessive ("the webmaster's q").
_ASSERTING = re.compile(
    r"\b(?:is|are|was|were|be|been|being|am|has|have|had|did|does|do|will|would|can|could"
    r"|should|shall|may|might|must|got|gets|get|went|goes|go|came|comes|made|makes|took"
    r"|takes|said|says|shows|showed|ran|runs|won|lost|sold|broke|opened|closed|left|"
    r"[a-z]+ed|[a-z]+n['’]t)\b|['’](?:re|ve|ll|d|m)\b"
    r"|\b(?:that|it|he|she|there|here|what|who|where|this|everything|nothing)['’]s\b",
    re.IGNORECASE,
)


def _says_nothing(words: str) -> bool:
    """Whether a short phrase holds no value (a number in words is one) and no verb (see
    :data:`_ASSERTING`)."""
    return not protected_values(words) and _ASSERTING.search(words) is None


#: Pictographs that close a sentence ("… incoming!! 🔥", "pls 🙏"): the words decide.
_EMOJI_TAIL = re.compile(r"[\s\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200D]+$")


def is_pleasantry(text: str) -> bool:
    """Whether a sentence is conversation rather than a checkable assertion: greetings,
    thanks, apologies, wishes ("Happy travels!", "Enjoy the show!"), offers of help ("Happy
    to pull the June payslip too", "Let me know if …"), hedged closings ("Hope this helps
    with the planning!") and questions to the reader. Judged by the sentence's *shape* —
    how it opens and whether it asks — not by its values: an offer that names a value
    ("Happy to look up other candidates at centre 4410") still asserts nothing. A name that
    only looks like one ("Happy Valley Farm opened in 2019", "Hope Street station …") is
    not: two capitalised words open it."""
    stripped = _EMOJI_TAIL.sub("", _TAG.sub("", text)).strip()
    if not stripped:
        return False
    greeting = _GREETING.match(stripped)
    if greeting is not None:
        # "Hi Sam, here's where things stand." greets; "Dear customer, the fee is £40." asserts
        rest = re.sub(r"^[A-Z][\w'’-]*[ \t]*[,!.]", "", stripped[greeting.end() :].strip())
        return not rest.strip() or is_pleasantry(rest.strip())
    exclamation = _EXCLAMATION.match(stripped)
    if exclamation is not None:
        # "Good news tho, the appeal was approved." asserts; "Kind regards, Eleanor" signs
        rest = stripped[exclamation.end() :].strip()
        rest = re.sub(r"^[\W_]+", "", rest) if not re.match(r"^[\w\"'“‘(]", rest) else rest
        # a role in brackets after the name ("Cheers, Maggie (Hon. Sec. and chief nagger)");
        # "Thanks, Dave (the boiler needs replacing)" says something in its brackets
        role = _ROLE.search(rest)
        signed = rest
        if role is not None and len(role.group(1).split()) <= 6 and _says_nothing(role.group(1)):
            signed = rest[: role.start()]
        return not rest or bool(_SIGNATURE.match(signed)) or is_pleasantry(rest)
    interjection = _INTERJECTION.match(stripped)
    if interjection is not None and stripped.endswith("!"):
        rest = stripped[interjection.end() :]
        if (
            len(rest.split()) <= 8
            and _FEELING.search(rest)
            and not _STATE.search(rest)
            and _says_nothing(rest)
        ):
            return True
    preamble = _PREAMBLE.match(stripped)
    if preamble is not None and not _NOT_A_NAME.fullmatch(
        preamble.group("name") or preamble.group("last")
    ):
        said = (preamble.group("after") or preamble.group("before")).strip()
        if (
            len(said.split()) <= 6
            and _PREAMBLE_OPENS.match(said)
            and not _COMPARING.search(said)
            and _says_nothing(said)
        ):
            return True
    if _PROPER_START.match(stripped):
        return False
    lead_in = _LEAD_IN.match(stripped)
    if lead_in is not None:
        # a wish after it is one only when it carries no value ("Pleased to confirm, see
        # you at 7pm on Friday" confirms a booking)
        rest = stripped[lead_in.end() :].strip()
        return not rest.strip(" .!") or (is_pleasantry(rest) and not protected_values(rest))
    if _PLEASANTRY.match(stripped) or _WELCOME.search(stripped):
        return True
    if not stripped.rstrip("\"'”’) ").endswith("?"):
        return False
    # a question to the reader asks, it does not assert — unless it asserts by asking ("Can
    # you believe the Glasshouse seats 340?") or after a statement ("The gala starts at
    # half nine — could there be a later slot?"), and asks nothing of the reader
    head, tail = stripped, ""
    dash = re.search(r"\s+[—–]\s+|\s+-\s+", stripped)
    if dash is not None:
        head, tail = stripped[: dash.start()], stripped[dash.end() :]
    if _OFFER.match(tail or stripped):
        return True
    if tail and not head.rstrip().endswith("?") and len(head.split()) >= 4:
        return is_pleasantry(head)
    return _RHETORICAL.match(stripped) is None


@dataclass(frozen=True)
class Claim:
    """One claim of an answer (see the module docstring). ``start``/``end`` are UTF-8 byte
    offsets into the answer; ``text`` is exactly those bytes."""

    index: int
    text: str
    start: int
    end: int
    content: str
    values: tuple[str, ...]
    attribution: Attribution
    factual: bool
    section: str = ""
    cites: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "text": self.text,
            "range": [self.start, self.end],
            "content": self.content,
            "values": list(self.values),
            "attribution": self.attribution.as_dict(),
            "factual": self.factual,
            "section": self.section,
            "cites": list(self.cites),
        }


def is_template(text: str) -> bool:
    """Template text (a disclaimer) with no protected value in it."""
    return _TEMPLATE.search(text) is not None and not protected_values(text)


def _stripped(text: str, spans: list[tuple[int, int]], offset: int) -> list[tuple[int, int]]:
    """The spans of ``text`` without their leading and trailing whitespace, shifted by
    ``offset``; blank ones dropped."""
    out = []
    for s, e in spans:
        piece = text[s:e]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece.rstrip())
        if trail > lead:
            out.append((offset + s + lead, offset + s + trail))
    return out


def _sentences(line: str, offset: int) -> list[tuple[int, int]]:
    """[start, end) character spans of the sentences of ``line`` (stripped, non-empty)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(line):
        word_start = m.start()
        while word_start > 0 and not (
            line[word_start - 1].isspace() or line[word_start - 1] in "([\"'“"
        ):
            word_start -= 1
        word = line[word_start : m.start()].lower()
        if m.group(0).rstrip("\"'”’)") == "." and (
            (len(word) == 1 and word.isalpha()) or word.rstrip(".") in _ABBREVIATIONS
        ):
            continue
        spans.append((start, m.end()))
        start = m.end()
    spans.append((start, len(line)))
    return _stripped(line, spans, offset)


def _clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    sentence = text[start:end]
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _CLAUSE.finditer(sentence):
        before = sentence[: m.start()]
        if before.count('"') % 2 or before.count("“") > before.count("”"):
            continue  # never split inside a quotation
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(sentence)))
    return _stripped(sentence, spans, start)


_COORD = re.compile(r",?\s+and\s+(?!also\b)|,\s+(?=\S)")
_WORDS = re.compile(r"[^\W_][\w'’.,\-/:]*[^\W_]|[^\W_]")
_AUXILIARY = frozenset(
    "is are was were has have had will would can could may might must should shall does did "
    "do remains remained became becomes isn't wasn't aren't weren't hasn't hadn't won't "
    "can't couldn't doesn't didn't".split()
)
#: Common irregular past forms (English grammar, not a domain list).
_IRREGULAR_PAST = frozenset(
    "left took made gave went came ran sold paid held kept won lost built sent spent found got "
    "bought brought began grew rose fell wrote drove flew met told thought led chose broke "
    "became stood set put cut read shut hit".split()
)
_NOT_VERB_ED = frozenset("red bed need shed seed feed speed hundred sacred naked wicked".split())
_OBJECT_START = frozenset(
    "the a an its their his her our your my this that these those every each no all some "
    "one two three four five six seven eight nine ten twelve".split()
)
_SUBJECT_START = _OBJECT_START | frozenset("it he she they we i there".split())


def _is_finite(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` reads as a finite verb: an auxiliary, a past form in -ed, or an
    -s form followed by a number or a determiner ("employs 2,895", "costs the")."""
    w = words[i].lower()
    if w in _AUXILIARY or (i > 0 and w in _IRREGULAR_PAST):
        return True
    if len(w) > 4 and w.endswith("ed") and w not in _NOT_VERB_ED:
        return True
    nxt = words[i + 1] if i + 1 < len(words) else ""
    return (
        len(w) > 3
        and w.endswith("s")
        and not w.endswith(("ss", "us", "is"))
        and bool(nxt)
        and (nxt[0].isdigit() or nxt.lower() in _OBJECT_START)
    )


def _first_verb(words: list[str]) -> int | None:
    return next((i for i in range(len(words)) if _is_finite(words, i)), None)


def _coordinated(
    text: str, start: int, end: int, keep: list[tuple[int, int]]
) -> list[tuple[int, int, bool]]:
    """Split ``text[start:end]`` at ``and`` / list commas that join two clauses or two
    predicates: [start, end) spans with whether the part needs the first part's subject.
    Never inside a quotation, a value ("between 45 and 55", "1.5 and 2.0") or a ``keep``
    range (an attribution phrase)."""
    clause = text[start:end]
    cuts: list[tuple[int, int, bool]] = []
    for m in _COORD.finditer(clause):
        at, after = start + m.start(), start + m.end()
        before = clause[: m.start()]
        if before.count('"') % 2 or before.count("“") > before.count("”"):
            continue
        if any(a - 2 <= at <= b + 2 or a - 2 <= after <= b + 2 for a, b in keep):
            continue
        left = _WORDS.findall(text[cuts[-1][1] if cuts else start : at])
        right = _WORDS.findall(text[after:end])
        if not left or not right or _first_verb(left) is None:
            continue
        if re.search(r"\bbetween\s+\S+$", before, re.IGNORECASE) or (
            left[-1][0].isdigit() and right[0][0].isdigit()
        ):
            continue
        if _is_finite(right, 0) and "and" in m.group(0):
            cuts.append((at, after, True))  # "… in 1982 and employs 2,895 people"
            continue
        verb = _first_verb(right[:6])
        if verb is not None and (
            (verb >= 1 and (right[0].lower() in _SUBJECT_START or right[0][:1].isupper()))
            or 1 <= verb <= 2
        ):
            cuts.append((at, after, False))  # "…, and the fee is 7 EUR"
    if not cuts:
        return [(start, end, False)]
    out: list[tuple[int, int, bool]] = []
    pos, carry = start, False
    for at, after, needs_subject in cuts:
        out.append((pos, at, carry))
        pos, carry = after, needs_subject
    out.append((pos, end, carry))
    return [(a, b, c) for a, b, c in out if text[a:b].strip()]


def _subject(content: str) -> str | None:
    """The words of ``content`` before its first finite verb (at most 8), or None."""
    words = content.split()
    i = _first_verb(words)
    if i is None or not 1 <= i <= 8:
        return None
    return " ".join(words[:i])


#: Frames around a claim's proposition that assert nothing of their own: an opening ("It
#: should be noted that …", "It is understood that …", "it looks like …", "I gather …") and
#: asides ("for the avoidance of doubt", "to the best of the records provided", "as things
#: stand"). The content checked is the proposition.
_FRAME_OPEN = re.compile(
    r"^(?:(?:and|so|but|also)\s+)?"
    r"(?:it\s+(?:should|must|may|can)\s+be\s+(?:noted|said|added|stressed|observed)"
    r"|it\s+(?:is|was|has\s+been|had\s+been)\s+(?:noted|understood|confirmed|established|"
    r"observed|found|ascertained)"
    r"|it\s+(?:looks|seems|appears)|i\s+can\s+confirm|i\s+(?:think|believe|gather|reckon))"
    r"(?:\s*,[^,]{1,60},)?\s+(?:that\s+|like\s+|as\s+though\s+|as\s+if\s+)?",
    re.IGNORECASE,
)
#: An answer's word opening the claim before its proposition ("No, you can't bring your
#: dog", "Sorry, they can't send plants to Northern Ireland", "Yes — the path reopened"):
#: it answers the question and asserts nothing of its own (a comma or dash after it; "No
#: dogs are allowed" keeps its "No").
_ANSWER_WORD = re.compile(
    r"^(?:yes|yeah|yep|yup|no|nope|nah|sorry|sadly|unfortunately|happily|good\s+news"
    r"|bad\s+news|i['’]m\s+afraid|afraid\s+not|correct|right|ok(?:ay)?)"
    r"\s*(?:,|—|–|\s-|:|!)\s*",
    re.IGNORECASE,
)
#: A hedge inside the proposition: "The Kaur hire seems to be confirmed" says the hire is
#: confirmed.
_SEEMS = re.compile(r"\b(?:(seems|appears|looks)|(seem|appear|look))\s+to\s+be\b", re.IGNORECASE)
_FRAME_ASIDE = re.compile(
    r",?\s*\b(?:for\s+the\s+avoidance\s+of\s+doubt|as\s+things\s+stand"
    r"|to\s+the\s+best\s+of\s+(?:the\s+records?(?:\s+(?:provided|available|supplied))?"
    r"|(?:my|our)\s+knowledge))\b\s*,?",
    re.IGNORECASE,
)


#: A version the attribution gives its source ("Policy doc rev 5 puts …", "Formulary
#: version 4.2 says …"): a claim about the source that is checked like the claim's values.
_SOURCE_VERSION = re.compile(rf"\b{VERSION_WORD}[ \t]*\d[\w.]*(?<![.])", re.IGNORECASE)


#: What a source's noun phrase is for, after it: "the ledger card for UHT milk", "the record
#: for Pier 1", "the EXIF on the swarm photo".
_FOR_WHAT = re.compile(
    r"\s(?:for|on|about)\s+(?:(?:the|our|your|their|his|her|its|this|that)\s+)?(?P<what>\S.*)$",
    re.IGNORECASE,
)


#: The owner a source's noun phrase opens with: "Pia's candidate record", "Marigold Jean's
#: licence record".
_OWNER = re.compile(
    r"^(?:the\s+)?(?P<who>[A-Z][\w.-]*(?:\s+(?:[A-Z]|\d)[\w.-]*){0,3})['’]s\s+(?P<rest>.*)$"
)
#: Sources an owner writes rather than is written about: "Maddox Rigg's report says …" is
#: by Maddox Rigg, "Pia's record shows …" about Pia.
_AUTHORED = frozenset(
    "report reports letter letters email emails note notes memo review reviews article "
    "post posts write-up writeup piece statement minutes blog survey".split()
)
#: Owners that are things, not whom the claim is about ("Photo's metadata", "Club's page").
_THING_OWNERS = frozenset("photo pic picture image file clip video club page site scan".split())


def _keyed(words: str) -> bool:
    """Whether ``words`` are a source's key rather than whom or what it is about: they hold
    an identifier ("RA-90314", "C17", "Booking VP-66210") or are one value ("the 14th")."""
    values = protected_values(words)
    return any(v.kind == "identifier" for v in values) or (
        len(values) == 1 and values[0].text == words.strip()
    )


def _whose(noun_phrase: str, rest: str) -> str | None:
    """Whom a source's noun phrase belongs to, when the rest of the claim does not name
    them: "Pia's candidate record shows no access arrangements" is about Pia. None for a
    thing ("Photo's metadata"), the author of what they wrote ("Maddox Rigg's report"), a
    source ("the Gazette's write-up") or the source's key (:func:`_keyed`: "GH-181's batch
    record", "Booking VP-66210's record")."""
    m = _OWNER.match(noun_phrase.strip())
    if m is None:
        return None
    who = m.group("who")
    if who.casefold() in _THING_OWNERS or names_a_source_noun(who):
        return None
    if (m.group("rest").split() or [""])[-1].lower() in _AUTHORED:
        return None  # the author of a report, not whom the claim is about
    if _keyed(who):
        return None  # "Meter FVW-88320's record", "C17's booking": the record's own key
    return None if who.casefold() in rest.casefold() else who


def _what_for(noun_phrase: str, rest: str) -> str | None:
    """The thing a source's noun phrase is for, when the rest of the claim does not name
    it: the claim is about it, so it stays in the content to be checked ("The record for
    Pier 1 gives severity 4" is about Pier 1). None when the part names a source itself
    ("the results for the search") or is the source's key (:func:`_keyed`)."""
    m = _FOR_WHAT.search(noun_phrase)
    if m is None:
        return None
    what = m.group("what").strip()
    if not any(ch.isalnum() for ch in what) or names_a_source_noun(what):
        return None
    if _keyed(what):
        return None  # "the rental record for RA-90314", "the log for the 14th": its key names it
    return None if what.casefold() in rest.casefold() else what


def _content(text: str, attribution: Attribution, span_in_text: tuple[int, int] | None) -> str:
    if span_in_text is not None:
        versions = _SOURCE_VERSION.findall(text[span_in_text[0] : span_in_text[1]])
        text = text[: span_in_text[0]] + text[span_in_text[1] :]
        # the source's version stays a value to check, and whom and what the source is for
        kept = versions + [
            w
            for w in (
                _whose(attribution.noun_phrase, text),
                _what_for(attribution.noun_phrase, text),
            )
            if w
        ]
        if kept:
            body = text.rstrip()
            stop = body[-1] if body and body[-1] in ".!?" else ""
            text = f"{body[: len(body) - len(stop)]} ({', '.join(kept)}){stop}"
    text = _TAG.sub("", text)
    text = " ".join(_FRAME_ASIDE.sub(" ", text).split())
    answered = _ANSWER_WORD.match(text)
    if answered is not None and answered.end() < len(text):
        text = text[answered.end() :][:1].upper() + text[answered.end() + 1 :]
    text = _SEEMS.sub(lambda m: "is" if m.group(1) else "are", text)
    framed = _FRAME_OPEN.match(text)
    if framed is not None and framed.end() < len(text):
        return text[framed.end() :][:1].upper() + text[framed.end() + 1 :]
    return text[:1].upper() + text[1:] if attribution.span is not None and text else text


def _make(
    answer: str,
    index: int,
    start: int,
    end: int,
    tools: Mapping[str, str],
    *,
    section: str,
    sentence: tuple[int, int] | None = None,
    question: str | None = None,
    subject: str | None = None,
    listing: Listing | None = None,
) -> Claim:
    """A claim over ``answer[start:end]`` (characters). Attribution is read from the
    enclosing ``sentence`` (default: the claim itself)."""
    text = answer[start:end]
    attribution = find_attribution(text, tools, listing)
    span_in_claim = attribution.span
    if attribution.status == "unavailable" and sentence is not None:
        # a part keeps the attribution that opens its sentence or closes it
        whole_text = answer[sentence[0] : sentence[1]]
        whole = find_attribution(whole_text, tools, listing)
        if whole.span is not None:
            a, b = sentence[0] + whole.span[0], sentence[0] + whole.span[1]
            outside = b <= start or a >= end
            opens = whole.span[0] == 0
            closes = not whole_text[whole.span[1] :].strip(" .!?\"'”’)")
            if outside and (opens or closes):
                attribution, span_in_claim = whole, None
    content = _content(text, attribution, span_in_claim)
    if subject:
        content = f"{subject} {content[:1].lower()}{content[1:]}"
    bare = _TAG.sub("", text).strip()
    if section == "answer" and question:
        content = f"{question.strip()} {content}"
        factual = bool(bare.strip(" .")) and not detect_abstention(bare, question).abstained
    else:
        factual = bool(content_terms(bare)) and not is_template(text) and not is_pleasantry(text)
    values = tuple(v.text for v in protected_values(content))
    byte_start = len(answer[:start].encode("utf-8"))
    byte_end = byte_start + len(text.encode("utf-8"))
    return Claim(
        index=index,
        text=text,
        start=byte_start,
        end=byte_end,
        content=content,
        values=values,
        attribution=attribution,
        factual=factual,
        section=section,
        cites=tuple(find_citations(text)),
    )


def _segments(answer: str) -> list[tuple[str, int, int]]:
    """(section, start, end) character spans: the text between section headers."""
    headers = list(_HEADER.finditer(answer))
    if not headers:
        return [("", 0, len(answer))]
    out = []
    if answer[: headers[0].start()].strip():
        out.append(("preamble", 0, headers[0].start()))
    for i, h in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(answer)
        name = h.group("name").lower()
        section = (
            "answer" if "answer" in name else "evidence" if "evidence" in name else "reasoning"
        )
        out.append((section, h.end(), end))
    return out


def decompose(
    answer: str,
    tools: Mapping[str, str],
    *,
    question: str | None = None,
    listing: Listing | None = None,
) -> list[Claim]:
    """The claims of ``answer`` in text order (``tools``: tool name → family, and the
    trace's ``listing`` when there is one, for attributions that name a tool)."""
    claims: list[Claim] = []
    for section, seg_start, seg_end in _segments(answer):
        pos = seg_start
        for line in answer[seg_start:seg_end].split("\n"):
            for s_start, s_end in _sentences(line, pos):
                whole = find_attribution(answer[s_start:s_end], tools, listing)
                keep = [(s_start + whole.span[0], s_start + whole.span[1])] if whole.span else []
                # an aside ("…, for the avoidance of doubt, …") is no clause of its own
                keep += [
                    (s_start + m.start(), s_start + m.end())
                    for m in _FRAME_ASIDE.finditer(answer[s_start:s_end])
                ]
                for c_start, c_end in _clauses(answer, s_start, s_end):
                    parts = (
                        _coordinated(answer, c_start, c_end, keep)
                        if section != "answer"
                        else [(c_start, c_end, False)]
                    )
                    first: Claim | None = None
                    for p_start, p_end, needs_subject in parts:
                        subject = (
                            _subject(first.content) if needs_subject and first is not None else None
                        )
                        claim = _make(
                            answer,
                            len(claims),
                            p_start,
                            p_end,
                            tools,
                            section=section,
                            sentence=(s_start, s_end),
                            question=question,
                            subject=subject,
                            listing=listing,
                        )
                        first = first or claim
                        claims.append(claim)
            pos += len(line) + 1
    return claims


def claim_at(
    answer: str,
    byte_range: tuple[int, int],
    tools: Mapping[str, str],
    index: int = 0,
    *,
    listing: Listing | None = None,
) -> Claim:
    """The claim over a given byte range of ``answer`` (a gold claim of a fixture). Raises
    ValueError when the range is not on character boundaries."""
    data = answer.encode("utf-8")
    start_b, end_b = byte_range
    if not 0 <= start_b <= end_b <= len(data):
        raise ValueError(f"byte range {list(byte_range)} outside the answer ({len(data)} bytes)")
    try:
        start = len(data[:start_b].decode("utf-8"))
        end = start + len(data[start_b:end_b].decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"byte range {list(byte_range)} is not on character boundaries") from None
    return _make(answer, index, start, end, tools, section="", listing=listing)
