"""Where the trained heads live: inside the package, so an install carries them."""

from __future__ import annotations

from pathlib import Path

CLAUSE_HEAD_PATH = Path(__file__).with_name("clause_head.npz")
CLAUSE_HIDDEN_HEAD_PATH = Path(__file__).with_name("clause_hidden_head.npz")
CLAUSE_LEXICAL_HEAD_PATH = Path(__file__).with_name("clause_lexical_head.npz")
CORRECTION_MODEL_PATH = Path(__file__).with_name("correction_model.npz")
COMMAND_READER_PATH = Path(__file__).with_name("command_reader.npz")
