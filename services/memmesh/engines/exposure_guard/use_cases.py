"""Use cases of the ExposureGuard: rules in (ledger first, then store, then cache), decisions out."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace

from memmesh.engines.exposure_guard.domain.events import (
    RULE_REMOVED,
    RULE_SET,
    forget_event,
    rule_event,
)
from memmesh.engines.exposure_guard.domain.filtering import (
    CompiledRules,
    Exposed,
    FilterOutcome,
    filter_items,
    store_blocked_by,
)
from memmesh.engines.exposure_guard.domain.matching import Item
from memmesh.engines.exposure_guard.domain.recall import RecallSummary, SummaryAtom, recall_summary
from memmesh.engines.exposure_guard.domain.rules import Channel, Rule, RuleId, RuleKind, TargetType
from memmesh.engines.exposure_guard.domain.subject import (
    aliases,
    graph_node_ids,
    merged_terms,
    new_subject_names,
    said_subject_names,
    subject_names,
)
from memmesh.engines.exposure_guard.ports import RuleLedger, RuleStore, SubjectAtoms, SubjectGraph
from memmesh.storage.cache import Cache, user_key


def encode_rules(rules: Sequence[Rule]) -> bytes:
    """Rules as cached: canonical JSON in rule order, subject terms last."""
    rows = [
        [r.id.kind.value, int(r.id.target_type), r.id.target, r.create_time_us, list(r.terms)]
        for r in rules
    ]
    return json.dumps(rows, separators=(",", ":"), ensure_ascii=False).encode()


def decode_rules(data: bytes) -> list[Rule]:
    """Rules from their cached form (rows cached before subject terms have four fields)."""
    rules = []
    for kind, target_type, target, create_us, *terms in json.loads(data):
        rule_id = RuleId(RuleKind(kind), TargetType(target_type), target)
        rules.append(Rule(rule_id, create_us, tuple(terms[0]) if terms else ()))
    return rules


class ExposureGuardService:
    """Holds no user data itself: rules live in the store, a copy per user in the cache
    (Filter runs every turn), and compiled rule sets in a small in-process LRU."""

    def __init__(
        self,
        store: RuleStore,
        ledger: RuleLedger,
        cache: Cache,
        cache_ttl_s: int = 300,
        compiled_entries: int = 4096,
        atoms: SubjectAtoms | None = None,
        graph: SubjectGraph | None = None,
    ) -> None:
        self._store = store
        self._ledger = ledger
        self._cache = cache
        self._cache_ttl_s = cache_ttl_s
        self._compiled: OrderedDict[bytes, CompiledRules] = OrderedDict()
        self._compiled_entries = compiled_entries
        # Where a DO_NOT_MENTION rule's subject is read; without them a rule covers its target only.
        self._atoms = atoms
        self._graph = graph

    async def list_rules(self, tenant_id: str, user_id: str) -> list[Rule]:
        """The user's rules, sorted by kind, target type, target."""
        return decode_rules(await self._encoded_rules(tenant_id, user_id))

    async def set_rule(
        self, tenant_id: str, user_id: str, rule_id: RuleId, reason_code: str, now_us: int
    ) -> tuple[Rule, bool]:
        """Record the change on the ledger, then store it; (rule, created). A DO_NOT_MENTION
        rule is in force on its target as soon as it is stored; its subject terms follow from
        the user's atoms and graph, read on every call (so setting it again refreshes them).
        When they cannot be read the rule stays stored and the call fails (DependencyFailed
        naming the engine): the caller retries and the command is not acknowledged before
        the rule covers the subject."""
        existing = await self._store.get_rule(tenant_id, user_id, rule_id)
        created = False
        if existing is None:
            await self._ledger.record(
                tenant_id,
                user_id,
                rule_event(RULE_SET, tenant_id, user_id, rule_id, reason_code, now_us),
            )
            created = await self._store.add_rule(tenant_id, user_id, Rule(rule_id, now_us))
            existing = await self._store.get_rule(tenant_id, user_id, rule_id)
        # Refreshed on every call, so a retry after a failed cache write heals it.
        await self._refresh_cache(tenant_id, user_id)
        rule = existing or Rule(rule_id, now_us)
        if rule_id.kind is RuleKind.DO_NOT_MENTION:
            rule = await self._expand(tenant_id, user_id, rule)
        return rule, created

    async def _expand(self, tenant_id: str, user_id: str, rule: Rule) -> Rule:
        """The rule with its subject's terms read now and merged into those it has."""
        if self._atoms is None:
            return rule
        names = subject_names(rule.id, await self._atoms.atoms(tenant_id, user_id))
        linked: list[str] = []
        if self._graph is not None:
            nodes = graph_node_ids(rule.id, names)
            if nodes:
                labels = await self._graph.linked_labels(tenant_id, user_id, nodes)
                linked = aliases(rule.id, names, labels)
        grown = await self._add_terms(tenant_id, user_id, {rule.id: (*names, *linked)})
        return grown.get(rule.id, rule)

    async def _add_terms(
        self, tenant_id: str, user_id: str, found: dict[RuleId, tuple[str, ...]]
    ) -> dict[RuleId, Rule]:
        """Merge found terms into the stored rules; the rules whose terms grew, as stored."""
        grown: dict[RuleId, Rule] = {}
        for rule_id, names in found.items():
            stored = await self._store.get_rule(tenant_id, user_id, rule_id)
            if stored is None:
                continue
            terms = merged_terms(stored.terms, names)
            if terms != stored.terms and await self._store.set_terms(
                tenant_id, user_id, rule_id, terms
            ):
                grown[rule_id] = replace(stored, terms=terms)
        if grown:
            await self._refresh_cache(tenant_id, user_id)
        return grown

    async def remove_rule(
        self, tenant_id: str, user_id: str, rule_id: RuleId, reason_code: str, now_us: int
    ) -> bool:
        """Record the removal on the ledger, then delete; False when there was no such rule."""
        removed = False
        if await self._store.get_rule(tenant_id, user_id, rule_id) is not None:
            event = rule_event(RULE_REMOVED, tenant_id, user_id, rule_id, reason_code, now_us)
            await self._ledger.record(tenant_id, user_id, event)
            removed = await self._store.remove_rule(tenant_id, user_id, rule_id)
        await self._refresh_cache(tenant_id, user_id)
        return removed

    async def forget_user(self, tenant_id: str, user_id: str, now_us: int) -> int:
        """Forget every rule of the user ("forget everything about me"): the stored rules with
        their subject terms, the cached copy and the compiled copy; then make the deleted bytes
        unreadable where the store can. The ledger records the count first (never a target),
        so a retry after a failure records it once. The number of rules removed (0 on a repeat)."""
        stored = await self._store.list_rules(tenant_id, user_id)
        if stored:
            event = forget_event(tenant_id, user_id, len(stored), now_us)
            await self._ledger.record_forget(tenant_id, user_id, event)
        removed = await self._store.forget_user(tenant_id, user_id)
        key = user_key(tenant_id, user_id, "exposure_rules")
        # The compiled copies are keyed by the encoded rules: drop those of the user's rules.
        for rules in (stored, removed):
            self._compiled.pop(encode_rules(rules), None)
        cached = await self._cache.get(key)
        if cached is not None:
            self._compiled.pop(cached, None)
        await self._cache.delete(key)
        if removed:
            await self._store.reclaim_erased()
        return len(removed)

    async def filter(
        self,
        tenant_id: str,
        user_id: str,
        items: Sequence[Exposed],
        channel: Channel,
        *,
        speak_text_allowed: bool,
        user_asked: bool,
    ) -> FilterOutcome:
        """What may pass on the channel under the user's rules. An atom about a DO_NOT_MENTION
        subject that carries a name the rule does not cover yet (a new atom on the subject),
        or an item a rule on a relation held back that names the person in so many words
        ("my mentor Ama ..."), adds the name to the rule's terms, and the items are filtered
        again under the grown rule."""
        rules = await self._compiled_rules(tenant_id, user_id)
        outcome = filter_items(
            rules, items, channel, speak_text_allowed=speak_text_allowed, user_asked=user_asked
        )
        if outcome.do_not_mention_hits:
            offered = [exposed.item for exposed in items]
            found = new_subject_names(rules, offered)
            for rule_id, names in said_subject_names(rules, offered).items():
                found[rule_id] = tuple(dict.fromkeys((*found.get(rule_id, ()), *names)))
            if found and await self._add_terms(tenant_id, user_id, found):
                rules = await self._compiled_rules(tenant_id, user_id)
                outcome = filter_items(
                    rules,
                    items,
                    channel,
                    speak_text_allowed=speak_text_allowed,
                    user_asked=user_asked,
                )
        return outcome

    async def check_store(self, tenant_id: str, user_id: str, fact: Item) -> Rule | None:
        """The do-not-store rule forbidding the fact, if any. Every fact passes here before
        it is stored, so a fact about a DO_NOT_MENTION subject whose atom did not exist yet
        when the rule was set (its extraction still queued, or said later) adds its names
        to the rule now, before any Brief can carry them, whether or not a Brief ever
        offers the atom itself."""
        rules = await self._compiled_rules(tenant_id, user_id)
        if not rules.mention_targets.empty:
            about = fact._replace(atom_id=fact.atom_id or fact.item_id or "fact")
            found = new_subject_names(rules, [about])
            if found:
                await self._add_terms(tenant_id, user_id, found)
        blocking = store_blocked_by(rules, fact)
        if blocking is None:
            return None
        stored = {rule.id: rule for rule in await self.list_rules(tenant_id, user_id)}
        return stored.get(blocking, Rule(blocking, 0))

    async def recall_summary(
        self,
        tenant_id: str,
        user_id: str,
        atoms: Sequence[SummaryAtom],
        channel: Channel,
        *,
        speak_text_allowed: bool,
    ) -> RecallSummary:
        """The bounded safe summary of the given atoms."""
        rules = await self._compiled_rules(tenant_id, user_id)
        return recall_summary(rules, atoms, channel, speak_text_allowed=speak_text_allowed)

    async def _encoded_rules(self, tenant_id: str, user_id: str) -> bytes:
        key = user_key(tenant_id, user_id, "exposure_rules")
        cached = await self._cache.get(key)
        if cached is not None:
            return cached
        encoded = encode_rules(await self._store.list_rules(tenant_id, user_id))
        # Set-if-absent: a fill never overwrites what a rule change wrote meanwhile.
        await self._cache.add(key, encoded, self._cache_ttl_s)
        return encoded

    async def _refresh_cache(self, tenant_id: str, user_id: str) -> None:
        encoded = encode_rules(await self._store.list_rules(tenant_id, user_id))
        await self._cache.set(
            user_key(tenant_id, user_id, "exposure_rules"), encoded, self._cache_ttl_s
        )

    async def _compiled_rules(self, tenant_id: str, user_id: str) -> CompiledRules:
        encoded = await self._encoded_rules(tenant_id, user_id)
        compiled = self._compiled.get(encoded)
        if compiled is not None:
            self._compiled.move_to_end(encoded)
            return compiled
        decoded = decode_rules(encoded)
        compiled = CompiledRules.of(
            (rule.id for rule in decoded), {rule.id: rule.terms for rule in decoded if rule.terms}
        )
        self._compiled[encoded] = compiled
        while len(self._compiled) > self._compiled_entries:
            self._compiled.popitem(last=False)
        return compiled
