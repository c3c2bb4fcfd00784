"""The kit's Ledger writer forms events so the chain never holds a user's words: keys and
linkable content as HMACs under the user's subject key, owner-read content sealed.
The writer's calls against a real Ledger are in tests/integration/ledger."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from memmesh.ledger_event import Linkable, Sealed
from memmesh.ledger_keys import LINK_PREFIX, SubjectKeyring, is_sealed
from memmesh.ledger_writer import SUBJECT_KEY_ATTRIBUTE, EventTime, NewEvent, event_input
from memmesh.runtime.timeconv import timestamp_of

NOW_US = 1_767_225_600_000_000
SECRET = bytes(range(64))


def ring(secret: bytes = SECRET, key_id: str = "k-1", user: str = "u") -> SubjectKeyring:
    return SubjectKeyring("t", user, key_id, secret)


def event(*attributes: tuple[str, object], key: str = "relationship.sister.ana") -> NewEvent:
    return NewEvent(key, "ATOM_CREATED", "USER_STATED", attributes, NOW_US)  # type: ignore[arg-type]  # mixed tuples


def test_linkable_content_is_a_keyed_hash_equal_only_under_the_same_key() -> None:
    a, b = ring(), ring(secret=bytes(64))
    assert a.linkable("sister") == ring().linkable("sister")
    assert a.linkable("sister") != a.linkable("brother")
    assert a.linkable("sister") != b.linkable("sister")
    # Not the unkeyed SHA-256 a guesser could recompute from the word alone.
    assert hashlib.sha256(b"sister").hexdigest()[:40] not in a.linkable("sister")
    assert a.linkable("sister").startswith(LINK_PREFIX)


def test_the_hash_is_hmac_sha256_of_the_derived_key_so_only_a_key_holder_can_recompute_it() -> None:
    mac_key = hmac.new(SECRET, b"memmesh-ledger/hmac/v1", hashlib.sha256).digest()
    expected = hmac.new(mac_key, b"value\x1fsister", hashlib.sha256).hexdigest()[:40]
    assert ring().linkable("sister") == LINK_PREFIX + expected


def test_sealed_content_opens_only_with_its_key_user_and_attribute() -> None:
    sealed = ring().seal("display_name", "Ana Lima")
    assert "Ana" not in sealed and is_sealed(sealed)
    assert sealed == ring().seal("display_name", "Ana Lima")  # deterministic: retries are equal
    assert ring().open("display_name", sealed) == "Ana Lima"
    assert ring().open("timezone", sealed) is None
    assert ring(user="other").open("display_name", sealed) is None
    assert ring(secret=bytes(64)).open("display_name", sealed) is None
    assert ring(key_id="k-2").open("display_name", sealed) is None
    assert ring().open("display_name", sealed[:-4] + "AAAA") is None


def test_an_event_reaches_the_ledger_with_no_words_in_its_key_or_attributes() -> None:
    keyring = ring()
    sent = event(
        ("atom_id", Linkable("atm_1")),
        ("key", Linkable("relationship.sister.ana")),
        ("name", Sealed("Ana")),
        ("n", 3),
        ("flag", True),
        ("code", "CREATED"),
        ("at", EventTime(NOW_US)),
    )
    message = event_input(sent, keyring)
    assert b"ana" not in message.SerializeToString().lower()
    assert message.idempotency_key == keyring.idempotency_key("relationship.sister.ana")
    values = {a.name: a for a in message.attributes}
    assert values["key"].string_value == keyring.linkable("relationship.sister.ana")
    assert values["atom_id"].string_value == keyring.linkable("atm_1")
    assert keyring.open("name", values["name"].string_value) == "Ana"
    assert (values["n"].int_value, values["flag"].bool_value, values["code"].string_value) == (
        3,
        True,
        "CREATED",
    )
    assert values["at"].time_value == timestamp_of(NOW_US) == message.occur_time
    assert values[SUBJECT_KEY_ATTRIBUTE].string_value == "k-1"
    assert (message.event_type, message.reason_code) == ("ATOM_CREATED", "USER_STATED")


def test_the_subject_key_attribute_is_the_writers_alone() -> None:
    with pytest.raises(ValueError):
        event_input(event((SUBJECT_KEY_ATTRIBUTE, "forged")), ring())


def test_no_repr_shows_the_secret_or_the_content() -> None:
    assert "Ana" not in repr(Linkable("Ana")) + repr(Sealed("Ana"))
    assert SECRET.hex() not in repr(ring()) and str(SECRET) not in repr(ring())
