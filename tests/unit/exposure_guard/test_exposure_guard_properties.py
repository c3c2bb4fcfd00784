"""Properties over random atoms, rules and channels: nothing forbidden passes, nothing allowed is
held back, the filter is deterministic, and the recall summary keeps its caps.

Texts are built from known words in known inflections, so the expected outcome of every topic
rule is known by construction rather than recomputed by the code under test."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from memmesh.engines.exposure_guard.domain.filtering import CompiledRules, Exposed, filter_items
from memmesh.engines.exposure_guard.domain.matching import Item
from memmesh.engines.exposure_guard.domain.recall import (
    MAX_BYTES,
    MAX_ITEMS,
    SummaryAtom,
    recall_summary,
)
from memmesh.engines.exposure_guard.domain.rules import (
    Channel,
    RuleId,
    RuleKind,
    TargetType,
)
from memmesh.policy.sensitivity import Exposure

# Topic words and the surface forms that must count as them.
INFLECTIONS = {
    "sister": ["sister", "sisters", "Sister's", "SISTERS", "sister\u2019s"],
    "party": ["party", "parties", "Party's", "partying"],
    "box": ["box", "boxes", "Box"],
    "jazz": ["jazz", "Jazz's", "jazzes"],
    "doctor": ["doctor", "doctors", "'doctor'"],
    "divorce": ["divorce", "divorced", "Divorcing", "divorces", "divorce's"],
    "wedding": ["wedding", "weddings", "Wedding's"],
}
# Words that contain a topic word but are other words; they must never match.
DECOYS = [
    "sisterhood",
    "partygoer",
    "boxer",
    "jazzy",
    "doctoral",
    "divorcee",
    "weddingcake",
    "coffee",
    "music",
    "the",
    "User",
]
SEGMENTS = ["relationship", "preference", "sister", "music", "name"]
THREADS = ["th-1", "th-2", "th-3"]
WORK_ORDERS = ["wo-1", "wo-2"]
ATOMS = ["atom-0", "atom-1", "atom-2", "atom-3"]
EXPOSURES = list(Exposure)


@dataclass(frozen=True)
class Case:
    exposed: Exposed
    # Topic words really present in the text or topics (the ground truth).
    words: frozenset[str]


token = st.one_of(
    st.sampled_from(sorted(INFLECTIONS)).flatmap(
        lambda w: st.tuples(st.just(w), st.sampled_from(INFLECTIONS[w]))
    ),
    st.tuples(st.none(), st.sampled_from(DECOYS)),
)
punctuation = st.sampled_from([" ", ", ", ". ", " (", ") ", "; ", " - "])
key = st.lists(st.sampled_from(SEGMENTS), min_size=0, max_size=3).map(".".join)


@st.composite
def cases(draw: st.DrawFn, index: int) -> Case:
    tokens = draw(st.lists(token, max_size=8))
    text = "".join(surface + draw(punctuation) for _, surface in tokens)
    topic_tokens = draw(st.lists(token, max_size=2))
    words = frozenset(w for w, _ in (*tokens, *topic_tokens) if w is not None)
    item = Item(
        item_id=f"atom-{index}",
        key=draw(key),
        topics=tuple(surface for _, surface in topic_tokens),
        text=text,
        thread_id=draw(st.sampled_from(["", *THREADS])),
        work_order_id=draw(st.sampled_from(["", *WORK_ORDERS])),
        atom_id=draw(st.sampled_from(["", *ATOMS])),
    )
    return Case(Exposed(item, draw(st.sampled_from(EXPOSURES)), draw(st.booleans())), words)


@st.composite
def case_lists(draw: st.DrawFn) -> list[Case]:
    count = draw(st.integers(min_value=0, max_value=12))
    return [draw(cases(n)) for n in range(count)]


rule = st.one_of(
    st.builds(
        RuleId,
        st.sampled_from(list(RuleKind)),
        st.just(TargetType.KEY),
        st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=2).map(".".join),
    ),
    st.builds(
        RuleId,
        st.sampled_from(list(RuleKind)),
        st.just(TargetType.TOPIC),
        st.sampled_from(sorted(INFLECTIONS)),
    ),
    st.builds(
        RuleId,
        st.sampled_from(list(RuleKind)),
        st.just(TargetType.THREAD),
        st.sampled_from(THREADS),
    ),
    st.builds(
        RuleId,
        st.sampled_from(list(RuleKind)),
        st.just(TargetType.WORK_ORDER),
        st.sampled_from(WORK_ORDERS),
    ),
    st.builds(
        RuleId, st.sampled_from(list(RuleKind)), st.just(TargetType.ATOM), st.sampled_from(ATOMS)
    ),
)
rules = st.lists(rule, max_size=10)
channels = st.sampled_from(list(Channel))


def rule_applies(rule: RuleId, case: Case) -> bool:
    """The specification of a rule's reach, written independently of the matcher."""
    item = case.exposed.item
    match rule.target_type:
        case TargetType.KEY:
            return item.key == rule.target or item.key.startswith(rule.target + ".")
        case TargetType.TOPIC:
            return rule.target in case.words
        case TargetType.THREAD:
            return item.thread_id == rule.target
        case TargetType.WORK_ORDER:
            return item.work_order_id == rule.target
        case _:
            return rule.target in (item.atom_id, item.item_id)


def forbidden(
    case: Case, rules: list[RuleId], channel: Channel, speak_text_allowed: bool, user_asked: bool
) -> bool:
    exposure = case.exposed.exposure
    if exposure not in (Exposure.SAFE_TO_SPEAK, Exposure.SAFE_TO_TEXT):
        return True
    if any(r.kind is RuleKind.DO_NOT_MENTION and rule_applies(r, case) for r in rules):
        return True
    pulled = case.exposed.pull_only or any(
        r.kind is RuleKind.PULL_ONLY and rule_applies(r, case) for r in rules
    )
    return pulled and not user_asked


