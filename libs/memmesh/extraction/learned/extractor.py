"""The default extractor: the rules as high-precision proposals, a learned clause head for the
rest, and seed 002's gates over both.

For each clause the head gives the probability of "no durable fact" and of each category.
A rule's candidate stands unless the head is nearly sure its clause holds nothing durable; a
clause no rule understood becomes a fact when the head is confident, written in the user's
own words (render.py) and scored with seed 002's four factors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..constraints import IS_AN_ITEM
from ..context import critical_tokens
from ..lexicon import (
    FEAR_ADJECTIVES,
    MEDICAL_CONDITION_ALTERNATION,
    NOT_A_NAME,
    PERSON_ROLE_ALTERNATION,
    PERSON_ROLES,
    TITLED_NAME,
    WEEKDAYS,
)
from ..markers import (
    HEDGED,
    HYPOTHETICAL,
    PLAN,
    QUESTION,
    RELEVANCE_ASIDE,
    SARCASM,
    TIME_BOUND,
)
from ..model import BASIS_POINTS_MAX, Candidate, ExtractionResult, FactType
from ..relationships import AGED_NAME_LIST, PET_SAID
from ..rules import collect_candidates
from ..rules import extract as extract_by_rules
from ..text import slug
from .commands import LearnedCommands
from .empty_clauses import (
    denies_a_condition,
    is_broken_off,
    names_only_a_vague_thing,
    only_agrees,
)
from .labels import NONE
from .lexical import ClauseHeads
from .render import fact_body, fact_key, render_fact
from .units import (
    TextEncoder,
    Unit,
    is_continuation,
    is_fragment_tail,
    turn_units,
)

# Exclusions a learned candidate always honours, whatever the head says (seed 000).
LEARNED_MARKERS = frozenset({HEDGED, HYPOTHETICAL, PLAN, QUESTION, SARCASM, TIME_BOUND})
# "my friend's dad is a pilot": news about someone else's relative, no one of the user's own
# (labelling rule 4) unless that person is named ("my brother's wife Sara").
# "my mom's a dentist" is "my mom is": after a determiner, an adverb or a preposition the
# "'s" is the verb, not a possessive.
_CONTRACTED_IS = (
    r"name|a|an|the|not|been|got|gotten|always|never|still|so|very|really|from|in|at|on|into|"
    r"just|also|like|kind|my|our|your|his|her|their"
)
_SOMEONE_ELSES = re.compile(
    rf"^(?:\w+\s+){{0,2}}?(?:my|our)\s+[\w-]+'s\s+(?!(?:{_CONTRACTED_IS})\b)[\w-]+", re.I
)
_NAMED = re.compile(r"(?<!^)\b[A-Z][a-z]+")
# A name introduced as one, whatever its case ("her name is gloria" in a lowercase transcript).
_NAME_GIVEN = re.compile(
    r"\b(?:name(?:'s| is)|named|called)\s+(?!after\b|it\b|that\b)[a-z]{2,}", re.I
)
# Roles most people hold many of: without a name, "my coworker" is nobody in particular.
_ONE_OF_MANY = frozenset({"coworker", "friend", "neighbor", "employee", "intern", "cousin"})
# "my moms name": a transcript's possessive often comes without its apostrophe.
_MY_ROLE = re.compile(rf"\b(?:my|our)\s+(?:\w+\s+)??({PERSON_ROLE_ALTERNATION})(?:'?s)?\b", re.I)
# Words that stand for something said in another clause ("them", "there"); not "it", which is
# as often no one thing at all ("I find it relaxing").
_POINTERS = frozenset("them there those these him".split())


@dataclass(frozen=True)
class Thresholds:
    """Probabilities in basis points: when a learned fact is proposed, when a rule is vetoed."""

    # 5-fold cross-validation on the dev split, the whole extractor run on each held-out fold:
    # the two embedding heads alone at 8800 gave fact precision 0.886, recall 0.816 and
    # rejection 0.969. With the lexical head in the average its probabilities are less peaked
    # and the bar moves down: at half weight 8200 gave 0.900, 0.818 and 0.971 (8300 about
    # 0.903, 0.814, 0.973); at full weight 7800 gave about the same precision and recall with
    # rejection 0.967. The lexical head reading the turn's words too gave rejection about 0.02
    # more, but less precision and recall on one fold in two.
    accept_bp: int = 8200
    veto_bp: int = 9300
    # A clause the user asked to be kept ("keep in mind I use a CPAP machine every night") is
    # durable by their word; the head only has to see a fact in it.
    asked_to_keep_bp: int = 6000
    # A terse profile ("Welder. Rotterdam. Diabetic.") of which one note is surely a fact:
    # its other notes are facts of the same kind, however little each says alone.
    profile_note_bp: int = 5000


@dataclass(frozen=True)
class HybridExtractor:
    """Rules plus the learned clause head; deterministic for the same encoder and head."""

    encoder: TextEncoder
    head: ClauseHeads
    thresholds: Thresholds = Thresholds()
    commands: LearnedCommands | None = None

    def extract(self, text: str, role: str = "user") -> ExtractionResult:
        """Extract durable facts, a memory command and a correction pair from one turn."""
        if self.commands is None:
            return extract_by_rules(text, role, propose=self.candidates)
        return extract_by_rules(text, role, propose=self.candidates, detect=self.commands.detect)

    def forget_cached(self) -> None:
        """Drop the vectors the encoders keep of clauses it embedded (once words are erased)."""
        self.encoder.clear_cache()
        if self.commands is not None:
            self.commands.forget_cached()

    def candidates(self, fact_text: str) -> list[Candidate]:
        """Rule candidates the head does not veto, then learned candidates for the other clauses."""
        units = turn_units(fact_text)
        probabilities = self.head.probabilities(_with_subjects_restored(units), self.encoder)
        none_column = self.head.classes.index(NONE)
        proposed = [
            (candidate, _unit_of(candidate.evidence_span, units))
            for candidate in collect_candidates(fact_text)
        ]
        covered = {position for _, position in proposed if position is not None}
        # A short fragment the head sees no fact in completes the clause before it.
        # In a terse note ("PhD student, linguistics") the fragment completes the note whatever
        # the head makes of it alone, unless the note is one of a list of them ("Vegan, Berlin,
        # graphic designer."): there a fragment with a fact of its own is a note of its own.
        listed = _is_note_list(units)
        tails = {
            position
            for position in range(1, len(units))
            if _completes(units[position], units[position - 1])
            and (
                probabilities[position, none_column] >= 0.5
                or (not listed and len(units[position - 1].text.split()) <= 3)
            )
        }
        kept: list[Candidate] = []
        kept_positions: set[int] = set()
        # "Vet — Dr. Lindqvist, Hillcrest Clinic.": a labelled note is one fact, not a profile.
        profile = (
            _is_terse_profile(units)
            and not _LABELLED.search(fact_text)
            and (
                bool(proposed)
                or bool(
                    (1.0 - probabilities[:, none_column]).max() * BASIS_POINTS_MAX
                    >= self.thresholds.accept_bp
                )
            )
        )
        # Clauses a kept fact starts from: a fragment completes one of these, or is read alone
        # ("Step-free — wheelchair user": nothing kept of "Step-free", the user is kept).
        fact_heads: set[int] = set()
        for candidate, position in proposed:
            if position is not None:
                if (
                    probabilities[position, none_column] * BASIS_POINTS_MAX
                    >= self.thresholds.veto_bp
                ):
                    continue
                completed, completed_by = _with_tails(candidate, units, position, covered)
                tails |= completed_by
                fact_heads.add(position)
                if candidate.category in ("preference", "constraint"):
                    kept_positions.add(position)
                kept.extend(completed)
                continue
            kept.append(candidate)
        named_by_rules = " ".join(candidate.text for candidate, _ in proposed)
        for position, unit in enumerate(units):
            # "My landlord, Mr. Haddad, he is living downstairs": a rule's fact named him, and
            # his name, or what the pronoun then says, is his, not the user's.
            opening = _NAME_THEN_PRONOUN.match(unit.text)
            if opening and opening.group("name") in named_by_rules:
                continue
            if (
                position in covered
                or (position in tails and _completed_clause(position, tails) in fact_heads)
                or unit.is_command
                or is_continuation(unit.text)
                # What the clause is about is named elsewhere; its continuations name nothing new.
                or _points_elsewhere(unit.text)
            ):
                continue
            if position > 0 and (
                _goes_on_about_someone(unit, units[position - 1])
                or _goes_on_with_event(unit, units[position - 1])
            ):
                continue
            # "I have two kids, Maya and Leo": the names belong to the rule's facts before.
            if position - 1 in covered and (
                _NAMES_ONLY.match(unit.text) or AGED_NAME_LIST.match(unit.text.rstrip(".!"))
            ):
                continue
            # "…at the Bad Bunny concert, he's been my favorite artist forever": the rule's
            # fact of the pronoun's clause took who it stands for from this one (as the fact of
            # "Husky." took the pet's name from "Walked Nala.").
            if position + 1 in covered and (
                _PRONOUN_SUBJECT.match(units[position + 1].text)
                or PET_SAID.match(units[position + 1].text)
            ):
                continue
            # "I don't like musicals, for me they are very boring": a thing's pronoun right after
            # the rule's taste or limit says why, not a second fact.
            if position - 1 in kept_positions and _THING_SUBJECT.match(unit.text):
                continue
            # "I always grab the window seat, aisle seats drive me nuts": the other side of the
            # same choice, said of the thing the taste before it named.
            if position - 1 in kept_positions and _same_thing(unit.text, units[position - 1].text):
                continue
            if (
                _WORDS_SAID.match(unit.text)
                or _DATED_EVENT.search(unit.text)
                or _EMPHASIS_ONLY.match(unit.text)
            ):
                continue
            # "I ring my nan, Beatriz, over in Porto": where the person a rule's fact named
            # lives, not the user's background.
            if _PLACE_ONLY.match(unit.text) and any(
                earlier in covered and units[earlier].clause.sentence == unit.clause.sentence
                for earlier in (position - 1, position - 2)
            ):
                continue
            # "I'm retired, finally, after thirty years of teaching": a phrase that places the
            # rule's fact before it in time.
            if _places_the_fact_before(units, position, covered, tails):
                continue
            # "The spicy food, maybe I like it a little": a short topic the hedge beside it is
            # about.
            if _is_hedged_topic(units, position):
                continue
            # "since I am small boy", "when I was a kid": a time of life, not what the user is.
            if unit.clause.connector in ("since", "when") and _CHILDHOOD.match(unit.text):
                continue
            # "…Marley flooring, which is what dance studios use": said of the thing before,
            # unless it tells of the user's own ("which is a lot on top of my job").
            if (
                unit.clause.connector == "which"
                and _VERB_FIRST.match(unit.text)
                and not _FIRST_PERSON_WORD.search(unit.text)
            ):
                continue
            span = _with_continuations(units, position, tails, covered)
            if span is unit and _tells_no_state(unit.text):
                continue
            # "…with cardamom in it, buns, chai, whatever": examples of what was just said.
            if (
                position > 0
                and _EXAMPLES.search(span.text)
                and not _FIRST_PERSON_WORD.search(span.text)
            ):
                continue
            # "No caffeine till Friday. Blood test.": a bare note after a limit for a while is
            # what the limit is for.
            if (
                position > 0
                and TIME_BOUND in units[position - 1].markers
                and len(unit.text.split()) <= 3
                and not _FIRST_PERSON_WORD.search(unit.text)
                and not _HOLDS_NOW.search(unit.text)
            ):
                continue
            learned = self._learned_candidate(
                span,
                probabilities[position],
                fact_text,
                profile and span is unit and not _NO_PROFILE_NOTE.match(unit.text),
            )
            if learned is not None:
                kept.append(learned)
                fact_heads.add(position)
        return kept

    def _learned_candidate(
        self, unit: Unit, probabilities: np.ndarray, fact_text: str, profile_note: bool = False
    ) -> Candidate | None:
        # Durability is judged on "not none" as a whole: the head may hesitate between two
        # categories of a clause it is sure holds a fact ("I drive a Tesla").
        durable = 1.0 - float(probabilities[self.head.classes.index(NONE)])
        bar = self.thresholds.accept_bp
        if unit.clause.asked_to_keep:
            bar = self.thresholds.asked_to_keep_bp
        elif profile_note:
            bar = self.thresholds.profile_note_bp
        if durable * BASIS_POINTS_MAX < bar:
            return None
        category = max(
            (name for name in self.head.classes if name != NONE),
            key=lambda name: float(probabilities[self.head.classes.index(name)]),
        )
        # "my mother tongue is Tigrinya": a language the user speaks, no mother of theirs; "my
        # mother is a nurse": what someone of the user's is or likes tells of them, so of the
        # user's relationship (the dev split: 80 such turns of 86, the rest mother tongues).
        if _MOTHER_TONGUE.search(unit.text):
            category = "identity" if category == "relationship" else category
        elif category in ("identity", "preference") and _MY_ROLE.match(fact_body(unit.text)):
            category = "relationship"
        # A fear is a limit to plan around ("i'm like deathly afraid of heights"), as every
        # fear of the dev split is labelled, however the head weighs its words.
        if category in ("identity", "preference") and _A_FEAR.search(unit.text):
            category = "constraint"
        if category == "relationship" and (
            _about_someone_elses(unit.text) or _nobody_in_particular(unit.text)
        ):
            return None
        if _about_someone_unnamed(unit.text) or _says_nothing_to_keep(unit.text):
            return None
        if _OTHERS_SUBJECT.match(fact_body(unit.text)) and not (
            category == "relationship" and _MY_ROLE.search(unit.text)
        ):
            return None
        # "my friend was saying that if you're lactose intolerant…": what someone of the
        # user's says, with nothing of the user in it, is no taste or limit of the user's.
        if _SOMEONE_SAYS.match(fact_body(unit.text)) and (
            category != "relationship" or not _names_someone(unit.text)
        ):
            return None
        text = render_fact(unit.text, category)
        if not text:
            return None
        return Candidate(
            text=text,
            category=category,
            type=FactType.USER_FACT,
            confidence_bp=four_factor_confidence_bp(unit.text, fact_text),
            key=fact_key(category, text),
            critical_tokens=critical_tokens(text),
            evidence_span=unit.text,
            violations=tuple(sorted(unit.markers & LEARNED_MARKERS)),
        )


# Verbs a request to the assistant starts with ("set an alarm…", "convert this recipe…"): the
# clause asks for something done now, so it states nothing about the user.
_REQUEST_VERBS = frozenset(
    """add book call check convert draft explain find get give help list make order play put
