"""Closed word classes the rules rely on. Lists of kinds of things, never of test sentences."""

from __future__ import annotations

import re

# Roles of persistent people, longest first so "twin brother" wins over "brother".
# Value: canonical role used in keys.
PERSON_ROLES: dict[str, str] = {
    "mother-in-law": "mother_in_law",
    "father-in-law": "father_in_law",
    "sister-in-law": "sister_in_law",
    "brother-in-law": "brother_in_law",
    "daughter-in-law": "daughter_in_law",
    "son-in-law": "son_in_law",
    # Spoken, the hyphens are not heard: "my mother in law minji".
    "mother in law": "mother_in_law",
    "father in law": "father_in_law",
    "sister in law": "sister_in_law",
    "brother in law": "brother_in_law",
    "daughter in law": "daughter_in_law",
    "son in law": "son_in_law",
    "half brother": "half_brother",
    "half sister": "half_sister",
    "stepbrother": "stepbrother",
    "stepsister": "stepsister",
    "step-brother": "stepbrother",
    "step-sister": "stepsister",
    "godchild": "godchild",
    "godparent": "godparent",
    "grandparent": "grandparent",
    "great-grandma": "great_grandmother",
    "great-grandmother": "great_grandmother",
    "great-grandpa": "great_grandfather",
    "great-grandfather": "great_grandfather",
    "twin brother": "twin_brother",
    "twin sister": "twin_sister",
    "little brother": "brother",
    "little sister": "sister",
    "big brother": "brother",
    "big sister": "sister",
    "older brother": "brother",
    "older sister": "sister",
    "younger brother": "brother",
    "younger sister": "sister",
    "half-brother": "half_brother",
    "half-sister": "half_sister",
    "step-dad": "stepfather",
    "stepdad": "stepfather",
    "stepfather": "stepfather",
    "step-mom": "stepmother",
    "stepmom": "stepmother",
    "stepmother": "stepmother",
    "stepson": "stepson",
    "stepdaughter": "stepdaughter",
    "best friend": "best_friend",
    "best mate": "best_friend",
    "oldest friend": "friend",
    "childhood friend": "friend",
    "close friend": "friend",
    "friend": "friend",
    "buddy": "friend",
    "business partner": "business_partner",
    "partner": "partner",
    "husband": "spouse",
    "wife": "spouse",
    "spouse": "spouse",
    "girlfriend": "partner",
    "boyfriend": "partner",
    "fiance": "partner",
    "fiancé": "partner",
    "fiancee": "partner",
    "fiancée": "partner",
    "mom": "mother",
    "mum": "mother",
    "mother": "mother",
    "mama": "mother",
    "dad": "father",
    "father": "father",
    "papa": "father",
    "sister": "sister",
    "brother": "brother",
    "sibling": "sibling",
    "twin": "twin",
    "son": "son",
    "daughter": "daughter",
    "kid": "child",
    "child": "child",
    "grandkid": "grandchild",
    "grandchild": "grandchild",
    "grandma": "grandmother",
    "grandmother": "grandmother",
    "granny": "grandmother",
    "nana": "grandmother",
    "nan": "grandmother",
    "nanna": "grandmother",
    "gran": "grandmother",
    "nonna": "grandmother",
    "abuela": "grandmother",
    "oma": "grandmother",
    "nonno": "grandfather",
    "abuelo": "grandfather",
    "opa": "grandfather",
    "grandpa": "grandfather",
    "grandfather": "grandfather",
    "grandad": "grandfather",
    "granddad": "grandfather",
    "grandson": "grandson",
    "granddaughter": "granddaughter",
    "aunt": "aunt",
    "auntie": "aunt",
    "uncle": "uncle",
    "cousin": "cousin",
    "niece": "niece",
    "nephew": "nephew",
    "godmother": "godmother",
    "godfather": "godfather",
    "godson": "godson",
    "goddaughter": "goddaughter",
    "roommate": "roommate",
    "flatmate": "roommate",
    "housemate": "roommate",
    "neighbor": "neighbor",
    "neighbour": "neighbor",
    "coworker": "coworker",
    "co-worker": "coworker",
    "colleague": "coworker",
    "boss": "manager",
    "manager": "manager",
    "supervisor": "manager",
    "right hand": "right_hand",
    "right-hand man": "right_hand",
    "right-hand woman": "right_hand",
    "assistant": "assistant",
    "employee": "employee",
    "intern": "intern",
    "coach": "coach",
    "trainer": "trainer",
    "mentor": "mentor",
    "tutor": "tutor",
    "therapist": "therapist",
    "psychiatrist": "psychiatrist",
    "doctor": "doctor",
    "dentist": "dentist",
    "physio": "physiotherapist",
    # The people who look after the user, by trade: "my accountant Graham", "my GP Dr Hale".
    "physiotherapist": "physiotherapist",
    "physical therapist": "physiotherapist",
    "chiropractor": "chiropractor",
    "gp": "doctor",
    "family doctor": "doctor",
    "pediatrician": "pediatrician",
    "paediatrician": "pediatrician",
    "surgeon": "surgeon",
    "specialist": "specialist",
    "cardiologist": "specialist",
    "oncologist": "specialist",
    "neurologist": "specialist",
    "dermatologist": "specialist",
    "rheumatologist": "specialist",
    "endocrinologist": "specialist",
    "nurse": "nurse",
    "midwife": "midwife",
    "counsellor": "therapist",
    "counselor": "therapist",
    "psychologist": "therapist",
    "carer": "carer",
    "caregiver": "carer",
    "pharmacist": "pharmacist",
    "optician": "optician",
    "vet": "vet",
    "accountant": "accountant",
    "lawyer": "lawyer",
    "solicitor": "lawyer",
    "attorney": "lawyer",
    "financial advisor": "financial_advisor",
    "financial adviser": "financial_advisor",
    "advisor": "advisor",
    "adviser": "advisor",
    "hairdresser": "hairdresser",
    "barber": "hairdresser",
    "stylist": "hairdresser",
    "cleaner": "cleaner",
    "housekeeper": "cleaner",
    "gardener": "gardener",
    "teacher": "teacher",
    "instructor": "teacher",
    "professor": "teacher",
    "lecturer": "teacher",
    "headteacher": "teacher",
    "teammate": "teammate",
    "classmate": "classmate",
    "bandmate": "bandmate",
    "bestie": "best_friend",
    "bff": "best_friend",
    "pal": "friend",
    "priest": "priest",
    "vicar": "priest",
    "landlord": "landlord",
    "landlady": "landlord",
    "sponsor": "sponsor",
    "pastor": "pastor",
    "rabbi": "rabbi",
    "imam": "imam",
    "nanny": "nanny",
    "babysitter": "babysitter",
    "ex": "ex",
    "ex-wife": "ex_spouse",
    "ex-husband": "ex_spouse",
    # Spoken, the hyphen is not heard: "my ex wife jolene".
    "ex wife": "ex_spouse",
    "ex husband": "ex_spouse",
    "ex-girlfriend": "ex",
    "ex-boyfriend": "ex",
    "ex girlfriend": "ex",
    "ex boyfriend": "ex",
    "dog": "pet_dog",
    "cat": "pet_cat",
    "puppy": "pet_dog",
    "kitten": "pet_cat",
    # Pets are persistent companions (fixtures/extraction/README.md): kept by kind or breed.
    "greyhound": "pet_dog",
    "beagle": "pet_dog",
    "labrador": "pet_dog",
    "husky": "pet_dog",
    "terrier": "pet_dog",
    "poodle": "pet_dog",
    "collie": "pet_dog",
    "border collie": "pet_dog",
    "spaniel": "pet_dog",
    "retriever": "pet_dog",
    "whippet": "pet_dog",
    "lurcher": "pet_dog",
    "dachshund": "pet_dog",
    "pug": "pet_dog",
    "tabby": "pet_cat",
    "parrot": "pet",
    "rabbit": "pet",
    "bunny": "pet",
    "hamster": "pet",
    "tortoise": "pet",
    "horse": "pet",
    "pony": "pet",
    "guinea pig": "pet",
    "ferret": "pet",
    "budgie": "pet",
    "corgi": "pet_dog",
    "labradoodle": "pet_dog",
    "cockapoo": "pet_dog",
    "goldendoodle": "pet_dog",
    "bulldog": "pet_dog",
    "french bulldog": "pet_dog",
    "frenchie": "pet_dog",
    "chihuahua": "pet_dog",
    "schnauzer": "pet_dog",
    "rottweiler": "pet_dog",
    "dalmatian": "pet_dog",
    "staffie": "pet_dog",
    "pit bull": "pet_dog",
    "pitbull": "pet_dog",
    "german shepherd": "pet_dog",
    "sheepdog": "pet_dog",
    "jack russell": "pet_dog",
    "shih tzu": "pet_dog",
    "great dane": "pet_dog",
    "siamese": "pet_cat",
    "maine coon": "pet_cat",
    "ragdoll": "pet_cat",
    "goldfish": "pet",
    "turtle": "pet",
    "gecko": "pet",
    "bearded dragon": "pet",
    "cockatiel": "pet",
    "canary": "pet",
    "snake": "pet",
}
# The roles that say how a person is related to the user (family, partner, friend), of which one
# person holds one: "Ahmed's my uncle. Not grandad." fixes a role, where "a dog, not a cat" does not.
KIN_ROLES = frozenset(
    """mother father brother sister sibling aunt uncle cousin niece nephew son daughter child
    grandmother grandfather grandparent great_grandmother great_grandfather grandchild grandson
    granddaughter spouse partner ex ex_spouse mother_in_law father_in_law sister_in_law
    brother_in_law daughter_in_law son_in_law stepmother stepfather stepbrother stepsister stepson
    stepdaughter half_brother half_sister godmother godfather godparent godchild goddaughter godson
    twin twin_brother twin_sister friend best_friend""".split()
)
# The roles as a regular-expression alternation, longest first ("twin brother" before "brother").
PERSON_ROLE_ALTERNATION = "|".join(
    re.escape(role) for role in sorted(PERSON_ROLES, key=lambda role: (-len(role), role))
)
# Titles said before a name ("Mrs. Adeyemi", "Dr Paz"): no part of a name corrected.
TITLE_WORDS = "mr|mrs|ms|mx|miss|dr|prof"
# What a phone or a speaker holds: things an erase, a reset or a "resume" said of them is
# about, not the memory or a conversation.
DEVICE_ITEMS = (
    "e-?mails?|texts?|messages?|voicemails?|alarms?|timers?|photos?|videos?|songs?|tracks?|"
    "playlists?|podcasts?|audiobooks?|episodes?|downloads?|tabs?"
)
# A title written before a name ("Dr. ", "Mrs "), and a capitalised name of one or two words
# after one, as case-sensitive pattern pieces.
NAME_TITLE = r"(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)"
TITLED_NAME = rf"{NAME_TITLE}?[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?"
# Words whose "'s" is "is" (or "us"), never a possessive: "it's", "that's", "let's".
S_CONTRACTED_WORDS = "it|that|this|there|here|what|who|where|how|he|she|let"
ROLE_MODIFIERS = ("old", "former", "new", "longtime", "long-time", "personal", "family", "work")
# Roles a person normally has one of, rendered "User's <role> is <Name>".
SINGULAR_ROLES = frozenset(
    {
        "spouse",
        "partner",
        "mother",
        "father",
        "stepfather",
        "stepmother",
        "mother_in_law",
        "father_in_law",
        "manager",
        "doctor",
        "dentist",
        "therapist",
        "psychiatrist",
        "landlord",
        "sponsor",
        "right_hand",
        "coach",
        "mentor",
        "best_friend",
    }
)

