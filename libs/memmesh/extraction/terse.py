"""Terse notes spelled out: "husband: Omer.", "fave poet: Rumi", "opera: no thanks" are how
people dictate a profile, and they say what "my husband is Omer", "my favorite poet is Rumi"
and "I don't like opera" say. Each "label: value" sentence is read as its spelled-out form,
so every fact rule hears the note as it hears the sentence; anything else is left as it is.
A clause that leaves its "I" unsaid ("Still terrified of needles.", "diabetic since age
nine") is read with it, as the sentence it stands for.

A label is a short noun phrase of the user's own ("wife's name", "sister Ruth", "best
friend"); one that opens a hypothetical, asks something or only frames what follows ("if I
had wings:", "question:", "note:", "resume:") is no label.
"""

from __future__ import annotations

import re

from .lexicon import (
    DURABLE_ADJECTIVES,
    INSTRUCTION_VERBS,
    MONTHS,
    NOT_A_NAME,
    PERSON_ROLE_ALTERNATION,
    TITLED_NAME,
    WEEKDAYS,
    durable_adjective_alternation,
)

_SENTENCE = re.compile(r"[^.!?;]+[.!?;]*\s*")
_NOTE = re.compile(
    r"^(?P<lead>\s*)(?P<label>[^\W\d_][\w'-]*(?:\s+[\w'-]+){0,3})\s*:\s+"
    r"(?P<value>[^:]+?)(?P<end>[.!?;]*\s*)$"
)
# Labels that frame what follows instead of naming something of the user's.
_FRAMES = frozenset(
    "note notes reminder question q a answer update ps fyi btw todo to-do plan plans idea tip "
    "warning edit summary topic subject re fwd agenda status task step option resume continue "
    "reopen lol ok okay so also anyway well um uh like honestly basically seriously correction "
    "actually yes no yeah nope news story context quote example problem issue reason result "
    "thought thoughts point verdict spoiler hint caution".split()
)
# Words no label of the user's holds (a hypothetical, a question, another person).
_NOT_A_LABEL = frozenset(
    "if when whenever would could should maybe perhaps i you we he she they it this that these "
    "those what how why where who which whose there here the a an is are was were am be been "
    "do does did have has had me remind please".split()
)
# First words of a frame around a wish or another life ("in another life:", "dream job:").
_FRAME_OPENERS = frozenset(
    "in on at for with without after before during by from to dream someday ideally "
    "hypothetically".split()
)
# A value that is already a sentence of its own ("the thing is: I hate mornings").
_SENTENCE_VALUE = re.compile(r"^(?:I|I'm|I've|I'd|I'll|we|we're|my|our|it|it's|that|this)\b", re.I)
_FAVOURITE = re.compile(
    r"^(?:fav|fave|favou?rite|all-time fav(?:e|ou?rite)?)\s+(?P<thing>.+)$", re.I
)
_DISLIKE = re.compile(r"^(?:dislikes?|hates?|can't stand|cannot stand|not a fan of)$", re.I)
_LIKE = re.compile(r"^(?:likes?|loves?)$", re.I)
_ALLERGY = re.compile(r"^(?:allerg(?:y|ies)|allergic(?: to)?)$", re.I)
# A value that only turns the label down ("opera: no thanks, never").
_REFUSED = re.compile(
    r"^(?:no(?:\s+thanks?(?:\s+you)?)?|nope|nah|never|not for me|hard pass|pass|hate (?:it|them)|"
    r"(?:a\s+)?hard no|hell no|absolutely not|no way|not a chance|"
    r"can't stand (?:it|them)|yuck|ugh)(?:[\s,]+(?:never|no|ever|thanks|thank you|nope|always|"
    r"for me|not for me))*$",
    re.I,
)
MAX_VALUE_WORDS = 12