recommend remind schedule send set show suggest tell text translate write directions""".split()
)


# "I totally forgot my mom's birthday yesterday", "we got back from Rome two days ago": what
# happened on a named past day is an event, whatever the head makes of its words.
_DAY_SAID = (
    rf"yesterday|last (?:night|week|weekend|{'|'.join(sorted(WEEKDAYS))})|"
    r"(?:this|yesterday) (?:morning|afternoon|evening)|earlier today|the other day"
)
_DATED_EVENT = re.compile(
    rf"\b(?:{_DAY_SAID}|(?:an?|one|two|three|four|five|few|\d+)\s+(?:hours?|days?|weeks?)\s+ago)"
    r"\s*[.!]*$|"
    # "Last week I was in hospital because of …": the day said first.
    rf"^(?:{_DAY_SAID})\b(?=.*\b(?:was|were|had|went|got|\w+ed)\b)",
    re.I,
)


_CHILDHOOD = re.compile(
    r"^(?:I|we)\s+(?:am|was|were|'m|are)\s+(?:a\s+|an\s+)?(?:\w+\s+)?"
    r"(?:boy|girl|kid|kids|child|children|baby|teen|teenager|toddler|small|little|young)\b",
    re.I,
)
_SOMEONE_SAYS = re.compile(
    rf"^(?:my|our)\s+(?:\w+\s+)??(?:{PERSON_ROLE_ALTERNATION})(?:\s+(?:from|at|in)\s+\w+)?\s+"
    r"(?:(?:was|is|keeps|kept)\s+(?:saying|telling|insisting|asking)|says|said|thinks|reckons|"
    r"told|tells|insists|claims)\b"
    r"(?!.*\b(?:I|I'm|I've|me|my)\b)",
    re.I,
)


_TIME_PREPOSITION = re.compile(r"^(?:after|before|during|until|till|since)\b", re.I)


def _places_the_fact_before(
    units: list[Unit], position: int, covered: set[int], tails: set[int]
) -> bool:
    """A phrase opening on a time preposition, with nothing of the user's in it, right after a
    rule's fact (fragments completing that fact between them)."""
    unit = units[position]
    if not _TIME_PREPOSITION.match(unit.text) or _FIRST_PERSON_WORD.search(unit.text):
        return False
    before = _completed_clause(position, tails)
    return before in covered and units[before].clause.sentence == unit.clause.sentence