# Words that cannot be a name even when they follow a role word.
NOT_A_NAME = frozenset(
    """
a an the and or but so is are was were be been being has have had do does did will would can
could should shall may might must not never always just who whom whose which that this these those
to in on at for from with of by about as into over under after before again too also still even
finally really very here there now then today tonight tomorrow yesterday says said say told tells
called calls got gets get keeps kept thinks thought wants wanted loves likes hates lives lived
works worked knows knew goes went came comes is's it it's its he she they them his her their him
makes gives takes drives needs sends puts teaches runs owns
i me my we us our you your last next every some all over back home right later soon first
either anyway though well please lol haha yeah yes no ok okay won made took gave left ran bought
sent brought found lost broke fell met saw came went did put set let cut hit quit wrote drove ate
drank sang swam began felt slept paid heard built spent taught caught fought sold held stood hurt
read wore threw grew flew drew chose woke forgot forgets doing being having getting going
since because when where while until whom whenever if than like once
tongue language figure jeans jokes joke side nature city country company group chat cooking house
place car birthday wedding funeral recital anniversary party family friends kids stuff things
visit office orders account phone number schedule advice bill clinic checkup check-up shift
practice team side's name names
hes shes theyre thats dont cant wont didnt isnt doesnt wasnt arent
already currently forever anymore ago
oh ah uh um erm hmm hey hi hello wow aw ugh nah yep nope up down out off away around
how what why whatever whoever
flat apartment room app burnt burned

""".split()
)