# Standing choices said as bare phrases: "Window seat, always.", "Oat milk in everything,
# please.", "Not into sitcoms.", "Wheelchair user." say what "I always want a window seat",
# "I want oat milk in everything", "I'm not into sitcoms" and "I use a wheelchair" say.
# Replies and pronouns, which no choice is ("Sure, always.", "Same thing, always.").
_NO_THING = (
    "I|we|you|it|that|this|same|the same|me|us|them|him|her|sure|yes|yeah|yep|no|nope|ok|okay|"
    "thanks|thank you|sorry|never|not|always"
)
_THING = rf"(?P<thing>(?!(?:{_NO_THING})\b)[^\W_][^,.!?;:]{{1,40}}?)"
_INSTRUCTION = re.compile(rf"^(?:{INSTRUCTION_VERBS})\s", re.I)
_ALWAYS = re.compile(rf"^{_THING},?\s+(?:please,?\s+)?always(?:,?\s+please)?$", re.I)
_IN_EVERYTHING = re.compile(rf"^{_THING}\s+(?:in|on|with)\s+everything(?:,?\s+please)?$", re.I)
_NOT_INTO = re.compile(r"^not\s+(?P<how>into|a fan of|big on)\s+(?P<thing>[^,.!?;:]{2,40})$", re.I)
_USER_OF = re.compile(
    r"^(?P<thing>[^\W\d_][\w-]*(?:\s+[\w-]+)?)\s+user(?P<rest>,\s+(?:so|and|but)\b.*)?$", re.I
)
# "power user", "heavy user": how much someone uses things, not what they use.
_NOT_USED_THINGS = frozenset(
    "power heavy light new first-time long-time longtime daily regular casual frequent "
    "occasional avid super end".split()
)
# "No jazz. Ever.": a refusal and its emphasis, two sentences of one thought.
_NO_EVER = re.compile(
    r"(?:^|(?<=[.!?]\s))No\s+(?P<thing>[^\W\d_][^,.!?;:]{1,30})[.!]+\s*(?:Ever|Never)\b[.!]*",
    re.I,
)


