"""Replay a capture as a fake agent: matching (pure), answers (pure), the server (I/O)."""

from recorder.replay._engine import Conversation, Engine, Match, Miss, request_value
from recorder.replay._respond import Answer, answer, substitute_body
from recorder.replay._server import ReplayApp, Replayer, Report
from recorder.replay._timing import Timing

__all__ = [
    "Answer",
    "Conversation",
    "Engine",
    "Match",
    "Miss",
    "ReplayApp",
    "Replayer",
    "Report",
    "Timing",
    "answer",
    "request_value",
    "substitute_body",
]
