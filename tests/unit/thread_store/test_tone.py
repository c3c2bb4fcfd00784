"""Emotional memory's tone signals: heard from stated preferences, reactions, moods,
milestones and rituals; weighed with decay and opposites; labels from a fixed vocabulary."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memmesh.engines.thread_store.domain.tone import (
    DAY_US,
    REACTION,
    STATED,
    TONE_LABELS,
    HeardSignal,
    ToneSignal,
    learned_tone,
    tone_signals,
)

NOW = 1_800_000_000_000_000


@pytest.mark.parametrize(
    ("text", "signal"),
    [
        ("Please keep your answers short, I'm usually driving.", ToneSignal.BRIEF),
        ("Could you just get to the point?", ToneSignal.BRIEF),
        ("I'd like shorter replies from now on.", ToneSignal.BRIEF),
        ("Can you go into more detail next time?", ToneSignal.DETAILED),
        ("You can be more casual with me, no need to be so formal.", ToneSignal.CASUAL),
        ("Please keep it professional.", ToneSignal.FORMAL),
        ("Feel free to joke around, I love your puns.", ToneSignal.PLAYFUL),
        ("No more jokes please, this is serious.", ToneSignal.SERIOUS),
        ("Be gentle with me today.", ToneSignal.GENTLE),
        ("I'm feeling really overwhelmed lately.", ToneSignal.SUPPORTIVE),
        ("It's been a rough week.", ToneSignal.SUPPORTIVE),
        ("Slow down a little, you're talking too fast.", ToneSignal.SLOWER),
        ("Could you speak faster?", ToneSignal.QUICKER),
        ("I got the job at the hospital!", ToneSignal.CELEBRATORY),
        ("We just got engaged!", ToneSignal.CELEBRATORY),
        ("Good morning! What's on today?", ToneSignal.MORNING_GREETING),
    ],
)
def test_a_turn_gives_its_tone_signal(text: str, signal: ToneSignal) -> None:
    assert signal in dict(tone_signals(text))


@pytest.mark.parametrize(
    "text",
    [
        "Don't keep it short, I want the whole story.",
        "My sister lives in Porto and works as a nurse.",
        "The meeting was short and to the point.",
        "I'm not feeling down at all.",
        "Remind me to call the dentist tomorrow morning.",
    ],
)
def test_ordinary_or_negated_speech_gives_no_brief_or_mood(text: str) -> None:
    heard = dict(tone_signals(text))
    assert ToneSignal.BRIEF not in heard and ToneSignal.SUPPORTIVE not in heard
    assert ToneSignal.MORNING_GREETING not in heard


def _heard(signal: ToneSignal, weight: int, days_ago: float, turn: str = "t") -> HeardSignal:
    return HeardSignal(signal, weight, NOW - int(days_ago * DAY_US), turn)


def test_one_stated_preference_gives_its_label_and_a_single_reaction_does_not() -> None:
    assert learned_tone([_heard(ToneSignal.BRIEF, STATED, 1)], NOW) == ("brief",)
    assert learned_tone([_heard(ToneSignal.BRIEF, REACTION, 1)], NOW) == ()
    two = [_heard(ToneSignal.BRIEF, REACTION, 1, "a"), _heard(ToneSignal.BRIEF, REACTION, 0, "b")]
    assert learned_tone(two, NOW) == ("brief",)


def test_labels_decay_a_mood_faster_than_a_preference() -> None:
    heard = [_heard(ToneSignal.CASUAL, STATED, 10), _heard(ToneSignal.SUPPORTIVE, STATED, 10)]
    assert learned_tone(heard, NOW) == ("casual",)
    assert learned_tone(heard, NOW - 9 * DAY_US) == ("casual", "supportive")
    assert learned_tone(heard, NOW + 60 * DAY_US) == ()


def test_an_opposite_signal_counts_against_a_label() -> None:
    heard = [_heard(ToneSignal.BRIEF, STATED, 20), _heard(ToneSignal.DETAILED, STATED, 1)]
    # The newer wish wins only once the older has faded enough to be outweighed.
    assert "brief" not in learned_tone(heard, NOW)
    assert learned_tone([*heard, _heard(ToneSignal.DETAILED, STATED, 0, "u")], NOW) == ("detailed",)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(list(ToneSignal)),
            st.sampled_from([REACTION, STATED]),
            st.integers(min_value=0, max_value=400 * DAY_US),
        ),
        max_size=80,
    )
)
def test_labels_are_a_bounded_ordered_subset_of_the_vocabulary(
    signals: list[tuple[ToneSignal, int, int]],
) -> None:
    heard = [HeardSignal(s, w, NOW - age, f"t{n}") for n, (s, w, age) in enumerate(signals)]
    labels = learned_tone(heard, NOW)
    assert set(labels) <= set(TONE_LABELS)
    assert list(labels) == sorted(labels, key=TONE_LABELS.index)
    assert len(",".join(labels).encode()) <= 512
    assert learned_tone(list(reversed(heard)), NOW) == labels


@given(st.text(max_size=300))
def test_any_text_gives_only_known_signals(text: str) -> None:
    heard = tone_signals(text)
    assert all(signal in ToneSignal and weight in (REACTION, STATED) for signal, weight in heard)
