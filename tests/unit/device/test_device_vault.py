"""The vault seals every record with the device key, bound to its place."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memmesh.device import ContinuityRecord, IntegrityError, StaleVersion, Vault, new_key, tombstone
from memmesh.device.device_db import open_device_db


def vault_at(path: Path, key: bytes, user: str = "user-1") -> Vault:
    return Vault(open_device_db(path), "tenant-a", user, key)


def test_records_round_trip_and_are_not_stored_in_plaintext(tmp_path: Path) -> None:
    key = new_key()
    vault = vault_at(tmp_path / "device.sqlite3", key)
    record = ContinuityRecord("atom", "atom-1", 1, b"prefers tea over coffee")
    assert vault.put(record)
    assert vault.get("atom", "atom-1") == record
    reopened = vault_at(tmp_path / "device.sqlite3", key)
    assert reopened.records() == [record]
    raw = (
        sqlite3.connect(tmp_path / "device.sqlite3")
        .execute("SELECT sealed FROM vault_records")
        .fetchone()[0]
    )
    assert b"tea" not in raw


def test_a_tampered_ciphertext_is_refused(tmp_path: Path) -> None:
    vault = vault_at(tmp_path / "device.sqlite3", new_key())
    vault.put(ContinuityRecord("atom", "atom-1", 1, b"likes jazz"))
    db = sqlite3.connect(tmp_path / "device.sqlite3")
    sealed = bytearray(db.execute("SELECT sealed FROM vault_records").fetchone()[0])
    sealed[-1] ^= 0x01
    db.execute("UPDATE vault_records SET sealed = ?", (bytes(sealed),))
    db.commit()
    with pytest.raises(IntegrityError):
        vault.get("atom", "atom-1")


def test_swapped_records_are_refused(tmp_path: Path) -> None:
    vault = vault_at(tmp_path / "device.sqlite3", new_key())
    vault.put(ContinuityRecord("atom", "atom-1", 1, b"one"))
    vault.put(ContinuityRecord("atom", "atom-2", 1, b"two"))
    db = sqlite3.connect(tmp_path / "device.sqlite3")
    one, two = (
        db.execute("SELECT sealed FROM vault_records WHERE key = ?", (k,)).fetchone()[0]
        for k in ("atom-1", "atom-2")
    )
    db.execute("UPDATE vault_records SET sealed = ? WHERE key = 'atom-1'", (two,))
    db.execute("UPDATE vault_records SET sealed = ? WHERE key = 'atom-2'", (one,))
    db.commit()
    with pytest.raises(IntegrityError):
        vault.get("atom", "atom-1")
    with pytest.raises(IntegrityError):
        vault.get("atom", "atom-2")


def test_a_record_moved_to_another_user_is_refused(tmp_path: Path) -> None:
    key = new_key()
    vault_at(tmp_path / "device.sqlite3", key, "user-1").put(
        ContinuityRecord("atom", "atom-1", 1, b"mine")
    )
    db = sqlite3.connect(tmp_path / "device.sqlite3")
    db.execute("UPDATE vault_records SET user_id = 'user-2'")
    db.commit()
    with pytest.raises(IntegrityError):
        vault_at(tmp_path / "device.sqlite3", key, "user-2").get("atom", "atom-1")


def test_an_edited_version_column_is_refused(tmp_path: Path) -> None:
    vault = vault_at(tmp_path / "device.sqlite3", new_key())
    vault.put(ContinuityRecord("atom", "atom-1", 1, b"one"))
    db = sqlite3.connect(tmp_path / "device.sqlite3")
    db.execute("UPDATE vault_records SET version = 9")
    db.commit()
    with pytest.raises(IntegrityError):
        vault.get("atom", "atom-1")


def test_the_wrong_key_is_refused(tmp_path: Path) -> None:
    vault_at(tmp_path / "device.sqlite3", new_key()).put(
        ContinuityRecord("atom", "atom-1", 1, b"one")
    )
    with pytest.raises(IntegrityError):
        vault_at(tmp_path / "device.sqlite3", new_key()).records()


def test_local_writes_never_regress_a_version(tmp_path: Path) -> None:
    vault = vault_at(tmp_path / "device.sqlite3", new_key())
    assert vault.put(ContinuityRecord("atom", "atom-1", 2, b"two"))
    assert not vault.put(ContinuityRecord("atom", "atom-1", 2, b"two"))
    with pytest.raises(StaleVersion):
        vault.put(ContinuityRecord("atom", "atom-1", 1, b"one"))
    with pytest.raises(StaleVersion):
        vault.put(ContinuityRecord("atom", "atom-1", 2, b"other"))
    assert vault.get("atom", "atom-1") == ContinuityRecord("atom", "atom-1", 2, b"two")


def test_synced_records_apply_by_version_then_cursor_in_any_order(tmp_path: Path) -> None:
    records = [
        (ContinuityRecord("atom", "atom-1", 1, b"v1"), 1),
        (tombstone("atom", "atom-1", 3), 2),
        (ContinuityRecord("atom", "atom-1", 2, b"v2-late"), 3),
        (ContinuityRecord("rule", "topic-x", 1, b"dnm"), 4),
    ]
    listings = set()
    for order in (records, list(reversed(records)), records[1:] + records[:1]):
        vault = vault_at(tmp_path / f"device-{len(listings)}-{order[0][1]}.sqlite3", new_key())
        for record, cursor in order:
            vault.apply_synced(record, cursor)
        assert vault.get("atom", "atom-1") == tombstone("atom", "atom-1", 3)
        assert vault.records() == [ContinuityRecord("rule", "topic-x", 1, b"dnm")]
        listings.add(vault.listing())
    assert len(listings) == 1
