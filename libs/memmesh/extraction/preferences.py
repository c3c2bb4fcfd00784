"""Preference facts: stable likes, dislikes, favourites, fandoms and defaults."""

from __future__ import annotations

import re

from .context import SELF_STATEMENT_MARKERS, ClauseContext, build
from .lexicon import DURABLE_ADJECTIVES, FANDOM_NOUNS, GENERIC_OBJECTS, is_trait_person
from .model import Candidate
from .phrases import ADVERBS, I_AM, clean_object, is_generic_object
from .text import indefinite_article, slug, third_person

_VERB_RENDER = {
    "love": ("loves", 9500),
    "adore": ("adores", 9500),
    "like": ("likes", 8500),
    "enjoy": ("enjoys", 8200),
    "dig": ("digs", 8200),
    "prefer": ("prefers", 9500),
    "hate": ("hates", 9000),
    "dislike": ("dislikes", 9000),
    "detest": ("detests", 9000),
    "loathe": ("loathes", 9000),
    "despise": ("despises", 9000),
    "can't stand": ("can't stand", 9000),
    "cannot stand": ("cannot stand", 9000),
    "can't bear": ("can't bear", 9000),
    "don't like": ("doesn't like", 9000),
    "do not like": ("does not like", 9000),
    "don't care for": ("doesn't care for", 8800),
    "don't enjoy": ("doesn't enjoy", 8800),
    "hate hate": ("hates", 9000),
}
_VERBS = "|".join(re.escape(v) for v in sorted(_VERB_RENDER, key=len, reverse=True))
_I_VERB = re.compile(rf"^I\s+{ADVERBS}(?P<verb>{_VERBS})\s+(?P<obj>.+)$", re.I)
# Terse speech drops the subject of a strong like or dislike ("Hate mayo.", "love jazz");
# "love being on hold" is how sarcasm sounds, so a situation (a gerund) is not taken.
_DROPPED_SUBJECT = re.compile(
    r"^(?P<verb>hate|love|adore|despise|loathe|detest|can't stand|cannot stand)\s+"
    r"(?!\w+ing\b|when\b|it\b|how\b|and\b|or\b|is\b|are\b|can\b|should\b|will\b|sure\b|does\b|has\b|makes\b)(?P<obj>.+)$",
    re.I,
)
# "Love and acceptance should be everyone's right": "love" is a noun, the subject, there.
# "Love the necklace, any special meaning?", "love all the details": praise for something
# shown or said just now, a compliment (labelling rule 2) rather than a taste; a taste said
# without its subject names a kind of thing ("love jazz").
_PRAISE = re.compile(r"^(?:love|adore)\s+(?:all\s+)?(?:the|this|that|these|those|your)\b", re.I)
_PREFER_OVER = re.compile(
    r"^(?P<x>.+?)\s+(?P<cmp>over|to|rather than|more than|than)\s+(?P<y>.+)$", re.I
)
_INTO = re.compile(
    rf"^{I_AM}\s+(?P<neg>not\s+)?{ADVERBS}(?:that\s+|big\s+|huge\s+)?"
    r"(?P<how>into|obsessed with|crazy about|passionate about|hooked on|nuts about|"
    r"mad about|addicted to|a sucker for|big on|fond of|keen on)\s+(?P<obj>.+)$",
    re.I,
)
_FAN_OF = re.compile(
    rf"^(?:{I_AM}\s+|I've\s+)?(?P<neg>not\s+|never\s+been\s+)?(?:{ADVERBS})(?:a|an)\s+"
    r"(?:(?:big|huge|massive|total|"
    r"major|giant|lifelong|die-hard|diehard)\s+)?(?:fan|lover)\s+of\s+(?P<obj>.+)$",
    re.I,
)
_X_FAN = re.compile(
    rf"^(?:{I_AM}\s+|I(?:'ve|\s+have)\s+(?:always\s+)?been\s+|being\s+|as\s+)(?P<neg>not\s+)?{ADVERBS}"
    r"(?:more\s+of\s+)?(?:a|an)\s+"
    r"(?:(?:big|huge|massive|"
    r"total|lifelong|die-hard|diehard)\s+)?(?P<obj>[\w' -]+?)\s+(?P<noun>fan|supporter|junkie|"
    r"addict|lover|buff|fiend|fanatic|nut|enthusiast|aficionado|snob|nerd|geek|person|"
    r"guy|girl)\b"
    r"(?P<rest>.*)$",
    re.I,
)
# One word for someone devoted to a thing: "I'm a metalhead through and through", "a total
# cinephile", "a bit of a foodie", "a chocoholic".
_ENTHUSIAST = re.compile(
    rf"^{I_AM}\s+{ADVERBS}(?:(?:a\s+bit|kind|sort)\s+of\s+)?(?P<article>a|an)\s+"
    r"(?:(?:big|huge|massive|total|lifelong|proper|real|complete|bit of a)\s+)?"
    r"(?P<noun>(?!(?:head|godhead|airhead|blockhead)\b)[a-z]{3,}(?:head|phile|holic|aholic)|"
    r"foodie|bookworm|film buff|gearhead|petrolhead|cinephile|audiophile|bibliophile)"
    r"(?:\s+(?:through and through|for life|at heart|by nature))?$",
    re.I,
)
_FIND_ADJ = re.compile(
    r"^I\s+find\s+(?P<obj>(?P<head>[\w' -]+?)\s+(?:so\s+|really\s+|super\s+|incredibly\s+)?"
    r"(?:boring|annoying|overrated|relaxing|fascinating|delicious|disgusting|gross|soothing|"
    r"tedious|exhausting|fun|calming|stressful|unbearable|insufferable|pretentious|tiresome|"
    r"tacky|cringe|cringey|hilarious|beautiful))(?:,?\s+(?:always have|always did))?$",
    re.I,
)
_MY_FOOD_STYLE = re.compile(
    r"^I\s+(?:always\s+)?(?:take|drink|have|eat|order|like)\s+(?P<obj>my\s+(?P<head>coffee|tea|"
    r"eggs|steak|burgers?|pizza|martinis?|whisky|whiskey|latte|toast|curry|food|drinks?)\s+"
    r"(?:black|white|with\s+.+|without\s+.+|extra\s+\w+|no\s+\w+|medium\s+\w+|rare|well done|"
    r"strong|sweet|spicy|hot|cold|iced|plain|neat|on the rocks|over easy|sunny side up|"
    r"scrambled).*)$",
    re.I,
)
_SUPPORT = re.compile(
    r"^I\s+(?:support|root for|cheer for|follow)\s+(?P<obj>(?-i:[A-Z][\w'.-]*)"
    r"(?:\s+(?-i:[A-Z][\w'.-]*))*)(?:\s+religiously|\s+closely)?$",
    re.I,
)
_SUCKER_FOR = re.compile(
    rf"^{I_AM}\s+{ADVERBS}a\s+(?:total\s+|huge\s+|big\s+)?sucker\s+for\s+"
    r"(?P<obj>.+)$",
    re.I,
)
_MY_FAVORITE = re.compile(
    r"^my\s+(?P<adj>(?:absolute|all-time|all time|ultimate|very)\s+)?favorite\s+"
    r"(?P<thing>[\w -]+?)\s+(?:of all time\s+|ever\s+)?(?:is|are|'s|has to be|has always been|"
    r"would have to be)\s+(?P<obj>.+)$",
    re.I,
)
_IS_MY_FAVORITE = re.compile(
    r"^(?P<obj>.+?)(?:'s|'re|\s+is|\s+are|(?:'s|'ve|\s+has|\s+have)(?:\s+always)?\s+been)\s+"
    r"(?:(?:hands down|by far|easily|definitely|always|still|totally|really|basically|"
    r"absolutely|truly|honestly|so)\s+)*my\s+"
    r"(?P<adj>(?:absolute|all-time|ultimate|number one|top|very)\s+)?"
    r"(?P<kind>favorite(?:\s+(?P<thing>(?!(?:since|ever|for|forever)\b)[\w -]+?))?|"
    r"go-to(?:\s+[\w-]+)?|comfort\s+\w+|"
    r"guilty pleasure|jam|thing|season|happy place|weakness)"
    # How long it has been so is not what it is: "…my favorite band since high school".
    r"(?:\s+(?:since|ever since|for)\s+[\w ]+|\s+forever)?$",
    re.I,
)
_NOT_MY_THING = re.compile(
    r"^(?P<obj>.+?)(?:'s|'re|\s+is|\s+are)\s+(?:not|never|just not)\s+(?:really\s+)?my\s+"
    r"(?:thing|jam|cup of tea|scene|style)$|^(?P<obj2>.+?)(?:'s|\s+is|\s+are)\s+(?:a\s+)?"
    r"(?:hard\s+)?no\s+for\s+me$",
    re.I,
)
# A verdict of loathing ("terrible", "like the hell", "my nightmare"); said "for me" it is a
# taste, not news about the thing.
_VERDICT = (
    r"(?:just\s+|really\s+|honestly\s+)?(?:like\s+)?(?:terrible|awful|horrible|disgusting|gross|"
    r"unbearable|torture|(?:the\s+)?hell|(?:the|a)\s+nightmare|(?:the\s+)?worst)"
)
# What a verdict on the user's own things or on a pronoun is about is no taste ("my commute
# is a nightmare for me", "this is terrible for me").
_NOT_OWNED = r"(?:my|our|his|her|their|this|that|it|these|those|today|tonight)\b"
# "raw fish just isn't for me", "superhero movies bore me to tears", "reality TV makes me
# cringe": a dislike said through what the thing does to the user.
_PUTS_ME_OFF = re.compile(
    r"^(?P<obj>.+?)(?:\s+(?:just|really|simply))?\s+(?:(?:is|are)\s+(?:just\s+)?not|isn't|aren't)\s+"
    r"(?:really\s+)?for\s+me$|"
    r"^(?P<obj2>.+?)\s+(?:just\s+|really\s+)?bores?\s+me(?:\s+(?:to\s+(?:tears|death)|stiff|silly))?$|"
    r"^(?P<obj3>.+?)\s+(?:just\s+|always\s+)?makes?\s+me\s+(?:physically\s+|actually\s+)?(?:cringe|gag)$|"
    # "sweet and salty together is for me terrible": a verdict said for the user alone.
    rf"^(?P<obj4>(?!{_NOT_OWNED}).+?)\s+(?:is|are)\s+(?:for|to)\s+me\s+{_VERDICT}$|"
    rf"^(?P<obj5>(?!{_NOT_OWNED}).+?)\s+(?:is|are)\s+{_VERDICT}\s+(?:for|to)\s+me$|"
    # "blue cheese is just never going to happen for me", "all-inclusive resorts just aren't me".
    rf"^(?P<obj6>(?!{_NOT_OWNED}).+?)\s+(?:is|are)\s+(?:just\s+|simply\s+)?(?:never|not)\s+"
    r"(?:going to|gonna)\s+happen\s+for\s+me$|"
    rf"^(?P<obj7>(?!{_NOT_OWNED}).+?)\s+(?:just|really|simply)\s+(?:isn't|aren't|is not|are not)\s+me$|"
    # "the thing I really cannot deal with is small talk".
    r"^the\s+(?:one\s+)?thing\s+I\s+(?:really\s+|just\s+)?(?:can't|cannot|could never)\s+"
    r"(?:stand|deal with|bear|handle|abide)\s+is\s+(?P<obj8>.+)$|"
    # "raw fish and me just don't get along" (a person the user does not get along with is no
    # taste: "my sister and I", "Tom and me").
    r"^(?P<obj9>(?!(?:my|our|his|her|their)\b)(?-i:[a-z])[^,]*?)\s+and\s+(?:me|I)\s+(?:just\s+|really\s+)?(?:don't|do not|never)\s+"
    r"(?:get along|agree|mix)$|"
    # "I'd rather eat cardboard than another kale salad", "I'd rather walk than get on a
    # motorbike": what anything else is put before.
    # ("I'd rather you had too much than too little" asks something of the assistant.)
    r"^I(?:'d| would)\s+(?:honestly\s+|much\s+)?(?:rather|sooner)\s+(?!you\b)[\w' ]+?\s+than\s+"
    r"(?:(?:eat|have|drink|watch|get on|go to|listen to|do|sit through)\s+)?"
    r"(?:another|a|an|the|any)?\s*(?P<obj10>(?![\w' -]*\b(?:it|them|that|this|of)\b)[\w' -]+?)$|"
    # "i could go my whole life without another brussels sprout", "wouldn't touch a rom-com
    # with a barge pole", "never again with energy drinks".
    r"^(?:I\s+)?could\s+(?:happily\s+)?go\s+(?:my\s+(?:whole|entire)\s+life|forever)\s+without\s+"
    r"(?:another|a|an|the|any|ever\s+\w+ing)?\s*(?P<obj11>[\w' -]+?)$|"
    r"^(?:I\s+)?(?:wouldn't|would not|won't|will not)\s+touch\s+(?:a|an|the|any)?\s*(?P<obj12>[\w' -]+?)"
    r"\s+with\s+a\s+(?:barge|bargepole|ten[- ]foot|10[- ]foot)(?:\s+pole)?$|"
    r"^never\s+again\s+with\s+(?P<obj13>[\w' -]+?)$|"
    # "jazz has never done a thing for me", "reality TV does nothing for me".
    rf"^(?P<obj14>(?!{_NOT_OWNED}).+?)\s+(?:(?:has|have)\s+never\s+(?:really\s+)?done\s+"
    r"(?:a\s+(?:thing|single\s+thing)|anything|much)|(?:does|do)\s+(?:absolutely\s+)?nothing|"
    r"(?:doesn't|don't|does not|do not)\s+(?:really\s+)?do\s+(?:anything|a\s+thing|much))\s+for\s+me$|"
    # "you will never ever catch me at a karaoke bar": where the user is never found.
    r"^(?:you(?:'ll|\s+will)\s+never|you\s+(?:won't|will\s+not))\s+(?:ever\s+)?(?:catch|see|find)\s+"
    r"me\s+(?:at|in|on|near|doing|eating|drinking|watching|wearing)\s+(?:a|an|the|any)?\s*"
    r"(?P<obj15>[\w' -]+?)$",
    re.I,
)
_NOTHING_BEATS = re.compile(r"^nothing\s+beats\s+(?P<obj>.+?)(?:\s+for\s+me)?$", re.I)
_GIVE_ME_CHOICE = re.compile(
    r"^give\s+me\s+(?P<x>.+?)\s+over\s+(?P<y>.+?)(?:\s+any\s+day)?$|"
    # "mountains, give me mountains every time": a choice vouched for by how often it holds.
    r"^give\s+me\s+(?P<obj>(?!(?:a|an|the|some|one|that|this|it|them)\b)[\w'-]+(?:\s+[\w'-]+){0,2}?)"
    r",?\s+(?:any\s+day(?:\s+of\s+the\s+week)?|every\s+(?:single\s+)?time|any\s*time|"
    r"hands\s+down)$",
    re.I,
)
# "summer over winter, every single time", "cats over dogs any day": a choice said bare,
# vouched for by how often it holds; only the preferred item is kept.
_X_OVER_Y = re.compile(
    r"^(?P<x>(?!(?:I|I'm|we|you|he|she|they|it|it's|this|that|there|and|but|so|just|get|got|"
    r"went|go|all|give|take)\b)"
    # What is preferred is named, not pointed at ("give me that over a beach").
    r"(?!(?:[\w'-]+\s+){0,3}?(?:me|it|that|this|them|those|these|one)\s+over\b)"
    r"[^\W\d_][\w'-]*(?:\s+[\w'-]+){0,3}?)\s+over\s+"
    r"(?P<y>[\w'-]+(?:\s+[\w'-]+){0,3}?)"
    r"(?:,?\s+(?:for me|any day|every (?:single )?time|all day|always|hands down|any ?time|"
    r"forever|all the way|no contest|every day of the week))+(?:\s+\S.*)?$",
    re.I,
)
_PRONOUN_FAVORITE = re.compile(
    r"^(?:it's|that's|it is|that is)\s+my\s+(?:absolute\s+)?favorite\s+(?P<thing>[\w -]+)$", re.I
)


