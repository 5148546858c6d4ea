"""Every error a2a-recorder raises on purpose, and the exit status each command ends with.

The hierarchy (built-ins as second bases where the meaning fits, so `except ValueError` works):

    RecorderError                       the base: `str()` is a message ready to print
    ├── InputError (ValueError)         something the user gave cannot be used
    │   ├── CaptureParseError           a capture file: `file:line: what is wrong`
    │   ├── ConvertError                a HAR or mitmproxy flow file given to `convert`
    │   ├── ConfigError                 settings: pyproject.toml, verify.toml, a fixture
    │   ├── BaselineError               a baseline file of accepted findings or drift
    │   ├── PlaceholderError            a redacted secret nothing fills would reach an agent
    │   ├── OptionError                 an option's value (named as the caller spelt it)
    │   │   └── AddonOptionError        ... an addon refused (a mitmproxy OptionsError too)
    │   └── FaultSpecError              a replay fault spec that cannot be read or applied
    ├── CaptureExistsError (FileExistsError)  a capture has exchanges; nobody said what to do
    ├── CaptureBusyError (BlockingIOError)    another writer holds the capture's lock
    ├── StartError (RuntimeError)       a server could not start (address in use, ...)
    │   └── ProxyStartError             ... the recording proxy
    ├── StateError (RuntimeError)       a server used before start, after stop, or twice
    ├── VerifyError (RuntimeError)      `verify` could not run (the agent unreachable, ...)
    ├── ProtocolError (ValueError)      bytes on the wire break a protocol: the peer's fault,
    │   │                               recorded as it was, never a crash
    │   ├── GrpcFramingError            not gRPC length-prefixed framing
    │   ├── GrpcCodecError              a gRPC message or status that does not encode
    │   └── H2ProtocolError             not (or no longer) valid HTTP/2
    └── internal, converted at one boundary before a caller sees them:
        ├── FormError (ValueError)      a body display that does not restore
        │   └── FormLineError           ... at its `# ...-body:` line  -> CaptureParseError
        └── Unsendable                  a verify step this agent cannot take  -> NotSent

Exit status, the same for every command (`EXIT_FOR` maps the error that ended one to it):

    0  OK      the same, clean, no drift, everything recorded
    1  FOUND   differences, findings, drift, exchanges lost
    2  ERROR   could not run: bad input or options, a server that would not start
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import IntEnum

# Writes an option (table name, value or None) as one surface says it; None: name unknown.
Spell = Callable[[str, "str | None"], "str | None"]
_OPTION_REF = re.compile(r"\{([a-z_]+)(?:=([^{}]*))?\}")


class Exit(IntEnum):
    """A command's exit status (see the module docstring)."""

    OK = 0
    FOUND = 1
    ERROR = 2


class RecorderError(Exception):
    """The base of every error a2a-recorder raises on purpose; `str()` is ready to print."""


class InputError(RecorderError, ValueError):
    """Something the user gave cannot be used; the message names it and says why."""


class CaptureParseError(InputError):
    """A capture file that cannot be read; `str()` is `file:line: what is wrong`."""

    MESSAGE_LIMIT = 1000  # characters; whatever said it, a message stays a line

    def __init__(self, message: str, filename: str, line: int) -> None:
        if len(message) > self.MESSAGE_LIMIT:
            message = f"{message[: self.MESSAGE_LIMIT]}… (message cut)"
        super().__init__(f"{filename}:{line}: {message}")
        self.message = message
        self.filename = filename
        self.line = line


class ConvertError(InputError):
    """An input that cannot be converted: not readable, damaged, or not the format it claims."""


class ConfigError(InputError):
    """A setting that cannot be used; the message names where it was."""


class BaselineError(InputError):
    """A baseline file that cannot be used; the message names it and says why."""


class PlaceholderError(InputError):
    """A redaction placeholder would reach the agent: `where` it is, and how to fill it."""

    def __init__(self, where: str, hint: str) -> None:
        super().__init__(f"{where} holds a redacted secret; {hint}")
        self.where, self.hint = where, hint


