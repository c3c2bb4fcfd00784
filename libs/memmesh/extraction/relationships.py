"""Relationship facts: specific, persistent people in the user's life (labelling rule 4)."""

from __future__ import annotations

import re
from dataclasses import replace

from .context import RELATIONSHIP_MARKERS, ClauseContext, build, last_capitalized_name
from .lexicon import (
    DEMONYMS,
    DURABLE_ADJECTIVES,
    MEDICAL_CONDITION_ALTERNATION,
    MONTHS,
    NOT_A_NAME,
    PERSON_ROLE_ALTERNATION,
    PERSON_ROLES,
    ROLE_MODIFIERS,
    SINGULAR_ROLES,
    WEEKDAYS,
)
from .markers import PLAN, TIME_BOUND
from .model import Candidate, ExtractedFact
from .text import Clause, conjugate_3sg, slug, third_person

_MODIFIER = "|".join(ROLE_MODIFIERS)
_ROLE_PHRASE = rf"(?P<role>(?:(?:{_MODIFIER})\s+)?(?:{PERSON_ROLE_ALTERNATION}))"
# Names are letters of any script ("Zoë", "Åsa", "Müller"), apostrophes and hyphens.
_UPPER = r"[A-ZÀ-ÖØ-Þ]"
_LETTERS = r"(?:[^\W\d_]|['-])*"
_CAP_NAME = rf"(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?(?-i:{_UPPER}{_LETTERS}(?:\s+{_UPPER}{_LETTERS})?)"
_ANY_NAME = rf"(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?[^\W\d_]{_LETTERS}(?:\s+{_UPPER}{_LETTERS})?"