# A dislike said topic first: "Red wine? Never liked it.", "mushrooms, never touch them",
# "Football I never liked". "Can't do it" and "can't get them" are about plans, not tastes.
_REFUSING = (
    r"(?:(?:really|just|honestly|still|simply)\s+)?(?:never|don't|do not|can't|cannot|won't)\s+"
    r"(?:(?:really|ever|once|even)\s+)?(?P<verb>liked?|touch(?:ed)?|eat|stand|drink|"
    r"enjoy(?:ed)?|understand|watch)"
)
_COMMENT_ON_TOPIC = re.compile(
    rf"^(?:I\s+)?{_REFUSING}(?:\s+(?:it|them|that|those|one))?(?:\s+(?:at all|either|ever))?$|"
    r"^(?:(?:a\s+)?hard pass|pass|not for me|no thanks?|no thank you|not a fan|nope|no way|"
    r"never again)(?:,?\s+(?:always|ever|never|thanks|for me))*$|"
    # "raw fish, it's just not for me", "olives, they're really not my thing".
    r"^(?:it's|it is|they're|they are)\s+(?:just\s+|really\s+|simply\s+)?not\s+(?:for me|my thing)$|"
    # "cruise ship holidays, for me this is like the hell": the verdict of the thing before.
    rf"^(?:for\s+me,?\s+)?(?:it's|it is|this is|that's|that is|they're|they are)\s+{_VERDICT}"
    r"(?:\s+for\s+me)?$",
    re.I,
)
_TOPIC_THEN_REFUSAL = re.compile(
    rf"^(?P<obj>[\w'-]+(?:\s+[\w'-]+)?)\s+I\s+{_REFUSING}\b(?:\s+(?P=obj))?$", re.I
)
_BARE_TOPIC = re.compile(r"^(?:the\s+)?(?P<obj>[\w'-]+(?:\s+[\w'-]+){0,2})$", re.I)
_NOT_A_TOPIC = frozenset(
    """I I'm me my it it's is are was were you we they he she this that there yes no yeah ok
    okay so well oh um uh and but or what why how who which when where do does did have has
    had can could would should will just really not never always one ones those these some
    any after before since now then today tonight lately anymore recently currently because
    honestly""".split()
)


