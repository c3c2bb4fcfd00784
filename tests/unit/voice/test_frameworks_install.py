"""The voice frameworks installed by `make setup` load beside our protobuf 7 stubs
(pipecat-ai declares protobuf<7 and is installed without it)."""

from __future__ import annotations

import google.protobuf


def test_pipecat_and_livekit_load_with_the_generated_stubs() -> None:
    from livekit.agents import Agent  # noqa: F401
    from pipecat.pipeline.pipeline import Pipeline  # noqa: F401
    from pipecat.serializers.protobuf import ProtobufFrameSerializer  # noqa: F401

    from memmesh.gateway.v1 import gateway_service_pb2
    from memmesh.voice import livekit_memory, pipecat_memory  # noqa: F401

    assert int(google.protobuf.__version__.split(".")[0]) >= 7
    assert gateway_service_pb2.BriefRequest().ByteSize() == 0
