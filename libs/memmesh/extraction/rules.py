"""The deterministic extractor: one user turn in, gated facts and command out."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from .commands import CommandMatch, detect_command, is_command_clause
from .constraints import constraint_candidates
from .context import ClauseContext
from .folding import fold_consequences
from .gates import apply_gates
from .habits import habit_candidates, narrative_candidates
from .identity import identity_candidates
from .instructions import instruction_candidates, unit_system_candidates
from .lexicon import NAME_TITLE
from .markers import is_emotion, turn_markers
from .model import Candidate, Command, ExtractedFact, ExtractionResult
from .preferences import preference_candidates
from .relationships import one_fact_per_person, relationship_candidates
from .restatement import (
    corrected_report,
    name_the_forgotten_taste,
    name_the_role_meant,
    name_what_a_reaction_points_at,
    name_whom_a_name_points_at,
    name_whom_a_pronoun_points_at,
    restate_meant,
    say_of_the_user_what_both_do,
)
from .terse import spell_out_notes
from .text import Clause, looks_like_question, normalize, split_clauses

# Q13 budget cap: at most five new atoms per turn.
MAX_FACTS_PER_TURN = 5

_STANDING_FRAGMENT = re.compile(
    r"^(?:and\s+)?(?:always|ever|never|every time|all the time|no exceptions|from now on|"
    r"going forward|for good|always have been|never have been|always has been|"
    r"(?:I\s+)?have been for (?:years|ages|a long time|decades)|been that way forever)$",
    re.I,
)
_LEAD_IN = re.compile(
    r"^(?:(?:I think|I guess|I suppose|I believe|I feel like|maybe|probably|perhaps|pretty sure|"
    r"kinda|sorta|ugh+|argh+|oh|wow|man|god|yeah|yes|no|well|also|plus|and|but|so|yep|nah|"
    # A topic named first frames what follows: "For music I love the fado", "when it comes to
    # coffee I'm really particular".
    r"(?:when it comes to|as for|in terms of)\s+(?:[\w'-]+\s+){0,2}?[\w'-]+|"
    r"for\s+(?:music|food|drinks?|books|reading|movies|films|sports?|holidays|travel|coffee|tea|"
    r"breakfast|dessert|snacks|clothes|work))"
    r"[,!]?\s+)+(?=I\b|I'm\b|I've\b|my\b|we\b)",
    re.I,
)
# "asking as a caterer", "speaking as a nurse": the speaker says what they are.
_AS_A = re.compile(
    r"^(?:(?:I'm\s+|I am\s+)?(?:asking|speaking|talking|writing)\s+)?as\s+"
    r"(?=(?:a|an)\s+(?!(?:kid|child|teen|teenager|baby|toddler|student|"
    r"rule|result|matter|whole|side|bonus|joke|treat|favor|favour|friend|mate|buddy|stranger|"
    r"customer|guest|outsider|layman|layperson)\b)[\w-]+(?:\s+[\w-]+){0,3}$)",
    re.I,
)
# The words a correction repeats its meant word with ("is Lille", "I said Freya").
_SAID_AGAIN = re.compile(
    r"^(?:(?:no|nope|so|I said|I meant|I mean|it's|its|it is|is|that's|that is|mr\.?|mrs\.?|"
    r"ms\.?|dr\.?)[ ,]+)*|[ .,!]+$",
    re.I,
)
# "I said" / "I meant" before a first-person statement in a correction turn.
# "that's not what I said, I said I'm allergic to shellfish" (the normaliser keeps one "I said").
_RESTATED = re.compile(
    r"(?:\b(?:that's|that is|it's|it is)\s+not\s+what\s+)?"
    r"\bI\s+(?:said|meant)(?:\s+that)?,?\s+(?=(?:I|I'm|I've|my)\b)",
    re.I,
)
# In a correction, how the meant word is written is said of the word, not of the user: "the
# Irish spelling", "like you wrote it", "with a Y"; "my name is spelled, Kathryn" names it.
_SPELLING_ASIDE = re.compile(
    r"(?:^|,\s*|\s+)(?:(?:the|an?)\s+(?:\w+\s+)?spelling|like you (?:wrote|spelled|spelt|typed|put|"
    r"had|have) it|with an?\s+[A-Za-z](?:\s+at the end)?)(?=\s*(?:[,.!?;]|$))",
    re.I,
)
_NAME_SPELLED = re.compile(r"\b(name(?:'s|\s+is))\s+(?:spelled|spelt)\b\s*,?", re.I)
# Asked as a favour too: "can you remember that I've got a latex allergy?", "I want you to
# keep in mind that my son is diabetic" state the fact as plainly as "remember that …".
# "…for a trip to iceland keep in mind" + "I use a cpap machine every night": the splitter
# ends a clause with the wrapper of the next one.
_REMEMBER_SUFFIX = re.compile(
    r"(?:^|\s+)(?:(?:so|and|but|um|uh|oh|also|please|just)\s+)*(?:keep in mind|bear in mind|"
    r"remember|note|just so you know|for the record|fyi)$",
    re.I,
)
_FIRST_PERSON_START = re.compile(r"^(?:I|I'm|I've|I'd|my|we|we're|we've|our)\b", re.I)
# "but like keep that I'm a welder", "except I do want you to know I'm a Quaker", "make sure it
# has that I'm a paramedic": what is kept out of a command that drops the rest is a statement.
_REMEMBER_PREFIX = re.compile(
    r"^(?:(?:hey|ok|okay|so|um|uh|oh|and|but|like|just|also|plus|except|only|then|afterwards)\s+)*"
    r"(?P<asked>(?:can|could|would|will)\s+you\s+(?:please\s+)?|you\s+can\s+(?:also\s+)?"
    r"(?:just\s+|also\s+)?|I(?:\s+do)?(?:\s+want|\s+need|'d\s+like|\s+would\s+like)\s+you\s+to\s+)?"
    r"(?:please\s+)?(?:remember|note(?:\s+down)?|make\s+a\s+note|keep in mind|bear in mind|"
    r"don't forget|for the record|just so you know|(?:do\s+)?(?:keep|know|add)(?=\s+that\b)|"
    r"(?:make|be)\s+sure\s+(?:it\s+has|it\s+says|you\s+have|you've\s+got|you\s+know|you\s+keep)|"
    r"(?<=you to )know|"
    # "for one thing I'm a teacher now", "the one thing that's still true is that I live in
    # Halifax", "you'll want to know straight away that I'm allergic to aspirin": the frame
    # of the fact a command keeps or updates.
    r"for one thing|for starters|especially since|"
    r"the (?:one|only) thing (?:that's|that is) (?:still )?true is|"
    # "the only thing worth keeping from today is that I'm deaf in one ear"
    r"the (?:one|only) thing (?:worth keeping|to keep|I want you to (?:know|keep|remember))"
    r"(?: (?:from|about) (?:today|this|that|now|me))? is|"
    r"you(?:'ll| will|'d| would| should| need to)(?: want to)? know(?: straight away| now)?)"
    r"\s+(?:that\s+)?(?=I\b|I'm\b|I've\b|my\b|we\b)",
    re.I,
)
# "the reason I'm asking is that I'm a junior doctor", "I should say I'm lactose intolerant",
# "the thing is, I'm a night owl": the words that only introduce a statement. Unlike the
# frames above, nothing here asks for the statement to be kept.
_STATEMENT_LEAD_IN = re.compile(
    r"^(?:(?:so|and|but|also|plus|oh|well)\s+)*(?:"
    r"the (?:only |main |real )?reason I(?:'m| am)? (?:ask(?:ing|ed)?|telling you(?: this)?|"
    r"mention(?:ing|ed)? (?:it|this|that)|br(?:ing|ought) (?:it |this |that )?up)"
    r"(?: (?:about|for|after) [^,.]{1,40}?)? is|"
    r"(?:the (?:main |big |other |first |important )?thing|what) (?:you (?:should|need to|"
    r"have to|ought to) know|to know|worth knowing)(?: about me)? is|"
    r"the (?:thing|truth|fact|point) is|truth be told|"
    # "what actually came out of it is that I cannot stand mushrooms": a cleft's frame.
    r"what (?:[\w']+ ){1,6}?(?:is|was) that|"
    # "one thing about me that explains a lot is that I'm a huge planner", "fun fact, I'm a twin"
    r"(?:one |the (?:main |other |first |big )?)thing (?:about me|to know about me)"
    r"(?: that [^,.]{1,30}?)? is|something (?:you should know|to know|worth knowing)"
    r"(?: about me)? is|fun fact(?: about me)?|full disclosure|quick (?:thing|note)|heads up|"
    r"I (?:should|must|have to|need to|ought to|gotta|got to|will|'ll|can) (?:say|mention|add|"
    r"tell you|point out|warn you|admit|confess)"
    r")(?:\s+(?:that|because))?\s*,?\s+(?=I\b|I'm\b|I've\b|I'd\b|my\b|we\b|we're\b|our\b)",
    re.I,
)


def extract(
    text: str,
    role: str = "user",
    propose: Callable[[str], list[Candidate]] | None = None,
    detect: Callable[[str], CommandMatch] = detect_command,
) -> ExtractionResult:
    """Extract durable facts, a memory command and a correction pair from one turn.

    `propose` turns the turn's text (its command removed) into candidates; the rules'
    `collect_candidates` by default, the hybrid extractor's own proposals otherwise. `detect`
    hears the command (the rules' by default). The gates and the per-turn cap are the same
    for every proposer."""
    if role.strip().lower() != "user":
        return ExtractionResult(relevant=False)
    normalized = normalize(text)
    if not normalized:
        return ExtractionResult(relevant=False)
    found = detect(normalized)
    if found.command is Command.DO_NOT_STORE:
        # The user asked for nothing to be kept: no facts and no rejection log of the content.
        return ExtractionResult(relevant=False, command=found.command, command_target=found.target)
    # A terse note ("husband: Omer.") is read as the sentence it stands for, and grounded in
    # it too: the spelled-out form adds only its template's words ("my", "is", "don't like").
    fact_text = found.fact_text
    if found.correction is not None:
        # "I said I'm vegan, not from Vegas": the user restates what they said, and it holds.
        heard, meant = found.correction.heard, found.correction.meant
        fact_text = corrected_report(normalized, fact_text, heard, meant)
        fact_text = _RESTATED.sub("", restate_meant(fact_text, meant))
        fact_text = name_the_role_meant(fact_text, meant)
        fact_text = _NAME_SPELLED.sub(r"\1", _SPELLING_ASIDE.sub("", fact_text))
    if found.command is Command.FORGET:
        fact_text = name_the_forgotten_taste(fact_text, normalized)
    fact_text = name_whom_a_pronoun_points_at(name_what_a_reaction_points_at(fact_text))
    fact_text = say_of_the_user_what_both_do(name_whom_a_name_points_at(fact_text))
    spelled = spell_out_notes(fact_text)
    candidates = (propose or collect_candidates)(spelled)
    source = text if spelled == found.fact_text else f"{text}\n{spelled}"
    accepted, rejections = apply_gates([c for c in candidates if not _points_back(c.text)], source)
    facts = _once_per_name(one_fact_per_person(fold_consequences(deduplicate(accepted), spelled)))
    if found.correction is not None:
        # "Cairns, not Cannes.": what is left once the misheard word is gone repeats the meant
        # word and states nothing ("User's background: Cairns.").
        meant = found.correction.meant.lower()
        facts = [f for f in facts if _SAID_AGAIN.sub("", f.evidence_span).lower() != meant]
    if found.command is Command.FORGET and found.target:
        # "that thing about being pescatarian, you can get rid of that": what is to be
        # forgotten is no fact to keep, though its clause holds no command of its own.
        target = found.target.lower()
        facts = [
            f
            for f in facts
            if not (target in f.evidence_span.lower() or f.evidence_span.lower() in target)
        ]
    facts = facts[:MAX_FACTS_PER_TURN]
    return ExtractionResult(
        relevant=bool(facts),
        facts=tuple(facts),
        command=found.command,
        command_target=found.target,
        correction=found.correction,
        rejections=tuple(rejections),
    )


_DANGLING_CONNECTOR = re.compile(r"\s+(?:so|but|and|or|because)$", re.I)


def turn_clauses(normalized_text: str) -> tuple[Clause, ...]:
    """The clauses the rules (and the learned heads) read, "remember that" prefixes dropped
    (also when the splitter left the wrapper at the end of the clause before)."""
    clauses = [_strip_frame(c) for c in split_clauses(normalized_text)]
    # "… im gluten intolerant so": a turn that trails off on a connector ends before it.
    clauses = [replace(c, text=_DANGLING_CONNECTOR.sub("", c.text)) for c in clauses]
    for position in range(len(clauses) - 1):
        clause, following = clauses[position], clauses[position + 1]
        wrapper = _REMEMBER_SUFFIX.search(clause.text)
        if (
            wrapper
            and following.sentence == clause.sentence
            and _FIRST_PERSON_START.match(following.text)
            and not following.asked_to_keep
        ):
            clauses[position] = replace(clause, text=clause.text[: wrapper.start()])
            clauses[position + 1] = replace(following, asked_to_keep=True)
    return tuple(c for c in clauses if c.text)


def collect_candidates(normalized_text: str) -> list[Candidate]:
    """Every candidate the rules propose for a normalised turn, in utterance order."""
    clauses = turn_clauses(normalized_text)
    contexts = _contexts(clauses)
    candidates, consumed = unit_system_candidates(clauses, contexts)
    for ctx in contexts:
        if is_command_clause(ctx.text):
            continue
        candidates.extend(relationship_candidates(ctx))
        if ctx.clause.index in consumed or is_emotion(ctx.text):
            continue
        candidates.extend(_self_statement(ctx, candidates))
    return candidates


def _self_statement(ctx: ClauseContext, earlier: list[Candidate]) -> list[Candidate]:
    ctx = _without_lead_in(ctx)
    found = constraint_candidates(ctx)
    if not found:
        found = preference_candidates(ctx, earlier)
    for family in (
        identity_candidates,
        instruction_candidates,
        habit_candidates,
        narrative_candidates,
    ):
        if found:
            break
        found = family(ctx)
    return found


def _without_lead_in(ctx: ClauseContext) -> ClauseContext:
    """Drop hedges and interjections before the subject so rules see "I'm …"; markers stay."""
    stripped = _LEAD_IN.sub("", ctx.text)
    if ctx.clause.connector == "as":
        stripped = f"as {stripped}"
    stripped = _AS_A.sub("I'm ", stripped)
    if stripped == ctx.text or not stripped:
        return ctx
    return ClauseContext(replace(ctx.clause, text=stripped), ctx.clauses, ctx.markers, ctx.trailing)


def _contexts(clauses: tuple[Clause, ...]) -> list[ClauseContext]:
    """Attach trailing standing fragments ("…, always") to the clause they qualify."""
    contexts: list[ClauseContext] = []
    for clause, markers in zip(clauses, turn_markers(clauses), strict=True):
        if _STANDING_FRAGMENT.match(clause.text) and contexts:
            previous = contexts[-1]
            contexts[-1] = ClauseContext(
                previous.clause,
                clauses,
                previous.markers,
                f"{previous.trailing} {clause.text}".strip(),
            )
            continue
        contexts.append(ClauseContext(clause, clauses, markers, ""))
    return contexts


def _strip_frame(clause: Clause) -> Clause:
    """The clause without the frame around its statement: a "remember that" (the statement is
    asked to be kept) or, failing that, words that only introduce it."""
    prefix = _REMEMBER_PREFIX.match(clause.text)
    if not prefix:
        lead_in = _STATEMENT_LEAD_IN.match(clause.text)
        if not lead_in:
            return clause
        # "what you should know is that I'm epileptic" asks nothing: its "what" opens a cleft.
        said = clause.text[lead_in.end() :]
        asks = clause.is_question and not (
            looks_like_question(clause.text) and not looks_like_question(said)
        )
        return replace(clause, text=said, is_question=asks)
    # "can you remember that …?" asks nothing once the favour is taken off: a statement.
    asked = clause.is_question and not prefix.group("asked")
    return replace(clause, text=clause.text[prefix.end() :], is_question=asked, asked_to_keep=True)


_PERSON_NAMED = re.compile(
    rf"\bnamed\s+{NAME_TITLE}?(?P<name>[A-Z][\w'-]+)|"
    rf"^User's\s+[\w' -]+?\s+is\s+{NAME_TITLE}?(?P<name2>[A-Z][\w'-]+)\b"
)


def _once_per_name(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """ "my aunt Priyanka … she's also my godmother": one person is one relationship fact,
    the first the turn gives."""
    named: set[str] = set()
    kept: list[ExtractedFact] = []
    for fact in facts:
        found = _PERSON_NAMED.search(fact.text) if fact.category == "relationship" else None
        name = (found.group("name") or found.group("name2")) if found else None
        if name is not None and name in named:
            continue
        if name is not None:
            named.add(name)
        kept.append(fact)
    return kept


def deduplicate(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """One fact per key and evidence (two rules reading one clause): the most confident wins."""
    best: dict[tuple[str, str], ExtractedFact] = {}
    order: list[tuple[str, str]] = []
    for fact in facts:
        slot = (fact.key, fact.evidence_span)
        if slot not in best:
            order.append(slot)
            best[slot] = fact
        elif fact.confidence_bp > best[slot].confidence_bp:
            best[slot] = fact
    unique_texts: dict[str, ExtractedFact] = {}
    for slot in order:
        unique_texts.setdefault(best[slot].text, best[slot])
    return _without_restated(list(unique_texts.values()))


# "User never drinks it.", "User's taste: can't stand them.": what the fact is about was
# named elsewhere, so the fact names nothing a memory could use.
_POINTS_BACK = re.compile(
    r"\b(?:(?:drink|eat|like|love|hate|stand|enjoy|take|do|want|need|prefer|mind|try|tried|miss|"
    r"watch|play|wear)(?:es|s|d|ed)?\s+(?:it|them|that|those|these)"
    r"(?:\s+(?:every|each|at|in|on|any|anymore|much|either)\b[^,]*)?|"
    # "User finds it disgusting.": a judgement of what was named before.
    r"(?:find|finds|found)\s+(?:it|them|that|those|these)\s+(?:\w+ly\s+)?[a-z]+)\.?$",
    re.I,
)
_USER_FRAME = re.compile(r"^User(?:'s\s+\w+:)?\s*", re.I)


def _points_back(fact_text: str) -> bool:
    """Whether all the fact says of its object is a pronoun ("User never drinks it."); "User's
    taste: the durian they cannot eat it." names it before."""
    found = _POINTS_BACK.search(fact_text)
    if not found:
        return False
    return len(_USER_FRAME.sub("", fact_text[: found.start()]).split()) <= 2


# Words that only frame a fact: "User has a daughter named Niamh" and "User's daughter's name
# is Niamh" state one fact.
_FRAME_WORDS = frozenset(
    "user user's has have is are was a an the named called name their them they who which "
    "and of to".split()
)


_LEARNED_FRAME = re.compile(r"^User's\s+\w+:\s*")


def _content_words(text: str) -> frozenset[str]:
    # "User's circle: Dr. Hanley." beside "User's therapist is Dr. Hanley.": the learned
    # path's frame says nothing of its own.
    words = re.findall(r"[^\W_]+(?:'[^\W_]+)?", _LEARNED_FRAME.sub("", text).lower())
    return frozenset(w.removesuffix("'s") for w in words) - _FRAME_WORDS


def _without_restated(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """A fact whose words another fact of its category contains says nothing more ("User has
    migraine." beside "User has chronic migraine since ten years."): unless it is the more
    confident of the two, it goes (of two saying the same, the first stays)."""
    words = [_content_words(f.text) for f in facts]
    dropped: set[int] = set()
    for i, fact in enumerate(facts):
        for j, other in enumerate(facts):
            if i == j or j in dropped or fact.category != other.category or not words[i]:
                continue
            # Less confident, or as confident and saying less, or the later of two the same.
            rank = (fact.confidence_bp, len(words[i]), -i)
            other_rank = (other.confidence_bp, len(words[j]), -j)
            # "User has a sister named Rosalind." beside "…named Rosalind, who is 94": the
            # person is said once, with what else is told of them.
            told_more = fact.category == "relationship" and other.text.startswith(
                fact.text.rstrip(".") + ","
            )
            if words[i] <= words[j] and (rank < other_rank or told_more):
                dropped.add(i)
                break
    return [f for i, f in enumerate(facts) if i not in dropped]
