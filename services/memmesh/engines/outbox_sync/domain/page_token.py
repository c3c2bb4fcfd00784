"""Restore page tokens: "<as_of cursor>.<last cursor served>", so every page of one restore
reads the same continuity set."""

from __future__ import annotations

import re

from memmesh.errors import FieldViolation, InvalidInput

_PAGE_TOKEN = re.compile(r"(\d{1,18})\.(\d{1,18})")


def restore_token(as_of_cursor: int, after_cursor: int) -> str:
    """The token of the page after after_cursor in the set taken at as_of_cursor."""
    return f"{as_of_cursor}.{after_cursor}"


def parse_restore_token(token: str, head_cursor: int) -> tuple[int, int]:
    """(as_of cursor, after cursor) of a token this service issued for a mirror now at
    head_cursor; InvalidInput for anything else."""
    match = _PAGE_TOKEN.fullmatch(token)
    if match is None or not int(match.group(2)) <= int(match.group(1)) <= head_cursor:
        raise InvalidInput([FieldViolation("page_token", "is not a token this service issued")])
    return int(match.group(1)), int(match.group(2))
