"""a2a-recorder: record, replay and diff A2A (Agent2Agent protocol) traffic."""

__version__ = "0.1.0"
