"""What changed on the wire between A2A v0.3 and v1.0, as data.

The one translator between the versions (`_crossing`, `_crosscard`, `_crosswire`) reads these
tables; the diff uses it to tell a version rename from a real difference, replay to serve a
capture to clients of the other version, verify to send a capture to an agent of the other
version.  Names of operations (JSON-RPC
methods, gRPC rpcs and services, REST routes) are not restated here: they are derived from
`OPERATIONS` (`V03_METHOD_RENAMES`, `V03_RPC_RENAMES`, `v1_route_path` in `_operations`), and
task states and StreamResponse kinds come from `_answers`.

v0.3 has two JSON dialects: the JSON-RPC schema (`kind` discriminators, `completed`, `user`,
`parts`) and, over HTTP+JSON and gRPC, the proto-JSON of the v0.3 proto (`TASK_STATE_*` with
`TASK_STATE_CANCELLED`, `ROLE_*`, `Message.content`, StreamResponse wrappers, resource names);
the `V03_PROTO_*` tables are the second's.

Sources: a2a-wire.md §2 (card), §3 (headers), §6 (push config), §7 (enum forms,
discriminators, Part, send configuration); spec §4 (the v1.0 data model) and its Appendix A
(legacy names); the v0.3 proto-JSON names are the shipped descriptors' (`a2a.v1.*`, checked by
the unit tests).
"""

from __future__ import annotations

from collections.abc import Mapping

from recorder.protocol._states import STATE_ALIASES, TASK_STATES

# Enum forms, v0.3 JSON -> v1.0 proto-JSON name (spec §4.1.3 TaskState, §4.1.5 Role).
V03_TASK_STATES: Mapping[str, str] = {
    **{row.v03: row.name for row in TASK_STATES},
    **STATE_ALIASES,
}
V03_ROLES: Mapping[str, str] = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
# Parts: v0.3 `{"kind": "text"|"file"|"data", ...}`; v1.0 drops `kind`, and a file part's
# nested `file` object becomes fields of the part under new names.
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
# v1.0 HTTP+JSON answers are `application/a2a+json` (spec §11.1, v1.0.1); v0.3's were JSON.
V03_CONTENT_TYPES: Mapping[str, str] = {"application/json": "application/a2a+json"}
# The version header every v1.0 request carries (spec §3.6); a v0.3 request has none.
VERSION_HEADER = "A2A-Version"

# ---- the v0.3 proto-JSON dialect (HTTP+JSON and gRPC) -----------------------------------------

# A file part is `{"file": {"fileWithUri"|"fileWithBytes", "mimeType", "name"}}`; a data part
# `{"data": {"data": {...}}}` (`DataPart {Struct data}`).
V03_PROTO_FILE_FIELDS: Mapping[str, str] = {
    "fileWithBytes": "raw",
    "fileWithUri": "url",
    "mimeType": "mediaType",
    "name": "filename",
}
# v1.0 state -> its v0.3 proto-JSON spelling, where the two differ (the double L).
V03_PROTO_STATES: Mapping[str, str] = {new: old for old, new in STATE_ALIASES.items()}
# The send configuration's push config member, as the v0.3 proto names it.
V03_PROTO_SEND_CONFIG_RENAMES: Mapping[str, str] = {
    "pushNotification": "taskPushNotificationConfig"
}
