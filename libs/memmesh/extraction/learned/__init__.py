"""The learned extraction path: clause heads over sentence embeddings, a command reader (the
encoder's top layers tuned with a head), and a correction model over the words of a turn,
beside the rules."""

from __future__ import annotations

from functools import lru_cache

from .command_reader import CommandReader
from .commands import LearnedCommands
from .corrections import CorrectionModel
from .extractor import HybridExtractor, Thresholds
from .heads import HiddenLayerHead, SoftmaxHead
from .lexical import ClauseHeads, LexicalHead
from .model_files import (
    CLAUSE_HEAD_PATH,
    CLAUSE_HIDDEN_HEAD_PATH,
    CLAUSE_LEXICAL_HEAD_PATH,
    COMMAND_READER_PATH,
    CORRECTION_MODEL_PATH,
)

__all__ = ["HybridExtractor", "SoftmaxHead", "Thresholds", "default_hybrid_extractor"]


@lru_cache(maxsize=1)
def default_hybrid_extractor() -> HybridExtractor:
    """The process-wide hybrid extractor: the shared encoder and the heads and correction
    model shipped in the package (the clause heads: embedding and lexical, averaged)."""
    from memmesh.embedding import default_encoder

    encoder = default_encoder()
    reader = CommandReader.load(COMMAND_READER_PATH)
    commands = LearnedCommands(
        encoder,
        reader.head,
        corrections=CorrectionModel.load(CORRECTION_MODEL_PATH),
        reader=reader.encoder(),
    )
    clause_head = ClauseHeads(
        (SoftmaxHead.load(CLAUSE_HEAD_PATH), HiddenLayerHead.load(CLAUSE_HIDDEN_HEAD_PATH)),
        LexicalHead.load(CLAUSE_LEXICAL_HEAD_PATH),
    )
    return HybridExtractor(encoder, clause_head, commands=commands)