# Before a role and a name, any one word says which one ("my running buddy Sanna", "my violin
# teacher Ms. Okonkwo", "my newborn daughter amara").
_QUALIFIED_ROLE = rf"(?P<role>(?:[a-z]+\s+)?(?:{PERSON_ROLE_ALTERNATION}))"
_MY_ROLE_NAME = re.compile(rf"\b(?:my|our)\s+{_QUALIFIED_ROLE}\s+(?P<tail>.+)$", re.I)
_MY_ROLE_IS_NAME = re.compile(
    rf"\bmy\s+{_QUALIFIED_ROLE}(?:'s|\s+is)\s+(?:name\s+is\s+|named\s+|called\s+)?"
    rf"(?P<name>{_CAP_NAME})\s*$|\bmy\s+{_ROLE_PHRASE.replace('role', 'role2')}(?:'s|\s+is)?\s+"
    # "My husband name is Bogdan": a learner's possessive without its "'s".
    rf"(?:name\s+is|named|called)\s+(?P<name2>{_ANY_NAME})",
    re.I,
)
# "my dog is a border collie named juno": the kind said, then the name.
_MY_ROLE_IS_A_KIND_NAMED = re.compile(
    rf"\bmy\s+{_ROLE_PHRASE}\s+is\s+(?:an?\s+)?(?P<kind>(?:[\w-]+\s+){{0,3}}?)"
    rf"(?:named|called)\s+(?P<name>{_ANY_NAME})",
    re.I,
)
# "we adopted a greyhound called Biscuit", "We rescued a one-eyed tabby called Captain", "a
# little dachshund we named pretzel".
_A_ROLE_NAMED = re.compile(
    rf"\b(?:a|an|one)\s+(?:[\w-]+\s+){{0,2}}?{_ROLE_PHRASE}\s+(?:(?:we|I)\s+)?(?:named|called)\s+"
    rf"(?P<name>{_ANY_NAME})",
    re.I,
)
_PLURAL_ROLES = {
    "kids": "kid",
    "sons": "son",
    "daughters": "daughter",
    "children": "child",
    "sisters": "sister",
    "brothers": "brother",
    "siblings": "sibling",
    "cats": "cat",
    "dogs": "dog",
    "grandkids": "grandkid",
    "grandchildren": "grandchild",
    "parents": "parent",
}
_HAVE_PLURAL = re.compile(
    r"^(?:I|we)(?:'ve| have)?\s+(?:got\s+|have\s+)?(?P<count>two|three|four|five|\d)\s+"
    rf"(?P<role>{'|'.join(_PLURAL_ROLES)})(?:\s+(?:named|called)\s+(?P<names>.+))?$",
    re.I,
)
_FAMILY_COUNT = re.compile(
    r"^(?:I|we)(?:'ve| have)?\s+(?:got\s+|have\s+)?(?:now\s+|also\s+)?"
    r"(?P<count>a|an|one|two|three|four|five|six|\d)\s+(?P<role>kids?|sons?|daughters?|children|child|sisters?|brothers?|siblings?|twin|"
    r"twin (?:brother|sister)|grandkids?|grandchildren|stepkids?|stepsons?|stepdaughters?|dogs?|cats?)"
    r"(?:\s+only)?(?:\s+(?:and|plus)\s+(?:a|an|one|two|three|four|\d)\s+[\w-]+)*$",
    re.I,
)
_NAME_LIST = re.compile(
    r"^(?:named\s+|called\s+)?(?P<names>[A-Za-z][\w'-]*(?:\s*(?:,|and|&)\s*"
    r"[A-Za-z][\w'-]*)+)$",
    re.I,
)
# "I've got two kids, Mira's nine and Theo's five": the children named with their ages.
_AGE = (
    r"(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)(?:\s+years?\s+old)?"
)
_AGED_NAME = re.compile(rf"([A-Z][\w-]*)(?:'s|\s+is)\s+{_AGE}\b")
AGED_NAME_LIST = re.compile(
    rf"^(?P<names>[A-Z][\w-]*(?:'s|\s+is)\s+{_AGE}(?:\s*(?:,|and|&)\s*[A-Z][\w-]*(?:'s|\s+is)\s+"
    rf"{_AGE})+)$"
)
# The clause after "I have a son" that names him: "his name is Bilal", "she's called Ewa",
# "Ewa" alone.
_NAME_FOLLOWS = re.compile(
    rf"^(?:(?:and\s+)?(?:(?:his|her|their)\s+name(?:'s|\s+is|\s+was)|(?:he|she|they)(?:'s|\s+is|"
    rf"\s+are)\s+(?:called|named))\s+)?(?P<name>{_CAP_NAME})$",
    re.I,
)
_LOWER_NAME_IS_MY_ROLE = re.compile(
    rf"^(?P<name>[a-z][a-z'-]+?)(?:'s|\s+is|\s+has been|'s been)\s+"
    rf"(?:basically\s+|like\s+|pretty much\s+|also\s+)?my\s+{_ROLE_PHRASE}\b"
)
_NAME_IS_MY_ROLE = re.compile(
    rf"(?:^|\band\s+)(?P<name>{_CAP_NAME})(?:'s|\s+is|\s+has been|'s been|\s+has always been)\s+"
    rf"(?:basically\s+|like\s+|pretty much\s+|also\s+|kind of\s+)?my\s+{_ROLE_PHRASE}\b"
)
_PRONOUN_IS_MY_ROLE = re.compile(
    # Not "she's basically my second mom": said of someone named already, a figure of speech.
    rf"^(?:he|she|they)(?:'s|\s+is|\s+has been|'s been)\s+(?:also\s+)?my\s+"
    rf"{_ROLE_PHRASE}\b",
    re.I,
)
# "bought Ziggy a harness, he's a greyhound", "Walked Nala. Husky.", "He's a Maine Coon": the
# animal a pet named just before is, through a pronoun or as a bare word.
_PET_KINDS = "|".join(
    sorted((re.escape(w) for w, r in PERSON_ROLES.items() if r.startswith("pet")), key=len)[::-1]
)
PET_SAID = re.compile(
    r"^(?:(?:and|so|oh)\s+)?(?:(?:he|she)(?:'s|\s+is)\s+(?:a|an|our|my)\s+|(?:a|an|our|my)\s+)?"
    r"(?:(?:old|little|big|young|rescue|sweet|lazy|giant|tiny|[\w]+-year-old)\s+)?"
    rf"(?P<kind>{_PET_KINDS})(?:\s+(?:mix|cross))?(?:[.!]*$|\s+(?:and|but|so|who)\b)",
    re.I,
)
_PET_KIND_WORD = re.compile(rf"\b(?:{_PET_KINDS}|pet)\b", re.I)
# In a lowercase transcript, the pet is the word an errand with it names: "we took luna to
# the vet", "walked biscuit".
_PET_ERRAND = re.compile(
    r"\b(?:took|take|taking|walked|walk|walking|fed|feed|bought|brought|groomed|bathed|adopted)\s+"
    r"(?P<name>[a-z][a-z'-]{2,})\b"
)
# "uh juniper she's my border collie": a name, then the pronoun that says who it is.
_NAME_PRONOUN_IS_MY_ROLE = re.compile(
    # Not a place the person is at: "big steve at the gym he's my personal trainer".
    rf"(?:^|\s)(?<!\bthe\s)(?<!\ba\s)(?<!\bat\s)(?<!\bin\s)(?P<name>[^\W\d_][\w'-]*),?\s+(?:he|she)(?:'s|\s+is)\s+"
    rf"(?:basically\s+|also\s+)?my\s+{_QUALIFIED_ROLE}\b",
    re.I,
)
# "…for my mom's birthday, her name is Gloria", "my dad passed, his name was Alberto".
_GIVES_NAME = rf"(?P<pronoun>his|her)\s+name(?:'s|\s+is|\s+was)\s+(?P<name>{_ANY_NAME})\s*$"
_NAME_GIVEN = re.compile(rf"\b{_GIVES_NAME}", re.I)
_NAME_GIVEN_NEXT = re.compile(rf"^(?:(?:and|uh|um)\s+)*{_GIVES_NAME}", re.I)
_MY_ROLE_MENTION = re.compile(
    rf"(?:\bmy|^(?:I|we)(?:'ve| have)?\s+(?:got\s+|have\s+)?(?:now\s+|also\s+)?(?:a|an|one))\s+"
    rf"{_QUALIFIED_ROLE}(?:'s|s)?\b",
    re.I,
)
_FEMALE_ROLES = frozenset(
    "mother stepmother mother_in_law sister half_sister stepsister daughter stepdaughter "
    "grandmother great_grandmother granddaughter aunt niece goddaughter godmother".split()
)
_MALE_ROLES = frozenset(
    "father stepfather father_in_law brother half_brother stepbrother son stepson grandfather "
    "great_grandfather grandson uncle nephew godson godfather".split()
)
_SHE_ROLES = frozenset("wife girlfriend mum mom mama landlady fiancee fiancée".split())
_HE_ROLES = frozenset("husband boyfriend dad papa fiance fiancé".split())


