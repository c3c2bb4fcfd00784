"""Identity facts: name, occupation, residence, origin, languages, studies and traits."""

from __future__ import annotations

import re

from .context import SELF_STATEMENT_MARKERS, ClauseContext, appositive, build
from .lexicon import (
    DEMONYMS,
    DURABLE_ADJECTIVES,
    EMOTION_WORDS,
    FANDOM_NOUNS,
    IDENTITY_NOUNS_AS_TRAITS,
    LANGUAGES,
    MONTHS,
    MUSICAL_INSTRUMENTS,
    NON_IDENTITY_NOUNS,
    NOT_A_NAME,
    RELIGIONS,
    durable_adjective_alternation,
    is_trait_person,
)
from .markers import TIME_BOUND
from .model import Candidate
from .phrases import ADVERBS, EPISODIC_PURPOSE, I_AM, clean_object, is_generic_object
from .places import language_fact, origin_fact, residence_fact
from .text import conjugate_3sg, indefinite_article, slug, third_person

_NAME = re.compile(
    r"^(?:my\s+name(?:'s|\s+is)|(?:the\s+)?name's|I\s+go\s+by|call\s+me|(?:I'm|I am)\s+called)\s+"
    r"(?P<name>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)?)",
    re.I,
)
_I_AM_NAME = re.compile(r"^(?:I'm|I am)\s+(?P<name>[A-Z][a-z'-]+)$")
_GREETING = r"(?:hi|hey|hello|hiya|heya|yo|morning|evening|good (?:morning|evening|afternoon))\b"
_FILLERS = r"(?:(?:uh|um|yeah|so|ok|okay|there|again)\b[\s,]*)*"
# Self-introductions as people say them on a call: "it's Ana here", "Ana speaking", "this is
# ana", "you're talking to Ana", "just call me Ana".
_INTRODUCTION = re.compile(
    rf"^(?P<greeting>{_GREETING}[\s,]*)?{_FILLERS}"
    r"(?:(?:it's|it is|this is)\s+(?P<name>[^\W\d_][\w'-]*)"
    r"(?P<tail>(?:\s+(?:here|speaking|calling|again|by the way))*)"
    r"|(?P<name2>[^\W\d_][\w'-]*)\s+(?:here|speaking)"
    r"|(?:you're|you are)\s+(?:talking|speaking)\s+(?:to|with)\s+(?P<name3>[^\W\d_][\w'-]*)"
    r"|(?:just\s+|you can\s+(?:just\s+)?)?call me\s+(?P<name4>[^\W\d_][\w'-]*))$",
    re.I,
)
_NOT_INTRODUCED = frozenset(
    """same right over everyone everybody nobody someone anyone all monday tuesday wednesday
    thursday friday saturday sunday christmas morning evening night noon late early""".split()
)
_I_AM_A = re.compile(
    rf"^(?:{I_AM}\s+(?P<neg>not\s+)?|I(?:'ve| have)\s+(?P<been>been)\s+)"
    rf"{ADVERBS}(?:a|an)\s+(?P<np>.+)$",
    re.I,
)
_SERVICE = re.compile(
    rf"^{I_AM}\s+(?:in|with)\s+the\s+(?P<branch>army|navy|air force|marines|"
    r"military|reserves|national guard|coast guard|fire department|police)\b",
    re.I,
)
_AGE = re.compile(rf"^{I_AM}\s+(?P<age>\d{{1,3}})(?:\s+years?\s+old|\s*yo)?$", re.I)
_I_AM_GROUP = re.compile(
    rf"^{I_AM}\s+(?:a\s+)?(?:(?:practicing|practising|devout|proud|born|"
    r"non-practicing)\s+)?(?P<word>[\w-]+)$",
    re.I,
)
_WORK = re.compile(
    r"^(?:I|we)\s+(?:(?:also|still|currently|mostly)\s+)?(?P<verb>work|teach|manage|run|write|"
    r"coach|own|play|study|practice|practise)\s+(?P<rest>.+)$",
    re.I,
)
_FOR_A_LIVING = re.compile(r"^I\s+(?P<verb>\w+)\s+(?P<obj>.+?)\s+for\s+a\s+living$", re.I)
_DEGREE_WORDS = (
    r"(?:a|an|my)\s+(?:phd|ph\.d\.?|master's|masters|degree|bachelor's|doctorate|mba|"
    r"residency|apprenticeship)\b"
)
_DEGREE = re.compile(_DEGREE_WORDS, re.I)
_STUDIES = re.compile(
    rf"^{I_AM}\s+(?:currently\s+)?(?P<verb>doing|studying|pursuing|getting|working on|"
    r"finishing)\s+"
    rf"(?P<what>{_DEGREE_WORDS}.*|[\w ]+?)$|^I'm\s+in\s+(?P<school>(?:med|law|grad|nursing|"
    r"medical|art)\s+school.*)$",
    re.I,
)
_LEARNING_LANGUAGE = re.compile(
    r"^(?:(?:ya|yeah|so|and|um|uh|oh|well|ok|okay|also|plus|honestly|actually|now)[\s,]+)*"
    # "Since two years I learn the Korean language": a learner's present for what goes on.
    r"(?:(?:(?:since|for)\s+)?(?:\w+\s+){1,2}(?:years?|months?)[\s,]+)?"
    rf"(?:(?:{I_AM}\s+(?:currently\s+|also\s+|still\s+)?|I(?:'ve| have)\s+been\s+)"
    r"(?P<verb>learning|studying|picking up|teaching myself|taking|doing|practi[cs]ing)|"
    r"I\s+(?:now\s+|also\s+|still\s+)?(?P<present>learn|study))\s+"
    r"(?:the\s+)?(?P<language>[A-Za-z]+)(?:\s+language)?(?P<course>\s+(?:classes|lessons|courses?))?\b",
    re.I,
)
# "I'm training for the Berlin marathon": an ongoing pursuit, like studying for an exam
# ("Training for my first Ironman": the "I'm" left unsaid).
_TRAINING = re.compile(
    rf"^(?:{I_AM}\s+{ADVERBS})?(?:in\s+)?training\s+for\s+(?P<event>(?:an?|the|my)\s+.+)$", re.I
)
# "I started at the children's hospital as a pharmacist last Monday": the start is news,
# the job it began is who the user is now.
_STARTED_JOB = re.compile(
    r"^(?:(?:last|this)\s+\w+\s+)?(?:I|we)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?"
    r"(?:started|start|began|begin|took|got|landed|accepted)\s+(?:(?:a|an|my|the)\s+)?"
    r"(?:new\s+)?(?:(?:job|position|role|post|work)\s+)?(?:(?:at|with|in|for)\s+(?P<where>[^,]+?)\s+)?"
    r"as\s+(?:an?\s+)?(?P<job>[\w-]+(?:\s+[\w-]+){0,3}?)(?:\s+(?:last|this|on|in|since|back|"
    r"yesterday|today|recently|a\s+(?:few|couple|week|month))\b.*)?[.!]*$",
    re.I,
)
# "Last week I start new job at Siemens, as electrical engineer.": the job after the comma.
_JOB_BEGUN = re.compile(
    r"\b(?:started|start|began|begin|got|landed)\s+(?:(?:a|an|my)\s+)?(?:new\s+)?"
    r"(?:job|position|role|post)\b",
    re.I,
)
_AS_JOB = re.compile(r"^as\s+(?:an?\s+)?(?P<job>[\w-]+(?:\s+[\w-]+){0,2})[.!]*$", re.I)
_NOT_A_JOB = frozenset(
    "kid child teen teenager baby student joke result favour favor volunteer hobby treat "
    "side bonus rule friend".split()
)
# "my hobby these days is building model ships", "my big passion is salsa": a pastime the
# user keeps up, said of the user's own hobby; "these days" and "nowadays" place it now, which
# is no time bound on it.
_HOBBY = re.compile(
    r"^(?:(?:and\s+)?now\s+)?my\s+(?:(?:main|big|biggest|favou?rite|only|new|latest|real)\s+)?"
    r"(?P<noun>hobby|hobbies|pastime|pastimes|passion|obsession)\s+"
    r"(?P<now>(?:these days|nowadays|now)\s+)?(?:is|are)\s+(?P<what>.+)$",
    re.I,
)
_BEEN_DOING = re.compile(
    r"^(?:I(?:'ve| have)\s+)?been\s+(?P<ving>\w+ing)\s+(?P<obj>.+?)\s+(?:for|since)\s+"
    r"(?P<dur>(?:about\s+|over\s+|almost\s+|nearly\s+)?(?:\w+\s+)?(?:years?|decades?)|"
    r"(?:I was|childhood|college|high school|\d{4})\b.*?)(?:\s+now)?$",
    re.I,
)
_TRAIT_ADJECTIVES = durable_adjective_alternation("identity")
_MONTH = "|".join(sorted(MONTHS))
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
# "my birthday is June 3rd", "my birthday's on the 14th of May": a day of the year, not a day
# coming up ("my birthday is on Saturday" is next week's news).
_BIRTHDAY = re.compile(
    r"^(?:and\s+|so\s+|also\s+|btw\s+|by the way\s+)?my\s+birthday(?:'s|\s+is|\s+falls)\s+"
    rf"(?:on\s+)?(?P<date>(?:the\s+)?{_DAY}\s+(?:of\s+)?(?:{_MONTH})|(?:{_MONTH})\s+(?:the\s+)?{_DAY})"
    r"[.!]*$",
    re.I,
)
_TRAIT = re.compile(
    rf"^(?:I(?:'m| am|'ve always been| have always been))\s+(?:an?\s+)?{ADVERBS}"
    rf"(?P<adj>{_TRAIT_ADJECTIVES})(?:\s+(?:person|guy|girl|one))?(?:\s+(?P<rest>.+))?$",
    re.I,
)
_CONTINUATION = re.compile(r"^(?:did|served|spent)\s+(?P<rest>.+)$", re.I)
_RETIRED = re.compile(rf"^{I_AM}\s+{ADVERBS}retired\b(?:\s+(?P<rest>.+))?$", re.I)
# When it happened, at the end: "…from the post office last spring".
_WHEN_AT_END = re.compile(
    r"(?:\s+(?:(?:last|this|in)\s+\w+|\w+\s+(?:years?|months?|weeks?)\s+ago|yesterday|today|"
    r"recently))+$",
    re.I,
)
# "today was my last day at the bank i retired after twenty six years": the day is the
# event's, being retired lasts.
_JUST_RETIRED = re.compile(
    r"(?:^|\s)I\s+(?:just\s+|finally\s+|officially\s+|have\s+|'ve\s+)?retired"
    r"(?:\s+(?P<rest>(?:after|from)\s+.+))?$",
    re.I,
)
_OCCUPATION_SUFFIX = re.compile(
    r"(?:er|or|ist|ian|ant|ent|nurse|pilot|chef|medic|cook|"
    r"officer|engineer|agent|clerk|analyst|scientist|architect|"
    r"veteran|student|consultant|therapist|dentist|surgeon)$"
)
_HOBBY_HEADS = frozenset(
    {
        "gamer",
        "reader",
        "runner",
        "hiker",
        "climber",
        "gardener",
        "baker",
        "knitter",
        "woodworker",
        "collector",
        "cyclist",
        "swimmer",
        "surfer",
        "skier",
        "golfer",
        "birder",
        "bookworm",
        "foodie",
        "nerd",
        "geek",
    }
)
# "and" ends the noun phrase unless one to three words that go on naming it end the clause
# ("a labor and delivery nurse", "a nurse and mother of two"; not "a nurse and love it").
_NP_CUT = re.compile(
    r"\s+(?:who|that|which|since|for|at this point|but|lol|haha|if|by trade|"
    r"through and through|now|and(?!(?:\s+(?!(?:I|it|its|it's|them|me|love|loves|hate|have|has|"
    r"had|am|was|is|do|don't|also|so|then|now|still|just|really)\b)[\w-]+){1,3}\s*$))\b.*$",
    re.I,
)