def _is_hedged_topic(units: list[Unit], position: int) -> bool:
    """A clause of at most four words, none of them the user's, beside a hedged one of its
    sentence or right after it ("podcasts are fine. ish.")."""
    unit = units[position]
    if len(unit.text.split()) > 4 or _FIRST_PERSON_WORD.search(unit.text):
        return False
    beside = [
        other
        for index, other in enumerate(units)
        if index != position
        and (other.clause.sentence == unit.clause.sentence or index == position + 1)
    ]
    return any(HEDGED in other.markers for other in beside)


def _same_thing(clause: str, previous: str) -> bool:
    """Whether the clause opens on a thing the clause before named, by its head noun."""
    opening = re.findall(r"[a-z]{4,}", fact_body(clause).lower())[:3]
    named = {word.rstrip("s") for word in re.findall(r"[a-z]{4,}", previous.lower())}
    return any(word.rstrip("s") in named for word in opening)


_VERB_FIRST = re.compile(r"^(?:is|are|was|were|has|have|had|makes|made)\b", re.I)
_FIRST_PERSON_WORD = re.compile(r"\b(?:I|I'm|I've|my|me|mine|we|our|us)\b", re.I)

# "I said dairy free", "you wrote cashmere": words about what was said, no state of the user.
_PLACE_ONLY = re.compile(
    r"^(?:(?:over|back|out|up|down)\s+)?(?:in|at|from|near)\s+(?:[A-Z][\w'-]*\s*){1,3}[.!]*$"
)
# "Window seat. Every flight. Non-negotiable.": emphasis of the note before, no fact of its own.
_EMPHASIS_ONLY = re.compile(
    r"^(?:non-?negotiable|no exceptions?|always|every (?:single )?[\w-]+|without fail|"
    r"no matter what|period|full stop|end of story|no compromises?|for the record|btw|"
    r"by the way|fyi|just so you know|for reference|just saying)[.!]*$",
    re.I,
)
# "I said…", "you wrote…", "I just heard you say Hannah's birthday": words said, not a fact.
_WORDS_SAID = re.compile(
    r"^(?:I|you)\s+(?:just\s+)?(?:said|meant|mean|wrote|heard|typed|put)\b|"
    r"^I\s+(?:just\s+)?heard\s+you\s+(?:say|said)\b",
    re.I,
)


