"""Secrets out of what the tool writes and serves: the recorder's captures, the replayer's
journal and report (pure: values in, values out).

`Rules` say what is secret (`_rules`: names, push-config fields, a card's API keys);
`Redactor` learns the secret values of an exchange and replaces them with stable placeholders
(`<redacted:1>`) wherever they appear, however encoded (`_sweep`).  The recorder applies it
to each exchange as it is written (never to what the proxy forwards); the replayer to each
journal entry and report line it serves.  `RecorderConfig` is what a project adds for the
pytest plugin (`_config`: `[tool.a2a-recorder]`, the `a2a_recorder_config` fixture).

May import `recorder.capture` and `recorder.protocol`: the recorder, replay, diff and script
build on it.
"""

from recorder._errors import ConfigError
from recorder.redaction._config import BeforeRecord, RecorderConfig, from_pyproject, read_pyproject
from recorder.redaction._mask import MASK, Masker
from recorder.redaction._redactor import MIN_SWEPT_LENGTH, NO_RULES, REDACTED_NOTE, Redactor
from recorder.redaction._rules import (
    SCHEMED_HEADERS,
    SECRET_FIELDS,
    SECRET_HEADERS,
    Rules,
    api_key_headers,
    api_key_names,
    is_credential_name,
)

__all__ = [
    "BeforeRecord",
    "ConfigError",
    "MASK",
    "MIN_SWEPT_LENGTH",
    "Masker",
    "NO_RULES",
    "REDACTED_NOTE",
    "RecorderConfig",
    "Redactor",
    "Rules",
    "SCHEMED_HEADERS",
    "SECRET_FIELDS",
    "SECRET_HEADERS",
    "api_key_headers",
    "api_key_names",
    "from_pyproject",
    "is_credential_name",
    "read_pyproject",
]
