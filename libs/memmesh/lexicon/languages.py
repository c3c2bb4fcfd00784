"""Language names as people say them, and their BCP 47 primary tags."""

from __future__ import annotations

import re

LANGUAGE_CODES = {
    "arabic": "ar",
    "chinese": "zh",
    "mandarin": "zh",
    "cantonese": "zh",
    "dutch": "nl",
    "english": "en",
    "french": "fr",
    "german": "de",
    "greek": "el",
    "hebrew": "he",
    "hindi": "hi",
    "italian": "it",
    "japanese": "ja",
    "korean": "ko",
    "polish": "pl",
    "portuguese": "pt",
    "russian": "ru",
    "spanish": "es",
    "swedish": "sv",
    "turkish": "tr",
    "ukrainian": "uk",
    "vietnamese": "vi",
}
_WORD = re.compile(r"[a-z]+")


def language_code_in(text: str) -> str | None:
    """The one language a text names, as a BCP 47 tag; None for none or several."""
    codes = {LANGUAGE_CODES[w] for w in _WORD.findall(text.lower()) if w in LANGUAGE_CODES}
    return next(iter(codes)) if len(codes) == 1 else None