# "Coffee? No thanks, I just had one.": an offer turned down for now, with its reason.
_FOR_NOW = re.compile(
    r"\b(?:I(?:'ve|\s+have)?\s+just|already|right now|today|tonight|later|at the moment|for now|"
    r"full|stuffed)\b",
    re.I,
)


def _declines_now(ctx: ClauseContext) -> bool:
    following = ctx.following()
    return (
        following is not None
        and following.sentence == ctx.clause.sentence
        and _FOR_NOW.search(following.text) is not None
    )


def _topic_comment(ctx: ClauseContext, text: str) -> list[Candidate]:
    """A dislike of the thing named first, refused in the words after it."""
    obj, evidence = None, text
    same_clause = _TOPIC_THEN_REFUSAL.match(text)
    if same_clause:
        obj = same_clause.group("obj")
    elif _COMMENT_ON_TOPIC.match(text) and ctx.previous() and not _declines_now(ctx):
        # The evidence is the clause naming the topic: the fact is about it, and it is read.
        evidence = ctx.previous()[-1].text
        named = _BARE_TOPIC.match(evidence.strip(" ?:,."))
        obj = named.group("obj") if named else None
        before = ctx.previous()[-2] if len(ctx.previous()) >= 2 else None
        if (
            before is not None
            and before.sentence == ctx.clause.sentence
            and len(before.text.split()) == 1
            and len(evidence.split()) == 1
        ):
            # "…mushrooms in any form, slimy, rubbery, no thank you": the last of a list of
            # what the thing is like, the refusal of the thing named before them.
            obj = None
    if not obj or any(word.lower() in _NOT_A_TOPIC for word in obj.split()):
        return []
    obj = obj if any(w[:1].isupper() and w[1:].islower() for w in obj.split()[1:]) else obj.lower()
    return [_pref(ctx, f"User dislikes {obj}", obj, 8800, evidence)]


