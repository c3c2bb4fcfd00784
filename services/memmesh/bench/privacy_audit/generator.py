"""A seeded conversation script for the privacy audit.

Every user talks in sessions, one block of turns per session: plain facts that stay
(controls), and facts followed by a privacy command spoken in a turn or sent through
`Command`, each command kind in several phrasings. Every private value is a marker: a
made-up word (names, places, conditions, streets, passwords) or a long number (PINs)
that occurs nowhere else, so any copy of it found later is unambiguous.

For each marker the script records what the user asked for and from which step on:
FORGOTTEN markers must exist nowhere the mesh wrote (databases, caches, logs, spans)
and in no Brief; UNMENTIONABLE markers must appear in no Brief. A marker only ever
occurs in turns its command clearly covers (the fact turns of that subject, that
session, or that user), never in the command turn itself.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum

SECOND_US = 1_000_000
START_US = 1_767_225_600 * SECOND_US  # 2026-01-01T00:00:00Z
SESSION_GAP_US = 6 * 3600 * SECOND_US
TURN_GAP_US = 40 * SECOND_US


class Fate(Enum):
    """What the user asked for a marker."""

    KEPT = "kept"  # no command covers it: a control that must still be found where stored
    FORGOTTEN = "forgotten"  # must exist nowhere (storage, caches, logs, spans, Briefs)
    UNMENTIONABLE = "unmentionable"  # must appear in no Brief


@dataclass
class Marker:
    """One private value and what the user asked for it (fate, from which step on)."""

    text: str
    kind: str  # name, place, condition, street, password, pin
    user_id: str
    block: str  # the scenario that introduced it
    fate: Fate = Fate.KEPT
    # The block whose command set the fate ("forget_everything" may override another's).
    rule: str = ""
    # Index in the user's steps of the command that set the fate; Briefs after it are judged.
    effective_step: int | None = None

    @property
    def numeric(self) -> bool:
        return self.text.isdigit()


@dataclass(frozen=True)
class Step:
    """One call through the gateway: ingest a turn, run a command, or ask for a Brief."""

    kind: str  # "ingest", "command", "brief"
    session_id: str
    time_us: int
    text: str = ""  # the turn (ingest) or the query (brief)
    command: str = ""  # the UserCommand name without its prefix (command)
    target: str = ""  # the command's target (command)
    role: str = "user"
    probe: str = ""  # for briefs: "same_session" or "new_session"


@dataclass
class UserScript:
    user_id: str
    steps: list[Step] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)


@dataclass
class Script:
    seed: int
    tag: str
    users: list[UserScript]
    forget_everything_command: str | None

    @property
    def turns(self) -> int:
        return sum(1 for u in self.users for s in u.steps if s.kind == "ingest")

    @property
    def markers(self) -> list[Marker]:
        return [m for u in self.users for m in u.markers]

    def summary(self) -> dict[str, int]:
        steps = [s for u in self.users for s in u.steps]
        return {
            "users": len(self.users),
            "turns": self.turns,
            "commands_sent": sum(1 for s in steps if s.kind == "command"),
            "briefs": sum(1 for s in steps if s.kind == "brief"),
            "markers_forgotten": sum(1 for m in self.markers if m.fate is Fate.FORGOTTEN),
            "markers_unmentionable": sum(1 for m in self.markers if m.fate is Fate.UNMENTIONABLE),
            "markers_kept": sum(1 for m in self.markers if m.fate is Fate.KEPT),
        }


# Relations a command may name; none is a substring of another, so "forget what I told
# you about my aunt" cannot be read as covering another block's subject.
COMMAND_RELATIONS = (
    "sister",
    "brother",
    "cousin",
    "aunt",
    "uncle",
    "niece",
    "nephew",
    "boss",
    "dentist",
    "therapist",
    "neighbor",
    "roommate",
    "landlord",
    "mentor",
    "stepdad",
    "tutor",
)
# Relations of the kept controls: never named by a command.
KEPT_RELATIONS = ("colleague", "teammate", "classmate", "pharmacist", "barber", "vet")
FILLER = (
    "I really love hiking on weekends.",
    "What's the weather like tomorrow?",
    "Can you help me write a short poem about autumn?",
    "I prefer tea over coffee.",
    "Thanks, that was helpful!",
    "I play the guitar most evenings.",
    "Remind me to water the plants.",
    "I'm trying to read more novels this year.",
)
_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_ACCENTED = "éøåüñ"
_TAG_HEADS = ("Zy", "Xo", "Qy", "Jy", "Vy", "Xa", "Zu", "Qo", "Xu", "Zo")


class _Words:
    """Unique made-up words for one run: every one starts with the run's tag and no
    word's matching core (the word less its last letter) is a prefix of another's."""

    def __init__(self, rng: random.Random, tag: str) -> None:
        self._rng, self.tag, self._cores = rng, tag, set[str]()

    def word(self, accented: bool = False) -> str:
        while True:
            syllables = [
                self._rng.choice(_CONSONANTS) + self._rng.choice(_VOWELS)
                for _ in range(self._rng.randint(2, 3))
            ]
            if accented:
                syllables[0] = syllables[0][0] + self._rng.choice(_ACCENTED)
            word = self.tag + "".join(syllables) + self._rng.choice("aeo")
            core = core_of(word)
            if not any(core.startswith(c) or c.startswith(core) for c in self._cores):
                self._cores.add(core)
                return word[0].upper() + word[1:]

    def pin(self) -> str:
        return str(self._rng.randint(10**8, 10**9 - 1))


def core_of(marker: str) -> str:
    """The part of a marker searched for: the whole number, or its made-up word less the
    last letter (so a stemmed or inflected copy is found too), lower-cased."""
    word = marker.split()[0]
    return word if word.isdigit() else word[:-1].lower()


def _pick(rng: random.Random, options: tuple[str, ...]) -> str:
    return rng.choice(options)


@dataclass
class _Builder:
    """Builds one user's steps; each block is a session."""

    user_id: str
    rng: random.Random
    words: _Words
    forget_everything_command: str | None
    steps: list[Step] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    session: int = 0
    clock: int = START_US
    relations: list[str] = field(default_factory=list)
    kept_relations: list[str] = field(default_factory=list)
    use_command_rpc: bool = False

    def __post_init__(self) -> None:
        self.relations = list(COMMAND_RELATIONS)
        self.rng.shuffle(self.relations)
        self.kept_relations = list(KEPT_RELATIONS)
        self.rng.shuffle(self.kept_relations)

    # -- primitives -------------------------------------------------------------------
    def _new_session(self, probe: str) -> None:
        """A new session, opened by a Brief half of the time (every command before it is
        judged there, in a session other than its own)."""
        self.session += 1
        self.clock += SESSION_GAP_US
        if probe and self.rng.random() < 0.5:
            self.brief(probe, "new_session")

    @property
    def session_id(self) -> str:
        return f"{self.user_id}-s{self.session:02d}"

    def _tick(self) -> int:
        self.clock += TURN_GAP_US
        return self.clock

    def say(self, text: str) -> None:
        self.steps.append(Step("ingest", self.session_id, self._tick(), text=text))

    def reply(self, text: str) -> None:
        self.steps.append(
            Step("ingest", self.session_id, self._tick(), text=text, role="assistant")
        )

    def command(self, name: str, target: str = "") -> None:
        self.steps.append(
            Step("command", self.session_id, self._tick(), command=name, target=target)
        )

    def brief(self, query: str, probe: str = "same_session") -> None:
        self.steps.append(Step("brief", self.session_id, self._tick(), text=query, probe=probe))

    def marker(self, text: str, kind: str, block: str) -> Marker:
        found = Marker(text, kind, self.user_id, block)
        self.markers.append(found)
        return found

    def name(self, block: str) -> Marker:
        return self.marker(self.words.word(accented=self.rng.random() < 0.25), "name", block)

    def place(self, block: str) -> Marker:
        return self.marker(self.words.word(), "place", block)

    def settle(self, markers: list[Marker], fate: Fate, rule: str) -> None:
        """The command just added (the last step) sets the fate of these markers."""
        for found in markers:
            if found.fate is Fate.FORGOTTEN:
                continue  # already forgotten: judged from the first command on
            if found.effective_step is None:
                found.effective_step = len(self.steps) - 1
            found.fate, found.rule = fate, rule

    def filler(self) -> None:
        self.say(_pick(self.rng, FILLER))

    def via_rpc(self) -> bool:
        """Alternate spoken and `Command` forms of the same command kind."""
        self.use_command_rpc = not self.use_command_rpc
        return self.use_command_rpc

    # -- blocks -----------------------------------------------------------------------
    def kept_fact(self) -> None:
        """A fact no command covers (a control: it must still be found where stored)."""
        self._new_session("")
        relation = self.kept_relations.pop() if self.kept_relations else "friend"
        person, place = self.name("kept"), self.place("kept")
        self.say(
            _pick(
                self.rng,
                (
                    f"My {relation} {person.text} just moved to {place.text}.",
                    f"My {relation} is called {person.text} and lives in {place.text}.",
                    f"I had lunch with my {relation} {person.text} in {place.text}.",
                ),
            )
        )
        self.filler()

    def forget_last(self) -> None:
        """A fact, then "forget that" about it (deictic)."""
        self._new_session("anything I should remember today?")
        relation = self.relations.pop()
        person, place = self.name("forget_last"), self.place("forget_last")
        self.filler()
        self.say(
            _pick(
                self.rng,
                (
                    f"My {relation} {person.text} lives in {place.text}.",
                    f"By the way, my {relation}'s name is {person.text} and she's from {place.text}.",
                    f"I'm visiting my {relation} {person.text} in {place.text} next month.",
                ),
            )
        )
        if self.via_rpc():
            self.command("FORGET")
        else:
            self.say(
                _pick(
                    self.rng,
                    (
                        "Actually, forget that.",
                        "Please delete that.",
                        "Hmm, scrub that, forget that memory.",
                        "Can you erase that fact?",
                    ),
                )
            )
        self.settle([person, place], Fate.FORGOTTEN, "forget_last")
        self.brief(f"Who is my {relation} and where do they live?")

    def forget_topic(self) -> None:
        """Two facts about one person, a filler, then "forget what I told you about my X"."""
        self._new_session("what's new?")
        relation = self.relations.pop()
        person, street = (
            self.name("forget_topic"),
            self.marker(self.words.word(), "street", "forget_topic"),
        )
        number = self.rng.randint(2, 98)
        self.say(f"My {relation} is {person.text}.")
        self.say(
            _pick(
                self.rng,
                (
                    f"My {relation} {person.text} lives at {number} {street.text} Lane.",
                    f"My {relation}'s address is {number} {street.text} Road.",
                ),
            )
        )
        self.filler()
        if self.via_rpc():
            self.command("FORGET", relation)
        else:
            self.say(
                _pick(
                    self.rng,
                    (
                        f"Please forget what I told you about my {relation}.",
                        f"Forget everything I said about my {relation}.",
                        f"Actually, forget about my {relation}.",
                        f"Can you forget what I mentioned about my {relation}?",
                    ),
                )
            )
        self.settle([person, street], Fate.FORGOTTEN, "forget_topic")
        self.brief(f"What's my {relation}'s address?")

    def do_not_store_spoken(self) -> None:
        """A secret said with "don't remember this" / "off the record" in the same turn."""
        self._new_session("hi again")
        kind = self.rng.choice(("password", "pin", "condition"))
        if kind == "password":
            secret = self.marker(
                self.words.word() + str(self.rng.randint(10, 99)), "password", "dns"
            )
            fact = f"my email password is {secret.text}"
        elif kind == "pin":
            secret = self.marker(self.words.pin(), "pin", "dns")
            fact = f"my bank PIN is {secret.text}"
        else:
            secret = self.marker(self.words.word() + " syndrome", "condition", "dns")
            fact = f"I was diagnosed with {secret.text}"
        self.say(
            _pick(
                self.rng,
                (
                    f"Off the record, {fact}.",
                    f"Don't remember this, but {fact}.",
                    f"This stays between us: {fact}.",
                    f"I don't want this saved, {fact}.",
                    f"{fact[0].upper() + fact[1:]}, do not store that.",
                ),
            )
        )
        # The command is in the turn itself: the fate holds from that turn on.
        self.settle([secret], Fate.FORGOTTEN, "dns")
        self.filler()
        self.brief("What did I tell you earlier?")

    def do_not_store_command(self) -> None:
        """`Command(DO_NOT_STORE, target)` first, then a turn on that target."""
        self._new_session("good morning")
        target = self.rng.choice(("password", "PIN"))
        self.command("DO_NOT_STORE", target)
        if target == "password":
            secret = self.marker(
                self.words.word() + str(self.rng.randint(10, 99)), "password", "dns_rpc"
            )
            self.say(f"My wifi password is {secret.text}.")
        else:
            secret = self.marker(self.words.pin(), "pin", "dns_rpc")
            self.say(f"The alarm PIN is {secret.text}.")
        self.settle([secret], Fate.FORGOTTEN, "dns_rpc")
        self.filler()
        self.brief(f"What's my {target}?")

    def do_not_mention(self) -> None:
        """A person and what was said about them, then "stop mentioning my X"."""
        self._new_session("what should I do today?")
        relation = self.relations.pop()
        person, place = self.name("dnm"), self.place("dnm")
        self.say(f"My {relation} {person.text} lives in {place.text}.")
        self.say(
            _pick(
                self.rng,
                (
                    f"I need to buy {person.text} a birthday present.",
                    f"Remind me to call {person.text} on Sunday.",
                    f"{person.text} is coming over for dinner on Friday.",
                ),
            )
        )
        if self.via_rpc():
            self.command("DO_NOT_MENTION", relation)
        else:
            self.say(
                _pick(
                    self.rng,
                    (
                        f"Stop mentioning my {relation}.",
                        f"Never bring up my {relation} again.",
                        f"Please don't mention my {relation} anymore.",
                        f"I'd rather you didn't bring up my {relation}.",
                        f"Quit talking about my {relation}.",
                    ),
                )
            )
        self.settle([person, place], Fate.UNMENTIONABLE, "dnm")
        self.brief("What do I need to do this week?")
        self.brief(f"Tell me about my {relation}.")

    def forget_thread(self) -> None:
        """A whole conversation, then "forget this conversation" in it."""
        self._new_session("hello")
        relation = self.relations.pop()
        person, place = self.name("thread"), self.place("thread")
        condition = self.marker(self.words.word() + " syndrome", "condition", "thread")
        self.say(f"My {relation} {person.text} has {condition.text}.")
        self.say(f"We are taking {person.text} to a clinic in {place.text}.")
        self.filler()
        if self.via_rpc():
            self.command("FORGET_THREAD")
        else:
            self.say(
                _pick(
                    self.rng,
                    (
                        "Forget this conversation.",
                        "Please delete this whole chat.",
                        "Scrap this discussion, forget this entire conversation.",
                        "Erase this conversation.",
                    ),
                )
            )
        self.settle([person, place, condition], Fate.FORGOTTEN, "thread")
        self.brief(f"How is my {relation} doing?")

    def forget_everything(self) -> None:
        """ "Forget everything about me": every marker of the user."""
        self._new_session("hi")
        if self.forget_everything_command and self.via_rpc():
            self.command(self.forget_everything_command)
        else:
            self.say(
                _pick(
                    self.rng,
                    (
                        "Forget everything about me.",
                        "Please forget everything about me.",
                        "I want you to forget everything about me.",
                    ),
                )
            )
        self.settle(list(self.markers), Fate.FORGOTTEN, "forget_everything")
        self.brief("What do you remember about me?")

    def final_probe(self) -> None:
        """A new session asking after every subject."""
        self._new_session("what do you remember about me?")
        self.brief("Who are the people in my family and where do they live?")
        self.brief("What passwords, PINs or health conditions did I tell you about?")