def _pronoun_fits(role: str, female: bool | None) -> bool:
    """Whether a pronoun (female, male, or None for "they") can stand for the person of
    `role` ("her" not for "my dad", "he" not for "my wife")."""
    role = role.lower()
    canonical, head = _canonical_role(role), role.split()[-1]
    if female is None:
        return True
    if female:
        return not (canonical in _MALE_ROLES or head in _HE_ROLES)
    return not (canonical in _FEMALE_ROLES or head in _SHE_ROLES)


def _name_given_after(ctx: ClauseContext) -> list[Candidate]:
    """The name a pronoun gives, later in the clause or at the start of the next one, of the
    person of the user's the clause named last, if the pronoun fits them."""
    given = _NAME_GIVEN.search(ctx.text)
    before = ctx.text[: given.start()] if given else ctx.text
    # The clause that gave the name, when it was the next one ("my colleague, her name is Yuki").
    named_in = ctx.clause.index
    if not given:
        following = ctx.following()
        given = _NAME_GIVEN_NEXT.match(following.text) if following else None
        named_in += 1
    mentions = list(_MY_ROLE_MENTION.finditer(before))
    if not given or not mentions or _BEREAVEMENT.search(before):
        return []
    name = _clean_name(given.group("name"), strict=False)
    if not name:
        return []
    mention = mentions[-1]
    role = mention.group("role").lower()
    if not _pronoun_fits(role, given.group("pronoun").lower() == "her"):
        return []
    # What was said of them on the way ("my mom's a dentist, her name's Carol") or next ("her
    # name is Yuki, she is vegetarian").
    said = _predicate(before[mention.start("role") + len(mention.group("role")) :], ctx)
    return [_fact(ctx, role, name, said or _said_next(ctx, role, named_in))]


# "my husband's called ravi and he's a bus driver", "My husband Jun, he is chef in …": what
# the next clause of the sentence says of the person just named, through a pronoun.
_PRONOUN_SAYS = re.compile(
    r"^(?:(?:and|so|uh|um|like|but)\s+)*(?P<pronoun>he|she|they)(?=\s|'s)", re.I
)


def _fact_and_what_follows(ctx: ClauseContext, role: str, name: str) -> Candidate:
    """The person's fact with what a later clause says of them ("…, he's a chef")."""
    return _fact(ctx, role, name, _said_next(ctx, role))


def _said_next(ctx: ClauseContext, role: str, after: int | None = None) -> str | None:
    """The predicate a later clause gives the person of `role`, through a pronoun that fits
    them ("my son Luca, we made it without eggs, he is allergic to eggs") or with no subject
    right after the name ("my daughter Chloe, who's seven, has a peanut allergy"); a lasting
    state before a habit, None when someone else comes up first or nothing said holds."""
    position = (ctx.clause.index if after is None else after) + 1
    subjectless_allowed = True
    habit: str | None = None
    for following in ctx.clauses[position : position + _PRONOUN_REACH]:
        if following.sentence != ctx.clause.sentence and (
            following.sentence != ctx.clause.sentence + 1
            or ctx.clauses[following.index - 1].sentence == following.sentence
        ):
            break
        match = _PRONOUN_SAYS.match(following.text)
        rest = following.text
        if match:
            pronoun = match.group("pronoun").lower()
            if not _pronoun_fits(role, None if pronoun == "they" else pronoun == "she"):
                break
            rest = following.text[match.end() :]
            if pronoun == "they" and rest.lower().lstrip().startswith(("'s", "is ")):
                break
        elif _RELATIVE_ASIDE.match(following.text):
            continue
        elif not (subjectless_allowed and _SUBJECTLESS.match(following.text)):
            if _MY_ROLE_MENTION.search(following.text):
                # Someone else is the topic now.
                break
            subjectless_allowed = False
            continue
        subjectless_allowed = False
        lasting = _DURABLE_PREDICATE.match(rest)
        if lasting:
            return _lasting(rest, lasting)
        habit = habit or _habitual_predicate(rest)
    return habit


# How many clauses on a pronoun may still point back at the person just named.
_PRONOUN_REACH = 6
# "who's seven", "who lives nearby": an aside on the person, the subject still theirs.
_RELATIVE_ASIDE = re.compile(r"^who\b", re.I)
# "has a peanut allergy", "lives with us": the clause goes on about the person named before.
_SUBJECTLESS = re.compile(r"^(?:has|'s got|has got|is|works|lives|teaches)\b", re.I)


# One run-on clause of a transcript: "we took luna to the vet today shes our husky".
_PET_ERRAND_THEN_KIND = re.compile(
    rf"{_PET_ERRAND.pattern}[^,.;!?]*?\b(?:he|she)(?:'s|s|\s+is)\s+(?:a|an|our|my)\s+"
    rf"(?:(?:old|little|big|young|rescue)\s+)?(?P<kind>{_PET_KINDS})\b"
)