DEMONYMS = frozenset(
    """
american british english scottish welsh irish canadian mexican brazilian argentinian argentine
chilean colombian peruvian venezuelan cuban jamaican haitian dominican puerto-rican french german
dutch belgian swiss austrian italian spanish portuguese greek turkish polish czech slovak
hungarian romanian bulgarian serbian croatian bosnian ukrainian russian belarusian lithuanian
latvian estonian finnish swedish norwegian danish icelandic egyptian moroccan algerian tunisian
libyan nigerian ghanaian kenyan ethiopian eritrean somali sudanese ugandan tanzanian rwandan
congolese cameroonian senegalese south-african zimbabwean israeli palestinian lebanese syrian
jordanian iraqi iranian persian saudi emirati yemeni afghan pakistani indian bangladeshi
sri-lankan nepali chinese japanese korean vietnamese thai filipino filipina indonesian malaysian
singaporean taiwanese mongolian australian kiwi armenian georgian azerbaijani kazakh uzbek
""".split()
)
RELIGIONS = frozenset(
    """
buddhist muslim christian catholic protestant orthodox jewish hindu sikh jain atheist agnostic
mormon quaker evangelical baptist methodist lutheran anglican pagan shinto taoist bahai
""".split()
)

# Self-descriptions stated with "I'm <adjective>": word -> (category, key).
DURABLE_ADJECTIVES: dict[str, tuple[str, str]] = {
    "vegan": ("constraint", "constraint.diet"),
    "vegetarian": ("constraint", "constraint.diet"),
    "pescatarian": ("constraint", "constraint.diet"),
    "pescetarian": ("constraint", "constraint.diet"),
    "keto": ("constraint", "constraint.diet"),
    "paleo": ("constraint", "constraint.diet"),
    "gluten-free": ("constraint", "constraint.diet.gluten"),
    "gluten free": ("constraint", "constraint.diet.gluten"),
    "celiac": ("constraint", "constraint.medical.celiac"),
    "coeliac": ("constraint", "constraint.medical.celiac"),
    "lactose intolerant": ("constraint", "constraint.diet.lactose"),
    "lactose-intolerant": ("constraint", "constraint.diet.lactose"),
    "diabetic": ("constraint", "constraint.medical.diabetes"),
    "type 1 diabetic": ("constraint", "constraint.medical.diabetes"),
    "type 2 diabetic": ("constraint", "constraint.medical.diabetes"),
    "epileptic": ("constraint", "constraint.medical.epilepsy"),
    "asthmatic": ("constraint", "constraint.medical.asthma"),
    "hiv positive": ("constraint", "constraint.medical.hiv"),
    "hiv-positive": ("constraint", "constraint.medical.hiv"),
    "colorblind": ("constraint", "constraint.accessibility.vision"),
    "colourblind": ("constraint", "constraint.accessibility.vision"),
    "color blind": ("constraint", "constraint.accessibility.vision"),
    "colour blind": ("constraint", "constraint.accessibility.vision"),
    "deaf": ("constraint", "constraint.accessibility.hearing"),
    "hard of hearing": ("constraint", "constraint.accessibility.hearing"),
    "blind": ("constraint", "constraint.accessibility.vision"),
    "visually impaired": ("constraint", "constraint.accessibility.vision"),
    "dyslexic": ("constraint", "constraint.accessibility.reading"),
    "dyspraxic": ("constraint", "constraint.accessibility.coordination"),
    "claustrophobic": ("constraint", "constraint.fear.enclosed_spaces"),
    "agoraphobic": ("constraint", "constraint.fear.open_spaces"),
    "acrophobic": ("constraint", "constraint.fear.heights"),
    "prediabetic": ("constraint", "constraint.medical.diabetes"),
    "pre-diabetic": ("constraint", "constraint.medical.diabetes"),
    "hypoglycemic": ("constraint", "constraint.medical.hypoglycemia"),
    "hypoglycaemic": ("constraint", "constraint.medical.hypoglycemia"),
    "anemic": ("constraint", "constraint.medical.anemia"),
    "anaemic": ("constraint", "constraint.medical.anemia"),
    "immunocompromised": ("constraint", "constraint.medical.immune"),
    "bipolar": ("constraint", "constraint.medical.mental_health"),
    "photosensitive": ("constraint", "constraint.medical.photosensitivity"),
    "insulin-dependent": ("constraint", "constraint.medical.diabetes"),
    "autistic": ("identity", "identity.trait.autism"),
    "sober": ("constraint", "constraint.sobriety"),
    "teetotal": ("constraint", "constraint.sobriety"),
    "left-handed": ("identity", "identity.trait.handedness"),
    # Lasting ways of being, said of oneself ("I am very shy person since always").
    "shy": ("identity", "identity.trait"),
    "outgoing": ("identity", "identity.trait"),
    "sociable": ("identity", "identity.trait"),
    "introvert": ("identity", "identity.trait"),
    "extrovert": ("identity", "identity.trait"),
    "organised": ("identity", "identity.trait"),
    "organized": ("identity", "identity.trait"),
    "disorganised": ("identity", "identity.trait"),
    "disorganized": ("identity", "identity.trait"),
    "messy": ("identity", "identity.trait"),
    "tidy": ("identity", "identity.trait"),
    "punctual": ("identity", "identity.trait"),
    "forgetful": ("identity", "identity.trait"),
    "clumsy": ("identity", "identity.trait"),
    "competitive": ("identity", "identity.trait"),
    "easygoing": ("identity", "identity.trait"),
    "easy-going": ("identity", "identity.trait"),
    "laid-back": ("identity", "identity.trait"),
    "talkative": ("identity", "identity.trait"),
    "chatty": ("identity", "identity.trait"),
    "indecisive": ("identity", "identity.trait"),
    "right-handed": ("identity", "identity.trait.handedness"),
    "left handed": ("identity", "identity.trait.handedness"),
    "right handed": ("identity", "identity.trait.handedness"),
    "ambidextrous": ("identity", "identity.trait.handedness"),
    "retired": ("identity", "identity.occupation"),
    "self-employed": ("identity", "identity.occupation"),
    "unemployed": ("identity", "identity.occupation"),
    "introverted": ("identity", "identity.trait.introversion"),
    "extroverted": ("identity", "identity.trait.introversion"),
    "bilingual": ("identity", "identity.language.spoken"),
    "trilingual": ("identity", "identity.language.spoken"),
    "married": ("identity", "identity.marital_status"),
    "divorced": ("identity", "identity.marital_status"),
    "widowed": ("identity", "identity.marital_status"),
    "single": ("identity", "identity.marital_status"),
    "nonbinary": ("identity", "identity.gender"),
    "non-binary": ("identity", "identity.gender"),
    "trans": ("identity", "identity.gender"),
    "gay": ("identity", "identity.orientation"),
    "bisexual": ("identity", "identity.orientation"),
    "lesbian": ("identity", "identity.orientation"),
}