# Units chosen as a bare phrase: "Metric units.", "Kilos, not pounds.", "24-hour clock, always."
# say what "always use metric units" says. A unit name alone ("Pounds.", "Dollars.") answers a
# question as often, so it needs a unit word, a "not" or an "always" beside it; a system name
# ("Metric.", "Celsius.") does not.
_UNIT = (
    r"(?:the\s+)?(?:metric|imperial|celsius|fahrenheit|kilometres|kilometers|kilograms|kilos|grams|"
    r"ounces|cups|miles|pounds|litres|liters|24[- ]hour|12[- ]hour|military)"
    r"(?:\s+(?:units|measurements|clock|time|system))?"
)
_UNIT_CHOICE = re.compile(
    rf"^(?P<thing>{_UNIT})(?P<other>,?\s+not\s+{_UNIT})?"
    r"(?P<standing>(?:,?\s+(?:always|please|every time|everywhere|for everything))*)$",
    re.I,
)
# "times in 24-hour format, always", "I always want recipes in grams, never cups": what is
# to be given in which unit.
_THINGS_IN_UNIT = re.compile(
    r"^(?:(?:oh|and|also|plus|please)[,\s]+)*(?:I\s+(?:always\s+)?(?:want|need|prefer|like)\s+)?"
    r"(?P<what>times?|temperatures?|temps|distances?|weights?|measurements|recipes|heights?|"
    r"speeds?|the weather|weather|forecasts?|dates)\s+in\s+(?P<unit>" + _UNIT + r")"
    r"(?:\s+(?:format|units|form))?(?P<other>,?\s+(?:not|never)\s+" + _UNIT + r")?"
    r"(?P<standing>(?:,?\s+(?:always|please|every time|everywhere))*)$",
    re.I,
)
_SYSTEM_ALONE = re.compile(
    r"^(?:metric|imperial|celsius|fahrenheit)$|\s(?:units|measurements|clock|time|system)$", re.I
)
# How replies should read, said as a bare phrase: "Short replies.", "Bullet points, please."
_REPLY_FORM = re.compile(
    r"^(?P<thing>(?:short|shorter|brief|concise|detailed|simple|plain|step-by-step)\s+"
    r"(?:replies|answers|responses|summaries|explanations)|bullet points)"
    r"(?:,?\s+(?:always|please))*$",
    re.I,
)
# Where the user is from, said bare: "From Chile.", "Originally from Cork." (a capitalised
# place; "From Monday." starts a plan, not an origin).
_FROM_PLACE = re.compile(
    r"^(?:originally\s+)?from\s+(?P<place>(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+)){0,2})$", re.I
)
_NOT_PLACES = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april
may june july august september october november december today tomorrow now then here there
me you him her them us scratch""".split()
)


def spell_out_notes(text: str) -> str:
    """The text with each "label: value" sentence and each bare standing choice in its
    spelled-out form, and the "I" a clause left unsaid said."""
    text = _NO_EVER.sub(lambda m: f"I never want {m['thing']}.", text)
    text = _MY_USUAL.sub(lambda m: f"{m['thing']} is my go-to.", text)
    text = _TOPIC_THEN_VERDICT.sub(_verdict_spelled, text)
    text = _ONE_OVER_ANOTHER.sub(_preference_spelled, text)
    text = _KIND_THEN_CHOICE.sub(_choice_spelled, text)
    text = _YEARS_OF_STATE.sub(_years_spelled, text)
    text = _ROLE_IS.sub(r"\g<role> is ", text)
    text = _FAVOURITE_WITHOUT_VERB.sub(r"my favorite \g<thing> is \g<value>", text)
    text = CLEFT.sub(lambda m: f"{m['who']} {m['pred']} {m['thing']}", text)
    text = _TOPIC_ASKED.sub(_topic_as_subject, text)
    text = _ROLE_ASKED.sub(_role_named, text)
    text = _NAME_ASKED.sub(_name_placed, text)
    text = _JOB_ASKED.sub(lambda m: f"I work in {m['answer'].replace(' - ', ' ')}", text)
    text = _NAME_ASIDE.sub(_name_without_aside, text)
    spelled = "".join(_spelled(sentence.group()) for sentence in _SENTENCE.finditer(text))
    return _CLAUSE_START.sub(_with_subject, spelled)


# "Oolong, no sugar. My usual.": the thing named, then said to be what the user always has.
_MY_USUAL = re.compile(
    r"^(?P<thing>(?!(?:I|we|you|it|that|this|what|so|and|but|ok|okay|yes|no|sure)\b)"
    r"[^\W\d_][^.!?,]{0,40}?)(?:,\s+[^.!?,]{1,20})?[.!]\s+(?:that's\s+|it's\s+)?"
    r"(?:my|the)\s+(?:usual|regular|go-to|standard order)[.!]*\s*$",
    re.I,
)


# "Fave band Radiohead, fave food ramen.": a favourite named without its verb.
_FAVOURITE_WITHOUT_VERB = re.compile(
    r"(?:(?<=^)|(?<=[,.;!]\s))(?:my\s+)?favou?rite\s+(?P<thing>[a-z]+)\s+"
    r"(?!(?:is|are|was|were|has|have|of|in|on|at|for|to|and|or|ever|thing|things|by|would|"
    r"will|right|now|these|this|that|so|because)\b)"
    r"(?P<value>[\w'][\w'-]*(?:\s+[\w'-]+){0,2})(?=\s*(?:[,.;!]|$))",
    re.I,
)


# "Horror movies? Hard no.", "Mayo. Absolutely not.", "olives. hate them.", "5:30 gym
# sessions. Love them.": a thing named alone, then the verdict on it.
_TOPIC_THEN_VERDICT = re.compile(
    r"^(?P<thing>(?!(?:maybe|possibly|probably|perhaps|I|we|you|it|that|this|what|why|how|who|"
    r"where|when|which|do|does|did|is|are|can|could|would|should|will|any|anything|so|and|but|"
    r"or|ok|okay|yes|no|sure|really|seriously|thanks|sorry)\b)[^\W_][\w':-]*(?:\s+[\w'&-]+){0,4})"
    r"[?.!]\s+(?:(?P<against>hard\s+(?:no|pass)|absolutely\s+not|no\s+way|not\s+my\s+(?:cup\s+of\s+tea|thing)|"
    r"not\s+for\s+me|pass(?=[.!,]?\s+(?:always|ever|never)\b)|gross|yuck|disgusting|betrayal|hate\s+(?:it|them)|can't\s+stand\s+(?:it|them)|"
    r"cannot\s+stand\s+(?:it|them)|soap|vile|nasty|ew+|not\s+a\s+fan)|"
    r"(?P<for>love\s+(?:it|them)|obsessed|can't\s+get\s+enough))\b",
    re.I,
)


# "Sparkling water > still. Always.", "tea over coffee any day", "licorice = gross.": one thing
# put before another, or a thing and its verdict, said without a verb.
_ONE_OVER_ANOTHER = re.compile(
    r"^(?P<thing>(?!(?:I|I'm|we|you|it|that|this|what|so|and|but|give|gimme|honestly|well|"
    r"oh|ok|okay|yeah|um|uh|id|I'd|pick|choose|take|prefer)\b)[^\W\d_][\w'-]*"
    r"(?:\s+(?!(?:came|come|went|moved|got|all|is|am|was|turned|looked|fell|took|ran|think|I|I'm|"
    r"we|we're|you|it|it's|my|so|id|I'd|pick|choose|take|prefer)\b)"
    r"[\w'&-]+){0,3}?)\s*(?:(?P<over>>|\bover\b(?!\s+easy\b))\s*(?P<other>[^\W\d_][\w'-]*(?:\s+[\w'&-]+){0,3}?)"
    r"(?=\s*(?:[,.!?]|$|for me\b|any day\b|always\b|every (?:single )?time\b))"
    r"|\s*=\s*(?P<against>gross|disgusting|evil|the worst|overrated|trash|nope|no)(?=\s*[,.!?]|\s*$))",
    re.I,
)


# "Ice cream? Mint choc chip. Always.", "Tea? Earl Grey, splash of milk, every time.": a kind
# of thing, then the one always chosen.
_KIND_THEN_CHOICE = re.compile(
    r"^(?P<kind>(?!(?:what|how|why|who|where|when|which|do|does|did|is|are|can|could|would|"
    r"should|will|any|anything|you|I)\b)[^\W\d_][\w'-]*(?:\s+[\w'-]+){0,2})\?\s+"
    r"(?P<choice>(?!(?:no|not|never|hard|absolutely|pass|yes|yeah|nope|nah|sure|maybe|dunno|idk|"
    r"I|it|that|depends)\b)[^.?!]+?)[,.]\s*(?P<always>(?:always|every (?:single )?time|without fail)"
    r"[.!]*)\s*$",
    re.I,
)


def _thing_named(phrase: str) -> str:
    """ "Horror movies" -> "horror movies"; "Star Wars" stays a name."""
    return phrase if any(w[:1].isupper() for w in phrase.split()[1:]) else _common(phrase)


def _choice_spelled(found: re.Match[str]) -> str:
    return f"my favorite {_thing_named(found['kind'])} is {found['choice']}. {found['always']}"


def _preference_spelled(found: re.Match[str]) -> str:
    thing = _thing_named(found["thing"])
    # What it is put before is no taste of the user's ("tea over coffee" keeps the tea).
    return f"I prefer {thing}" if found["over"] else f"I don't like {thing}"


def _verdict_spelled(found: re.Match[str]) -> str:
    """The thing and its verdict as a taste, the verdict kept after it for what it adds."""
    verb = "don't like" if found["against"] else "love"
    verdict = "against" if found["against"] else "for"
    return f"I {verb} {_thing_named(found['thing'])}. {found[0][found.start(verdict) :]}"


# "twelve years vegetarian now", "nine years powerlifting": a span of years, then the state
# that has lasted it, said as a note ending its clause.
_YEARS_OF_STATE = re.compile(
    r"(?:^|(?<=[.!?;,]\s))(?:(?:um|uh|so|and|but|also|honestly)\s+)*(?P<span>(?:\d+|[a-z]+(?:[- ][a-z]+)?))\s+years?\s+"
    r"(?!(?:ago|old|later|before|after|since|in|of|at|and|on|for|from|with|to|now|back|running|"
    r"straight|long|younger|older|apart|away)\b)(?P<state>[a-z][\w-]+)"
    r"(?:\s+(?:now|and counting|straight|strong|running))*(?=\s*(?:[.!?;,]|$))",
    re.I,
)
_SPAN_NUMBER = re.compile(
    r"^(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|a few|several|many)"
    r"(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?$",
    re.I,
)


# "my daughter's lactose intolerant": the "'s" of someone's lasting condition is "is", not
# whose ("my daughter's school" stays).
_ROLE_IS = re.compile(
    rf"\b(?P<role>my\s+(?:{PERSON_ROLE_ALTERNATION}))'s\s+"
    rf"(?=(?:(?:severely|very|really|badly)\s+)?(?:{durable_adjective_alternation()}|allergic)"
    r"(?:\s*(?:[,.!?;]|$)|\s+(?:to|and|so|since|too|now|but|because|like)\b))",
    re.I,
)


# "it's cashews I'm allergic to", "it's coriander that I can't stand": a cleft puts the thing
# first; said plainly it is "I'm allergic to cashews".
CLEFT = re.compile(
    r"(?:^|(?<=[.!?;,]\s))(?:it's|its|it is)\s+(?P<thing>(?:[\w'-]+\s+){0,2}?[\w'-]+)\s+(?:that\s+)?"
    r"(?P<who>I(?:'m|\s+am)?)\s+(?P<pred>(?:(?:really|seriously|so)\s+)?(?:allergic|intolerant|"
    r"sensitive)\s+to|(?:can't|cannot|don't|do not)\s+(?:eat|have|drink|stand|tolerate)|hate|love|"
    r"adore|avoid)(?=\s*(?:[.!?;,]|$))",
    re.I,
)


def _years_spelled(match: re.Match[str]) -> str:
    if not _SPAN_NUMBER.match(match["span"]):
        return match.group()
    return f"I've been {match['state']} for {match['span']} years"


# "Cilantro? Tastes like soap to me.", "Sushi? Makes me ill.": a thing named as a question,
# then what it does, is the subject of what follows.
_TOPIC_ASKED = re.compile(
    r"(?:^|(?<=[.!?]\s))(?P<topic>(?!(?:what|how|why|who|where|when|which|do|does|did|is|are|"
    r"was|can|could|would|will|should|have|has|any)\b)(?:[A-Za-z][\w'-]*\s+){0,3}"
    r"[A-Za-z][\w'-]*)\?\s+(?P<verb>tastes|smells|sounds|looks|feels|makes|gives|sets|"
    r"triggers|does)\b",
    re.I,
)


def _topic_as_subject(match: re.Match[str]) -> str:
    return f"{match['topic']} {match['verb'].lower()}"


# "Trainer at the gym? Marco.", "My dentist? Dr. Alvarez.", "Dog's name? Biscuit.": someone in
# the user's life asked as a question and answered with a name is "my trainer at the gym is
# Marco". Only a role the lexicon knows, and only a name (capitalised, with its title) for the
# answer: "Dentist? Not since March." answers with no one.
_ROLE_ASKED = re.compile(
    r"(?:^|(?<=[.!?]\s))(?:my\s+)?(?P<label>(?!(?:what|how|why|who|where|when|which|do|does|did|"
    r"is|are|was|can|could|would|will|should|have|has|any|a|an|the|your|his|her|their|some|"
    rf"no|not)\b)(?:[\w-]+\s+)?(?:{PERSON_ROLE_ALTERNATION})"
    r"(?:'s\s+name)?(?:\s+(?:at|from|in|for)\s+(?:the\s+|my\s+|work\b)?[\w'-]*){0,1})\?\s+"
    rf"(?P<name>(?-i:{TITLED_NAME}))"
    r"(?=\s*(?:[.!,;]|$))",
    re.I,
)


# "Oh and Kofi? Best friend since primary school.", "Ines? My goddaughter.": a name asked as
# if the listener wondered, then who that is: "Kofi is my best friend since primary school".
_NAME_ASKED = re.compile(
    r"(?:(?<=^)|(?<=[.!?]\s)|(?<=\band\s)|(?<=\boh\s)|(?<=\bso\s)|(?<=\balso\s))"
    r"(?P<name>(?-i:[A-Z][\w'-]+))\?\s+(?:(?:my|our)\s+)?"
    rf"(?P<role>(?:[\w-]+\s+)?(?:{PERSON_ROLE_ALTERNATION})\b"
    # ...and where they are from or since when, nothing that goes on ("Anna? My boss said so").
    r"(?:\s+(?:since|from|at|in|of|for|on)\b[^.!?;,]*)?)(?=\s*(?:[.!?;,]|$))",
    re.I,
)
# "What do I do for a living? Teaching - secondary school chemistry.": the user's own
# question, answered.
_JOB_ASKED = re.compile(
    r"(?:^|(?<=[.!?]\s))(?:so\s+)?what do I do\s+for\s+(?:a\s+living|work)\?\s+"
    r"(?P<answer>(?!(?:I|I'm|well|um|no|nothing|not)\b)[^.!?]{3,60})",
    re.I,
)
_QUESTION_WORDS = frozenset("what who why how where when which whose huh sorry pardon".split())


def _name_placed(match: re.Match[str]) -> str:
    name = match["name"]
    if name.lower() in NOT_A_NAME or name.lower() in _QUESTION_WORDS:
        return match.group()
    return f"{name} is my {_common(match['role'])}"


# "Mr. Whiskers - yes, I know - is my orange tabby", "Dave, believe it or not, is my boss": a
# name said first, a short aside between dashes or commas, then who the name is. The aside
# comments on the name and says nothing of its own; without it the sentence is "Dave is my
# boss".
_NAME_ASIDE = re.compile(
    r"(?:^|(?<=[.!?]\s))(?P<name>(?-i:(?:(?:Mr|Mrs|Ms|Dr|Sir|Lady|Miss)\.?\s+)?[A-Z][\w'-]+"
    r"(?:\s+[A-Z][\w'-]+)?))\s*(?:,|\s-)\s*(?P<aside>[^,.!?;-]{1,30}?(?:,\s*[^,.!?;-]{1,20}?)?)"
    r"\s*(?:,|\s-)\s*(?P<rest>(?:is|'s)\s+(?:my|our)\s)",
    re.I,
)


_NAMES_A_ROLE = re.compile(rf"\b(?:my|our|his|her|their|(?:{PERSON_ROLE_ALTERNATION}))\b", re.I)


def _name_without_aside(match: re.Match[str]) -> str:
    # "Dave, my neighbour, is my landlord": an aside that names a role says who Dave is.
    if match["name"].split()[0].lower() in NOT_A_NAME or _NAMES_A_ROLE.search(match["aside"]):
        return match.group()
    return f"{match['name']} {match['rest']}"


# Replies that answer such a question with no one ("Doctor? No.", "Boss? Ugh.").
_NO_ONE = frozenset("nope nah yep sure none nobody nothing ugh meh hmm oh god same".split())


def _role_named(match: re.Match[str]) -> str:
    first = match["name"].split()[0].lower()
    if first in NOT_A_NAME or first in _NO_ONE:
        return match.group()
    label = match["label"]
    return f"my {label[0].lower()}{label[1:]} is {match['name']}"


# Clauses that leave their "I" unsaid, as notes and tired speech do ("Still terrified of
# needles, always have been.", "diabetic since age nine", "never learned to drive", "big
# fan of jazz"): the subject is said, so the clause reads as the sentence it stands for.
# Only where a sentence starts, or a clause after a comma does (after a question only what the
# user does, since the answer may be about whom it asks: "my sister? allergic to cats"), and
# only for leads that cannot start a request or be said of someone just named.
_CLAUSE_START = re.compile(r"(?:^|(?<=[.!;?]\s)|(?<=[.!;])|(?<=,\s))(?P<clause>[^,.!?;]+)")
# Adverbs that, leading a clause with no subject, go before its verb ("still hate the cold").
_LEAD_ADVERBS = frozenset(
    "never still always usually really totally definitely absolutely seriously rarely "
    "seldom hardly genuinely".split()
)
# Words that, after a lead adverb, start no verb phrase ("mostly in hospitals", "always the
# same"): the clause adds to the one before it.
_NOT_A_VERB = frozenset(
    """in on at to for from with by of about into onto over under near the a an some any all
