"""The device side of sync: an encrypted local vault and an append-only outbox (seed 001 §2.5, §2.13)."""

from memmesh.device.crypto import IntegrityError, derive_key, new_key
from memmesh.device.outbox import Backoff, FlushReport, Outbox, OutboxEntry, SyncClient
from memmesh.device.records import ContinuityRecord, RecordKind, item_id_of, tombstone
from memmesh.device.sync import DeviceSync, RestoreReport
from memmesh.device.vault import StaleVersion, Vault

__all__ = [
    "Backoff",
    "ContinuityRecord",
    "DeviceSync",
    "FlushReport",
    "IntegrityError",
    "Outbox",
    "OutboxEntry",
    "RecordKind",
    "RestoreReport",
    "StaleVersion",
    "SyncClient",
    "Vault",
    "derive_key",
    "item_id_of",
    "new_key",
    "tombstone",
]
