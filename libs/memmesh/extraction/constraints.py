"""Constraint facts: allergies, conditions, diets, sobriety, accessibility, tools and devices."""

from __future__ import annotations

import re

from .consequences import consequence_candidates
from .context import SELF_STATEMENT_MARKERS, ClauseContext, build
from .lexicon import (
    ALLERGENS,
    BODY_PARTS,
    DEVICE_NOUNS,
    DURABLE_ADJECTIVES,
    FEAR_ADJECTIVES,
    LIMITATION_VERBS,
    MEDICAL_CONDITIONS,
    NOT_A_NAME,
    PERSON_ROLE_ALTERNATION,
    PLATFORMS,
    TRANSIENT_AILMENTS,
    UNIT_SYSTEMS,
    durable_adjective_alternation,
)
from .markers import (
    HEDGED,
    HYPOTHETICAL,
    QUESTION,
    SARCASM,
    THIRD_PARTY_OPINION,
    TIME_BOUND,
    VENTING,
)
from .model import Candidate
from .phrases import ADVERBS, I_AM, clean_object, is_generic_object
from .text import conjugate_3sg, slug, third_person

_ADJECTIVES = durable_adjective_alternation()
_DURABLE_ADJECTIVE = re.compile(
    # "I went vegetarian", "I've become diabetic": a change into a state that lasts.
    rf"^(?:I(?:'m| am| are|'ve been| have been| went|'ve gone| have gone| became|'ve become|"
    r" have become| turned)|we(?:'re| are))\s+"
    rf"{ADVERBS}(?:an?\s+)?"
    r"(?P<qualifier>(?:type (?:1|2|one|two|i|ii)|severely|mildly|partially|completely|"
    r"totally|fully|[a-z]+-[a-z]+)\s+)?"
    rf"(?P<adj>{_ADJECTIVES})\b(?P<rest>.*)$",
    re.I,
)
_YEARS_SOBER = re.compile(rf"^{I_AM}\s+(?P<dur>[\w-]+\s+(?:years?|months?))\s+sober\b", re.I)
_ALLERGIC = re.compile(
    rf"^{I_AM}\s+{ADVERBS}(?P<degree>(?:severely|deathly|mildly|very|super|highly)\s+)?"
    r"(?P<kind>allergic|intolerant)\s+to\s+(?P<obj>.+)$",
    re.I,
)
_HAVE_ALLERGY = re.compile(
    r"^I(?:'ve| have)?(?:\s+got|\s+have)?\s+(?:a|an)?\s*(?P<obj>(?:severe\s+|mild\s+|bad\s+)?"
    r"[\w\s-]+?)\s+(?P<noun>allergy|allergies|intolerance)$",
    re.I,
)
_ALLERGEN = (
    r"(?:tree nuts|dust mites|bee stings|"
    + "|".join(re.escape(a) for a in sorted(ALLERGENS, key=len, reverse=True))
    + ")"
)
# "…and I'm allergic", "I am allergic so I had to leave": what to, the sentence said before.
_ALLERGIC_BARE = re.compile(
    rf"^(?:(?:and|but|so|because|cause)\s+)?(?:(?:it\s+)?turns out\s+)?{I_AM}\s+{ADVERBS}"
    r"(?:(?:severely|deathly|seriously|really|very|super|highly)\s+)?allergic"
    r"(?:\s+to\s+(?:it|them|that|those))?(?:\s*,?\s+(?:so|and|which|but)\b.*)?$",
    re.I,
)
_RULED_OUT = re.compile(
    r"^(?:no|without|nothing with|not)\s+(?:any\s+)?"
    r"(?P<obj>(?!(?:that|this|it|them|those|these|one|really|now)\b)[a-z][\w-]*)$",
    re.I,
)
# "the allergist confirmed a sesame allergy", "also: penicillin allergy, on my chart".
_ALLERGY_NAMED = re.compile(
    rf"(?:^(?:(?:also|and|plus|oh)\W*\s+)*|\b(?:a|an|my)\s+)"
    rf"(?P<obj>{_ALLERGEN}(?:\s+(?:and|or)\s+{_ALLERGEN})?)\s+allergy\b",
    re.I,
)
_QUESTION_AFTER = re.compile(
    r"\s+(?=(?:what|how|which|who|can|could|should|would|do|does|is there|are there)\b)", re.I
)
_ALLERGEN_WORD = re.compile(rf"\b{_ALLERGEN}\b", re.I)
_SOMEONE_ELSE = re.compile(
    r"\b(?:he|she|they|his|her|their|him|them)\b|"
    rf"\b(?:my|our)\s+(?:\w+\s+)?(?:{PERSON_ROLE_ALTERNATION})\b|"
    r"(?-i:\b[A-Z][a-z]+)\s+(?:has|had|is|was|'s)\b",
    re.I,
)
# An allergy is the user's whatever day it was found out on: only a supposition, a hedge, a
# question, a joke or someone else's opinion keep it out.
_ALLERGY_MARKERS = frozenset({HYPOTHETICAL, HEDGED, QUESTION, SARCASM, THIRD_PARTY_OPINION})
_HAVE_CONDITION = re.compile(
    r"^I(?:'ve| have)?(?:\s+got|\s+have|\s+live with|\s+suffer from|\s+was diagnosed with|"
    r"'ve been diagnosed with|\s+deal with)\s+(?P<obj>.+)$",
    re.I,
)
_CONDITION_MEDS = re.compile(
    r"\bmy\s+(?P<cond>[\w' -]+?)\s+(?P<what>meds|medication|medicine|pills|inhaler|injections)\b",
    re.I,
)
_DOES_NOT_AGREE = re.compile(
    r"^(?P<obj>[\w\s-]+?)\s+(?:does not|doesn't|do not|don't)\s+agree\s+with\s+me\b|"
    r"^(?P<obj2>[\w\s-]+?)\s+(?:makes|make)\s+me\s+(?:sick|ill)\b",
    re.I,
)
# "I react really badly to soy": a body's reaction to a thing is a standing limit, said in the
# user's words.
_REACTS_BADLY = re.compile(
    r"^I\s+(?P<how>(?:(?:really|very|so|always|quite)\s+)*(?:react|reacts)\s+(?:(?:really|very|"
    r"so|quite)\s+)*(?:badly|terribly|horribly|poorly|strongly))\s+to\s+(?P<obj>[\w\s-]+?)$",
    re.I,
)
_CANNOT = re.compile(
    rf"^I\s+{ADVERBS}(?P<neg>can't|cannot|can not|don't|do not|never|no longer|only)\s+"
    rf"{ADVERBS}(?P<verb>eat|have|drink|tolerate|digest|handle|do|"
    rf"{'|'.join(sorted(LIMITATION_VERBS))})"
    r"(?:\s+(?P<obj>.+))?$",
    re.I,
)
# "we keep kosher at home": a household's religious diet is the user's own.
_KEEP_DIET = re.compile(
    r"^(?:I|(?P<household>we|my family|our family|our house|our household))\s+"
    r"(?:(?:always|still|strictly|all)\s+)?(?P<verb>keep|keeps|eat|eats|follow|follows|stick to|"
    r"sticks to|stay|stays)\s+(?P<obj>kosher|halal|"
    r"(?:a\s+)?(?:strict\s+)?[\w-]+\s+diet)\b",
    re.I,
)
_ON_DIET = re.compile(rf"^{I_AM}\s+{ADVERBS}on\s+(?P<obj>(?:a|an)\s+[\w\s-]+?\s+diet)\b", re.I)
_ON_PLATFORM = re.compile(
    rf"^{I_AM}\s+{ADVERBS}(?:on|an?)\s+(?:an?\s+)?(?P<obj>[\w ]+?)"
    r"(?:\s+(?:user|person|guy))?$",
    re.I,
)
_USE_TOOL = re.compile(
    r"^I\s+(?P<freq>only|always|exclusively|mainly|mostly)?\s*(?:use|rely on|depend on|live in)\s+"
    r"(?P<obj>.+?)(?P<scope>\s+for\s+(?:everything|all\s+.+|work|literally everything))?$",
    re.I,
)
_DO_EVERYTHING_IN = re.compile(
    r"^I\s+do\s+(?:everything|all my [\w ]+)\s+(?:in|on|with)\s+"
    r"(?P<obj>.+)$",
    re.I,
)
_MY_DEVICE = re.compile(
    rf"^my\s+(?P<device>{'|'.join(re.escape(d) for d in DEVICE_NOUNS)})\s+(?:is|'s)\s+"
    r"(?P<obj>(?:a|an)\s+.+)$",
    re.I,
)
_GAVE_UP = re.compile(
    r"^I\s+(?:gave up|quit|stopped|cut out)\s+(?P<obj>drinking|alcohol|booze|smoking|vaping|meat|"
    r"red meat|sugar|caffeine|coffee|dairy|gluten|carbs|eating meat)\b",
    re.I,
)
_ASSISTIVE = re.compile(
    r"^I(?:\s+use|\s+need|\s+rely on|\s+depend on|'m in|\s+am in)\s+(?:a|an)\s+"
    r"(?P<obj>wheelchair|hearing aid|cane|walker|screen reader|white cane|"
    r"guide dog|mobility scooter)\b",
    re.I,
)
# An aid the user has, said in passing wherever in the clause ("my hearing aids dont work
# great with phone calls"): not "my dad's hearing aid".
_MY_AID = re.compile(
    r"\bmy\s+(?:new\s+|old\s+|spare\s+)?(?P<obj>hearing\s+aids?|cpap(?:\s+machine)?|"
    r"insulin\s+pump|wheelchair|mobility\s+scooter|walking\s+stick|cochlear\s+implants?|"
    r"pacemaker|prosthetic\s+(?:leg|arm|limb|foot|hand))\b",
    re.I,
)
_MISHAP = re.compile(
    r"\b(?:died|broke|broken|stopped|ran out|run out|dropped|lost|forgot|left|fell|cut out|"
    r"battery|batteries|repair|fixed|fixing|charging|stolen|cracked|"
    # Getting it is news too: "I got my cochlear implant last year".
    r"got|fitted|put in)\b",
    re.I,
)
_HAVE_PLATFORM = re.compile(r"^I\s+(?:have|own|'ve got|got)\s+(?P<obj>(?:an?|my)\s+[\w ]+)$", re.I)
_OBSERVE = re.compile(
    r"^I\s+(?:observe|keep|fast (?:during|for|on)|don't work on|do not work on)\s+"
    r"(?P<obj>(?:the\s+)?(?:Shabbat|Sabbath|Ramadan|Lent|Yom Kippur|Sundays|the Sabbath|"
    r"Saturdays))\b(?P<rest>.*)$",
    re.I,
)
_DOING_DIET = re.compile(
    rf"^{I_AM}\s+{ADVERBS}(?:doing|on)\s+(?P<obj>keto|paleo|whole30|"
    r"intermittent fasting|low-carb|low carb|atkins)\b",
    re.I,
)

