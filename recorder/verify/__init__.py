"""Verify: play the client side of a capture against a live agent, and report what drifted.

`verify_capture(capture, agent_url, ...)` sends each recorded request to the live agent, in
recorded order, through the recorder (so the new session is a proper capture, redaction
included), with the ids the live agent hands out put in place of the recorded ones, and
returns a `VerifyResult`: the protocol-aware diff of the recorded session against the new
one (`recorder.diff`), plus what only verify knows (what could not be sent and why, timing
against recorded).  `result.status` is the exit status: 0 no drift, 1 drift.

Layers, pure first:

- `_plan`: the capture as a plan of sends, each with what it waits for (what had completed
  when it started in the recording, the events of concurrent streams, push deliveries), and
  runs of identical polls folded into one repeated send;
- `_live`: recorded ids -> live ids, replay's provenance (`recorder.replay.Step.slots`) the
  other way, learnt by pairing live answers with recorded ones;
- `_outgoing`: a recorded request with live ids and credentials put in, ready to send;
  `_secrets`: the credentials for redacted headers and parameters;
- `_result`, `_report`: the result and its reports; `_config`: verify.toml;
- `_baseline`: drift as baseline entries, and a result less what a baseline accepts;
  `_learn`: the paths that differ between runs (a noisy agent's noise), `_learnt`: writing
  them into verify.toml; `_trials`: K runs, a pass rate per exchange;
- shells: `_schedule` (runs a plan over a transport, asyncio), `_send` (HTTP and gRPC),
  `_webhook` (verify's own webhook), `_run` (the recorder and the diff), `_modes` (once,
  --learn, --trials), `_command` (the CLI).

Errors: `VerifyError(RuntimeError)` when verify cannot run (exit 2); `ConfigError(ValueError)`
for settings that cannot be used; `PlaceholderError(ValueError)` for a redacted secret that
would reach the agent.

May import `recorder.replay`, `recorder.record`, `recorder.diff`, `recorder.script`,
`recorder.capture`, `recorder.protocol`, `recorder.ci` and `recorder.options`.
"""

from recorder._errors import ConfigError, PlaceholderError, VerifyError
from recorder.verify._baseline import accept, baseline_items
from recorder.verify._command import verify_command
from recorder.verify._config import VerifyConfig, find_config, load_config
from recorder.verify._learn import Learning, Learnt, learn, pattern_of
from recorder.verify._learnt import learnt_table, with_learnt
from recorder.verify._live import LiveIds, pair_ids, poll_states
from recorder.verify._plan import Plan, Send, Skipped, make_plan
from recorder.verify._report import (
    FORMATS,
    render_html,
    render_json,
    render_junit_report,
    render_markdown,
    render_text,
    report,
)
from recorder.verify._result import (
    Latency,
    NotSent,
    VerifyResult,
)
from recorder.verify._run import Options, verify_async, verify_capture
from recorder.verify._schedule import TIMEOUT
from recorder.verify._secrets import Credentials, missing_credentials
from recorder.verify._trials import TRIALS_FORMATS, ExchangeRate, Trials, trials_report

__all__ = [
    "ConfigError",
    "Credentials",
    "ExchangeRate",
    "FORMATS",
    "Latency",
    "Learning",
    "Learnt",
    "LiveIds",
    "NotSent",
    "Options",
    "PlaceholderError",
    "Plan",
    "Send",
    "Skipped",
    "TIMEOUT",
    "TRIALS_FORMATS",
    "Trials",
    "VerifyConfig",
    "VerifyError",
    "VerifyResult",
    "accept",
    "baseline_items",
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
    "report",
    "trials_report",
    "verify_async",
    "verify_capture",
    "verify_command",
    "with_learnt",
]
