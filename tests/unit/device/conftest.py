"""Fixtures of the device tests."""

from __future__ import annotations

import pytest
from device_fake_mirror import FakeMirror


@pytest.fixture
def mirror() -> FakeMirror:
    return FakeMirror()
