"""An engine's log: gRPC's failure to answer a caller that already left is not an ERROR."""

from __future__ import annotations

import logging
import sys

from grpc._cython import cygrpc

from memmesh.runtime.engine import GRPC_CORE_LOGGER, caller_gone_quietly


def _record(error: BaseException) -> logging.LogRecord:
    try:
        raise error
    except BaseException:
        return logging.getLogger(GRPC_CORE_LOGGER).makeRecord(
            GRPC_CORE_LOGGER, logging.ERROR, __file__, 1, "raised in core", (), sys.exc_info()
        )


def test_an_answer_to_a_caller_gone_is_dropped_below_debug() -> None:
    record = _record(cygrpc.ExecuteBatchError("Failed execute_batch"))
    assert caller_gone_quietly(record) is False
    assert record.levelno == logging.DEBUG and record.exc_info is None


def test_it_is_one_debug_line_when_debug_is_on() -> None:
    logger = logging.getLogger(GRPC_CORE_LOGGER)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        record = _record(cygrpc.ExecuteBatchError("Failed execute_batch"))
        assert caller_gone_quietly(record) is True
    finally:
        logger.setLevel(level)
    assert record.getMessage() == "an answer was not sent: its caller had already left"


def test_every_other_grpc_error_passes_unchanged() -> None:
    record = _record(RuntimeError("boom"))
    assert caller_gone_quietly(record) is True
    assert record.levelno == logging.ERROR and record.exc_info is not None
