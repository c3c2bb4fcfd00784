"""What a correction goes on to say of the word it meant.

"it's Grete, not Greta, she's my mother-in-law", "Mochi. Not Mocha. The cat.", "Not peanuts,
walnuts. That's the allergy.": after the correction the user says what the meant word is, by a
pronoun, a demonstrative or a bare noun phrase. Read alone, that clause names nobody; with the
meant word put back it is the fact the correction was about.
"""

from __future__ import annotations

import re

from .commands import speaks_to_the_assistant
from .lexicon import (
    MONTHS,
    NOT_A_NAME,
    PERSON_ROLE_ALTERNATION,
    PERSON_ROLES,
    UNIT_SYSTEMS,
    WEEKDAYS,
)
from .text import indefinite_article, split_clauses

# "she's my mother-in-law", "he's been my GP for ten years", "is my language", "That's the
# allergy", "The cat", "my wife", "Business partner".
_SAYS_WHAT_IT_IS = re.compile(
    r"(?:(?:and|so|oh)\s+)*"
    r"(?:(?:he|she|it|that|this|they)(?:'s|\s+is|\s+was|'s been|\s+has been|'re|\s+are)\s+"
    r"|is\s+)?"
    r"(?:(?P<det>my|our|the)\s+)?(?P<what>[\w-]+(?:\s+[\w-]+)?)"
    r"(?P<since>\s+(?:for|since)\s+[^,.;!]+)?"
    # The clause may run on: "she's my mother-in-law and believe me she will notice".
    r"(?=\s*$|\s*[,.;!]|\s+(?:and|but|so|because)\b)",
    re.I,
)
# "No, I said Zurich, not Munich, that's where I live."
_WHERE_I = re.compile(
    r"(?:and\s+)?(?:that's|that is|it's|it is|is)\s+where\s+I\s+"
    r"(?P<verb>live|work|grew up|was born|come from)(?:\s+now)?",
    re.I,
)
# The restated word before a new statement: "i meant sertraline i take sertraline every day".
_RESTATED_THEN = r"\bI\s+(?:said|meant)\s+{meant}\s*[,;-]?\s+(?=(?:I|I'm|I've|my|we)\b)"
_ALLERGY = frozenset({"allergy", "allergies", "allergen"})


def restate_meant(fact_text: str, meant: str) -> str:
    """The fact text with the clause that says what the meant word is rewritten to state it
    of the word ("my mother-in-law is Grete"), and a restatement of the word cut off the
    statement it runs into."""
    # "March 9th": a number or a date is no one and nothing of the user's.
    if not re.fullmatch(r"[^\W\d_][\w' .-]*", meant.strip()):
        return fact_text
    fact_text = re.sub(
        _RESTATED_THEN.format(meant=re.escape(meant)), f"I said {meant}. ", fact_text, flags=re.I
    )
    clauses = split_clauses(fact_text)
    said = [i for i, c in enumerate(clauses) if meant.lower() in c.text.lower()]
    # Before the word is said again the clauses are about something else ("sorry, my English").
    start = said[0] + 1 if said else 0
    for clause in clauses[start:]:
        spoken = clause.text.strip(" .!,;:-")
        where = _WHERE_I.fullmatch(spoken)
        found = where or _SAYS_WHAT_IT_IS.match(spoken)
        if where is not None:
            verb = where.group("verb")
            statement: str | None = (
                f"I {verb} {meant}" if verb == "come from" else f"I {verb} in {meant}"
            )
        else:
            statement = _statement_of(found, meant) if found else None
        if found and statement is not None:
            # A sentence of its own, so what the clause ran on into stays out of the fact.
            at = fact_text.find(found.group(0))
            end = at + len(found.group(0))
            stop = "" if fact_text[end : end + 1] in (".", "!", "?") else "."
            return f"{fact_text[:at]}{statement}{stop}{fact_text[end:]}"
        if not _ASIDE.fullmatch(spoken):
            # A statement in between is what a pronoun after it points at.
            break
    return fact_text