def durable_adjective_alternation(category: str | None = None) -> str:
    """The durable adjectives of a category (all of them without one) as a regular-expression
    alternation, longest first ("type 2 diabetic" before "diabetic")."""
    return "|".join(
        re.escape(adjective)
        for adjective, (of, _) in sorted(DURABLE_ADJECTIVES.items(), key=lambda a: -len(a[0]))
        if category is None or of == category
    )


DIET_WORDS = frozenset(
    k for k, v in DURABLE_ADJECTIVES.items() if v[1].startswith("constraint.diet")
)

# Nouns after "I'm a/an ..." that describe a preference rather than who the user is.
FANDOM_NOUNS = frozenset(
    {
        "fan",
        "junkie",
        "addict",
        "lover",
        "buff",
        "fiend",
        "fanatic",
        "nut",
        "enthusiast",
        "sucker",
        "aficionado",
        "connoisseur",
        "snob",
        "devotee",
        "stan",
        "nerd",
        "geek",
        "metalhead",
    }
)
# "I'm a <X> person": these X describe a trait (identity); any other X is a preference.
TRAIT_PERSONS = frozenset(
    {
        "morning",
        "night",
        "people",
        "early",
        "details",
        "detail",
        "numbers",
        "big-picture",
        "glass-half-full",
        "routine",
        "spontaneous",
    }
)
# The words a fear is said with ("afraid of flying", "petrified of dogs").
FEAR_ADJECTIVES = r"afraid|scared|terrified|frightened|petrified"
# "a very private person", "a really patient guy": a word said with an intensifier before it
# is a quality, so the person it makes is a trait; "a dog person" names a taste.
_INTENSIFIERS = frozenset("very really pretty quite super extremely fairly incredibly".split())