# "I'm afraid of flying", "I have a real phobia of needles": a fear the assistant plans around.
# Not "I'm afraid I can't" (politeness) nor a worry about one thing of the user's own ("scared
# of my boss", "afraid of missing the bus"): an object that is a person of theirs, a pronoun or
# an errand-like gerund is left to the learned head.
_FEAR = re.compile(
    rf"^(?:(?:{I_AM}|I(?:'ve| have)(?:\s+always)?\s+been)\s+{ADVERBS}"
    r"(?P<degree>(?:deathly|absolutely|terribly|a bit|a little)\s+)?"
    rf"(?P<kind>{FEAR_ADJECTIVES})\s+of|"
    r"I(?:'ve| have)(?:\s+got)?\s+(?:an?\s+|the\s+)?(?:(?:big|huge|real|serious|bad|"
    r"terrible|massive|genuine|crippling)\s+)?(?P<noun>fear|phobia)\s+of)\s+(?P<obj>.+)$",
    re.I,
)
# "thunderstorms terrify me", "big dogs really scare me": the same fear, its object first.
_FEARED_BY = re.compile(
    r"^(?P<obj>[\w'’ -]+?)\s+(?:really\s+|absolutely\s+|just\s+|totally\s+|still\s+)?"
    r"(?P<verb>terrif|scare|frighten|petrif)(?:y|ies|s|ens|en)?\s+me"
    r"(?:\s+(?:to death|senseless|silly))?$",
    re.I,
)
_FEARED = {
    "terrif": "terrified",
    "scare": "scared",
    "frighten": "frightened",
    "petrif": "petrified",
}
# Objects that are a person of the user's, a pronoun or a clause: a worry, not a fear of a thing.
_NOT_A_FEARED_THING = frozenset(
    "my our your what how that whether if it this he she they you which everything".split()
)
_NEGATION_WORDS = frozenset(
    "don't dont doesn't doesnt didn't didnt never not won't wont no nothing nobody".split()
)
# Gerunds that name a fear rather than a worry about one errand.
_FEARED_ACTIVITIES = frozenset(
    "flying driving swimming diving sailing heights needles speaking singing dancing".split()
)
# "I drive a Tesla": the car the user has; "I drive a van for a living" is their job.
_DRIVE = re.compile(rf"^I\s+{ADVERBS}drive\s+(?P<obj>(?:an?|the)\s+.+)$", re.I)
_VEHICLE_WORDS = frozenset(
    """car truck van pickup minivan suv hatchback sedan estate wagon convertible coupe motorbike
motorcycle scooter moped ev hybrid electric diesel manual stick automatic tesla prius toyota
honda ford subaru bmw volvo audi mercedes benz vw volkswagen kia hyundai nissan mazda jeep chevy
chevrolet mini fiat skoda renault peugeot citroen lexus porsche dodge ram gmc rivian polestar
civic corolla camry leaf golf polo outback forester cr-v rav4 f-150 mustang beetle""".split()
)
_JOB_DRIVING = re.compile(r"\b(?:for a living|for work|for (?:uber|lyft)|for my job)\b", re.I)