every no not one two three my your his her our their its this that these those""".split()
)
# What a clause says of its speaker with "I'm" before it ("allergic to cats", "lactose
# intolerant", "terrified of needles").
_STATES = frozenset(
    """allergic intolerant diabetic prediabetic vegetarian vegan pescatarian celiac coeliac
pregnant afraid scared terrified frightened petrified deaf colorblind colourblind left-handed
right-handed shy introverted extroverted sober teetotal claustrophobic epileptic asthmatic
hypoglycemic anemic anaemic dyslexic autistic bilingual trilingual fluent allergic obsessed
addicted hopeless useless terrible awful rubbish clueless nuts crazy mad""".split()
)
# Participles of feeling that take "I'm" when a preposition follows ("scared of heights",
# "obsessed with tea", "into jazz" is in _STATES' spirit but too short to be safe).
_FEELING = re.compile(r"^\w+(?:ed|ied)\s+(?:of|by|about|with)\b", re.I)
# Kinds of person a clause names its speaker as ("classic night owl", "big fan of jazz",
# "dual citizen", "coffee snob"): "I'm a ..." before it.
_KIND_OF_PERSON = re.compile(
    r"^(?:(?:a|an)\s+)?(?:[a-z-]+\s+){0,2}?(?:night owl|early bird|early riser|morning person|"
    r"night person|cat person|dog person|people person|homebody|introvert|extrovert|foodie|"
    r"dual citizen|fan of|snob|nerd|geek|junkie|fanatic|addict|lover of|workaholic|"
    r"perfectionist|neat freak|insomniac|light sleeper|heavy sleeper|picky eater|fussy eater|"
    r"non-smoker|nonsmoker|ex-smoker|smoker)\b|"
    # "Still a Spurs supporter.", "lifelong Arsenal supporter": a team's supporter.
    r"^(?:(?:a|an)\s+)?(?:(?:lifelong|life-long|die-hard|diehard|massive|huge|big|loyal)\s+)?"
    r"(?-i:[A-Z][\w'-]*)(?:\s+(?-i:[A-Z][\w'-]*))?\s+(?:supporter|fan)$|"
    # "PhD student, linguistics.": a student of a kind, as the whole note.
    r"^(?:phd|grad|graduate|med|medical|law|nursing|dental|art|exchange|mature|college|uni|"
    r"university|undergrad|undergraduate|masters?|doctoral|postgrad|postgraduate|first-year|"
    r"second-year|third-year|final-year)\s+student$",
    re.I,
)
# Verbs said of oneself that no request to the assistant starts with ("live in", "work as").
# Not "love" and "hate": bare, they are as often an idiom or sarcasm ("love waiting in line",
# "hate when that happens"), and the rules read the plain ones ("Hate anchovies.") already.
_SELF_VERBS = re.compile(
    r"^(?:live\s+(?:in|on|near|with|by|there\b|here\b)|"
    r"work\s+(?:\w+\s+)?(?:as|at|for|in|from)|grew up|speak\s+(?!to\b|with\b|up\b|louder|"
    r"slower|slowly|more|in\b)|"
    # "Bus times to Fenwick St? Don't drive.": nothing an assistant does, so the user's own.
    r"(?:don't|dont|do not)\s+(?:drive|smoke|drink(?!\s+and\b))(?=\s*(?:[.!,;]|$)))",
    re.I,
)
# Words after which a clause is already said of someone, or is no statement at all.
_SAID_OF_SOMEONE = frozenset(
    """i i'm i've i'd i'll im ive we we're we've they they're he she he's she's it it's you
