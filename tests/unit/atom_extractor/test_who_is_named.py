"""Who a name belongs to: a role said with any word before it, a role of a trade or a breed,
a name given before or after the role it fills, lower case as transcripts write it."""

import re

import pytest

from memmesh.extraction.learned import default_hybrid_extractor


def relationships_of(text: str) -> list[str]:
    return [
        f.text
        for f in default_hybrid_extractor().extract(text).facts
        if f.category == "relationship"
    ]


@pytest.mark.parametrize(
    "text, fact",
    [
        # A trade or a breed, not only family words.
        ("my dermatologist Dr. Reyes wants to see me again", "Dr. Reyes"),
        ("my hairdresser Tomasz is moving salons", "Tomasz"),
        ("my schnauzer pixel chewed the remote", "Pixel"),
        # Any one word before the role says which one.
        ("my climbing partner Joss cancelled on me", "Joss"),
        ("my piano teacher mrs. alvarez says I rush the tempo", "Alvarez"),
        # Spoken, the hyphens of in-laws are not heard.
        ("my sister in law bea is visiting", "Bea"),
    ],
)
def test_a_role_and_the_name_after_it(text: str, fact: str) -> None:
    assert any(fact in found for found in relationships_of(text))


@pytest.mark.parametrize(
    "text, fact",
    [
        ("for my dad's retirement gift, his name is Osei", "User's dad is Osei."),
        ("I've got a niece, her name's Lucía", "User has a niece named Lucía."),
        ("Rafa, he's my stepbrother", "User has a stepbrother named Rafa."),
        ("we walked for ages uh pepper she's my whippet", "User has a whippet named Pepper."),
        ("there's my mentor, Ilse, who got me this job", "User's mentor is Ilse."),
        (
            "my aunt is a nurse, her name is Dolores",
            "User has an aunt named Dolores, who is a nurse.",
        ),
    ],
)
def test_a_name_given_apart_from_its_role(text: str, fact: str) -> None:
    assert fact in relationships_of(text)


@pytest.mark.parametrize(
    "text, not_a_name",
    [
        # The pronoun does not fit the person just named.
        ("my brother turns forty tomorrow, her name is Maud", "Maud"),
        ("my uncle bought a boat, her name is Sea Breeze", "Sea"),
        # A word before "she's my…" that is no name.
        ("honestly she's my best friend", "Honestly"),
    ],
)
def test_no_name_is_given_to_the_wrong_person(text: str, not_a_name: str) -> None:
    wrongly_named = re.compile(rf"named {not_a_name}|^User's [\w -]+ is {not_a_name}")
    assert not any(wrongly_named.search(found) for found in relationships_of(text))


@pytest.mark.parametrize(
    "text, fact",
    [
        ("my dog is a whippet called Fig", "User has a whippet named Fig."),
        ("my cat is a grumpy old thing named Soot", "User has a cat named Soot."),
    ],
)
def test_the_kind_said_before_the_name(text: str, fact: str) -> None:
    assert fact in relationships_of(text)


def test_a_spoken_contraction_after_a_role_is_no_name() -> None:
    said = "so bruno is my uh my tortoise hes like forty years old"
    assert not any("Hes" in found for found in relationships_of(said))


@pytest.mark.parametrize(
    "text, fact",
    [
        # Run on in speech: the pronoun after the name says what the person is.
        (
            "um my girlfriend priya she's a vet and uh i'm more of a dog person",
            "User's girlfriend is Priya, who is a vet.",
        ),
        (
            "my uh my brother in law olumide he's a pilot",
            "User has a brother in law named Olumide, who is a pilot.",
        ),
        # The name first: what the clause after the role says is said of the person too.
        (
            "Ingrid, my best mate, is a firefighter, she got me into bouldering.",
            "User's best mate is Ingrid, who is a firefighter.",
        ),
        ("Luca is my brother, he's a chef", "User has a brother named Luca, who is a chef."),
        # Where the person is from may close the role set off by commas.
        ("Tamsin, my best mate from uni, we talk every day", "User's best mate is Tamsin."),
        (
            "Marta, my friend from work, is a nurse",
            "User has a friend named Marta, who is a nurse.",
        ),
        (
            "Lorraine is my neighbour. She's retired.",
            "User has a neighbour named Lorraine, who is retired.",
        ),
    ],
)
def test_what_is_said_of_a_person_named_joins_their_fact(text: str, fact: str) -> None:
    assert fact in [f.text for f in default_hybrid_extractor().extract(text).facts]
