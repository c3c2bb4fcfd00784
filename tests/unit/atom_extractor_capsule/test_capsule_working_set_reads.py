"""A turn of facts reads only the atoms it may change or refer to; every decision is the
one a read of the whole capsule gives (the same changes, atoms and effects, turn by turn)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from capsule_fakes import Fakes

from memmesh.engines.atom_extractor.adapters.rules_extractor import DeterministicExtractor
from memmesh.engines.atom_extractor.adapters.sql_store import SqlCapsuleStore
from memmesh.engines.atom_extractor.domain.capsule import AtomRecord, TurnInput

NOW = 1_767_225_600_000_000
TURNS = (
    "I have a sister named Sarah.",
    "I have a sister named Sandra.",
    "No, I said Sandra, not Sarah.",
    "How is Sarah doing?",
    "I live in Boston.",
    "I live in Chicago.",
    "I really do live in Boston.",
    "I'm a retired firefighter",
    "honestly I can't stand olives",
    "um I've been vegetarian since college",
    "i'm deathly allergic to sesame, carry an epipen and all",
    "Korean is my first language",
    "my grandpa Anselm taught me to fish",
    "Anselm says hi, and the olives were bad.",
    "Any news from Boston or about sesame?",
    "I actually prefer Python over C++ because it's easier to read.",
    "Forget that.",
    "I have diabetes.",
)


class WholeCapsuleStore(SqlCapsuleStore):
    """Reads every atom for every request (what Process did before its indexed reads)."""

    async def load_related(
        self,
        tenant_id: str,
        user_id: str,
        keys: Sequence[str],
        atom_ids: Sequence[str],
        topics: Sequence[str],
    ) -> list[AtomRecord]:
        return await self.load_atoms(tenant_id, user_id)


async def test_indexed_reads_decide_as_a_read_of_the_whole_capsule(tmp_path: Path) -> None:
    indexed = await SqlCapsuleStore.open("sqlite", tmp_path / "indexed")
    whole = await WholeCapsuleStore.open("sqlite", tmp_path / "whole")
    try:
        runs = [(store, Fakes()) for store in (indexed, whole)]
        services = [fakes.service(store, DeterministicExtractor()) for store, fakes in runs]
        rng = random.Random(7)
        for number in range(160):
            text = rng.choice(TURNS)
            turn = TurnInput(f"turn-{number}", f"session-{number // 20}", "user", text)
            first, second = [
                await service.process("t", "u", turn, NOW + number) for service in services
            ]
            assert first.outcome == second.outcome, text
            assert await indexed.load_atoms("t", "u") == await whole.load_atoms("t", "u")
        assert runs[0][1].ledger.events == runs[1][1].ledger.events
        assert runs[0][1].index.documents == runs[1][1].index.documents
    finally:
        await indexed.close()
        await whole.close()
