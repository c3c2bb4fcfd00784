"""What every peer client of the composer shares: the scope message and the Tier-2 deadline."""

from __future__ import annotations

from memmesh.common.v1 import scope_pb2
from memmesh.runtime import deadlines

# A Tier-2 call may use this share of the time left, so a slow one cannot starve the
# Tier-1 filter step that follows the parallel gather.
TIER2_TIME_SHARE = 0.5


def scope_of(tenant_id: str, user_id: str) -> scope_pb2.UserScope:
    """The UserScope message of a (tenant, user)."""
    return scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)


def tier2_timeout(default_timeout_s: float) -> float:
    """The timeout of a Tier-2 call: its share of the time the inbound call has left."""
    return deadlines.outbound_timeout(default_timeout_s) * TIER2_TIME_SHARE