# "remind me to take my metformin at eight every night": a medicine taken on a schedule is a
# standing fact about the user's health, whatever the request around it.
_MEDICINE = (
    r"insulin|meds|medication|medicine|pills?|tablets?|vitamins|inhaler|injection|"
    r"[a-z]+(?:in|ol|ine|ide|pril|statin|zole|pam|lam|one|ate|oxin|mab|xan)"
)
# "remind me to take my metformin every night", "remind me every day at nine to take my pill
# for epilepsy", "a reminder for my thyroid pill, I take it every night": the medicine may come
# with a word or two before it, and the schedule before or after it.
_MEDICINE_REMINDER = re.compile(
    r"\bremind(?:er)?\s+(?:me\s+)?(?P<before>(?:[\w']+\s+){0,5}?)(?:to\s+take|for|about)\s+my\s+"
    rf"(?P<medicine>(?:[\w-]+\s+){{0,2}}?(?:{_MEDICINE}))\b(?P<rest>[^,.;!?]*)",
    re.I,
)
_A_KIND_OF_MEDICINE = re.compile(
    r"^(?:meds|medication|medicine|pills?|tablets?|vitamins|inhaler|injection)$", re.I
)
_TAKES_IT = re.compile(r"^(?:and\s+)?I\s+(?:take|use|need|have)\s+(?:it|them|one)\b", re.I)
# What the medicine is for ("my pill for epilepsy"), said right after it.
_FOR_WHAT = re.compile(r"^\s+(?P<what>for\s+(?:my\s+)?[\w'-]+(?:\s+[\w'-]+)?)", re.I)
_SCHEDULE = re.compile(
    r"\b(?P<when>every\s+(?:day|night|morning|evening|week)|each\s+(?:day|night|morning|evening)|"
    r"daily|nightly|twice\s+a\s+day)\b",
    re.I,
)


# "I'm on warfarin, blood thinners, for life": a medicine the user is on. Names by their
# families' endings, and the common ones people say by name or by kind.
_DRUG_NAME = (
    r"(?:[a-z]+(?:arin|formin|ithium|prazole|statin|pril|olol|azepam|azolam|oxetine|traline|"
    r"ipine|sartan|cillin|mycin|cycline|isone|olone|thyroxine|xetine|afaxine)|insulin|lithium)"
)
_MEDICINE_NAME = (
    rf"(?:{_DRUG_NAME}|"
    r"methadone|adderall|ritalin|prozac|zoloft|xanax|lexapro|wellbutrin|ozempic|mounjaro|"
    r"blood thinners|antidepressants|beta blockers|statins|steroids|immunosuppressants|"
    r"anticoagulants|chemo|hrt|the pill)"
)
_SPECIFIC_MEDICINE = re.compile(rf"\b{_DRUG_NAME}\b", re.I)
_ON_MEDICINE = re.compile(
    rf"^{I_AM}\s+{ADVERBS}(?:on|taking)\s+(?P<medicine>{_MEDICINE_NAME})\b"
    r"(?:\s*,\s*(?P<kind>blood thinners|antidepressants|beta blockers|statins|steroids))?",
    re.I,
)


