"""Replay a capture as a fake agent: matching (pure), answers (pure), the server (I/O)."""

from recorder.replay._engine import Conversation, Engine, Match, Miss, request_value
from recorder.replay._grpcserver import GrpcReplayHandler, start_grpc_server
from recorder.replay._respond import (
    Answer,
    answer,
    substitute_body,
    substitute_json_text,
    substitute_text,
)
from recorder.replay._server import ReplayApp, Replayer, Report
from recorder.replay._timing import Timing

__all__ = [
    "Answer",
    "Conversation",
    "Engine",
    "GrpcReplayHandler",
    "Match",
    "Miss",
    "ReplayApp",
    "Replayer",
    "Report",
    "Timing",
    "answer",
    "request_value",
    "start_grpc_server",
    "substitute_body",
    "substitute_json_text",
    "substitute_text",
]