def is_trait_person(words: list[str]) -> bool:
    """Whether words ending in "person" ("guy", "girl") name a trait of the user's (an
    intensifier in lower case: "a Chennai Super Kings guy" is a fan)."""
    return len(words) >= 2 and (
        words[-2].lower() in TRAIT_PERSONS or (len(words) >= 3 and words[-3] in _INTENSIFIERS)
    )


IDENTITY_NOUNS_AS_TRAITS = frozenset(
    {
        "introvert",
        "extrovert",
        "ambivert",
        "night owl",
        "early bird",
        "homebody",
        "perfectionist",
        "optimist",
        "pessimist",
        "worrier",
        "overthinker",
        "neat freak",
    }
)

# Words that make "I'm a <X>" a transient or evaluative remark, not an identity.
NON_IDENTITY_NOUNS = frozenset(
    {
        "mess",
        "wreck",
        "bit",
        "little",
        "lot",
        "fool",
        "idiot",
        "genius",
        "disaster",
        "hot mess",
        "zombie",
        "pro",
        "legend",
        "joke",
        "nightmare",
        "natural",
        "finalist",
        "winner",
        "guest",
        "contestant",
        "participant",
        "nominee",
        "candidate",
        "passenger",
        "customer",
        "visitor",
        "tourist",
        "attendee",
        "minute",
        "hour",
        "day",
        "week",
        "second",
        "few",
        "couple",
        "away",
        "late",
        "behind",
        "ahead",
        "runner-up",
    }
)