# A role put right and the one person the turn names for it: "Marco: cousin.", "Wife. Amara.",
# "my father-in-law. His name Kenji.", "Leyla is cousin.", "the cat is luna".
_PERSON_FOR_ROLE = (
    r"^\s*(?P<before>[A-Z][a-z]+)\s*[:=]\s*(?:my\s+)?{role}\b",
    r"\b{role}\s*[.,;-]+\s*(?:(?:his|her|their)\s+name(?:'s|\s+is)?\s+)?(?P<after>[A-Z][a-z]+)"
    r"\s*(?:[.,;!]|$)",
    r"\b{role}\b[^.!?]*[.!?]\s*(?:(?:his|her|their)\s+name(?:'s|\s+is)?\s+)(?P<given>[A-Z][a-z]+)",
    r"(?:^|[.,;!]\s*)(?P<subject>[A-Z][a-z]+)\s+is\s+(?:my\s+)?{role}\b",
)
_THE_ROLE_IS = (
    r"\bthe\s+(?P<role>{roles})\s+is\s+(?=(?:(?:doctor|dr\.?|mr\.?|mrs\.?|ms\.?)\s+)?{meant}\b)"
)


def name_the_role_meant(fact_text: str, meant: str) -> str:
    """A correction that puts a person's role right, said as the fact it is about ("Amara is
    my wife") when the turn names the one person it is about; "the cat is luna" said of the
    user's cat."""
    role = meant.strip().lower()
    if role in WEEKDAYS or role in MONTHS or not role.replace(" ", "").replace("-", "").isalpha():
        return fact_text  # "the dentist is Thursday": when, not who
    if role not in PERSON_ROLES:
        # "the cat is luna not lunar": the name put right, of a role said with "the".
        return re.sub(
            _THE_ROLE_IS.format(roles=PERSON_ROLE_ALTERNATION, meant=re.escape(meant)),
            r"my \g<role> is ",
            fact_text,
            count=1,
            flags=re.I,
        )
    named = {
        found.group(found.lastgroup or "")
        for pattern in _PERSON_FOR_ROLE
        for found in re.finditer(pattern.format(role=re.escape(meant)), fact_text, re.I)
        if found.lastgroup
    }
    names = {n for n in named if n[0].isupper() and not _is_no_name(n.lower())}
    if len(names) != 1:
        return fact_text
    return f"{fact_text.rstrip()} {names.pop()} is my {role}."


def _is_no_name(word: str) -> bool:
    return word in PERSON_ROLES or word in NOT_A_NAME or word in _PRONOUNS


_PRONOUNS = frozenset("he she they it this that who".split())

# What may stand between the word and what it is: a spelling ("G-R-E-T-E", "with one N").
_ASIDE = re.compile(r"(?:[A-Za-z](?:-[A-Za-z])+|with (?:a|an|one|two|double) \w+|\w+)", re.I)


def _statement_of(found: re.Match[str], meant: str) -> str | None:
    what = found.group("what").lower()
    words = what.split()
    # "Peanuts - I mean pecans. Allergic.": the bare word says what the meant one is too.
    if (words[-1] in _ALLERGY and found.group("det")) or what in ("allergic", *_ALLERGY):
        return f"I'm allergic to {meant}"
    if what in PERSON_ROLES or words[-1] in PERSON_ROLES:
        return f"my {what} is {meant}"
    # "is my language", "that's my hometown": a thing of the user's, pointed at by no pronoun
    # ("it is my job" points at the statement before it, not at the word).
    subject = found.group(0).lower().split()[0]
    if found.group("det") in ("my", "our") and len(words) == 1 and subject in ("is", "that's"):
        return f"{meant} is my {what}"
    return None


# What the assistant was heard to say or write of the user, before the misheard word, wherever
# in the clause: "you said I live in Bern", "earlier ... you wrote down that my son is called
# Eli", "it says I'm gluten intolerant", "I didn't say I react to cashews".
_REPORTED = re.compile(
    r"\b(?:you(?:'ve| have)?\s+(?:(?:keep|kept)\s+)?(?:said|saying|wrote|written|writing|typed|"
    r"heard|noted|read back|said back|put(?:\s+down)?)(?:\s+down)?"
    r"|it\s+says|I\s+(?:didn't|did not|never)\s+say)\s+(?:that\s+)?"
    r"(?=(?:I|I'm|I've|my|we|we're|our)\b)",
    re.I,
)


