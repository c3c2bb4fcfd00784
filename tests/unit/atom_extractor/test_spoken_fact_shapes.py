"""Rules for facts as people say them aloud: introductions, reactions, pets, jobs of people
close to the user, languages being learned (labelling rules 1, 3 and 4)."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.text import conjugate_3sg


@pytest.mark.parametrize(
    "text, category, tokens, absent",
    [
        ("hi, it's Ottoline here", "identity", ["ottoline"], []),
        ("Bartholomew speaking", "identity", ["bartholomew"], []),
        ("hello um this is wendeline by the way", "identity", ["wendeline"], []),
        ("you're talking to Ingeborg", "identity", ["ingeborg"], []),
        ("so sesame lands me in the ER, keep it out", "constraint", ["sesame"], []),
        ("like shrimp makes my lips swell up", "constraint", ["shrimp"], []),
        (
            "we rescued a whippet called Noodle in May",
            "relationship",
            ["whippet", "noodle"],
            ["may"],
        ),
        ("our cat Marzipan hates the vacuum", "relationship", ["marzipan"], []),
        # Retiring is an event of its day; being retired lasts.
        (
            "so yeah today was my last shift at the depot i retired after thirty years",
            "identity",
            ["retired"],
            ["today"],
        ),
        ("I retired from nursing last autumn", "identity", ["retired", "nursing"], ["autumn"]),
        # A lasting way of being, said with or without its article.
        ("I am very introvert person since always", "identity", ["introvert"], []),
        ("I'm a really chatty person", "identity", ["chatty"], []),
        ("my uncle Bertrand works as a ferry pilot", "relationship", ["bertrand", "pilot"], []),
        ("my sister Odile teaches piano", "relationship", ["odile", "piano"], []),
        (
            "I'm learning Icelandic for a trip to Reykjavik",
            "identity",
            ["icelandic"],
            ["reykjavik"],
        ),
        ("i'm taking welsh lessons", "identity", ["welsh"], []),
        # A household's religious diet is the user's own.
        ("we keep halal at home", "constraint", ["halal"], []),
        ("my family keeps kosher", "constraint", ["kosher"], []),
    ],
)
def test_spoken_shape_gives_one_grounded_fact(text, category, tokens, absent):
    result = extract(text)
    assert [f.category for f in result.facts] == [category], result.facts
    fact = result.facts[0].text.lower()
    assert all(t in fact for t in tokens), fact
    assert not any(t in fact for t in absent), fact


@pytest.mark.parametrize(
    "text",
    [
        "it's cold here",
        "hey, it's me again",
        "same here",
        "the curry last night made me sick",
        "my boss makes me furious",
        "coffee gives me energy",
        "we went to a greyhound race yesterday",
    ],
)
def test_look_alikes_store_nothing(text):
    assert extract(text).facts == ()


def test_news_about_a_named_relative_keeps_the_person_without_the_news():
    facts = extract("my sister Odile is coming over tomorrow").facts
    assert [f.text for f in facts] == ["User has a sister named Odile."]


@pytest.mark.parametrize(
    "text, statement",
    [
        (
            "my son Teodor has type one diabetes",
            "User has a son named Teodor, who has type one diabetes.",
        ),
        (
            "my partner Ilse can't have anything with gluten",
            "User's partner is Ilse, who can't have anything with gluten.",
        ),
        ("so my landlord mister okafor is fixing the boiler", "User's landlord is Mister Okafor."),
    ],
)
def test_a_named_persons_durable_fact_and_spoken_title_stay_with_them(text, statement):
    assert [f.text for f in extract(text).facts] == [statement]


@pytest.mark.parametrize(
    "text, statement",
    [
        ("Hate anchovies.", "User hates anchovies."),
        ("I find opera pretentious, always have", "User finds opera pretentious."),
    ],
)
def test_terse_and_judging_dislikes_are_preferences(text, statement):
    assert [(f.category, f.text) for f in extract(text).facts] == [("preference", statement)]


@pytest.mark.parametrize(
    "text",
    ["love you", "hate when that happens", "hate to say it, but yes", "love waiting in line"],
)
def test_dropped_subject_look_alikes_store_nothing(text):
    assert extract(text).facts == ()


def test_an_unpunctuated_run_on_statement_is_read_as_its_own_clause():
    text = "what oil works best on a wok im a line cook so i use one every shift"
    assert [f.text for f in extract(text).facts] == ["User is a line cook."]


def test_a_bound_im_is_not_split_off():
    assert extract("the one thing I'm sure about is that it rained").facts == ()


@pytest.mark.parametrize(
    "text, statement",
    [
        ("we relocated to Ghent in the spring", "User lives in Ghent."),
        ("just moved to Windhoek", "User lives in Windhoek."),
        ("we finally moved into the new flat in Bergen", "User lives in Bergen."),
    ],
)
def test_a_move_said_any_way_leaves_where_the_user_lives(text, statement):
    assert [f.text for f in extract(text).facts] == [statement]


@pytest.mark.parametrize("text", ["we're moving to Ghent next month", "my aunt moved to Bergen"])
def test_a_planned_move_or_someone_elses_leaves_no_residence(text):
    assert [f for f in extract(text).facts if f.category == "identity"] == []


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        (
            "I have a daughter, her name is Noor, she's in year two",
            "User has a daughter named Noor.",
        ),
        ("I've got a brother. His name's Tobias.", "User has a brother named Tobias."),
        ("I have a sister, she's called Ines", "User has a sister named Ines."),
    ],
)
def test_a_relative_named_in_the_next_clause_is_kept_with_the_name(text, statement) -> None:
    assert [f.text for f in extract(text).facts] == [statement]


@pytest.mark.parametrize("text", ["I have a son, he is tall", "I have a sister, Mondays are hard"])
def test_a_relative_whose_next_clause_names_no_one_stays_unnamed(text) -> None:
    facts = extract(text).facts
    assert len(facts) == 1 and "named" not in facts[0].text


@pytest.mark.parametrize(
    ("text", "category", "statement"),
    [
        ("I'm afraid of flying", "constraint", "User is afraid of flying."),
        ("honestly I'm so scared of deep water", "constraint", "User is scared of deep water."),
        ("I've got a real phobia of hospitals", "constraint", "User has a phobia of hospitals."),
        ("thunderstorms terrify me", "constraint", "User is terrified of thunderstorms."),
        ("big dogs really scare me", "constraint", "User is scared of big dogs."),
        ("spiders frighten me to death", "constraint", "User is frightened of spiders."),
        ("I drive a Tesla", "constraint", "User drives a Tesla."),
        ("I drive an old Volvo estate", "constraint", "User drives an old Volvo estate."),
        (
            "I'm training for the Berlin marathon",
            "identity",
            "User is training for the Berlin marathon.",
        ),
        ("I'm in training for a triathlon", "identity", "User is training for a triathlon."),
        (
            "my hobby these days is building model ships",
            "identity",
            "User's hobby is building model ships.",
        ),
        ("my hobbies are chess and hiking", "identity", "User's hobbies are chess and hiking."),
        ("I'm vegetarian since last year", "constraint", "User is vegetarian."),
        ("I went vegan about two years ago", "constraint", "User is vegan."),
        ("I became diabetic in my thirties", "constraint", "User is diabetic."),
        # The user's birthday said as a day of the year.
        ("my birthday is October 21st", "identity", "User's birthday is October 21st."),
        (
            "oh and my birthday's on the 2nd of May",
            "identity",
            "User's birthday is the 2nd of May.",
        ),
        # A reaction the user's body always has is a limit to plan around.
        ("I get airsick", "constraint", "User gets airsick."),
        ("I always get vertigo on ladders", "constraint", "User gets vertigo on ladders."),
        # What "we both" do or are, the user does or is.
        (
            "my sister and I are twins and we both hate mushrooms",
            "preference",
            "User hates mushrooms.",
        ),
    ],
)
def test_fears_cars_training_and_a_state_since_last_year_are_kept(text, category, statement):
    assert [(f.category, f.text) for f in extract(text).facts] == [(category, statement)]


@pytest.mark.parametrize(
    "text",
    [
        "I'm afraid I can't make it tonight",
        "I'm scared of what she'll say",
        "I'm afraid of missing the last train",
        "I'm scared of my landlord",
        "it scares me",
        "my boss scares me",
        "sharks don't scare me",
        "early mornings dont really scare me",
        "I drive a hard bargain",
        "I drive my kids to school",
        "I'm training for it",
        "my hobby is that",
        "my sister's hobby is knitting",
        "if I had time my hobby would be painting",
        "I've had a cold since last week",
        "I went vegan for a week",
    ],
)
def test_their_look_alikes_store_nothing(text):
    assert extract(text).facts == ()


@pytest.mark.parametrize(
    "text, obj",
    [
        ("Red wine? Never liked it.", "red wine"),
        ("mushrooms? never touch them, the texture is just wrong", "mushrooms"),
        ("Football I never liked, even as child", "football"),
        ("Star Wars? never liked it", "Star Wars"),
    ],
)
def test_a_dislike_said_topic_first_is_a_preference(text, obj):
    facts = extract(text).facts
    assert [(f.category, f.text) for f in facts] == [("preference", f"User dislikes {obj}.")]


@pytest.mark.parametrize(
    "text",
    [
        # Plans and people are no tastes; a question word is no topic.
        "Tuesday? can't do it",
        "the meeting? can't do it",
        "my boss? never liked him",
        "what? never liked it",
    ],
)
def test_a_refusal_after_something_that_is_no_topic_states_no_taste(text):
    assert extract(text).facts == ()


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("my aunt's a midwife in Leeds", ["aunt", "midwife"]),
        ("my grandad's from Cork originally", ["grandad", "cork"]),
    ],
)
def test_a_contracted_is_after_a_relative_is_no_possessive(text, tokens):
    # "my aunt's a midwife" says what the aunt is; "my friend's dad" is someone else's.
    facts = default_hybrid_extractor().extract(text).facts
    assert [f for f in facts if all(t in f.text.lower() for t in tokens)]


def test_a_relative_of_someone_elses_stays_out():
    assert not default_hybrid_extractor().extract("my friend's dad is a pilot").facts


@pytest.mark.parametrize(
    "text, category, tokens",
    [
        # A transcript's possessive without its apostrophe, a name in lower case.
        ("my dads name is marco", "relationship", ["dad", "marco"]),
        ("um my grandmas name is rosalind", "relationship", ["grandma", "rosalind"]),
        # "that kind of stuff" closes a list; it hedges nothing.
        ("i watch mostly anime, that kind of stuff", "preference", ["anime"]),
        ("i listen to mostly reggae and that kind of stuff", "preference", ["reggae"]),
        # What "them" points at opens the clause itself.
        (
            "old westerns are my comfort movies i rewatch them every winter",
            "preference",
            ["westerns"],
        ),
    ],
)
def test_a_transcript_shape_the_learned_path_once_dropped_is_kept(text, category, tokens):
    facts = default_hybrid_extractor().extract(text).facts
    assert [f.category for f in facts] == [category], facts
    assert all(t in facts[0].text.lower() for t in tokens), facts


@pytest.mark.parametrize(
    "text",
    ["I kind of like jazz", "I sort of enjoy hiking", "my coworker likes them", "I live there"],
)
def test_a_hedge_or_a_pointer_to_another_clause_still_stores_nothing(text):
    assert not default_hybrid_extractor().extract(text).facts


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "so there's my son felix and he's got type one diabetes",
            "User has a son named Felix, who has type one diabetes.",
        ),
        (
            "my partner sam hes deaf so we mostly sign at home",
            "User's partner is Sam, who is deaf.",
        ),
        (
            "my goddaughter luz she's super into horses",
            "User has a goddaughter named Luz, who is super into horses.",
        ),
        (
            "My husband name is Bogdan, he work like mechanic.",
            "User's husband is Bogdan, who works like mechanic.",
        ),
    ],
)
def test_what_is_said_of_someone_of_the_users_stays_with_them(text: str, fact: str) -> None:
    assert [f.text for f in extract(text).facts] == [fact]


def test_a_name_written_wrong_is_said_of_its_person() -> None:
    result = default_hybrid_extractor().extract(
        "You write my husband name wrong, is Mehdi, not Mehtee."
    )
    assert result.correction is not None and result.correction.meant == "Mehdi"
    assert [f.text for f in result.facts] == ["User's husband is Mehdi."]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I'd rather eat cardboard than another kale salad", "User dislikes kale salad."),
        (
            "i could go my whole life without another brussels sprout",
            "User dislikes brussels sprout.",
        ),
        ("Wouldn't touch a rom-com with a barge pole.", "User dislikes rom-com."),
    ],
)
def test_a_dislike_said_as_an_idiom_is_a_preference(text: str, fact: str) -> None:
    assert [(f.category, f.text) for f in extract(text).facts] == [("preference", fact)]


@pytest.mark.parametrize(
    "text",
    [
        "I'd rather you had too much than too little",
        "I'd rather sit in silence than do five minutes of it",
        "I'd rather stay home than go out tonight",
    ],
)
def test_a_choice_asked_of_the_assistant_or_for_now_is_no_dislike(text: str) -> None:
    assert not any("dislikes" in f.text for f in extract(text).facts)


@pytest.mark.parametrize("text", ["my birthday is on Saturday", "my birthday is next week"])
def test_a_birthday_coming_up_is_no_date_of_the_year(text: str) -> None:
    assert not any("birthday" in f.text for f in extract(text).facts)


@pytest.mark.parametrize(
    "text, fact",
    [
        ("what should I bake for my grandpa? he's coeliac", "User's grandpa is coeliac."),
        (
            "looking for a present for my niece, she loves astronomy",
            "User's niece loves astronomy.",
        ),
        # The person of an errand, named too and said of through "his" before the pronoun.
        (
            "took my son Idris to his judo class, he's eleven",
            "User has a son named Idris, who is eleven.",
        ),
    ],
)
def test_a_pronoun_after_a_request_stands_for_the_person_it_named(text: str, fact: str) -> None:
    assert fact in [f.text for f in default_hybrid_extractor().extract(text).facts]


@pytest.mark.parametrize(
    "text",
    [
        # Someone else named in between may be meant; a pronoun of the other gender is not them.
        "any ideas for my uncle and Priya? she's vegan",
        "what should I cook for my uncle? she's vegan",
    ],
)
def test_a_pronoun_that_may_mean_someone_else_is_not_resolved(text: str) -> None:
    assert not any("uncle is" in f.text for f in default_hybrid_extractor().extract(text).facts)


def test_a_reaction_had_once_is_no_constraint() -> None:
    assert extract("I got airsick on the flight yesterday").facts == ()


def test_a_name_said_again_alone_is_the_person_the_turn_introduced() -> None:
    facts = [
        f.text
        for f in default_hybrid_extractor()
        .extract("my cousin Ravi and I share a flat in Leeds, and Ravi's a pastry chef")
        .facts
    ]
    assert any("Ravi" in fact and "pastry chef" in fact for fact in facts), facts


def test_a_plural_verb_said_of_the_user_is_made_singular() -> None:
    assert conjugate_3sg("are") == "is"
    assert conjugate_3sg("were") == "was"