# "my pronouns are she/her", "I use they them pronouns" (the word "pronouns" said: grounding).
_PRONOUNS = re.compile(
    r"^(?:my\s+pronouns\s+are|I\s+use)\s+(?P<subject>she|he|they|xe|ze)\s*(?:/|\s|,|and)\s*"
    r"(?P<object>her|him|them|hers|his|theirs|xem|zir|hir)(?:\s*/\s*\w+)?(?:\s+pronouns)?$",
    re.I,
)


def _pronouns(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _PRONOUNS.match(text)
    if not match or "pronoun" not in text.lower():
        return []
    said = f"{match.group('subject').lower()}/{match.group('object').lower()}"
    return [_identity(ctx, f"User's pronouns are {said}", "identity.pronouns", 9500)]


def identity_candidates(ctx: ClauseContext) -> list[Candidate]:
    """Identity facts stated by the user in the clause."""
    text = ctx.text
    for rule in (
        _name,
        _pronouns,
        language_fact,
        residence_fact,
        origin_fact,
        _learning_language,
        _studies,
        _training,
        _started_job,
        _job_beside_the_name,
        _hobby,
        _retired,
        _trait,
        _service_or_age,
        _i_am_a,
        _group_membership,
        _work,
        _for_a_living,
        _been_doing,
    ):
        found = rule(ctx, text)
        if found:
            return found
    return []


def _identity(ctx: ClauseContext, text: str, key: str, confidence_bp: int = 9000) -> Candidate:
    return build(ctx, text, "identity", key, confidence_bp, SELF_STATEMENT_MARKERS)


def _name(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _NAME.match(text) or _I_AM_NAME.match(text)
    if not match:
        return _introduction(ctx, text)
    words = [w for w in match.group("name").split() if w.lower() not in NOT_A_NAME]
    name = " ".join(w[:1].upper() + w[1:] for w in words[:2])
    lowered = name.lower()
    if not name or lowered in DEMONYMS | RELIGIONS | EMOTION_WORDS or lowered in LANGUAGES:
        return []
    return [_identity(ctx, f"User's name is {name}", "identity.name", 9500)]


def _introduction(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _INTRODUCTION.match(text)
    if not match:
        return []
    name = next(n for n in match.group("name", "name2", "name3", "name4") if n)
    lowered = name.lower()
    if (
        lowered in NOT_A_NAME | _NOT_INTRODUCED | DEMONYMS | RELIGIONS | EMOTION_WORDS
        or lowered in LANGUAGES
        or re.search(r"(?:ing|ed|ly)$", lowered)
    ):
        return []
    # An all-lowercase transcript gives no capital to trust: "it's cold here" must not name
    # anyone, so a lowercase word is a name only in an unmistakable frame.
    greeted = bool(match.group("greeting")) or any(
        re.fullmatch(rf"{_GREETING}[\s\w,]*", c.text, re.I) for c in ctx.previous()
    )
    if not name[0].isupper() and not (greeted or match.group("name3") or match.group("name4")):
        return []
    if match.group("name") and not (greeted or match.group("tail")):
        return []
    return [_identity(ctx, f"User's name is {name[:1].upper()}{name[1:]}", "identity.name", 9500)]


def _learning_language(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _LEARNING_LANGUAGE.match(text)
    if not match or match.group("language").lower() not in LANGUAGES:
        return []
    # The user's own verb keeps the fact grounded in what was said (seed 002).
    said = match.group("verb") or f"{match.group('present')}ing"
    verb = said.lower().replace("teaching myself", "teaching themselves")
    language = match.group("language").capitalize()
    statement = f"User is {verb} {language}{(match.group('course') or '').lower()}"
    return [_identity(ctx, statement, f"identity.learning.{slug(language)}")]


# "I'm doing ok", "I'm getting better": how the user is, not what they study.
_HOW_ONE_IS = re.compile(
    r"^(?:(?:really|pretty|so|very|just|quite|all)\s+)?(?:ok|okay|fine|well|good|great|alright|"
    r"better|worse|awesome|amazing|fantastic|terrible|bad|badly|so-so|my best|our best|"
    r"all right|much better|nothing|nothing much|stuff|things|it|that|this)\b",
    re.I,
)


def _studies(ctx: ClauseContext, text: str) -> list[Candidate]:
    text = EPISODIC_PURPOSE.sub("", text)
    match = _STUDIES.match(text)
    if not match or _HOW_ONE_IS.match(match.group("what") or ""):
        return []
    # "I'm getting people together", "I'm working on a project": only a degree is studied
    # that way; a bare object is studied only after "studying" or "doing".
    verb = (match.group("verb") or "").lower()
    if (
        match.group("what")
        and verb not in ("studying", "doing")
        and not _DEGREE.match(match.group("what"))
    ):
        return []
    what = clean_object(match.group("what") or match.group("school"))
    if match.group("school"):
        return [_identity(ctx, f"User is in {what}", "identity.studies")]
    if not re.match(r"^(?:a|an|my)\s", what, re.I) and ctx.markers & {TIME_BOUND}:
        return []
    # "I am studying medicine" as much as "I'm studying medicine".
    verb = "is studying" if match.group("verb").lower() == "studying" else "is doing"
    return [_identity(ctx, f"User {verb} {third_person(what)}", "identity.studies")]


def _training(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _TRAINING.match(text)
    if not match:
        return []
    event = clean_object(match.group("event"))
    subject = re.sub(r"^(?:an?|the|my)\s+", "", event, flags=re.I)
    if not subject or is_generic_object(event, frozenset()):
        return []
    return [
        _identity(
            ctx, f"User is training for {third_person(event)}", f"identity.training.{slug(subject)}"
        )
    ]


# "I am Hiroshi, engineer of bridges", "I'm Ama, a nurse": the job said beside the name.
_NAME_SAID = re.compile(
    r"(?:^|\b)(?:I'm|I am|my name is|my name's|call me)\s+(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+))?$",
    re.I,
)
_JOB_BESIDE = re.compile(
    r"^(?:an?\s+)?(?P<job>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)(?P<of>\s+(?:of|for|at|in)\s+[\w -]{2,30})?$"
)


def _job_beside_the_name(ctx: ClauseContext, text: str) -> list[Candidate]:
    before = ctx.previous()
    said = _JOB_BESIDE.match(text)
    if not (
        said
        and before
        and before[-1].sentence == ctx.clause.sentence
        and _NAME_SAID.search(before[-1].text)
        and _OCCUPATION_SUFFIX.search(said.group("job").split()[-1].lower())
    ):
        return []
    job = f"{said.group('job')}{said.group('of') or ''}"
    return [_identity(ctx, f"User is {indefinite_article(job)} {job}", "identity.occupation", 8800)]


def _started_job(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _STARTED_JOB.match(text)
    if match:
        job = match.group("job")
    else:
        before = ctx.previous()
        said_as = _AS_JOB.match(text)
        if not (said_as and before and _JOB_BEGUN.search(before[-1].text)):
            return []
        job = said_as.group("job")
    said_with_article = re.search(rf"\bas\s+an?\s+{re.escape(job)}", text, re.I) is not None
    if (
        job.split()[0].lower() in _NOT_A_JOB
        or not job[0].isalpha()
        # "we started as neighbours": a plural, said without "a", is no job.
        or (not said_with_article and re.search(r"[^s]s$", job.split()[-1]))
    ):
        return []
    # The start is the news; the job it began is durable.
    return [
        _identity(
            ctx.without(TIME_BOUND),
            f"User is {indefinite_article(job)} {third_person(job)}",
            "identity.occupation",
        )
    ]


def _hobby(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _HOBBY.match(text)
    if not match:
        return []
    what = clean_object(match.group("what"))
    if not what or is_generic_object(what, frozenset()):
        return []
    if match.group("now"):
        ctx = ctx.without(TIME_BOUND)
    noun = match.group("noun").lower()
    verb = "are" if noun.endswith("s") else "is"
    return [_identity(ctx, f"User's {noun} {verb} {what}", f"identity.hobby.{slug(what)}", 8800)]


def _retired(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _RETIRED.match(text)
    if not match:
        match = _JUST_RETIRED.search(text)
        if not match:
            return []
        ctx = ctx.without(TIME_BOUND)
    rest = _WHEN_AT_END.sub("", match.group("rest") or "")
    job = _RETIRED_AS.match(rest)
    if job and _OCCUPATION_SUFFIX.search(job.group("job").split()[0].lower()):
        # "I am retired teacher of mathematic": what the user retired from is the fact.
        return [_identity(ctx, f"User is a retired {job.group('job')}", "identity.occupation")]
    detail = f" {rest}" if re.match(r"^(?:after|from)\b", rest, re.I) else ""
    return [_identity(ctx, f"User is retired{detail}", "identity.occupation")]


_RETIRED_AS = re.compile(r"^(?P<job>[a-z][\w-]*(?:\s+(?:of|in)\s+[\w ]{2,30}|\s+[a-z][\w-]*)?)$")


def _trait(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _TRAIT.match(text)
    if not match or match.group("adj").lower() == "retired":
        return []
    rest = match.group("rest") or ""
    if rest and not re.match(
        r"^(?:and\s+\w+|since\s+.+|my whole life|through and through|"
        r"with\s+(?:a|an|one|two|three|four|\d)\s+\w+)$",
        rest,
        re.I,
    ):
        return []
    adjective = match.group("adj")
    _, key = DURABLE_ADJECTIVES[adjective.lower()]
    detail = f" {rest}" if rest.lower().startswith("with") else ""
    return [_identity(ctx, f"User is {adjective}{detail}", key)]


def _i_am_a(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _I_AM_A.match(text)
    if not match:
        return []
    duration = re.search(
        r"\s+for\s+(?P<dur>(?:about\s+|over\s+|almost\s+|nearly\s+)?\w+\s+"
        r"(?:years?|decades?)|a\s+(?:long\s+|good\s+)?while|ages|years|decades|a\s+long\s+time|"
        r"(?:most\s+of|all)\s+my\s+(?:adult\s+)?life|my\s+whole\s+(?:adult\s+)?life)",
        match.group("np"),
        re.I,
    )
    if match.group("been") and not duration:
        return []
    noun_phrase = third_person(clean_object(_NP_CUT.sub("", match.group("np"))))
    words = noun_phrase.lower().split()
    if not words or words[0] in NON_IDENTITY_NOUNS or words[-1] in NON_IDENTITY_NOUNS:
        return []
    # "a volunteer firefighter in their town": the head noun comes before the place.
    head = _PLACE_TAIL.sub("", noun_phrase).lower().split()[-1]
    if head in FANDOM_NOUNS or "fan" in words or "sucker" in words or head in EMOTION_WORDS:
        return []
    if head in ("person", "guy", "girl") and not is_trait_person(noun_phrase.split()):
        return []
    if match.group("neg") and not (
        head in ("person", "owl", "bird")
        or any(trait in noun_phrase.lower() for trait in IDENTITY_NOUNS_AS_TRAITS)
    ):
        return []
    if re.search(r"\b(?:bit|little|lot|kind|sort)\s+of\b", noun_phrase, re.I):
        return []
    article = indefinite_article(noun_phrase)
    key = _identity_key(noun_phrase, head)
    if match.group("been") and duration:
        return [
            _identity(
                ctx,
                f"User has been {article} {noun_phrase} for {third_person(duration.group('dur'))}",
                key,
            )
        ]
    appendix = _continuation(ctx) or appositive(ctx)
    negation = "not " if match.group("neg") else ""
    statement = f"User is {negation}{article} {noun_phrase}{appendix}"
    depends = _DEPENDS_ON.search(noun_phrase)
    if depends and not negation:
        # A mobility aid the user lives with, or sobriety: a requirement, not who they are.
        aid = depends.group("aid")
        key = f"constraint.accessibility.{slug(aid)}" if aid else "constraint.sobriety"
        return [build(ctx, statement, "constraint", key, 9000, SELF_STATEMENT_MARKERS)]
    return [_identity(ctx, statement, key)]


_DEPENDS_ON = re.compile(
    r"\b(?:(?P<aid>wheelchair|cane|walker|crutch|mobility scooter|hearing aid|cochlear implant|"
    r"cpap|insulin pump|guide dog|screen reader)\s+user|recovering\s+(?:alcoholic|addict))\b",
    re.I,
)


_PLACE_TAIL = re.compile(r"\s+(?:in|at|near|around)\s+(?:their|the|a|an)\b.*$", re.I)


def _service_or_age(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _SERVICE.match(text)
    if match:
        return [_identity(ctx, f"User is in the {match.group('branch')}", "identity.occupation")]
    match = _BIRTHDAY.match(text)
    if match:
        date = re.sub(r"\s+", " ", match.group("date"))
        return [_identity(ctx, f"User's birthday is {date}", "identity.birthday", 9000)]
    match = _AGE.match(text)
    if match and 10 <= int(match.group("age")) <= 110:
        return [_identity(ctx, f"User is {match.group('age')} years old", "identity.age", 8500)]
    return []


def _identity_key(noun_phrase: str, head: str) -> str:
    lowered = noun_phrase.lower()
    if any(trait in lowered for trait in IDENTITY_NOUNS_AS_TRAITS) or head in (
        "person",
        "owl",
        "bird",
    ):
        return f"identity.trait.{slug(head if head not in ('person',) else lowered)}"
    if head in RELIGIONS:
        return "identity.religion"
    if head in _HOBBY_HEADS:
        return f"identity.hobby.{slug(head)}"
    if _OCCUPATION_SUFFIX.search(head):
        return "identity.occupation"
    return f"identity.self_description.{slug(head)}"


def _continuation(ctx: ClauseContext) -> str:
    # "I'm a veteran, did eight years in the Navy": a subject-less follow-up belongs to the fact.
    following = ctx.following()
    if following and following.sentence == ctx.clause.sentence:
        match = _CONTINUATION.match(following.text)
        if match:
            return f" who {following.text.split()[0].lower()} {third_person(match.group('rest'))}"
    return ""


def _group_membership(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _I_AM_GROUP.match(text)
    if not match:
        return []
    word = match.group("word").lower()
    if word in RELIGIONS:
        return [_identity(ctx, f"User is {_strip_i_am(text)}", "identity.religion")]
    if word in DEMONYMS:
        return [_identity(ctx, f"User is {_strip_i_am(text)}", "identity.heritage")]
    return []


def _strip_i_am(text: str) -> str:
    return re.sub(rf"^{I_AM}\s+", "", text, flags=re.I)


def _work(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _WORK.match(text)
    if not match:
        return []
    verb, rest = match.group("verb").lower(), clean_object(match.group("rest"))
    rest = re.sub(r"\s+together$", "", rest, flags=re.I)
    first = rest.split()[0].lower() if rest.split() else ""
    if verb == "work":
        if first not in (
            "as",
            "at",
            "for",
            "in",
            "night",
            "nights",
            "nightshifts",
            "from",
            "remotely",
            "shifts",
            "weekends",
            "two",
            "three",
            "full-time",
            "part-time",
        ):
            return []
        key = {
            "as": "identity.occupation",
            "at": "identity.employer",
            "for": "identity.employer",
            "in": "identity.field",
        }.get(first, "identity.work_schedule")
    elif verb == "play":
        if not set(rest.lower().split()) & MUSICAL_INSTRUMENTS and not re.search(
            r"\b(?:in|on)\s+(?:a|an|the)\s+\w*\s*(?:band|orchestra|team|league|choir|club)",
            rest,
            re.I,
        ):
            return []
        key = f"identity.hobby.{slug(rest.split()[0])}"
    elif verb in ("run", "own"):
        if not re.match(r"^(?:a|an|my own|our own|my|our)\s", rest, re.I) or re.search(
            r"\b(?:errand|marathon|race|mile|k)\b", rest, re.I
        ):
            return []
        key = "identity.business"
    elif verb in ("teach", "manage", "coach", "write"):
        if re.match(r"^(?:it|that|this|him|her|them|me)\b", rest, re.I):
            return []
        key = "identity.occupation"
    else:
        key = f"identity.{'studies' if verb == 'study' else 'practice'}.{slug(rest)}"
    subject = "User"
    return [_identity(ctx, f"{subject} {conjugate_3sg(verb)} {third_person(rest)}", key, 8800)]


def _for_a_living(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _FOR_A_LIVING.match(text)
    if not match:
        return []
    verb = match.group("verb")
    return [
        _identity(
            ctx,
            f"User {conjugate_3sg(verb)} {third_person(match.group('obj'))} for a living",
            "identity.occupation",
            9200,
        )
    ]


def _been_doing(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _BEEN_DOING.match(text)
    if not match or re.match(r"^(?:it|that|this)\b", match.group("obj"), re.I):
        return []
    ving, obj = match.group("ving").lower(), clean_object(match.group("obj"))
    return [
        _identity(
            ctx,
            f"User has been {ving} {third_person(obj)} for {clean_object(match.group('dur'))}",
            f"identity.activity.{slug(ving + ' ' + obj)}",
            8800,
        )
    ]
