"""Verify: play the client side of a capture against a live agent, and report what drifted.

`verify_capture` sends each recorded request to the live agent in recorded order, through the
recorder (so the new session is a proper capture), with the live agent's ids in place of the
recorded ones, and returns a `VerifyResult`: the diff of the recorded session against the new
one, plus what only verify knows (what could not be sent and why, timing).  `VerifyError`:
verify cannot run (exit 2); `ConfigError`: settings that cannot be used; `PlaceholderError`: a
redacted secret that would reach the agent.

May import `recorder.replay`, `recorder.record`, `recorder.diff`, `recorder.script`,
`recorder.capture`, `recorder.protocol`, `recorder.ci` and `recorder.options`.
"""

from recorder._errors import ConfigError, PlaceholderError, VerifyError
from recorder.verify._command import verify_command
from recorder.verify._config import VerifyConfig, find_config, load_config
from recorder.verify._learn import Learning, Learnt, learn, pattern_of
from recorder.verify._learnt import learnt_table, with_learnt
from recorder.verify._live import LiveIds, pair_ids, poll_states
from recorder.verify._plan import Plan, make_plan
from recorder.verify._report import (
    render_html,
    render_json,
    render_junit_report,
    render_markdown,
    render_text,
)
from recorder.verify._result import Latency, NotSent, VerifyResult
from recorder.verify._run import Options, verify_async, verify_capture
from recorder.verify._schedule import TIMEOUT
from recorder.verify._secrets import Credentials, missing_credentials

__all__ = [
    "ConfigError",
    "Credentials",
    "Latency",
    "Learning",
    "Learnt",
    "LiveIds",
    "NotSent",
    "Options",
    "PlaceholderError",
    "Plan",
    "TIMEOUT",
    "VerifyConfig",
    "VerifyError",
    "VerifyResult",
    "find_config",
    "learn",
    "learnt_table",
    "load_config",
    "make_plan",
    "missing_credentials",
    "pair_ids",
    "pattern_of",
    "poll_states",
    "render_html",
    "render_json",
    "render_junit_report",
    "render_markdown",
    "render_text",
    "verify_async",
    "verify_capture",
    "verify_command",
    "with_learnt",
]
