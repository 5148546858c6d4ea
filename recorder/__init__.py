"""a2a-recorder: record, replay and diff A2A (Agent2Agent protocol) traffic.

The errors it raises on purpose share one base, `RecorderError` (the tree is drawn in
`recorder._errors`); `Exit` names the exit status every command ends with.
"""

from recorder._errors import (
    BaselineError,
    CaptureBusyError,
    CaptureExistsError,
    CaptureParseError,
    ConfigError,
    ConvertError,
    Exit,
    FaultSpecError,
    InputError,
    OptionError,
    PlaceholderError,
    ProtocolError,
    ProxyStartError,
    RecorderError,
    StartError,
    StateError,
    VerifyError,
)

__version__ = "0.1.0"

__all__ = [
    "BaselineError",
    "CaptureBusyError",
    "CaptureExistsError",
    "CaptureParseError",
    "ConfigError",
    "ConvertError",
    "Exit",
    "FaultSpecError",
    "InputError",
    "OptionError",
    "PlaceholderError",
    "ProtocolError",
    "ProxyStartError",
    "RecorderError",
    "StartError",
    "StateError",
    "VerifyError",
    "__version__",
]
