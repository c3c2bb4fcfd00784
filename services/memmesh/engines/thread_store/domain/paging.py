"""Archive page tokens: an opaque position after a turn."""

from __future__ import annotations

import base64
import binascii

from memmesh.errors import FieldViolation, InvalidInput


def encode_page_token(time_us: int, turn_id: str) -> str:
    """An opaque position after a turn."""
    return base64.urlsafe_b64encode(f"{time_us}\x1f{turn_id}".encode()).decode()


def decode_page_token(token: str) -> tuple[int, str]:
    """The position a token names; a token not made by encode_page_token is invalid input."""
    try:
        time_text, turn_id = base64.urlsafe_b64decode(token.encode()).decode().split("\x1f", 1)
        return int(time_text), turn_id
    except (binascii.Error, UnicodeDecodeError, ValueError) as error:
        raise InvalidInput([FieldViolation("page_token", "is not a token this service issued")]) from error