# A subject later in the clause: a run-on turn ("set an alarm for five I work early shifts")
# goes on to say something of someone.
_LATER_SUBJECT = re.compile(r"(?<!^)\b(?:I|I'm|I've|we|we're|he's|she's|shes|hes|my name)\b")


def _tells_no_state(clause: str) -> bool:
    """A request to the assistant or a subjectless one-off event, with nothing said after it."""
    body = fact_body(clause)
    words = re.findall(r"[\w']+", body.lower())
    # "please you write to me always in simple English" asks it for good.
    if not words or _LATER_SUBJECT.search(body) or _STANDING.search(body):
        return False
    # "Please you write for me a short message": the request's verb after its courtesy.
    verb = next((w for w in words if w not in _COURTESY), "")
    return (
        verb in _REQUEST_VERBS
        # "no alcohol in recipes" limits what is made instead.
        or (not _LIMITING.match(clause.strip()) and _names_a_requested_thing(words))
        or (
            _is_subjectless_event(next((w for w in words if w not in _EVENT_ADVERBS), ""))
            and not _HOLDS_NOW.search(body)
        )
        or _BACK_FROM.match(body) is not None
    )


# "back from Tromso", "just home from the hospital": a return, told without its subject, is
# a one-off event.
_BACK_FROM = re.compile(r"^(?:(?:just|finally)\s+)?(?:back|home)\s+(?:from|after)\b", re.I)


# "Crowded beaches are my personal hell", "got ADHD": a verb in the present, or a condition
# the user has got, tells what holds, whatever the first word looks like.
_HOLDS_NOW = re.compile(
    rf"\b(?:is|are|am)\b|^(?:\w+\s+)?got\s+(?:{MEDICAL_CONDITION_ALTERNATION})\b", re.I
)


_STANDING = re.compile(r"\b(?:always|never|every time|whenever|from now on|going forward)\b", re.I)
_COURTESY = frozenset("please pls kindly you".split())

# Words a phrase that limits something opens with ("no alcohol in recipes", "only halal").
_LIMIT_WORDS = "no|not|never|nothing|zero|only"
_LIMITING = re.compile(rf"^(?:{_LIMIT_WORDS})\b", re.I)


def _names_a_requested_thing(words: list[str]) -> bool:
    """ "recipe for dal", "shift schedule template": a short phrase headed by a thing made on
    request."""
    if len(words) > 5:
        return words[0] in _REQUESTED_THINGS
    return any(
        word in _REQUESTED_THINGS
        and (position in (0, len(words) - 1) or words[position + 1] == "for")
        for position, word in enumerate(words)
    )