# "Gunnar next door has my spare key", "Greta upstairs": a neighbour called by where they live.
_NAME_NEXT_DOOR = re.compile(
    r"\b(?P<name>[A-Z][a-z]+)\s+(?:from\s+)?(?P<where>next door|upstairs|downstairs|"
    r"across the hall|across the road|across the street|down the hall)\b"
)
# "Call Grandpa Ezra", "Back from Nanna Beryl's 90th": a relative called by a kin title and a
# name is the user's own unless another person's is said ("her Uncle Bob").
_KIN_TITLED = re.compile(
    r"(?<!\bmy )(?<!\bour )(?<!\bhis )(?<!\bher )(?<!\btheir )(?<!\byour )(?<!'s )"
    r"\b(?P<title>Grandpa|Grandma|Granny|Grandad|Granddad|Grandmother|Grandfather|Gran|Nana|"
    r"Nanna|Nan|Auntie|Aunty|Aunt|Uncle)\s+(?P<name>[A-Z][a-z]+)\b"
)
_KIN_TITLES = {"aunty": "auntie"}


def _pet_said_after(ctx: ClauseContext) -> list[Candidate]:
    """A pet named in the clause before and said to be an animal in this one ("bought Ziggy a
    new harness, he's a greyhound"; "Walked Nala. Husky.")."""
    run_on = _PET_ERRAND_THEN_KIND.search(ctx.text) if ctx.text.islower() else None
    if run_on and (pet := _clean_name(run_on.group("name"), strict=True)):
        if pet.lower() not in NOT_A_NAME:
            return [_fact(ctx, run_on.group("kind"), pet)]
    said = PET_SAID.match(ctx.text)
    previous = ctx.previous()
    if said is None or not previous:
        return []
    before = previous[-1]
    # "my dog Pip, a border collie": the pet was named with what it is already.
    if before.sentence < ctx.clause.sentence - 1 or _PET_KIND_WORD.search(before.text):
        return []
    name = last_capitalized_name((before,)) or _word_capitalized_alone(before.text)
    if name is None and before.text.islower():
        errand = _PET_ERRAND.search(before.text)
        name = _clean_name(errand.group("name"), strict=True) if errand else None
    if not name or name.lower() in NOT_A_NAME or name.lower() in PERSON_ROLES:
        return []
    return [_fact(ctx, said.group("kind"), name)]


_NAME_OPENS = re.compile(rf"^(?P<name>{_CAP_NAME})\s+(?!is\b|was\b)[a-z]")


def _word_capitalized_alone(text: str) -> str | None:
    """ "Chairman Meow knocked my coffee over": a name that opens the clause."""
    found = _NAME_OPENS.match(text)
    return found.group("name") if found else None


def _named_anew(name: str, found: list[Candidate]) -> bool:
    """A name that is a name and that no fact of the clause has named yet."""
    return name.lower() not in NOT_A_NAME and not any(name in c.text for c in found)


def _name_alone_before(ctx: ClauseContext) -> str | None:
    """ "Ines, she's my goddaughter": the clause before is a name and nothing else."""
    previous = ctx.previous()
    if not previous or previous[-1].sentence != ctx.clause.sentence:
        return None
    words = previous[-1].text.split()
    if len(words) != 1:
        return None
    return _clean_name(words[0])


_MARRIED_TO = re.compile(
    rf"\bI(?:'m| am|'ve been| have been)\s+(?P<state>married|engaged)\s+to\s+"
    rf"(?P<name>{_ANY_NAME})",
    re.I,
)
# A lasting state said of someone: "a nurse", "allergic to nuts", "deaf", "dyslexic".
_LASTING_ADJECTIVE = "|".join(
    re.escape(a) for a in sorted(DURABLE_ADJECTIVES, key=len, reverse=True)
)
_CONDITION = MEDICAL_CONDITION_ALTERNATION
# Non-native speech often drops the third-person "s" ("my son Felix have autism").
_DURABLE_PREDICATE = re.compile(
    r"^\s*(?:'s|is|has|have|has got|have got|'s got|'s been|has been)\s+(?:(?:basically|also|always)\s+)?"
    r"(?P<pred>(?:a|an)\s+[\w\s-]+|allergic to [\w\s-]+|"
    # "she's super into horses": a standing passion of theirs.
    r"(?:(?:super|really|very|so|big|totally|massively|obsessively)\s+)?into\s+[\w\s-]+|"
    rf"(?:{_LASTING_ADJECTIVE})\b[\w\s-]*|"
    r"(?:(?:early|mild|severe|bad|type\s+(?:one|two|1|2|i|ii))\s+)?"
    rf"(?:{_CONDITION})\b[\w\s-]*)$",
    re.I,
)

# A standing activity of the person named: a job or a habit in the simple present.
_HABITUAL_PREDICATE = re.compile(
    r"^\s*,?\s*(?:(?:he|she|they)\s+)?(?P<pred>(?:(?:work|teach|run|own|coach|manage|drive|"
    r"stud(?:y|i)|volunteer|live)(?:e?s)?|does|(?:only\s+)?speaks?|ha(?:s|ve)(?!\s+(?:to|just|got)\b)|"
    r"(?:can't|cannot|can not)\s+(?:eat|have|drink|stand|do)|is(?!\s+(?:not|just|\w+ing)\b))"
    r"\s+[\w\s'-]{2,80})$",
    re.I,
)
_ONE_OFF_TIME = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|this (?:week|weekend|morning|evening)|next|last|"
    r"right now|at the moment|for now|again|birthday|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)\b",
    re.I,
)