def preference_candidates(ctx: ClauseContext, earlier: list[Candidate]) -> list[Candidate]:
    """Preference facts stated by the user in the clause."""
    text = ctx.text
    for rule in (
        _verb_preference,
        _into,
        _fandom,
        _favorite,
        _negative_thing,
        _nothing_beats,
        _topic_comment,
    ):
        found = rule(ctx, text)
        if found:
            return found
    _refine_pronoun_favorite(ctx, text, earlier)
    return []


_RESPONSE_STYLE = re.compile(
    r"\b(?:answers?|responses?|replies|explanations?|emojis?|"
    r"bullet points?|walls? of text|jargon|small talk|lectures?)\b",
    re.I,
)


def _pref(
    ctx: ClauseContext, text: str, key_object: str, confidence_bp: int, evidence: str | None = None
) -> Candidate:
    # A like or dislike about how the assistant answers is a standing instruction (constraint).
    if _RESPONSE_STYLE.search(key_object):
        return build(
            ctx,
            text,
            "constraint",
            f"constraint.format.{slug(key_object)}",
            confidence_bp,
            SELF_STATEMENT_MARKERS,
            evidence=evidence,
        )
    return build(
        ctx,
        text,
        "preference",
        f"preference.{slug(key_object)}",
        confidence_bp,
        SELF_STATEMENT_MARKERS,
        evidence=evidence,
    )


