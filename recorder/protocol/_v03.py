"""What changed on the wire between A2A v0.3 and v1.0, as data.

The diff reads these tables to tell a version rename from a real difference (`recorder.diff`
translates a v0.3 exchange into the v1.0 shape with them).  Names of operations (JSON-RPC
methods, gRPC rpcs and services, REST routes) are not restated here: they are derived from
`OPERATIONS` (`V03_METHOD_RENAMES`, `V03_RPC_RENAMES`, `v1_route_path` in `_operations`), and
task states and StreamResponse kinds come from `_answers`.

Sources: a2a-wire.md §2 (card), §3 (headers), §6 (push config), §7 (enum forms,
discriminators, Part, send configuration); spec §4 (the v1.0 data model) and its Appendix A
(legacy names).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from recorder.protocol._idmodel import CONFIGS_SEGMENT, TASKS_SEGMENT
from recorder.protocol._states import STATE_ALIASES, TASK_STATES, V03_KINDS

# Enum forms, v0.3 JSON -> v1.0 proto-JSON name (spec §4.1.3 TaskState, §4.1.5 Role).
V03_TASK_STATES: Mapping[str, str] = {
    **{row.v03: row.name for row in TASK_STATES},
    **STATE_ALIASES,
}
V03_ROLES: Mapping[str, str] = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
# Which field holds which enum.
V03_ENUM_FIELDS: Mapping[str, Mapping[str, str]] = {"state": V03_TASK_STATES, "role": V03_ROLES}
# `kind` discriminators of the StreamResponse objects -> v1.0 oneof member names.
V03_KIND_MEMBERS: Mapping[str, str] = V03_KINDS
# Parts: v0.3 `{"kind": "text"|"file"|"data", ...}`; v1.0 drops `kind`, and a file part's
# nested `file` object becomes fields of the part under new names.
V03_PART_KINDS = frozenset({"text", "file", "data"})
V03_FILE_FIELDS: Mapping[str, str] = {
    "bytes": "raw",
    "uri": "url",
    "mimeType": "mediaType",
    "name": "filename",
}
# v0.3 push-config get/list/delete params name the task `id` and the config
# `pushNotificationConfigId`; v1.0 calls them `taskId` and `id`.
V03_PUSH_CONFIG_PARAMS: Mapping[str, str] = {"id": "taskId", "pushNotificationConfigId": "id"}
# The send configuration's push config member.
V03_SEND_CONFIG_RENAMES: Mapping[str, str] = {
    "pushNotificationConfig": "taskPushNotificationConfig"
}
# Legacy card fields folded into `supportedInterfaces`.
V03_CARD_LEGACY_FIELDS = ("url", "preferredTransport", "additionalInterfaces", "protocolVersion")
V03_CARD_EXTENDED_FLAG = ("supportsAuthenticatedExtendedCard", "capabilities.extendedAgentCard")
# v0.3 security schemes carry a `type` discriminator (and apiKey's `in`); v1.0 wraps each in
# a oneof member.  v0.3 requirements `[{name: [scopes]}]` (on the card and on skills) are
# v1.0 `securityRequirements: [{schemes: {name: {list: [scopes]}}}]`.
V03_SECURITY_SCHEME_MEMBERS: Mapping[str, str] = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}
V03_SECURITY_SCHEME_FIELDS: Mapping[str, str] = {"in": "location"}
# Header names (a2a-wire.md §3).
V03_HEADER_RENAMES: Mapping[str, str] = {"x-a2a-extensions": "a2a-extensions"}
# v0.3 gRPC requests name resources (`name: "tasks/{id}"`); v1.0 uses plain id fields.
_TASK, _CONFIG = f"{TASKS_SEGMENT}/([^/]+)", f"{CONFIGS_SEGMENT}/([^/]+)"
V03_RESOURCE_NAMES: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("name", re.compile(rf"{_TASK}/{_CONFIG}\Z"), ("taskId", "id")),
    ("name", re.compile(rf"{_TASK}\Z"), ("id",)),
    ("parent", re.compile(rf"{_TASK}\Z"), ("taskId",)),
)
