"""The Ledger's subject keys as the AtomExtractor's KeyShredderPort: "forget everything
about me" destroys the user's key, so what the append-only chain still holds (keyed hashes,
sealed words) can no longer be linked to them, and the chain still verifies."""

from __future__ import annotations

from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.ledger_keys import SubjectKeys, shred_subject_key


class GrpcKeyShredder:
    def __init__(self, stub: ledger_grpc.LedgerServiceStub, keys: SubjectKeys) -> None:
        self._stub = stub
        # The writer's key cache: its copy of the destroyed key goes with it.
        self._keys = keys

    async def shred(self, tenant_id: str, user_id: str, now_us: int) -> None:
        await shred_subject_key(self._stub, tenant_id, user_id, now_us)
        self._keys.forget(tenant_id, user_id)