@settings(max_examples=400, deadline=None)
@given(case_lists(), rules, channels, st.booleans(), st.booleans())
def test_exactly_the_items_not_forbidden_pass(
    items: list[Case],
    rule_list: list[RuleId],
    channel: Channel,
    speak_text_allowed: bool,
    user_asked: bool,
) -> None:
    outcome = filter_items(
        CompiledRules.of(rule_list),
        [c.exposed for c in items],
        channel,
        speak_text_allowed=speak_text_allowed,
        user_asked=user_asked,
    )
    expected = [
        c.exposed.item.item_id
        for c in items
        if not forbidden(c, rule_list, channel, speak_text_allowed, user_asked)
    ]
    assert list(outcome.allowed_item_ids) == expected
    # Seed 001 §2.11.11: SAFE_TO_TEXT on voice is used, not said, unless asked or allowed.
    unsaid = [
        c.exposed.item.item_id
        for c in items
        if c.exposed.item.item_id in expected
        and c.exposed.exposure is Exposure.SAFE_TO_TEXT
        and channel is Channel.VOICE
        and not (speak_text_allowed or user_asked)
    ]
    assert list(outcome.do_not_say_item_ids) == unsaid
    mentioned = [
        c
        for c in items
        if any(r.kind is RuleKind.DO_NOT_MENTION and rule_applies(r, c) for r in rule_list)
    ]
    assert outcome.do_not_mention_hits == len(mentioned)
    held_back = len(items) - len(expected)
    assert all(count > 0 for _, count in outcome.hits)
    assert (held_back == 0) == (not outcome.hits)


@settings(max_examples=200, deadline=None)
@given(
    case_lists(), rules, channels, st.booleans(), st.booleans(), st.randoms(use_true_random=False)
)
def test_filter_is_deterministic_whatever_the_rule_order(
    items: list[Case],
    rule_list: list[RuleId],
    channel: Channel,
    speak: bool,
    asked: bool,
    rng,  # type: ignore[no-untyped-def]
) -> None:
    exposed = [c.exposed for c in items]
    first = filter_items(
        CompiledRules.of(rule_list), exposed, channel, speak_text_allowed=speak, user_asked=asked
    )
    again = filter_items(
        CompiledRules.of(rule_list), exposed, channel, speak_text_allowed=speak, user_asked=asked
    )
    shuffled = list(rule_list)
    rng.shuffle(shuffled)
    reordered = filter_items(
        CompiledRules.of(shuffled), exposed, channel, speak_text_allowed=speak, user_asked=asked
    )
    assert first == again == reordered
    assert list(first.hits) == sorted(first.hits)


# Free text of letters that spell no topic word (multi-byte ones included), to push the 1 KB cap.
summary_text = st.text(alphabet=st.sampled_from("abcé .\u4e2d"), min_size=0, max_size=400)


@st.composite
def summary_atoms(draw: st.DrawFn) -> list[tuple[SummaryAtom, Case]]:
    """Atoms with the case the rules see: an atom has a key, text, topics and its own id only."""
    atoms = []
    for n in range(draw(st.integers(min_value=0, max_value=25))):
        base = draw(cases(n))
        item = base.exposed.item
        words = base.words
        text = item.text
        if draw(st.booleans()):
            text = draw(summary_text)
            words = frozenset(
                w for w in INFLECTIONS if any(t in INFLECTIONS[w] for t in item.topics)
            )
        atom = SummaryAtom(
            atom_id=item.item_id,
            key=item.key,
            text=text,
            topics=item.topics,
            exposure=base.exposed.exposure,
            pinned=draw(st.booleans()),
            confidence_bp=draw(st.integers(0, 10_000)),
        )
        seen = Item(
            item_id=item.item_id, key=item.key, topics=item.topics, text=text, atom_id=item.item_id
        )
        atoms.append((atom, Case(Exposed(seen, atom.exposure), words)))
    return atoms


@settings(max_examples=200, deadline=None)
@given(summary_atoms(), rules, channels, st.booleans())
def test_recall_summary_is_safe_and_bounded(
    atoms: list[tuple[SummaryAtom, Case]],
    rule_list: list[RuleId],
    channel: Channel,
    speak_text_allowed: bool,
) -> None:
    dnm = [r for r in rule_list if r.kind is RuleKind.DO_NOT_MENTION]
    got = recall_summary(
        CompiledRules.of(dnm), [a for a, _ in atoms], channel, speak_text_allowed=speak_text_allowed
    )
    assert len(got.items) <= MAX_ITEMS
    assert sum(len(item.encode()) for item in got.items) <= MAX_BYTES
    assert len(set(got.atom_ids)) == len(got.atom_ids) == len(got.items)
    by_id = {a.atom_id: (a, c) for a, c in atoms}
    for atom_id, item in zip(got.atom_ids, got.items, strict=True):
        atom, case = by_id[atom_id]
        assert item == atom.text and atom.text.strip()
        assert atom.exposure is Exposure.SAFE_TO_SPEAK or (
            atom.exposure is Exposure.SAFE_TO_TEXT
            and (channel is Channel.TEXT or speak_text_allowed)
        )
        assert not any(rule_applies(r, case) for r in dnm)
    safe = [
        a
        for a, c in atoms
        if a.text.strip()
        and (
            a.exposure is Exposure.SAFE_TO_SPEAK
            or (
                a.exposure is Exposure.SAFE_TO_TEXT
                and (channel is Channel.TEXT or speak_text_allowed)
            )
        )
        and not any(rule_applies(r, c) for r in dnm)
    ]
    assert got.omitted_count == len(safe) - len(got.items)