# A terse request names what it wants made ("Recipe for dal.", "Shift schedule template.",
# "Packing list for Iceland."): the thing asked for, not a fact about the user.
_REQUESTED_THINGS = frozenset(
    """recipe recipes template schedule list checklist itinerary directions route draft summary
translation ideas suggestions tips options plan outline agenda email letter message reminder
resume playlist menu quote estimate""".split()
)


# Past forms that, leading a clause, as often tell a lasting state as an event ("born in
# Lagos", "married for ten years", "self-employed").
_STATE_LEADS = frozenset(
    """born raised married divorced separated widowed engaged diagnosed retired based trained
qualified certified settled located vaccinated self-employed unemployed""".split()
)
# Irregular past verbs that tell an event when they lead a clause ("got stung", "broke my arm").
_EVENT_PAST = frozenset(
    """got went came took broke fell forgot ran ate drove slept woke caught spent lost saw met
bought found won hit sent""".split()
)
# "just ran my first half marathon", "finally got the keys": adverbs before the verb.
_EVENT_ADVERBS = frozenset("just finally totally accidentally also then only".split())


def _is_subjectless_event(first_word: str) -> bool:
    """ "sprained my wrist", "got stung by a wasp", "forgot my pen at home": a clause that
    starts with a past verb and no subject tells what happened once, not what holds."""
    if first_word in _STATE_LEADS:
        return False
    return first_word in _EVENT_PAST or (first_word.endswith("ed") and len(first_word) > 4)


def _points_elsewhere(clause: str) -> bool:
    """ "I really can't stand them", "I live there": what the clause is about is named in
    another clause, so a fact of this clause alone would say nothing."""
    words = re.findall(r"[\w']+", clause.lower())
    if not any(_points(words, position) for position in range(1, len(words))):
        return False
    # "studio ghibli films are my comfort thing, I rewatch them": a clause that opens on what
    # it is about names it itself.
    return words[0] in _PRONOUN_LEADS


def _points(words: list[str], position: int) -> bool:
    """Whether the word points at something named elsewhere: "those" alone does ("I can't
    stand those"), "those" before a noun names it ("I love those korean dramas")."""
    word = words[position]
    if word not in _POINTERS:
        return False
    if word not in ("those", "these") or position + 1 == len(words):
        return True
    following = words[position + 1]
    return following in _NOT_A_NOUN_AFTER_POINTER or following in NOT_A_NAME


# Beside the function words and adverbs of NOT_A_NAME ("those are", "those every day").
_NOT_A_NOUN_AFTER_POINTER = frozenset("ones guys anymore".split())


# Words a clause opens with when its subject is a pronoun, comes later or is someone ("my
# coworker likes them"): then a pointer in it names nothing of its own.
_PRONOUN_LEADS = frozenset(
    """i i'm i've i'd i'll im ive we we're we've they they're he she he's she's it it's you
you're this that these those there and but so or just really honestly also still then always
usually often sometimes
because when if like well oh yeah um uh okay ok actually totally my our your his her their
the a an some""".split()
)


def _nobody_in_particular(clause: str) -> bool:
    """ "my coworker can't eat soy", "some guy at the gym is a stuntman": news about someone
    neither named nor one of a kind in the user's life (labelling rule 4), so no relationship
    fact. "my sister lives in Porto" and "my landlord is strict" name a particular person."""
    if _names_someone(clause):
        return False
    roles = [PERSON_ROLES.get(found.lower()) for found in _MY_ROLE.findall(clause)]
    return not any(role and role not in _ONE_OF_MANY for role in roles)


# "a friend of a friend is super allergic to peanuts", "some guy at work used to be a
# monk": what holds of someone unnamed, met in passing, is no fact of the user's.
# "a lady in my English class is from Brazil", "one man in my building": the person may be
# placed by a few words before the verb, or the clause may be only the person.
_SOMEONE_UNNAMED = re.compile(
    rf"^(?:a|an|some|this|one)\s+(?:[\w'-]+\s+){{0,4}}?(?P<person>{PERSON_ROLE_ALTERNATION}|guy|"
    r"man|woman|lady|person|people|kid|girl|boy|dude)\b(?:\s+[\w'-]+){0,5}?(?:\s+(?:is|was|are|"
    r"were|has|had|used to|does|did|can't|cannot|loves|hates|works|lives|got|gets|told|said|"
    r"says|just)\b|\W*$)",
    re.I,
)


# "you keep saying I'm in marketing", "people keep telling me to try sushi", "everyone just
# calls me Ify", "Both in Pune" (of two just named): the clause says what others do, think
# or are, not what holds of the user.
_OTHERS_SUBJECT = re.compile(
    r"^(?:you|you're|youre|you've|people|everyone|everybody|someone|somebody|nobody|no one|"
    r"both|neither)\b"
    r"(?!\s+who\b)",
    re.I,
)


def _about_someone_unnamed(clause: str) -> bool:
    """Whether the clause is about someone met in passing: a capitalised word elsewhere in it
    is as often a place or a language ("a lady in my English class is from Brazil") as a name,
    so only one right after the person, or a name given as one, names them."""
    body = fact_body(clause)
    found = _SOMEONE_UNNAMED.match(body)
    if not found:
        return False
    after = body[found.end("person") :].lstrip(" ,")
    return not (after[:1].isupper() or _NAME_GIVEN.search(body))


