"""`[tool.a2a-recorder]` and the `a2a_recorder_config` fixture: keys, types, merging."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recorder.capture import Exchange
from recorder.redaction import ConfigError, RecorderConfig, from_pyproject, read_pyproject


def _keep(exchange: Exchange) -> Exchange:
    return exchange


def test_the_table_and_the_fixture_merge() -> None:
    table = {"redact-headers": ["X-A"], "keep-secrets": True, "card": "card.json", "verify": {}}
    project = from_pyproject({"tool": {"a2a-recorder": table}}, "pyproject.toml")
    fixture = RecorderConfig.from_mapping(
        {
            "redact_headers": ["X-B"],
            "redact_params": ["sig"],
            "keep_secrets": False,
            "before_record": _keep,
        },
        "a2a_recorder_config",
    )
    merged = project.merged(fixture)
    assert merged.redact_headers == ("X-A", "X-B") and merged.redact_params == ("sig",)
    assert merged.keep_secrets is False and merged.card == "card.json"
    assert merged.before_record is _keep
    assert project.merged(RecorderConfig()).keep_secrets is True  # unsaid: the file's stays


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"redact-header": ["X"]}, "unknown key 'redact-header'"),
        ({"redact_headers": "X-A"}, "redact_headers must be a list of names"),
        ({"keep_secrets": "yes"}, "keep_secrets must be true or false"),
        ({"before_record": "no_colon"}, "before_record must be a function or 'module:function'"),
        ({"before_record": "recorder.nope:f"}, "cannot be imported"),
        ({"card": 3}, "card must be a file or URL"),
    ],
)
def test_bad_settings_name_where_and_what(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=f"^here: .*{message}"):
        RecorderConfig.from_mapping(values, "here")


def test_a_card_file_gives_the_replayer_its_api_keys(tmp_path: Path) -> None:
    card = {
        "securitySchemes": {"k": {"apiKeySecurityScheme": {"location": "header", "name": "X-K"}}}
    }
    (tmp_path / "card.json").write_text(json.dumps(card))
    (tmp_path / "pyproject.toml").write_text('[tool.a2a-recorder]\ncard = "card.json"\n')
    config = read_pyproject(tmp_path / "pyproject.toml")
    assert config.card == str(tmp_path / "card.json")
    assert tuple(config.rules().header_names()) == ("X-K",)
    assert read_pyproject(tmp_path / "none.toml") == RecorderConfig()
    (tmp_path / "bad.toml").write_text("[tool\n")
    with pytest.raises(ConfigError, match="bad.toml"):
        read_pyproject(tmp_path / "bad.toml")
    with pytest.raises(ConfigError, match="cannot read an agent card"):
        RecorderConfig(card=str(tmp_path / "missing.json")).rules()