def _on_medicine(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _ON_MEDICINE.match(text)
    if not match:
        return []
    medicine = match.group("medicine").lower()
    said = f"{medicine}, {match.group('kind').lower()}" if match.group("kind") else medicine
    # "I'm on blood thinners like warfarin", "on antidepressants long term uh sertraline": the
    # kind first, then its name.
    named = _SPECIFIC_MEDICINE.search(text, match.end())
    if named and named.group(0).lower() not in said:
        said = f"{said}, {named.group(0).lower()}"
    # A medical constraint, so a limit said with it folds into it ("…, so I avoid raw fish").
    return [_constraint(ctx, f"User is on {said}", f"constraint.medical.{slug(medicine)}")]


def _medicine_reminder(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _MEDICINE_REMINDER.search(text)
    if not match:
        return []
    when = _SCHEDULE.search(match.group("rest")) or _SCHEDULE.search(match.group("before"))
    for_what = _FOR_WHAT.match(match.group("rest"))
    # "…remind me at nine to take my thyroid pill, I take it every night (for my thyroid)."
    following = None if when else ctx.following()
    if following is not None and _TAKES_IT.match(following.text):
        when = _SCHEDULE.search(following.text)
        if when and not for_what:
            for_what = _FOR_WHAT.match(following.text[when.end() :])
    if not when:
        return []
    medicine = match.group("medicine").lower()
    said = f"{medicine} {third_person(for_what.group('what'))}" if for_what else medicine
    # A drug by its name is said bare ("metformin"); a kind of thing with "their" ("their pill").
    if " " in medicine or for_what or _A_KIND_OF_MEDICINE.match(medicine):
        said = f"their {said}"
    # Asked as a question ("can you remind me…?"), the schedule is still told as it is.
    return [
        build(
            ctx,
            f"User takes {said} {when.group('when').lower()}",
            "constraint",
            f"constraint.medication.{slug(medicine)}",
            8800,
            SELF_STATEMENT_MARKERS - {QUESTION},
        )
    ]


def constraint_candidates(ctx: ClauseContext) -> list[Candidate]:
    """Constraint facts stated by the user in the clause."""
    text = ctx.text
    found: list[Candidate] = []
    for rule in (
        _sober_years,
        _gave_up,
        _observance,
        _allergy,
        _durable_adjective,
        _condition,
        _intolerance,
        _diet,
        _limitation,
        _devices,
        _fear,
        _recurring_reaction,
        _car,
        _tools,
        consequence_candidates,
        _condition_in_passing,
        _on_medicine,
        _medicine_reminder,
    ):
        found = rule(ctx, text)
        if found:
            break
    return found + _condition_meds(ctx, text, found)


def _constraint(ctx: ClauseContext, text: str, key: str, confidence_bp: int = 9200) -> Candidate:
    return build(ctx, text, "constraint", key, confidence_bp, SELF_STATEMENT_MARKERS)


def _sober_years(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _YEARS_SOBER.match(text)
    if not match:
        return []
    return [_constraint(ctx, f"User is {match.group('dur')} sober", "constraint.sobriety", 9500)]


def _observance(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _OBSERVE.match(text)
    if match:
        verb = " ".join(
            text.split()[
                1 : len(text.split())
                - len(match.group("obj").split())
                - len(match.group("rest").split())
            ]
        )
        return [
            _constraint(
                ctx,
                f"User {_third(verb.split()[0])} "
                f"{' '.join(verb.split()[1:]) + ' ' if len(verb.split()) > 1 else ''}"
                f"{match.group('obj')}{match.group('rest')}",
                "constraint.religious_observance",
                9200,
            )
        ]
    match = _DOING_DIET.match(text)
    if match:
        return [_constraint(ctx, f"User is on {match.group('obj')}", "constraint.diet", 9000)]
    return []


def _gave_up(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _GAVE_UP.match(text)
    if not match:
        return []
    obj = match.group("obj").lower()
    key = {
        "drinking": "constraint.sobriety",
        "alcohol": "constraint.sobriety",
        "booze": "constraint.sobriety",
        "smoking": "constraint.smoking",
        "vaping": "constraint.smoking",
    }.get(obj, f"constraint.diet.{slug(obj)}")
    verb = text.split()[1].lower()
    verb = "gave up" if verb == "gave" else ("cut out" if verb == "cut" else verb)
    return [_constraint(ctx, f"User {verb} {obj}", key, 9000)]


def _allergy(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _ALLERGIC.match(text)
    if match:
        # "since im allergic to like penicillin what else do they give…": the object ends
        # where a question starts.
        obj = clean_object(_QUESTION_AFTER.split(match.group("obj"))[0])
        obj = re.sub(r"^(?:like|um|uh)\s+", "", obj, flags=re.I)
        degree = match.group("degree") or ""
        kind = match.group("kind").lower()
        key = "constraint.allergy" if kind == "allergic" else "constraint.intolerance"
        return [
            _constraint(
                ctx, f"User is {degree}{kind} to {third_person(item)}", f"{key}.{slug(item)}", 9500
            )
            for item in _listed(obj)
        ]
    found = _allergy_said_apart(ctx, text)
    if found:
        return found
    match = _HAVE_ALLERGY.match(text)
    if match and not re.search(r"\b(?:my|his|her|their)\b", match.group("obj"), re.I):
        obj = clean_object(match.group("obj"))
        noun = match.group("noun").lower()
        article = "" if noun.endswith("ies") else ("an " if obj[:1].lower() in "aeiou" else "a ")
        subject = re.sub(r"^(?:severe|mild|bad)\s+", "", obj, flags=re.I)
        key = "constraint.allergy" if noun.startswith("allerg") else "constraint.intolerance"
        return [_constraint(ctx, f"User has {article}{obj} {noun}", f"{key}.{slug(subject)}", 9500)]
    return []


_LIST_BREAK = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", re.I)


def _listed(obj: str) -> list[str]:
    """ "penicillin, latex and bee stings": each allergen a fact of its own (one can be
    forgotten or corrected alone); a longer phrase stays whole."""
    items = [item for item in _LIST_BREAK.split(obj) if item]
    if len(items) > 1 and all(IS_AN_ITEM.match(item) for item in items):
        return items
    return [obj]


# One to three words naming a thing, none of them a clause's ("sesame and everything had it")
# nor one that adds to what was said ("latex too") or remarks on it ("funny no", "big
# difference", "properly allergic", "you wrote cashmere").
IS_AN_ITEM = re.compile(
    r"^(?!.*\b(?:it|I|me|my|they|them|he|she|we|you|your|had|has|have|is|was|are|were|do|does|"
    r"did|everything|anything|something|nothing|too|also|only|no|yes|not|funny|difference|time|"
    r"wrote|said|allergic|allergy|closes|lol|haha|ha|right|though|huh|eh|okay|ok)\b)"
    r"[\w'-]+(?:\s+[\w'-]+){0,2}$",
    re.I,
)


def _allergy_said_apart(ctx: ClauseContext, text: str) -> list[Candidate]:
    """An allergy whose allergen the sentence named before ("the menu was shellfish and I'm
    allergic"), or named as a noun in passing ("they confirmed a sesame allergy")."""
    if _ALLERGIC_BARE.match(text):
        earlier = [c.text for c in ctx.previous() if c.sentence == ctx.clause.sentence]
        # The first named: "sesame is in everything now, tahini, bread… and I'm allergic".
        for clause in earlier:
            # "Pasta recipe. No garlic, I'm allergic.": what was just ruled out is the allergen.
            ruled_out = _RULED_OUT.match(clause)
            named = _ALLERGEN_WORD.findall(clause) or (
                [ruled_out.group("obj")] if ruled_out else []
            )
            if named:
                obj = named[0].lower()
                return [
                    build(
                        ctx,
                        f"User is allergic to {obj}",
                        "constraint",
                        f"constraint.allergy.{slug(obj)}",
                        9200,
                        _ALLERGY_MARKERS,
                    )
                ]
        return []
    match = _ALLERGY_NAMED.search(text)
    if not match or _SOMEONE_ELSE.search(text[: match.start("obj")]):
        return []
    obj = match.group("obj").lower()
    article = "an" if obj[0] in "aeiou" else "a"
    return [
        build(
            ctx,
            f"User has {article} {obj} allergy",
            "constraint",
            f"constraint.allergy.{slug(obj)}",
            9500,
            _ALLERGY_MARKERS,
        )
    ]


def _condition_names(left_out: frozenset[str] = frozenset()) -> str:
    """The medical conditions as a regex alternation, longest first; short names only where no
    common word reads the same ("add", "ms" do)."""
    return "|".join(
        re.escape(c.removeprefix("a "))
        for c in sorted(MEDICAL_CONDITIONS, key=len, reverse=True)
        if (len(c) > 3 or c in {"ibs", "ocd"}) and c not in left_out
    )


_CONDITION_NOUN = (
    rf"(?:{_condition_names()}"
    + r"|pacemaker|hearing aids?|cochlear implant|insulin pump|colostomy bag|wheelchair|"
    rf"(?:bad|dodgy|weak|replaced|new)\s+(?:{'|'.join(sorted(BODY_PARTS))}))"
)
_CONDITION_ADJECTIVE = durable_adjective_alternation("constraint")
# Conditions everyone has a level of ("my blood pressure") or that come and go ("my migraine",
# "my anxiety before the exam"): named as the user's, they say nothing lasting by themselves.
_EVERYONE_HAS = frozenset(
    {"blood pressure", "cholesterol", "thyroid", "anxiety", "migraine", "depression", "cancer"}
)
_OWN_CONDITION_NOUN = rf"(?:{_condition_names(_EVERYONE_HAS)})"
# A lasting condition the user names on the way to something else: "not bad for someone with
# asthma", "with my pacemaker they said I'd need a note", "being lactose intolerant at a
# pizza party is the worst", "it has to be low FODMAP because of my IBS".
_CONDITION_IN_PASSING = re.compile(
    rf"\b(?:for\s+(?:someone|somebody|a\s+(?:guy|girl|woman|man|person))\s+with\s+"
    rf"(?P<had>{_CONDITION_NOUN})|(?:with|of|due\s+to|thanks\s+to|for|given)\s+my\s+"
    rf"(?P<mine>{_CONDITION_NOUN})|"
    rf"(?:being|as\s+an?)\s+(?P<adj>{_CONDITION_ADJECTIVE})|"
    # "the anaesthetic was different because of my heart condition", "my sciatica flared on
    # the flight": a condition called the user's own is theirs, whoever else the turn is about.
    rf"\bmy\s+(?P<own>{_OWN_CONDITION_NOUN}))\b",
    re.I,
)


_CONDITION_AS_SUBJECT = re.compile(
    rf"^(?:(?:and|but|so|also)\s+)?my\s+{_OWN_CONDITION_NOUN}\s*(?:'s|is|has been|gets)\b",
    re.I,
)


def _condition_in_passing(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _CONDITION_IN_PASSING.search(text)
    if not match:
        return []
    own = match.group("own")
    # "my asthma is very bad since childhood": the clause is about the condition, and what it
    # says of it is for the rules and the heads that read the whole clause.
    if own and _CONDITION_AS_SUBJECT.match(text):
        return []
    said_mine = bool(match.group("mine") or own)
    if not said_mine and _SOMEONE_ELSE.search(text[: match.start()]):
        return []
    adjective = match.group("adj")
    if adjective:
        key = DURABLE_ADJECTIVES[adjective.lower()][1]
        return [build(ctx, f"User is {adjective}", "constraint", key, 9000, _ALLERGY_MARKERS)]
    condition = match.group("had") or match.group("mine") or own
    lower = condition.lower()
    countable = lower.endswith(("condition", "disability", "murmur"))
    article = "" if (lower in MEDICAL_CONDITIONS and not countable) or lower.endswith("s") else "a "
    return [
        build(
            ctx,
            f"User has {article}{condition}",
            "constraint",
            f"constraint.medical.{slug(condition)}",
            9000,
            _ALLERGY_MARKERS,
        )
    ]


def _durable_adjective(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _DURABLE_ADJECTIVE.match(text)
    if not match:
        return []
    adjective = match.group("adj")
    category, key = DURABLE_ADJECTIVES[adjective.lower()]
    if category != "constraint":
        return []
    rest = match.group("rest").strip()
    qualifier = (match.group("qualifier") or "").strip()
    kept_adverb = re.search(
        r"\b(strictly|completely|fully|totally)\s+" + re.escape(adjective), text, re.I
    )
    phrase = " ".join(
        p for p in (kept_adverb.group(1) if kept_adverb else "", qualifier, adjective) if p
    )
    detail = ""
    # "deaf in one ear", not "diabetic in my twenties" (when it began).
    if re.match(r"^(?:in|to)\s+(?:one|my|both)\b", rest, re.I) and not re.match(
        r"^in\s+my\s+(?:teens|\w+ties|childhood|youth|\d0s)\b", rest, re.I
    ):
        detail = f" {third_person(clean_object(rest))}"
    appendix = _appositive_detail(ctx)
    return [_constraint(ctx, f"User is {phrase}{detail}{appendix}", key, 9300)]


def _appositive_detail(ctx: ClauseContext) -> str:
    # "I'm colorblind, red-green": a hyphenated or short qualifier naming the kind.
    following = ctx.following()
    if (
        following
        and following.sentence == ctx.clause.sentence
        and not following.connector
        and re.fullmatch(r"[\w]+-[\w]+|type (?:1|2|one|two)", following.text, re.I)
    ):
        return f" ({following.text})"
    return ""


def _condition(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _HAVE_CONDITION.match(text)
    if not match:
        return []
    obj = clean_object(match.group("obj"))
    # "the diabetes type two and also the high blood pressure": each condition of a
    # coordination is a fact of its own, when every part of it names one.
    parts = [p for p in _COORDINATED.split(obj) if p.strip()]
    if len(parts) > 1:
        named = [(part, _condition_named(part)) for part in parts]
        if all(subject for _, subject in named):
            return [
                _constraint(
                    ctx,
                    f"User has {third_person(part.strip())}",
                    f"constraint.medical.{slug(subject)}",
                    9300,
                )
                for part, subject in named
                if subject
            ]
    subject = _condition_named(obj)
    if not subject:
        return []
    return [
        _constraint(
            ctx, f"User has {third_person(obj)}", f"constraint.medical.{slug(subject)}", 9300
        )
    ]


# "asthma and also a bad knee", "asthma, eczema and hay fever": the joints of a coordination.
_COORDINATED = re.compile(
    r"\s*,\s*(?:and\s+|plus\s+)?(?:also\s+)?|\s+(?:and|plus)\s+(?:also\s+)?", re.I
)


def _condition_named(obj: str) -> str:
    """The medical condition (or the bad body part) a phrase names, or ""."""
    lowered = obj.lower()
    words = lowered.split()
    if not words or any(a in lowered for a in TRANSIENT_AILMENTS):
        return ""
    condition = next(
        (
            c
            for c in sorted(MEDICAL_CONDITIONS, key=len, reverse=True)
            if re.search(rf"\b{re.escape(c)}\b", lowered)
        ),
        None,
    )
    if condition:
        return condition.removeprefix("a ")
    body = (
        len(words) >= 2
        and words[-1] in BODY_PARTS
        and re.search(
            r"\b(?:bad|bum|weak|chronic|torn|busted|dodgy|injured|artificial|replaced)\b", lowered
        )
    )
    return words[-1] if body else ""


def _condition_meds(ctx: ClauseContext, text: str, found: list[Candidate]) -> list[Candidate]:
    if found:
        return []
    match = _CONDITION_MEDS.search(text)
    if not match:
        return []
    condition = match.group("cond").lower().strip()
    if not any(re.search(rf"\b{re.escape(c)}\b", condition) for c in MEDICAL_CONDITIONS):
        return []
    return [
        _constraint(
            ctx,
            f"User takes {condition} {match.group('what').lower()}",
            f"constraint.medical.{slug(condition)}",
            9000,
        )
    ]


def _intolerance(ctx: ClauseContext, text: str) -> list[Candidate]:
    reaction = _REACTS_BADLY.match(text)
    if reaction and not is_generic_object(obj := clean_object(reaction.group("obj")), frozenset()):
        how = reaction.group("how").replace("react ", "reacts ", 1)
        return [
            _constraint(ctx, f"User {how} to {obj.lower()}", f"constraint.diet.{slug(obj)}", 9000)
        ]
    match = _DOES_NOT_AGREE.match(text)
    if not match:
        return []
    obj = clean_object(match.group("obj") or match.group("obj2"))
    if is_generic_object(obj, frozenset()):
        return []
    return [
        _constraint(
            ctx, f"User does not tolerate {obj.lower()}", f"constraint.diet.{slug(obj)}", 9000
        )
    ]


def _diet(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _KEEP_DIET.match(text) or _ON_DIET.match(text)
    if not match:
        return []
    obj = clean_object(match.group("obj"))
    if match.re is _KEEP_DIET and match.group("household") and obj.lower() not in RELIGIOUS_DIETS:
        return []
    verb = re.match(r"^(?:I'm|I am)", text, re.I)
    if verb:
        rendered = f"User is on {obj}"
    else:
        rendered = f"User {_verb3(match.group('verb'))} {obj}"
    key = "constraint.diet.religious" if obj.lower() in RELIGIOUS_DIETS else "constraint.diet"
    return [_constraint(ctx, rendered, key, 9300)]


RELIGIOUS_DIETS = frozenset({"kosher", "halal"})


def _verb3(said_verb: str) -> str:
    verb = said_verb.split()[0].lower().removesuffix("s")
    return {
        "keep": "keeps",
        "eat": "eats",
        "follow": "follows",
        "stick": "sticks to",
        "stay": "stays",
    }.get(verb, verb)


# "Pork I cannot eat", "Shellfish I can't eat": the thing said first, as many speakers put it;
# read as "I cannot eat pork" (not a dislike: a word of not being able is a limit).
_THING_FIRST = re.compile(
    r"^(?P<obj>[\w'-]+(?:\s+[\w'-]+){0,2}?)\s+I\s+(?P<said>(?:can't|cannot|can not|don't|do not|"
    r"never)\s+(?:eat|drink))$",
    re.I,
)


def _said_thing_last(text: str) -> str:
    """ "Pork I cannot eat" -> "I cannot eat pork"; any other clause as it is."""
    found = _THING_FIRST.match(text)
    if found is None or any(word.lower() in NOT_A_NAME for word in found["obj"].split()):
        return text
    words = found["obj"].split()
    # A capital that only opens the sentence is no name's ("Red wine", not "Red Bull").
    if not any(w[:1].isupper() and w[1:].islower() for w in words[1:]):
        words[0] = words[0].lower()
    return f"I {found['said']} {' '.join(words)}"


# "my knees can't handle stairs anymore", "my stomach can't take spicy food": what a part of
# the user's body cannot do is the user's limit.
_BODY_CANNOT = re.compile(
    r"^(?:(?:and|so|but|honestly|also)\s+)?my\s+(?:(?:left|right|bad|old|dodgy|weak)\s+)?"
    rf"(?P<part>{'|'.join(sorted(BODY_PARTS | {'stomach', 'gut', 'body', 'skin', 'legs', 'joints'}))})\s+"
    r"(?P<neg>can't|cannot|can not|won't|doesn't|does not|don't|do not)\s+(?:really\s+)?"
    r"(?P<verb>handle|take|do|tolerate|manage|cope with|deal with)\s+(?P<obj>.+?)"
    r"(?:\s+(?:anymore|any more|these days|now|at all))?$",
    re.I,
)


def _body_limitation(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _BODY_CANNOT.match(text)
    obj = clean_object(match.group("obj")) if match else ""
    if not match or not obj or is_generic_object(obj, frozenset()):
        return []
    part, said = match.group("part").lower(), f"{match.group('neg').lower()} {match.group('verb')}"
    return [
        _constraint(
            ctx,
            f"User's {part} {said} {third_person(obj)}",
            f"constraint.body.{slug(part)}_{slug(obj)}",
            9000,
        )
    ]


def _limitation(ctx: ClauseContext, text: str) -> list[Candidate]:
    text = _said_thing_last(text)
    match = _CANNOT.match(text)
    if not match:
        return _body_limitation(ctx, text)
    negation, verb = match.group("neg").lower(), match.group("verb").lower()
    obj = clean_object(match.group("obj") or "")
    if re.match(r"^(?:another|any more|right now|that|this|it|much|a lot|enough|too)\b", obj, re.I):
        return []
    if verb in ("have", "handle", "tolerate", "digest", "do") and not obj:
        return []
    taste = _TASTE.search(obj) if verb == "do" and negation in ("don't", "do not") else None
    if taste:
        # "I don't do spicy food": a taste turned down, not a diet ("I can't do spicy" is).
        thing = taste.group().lower()
        return [
            build(
                ctx,
                f"User does not do {thing}",
                "preference",
                f"preference.{slug(thing)}",
                9000,
                SELF_STATEMENT_MARKERS,
            )
        ]
    if verb == "do" and (
        negation == "only"
        or not re.search(
            r"\b(?:caffeine|coffee|dairy|gluten|meat|sugar|alcohol|spicy|spice|carbs|pork|beef|"
            r"nuts|eggs|fish|seafood|booze|drugs|heights|stairs)\b",
            obj,
            re.I,
        )
    ):
        return []
    if negation == "only" and verb not in ("eat", "drink", "have"):
        return []
    if verb in _PHYSICAL_VERBS and obj and not _PHYSICAL_OBJECT.match(obj):
        return []
    rendered_negation = {
        "can't": "can't",
        "cannot": "cannot",
        "can not": "cannot",
        "don't": "does not",
        "do not": "does not",
        "never": "never",
        "no longer": "no longer",
        "only": "only",
    }[negation]
    verb_form = verb if negation not in ("never", "no longer", "only") else _third(verb)
    tail = f" {third_person(obj)}" if obj else ""
    subject = slug(obj) if obj else verb
    area = "diet" if verb in ("eat", "have", "drink", "tolerate", "digest", "do") else "ability"
    if verb == "drink" and not obj:
        area, subject = "sobriety", ""
    key = f"constraint.{area}" + (f".{subject}" if subject else "")
    return [_constraint(ctx, f"User {rendered_negation} {verb_form}{tail}", key, 9000)]


# Tastes ("spicy food", "sweets"): what "I don't do …" turns down as a dislike.
_TASTE = re.compile(
    r"\b(?:spicy|spice|sweet|sour|bitter)(?:\s+(?:food|foods|stuff|things|dishes|drinks))?\b|\bsweets\b",
    re.I,
)


_PHYSICAL_VERBS = frozenset(
    {
        "walk",
        "climb",
        "see",
        "hear",
        "lift",
        "kneel",
        "stand",
        "bend",
        "type",
        "read",
        "run",
        "jump",
    }
)
_PHYSICAL_OBJECT = re.compile(
    r"^(?:well|very well|at night|long distances|far|stairs|heavy|"
    r"small print|for long|without|more than|anything heavy)\b",
    re.I,
)


def _third(verb: str) -> str:
    return {"have": "has"}.get(verb, verb + ("es" if verb.endswith(("sh", "ch", "s")) else "s"))


# "i depend on the bus for like everything", "I rely on my wheelchair": what the user's days
# run on; not a person ("I rely on my sister"), who is a relationship, nor "on it"/"on you".
_DEPEND_ON = re.compile(
    rf"^I\s+{ADVERBS}(?P<verb>depend|rely|count)\s+(?:completely\s+|totally\s+|entirely\s+)?"
    r"on\s+(?P<obj>(?:my|the|a|an)\s+(?!(?:\w+\s+)?"
    rf"(?:{PERSON_ROLE_ALTERNATION})\b)[\w'-]+(?:\s+(?!for\b|to\b)[\w'-]+)?)"
    r"(?:\s+(?:for|to)\s+.+)?[.!]*$",
    re.I,
)


def _devices(ctx: ClauseContext, text: str) -> list[Candidate]:
    depends = _DEPEND_ON.match(text)
    if depends:
        obj = third_person(depends.group("obj"))
        verb = conjugate_3sg(depends.group("verb").lower())
        return [_constraint(ctx, f"User {verb} on {obj}", f"constraint.device.{slug(obj)}", 8800)]
    match = _MY_DEVICE.match(text)
    if match:
        device, obj = match.group("device").lower(), clean_object(match.group("obj"))
        return [
            _constraint(ctx, f"User's {device} is {obj}", f"constraint.device.{slug(device)}", 9000)
        ]
    aid = _MY_AID.search(text)
    if aid and not _ASSISTIVE.match(text) and (TIME_BOUND in ctx.markers or _MISHAP.search(text)):
        # "my hearing aid battery died", "my CPAP machine just stopped": the mishap is news,
        # the aid is the user's for good.
        ctx = ctx.without(TIME_BOUND, VENTING)
        obj = re.sub(r"\s+", " ", aid.group("obj").lower()).replace("cpap", "CPAP")
        article = "" if obj.endswith("s") else ("an " if obj[0] in "aeiou" else "a ")
        key = f"constraint.accessibility.{slug(obj.removesuffix('s'))}"
        return [_constraint(ctx, f"User has {article}{obj}", key, 9000)]
    match = _ASSISTIVE.match(text)
    if match:
        obj = match.group("obj").lower()
        return [
            _constraint(ctx, f"User uses a {obj}", f"constraint.accessibility.{slug(obj)}", 9300)
        ]
    match = _HAVE_PLATFORM.match(text)
    if match and _platform(match.group("obj")):
        obj = match.group("obj")
        return [_constraint(ctx, f"User has {obj}", f"constraint.device.{slug(obj)}", 9000)]
    match = _ON_PLATFORM.match(text)
    if match and match.group("obj").lower() in PLATFORMS:
        obj = match.group("obj")
        return [_constraint(ctx, f"User uses {obj}", f"constraint.device.{slug(obj)}", 9000)]
    return []


# "I get carsick", "I always get claustrophobic in lifts": a reaction the user's body has
# every time, a limit to plan around (what it is set off by is kept as said).
_REACTIONS = (
    r"(?:car|sea|air|travel|motion)\s*sick|claustrophobic|vertigo|nosebleeds|hay fever|cold sores|"
    r"heartburn|acid reflux"
)
_OFTEN = r"(?:always|easily|usually|tend to|really)\s+"
_RECURRING_REACTION = re.compile(
    rf"^I\s+(?:{_OFTEN})?get\s+(?:really\s+|very\s+)?(?P<reaction>{_REACTIONS})"
    r"(?P<when>\s+(?:in|on|when|if|from|after)\s+.+)?$",
    re.I,
)


def _recurring_reaction(ctx: ClauseContext, text: str) -> list[Candidate]:
    found = _RECURRING_REACTION.match(text)
    if not found:
        return []
    reaction = found["reaction"].lower()
    said = f"{reaction}{third_person(found['when'] or '')}"
    return [_constraint(ctx, f"User gets {said}", f"constraint.reaction.{slug(reaction)}", 9000)]


def _fear(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _FEAR.match(text) or _FEARED_BY.match(text)
    if not match:
        return []
    obj = clean_object(match.group("obj"))
    words = obj.lower().split()
    if (
        not words
        or is_generic_object(obj, frozenset())
        or words[0] in _NOT_A_FEARED_THING
        # "sharks don't scare me": no fear at all.
        or _NEGATION_WORDS.intersection(words)
        or (words[0].endswith("ing") and words[0] not in _FEARED_ACTIVITIES)
    ):
        return []
    groups = match.groupdict()
    if groups.get("noun"):
        statement = f"User has a {match.group('noun').lower()} of {third_person(obj)}"
    elif groups.get("verb"):
        # Said in the user's own word, so the fact stays grounded in what they said.
        statement = f"User is {_FEARED[match.group('verb').lower()]} of {third_person(obj)}"
    else:
        degree = (match.group("degree") or "").lower()
        statement = f"User is {degree}{match.group('kind').lower()} of {third_person(obj)}"
    return [_constraint(ctx, statement, f"constraint.fear.{slug(obj)}", 9000)]


def _car(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _DRIVE.match(text)
    if not match or _JOB_DRIVING.search(text):
        return []
    obj = clean_object(match.group("obj"))
    if not _VEHICLE_WORDS & set(re.findall(r"[\w-]+", obj.lower())):
        return []
    return [_constraint(ctx, f"User drives {obj}", "constraint.device.car", 9000)]


def _platform(obj: str) -> bool:
    return re.sub(r"^(?:an?|my)\s+", "", obj.lower()) in PLATFORMS


def _tools(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _USE_TOOL.match(text) or _DO_EVERYTHING_IN.match(text)
    if not match:
        return []
    obj = clean_object(match.group("obj"))
    groups = match.groupdict()
    scoped = (
        groups.get("freq") or groups.get("scope") or "everything" in text.lower() or _platform(obj)
    )
    named = any(w[:1].isupper() for w in obj.split()) or obj.lower() in PLATFORMS
    if not scoped or not named and not groups.get("freq"):
        return []
    if is_generic_object(obj, frozenset()):
        return []
    unit = next(
        (
            dim
            for word, dim in UNIT_SYSTEMS.items()
            if re.search(rf"\b{re.escape(word)}\b", obj, re.I)
        ),
        None,
    )
    key = f"constraint.units.{unit}" if unit else f"constraint.tool.{slug(obj)}"
    frequency = (groups.get("freq") or "").lower()
    scope = clean_object(groups.get("scope") or "")
    if "everything" in text.lower() and not scope and groups.get("freq") is None:
        scope = "for everything"
    rendered = f"User {frequency + ' ' if frequency else ''}uses {third_person(obj)}"
    if scope:
        rendered += f" {third_person(scope)}"
    return [_constraint(ctx, rendered, key, 9000)]
