"""One bundle <-> guard-item mapping (memmesh.bundle_items): the items the gateway's final
gate offers for a composed bundle are the ones the composer offered for what it kept, so a
verdict reads back the same way on both sides."""

from __future__ import annotations

import pytest
from composer_fakes import FakeSources, RuleGuard, StatePort, atom, query, turn

from memmesh.bundle_items import kept
from memmesh.engines.context_composer import mapping
from memmesh.engines.context_composer.domain.model import (
    Entity,
    Loop,
    Retrieved,
    SessionMemory,
    UserFacts,
)
from memmesh.engines.context_composer.mapping import (
    BundleEncoder,
    bundle_message,
    bundle_size,
    compose_response,
)
from memmesh.engines.context_composer.use_cases import Composer
from memmesh.engines.gateway.final_gate import apply_gate, gate_items


def sources() -> FakeSources:
    return FakeSources(
        facts=UserFacts(display_name="Dana"),
        retrieved=Retrieved(atoms=(atom(1), atom(2)), turns=(turn(1), turn(2))),
        session=SessionMemory(
            turns=(turn(8, session="s-now"), turn(9, session="s-now")),
            rolling_summary="We planned the trip.",
            loops=(Loop("loop-1", "commitment", "Book the dentist", 3, 0, "turn-009"),),
        ),
        entities=(Entity("entity:portland", "Portland", "entity:sarah", "Sarah", 2),),
    )


async def test_the_final_gate_offers_what_the_composer_offered_for_the_bundle() -> None:
    guard = RuleGuard()
    composed = await Composer(
        StatePort(sources()), sources(), sources(), guard, None, bundle_size
    ).compose(query("how is sarah", session_id="s-now"))
    offered = {(item.item_id, item.text, item.thread_id) for item in guard.calls[0]}
    gated = gate_items(bundle_message(composed.bundle), "s-now")
    assert {item.item_id[0] for item in gated} == {"a", "e", "w", "l", "s", "n", "g"}
    assert {(item.item_id, item.text, item.thread_id) for item in gated} <= offered


async def test_a_verdict_reads_back_to_the_same_elements_on_both_sides() -> None:
    composed = await Composer(
        StatePort(sources()), sources(), sources(), RuleGuard(), None, bundle_size
    ).compose(query("how is sarah", session_id="s-now"))
    bundle = bundle_message(composed.bundle)
    items = gate_items(bundle, "s-now")
    allowed = {item.item_id for item in items} - {"a0", "w1", "g0", "s0"}
    gated = apply_gate(bundle, items, allowed).bundle
    assert (
        [a.atom_id for a in gated.atoms]
        == [a.atom_id for a in kept("a", bundle.atoms, allowed)]
        == ["atom-002"]
    )
    assert [t.turn_id for t in gated.working_memory] == ["turn-008"]
    assert not gated.entities and not gated.rolling_summary and gated.push.display_name == "Dana"


async def test_a_turn_encodes_its_bundle_once(monkeypatch: pytest.MonkeyPatch) -> None:
    encoder = BundleEncoder()
    composed = await Composer(
        StatePort(sources()), sources(), sources(), RuleGuard(), None, encoder
    ).compose(query("how is sarah"))
    encodings: list[object] = []
    monkeypatch.setattr(
        mapping, "bundle_message", lambda bundle: encodings.append(bundle) or bundle_message(bundle)
    )
    response = compose_response(composed, encoder)
    assert encodings == []
    assert (
        response.bundle.SerializeToString() == bundle_message(composed.bundle).SerializeToString()
    )
    assert composed.counters.context_bundle_bytes == response.bundle.ByteSize()
    # Asked again, it encodes afresh.
    assert compose_response(composed, encoder).bundle == response.bundle and len(encodings) == 1