# "my mom passed away last year", "Mum died in 2020": a loss in the family is a lasting fact
# of the user's life, whenever it happened (the date is not kept).
_BEREAVEMENT = re.compile(
    rf"^(?:(?:so|and|well|um|uh|sadly)\s+)*(?:(?:my|our)\s+{_ROLE_PHRASE}|"
    r"(?P<parent>mum|mom|dad|mother|father|grandma|grandpa|nan|nana|granny))"
    rf"(?:,?\s+(?P<name>{_CAP_NAME}),?)?"
    r"\s+(?:(?:sadly|just|recently)\s+)?(?P<loss>passed away|passed on|passed|died)\b",
    re.I,
)


def _bereavement(ctx: ClauseContext) -> list[Candidate]:
    match = _BEREAVEMENT.match(ctx.text)
    if not match:
        return []
    role = (match.group("role") or match.group("parent")).lower()
    canonical = PERSON_ROLES.get(role.split()[-1], slug(role))
    loss = match.group("loss").lower()
    # "Mum died in 2020. Her name was Ellen.": the name may follow.
    following = ctx.following()
    named = _NAME_FOLLOWS.match(following.text) if following else None
    given = _NAME_GIVEN.search(ctx.text)
    raw_name = (
        match.group("name")
        or (given.group("name") if given else None)
        or (named.group("name") if named else None)
    )
    name = _clean_name(raw_name, strict=False) if raw_name else None
    return [
        build(
            ctx,
            f"User's {role}, {name}, {loss}" if name else f"User's {role} {loss}",
            "relationship",
            f"relationship.{canonical}.bereavement",
            9000,
            RELATIONSHIP_MARKERS,
        )
    ]


def relationship_candidates(ctx: ClauseContext) -> list[Candidate]:
    """Relationship facts stated in the clause, wherever the clause sits in the turn."""
    found: list[Candidate] = _bereavement(ctx)
    if found:
        # The loss names the person too ("my dad Alberto passed away"): one fact, not two.
        return found
    text = ctx.text
    match: re.Match[str] | None
    # Each "my <role> <name>" of the clause: "my mum Rosa watches my son Tiago".
    starts = [m.start() for m in re.finditer(r"\b(?:my|our)\s", text, re.I)]
    for match in filter(None, (_MY_ROLE_NAME.match(text, start) for start in starts)):
        name, rest = _split_name(match.group("tail"))
        if name:
            role = match.group("role")
            said = (_predicate(rest, ctx) if rest.strip() else None) or _said_next(ctx, role)
            found.append(_fact(ctx, role, name, said))
    match = _MY_ROLE_IS_NAME.search(text)
    if match:
        role = match.group("role") or match.group("role2")
        name = _clean_name(match.group("name") or match.group("name2"), strict=False)
        if name:
            found.append(_fact_and_what_follows(ctx, role, name))
    match = _MY_ROLE_IS_A_KIND_NAMED.search(text)
    if match:
        name = _clean_name(match.group("name"), strict=False)
        kind = match.group("kind").strip().lower()
        if name:
            # The kind when it is one ("a border collie"), else the role ("my dog").
            role = kind if kind in PERSON_ROLES else match.group("role")
            found.append(_fact(ctx, role, name))
    if re.match(r"^(?:I|we)\b", text, re.I):
        for match in _A_ROLE_NAMED.finditer(text):
            name = _clean_name(match.group("name"), strict=False)
            if name:
                found.append(_fact(ctx, match.group("role"), name))
    for pattern in (_NAME_IS_MY_ROLE, _LOWER_NAME_IS_MY_ROLE):
        match = pattern.search(text)
        if match:
            name = _clean_name(match.group("name"), strict=False)
            if name:
                found.append(_fact_and_what_follows(ctx, match.group("role"), name))
    match = _PRONOUN_IS_MY_ROLE.search(text)
    if match:
        name = last_capitalized_name(ctx.previous()) or _name_alone_before(ctx)
        if name:
            found.append(_fact_and_what_follows(ctx, match.group("role"), name))
    match = _NAME_PRONOUN_IS_MY_ROLE.search(text)
    if match:
        name = _clean_name(match.group("name"))
        # "my aunt teresa she's basically my second mom": named with her role already.
        if name and _named_anew(name, found):
            found.append(_fact_and_what_follows(ctx, match.group("role"), name))
    found.extend(_pet_said_after(ctx))
    for near in _NAME_NEXT_DOOR.finditer(text):
        name = near.group("name")
        if _named_anew(name, found):
            found.append(_fact(ctx, "neighbour", f"{name} ({near.group('where').lower()})"))
    for titled in _KIN_TITLED.finditer(text):
        name = titled.group("name")
        if _named_anew(name, found):
            role = _KIN_TITLES.get(titled.group("title").lower(), titled.group("title").lower())
            found.append(_fact_and_what_follows(ctx, role, name))
    found.extend(_name_given_after(ctx))
    found.extend(_plural_named(ctx))
    found.extend(_appositive_name(ctx))
    match = _MARRIED_TO.search(text)
    if match:
        name = _clean_name(match.group("name"), strict=False)
        if name:
            found.append(
                build(
                    ctx,
                    f"User is {match.group('state').lower()} to {name}",
                    "relationship",
                    "relationship.spouse",
                    9000,
                    RELATIONSHIP_MARKERS,
                )
            )
    return found