def generate(
    *,
    seed: int,
    users: int,
    turns_per_user: int,
    tag_nonce: int | None = None,
    forget_everything_command: str | None = None,
    forget_everything_every: int = 10,
) -> Script:
    """The script: `users` users of about `turns_per_user` ingested turns each.

    `tag_nonce` picks the run's marker tag (markers differ between runs, so a copy left by
    an earlier run in a shared cache is never mistaken for one of this run); the rest of
    the script depends on `seed` only. `forget_everything_command` is the `UserCommand`
    name of "forget everything about me" when the gateway has one (else it is only spoken).
    """
    tag_rng = random.Random(tag_nonce if tag_nonce is not None else seed)
    tag = tag_rng.choice(_TAG_HEADS) + tag_rng.choice("kqxzv")
    words = _Words(random.Random(f"{seed}:{tag_nonce}"), tag.lower())
    scripts = []
    for number in range(users):
        rng = random.Random(f"{seed}:{number}")
        builder = _Builder(f"audit-user-{number:04d}", rng, words, forget_everything_command)
        # Each kind at least once; alternation makes half of them `Command` calls.
        kinds = [
            builder.forget_last,
            builder.forget_last,
            builder.forget_topic,
            builder.forget_topic,
            builder.do_not_store_spoken,
            builder.do_not_store_command,
            builder.do_not_mention,
            builder.do_not_mention,
            builder.forget_thread,
            builder.forget_thread,
            builder.kept_fact,
            builder.kept_fact,
        ]
        rng.shuffle(kinds)
        for block in kinds:
            block()
        extra = [builder.kept_fact, builder.do_not_store_spoken, builder.forget_last]
        everything = forget_everything_every > 0 and number % forget_everything_every == (
            forget_everything_every - 1
        )
        # Room for the closing blocks (about 2 turns each) within the user's turns.
        while (
            _ingested(builder.steps) + (4 if everything else 2) < turns_per_user
            and builder.relations
        ):
            rng.choice(extra)()
        while _ingested(builder.steps) < turns_per_user - (1 if everything else 0):
            builder.filler()
        if everything:
            builder.forget_everything()
        while _ingested(builder.steps) < turns_per_user:  # when the command was sent, not said
            builder.filler()
        builder.final_probe()
        scripts.append(UserScript(builder.user_id, builder.steps, builder.markers))
    return Script(seed, tag, scripts, forget_everything_command)


def _ingested(steps: list[Step]) -> int:
    return sum(1 for s in steps if s.kind == "ingest")


def judged(user: UserScript, step_index: int) -> Iterator[Marker]:
    """Markers a Brief at `step_index` must not contain."""
    for found in user.markers:
        if found.fate is not Fate.KEPT and found.effective_step is not None:
            if found.effective_step < step_index:
                yield found