def _names_someone(clause: str) -> bool:
    """A capitalised name after the first word, a name introduced as one, or the one the user
    is married to or together with ("Tomas and I have been married twelve years")."""
    if _NAMED.search(clause) or _NAME_GIVEN.search(clause):
        return True
    couple = _COUPLE.match(clause)
    if couple is None:
        return False
    return (couple["first"] or couple["second"]).lower() not in _NOT_A_PARTNER


# "me and oksana we've been married since 2009", "Tomas and I are together ten years": the
# name beside the user's in a couple, in whatever case a transcript gives it.
_COUPLE = re.compile(
    r"^(?:me and (?P<second>[a-z]{2,})|(?P<first>[a-z]{2,}) and (?:I|me))\b.{0,40}?"
    r"\b(?:married|together|engaged|dating|partners)\b",
    re.I,
)
_NOT_A_PARTNER = NOT_A_NAME | frozenset("my him her them you he she they his".split())


_NAME_THEN_PRONOUN = re.compile(
    rf"^(?P<name>{TITLED_NAME})"
    r"(?:,?\s+(?:he|she|they)\b|[.!]?$)"
)
_NAMES_ONLY = re.compile(r"^[A-Z][\w'-]+(?:\s*(?:,|\band\b|&)\s*[A-Z][\w'-]+)+[.!]?$")
# A clause without a subject of its own goes on about whom the clause before it is about:
# "he's retired now, used to be a civil engineer" tells of the dad, not of the user.
_THIRD_PERSON_LEADS = frozenset("used was is has had works worked lives lived".split())
_SOMEONE_ELSE_SUBJECT = re.compile(
    rf"^(?:\w+\s+){{0,2}}?(?:my|our)\s+(?:\w+\s+)??(?:{PERSON_ROLE_ALTERNATION})\b", re.I
)


# The leads of _THIRD_PERSON_LEADS that "I" can take ("I used to", not "I is").
_PAST_LEADS = frozenset("used was had worked lived".split())
_USERS_OWN_CLAUSE = re.compile(r"^(?:\w+\s+){0,2}?(?:I|I'm|I've|Im)\b", re.I)


_A_FEAR = re.compile(rf"\b(?:{FEAR_ADJECTIVES})\s+of\b|\bphobi(?:a|c)\b|\bfear\s+of\b", re.I)
_MOTHER_TONGUE = re.compile(
    r"\b(?:mother|native|first|home)\s+(?:tongue|language)\b|\blanguage\s+mother\b", re.I
)


def _with_subjects_restored(units: list[Unit]) -> list[Unit]:
    """The units as the head reads them: a clause with no subject after one of the user's own
    in its sentence ("I'm a nurse, used to be a teacher") is read with the user as its subject
    ("I used to be a teacher"), and a second item added to what the user is or has ("I'm
    vegan, gluten intolerant too") with the clause's own lead ("I'm gluten intolerant too"),
    as the listener hears them."""
    restored = list(units)
    for position in range(1, len(units)):
        unit, previous = units[position], units[position - 1]
        words = unit.text.split()
        if not words or previous.clause.sentence != unit.clause.sentence:
            continue
        lead = ""
        if words[0].lower() in _PAST_LEADS and _USERS_OWN_CLAUSE.match(previous.text):
            lead = "I"
        elif _ADDS_AN_ITEM.search(unit.text) and not _SUBJECT_FIRST.match(unit.text):
            state = _STATE_LEAD.match(previous.text)
            lead = state.group(0) if state else ""
        if lead:
            clause = replace(unit.clause, text=f"{lead} {unit.text}")
            restored[position] = replace(unit, clause=clause)
    return restored


# "…, gluten intolerant too": a fragment adding a second item to the clause before.
_ADDS_AN_ITEM = re.compile(r"\b(?:too|as well|also)\W*$", re.I)
_STATE_LEAD = re.compile(r"^(?:I'm|I am|Im|I have|I've got)(?=\s)", re.I)
_SUBJECT_FIRST = re.compile(
    r"^(?:I|I'm|I've|Im|my|we|we're|our|he|she|they|it|it's|you|that|this|there)\b", re.I
)


def _goes_on_about_someone(unit: Unit, previous: Unit) -> bool:
    words = fact_body(unit.text).lower().split()
    if not words or words[0] not in _THIRD_PERSON_LEADS:
        return False
    if previous.clause.sentence != unit.clause.sentence:
        return False
    return is_continuation(previous.text) or bool(_SOMEONE_ELSE_SUBJECT.match(previous.text))


_PAST_TELLING = re.compile(
    rf"\b(?:\w{{3,}}ed|{'|'.join(sorted(_EVENT_PAST))}|was|were|had)\b", re.I
)


def _goes_on_with_event(unit: Unit, previous: Unit) -> bool:
    """ "i got stung by a wasp today and my whole hand swelled up": a past-tense clause joined
    by "and" to a one-off event goes on telling that event."""
    return (
        unit.clause.connector == "and"
        and previous.clause.sentence == unit.clause.sentence
        and TIME_BOUND in previous.markers
        and bool(_PAST_TELLING.search(unit.text))
    )


def _about_someone_elses(clause: str) -> bool:
    return bool(_SOMEONE_ELSES.match(clause)) and not _NAMED.search(clause)


def _says_nothing_to_keep(clause: str) -> bool:
    """A clause broken off, one that only points at "that … thing", a denied condition, one
    that only agrees, or a past opinion of something with nothing of the user's in it ("the
    actors were great", "Max was truly awesome")."""
    return (
        is_broken_off(clause)
        or names_only_a_vague_thing(clause)
        or denies_a_condition(clause)
        or only_agrees(clause)
        or bool(_THINKS_OF_ANOTHER.match(clause))
        or (
            bool(_PAST_OPINION.match(fact_body(clause)) or _OPINION_OF_A_THING.match(clause))
            and not _FIRST_PERSON_WORD.search(clause)
        )
    )