class OptionError(InputError):
    """An option's value that cannot be used: `template` names options as `{name}` or
    `{name=value}`, and `spelt(spell)` writes them as one surface says them (`str()`: Python)."""

    def __init__(self, template: str) -> None:
        self.template = template
        super().__init__(template)

    def spelt(self, spell: Spell) -> str:
        return spelt(self.template, spell)

    def __str__(self) -> str:
        return self.spelt(python_spelling)


def spelt(template: str, spell: Spell) -> str:
    """`template` with each `{name}` and `{name=value}` written by `spell`."""

    def one(match: re.Match[str]) -> str:
        return spell(match.group(1), match.group(2)) or match.group(0)

    return _OPTION_REF.sub(one, template)


def python_spelling(name: str, value: str | None) -> str:
    """An option as a keyword argument: `existing='append'`, `card_rewrite=False`."""
    if value is None:
        return name
    literal = value in ("True", "False", "None") or re.fullmatch(r"-?[0-9.]+", value)
    return f"{name}={value if literal else repr(value)}"


class FaultSpecError(InputError):
    """A replay fault spec that cannot be read or applied; the message names it."""


class CaptureExistsError(RecorderError, FileExistsError):
    """A capture with exchanges is already at the path, and nobody said to add to it."""


class CaptureBusyError(RecorderError, BlockingIOError):
    """Another writer holds the capture's lock; the message names it."""


class StartError(RecorderError, RuntimeError):
    """A server could not start (bad options, address in use, bad upstream)."""


class ProxyStartError(StartError):
    """The recording proxy could not start."""


class StateError(RecorderError, RuntimeError):
    """A server used before `start()` or after `stop()`, or started twice."""


class VerifyError(RecorderError, RuntimeError):
    """Verify could not run (exit 2): the message says why."""


class ProtocolError(RecorderError, ValueError):
    """Bytes on the wire that break a protocol (the peer's doing, not the user's)."""


class GrpcFramingError(ProtocolError):
    """The bytes do not follow gRPC length-prefixed message framing."""


class GrpcCodecError(ProtocolError):
    """A message or status could not be encoded (unknown type, malformed JSON)."""


class H2ProtocolError(ProtocolError):
    """The bytes seen on the connection are not (or stopped being) valid HTTP/2."""


class FormError(RecorderError, ValueError):
    """A display that does not restore; `offset` is the 0-based line inside the display."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.offset = offset


class FormLineError(FormError):
    """A bad body form declaration: reported at its `# ...-body:` line."""


class Unsendable(RecorderError):
    """A verify step that cannot go to this agent (no gRPC address, a message not encoded)."""


# The exit status of a command an error ended, first match wins; a bug is an ERROR too
# (Python's own 1 would read as "differences found").
EXIT_FOR: tuple[tuple[type[BaseException], Exit], ...] = (
    (RecorderError, Exit.ERROR),
    (OSError, Exit.ERROR),  # a file that cannot be read or written, a port in use
    (Exception, Exit.ERROR),
)
EXPECTED: tuple[type[BaseException], ...] = (RecorderError, OSError)  # said in one line


def exit_status(error: Exception) -> Exit:
    """The exit status `error` ends a command with."""
    return next(status for kind, status in EXIT_FOR if isinstance(error, kind))


def error_message(error: Exception, spell: Spell | None = None) -> str:
    """What to print for `error`: our message, `path: why` for an OSError, else that it is a bug."""
    if isinstance(error, OptionError) and spell is not None:
        return error.spelt(spell)
    if isinstance(error, RecorderError):
        return str(error)
    if isinstance(error, OSError):
        why = error.strerror or str(error)
        return f"{error.filename}: {why}" if error.filename is not None else why
    return f"a2a-recorder failed inside ({type(error).__name__}: {error}); please report it"
