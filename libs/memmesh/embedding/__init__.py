"""Sentence embeddings (all-MiniLM-L6-v2, 384-d) computed in-process (ONNX Runtime)."""

from memmesh.embedding.encoder import Encoder, default_encoder
from memmesh.embedding.weights import EncoderUnavailable

__all__ = ["Encoder", "EncoderUnavailable", "default_encoder"]