def corrected_report(normalized: str, fact_text: str, heard: str, meant: str) -> str:
    """The fact text with what the assistant had wrong said again with the meant word.

    "You said I live in Bern, but no, it is Basel": the correction leaves "Basel" alone, the
    fact is in the clause that reported the misheard word ("I live in Basel"). A clause of the
    fact text that still says the misheard word ("I have allergy to the shrimp, sorry, not
    shrimp, I mean the crab") says it of the meant one."""
    word = re.compile(rf"(?<![\w-]){re.escape(heard)}(?![\w-])", re.I)
    said_again: list[str] = []
    name_wrong = _NAME_WRONG.search(normalized)
    if name_wrong is not None and re.fullmatch(r"[A-Z][\w'-]+", meant):
        said_again.append(f"my {name_wrong['whose']}'s name is {meant}.")
        # The report and the name it puts right say nothing more once said of the person.
        fact_text = re.sub(
            rf"{re.escape(name_wrong.group(0))}(?:[,\s]+(?:again|it's|its|it is|is)?\s*"
            rf"{re.escape(meant)}\b)?",
            "",
            fact_text,
            count=1,
        )
    for clause in split_clauses(normalized):
        text = clause.text.strip(" .!,;:-")
        if not word.search(text):
            continue
        reported, written = _REPORTED.search(text), _WRITTEN_DOWN_AS.match(text)
        me = _ME_DOWN_AS.match(text)
        if written is not None and word.fullmatch(written.group("heard")):
            said_again.append(f"{written.group('whose')} is {meant}.")
        elif me is not None and word.fullmatch(me.group("heard")):
            how = me.group("how").lower()
            said = _ME_AS_SAID.get(how, f"I'm {indefinite_article(meant)}")
            said_again.append(f"{said} {meant}.")
        elif reported is not None and text not in fact_text:
            said_again.append(word.sub(meant, text[reported.end() :]).rstrip(" .!,;:-") + ".")
        else:
            continue
        # What the assistant had written down is no fact of the user's: said again instead.
        fact_text = fact_text.replace(text, "", 1)
    # "It's Seoul, not Seattle - where I grew up": the place put right is where the user
    # grew up, lives or comes from.
    place_of = _WHERE_I.search(fact_text)
    if place_of is not None and re.fullmatch(r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*", meant):
        said_again.append(f"I {_WHERE_SAID[place_of.group('verb').lower()]} {meant}.")
        fact_text = fact_text.replace(place_of.group(0), "", 1)
    # "my son is Yerlan, not daughter": the denial of the misheard word states nothing more
    # (of a unit it is part of the standing rule: "Kilos, not pounds. Always.").
    if heard.lower() not in UNIT_SYSTEMS:
        fact_text = re.sub(
            rf"[,;]?\s*\bnot\s+(?:(?:my|the|a|an)\s+)?{re.escape(heard)}(?![\w-])"
            r"(?=\s*(?:[,.;!?]|$))",
            "",
            fact_text,
            flags=re.I,
        )
    # Only what the user says of themselves is said again of the meant word: "You've got
    # Bartek down as my uncle" and "people assume I'm from Ireland" report the slip.
    for clause in split_clauses(fact_text):
        sentence = _sentence_around(fact_text, clause.text)
        if (
            word.search(clause.text)
            and _FIRST_PERSON_START.match(clause.text)
            and not speaks_to_the_assistant(sentence)
        ):
            fact_text = fact_text.replace(clause.text, word.sub(meant, clause.text), 1)
    return " ".join([*said_again, fact_text]) if said_again else fact_text


# "You write my husband name wrong, is Mehdi": whose name the meant one is.
_NAME_WRONG = re.compile(
    r"\byou(?:'ve| have)?\s+(?:write|wrote|written|got|spelled|spelt|spell|have|had|put|"
    r"keep writing|keep spelling|keep getting)\s+my\s+(?P<whose>[\w-]+)(?:'s)?\s+name\s+wrong\b",
    re.I,
)
# "you've got my cat down as Pickle": who the misheard name was written down for.
_REPORT_OPENERS = r"^(?:(?:but|and|so|okay|ok|wait|hmm|no|hang on|hold on|sorry|oh|earlier)[,\s]+)*"
_WRITTEN_DOWN_AS = re.compile(
    _REPORT_OPENERS + r"you(?:'ve| have)?\s+(?:got|put|written|saved|noted|listed)\s+"
    r"(?P<whose>my\s+[\w-]+(?:-in-law)?)(?:'s\s+name)?\s+(?:down\s+)?as\s+['\"]?"
    r"(?P<heard>[\w'-]+(?:\s+[\w'-]+)?)['\"]?$",
    re.I,
)
# "earlier you put me down as living in Austin": what the user was written down as.
_ME_DOWN_AS = re.compile(
    _REPORT_OPENERS
    + r"you(?:'ve| have)?\s+(?:got|put|have|had|written|saved|noted|listed)\s+me\s+(?:down\s+)?as\s+"
    r"(?P<how>living in|being from|from|(?:a|an)\b)\s*['\"]?(?P<heard>[\w'-]+(?:\s+[\w'-]+)?)['\"]?$",
    re.I,
)
_ME_AS_SAID = {"living in": "I live in", "being from": "I'm from", "from": "I'm from"}
_FIRST_PERSON_START = re.compile(r"^(?:I|I'm|I've|I'd|my|we|we're|our)\b", re.I)
_WHERE_I = re.compile(
    r"(?:^|(?<=[,.;-]\s)|(?<=\s-\s))(?:that's\s+|that is\s+|it's\s+)?where\s+I\s+"
    r"(?P<verb>grew up|live|was born|come from|am from|'m from)\b[^,.;]*",
    re.I,
)
_WHERE_SAID = {
    "grew up": "grew up in",
    "live": "live in",
    "was born": "was born in",
    "come from": "come from",
    "am from": "am from",
    "'m from": "am from",
}


def _sentence_around(text: str, part: str) -> str:
    """The sentence of `text` that holds `part` (its first occurrence)."""
    at = text.find(part)
    start = max(text.rfind(mark, 0, at) for mark in ".!?;") + 1
    ends = [i for i in (text.find(mark, at) for mark in ".!?;") if i >= 0]
    return text[start : min(ends, default=len(text))]


# "forget the thing about me liking sushi", "forget that I said I liked anchovies": the thing
# a taste to be forgotten was about.
_FORGOTTEN_TASTE = re.compile(
    r"\b(?:about\s+(?:me\s+)?(?:liking|loving|hating|disliking|eating|enjoying)|"
    r"(?:that|how)\s+I\s+(?:said\s+I\s+|told you I\s+)?(?:liked?|loved?|hated?|disliked?|enjoyed?))"
    r"\s+(?P<thing>[\w'-]+(?:\s+(?!I\b)[\w'-]+)?)(?=\s*(?:[,.;!?]|$)|\s+I\b)",
    re.I,
)
# "... I actually hate it now", "I can't stand them": the taste that replaces it.
_TASTE_OF_IT = re.compile(
    r"\bI\s+(?:(?:actually|really|now|just|honestly|kind of|kinda)\s+)*"
    r"(?:hate|love|like|adore|enjoy|dislike|can't stand|cannot stand|don't like|do not like|"
    r"don't eat|do not eat|eat)\s+(?P<pronoun>it|them)\b",
    re.I,
)


def name_the_forgotten_taste(fact_text: str, said: str) -> str:
    """ "forget the thing about me liking sushi, I actually hate it now": the new taste is
    said of the thing ("I actually hate sushi now"); read alone, "it" names nothing. `said`
    is the whole turn, whose command part the fact text may have lost."""
    forgotten = _FORGOTTEN_TASTE.search(said)
    if forgotten is None:
        return fact_text
    kept = fact_text.find(forgotten.group(0))
    offset = kept + len(forgotten.group(0)) if kept >= 0 else 0
    taste = _TASTE_OF_IT.search(fact_text, offset)
    if taste is None:
        return fact_text
    start, end = taste.span("pronoun")
    return fact_text[:start] + forgotten.group("thing") + fact_text[end:]


# "skip anything with soy, I react really badly to it", "a good swap for eggs in brownies? My
# son's allergic to them": the thing a request named, then a reaction to it by a pronoun.
_REQUESTED_THING = re.compile(
    r"\b(?:anything with|with|without|swap for|substitute for|instead of|no)\s+"
    r"(?P<thing>(?!(?:it|them|me|you|a|an|the|my|your|any|some)\b)[a-z][\w-]*)\b",
    re.I,
)
_REACTION_TO_IT = re.compile(
    r"\b(?:allergic to|intolerant to|react(?:s)?\s+(?:\w+\s+)?badly to)\s+(?P<pronoun>it|them)\b",
    re.I,
)


def name_what_a_reaction_points_at(fact_text: str) -> str:
    """The reaction said of the thing its pronoun points at, when a request named it before
    ("I react really badly to soy"); read alone, "it" names nothing."""
    reaction = _REACTION_TO_IT.search(fact_text)
    if reaction is None:
        return fact_text
    things = list(_REQUESTED_THING.finditer(fact_text, 0, reaction.start()))
    if not things:
        return fact_text
    start, end = reaction.span("pronoun")
    return fact_text[:start] + things[-1].group("thing") + fact_text[end:]


# "what should I cook for my dad? he's diabetic", "a gift for my wife, she loves pottery": a
# request names someone of the user's, and the next clause says what that person is through a
# pronoun. Read alone, "he's diabetic" is nobody's fact.
_ASKED_ABOUT = (
    r"for|to|with|about|from|visit(?:ing)?|call(?:ing)?|text(?:ing)?|meet(?:ing)?|"
    r"t(?:ook|ake|aking)|dr(?:op|opped|opping)|pick(?:ed|ing)?\s+up|br(?:ought|ing|inging)"
)
_SAID_OF_THEM = "is|has|loves|likes|hates|can't|cannot|doesn't|does not|gets|works|lives|speaks"
_PERSON_ASKED_ABOUT = re.compile(
    rf"\b(?:{_ASKED_ABOUT})\s+my\s+(?P<role>{PERSON_ROLE_ALTERNATION})\b"
    r"(?P<name>\s+(?-i:[A-Z][a-z]+(?:[-'][A-Za-z]+)*)\b)?(?P<between>[^.?!,;]*)"
    rf"[.?!,;]+\s*(?:(?:and|so|because|but)\s+)?(?P<pronoun>he|she)"
    rf"(?P<verb>'s|\s+(?:{_SAID_OF_THEM}|only))\b(?P<been>\s+(?:got|been)\b)?",
    re.I,
)
# The pronoun a role's person goes by, by how the role ends ("stepdad", "grandson", "mum");
# other roles ("partner", "boss", "mother-in-law") may go by either.
_PRONOUN_OF_ROLE = {
    **dict.fromkeys("dad father brother son husband boyfriend grandpa uncle nephew".split(), "he"),
    **dict.fromkeys(
        "mom mum mother sister daughter wife girlfriend grandma aunt niece".split(), "she"
    ),
}


# "my partner Sam and I just moved, … and Sam's a vegetarian": the name said again, alone, is
# the person the turn introduced with it.
_NAMED_WITH_ROLE = re.compile(
    rf"\b[Mm]y\s+(?P<role>{PERSON_ROLE_ALTERNATION})\s+(?P<name>[A-Z][a-z]+)\b"
)


def name_whom_a_name_points_at(fact_text: str) -> str:
    """A later clause opening on a name the turn gave with a role, said as of that person
    ("my partner Sam is a vegetarian")."""
    introduced = _NAMED_WITH_ROLE.search(fact_text)
    if introduced is None:
        return fact_text
    role, name = introduced.group("role"), introduced.group("name")
    again = re.compile(
        rf"(?<=[,.;!?])(?P<lead>\s+(?:and\s+|but\s+|so\s+|oh\s+and\s+)?){name}"
        rf"(?P<verb>'s|\s+(?:{_SAID_OF_THEM}))\b(?P<been>\s+(?:got|been)\b)?"
    )
    found = again.search(fact_text, introduced.end())
    if found is None:
        return fact_text
    said = f"{found.group('lead')}my {role} {name} {_verb_said(found)}"
    return f"{fact_text[: found.start()]}{said}{fact_text[found.end('verb') :]}"


def name_whom_a_pronoun_points_at(fact_text: str) -> str:
    """The clause after a request said of the person the request named, when its pronoun
    can stand for no one else ("my dad is diabetic")."""
    found = _PERSON_ASKED_ABOUT.search(fact_text)
    if found is None:
        return fact_text
    role, pronoun = found.group("role"), found.group("pronoun").lower()
    # Someone else named in between ("for my dad and Maria? she's vegan") may be meant.
    if re.search(r"\b(?:my|[A-Z][a-z]+)\b", found.group("between")):
        return fact_text
    goes_by = next(
        (p for end, p in _PRONOUN_OF_ROLE.items() if role.lower().endswith(end)), pronoun
    )
    if goes_by != pronoun:
        return fact_text
    role = f"{role}{found.group('name') or ''}"
    start = found.start("pronoun")
    return f"{fact_text[:start]}my {role} {_verb_said(found)}{fact_text[found.end('verb') :]}"


def _verb_said(found: re.Match[str]) -> str:
    """The verb after the subject put back, its "'s" spelled out ("has got", "is")."""
    verb = found.group("verb").strip()
    if verb == "'s":
        return "has" if found.group("been") else "is"
    return verb


# "we both hate olives", "we're both vegetarian": what holds of both holds of the user.
_WE_BOTH = re.compile(
    r"\b(?:we're\s+both|we\s+are\s+both|we\s+both\s+are|we've\s+both|we\s+both)\b", re.I
)
_I_FOR_WE_BOTH = {
    "we're both": "I'm",
    "we are both": "I am",
    "we both are": "I am",
    "we've both": "I've",
    "we both": "I",
}


def say_of_the_user_what_both_do(fact_text: str) -> str:
    """ "we both <do>" said as "I <do>": the user's own part of what both do or are."""
    return _WE_BOTH.sub(
        lambda found: _I_FOR_WE_BOTH[re.sub(r"\s+", " ", found.group(0).lower())], fact_text
    )
