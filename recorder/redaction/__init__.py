"""Secrets out of what the tool writes and serves: the recorder's captures, the replayer's
journal and report (pure: values in, values out).

`Rules` say what is secret (`_rules`); `Redactor` replaces each secret value with a stable
placeholder (`<redacted:1>`) wherever it appears, however encoded (`_sweep`): the recorder in
each exchange written (never in what the proxy forwards), the replayer in what it serves.
`RecorderConfig` is a project's own (`_config`).  May import `recorder.capture` and
`recorder.protocol`.
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
