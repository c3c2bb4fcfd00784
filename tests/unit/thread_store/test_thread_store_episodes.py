"""Episode digests: sessions cut into runs of consecutive turns, each summarised by its own
turns' sentences, bounded, deterministic, citing exactly the turns it quotes."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from memmesh.engines.thread_store.domain.episodes import (
    EPISODE_ENTITIES,
    EPISODE_MAX_TURNS,
    EPISODE_SUMMARY_CHARS,
    EPISODE_TITLE_CHARS,
    MAX_EPISODE_ID_CHARS,
    MAX_EPISODES,
    build_episodes,
    episode_id_of,
    segment,
)
from memmesh.engines.thread_store.domain.model import Role, Turn
from memmesh.engines.thread_store.domain.salience import salience, salient_sentences
from memmesh.engines.thread_store.domain.text import entities

T0 = 1_767_225_600_000_000


def turn(index: int, text: str, role: Role | None = None, session_id: str = "s1") -> Turn:
    spoken_by = role if role is not None else (Role.USER if index % 2 == 0 else Role.ASSISTANT)
    return Turn(f"t{index:03d}", session_id, spoken_by, text, T0 + index * 1_000_000)


def garden_then_taxes() -> list[Turn]:
    garden = [
        "I planted tomatoes in the garden this morning.",
        "Tomatoes love the sunny garden corner, water them daily.",
        "The garden tomatoes already have yellow flowers.",
        "Flowers on tomatoes mean fruit in a few garden weeks.",
    ]
    taxes = [
        "My accountant Priya filed the quarterly taxes yesterday.",
        "Quarterly taxes with Priya sound well organised.",
    ]
    return [turn(i, text) for i, text in enumerate([*garden, *taxes])]


def test_segments_partition_the_session_in_order_and_respect_the_size_cap() -> None:
    turns = [
        turn(i, f"We talked about the harbour boat number {i} and its sails.") for i in range(40)
    ]
    episodes = segment(list(reversed(turns)))
    assert [t for run in episodes for t in run] == turns
    assert all(1 <= len(run) <= EPISODE_MAX_TURNS for run in episodes)


def test_a_turn_sharing_no_words_with_the_episode_starts_a_new_one() -> None:
    runs = segment(garden_then_taxes())
    assert [[t.turn_id for t in run] for run in runs] == [
        ["t000", "t001", "t002", "t003"],
        ["t004", "t005"],
    ]


def test_episode_ids_are_the_thread_id_and_a_number() -> None:
    episodes = build_episodes("s1", garden_then_taxes())
    assert [e.episode_id for e in episodes] == ["s1#e1", "s1#e2"]
    assert all(e.thread_id == "s1" for e in episodes)
    assert episodes[0].update_us == T0 + 3 * 1_000_000


def test_evidence_is_exactly_the_turns_whose_sentences_the_summary_quotes() -> None:
    turns = [*garden_then_taxes(), turn(6, "Thanks!"), turn(7, "Ok.")]
    by_id = {t.turn_id: t for t in turns}
    for episode in build_episodes("s1", turns):
        quoted = [
            s
            for turn_id in episode.evidence_turn_ids
            for s in salient_sentences(by_id[turn_id].text)
        ]
        assert episode.summary == " ".join(s for s in quoted if s in episode.summary)
        for turn_id in episode.evidence_turn_ids:
            assert any(s in episode.summary for s in salient_sentences(by_id[turn_id].text))
        assert "t006" not in episode.evidence_turn_ids and "t007" not in episode.evidence_turn_ids


def test_a_summary_over_budget_leaves_whole_turns_out_of_text_and_evidence() -> None:
    sentence = "Marco from Lisbon described bridge {i} with its {i} stone arches, blue tiles, yellow trams and the long river walk at dusk."
    turns = [turn(i, sentence.format(i=i)) for i in range(6)]
    assert all(100 < len(t.text) <= 200 for t in turns)  # six of them do not fit one summary
    (episode,) = build_episodes("s1", turns)
    assert len(episode.summary) <= EPISODE_SUMMARY_CHARS
    quoted = [t.turn_id for t in turns if t.text in episode.summary]
    assert list(episode.evidence_turn_ids) == quoted
    assert 1 <= len(quoted) < len(turns)


def test_episodes_are_bounded_however_long_the_session() -> None:
    text = (
        "Dr Okafor from Nairobi and Professor Lindqvist from Uppsala met Ana Souza about grant {i}. "
        * 6
    )
    turns = [turn(i, text.format(i=i)) for i in range(1000)]
    episodes = build_episodes("s1", turns)
    assert len(episodes) <= MAX_EPISODES
    for episode in episodes:
        assert len(episode.summary) <= EPISODE_SUMMARY_CHARS
        assert len(episode.title) <= EPISODE_TITLE_CHARS
        assert len(episode.key_entities) <= EPISODE_ENTITIES
        assert 1 <= len(episode.evidence_turn_ids) <= EPISODE_MAX_TURNS


def test_a_thread_whose_episode_ids_would_not_fit_an_index_id_gets_none() -> None:
    fitting = "s" * (MAX_EPISODE_ID_CHARS - len("#e64"))
    assert len(episode_id_of(fitting, MAX_EPISODES)) == MAX_EPISODE_ID_CHARS
    assert build_episodes(
        fitting, [turn(0, "The lighthouse party needs balloons and cake.", session_id=fitting)]
    )
    too_long = fitting + "x"
    assert (
        build_episodes(
            too_long,
            [turn(0, "The lighthouse party needs balloons and cake.", session_id=too_long)],
        )
        == ()
    )


def test_a_session_without_content_has_no_episodes() -> None:
    assert build_episodes("s1", [turn(0, "Hi!"), turn(1, "Hello."), turn(2, "Ok, thanks.")]) == ()
    assert build_episodes("s1", []) == ()


def test_episodes_do_not_depend_on_the_order_turns_are_given_in() -> None:
    turns = garden_then_taxes()
    shuffled = list(turns)
    random.Random(7).shuffle(shuffled)
    assert build_episodes("s1", shuffled) == build_episodes("s1", turns)


_texts = st.lists(
    st.text(alphabet=st.sampled_from("abcdefghij KLMN.?!,0123"), min_size=0, max_size=400),
    min_size=0,
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(_texts)
def test_every_episode_is_bounded_and_cites_only_turns_it_quotes(texts: list[str]) -> None:
    turns = [turn(i, text) for i, text in enumerate(texts)]
    by_id = {t.turn_id: t for t in turns}
    episodes = build_episodes("s1", turns)
    assert episodes == build_episodes("s1", list(reversed(turns)))
    cited: list[str] = []
    for number, episode in enumerate(episodes):
        assert len(episode.summary) <= EPISODE_SUMMARY_CHARS
        assert len(episode.evidence_turn_ids) == len(set(episode.evidence_turn_ids))
        for turn_id in episode.evidence_turn_ids:
            assert any(s in episode.summary for s in salient_sentences(by_id[turn_id].text))
        cited += episode.evidence_turn_ids
        assert episode.episode_id.startswith("s1#e") and number < MAX_EPISODES
    assert len(cited) == len(set(cited))


def test_a_name_the_speaker_addresses_is_no_entity_of_what_is_said() -> None:
    # "Thanks, Mel!" says who is listening; counted as an entity it made every reply to Mel
    # salient and every digest title "Mel, ...".
    assert entities("Thanks, Mel! I met Sarah at the Louvre.") == ["Sarah", "Louvre"]
    assert entities("Hey Jon, Sarah says hi.") == ["Sarah"]


def test_a_sentence_of_the_speakers_own_life_outranks_praise_of_the_listener() -> None:
    told = "I signed up for a pottery class."
    praise = "Your painting looks awesome."
    assert salience(told) > salience(praise)
    reply = (
        "That's great news, Caroline! Your painting looks awesome. "
        "By the way, I'm off to go swimming with the kids."
    )
    assert "By the way, I'm off to go swimming with the kids." in salient_sentences(reply)