# "I don't think you can be allergic to a jumper", "I guess it's fine": what the user thinks
# of something else, no fact of theirs.
_THINKS_OF_ANOTHER = re.compile(
    r"^(?:(?:so|and|but|well)\s+)?I\s+(?:don't\s+|do\s+not\s+)?(?:think|guess|suppose|reckon|"
    r"believe|bet)\s+(?:that\s+)?(?:you|it|it's|that|this|there|they|he|she|people)\b",
    re.I,
)
# "Seattle is definitely a great city", "birds are amazing", "Barcelona sounds awesome",
# "Allergies can be tough": an opinion of a thing, said of no one (labelling rule 5: only what
# the user says of themselves is kept).
_OPINION_OF_A_THING = re.compile(
    r"^(?:[\w\"'.:-]+\s+){0,6}?[\w\"'.:-]+?(?:'s|\s+(?:is|are|sounds?|seems?|looks?|can be|must be))"
    r"\s+(?:(?:so|such|really|definitely|indeed|truly|just|pretty|super|always|totally|very|"
    r"quite)\s+)*(?:an?\s+)?(?:\w+\s+)?(?:amazing|awesome|great|the best|cool|fab|fun|lovely|"
    r"beautiful|captivating|inspiring|incredible|classic|special|wonderful|fantastic|brilliant|"
    r"gorgeous|stunning|interesting|exciting|therapeutic|rewarding|tough|hard|solid|good|"
    r"delicious|tasty|yummy|nice|perfect|epic|wild|crazy|cute|adorable)\b",
    re.I,
)


_PAST_OPINION = re.compile(
    r"^(?:(?:the|that|this|those|these)\s+)?[\w'-]+(?:\s+[\w'-]+)?\s+(?:was|were)\b", re.I
)


def four_factor_confidence_bp(clause: str, source: str) -> int:
    """Seed 002's confidence for a single explicit statement of the user's.

    Explicit mention: 0.30 when the fact is the user's words verbatim (the rendering only
    changes pronouns), else 0.20. Repetition: +0.10 when said twice in the turn, +0.20 three
    times. Consistency with known facts: +0.20; contradictions are settled later against the
    stored state (CurrentState supersession), not in a single turn. Type credibility: +0.30
    for an explicit USER_FACT.
    """
    body = fact_body(clause).lower()
    source_lower = source.lower()
    # A clause joined with its continuations ("i do still have asthma, keep that") is the
    # user's words piece by piece, whatever joined them in the turn ("so", "and").
    pieces = [piece for piece in body.split(", ") if piece]
    explicit = 3000 if pieces and all(piece in source_lower for piece in pieces) else 2000
    mentions = min((source_lower.count(piece) for piece in pieces), default=0)
    repetition = 2000 if mentions >= 3 else 1000 if mentions == 2 else 0
    return min(BASIS_POINTS_MAX, explicit + repetition + 2000 + 3000)


# A list that closes on "whatever" or "etc." gives examples, not things of their own.
_EXAMPLES = re.compile(
    r"(?:^|,\s*|\s)(?:whatever|etc|and so on|and stuff|you name it|and the like|the lot)\W*$",
    re.I,
)
_ALLERGY_KEY = re.compile(r"^constraint\.(?:allergy|intolerance)\.")
# What an allergy fact says before its allergen ("User is allergic to").
_ALLERGY_FRAME = re.compile(r"^(?P<frame>.*\b(?:to|with))\s+\S")


def _with_tails(
    candidate: Candidate, units: list[Unit], position: int, covered: set[int]
) -> tuple[list[Candidate], set[int]]:
    """ "PhD student, linguistics", "dual citizen, Canada and Japan": a rule's fact that ends
    where its clause ends takes the fragments that complete the clause (and the positions of
    those fragments, which then hold no fact of their own). An allergy's fragments that each
    name a thing are allergens, each a fact of its own as the rules give a list joined by
    "and" ("Allergies: penicillin, latex")."""
    following: list[int] = []
    if candidate.key == "identity.name":
        # "Me, I am Hiroshi, engineer of bridges": a name is whole; what follows is more news.
        return [candidate], set()
    aside: int | None = None
    for later in range(position + 1, len(units)):
        if later in covered or not _completes(units[later], units[later - 1]):
            break
        if _EMPHASIS_ONLY.match(units[later].text.strip(" ,")):
            # "Still vegetarian, for the record.": an aside, no part of the fact.
            aside = later
            break
        following.append(later)
    words = units[position].text.strip(" ,.!?;:").split()
    stated = candidate.text.rstrip(" .")
    if (
        (not following and aside is None)
        or not words
        or not stated.lower().endswith(words[-1].lower())
    ):
        return [candidate], set()
    asides = {aside} if aside is not None else set()
    if not following:
        return [candidate], asides
    pieces = [units[later].text.strip(" ,.!?;:") for later in following]
    frame = _ALLERGY_FRAME.match(stated) if _ALLERGY_KEY.match(candidate.key) else None
    if frame:
        # An allergy's list ends at the first remark ("the dogs, funny no?", "kiwi, properly
        # allergic, throat closes up"); the remark says nothing of the allergy.
        items = 0
        while items < len(pieces) and IS_AN_ITEM.match(pieces[items]):
            items += 1
        pieces, following = pieces[:items], following[:items]
        if not pieces:
            return [candidate], set()
    evidence = ", ".join([candidate.evidence_span, *pieces])
    if frame:
        family = candidate.key.rsplit(".", 1)[0]
        allergens = [
            replace(
                candidate,
                text=f"{frame['frame']} {piece}.",
                key=f"{family}.{slug(piece)}",
                evidence_span=evidence,
                critical_tokens=critical_tokens(piece),
            )
            for piece in pieces
        ]
        first = replace(
            candidate,
            text=f"{stated}.",
            evidence_span=evidence,
            critical_tokens=critical_tokens(stated),
        )
        return [first, *allergens], set(following)
    text = ", ".join([stated, *pieces]) + "."
    completed = replace(
        candidate, text=text, evidence_span=evidence, critical_tokens=critical_tokens(text)
    )
    return [completed], set(following) | asides


