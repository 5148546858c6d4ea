"""One option table drives every surface of the recorder (issue 23): the keyword arguments of
`RecordingProxy`, the flags of `a2a-recorder record`, the `a2a_*` options the addons declare
to mitmproxy, and the plugin's options; each default is written once, and an error names the
option as the surface it came from says it."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from mitmproxy.test import taddons

from recorder import OptionError
from recorder.cli import main
from recorder.options import RECORD, Option
from recorder.record import RecordingProxy, recording_addons
from recorder.record._deadline import Deadlines

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "jsonrpc-send.http"
UPSTREAM = "http://127.0.0.1:9"


def record_options() -> dict[str, click.Option]:
    command = main.get_command(click.Context(main), "record")
    assert command is not None
    return {p.name: p for p in command.params if isinstance(p, click.Option) and p.name}


def declared() -> dict[str, object]:
    """The addons' mitmproxy options and their defaults, as mitmproxy holds them."""
    addons = recording_addons()
    with taddons.context(*addons.chain()) as tctx:
        names = tctx.options.keys()
        return {name: tctx.options.default(name) for name in names}


def test_every_row_is_on_each_surface_it_names() -> None:
    flags = record_options()
    mitm = declared()
    for option in RECORD:
        if option.cli_flag is not None and not option.switches:
            assert flags[option.name].opts[0] == option.cli_flag, option.name
        name = option.mitm_name
        if name is not None and name.startswith("a2a_"):
            assert name in mitm, name
    assert {"--append", "--force"} <= {f for p in flags.values() for f in p.opts}


def test_each_default_is_the_tables() -> None:
    timeout = RECORD.by_name["read_timeout"].default
    assert timeout == 10.0
    assert record_options()["read_timeout"].default == timeout
    assert declared()["a2a_read_timeout"] == timeout
    assert Deadlines().timeout == timeout
    proxy = RecordingProxy(upstream=UPSTREAM)
    assert proxy.options["read_timeout"] == timeout
    assert proxy._addon_options["a2a_read_timeout"] == timeout
    assert proxy._addon_options["body_size_limit"] == RECORD.by_name["max_body_size"].default


def test_a_keyword_argument_is_checked_against_the_table() -> None:
    proxy = RecordingProxy(upstream=UPSTREAM, read_timeout=2, redact_headers=["X-Seal"])
    assert proxy.options["read_timeout"] == 2.0 and proxy.options["redact_headers"] == ["X-Seal"]
    with pytest.raises(OptionError, match="^read_timeout must be at least 0, not -1"):
        RecordingProxy(upstream=UPSTREAM, read_timeout=-1)
    with pytest.raises(OptionError, match="^max_body_size: expected a number of bytes"):
        RecordingProxy(upstream=UPSTREAM, max_body_size="lots")
    with pytest.raises(OptionError, match="^lint: expected an A2A spec version"):
        RecordingProxy(upstream=UPSTREAM, lint="9.9")
    with pytest.raises(OptionError, match="^redact_headers must be a list of strings"):
        RecordingProxy(upstream=UPSTREAM, redact_headers="X-Seal")


@pytest.mark.parametrize(
    ("surface", "spelt"),
    [
        ("python", "existing='append'"),
        ("cli", "--append"),
        ("mitm", "a2a_existing=append"),
    ],
)
def test_an_option_is_named_as_each_surface_says_it(surface: str, spelt: str) -> None:
    error = OptionError("append to it ({existing=append}); {out} is {read_timeout=3}")
    text = error.spelt(RECORD.spell(surface))
    assert text.startswith(f"append to it ({spelt});")
    assert {"python": "out is read_timeout=3", "cli": "--out is --read-timeout 3"}.get(
        surface, "a2a_out is a2a_read_timeout=3"
    ) in text


def test_a_pytest_option_is_named_as_the_option_or_the_markers_keyword() -> None:
    error = OptionError("{grpc_upstream}: not HOST:PORT; {read_timeout=3}")
    assert error.spelt(RECORD.spell("pytest")) == (
        "--a2a-grpc-upstream (or the marker's grpc_upstream): not HOST:PORT; read_timeout=3"
    )


def holding(folder: Path) -> Path:
    capture = folder / "held.http"
    capture.write_bytes(SAMPLE.read_bytes())
    return capture


def test_an_existing_capture_is_refused_naming_keywords_in_python(tmp_path: Path) -> None:
    with pytest.raises(OptionError) as info:
        RecordingProxy(upstream=UPSTREAM, out=holding(tmp_path))
    assert "(existing='append')" in str(info.value) and "a2a_" not in str(info.value)


def test_a_negated_switch_and_a_switch_pair_fold_into_their_rows() -> None:
    card_rewrite = RECORD.by_name["card_rewrite"]
    assert card_rewrite.cli_flag == "--no-card-rewrite"
    assert card_rewrite.flag_for(None) == "--no-card-rewrite"
    existing = RECORD.by_name["existing"]
    assert existing.flag_for("overwrite") == "--force" and existing.mitm_for("refuse") == (
        "a2a_existing=refuse"
    )


def test_option_names_are_unique_and_every_row_has_help() -> None:
    names = [option.name for option in RECORD]
    assert len(names) == len(set(names))
    assert all(isinstance(option, Option) and option.help for option in RECORD)


# --- the replayer's table ---------------------------------------------------------------------


def test_the_replayers_defaults_are_its_tables() -> None:
    from recorder.options import READ_TIMEOUT, REPLAY
    from recorder.replay import Limits
    from recorder.replay.core._journal import MAX_BYTES
    from recorder.replay.core._state import MAX_SESSIONS

    command = main.get_command(click.Context(main), "replay")
    assert command is not None
    flags = {p.name: p for p in command.params if isinstance(p, click.Option)}
    defaults = {option.name: option.default for option in REPLAY}
    assert defaults["read_timeout"] == READ_TIMEOUT == RECORD.by_name["read_timeout"].default
    assert flags["read_timeout"].default == Limits().read_timeout == READ_TIMEOUT
    assert flags["max_request_bytes"].default == Limits().max_body_bytes
    assert flags["max_sessions"].default == MAX_SESSIONS == defaults["max_sessions"]
    assert flags["journal_bytes"].default == MAX_BYTES == defaults["journal_bytes"]
    assert "max_head_bytes" not in flags and "idle_timeout" not in flags  # programs' only


def test_the_replayers_keyword_arguments_are_checked_against_its_table() -> None:
    """Checked before the replayer binds a socket."""
    from recorder.options import REPLAY
    from recorder.replay import Limits, Replayer

    with pytest.raises(OptionError, match="^timing: expected none, recorded or xN"):
        Replayer([], timing="fast")
    with pytest.raises(OptionError, match="^read_timeout must be at least 0.1, not 0"):
        Replayer([], read_timeout=0)
    with pytest.raises(OptionError, match="^on_miss: forward needs the agent's URL"):
        Replayer([], on_miss="forward")
    with pytest.raises(TypeError, match="unexpected keyword argument 'limits'"):
        Replayer([], limits=None)
    settings = REPLAY.settings({"on_miss": "forward=http://127.0.0.1:9", "read_timeout": 2})
    assert settings["on_miss"] == "http://127.0.0.1:9" and settings["timing"] == "none"
    assert Limits.of(settings).read_timeout == 2.0