# "Tamsin, my best mate from uni, …": where the person is from may close the role.
_ROLE_ONLY = re.compile(
    rf"^(?:(?:and|so|well|oh|um|uh)\s+)*(?:(?:there's|there is|that's|this is|it's)\s+)?"
    rf"my\s+{_ROLE_PHRASE}(?:\s+(?:from|at)\s+(?:the\s+)?[\w'-]+)?$",
    re.I,
)
# A day or a month closing the sentence is when, not who; "May" is a name as often.
_CALENDAR_WORDS = (WEEKDAYS | MONTHS) - {"may"}


def _goes_on(ctx: ClauseContext, clause: Clause) -> bool:
    """Whether another clause of the same sentence follows the clause."""
    later = ctx.clauses[clause.index + 1 : clause.index + 2]
    return bool(later) and later[0].sentence == clause.sentence


_ENDS_ON_ROLE = re.compile(rf"\b(?:my|our)\s+{_ROLE_PHRASE}$", re.I)
# The name beside it, alone or presented: "Lorraine", "that's Otis", "me and Waffles".
_NAME_ONLY = re.compile(
    rf"^(?:(?:and|so)\s+)?(?:(?i:that's|this is|it's|meet|(?:just\s+)?me and)\s+)?"
    rf"(?P<name>{_CAP_NAME})$"
)


def _appositive_name(ctx: ClauseContext) -> list[Candidate]:
    """ "my therapist, Dr. Lin, says…" or "Mia, my daughter, …": role and name split by commas.
    A clause that only ends on the role ("asking for my dad, Ferdinand, …") is named by the
    clause after it."""
    match = _ROLE_ONLY.match(ctx.text)
    ends_on_role = match is None
    match = match or _ENDS_ON_ROLE.search(ctx.text)
    if match is None:
        return []
    previous = ctx.clauses[ctx.clause.index - 1] if ctx.clause.index and not ends_on_role else None
    neighbours = [
        c
        for c in (ctx.following(), previous)
        if c is not None and c.sentence == ctx.clause.sentence
    ]
    for neighbour in neighbours:
        named = _NAME_ONLY.match(neighbour.text)
        # Set off on both sides ("my dad, Ferdinand, he's…"): "with my aunt, London." is where.
        if ends_on_role and not _goes_on(ctx, neighbour):
            continue
        if (
            named
            and named.group("name").split()[-1].lower() not in NOT_A_NAME
            and named.group("name").lower() not in _CALENDAR_WORDS
        ):
            role = match.group("role")
            # "My son, Dmitri, he's dyslexic": what the clause after the name says of him;
            # "Ingrid, my best mate, is a firefighter": what the clause after the role says.
            said = (
                _said_next(ctx, role, neighbour.index)
                if neighbour.index > ctx.clause.index
                else _said_next(ctx, role)
            )
            return [_fact(ctx, role, named.group("name"), said)]
    return []


# "my kids are Zainab and Idris", "our dogs are called Salt and Pepper".
_MY_PLURAL_ARE = re.compile(
    r"^(?:\w+\s+){0,2}?(?:my|our)\s+(?:(?:two|three|four|five|\d)\s+)?"
    rf"(?P<role>{'|'.join(_PLURAL_ROLES)})\s+(?:are|'re)\s+(?:called\s+|named\s+)?"
    r"(?P<names>[^,]+?)$",
    re.I,
)


_AGE_ALONE = re.compile(r"^(?:\(?\d{1,2}\)?|aged\s+\d{1,2})$", re.I)
_LISTED_NAME = re.compile(
    r"^(?:and\s+|&\s+)?(?P<name>[A-Z][\w'-]*)(?:\s*\(\d{1,2}\)|\s+\d{1,2})?"
    r"(?:\s+(?:and|&)\s+(?P<last>[A-Z][\w'-]*)(?:\s*\(\d{1,2}\))?)?$"
)


def _plural_named(ctx: ClauseContext) -> list[Candidate]:
    """ "I have two kids, Maya and Leo", "my kids are Zainab and Idris": one relationship
    fact per named person."""
    listed_as = _MY_PLURAL_ARE.match(ctx.text)
    if listed_as:
        names = [
            _clean_name(n.strip(), strict=False)
            for n in re.split(r"\s*(?:,|\band\b|&)\s*", listed_as.group("names"))
            if n.strip()
        ]
        # "Kids: Aarav (9), Diya (6).", "my sisters are Ana, Bea and Cleo": the commas split
        # the list into clauses of a name each (an age between them).
        for later in ctx.clauses[ctx.clause.index + 1 :]:
            if later.sentence != ctx.clause.sentence:
                break
            if _AGE_ALONE.match(later.text):
                continue
            named = _LISTED_NAME.match(later.text)
            if named is None:
                break
            names.append(_clean_name(named.group("name"), strict=False))
            if named.group("last"):
                names.append(_clean_name(named.group("last"), strict=False))
        if len(names) >= 2 and all(names):
            role = _PLURAL_ROLES[listed_as.group("role").lower()]
            return [_fact(ctx, role, name) for name in names if name]
    match = _HAVE_PLURAL.match(ctx.text)
    if not match:
        return _family_count(ctx)
    names_text = match.group("names")
    following = ctx.following()
    if not names_text and following and following.sentence == ctx.clause.sentence:
        listed = _NAME_LIST.match(following.text) or AGED_NAME_LIST.match(following.text)
        names_text = listed.group("names") if listed else None
        if listed and listed.re is AGED_NAME_LIST:
            # "Mira's nine and Theo's five": the names without their ages.
            names_text = ", ".join(_AGED_NAME.findall(following.text))
    if not names_text:
        return _family_count(ctx)
    role = _PLURAL_ROLES[match.group("role").lower()]
    names = [
        _clean_name(n.strip(), strict=False)
        for n in re.split(r"\s*(?:,|\band\b|&)\s*", names_text)
        if n.strip()
    ]
    return [_fact(ctx, role, name) for name in names if name]