MEDICAL_CONDITIONS = frozenset(
    {
        "epilepsy",
        "diabetes",
        "asthma",
        "adhd",
        "add",
        "depression",
        "anxiety",
        "bipolar",
        "hypothyroidism",
        "hyperthyroidism",
        "thyroid",
        "arthritis",
        "celiac disease",
        "crohn's",
        "ibs",
        "migraines",
        "migraine",
        "lupus",
        "ms",
        "multiple sclerosis",
        "ptsd",
        "ocd",
        "high blood pressure",
        "hypertension",
        "heart condition",
        "tinnitus",
        "fibromyalgia",
        "endometriosis",
        "pcos",
        "sleep apnea",
        "insomnia",
        "narcolepsy",
        "scoliosis",
        "gout",
        "psoriasis",
        "eczema",
        "copd",
        "kidney disease",
        "chronic pain",
        "chronic fatigue",
        "blood pressure",
        "cholesterol",
        "osteoporosis",
        "hearing loss",
        "vertigo",
        "dyslexia",
        "a pacemaker",
        "a heart murmur",
        "a disability",
        "hemophilia",
        "sickle cell",
        "dementia",
        "alzheimer's",
        "parkinson's",
        "autism",
        "hiv",
        "celiac",
        "coeliac",
        "coeliac disease",
        "cancer",
        "glaucoma",
        "cystic fibrosis",
        "cerebral palsy",
        "long covid",
        "heart disease",
        "anemia",
        "anaemia",
        "sciatica",
        "hepatitis",
        "emphysema",
        "tourette's",
        "spina bifida",
        "macular degeneration",
        "diverticulitis",
    }
)
# Longest first, so "celiac disease" is matched whole before a shorter name inside it.
MEDICAL_CONDITION_ALTERNATION = "|".join(
    re.escape(c) for c in sorted(MEDICAL_CONDITIONS, key=len, reverse=True)
)
BODY_PARTS = frozenset(
    {
        "back",
        "knee",
        "knees",
        "hip",
        "hips",
        "shoulder",
        "shoulders",
        "ankle",
        "ankles",
        "wrist",
        "wrists",
        "neck",
        "heart",
        "foot",
        "feet",
        "eyes",
        "hearing",
        "eyesight",
        "lungs",
    }
)
TRANSIENT_AILMENTS = frozenset(
    {
        "cold",
        "flu",
        "fever",
        "headache",
        "hangover",
        "cough",
        "sore throat",
        "covid",
        "stomach bug",
        "rash",
        "cramps",
    }
)

