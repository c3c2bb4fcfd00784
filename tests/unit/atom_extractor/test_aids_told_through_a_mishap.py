"""An aid the user has, told through a mishap that is news ("my hearing aid battery died this
morning"), is a lasting limit; someone else's aid and the aid's news are not."""

import pytest

from memmesh.extraction.learned import default_hybrid_extractor


def _constraints(text: str) -> list[str]:
    result = default_hybrid_extractor().extract(text)
    return [f.text for f in result.facts if f.category == "constraint"]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("ugh my hearing aids ran out of battery on the bus today", "User has hearing aids."),
        ("the power went off last night and my CPAP machine stopped", "User has a CPAP machine."),
        ("left my insulin pump charger at my sister's this weekend", "User has an insulin pump."),
    ],
)
def test_an_aid_told_through_a_mishap_is_the_users(text: str, fact: str) -> None:
    facts = _constraints(text)
    assert fact in facts
    # The mishap is news: no fact keeps it.
    assert not any(word in f for f in facts for word in ("today", "battery", "stopped", "left"))


def test_someone_elses_aid_is_not_the_users() -> None:
    assert "User has a hearing aid." not in _constraints("my dad's hearing aid broke yesterday")