def _family_count(ctx: ClauseContext) -> list[Candidate]:
    """ "I have three kids" / "I have a twin sister": family members without names; one
    person whose name the next clause gives ("I have a son, his name is Bilal") is named."""
    match = _FAMILY_COUNT.match(ctx.text)
    following = ctx.following()
    if match and following and match.group("count").lower() in ("a", "an", "one"):
        named = _NAME_FOLLOWS.match(following.text)
        # _clean_name already stops at a word that cannot be a name.
        name = _clean_name(named.group("name"), strict=False) if named else None
        if name:
            return [_fact(ctx, match.group("role").removesuffix("s"), name)]
    if not match or (
        following and following.sentence == ctx.clause.sentence and _NAME_LIST.match(following.text)
    ):
        return []
    described = re.sub(r"^(?:I|we)(?:'ve| have)?\s+(?:got\s+|have\s+)?", "", ctx.text, flags=re.I)
    role = match.group("role").lower()
    canonical = PERSON_ROLES.get(role.rstrip("s"), PERSON_ROLES.get(role, "child"))
    return [
        build(
            ctx,
            f"User has {described}",
            "relationship",
            f"relationship.{canonical}.count",
            8800,
            RELATIONSHIP_MARKERS,
        )
    ]


def _clean_name(raw: str, strict: bool = True) -> str | None:
    """A person name from the words after a role, or None when they are not a name."""
    return _split_name(raw, strict)[0]


def _split_name(raw: str, strict: bool = True) -> tuple[str | None, str]:
    """Split "Aiyana has a peanut allergy" into the name and the rest of the clause."""
    words = raw.split()
    name_words: list[str] = []
    titled = False
    used = 0
    for position, word in enumerate(words):
        bare = re.sub(r"'s$", "", word).strip(",.'")
        if not name_words and bare.lower() in _TITLES:
            name_words.append(_TITLES[bare.lower()] or bare.capitalize())
            titled = True
            used = position + 1
            continue
        if (
            not bare
            or bare.lower() in NOT_A_NAME
            or not bare.replace("-", "").isalpha()
            # "my husband is Italian, his name is Davide": a nationality, not a name.
            or (not name_words and bare.lower() in DEMONYMS)
        ):
            break
        if not bare[0].isupper():
            following = words[position + 1].lower() if position + 1 < len(words) else ""
            if (
                len(name_words) > int(titled)
                or not _plausible_lowercase_name(bare, strict)
                # "our cat rides on the roof", "my boss give me the promotion": a word a
                # preposition or an object pronoun follows is a verb.
                or following in _PREPOSITIONS
                or following in _OBJECT_PRONOUNS
            ):
                break
            bare = bare.capitalize()
        name_words.append(bare)
        used = position + 1
        if word.endswith("'s"):
            return " ".join(name_words), " ".join(["'s"] + words[used:])
    if len(name_words) <= int(titled):
        return None, raw
    return " ".join(name_words), " ".join(words[used:])


# Titles before a name, as written ("Dr" -> "Dr.") or as a transcript spells them out
# ("mister petrov" -> "Mister Petrov", kept as said so the fact stays grounded).
_TITLES = {
    "dr": "Dr.",
    "mr": "Mr.",
    "mrs": "Mrs.",
    "ms": "Ms.",
    "prof": "Prof.",
    "doctor": "",
    "mister": "",
    "missus": "",
    "professor": "",
    # Kin titles said before a name ("my mother in law nonna lucia", "Auntie Grace").
    "nonna": "",
    "nonno": "",
    "abuela": "",
    "abuelo": "",
    "oma": "",
    "opa": "",
    "auntie": "",
    "aunty": "",
    "granny": "",
}


# "our cat rides on the roof", "my husband work as a chef": a preposition follows a verb.
_PREPOSITIONS = frozenset(
    "on in at to into onto with around across over under from off up as for by about".split()
)


_OBJECT_PRONOUNS = frozenset("me us him them it".split())


def _plausible_lowercase_name(word: str, strict: bool) -> bool:
    # Transcripts may be all lowercase: accept a word that is not a function word and does not
    # look like an inflected verb or adverb.
    if len(word) < 2 or re.search(
        r"(?:ing|ed|ly|ment|tion|sion|ness|ship|ity|ance|ence|ism|ure|"
        r"ery|ies)$",
        word,
    ):
        return False
    # A plural or a verb's "-s" ("works", "cats"), not a short name's "ss" ("jess", "ross";
    # "across", "class" are words).
    if strict and word.endswith("ss"):
        return len(word) <= 4 and word not in _SS_WORDS
    return not (strict and re.search(r"[^aeiou]s$", word))