def _verb_preference(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _I_VERB.match(text) or _DROPPED_SUBJECT.match(text)
    if not match or _PRAISE.match(text):
        return []
    opens_sentence = not ctx.previous() or ctx.previous()[-1].sentence != ctx.clause.sentence
    if match.re is _DROPPED_SUBJECT and not opens_sentence and text[:1].isupper():
        # "reality TV, Love Island and all that": capitalised mid-sentence, a title.
        return []
    verb = match.group("verb").lower()
    obj = clean_object(match.group("obj"))
    if is_generic_object(obj, GENERIC_OBJECTS) or re.match(
        r"^(?:to\s+)?(?:be|have|think|say|"
        r"know|hear|see)\b",
        obj,
        re.I,
    ):
        return []
    rendered, confidence = _VERB_RENDER[verb]
    if verb == "prefer":
        compared = _PREFER_OVER.match(obj)
        if compared:
            obj = f"{compared.group('x')} {compared.group('cmp')} {compared.group('y')}"
            reason = _reason(ctx)
            text_out = f"User prefers {third_person(obj)}{reason}"
            return [_pref(ctx, text_out, compared.group("x"), confidence)]
    return [_pref(ctx, f"User {rendered} {third_person(obj)}", _key_head(obj), confidence)]


def _reason(ctx: ClauseContext) -> str:
    # "I prefer X over Y because it's easier to read": keep the user's own reason.
    following = ctx.following()
    if (
        following
        and following.connector in ("because", "since")
        and re.match(r"^(?:it's|it is|they're|they are)\b", following.text, re.I)
    ):
        return " because " + re.sub(r"^it's\b", "it is", following.text, flags=re.I)
    return ""


def _into(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _INTO.match(text)
    if not match:
        return []
    obj = clean_object(match.group("obj"))
    if is_generic_object(obj, GENERIC_OBJECTS):
        return []
    negation = "not " if match.group("neg") else ""
    how = match.group("how").lower()
    return [_pref(ctx, f"User is {negation}{how} {third_person(obj)}", _key_head(obj), 8800)]


def _fandom(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _FAN_OF.match(text)
    if match:
        obj = clean_object(match.group("obj"))
        negation = "not " if match.group("neg") else ""
        return [_pref(ctx, f"User is {negation}a fan of {third_person(obj)}", _key_head(obj), 8800)]
    match = _FIND_ADJ.match(text) or _MY_FOOD_STYLE.match(text) or _SUPPORT.match(text)
    if match:
        obj = clean_object(match.group("obj"))
        verb = text.split()[1].lower()
        rendered = {
            "find": "finds",
            "take": "takes",
            "drink": "drinks",
            "have": "has",
            "eat": "eats",
            "order": "orders",
            "like": "likes",
        }.get(verb, verb + "s")
        return [
            _pref(
                ctx,
                f"User {rendered} {third_person(obj)}",
                _key_head(match.groupdict().get("head") or obj),
                8800,
            )
        ]
    match = _SUCKER_FOR.match(text)
    if match:
        obj = clean_object(match.group("obj"))
        return [_pref(ctx, f"User is a sucker for {third_person(obj)}", _key_head(obj), 8800)]
    match = _ENTHUSIAST.match(text)
    if match:
        noun = match.group("noun")
        return [_pref(ctx, f"User is {match.group('article').lower()} {noun}", noun, 8800)]
    match = _X_FAN.match(text)
    if not match:
        return []
    obj, noun = clean_object(match.group("obj")), match.group("noun").lower()
    if noun in ("person", "guy", "girl") and (
        is_trait_person(text[: match.end("noun")].split())
        or DURABLE_ADJECTIVES.get(obj.split()[-1].lower(), ("",))[0] == "identity"
    ):
        return []  # "a morning person", "a chatty person" is a trait: identity rules own it.
    if noun not in FANDOM_NOUNS | {"person", "guy", "girl", "supporter"} or not obj:
        return []
    negation = "not " if match.group("neg") else ""
    article = indefinite_article(obj)
    return [
        _pref(ctx, f"User is {negation}{article} {third_person(obj)} {noun}", _key_head(obj), 8800)
    ]


# "Thai green curry is the best thing ever invented": the thing the user rates above all.
_BEST_THING_EVER = re.compile(
    rf"^(?P<obj>(?!{_NOT_OWNED}|you\b|he\b|she\b|they\b|we\b).+?)\s+(?:is|are)\s+"
    r"(?:honestly\s+|literally\s+|just\s+|hands down\s+)?the\s+best\s+"
    r"(?:thing|food|drink|snack|meal|show|band|film|movie|book|game|sport)\s+"
    r"(?:ever(?:\s+(?:invented|made|created))?|in the (?:world|universe))$",
    re.I,
)


def _favorite(ctx: ClauseContext, text: str) -> list[Candidate]:
    best = _BEST_THING_EVER.match(text)
    if best and not is_generic_object(clean_object(best.group("obj")), GENERIC_OBJECTS):
        obj = clean_object(best.group("obj"))
        return [_pref(ctx, f"User loves {third_person(obj)}", _key_head(obj), 8800)]
    match = _MY_FAVORITE.match(text)
    if match:
        obj = clean_object(match.group("obj"))
        thing = match.group("thing").strip()
        if is_generic_object(obj, GENERIC_OBJECTS):
            return []
        adjective = (match.group("adj") or "").strip()
        label = f"{adjective} favorite {thing}".strip()
        return [
            build(
                ctx,
                f"User's {label} is {third_person(obj)}",
                "preference",
                f"preference.favorite.{slug(thing)}",
                9000,
                SELF_STATEMENT_MARKERS,
            )
        ]
    match = _IS_MY_FAVORITE.match(text)
    if not match:
        return []
    obj = clean_object(match.group("obj"))
    if obj.lower() in _PRONOUNS:
        # "a tribute concert of Fairuz, she is my favorite singer": the pronoun stands for
        # what the clause before it ended on.
        obj = _antecedent(ctx) or ""
    if (
        not obj
        or is_generic_object(obj, GENERIC_OBJECTS)
        or obj.lower().startswith(("nothing", "which"))
    ):
        return []
    kind = match.group("kind").lower()
    adjective = (match.group("adj") or "").strip()
    label = f"{adjective} {kind}".strip()
    verb = "are" if kind.endswith("s") and not kind.endswith("ss") else "is"
    key = (
        f"preference.favorite.{slug(match.group('thing') or '')}"
        if kind.startswith("favorite") and match.group("thing")
        else f"preference.{slug(_key_head(obj))}"
    )
    return [
        build(
            ctx,
            f"User's {label} {verb} {third_person(obj)}",
            "preference",
            key,
            9000,
            SELF_STATEMENT_MARKERS,
        )
    ]


_PRONOUNS = frozenset("she he they it that this those these".split())
_NOT_ANTECEDENTS = frozenset("it them that this there one ones me you him her us all".split())


def _antecedent(ctx: ClauseContext) -> str | None:
    """The name or the noun the clause before ends on: "Le Guin" in "a rainy afternoon with a
    Le Guin novel", "doubles" in "I really miss doubles". A pronoun that opens a sentence
    looks back into the one before ("saw Radiohead live!! they've been my favorite…")."""
    before = ctx.previous()
    if not before or before[-1].sentence < ctx.clause.sentence - 1:
        return None
    words = [w.strip(",.!?;:") for w in before[-1].text.split()]
    for end in range(len(words) - 1, 0, -1):
        if words[end][:1].isupper() and words[end].replace("'", "").isalpha():
            start = end
            while start > 1 and words[start - 1][:1].isupper():
                start -= 1
            return " ".join(words[start : end + 1])
    last = words[-1].lower() if words else ""
    return last if last.isalpha() and last not in _NOT_ANTECEDENTS else None


def _negative_thing(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _NOT_MY_THING.match(text) or _PUTS_ME_OFF.match(text)
    if not match:
        return []
    said = match.groupdict()
    if (said.get("obj4") or said.get("obj5")) and ctx.clause.connector in _CONSEQUENCE:
        # "…motion sickness, so flying is just the worst for me": a consequence of a limit.
        return []
    obj = clean_object(next(g for g in match.groups() if g))
    if is_generic_object(obj, GENERIC_OBJECTS):
        return []
    return [_pref(ctx, f"User dislikes {third_person(obj)}", _key_head(obj), 8800)]


_CONSEQUENCE = frozenset({"so", "because", "since", "cause", "which"})


def _nothing_beats(ctx: ClauseContext, text: str) -> list[Candidate]:
    # "summer over winter, every single time": how often it holds may be a clause of its own.
    following = ctx.following()
    said_after = following.text if following and following.sentence == ctx.clause.sentence else ""
    over = _X_OVER_Y.match(text) or _X_OVER_Y.match(f"{text} {said_after}")
    if over:
        obj = clean_object(over.group("x"))
        if is_generic_object(obj, GENERIC_OBJECTS):
            return []
        return [_pref(ctx, f"User prefers {third_person(obj)}", _key_head(obj), 8800)]
    match = _NOTHING_BEATS.match(text) or _GIVE_ME_CHOICE.match(text)
    if not match:
        return []
    obj = clean_object(match.group("obj") or match.group("x"))
    if is_generic_object(obj, GENERIC_OBJECTS):
        return []
    return [_pref(ctx, f"User's favorite is {third_person(obj)}", _key_head(obj), 8800)]


def _refine_pronoun_favorite(ctx: ClauseContext, text: str, earlier: list[Candidate]) -> None:
    # "nothing beats bouldering, it's my favorite way to spend a weekend": name the favourite
    # on the fact already drawn from the previous clause instead of adding a second one.
    match = _PRONOUN_FAVORITE.match(text)
    if not match or not earlier or earlier[-1].category != "preference":
        return
    previous = earlier[-1]
    head = re.match(r"^User's favorite is (?P<obj>.+)\.$", previous.text)
    if head:
        thing = clean_object(match.group("thing"))
        earlier[-1] = build(
            ctx,
            f"User's favorite {third_person(thing)} is {head.group('obj')}",
            "preference",
            f"preference.favorite.{slug(thing)}",
            previous.confidence_bp,
            SELF_STATEMENT_MARKERS,
            evidence=f"{previous.evidence_span}, {ctx.text}",
        )


def _key_head(obj: str) -> str:
    # Keys name the thing liked, not the surrounding words: first three content words.
    words = [
        w
        for w in re.findall(r"[\w'-]+", obj.lower())
        if w not in ("my", "the", "a", "an", "anything", "any", "with", "in", "it")
    ]
    return " ".join(words[:3])