you're this that these those there here my our your his her their the what who how why
where when which whose if unless because so and but or then please""".split()
)
# Auxiliaries that, after a lead adverb, end an afterthought ("always have been", "never
# did") rather than start a statement of their own.
_AUXILIARIES = frozenset(
    "have has had been be was were am is are do did does will would can could".split()
)


def _with_subject(found: re.Match[str]) -> str:
    clause = found["clause"]
    body = clause.lstrip()
    lead = clause[: len(clause) - len(body)]
    body = _common(body)
    words = body.split()
    if not words or words[0].lower() in _SAID_OF_SOMEONE:
        return clause
    if found.string[: found.start()].rstrip().endswith("?"):
        # After a question the clause may answer it of whom it asks about ("my sister?
        # allergic to cats"); only what the user does is the user's ("Weather in Reykjavik?
        # Live there.").
        return f"{lead}I {body}" if _SELF_VERBS.match(body) else clause
    first = words[0].lower()
    if first in _LEAD_ADVERBS and len(words) == 2 and words[1].lower() in _STATES:
        # "Still pescatarian, for the record."
        return f"{lead}I'm {body}"
    if first in _LEAD_ADVERBS and len(words) >= 3:
        second = words[1].lower()
        rest = " ".join(words[1:])
        if second in ("a", "an") and _KIND_OF_PERSON.match(rest):
            return f"{lead}I'm {body}"
        if (
            second in _SAID_OF_SOMEONE
            or second in _AUXILIARIES
            or second in _NOT_A_VERB
            or second.endswith("'s")
        ):
            return clause
        if second in _STATES or _FEELING.match(rest) or _KIND_OF_PERSON.match(rest):
            return f"{lead}I'm {body}"
        return f"{lead}I {body}"
    if first in _STATES or _FEELING.match(body):
        return f"{lead}I'm {body}"
    if _KIND_OF_PERSON.match(body):
        # "no fan of cats": "I'm no fan of cats"; "big fan of jazz": "I'm a big fan of jazz".
        bare = first in ("a", "an", "no", "not")
        article = "" if bare else ("an " if first[0] in "aeiou" else "a ")
        return f"{lead}I'm {article}{body}"
    if _SELF_VERBS.match(body):
        return f"{lead}I {body}"
    if _ROLE_NAMED.match(body):
        # "Mum's Rosa, dad's Kofi": each names one of the user's own.
        return f"{lead}my {body}"
    return clause


# A role and its name, the "my" unsaid: "Mum's Rosa", "sister's Abena".
_ROLE_NAMED = re.compile(rf"^(?:{PERSON_ROLE_ALTERNATION})'s\s+(?-i:[A-Z][\w'-]+)$", re.I)


# "Landlord - Mr. Abebe.", "Beets - never.": a dash stands for the colon where the label is
# someone in the user's life or the value turns the label down (elsewhere a dash joins
# clauses: "Moved flats today - still a Spurs supporter").
_DASH_NOTE = re.compile(
    r"^(?P<lead>\s*)(?P<label>[^\W\d_][\w'-]*(?:\s+[\w'-]+){0,2})\s+-\s+"
    r"(?P<value>[^:-]+?)(?P<end>[.!?;]*\s*)$"
)
_ROLE_LABEL = re.compile(rf"^(?:my\s+)?(?:{PERSON_ROLE_ALTERNATION})$", re.I)
_WHEN = re.compile(
    rf"^(?:(?:on|at|next|this|every)\s+)?(?:{'|'.join(sorted(WEEKDAYS | MONTHS))}|today|tomorrow|"
    r"tonight|\d)",
    re.I,
)
_TITLED_NAME = re.compile(rf"^{TITLED_NAME}$")


def _dash_note(sentence: str) -> re.Match[str] | None:
    found = _DASH_NOTE.match(sentence)
    if found is None:
        return None
    value = found["value"].strip()
    named = _ROLE_LABEL.match(found["label"]) and _TITLED_NAME.match(value)
    return found if named or _REFUSED.match(value) else None


def _spelled(sentence: str) -> str:
    note = _NOTE.match(sentence) or _dash_note(sentence)
    if note is None:
        return _standing_choice(sentence)
    label, value = note["label"].strip(), note["value"].strip()
    words = label.lower().split()
    # "Me: Ines.": the speaker's own name; what else follows "Me:" is spelled out where it is.
    if words == ["me"] and re.fullmatch(r"[A-Z][\w'-]+", value):
        return f"{note['lead']}my name is {value}{note['end']}"
    if (
        words[0] in _FRAMES
        or words[0] in _FRAME_OPENERS
        or _NOT_A_LABEL.intersection(words)
        or len(value.split()) > MAX_VALUE_WORDS
        or _SENTENCE_VALUE.match(value)
    ):
        return sentence
    label = label[0].lower() + label[1:]
    label = re.sub(r"^my\s+", "", label)  # "My therapist - Dr. Hanley."
    if _REFUSED.match(value):
        spelled = f"I don't like {label}"
    elif favourite := _FAVOURITE.match(label):
        spelled = f"my favorite {favourite['thing']} is {value}"
    elif _DISLIKE.match(label):
        spelled = f"I dislike {value}"
    elif _LIKE.match(label):
        spelled = f"I like {value}"
    elif _ALLERGY.match(label):
        spelled = f"I'm allergic to {value}"
    elif _WHEN.match(value) and _ROLE_LABEL.match(label):
        # "Dentist: Tuesday.": when the appointment is, not who the dentist is.
        return sentence
    else:
        last = words[-1]
        plural = last.endswith("s") and not last.endswith(("ss", "'s", "us", "is"))
        spelled = f"my {label} {'are' if plural else 'is'} {value}"
    return f"{note['lead']}{spelled}{note['end']}"


def _standing_choice(sentence: str) -> str:
    """A bare standing choice ("Window seat, always.") spelled out; anything else as it is."""
    stripped = sentence.strip()
    body = stripped.rstrip(".!")
    if not body or body != body.rstrip(".!?;:") or "?" in stripped:
        return sentence
    end = sentence[len(sentence.rstrip()) :]
    tail = stripped[len(body) :]
    if (found := _THINGS_IN_UNIT.match(body)) and (
        found["other"] or found["standing"] or re.match(r"^(?:\S+\s+)*I\s", body)
    ):
        lead = sentence[: len(sentence) - len(sentence.lstrip())]
        spelled = f"always use {found['unit'].lower()} for {found['what'].lower()}"
        return f"{lead}{spelled}{tail or '.'}{end}"
    if (found := _UNIT_CHOICE.match(body)) and (
        found["other"] or found["standing"] or _SYSTEM_ALONE.search(found["thing"])
    ):
        spelled = f"always use {found['thing'].lower()}{found['other'] or ''}"
    elif DURABLE_ADJECTIVES.get(body.lower(), ("", ""))[1] == "constraint.diet":
        # "Keto.": a diet named as a whole sentence is the user's ("keto, paleo, whatever" lists).
        spelled = f"I'm {body.lower()}"
    elif found := _REPLY_FORM.match(body):
        spelled = f"I prefer {found['thing'].lower()}"
    elif (found := _FROM_PLACE.match(body)) and found["place"].split()[0].lower() not in (
        _NOT_PLACES
    ):
        spelled = f"I'm from {found['place']}"
    elif (found := _ALWAYS.match(body)) and not _INSTRUCTION.match(found["thing"]):
        # "use the 24-hour clock with me, always" is an instruction already, not a bare choice.
        spelled = f"I always want {_common(found['thing'])}"
    elif found := _IN_EVERYTHING.match(body):
        spelled = f"I want {_common(body)}"
    elif found := _NOT_INTO.match(body):
        spelled = f"I'm not {found['how'].lower()} {found['thing']}"
    elif (found := _USER_OF.match(body)) and found["thing"].split()[0].lower() not in (
        _NOT_USED_THINGS
    ):
        rest = (found["rest"] or "").lstrip(", ")
        spelled = f"I use {found['thing']}" + (f". {rest[0].upper()}{rest[1:]}" if rest else "")
    else:
        return sentence
    lead = sentence[: len(sentence) - len(sentence.lstrip())]
    return f"{lead}{spelled}{tail or '.'}{end}"


def _common(phrase: str) -> str:
    """A phrase that opened its sentence, its capital dropped unless the word is written so
    everywhere ("Window seat" -> "window seat"; "NHS", "iPhone" stay)."""
    words = phrase.split()
    if not words:
        return phrase
    first = words[0]
    if len(first) > 1 and first[0].isupper() and first[1:].islower():
        return phrase[0].lower() + phrase[1:]
    return phrase