_SS_WORDS = frozenset(
    "less miss kiss boss pass mass loss fuss mess toss moss hiss bass lass".split()
)


def _predicate(rest: str, ctx: ClauseContext) -> str | None:
    if ctx.markers & {TIME_BOUND, PLAN}:
        return None
    # "my girlfriend priya she's a vet": said of the person through a pronoun, run on in speech.
    # "my partner sam hes deaf": a transcript's "he's" without its apostrophe.
    rest = re.sub(
        r"^(\s*(?:(?:and|so|uh|um|like|but)\s+)*)(he|she)s\b", r"\1\2's", rest, flags=re.I
    )
    pronoun = _PRONOUN_SAYS.match(rest.strip())
    if pronoun:
        rest = rest.strip()[pronoun.end() :]
    match = _DURABLE_PREDICATE.match(rest)
    if not match:
        return _habitual_predicate(rest)
    return _lasting(rest, match)


def _lasting(rest: str, match: re.Match[str]) -> str:
    """ "'s got early dementia" -> "has early dementia", "'s a chef" -> "is a chef"."""
    pred = match.group("pred").strip()
    said = rest.strip().lower()
    verb = "has" if re.match(r"^(?:has|have|'s got|has got|have got)\b(?!\s+been)", said) else "is"
    if re.match(r"^(?:'s|has) been\b", said):
        verb = "has been"
    return f"{verb} {third_person(pred)}"


def _habitual_predicate(rest: str) -> str | None:
    """What the person does for a living or as a standing habit ("works nights as an ER
    nurse", "teaches yoga", non-native "he is engineer for trains"), never a one-off."""
    match = _HABITUAL_PREDICATE.match(rest)
    if not match or _ONE_OFF_TIME.search(rest):
        return None
    pred = match.group("pred").strip(" ,.;")
    # "he work in the night" is said of him as "works".
    verb, _, rest_of_pred = pred.partition(" ")
    if verb.lower() in _BASE_FORMS:
        pred = f"{conjugate_3sg(verb)} {rest_of_pred}"
    return third_person(pred)


_BASE_FORMS = frozenset(
    "work teach run own coach manage drive study volunteer live speak have".split()
)


def _fact(
    ctx: ClauseContext, role_surface: str, name: str, predicate: str | None = None
) -> Candidate:
    role_surface = role_surface.lower()
    canonical = _canonical_role(role_surface)
    if canonical in SINGULAR_ROLES:
        text = f"User's {role_surface} is {name}"
        key = f"relationship.{canonical}"
    else:
        article = "an" if role_surface[0] in "aeiou" else "a"
        text = f"User has {article} {role_surface} named {name}"
        key = f"relationship.{canonical}.{slug(name)}"
    if predicate:
        text = f"{text}, who {predicate}"
    return build(ctx, text, "relationship", key, 9000, RELATIONSHIP_MARKERS)


def _canonical_role(surface: str) -> str:
    """The role a phrase names, by its longest known ending ("running buddy" -> friend,
    "old border collie" -> pet_dog); the phrase itself when none is known."""
    words = surface.split()
    for start in range(len(words)):
        known = PERSON_ROLES.get(" ".join(words[start:]))
        if known:
            return known
    return slug(surface)


# "two kids, Mila and Theo", "Grandpa to Noor and Sami": two people named together in a fact
# the rules did not write one per person (labelling rule 6: one fact per distinct item).
# Not after a word that makes them places ("between Lagos and London").
_NAMED_PAIR = re.compile(
    rf"(?<!\bin )(?<!\bbetween )(?<!\bfrom )(?<!\bat )(?<!\bnear )(?<!\bof )(?<!\bvia )"
    rf"\b(?P<first>(?-i:{_UPPER}{_LETTERS}))(?P<first_age>\s*\(\d+\))?\s+(?:and|&)\s+"
    rf"(?P<second>(?-i:{_UPPER}{_LETTERS}))(?P<second_age>\s*\(\d+\))?\b"
)


def one_fact_per_person(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """Each relationship fact that names two people together, as one fact for each."""
    result: list[ExtractedFact] = []
    for fact in facts:
        pair = _NAMED_PAIR.search(fact.text) if fact.category == "relationship" else None
        if pair is None:
            result.append(fact)
            continue
        names = (pair.group("first"), pair.group("second"))
        if any(name in NOT_A_NAME or name in ("I", "User") for name in names) or any(
            name in other.text for other in facts if other is not fact for name in names
        ):
            result.append(fact)
            continue
        for name, age in zip(names, ("first_age", "second_age"), strict=True):
            said = f"{name}{pair.group(age) or ''}"
            text = f"{fact.text[: pair.start()]}{said}{fact.text[pair.end() :]}"
            result.append(
                replace(
                    fact,
                    text=text,
                    key=f"{fact.key}.{slug(name)}",
                    critical_tokens=tuple(t for t in fact.critical_tokens if t not in names)
                    + (name,),
                )
            )
    return result