# "Muslim, halal only, no alcohol": a fragment that limits is a note of its own; so is one
# that adds a second item ("coeliac, lactose intolerant too").
_STANDS_ALONE = re.compile(
    rf"^\W*(?:{_LIMIT_WORDS}|always|without|none)\b|\b(?:only|too|as well|also)\W*$|"
    # "..., you wrote cashmere": a clause of someone else's, its verb said.
    r"^\W*(?:you|he|she|they)\s+(?:\w+ed|wrote|said|got|put|heard|thought|think|say|keep)\b",
    re.I,
)


def _completes(unit: Unit, previous: Unit) -> bool:
    """A fragment after a clause of its sentence with no connector of its own ("…, born and
    raised"); a capitalised one ("Accountant, Cork.") names a second item."""
    if unit.clause.connector or previous.clause.sentence != unit.clause.sentence:
        return False
    # "she was 94" says something of its own about whom the clause before named; "maybe it
    # matters" says why it was told.
    if (
        _STANDS_ALONE.search(unit.text)
        or is_continuation(unit.text)
        or RELEVANCE_ASIDE.search(unit.text)
    ):
        return False
    return is_fragment_tail(unit, previous)


_THING_SUBJECT = re.compile(
    r"^(?:and\s+|but\s+)?(?:for me,?\s+|honestly,?\s+)?(?:it|they|it's|they're)"
    r"(?:\s+(?:is|are|was|were|makes?|gives?|tastes?|smells?|feels?|just))?\b|"
    # "for me is very boring": a learner's "it" left unsaid.
    r"^(?:and\s+|but\s+)?for me,?\s+(?:is|are|was|were)\b",
    re.I,
)
_PRONOUN_SUBJECT = re.compile(
    r"^(?:and\s+)?(?:he|she|they|it)(?:'s|'re|'ve|\s+is|\s+are|\s+has|\s+have)\b", re.I
)


def _completed_clause(position: int, tails: set[int]) -> int:
    """The clause a fragment (and the fragments between them) completes."""
    before = position - 1
    while before in tails:
        before -= 1
    return before


def _with_continuations(
    units: list[Unit], position: int, tails: set[int], covered: set[int]
) -> Unit:
    """The clause joined with the clauses after it that go on about the same thing, up to one
    a rule has already made a fact of."""
    texts = [units[position].text]
    markers = set(units[position].markers)
    for offset, later in enumerate(units[position + 1 :], start=position + 1):
        if (
            later.clause.sentence != units[position].clause.sentence
            or not (is_continuation(later.text) or offset in tails)
            or offset in covered
        ):
            break
        if len(" ".join([*texts, later.text])) > 200:
            break
        texts.append(later.text)
        markers |= later.markers & {HYPOTHETICAL, SARCASM}
    if len(texts) == 1:
        return units[position]
    clause = replace(units[position].clause, text=", ".join(texts))
    return replace(units[position], clause=clause, markers=frozenset(markers))


def _unit_of(evidence: str, units: list[Unit]) -> int | None:
    evidence_lower = evidence.lower()
    for position, unit in enumerate(units):
        text = unit.text.lower()
        if evidence_lower and (evidence_lower in text or text in evidence_lower):
            return position
    return None


# Notes of a terse profile: three or more, each a few words, none a clause of its own
# ("Welder. Rotterdam. Diabetic.", "Accountant, Cork. Allergic to penicillin.").
_PROFILE_NOTES = 3
_PROFILE_NOTE_WORDS = 3
# A label and what it names ("Vet - Dr. Lindqvist", "Allergies: nuts"): one note, no profile.
_LABELLED = re.compile(r"\s[-—–]\s|:")
# A note that only says how, or denies: it goes with the note before ("Aisle seat. Always.").
_NO_PROFILE_NOTE = re.compile(
    r"^(?:not|no|always|never|ever|lifelong|forever|daily|severe|seriously|really)\b", re.I
)


def _is_note_list(units: Sequence[Unit]) -> bool:
    """Three or more short notes, none joined to the one before by a connector or said in
    the first person ("Teacher, Lisbon, two kids.")."""
    return _short_notes(units, lambda unit: not unit.clause.connector)


def _is_terse_profile(units: Sequence[Unit]) -> bool:
    return _short_notes(units, lambda unit: unit.text[:1].isupper())


def _short_notes(units: Sequence[Unit], each: Callable[[Unit], bool]) -> bool:
    """Three or more notes of a few words, none said in the first person, each as `each` asks."""
    return len(units) >= _PROFILE_NOTES and all(
        len(unit.text.split()) <= _PROFILE_NOTE_WORDS
        and each(unit)
        and not _FIRST_PERSON_WORD.search(unit.text)
        for unit in units
    )