# Verbs whose negation ("I don't <verb>") states a durable limitation.
LIMITATION_VERBS = frozenset(
    {
        "drive",
        "drink",
        "smoke",
        "swim",
        "eat",
        "cook",
        "fly",
        "bike",
        "cycle",
        "vape",
        "gamble",
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

PLATFORMS = frozenset(
    {
        "iphone",
        "android",
        "windows",
        "mac",
        "macos",
        "linux",
        "ubuntu",
        "pixel",
        "samsung",
        "chromebook",
        "ipad",
        "pc",
        "apple watch",
        "fitbit",
        "garmin",
        "alexa",
        "google home",
        "kindle",
        "mac and iphone",
    }
)
DEVICE_NOUNS = (
    "work laptop",
    "laptop",
    "phone",
    "work phone",
    "computer",
    "pc",
    "tablet",
    "watch",
    "smartwatch",
    "car",
    "tv",
    "desktop",
    "hearing aid",
    "wheelchair",
)

LANGUAGES = frozenset(
    """
english spanish french german italian portuguese dutch swedish norwegian danish finnish polish
czech russian ukrainian greek turkish arabic hebrew farsi persian hindi urdu bengali punjabi
tamil telugu marathi gujarati kannada malayalam nepali sinhala mandarin cantonese chinese
japanese korean vietnamese thai indonesian malay tagalog filipino swahili amharic yoruba igbo
hausa zulu xhosa afrikaans somali romanian hungarian bulgarian serbian croatian catalan basque
welsh irish gaelic icelandic estonian latvian lithuanian georgian armenian kurdish pashto
""".split()
)

MUSICAL_INSTRUMENTS = frozenset(
    """
piano guitar bass cello violin viola drums flute clarinet saxophone sax trumpet trombone harp
ukulele banjo mandolin oboe bassoon keyboard organ accordion harmonica tuba sitar
""".split()
)

# Places one goes back to ("back to the hotel", "going back home"): "back to" one of them is a
# way, never a conversation to resume (the command rules and the command reader both ask).
PLACES_GONE_BACK_TO = (
    "home|house|hotel|office|work|school|college|class|gym|bed|sleep|city|town|country|beach|"
    "car|airport|station|store|shop|flat|apartment|place|room|kitchen|hospital|doctor|dentist|"
    "restaurant|cafe|bar|club|park|camp|cabin|museum|mall|market|church|pool|lake|mountains?|"
    "island|village"
)
WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
# Time words naming holidays or calendar units rather than places.
NON_PLACE_CAPITALS = (
    frozenset(
        "christmas easter thanksgiving ramadan eid diwali hanukkah passover halloween new year i".split()
    )
    | MONTHS
    | WEEKDAYS
)

EMOTION_WORDS = frozenset(
    """
happy sad angry mad upset stressed anxious nervous worried excited thrilled tired exhausted
wiped bored lonely annoyed frustrated overwhelmed scared afraid grumpy cranky hungry sick
sleepy drained exhausted furious ecstatic miserable depressed down glad proud relieved
""".split()
)

GENERIC_OBJECTS = frozenset(
    {
        "texture",
        "taste",
        "smell",
        "idea",
        "thing",
        "way",
        "feeling",
        "vibe",
        "sound",
        "look",
        "part",
        "one",
        "stuff",
        "fact",
    }
)

UNIT_SYSTEMS: dict[str, str] = {
    "metric": "measurement",
    "imperial": "measurement",
    "celsius": "temperature",
    "fahrenheit": "temperature",
    "kilometers": "distance",
    "kilometres": "distance",
    "miles": "distance",
    "kilograms": "weight",
    "kilos": "weight",
    "grams": "weight",
    "ounces": "weight",
    "cups": "volume",
    "pounds": "weight",
    "euros": "currency",
    "euro": "currency",
    "dollars": "currency",
    "pounds sterling": "currency",
    "yen": "currency",
    "rupees": "currency",
    "24-hour": "time_format",
    "24 hour": "time_format",
    "12-hour": "time_format",
    "military time": "time_format",
}

# What people are commonly allergic or intolerant to: the thing an allergy said without its
# object points back at ("the whole menu was shellfish and I'm allergic").
ALLERGENS = frozenset(
    """
peanut peanuts nut nuts tree nuts cashew cashews almond almonds walnut walnuts pistachio
pistachios hazelnut hazelnuts pecan pecans shellfish shrimp prawns prawn crab lobster
mussels oysters clams fish salmon tuna sesame tahini soy soya egg eggs dairy milk lactose
wheat gluten celery mustard lupin sulphites sulfites kiwi strawberries strawberry
penicillin amoxicillin aspirin ibuprofen sulfa codeine latex bees bee stings wasps pollen
dust mites cats dogs mold mould
""".split()
)

# The verbs a standing instruction to the assistant starts with ("use the 24-hour clock").
INSTRUCTION_VERBS = (
    "use|give|answer|reply|respond|talk|speak|write|keep|call|address|show|send|format|spell|"
    "put|list|explain|skip|avoid|include|add|default|convert|say|tell|refer|read|quote|round|"
    "measure|display|ask|check|double-check|stick|start|end|sign|text|email|schedule|book|"
    "plan|cite"
)
