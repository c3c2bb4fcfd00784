"""Random user scopes, so tests never see each other's data."""

from __future__ import annotations

import uuid

from memmesh.common.v1 import scope_pb2


def new_scope() -> scope_pb2.UserScope:
    """A fresh (tenant, user)."""
    token = uuid.uuid4().hex[:12]
    return scope_pb2.UserScope(tenant_id=f"t-{token}", user_id=f"u-{token}")
