"""One run of a program against one side (the recorder in front of the agent, or the replayer).

A run binds the program's symbols to values of its own: what the agent handed out (`T0`,
`C0`) as the answers come, what the client makes up (`X0`, `P0`, `K0`, `H0`, `U0`, every
messageId and JSON-RPC id) from the run's own `random.Random`, so that a run repeats from its
seed and the other run of the program sends fresh values of the same shape.  Every step's
outcome is kept as the client saw it, with when it started and ended (for telling which
requests the replayer's journal holds for it) and the names of the values (`names`), which
the judge renames the outcome by.

Push deliveries reach a webhook of the run's own (`Webhook`): each config names a URL of its
own under it (`H0`), and the deliveries each URL received are the program's last outcome.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from replay_fuzz.judge import Names, normalise
from replay_fuzz.program import GRPC, JSONRPC, Program, Step
from replay_fuzz.wire import Endpoints, Outcome, Wire

TERMINAL = frozenset(
    {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
)
MAX_POLLS = 200
POLL_PAUSE = 0.02


# --- the webhook -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Delivery:
    path: str
    token: str | None
    authorization: str | None
    body: Any


class Webhook:
    """Push deliveries to 127.0.0.1 on a port of its own: every POST kept, answered 200."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._deliveries: list[Delivery] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's naming
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(data)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    body = {"text": data.decode("utf-8", "replace")}
                delivery = Delivery(
                    self.path,
                    self.headers.get("X-A2A-Notification-Token"),
                    self.headers.get("Authorization"),
                    body,
                )
                with owner._lock:
                    owner._deliveries.append(delivery)
                    owner._lock.notify_all()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def deliveries(self, prefix: str = "") -> list[Delivery]:
        with self._lock:
            return [d for d in self._deliveries if d.path.startswith(prefix)]

    def settle(self, prefix: str, expect: int | None, quiet: float, limit: float) -> None:
        """Wait until the deliveries under `prefix` stop coming: none for `quiet` seconds
        (and at least `expect` of them, when known), or `limit` seconds in all."""
        deadline = time.monotonic() + limit
        count, since = -1, time.monotonic()
        while time.monotonic() < deadline:
            now = len(self.deliveries(prefix))
            if now != count:
                count, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet and (expect is None or count >= expect):
                return
            time.sleep(0.02)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


# --- a run --------------------------------------------------------------------------------


@dataclass
class StepResult:
    step: int
    outcome: Any
    started: float  # time.time(), to find the replayer's journal entries of the step
    ended: float


@dataclass
class RunResult:
    program: Program
    steps: list[StepResult]
    deliveries: list[Any]  # [{webhook: URL, received: [...]}], by the URL's name
    names: Names

    def normalised(self) -> list[Any]:
        """Every step's outcome, then the deliveries, renamed (`judge.normalise`)."""
        raw = [s.outcome for s in self.steps] + [self.deliveries]
        renamed: list[Any] = normalise(raw, self.names)
        return renamed


@dataclass
class Run:
    """One program against one side.  `ids` makes up every value the client chooses."""

    program: Program
    endpoints: Endpoints
    ids: random.Random
    webhook: Webhook
    values: dict[str, str] = field(default_factory=dict)  # symbol -> this run's value
    seen_timestamps: dict[str, str] = field(default_factory=dict)  # task id -> last timestamp
    counter: int = 0  # JSON-RPC requests so far
    messages: int = 0  # messageIds made up so far
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.names = Names()
        self.hook_prefix = f"/hook/{self.ids.getrandbits(48):012x}"
        self.names.constant(self.webhook.base + self.hook_prefix, "<webhook>")
        for http in (self.endpoints.http, *self.endpoints.http_aliases):
            self.names.constant(http, "<http>")
        for grpc in (self.endpoints.grpc, *self.endpoints.grpc_aliases):
            self.names.constant(grpc, "<grpc>")
        self.wires = [Wire(self.endpoints, self._jsonrpc_id) for _ in range(self.program.clients)]

    # -- values ----------------------------------------------------------------------------

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.ids.getrandbits(128), version=4))

    def message_id(self) -> str:
        """A fresh messageId, named `<m3>` for the program's fourth: a replay that shows the
        client another messageId than the one it sent shows as a difference."""
        with self.lock:
            self.messages += 1
            value = self.uuid()
            self.names.bind(value, f"<m{self.messages}>")
            return value

    def _jsonrpc_id(self) -> int | str:
        with self.lock:
            self.counter += 1
            style = self.program.jsonrpc_ids
            if style == "counter":
                return self.counter
            if style == "int":
                return self.ids.randrange(10**9)
            return self.uuid()

    def made_up(self, symbol: str, shape: str = "uuid") -> str:
        """The run's value for a symbol the client makes up (a new one at first use)."""
        if symbol not in self.values:
            letter = symbol[0]
            if letter == "H":
                value = f"{self.webhook.base}{self.hook_prefix}/{self.ids.getrandbits(32):08x}"
            elif letter == "U" and shape == "nonexistent":
                value = f"nonexistent-{self.ids.getrandbits(64):016x}"
            elif letter == "U" and shape == "digits":
                value = str(10**8 + self.ids.randrange(9 * 10**8))
            elif letter == "P":
                value = f"cfg-{self.ids.getrandbits(32):08x}"
            else:
                value = self.uuid()
            self.bind(symbol, value)
        return self.values[symbol]

    def bind(self, symbol: str, value: str) -> None:
        if symbol not in self.values and value not in self.names:
            self.values[symbol] = value
            self.names.bind(value, f"<{symbol}>")

    def value(self, symbol: str | None, shape: str = "uuid") -> str | None:
        """The value a step names: made up, handed out (or `unbound-T3` when the step that
        should have bound it got no task: then both runs say so in their outcomes)."""
        if symbol is None:
            return None
        if symbol[0] in "XPKHU":
            return self.made_up(symbol, shape)
        return self.values.get(symbol, f"unbound-{symbol}")

    # -- running ----------------------------------------------------------------------

    def execute(self) -> RunResult:
        """Every step in order; its outcome and when it ran."""
        results: list[StepResult] = []
        try:
            for index, step in enumerate(self.program.steps):
                started = time.time()
                outcome = self.step(step)
                results.append(StepResult(index, outcome, started, time.time()))
        finally:
            for wire in self.wires:
                wire.close()
        return RunResult(self.program, results, [], self.names)

    def collect_deliveries(self, result: RunResult, expect: int | None) -> None:
        """Wait for the program's push deliveries and add them to `result`, by webhook URL."""
        configured = any(s.op == "push_create" or "push_hook" in s.args for s in self.program.steps)
        if not configured:
            return
        # Live, nobody knows how many will come: none for a second (on a loaded machine the
        # agent's next POST can take a while); replayed, as many as live, then a little more.
        quiet = 1.0 if expect is None else 0.3
        self.webhook.settle(self.hook_prefix, expect, quiet=quiet, limit=10.0)
        grouped: dict[str, list[Any]] = {}
        for delivery in self.webhook.deliveries(self.hook_prefix):
            shown: dict[str, Any] = {"body": delivery.body}
            if delivery.token is not None:
                shown["token"] = delivery.token
            if delivery.authorization is not None:
                shown["authorization"] = delivery.authorization
            grouped.setdefault(self.webhook.base + delivery.path, []).append(shown)
        # By the webhook URL's name (`<H2>`), so both runs list them in the same order.
        result.deliveries = [
            {"webhook": url, "received": grouped[url]}
            for url in sorted(grouped, key=lambda u: self.names.bound.get(u, u))
        ]

    def step(self, step: Step) -> Any:
        operation = getattr(self, "_" + step.op)
        return operation(step)

    def _call(self, step: Step, operation: str, request: dict[str, Any], **how: Any) -> Outcome:
        wire = self.wires[step.client]
        outcome = wire.call(
            step.binding, operation, request, conn=step.conn, as_snake=step.snake, **how
        )
        self._saw(outcome)
        return outcome

    def _saw(self, value: Any) -> None:
        """Keep each task's latest status timestamp (a later `statusTimestampAfter` uses it)."""
        if isinstance(value, dict):
            status = value.get("status")
            task = value.get("id")
            stamp = status.get("timestamp") if isinstance(status, dict) else None
            if isinstance(task, str) and isinstance(stamp, str):
                self.seen_timestamps[task] = stamp
            for child in value.values():
                self._saw(child)
        elif isinstance(value, list):
            for child in value:
                self._saw(child)

    # -- the operations ----------------------------------------------------------------------

    def _message(self, step: Step) -> dict[str, Any]:
        message: dict[str, Any] = {
            "messageId": self.message_id(),
            "role": "ROLE_USER",
            "parts": [{"text": step.arg("text")}],
        }
        context = self.value(step.arg("context"))
        if context is not None:
            message["contextId"] = context
        task = self.value(step.arg("task"), step.arg("shape", "uuid"))
        if task is not None:
            message["taskId"] = task
        request: dict[str, Any] = {"message": message}
        configuration: dict[str, Any] = {}
        if step.arg("immediate"):
            configuration["returnImmediately"] = True
        if step.arg("history") is not None:
            configuration["historyLength"] = step.arg("history")
        if "push_hook" in step.args:
            config: dict[str, Any] = {
                "url": self.value(step.arg("push_hook")),
                "token": self.value(step.arg("push_token")),
            }
            if "push_config" in step.args:
                config["id"] = self.value(step.arg("push_config"))
            configuration["taskPushNotificationConfig"] = config
        if configuration:
            request["configuration"] = configuration
        return request

    def _bind_created(self, step: Step, outcome: Outcome) -> None:
        task = _first_task(outcome)
        if task is None:
            return
        if "binds" in step.args and isinstance(task.get("id"), str):
            self.bind(step.arg("binds"), task["id"])
        if "binds_context" in step.args and isinstance(task.get("contextId"), str):
            self.bind(step.arg("binds_context"), task["contextId"])

    def _send(self, step: Step) -> Any:
        outcome = self._call(step, "SendMessage", self._message(step))
        self._bind_created(step, outcome)
        if step.arg("immediate") and step.arg("text") != "wait":
            return _racy(outcome)  # the task goes on: what it shows yet is the agent's timing
        return outcome

    def _stream(self, step: Step) -> Any:
        after_first = None
        if step.arg("cancel_after_first"):

            def after_first(first: Any) -> Outcome:
                # The task the stream is about, named by its first event; cancelled on a new
                # connection of the stream's binding (the stream holds its own).
                found = _first_task({"body": first})
                return self._cancel_on_the_side(step, (found or {}).get("id", "unbound"))

        request = self._message(step)
        outcome = self._call(step, "SendStreamingMessage", request, **_after(after_first))
        self._bind_created(step, outcome)
        return outcome

    def _cancel_on_the_side(self, step: Step, task: str) -> Outcome:
        wire = Wire(self.endpoints, self._jsonrpc_id)
        try:
            outcome = wire.call(step.binding, "CancelTask", {"id": task})
        finally:
            wire.close()
        self._saw(outcome)
        return outcome

    def _get(self, step: Step) -> Any:
        request: dict[str, Any] = {"id": self.value(step.arg("task"), step.arg("shape", "uuid"))}
        if step.arg("history") is not None:
            request["historyLength"] = step.arg("history")
        return self._call(step, "GetTask", request)

    def _poll(self, step: Step) -> Any:
        """GetTask until the task is in a terminal state (or an error): the last answer."""
        request = {"id": self.value(step.arg("task"))}
        outcome: Outcome = {}
        for _ in range(MAX_POLLS):
            outcome = self._call(step, "GetTask", request)
            task = _first_task(outcome)
            state = (task or {}).get("status", {}).get("state")
            if task is None or state in TERMINAL:
                return outcome
            time.sleep(POLL_PAUSE)
        return {"still polling": outcome}

    def _cancel(self, step: Step) -> Any:
        task = self.value(step.arg("task"), step.arg("shape", "uuid"))
        return self._call(step, "CancelTask", {"id": task})

    def _subscribe(self, step: Step) -> Any:
        task = self.value(step.arg("task"), step.arg("shape", "uuid"))
        after_first = None
        if step.arg("cancel_after_first"):

            def after_first(first: Any) -> Outcome:
                return self._cancel_on_the_side(step, task or "")

        verb = step.arg("verb") if step.binding not in (JSONRPC, GRPC) else None
        return self._call(step, "SubscribeToTask", {"id": task}, verb=verb, **_after(after_first))

    def _list(self, step: Step) -> Any:
        """ListTasks, then each next page over the bindings `pages` names (the token the
        previous page gave, whoever gave it)."""
        request: dict[str, Any] = {}
        context = self.value(step.arg("context"))
        if context is not None:
            request["contextId"] = context
        if step.arg("status") is not None:
            request["status"] = step.arg("status")
        for arg, name in (
            ("page_size", "pageSize"),
            ("history", "historyLength"),
            ("artifacts", "includeArtifacts"),
        ):
            if step.arg(arg) is not None:
                request[name] = step.arg(arg)
        after = step.arg("after")
        if after is not None:
            if after[:1] == "T":  # a task's status time, as this client last saw it
                task = self.values.get(after)
                after = self.seen_timestamps.get(task or "", "2000-01-01T00:00:00Z")
            request["statusTimestampAfter"] = after
        pages = list(step.arg("pages", ())) or [step.binding]
        shown: list[Any] = []
        for number, binding in enumerate(pages):
            here = Step(step.op, step.client, binding, step.conn, step.snake, step.args)
            outcome = self._call(here, "ListTasks", request)
            shown.append(self._projected(outcome))
            token = _next_page_token(outcome)
            if not token or number == len(pages) - 1:
                break
            request = {**request, "pageToken": token}
        return shown[0] if len(shown) == 1 else {"pages": shown}

    def _projected(self, outcome: Outcome) -> Outcome:
        """A listing as this program can judge it: tasks of its own in full, any other task
        in the agent's store (another program's) as `<other>`."""

        def walk(value: Any) -> Any:
            if isinstance(value, dict):
                if "tasks" in value and isinstance(value["tasks"], list):
                    return {
                        **{k: walk(v) for k, v in value.items() if k != "tasks"},
                        "tasks": [t if self._own(t) else "<other>" for t in value["tasks"]],
                    }
                return {k: walk(v) for k, v in value.items()}
            return value

        return walk(outcome)  # type: ignore[no-any-return]

    def _own(self, task: Any) -> bool:
        return isinstance(task, dict) and task.get("id") in self.names

    def _push_create(self, step: Step) -> Any:
        task = self.value(step.arg("task"))
        request: dict[str, Any] = {
            "taskId": task,
            "url": self.value(step.arg("hook")),
            "token": self.value(step.arg("token")),
        }
        if step.arg("config") is not None:
            request["id"] = self.value(step.arg("config"))
        return self._call(step, "CreateTaskPushNotificationConfig", request)

    def _config_ref(self, step: Step) -> dict[str, Any]:
        task = self.value(step.arg("task"), step.arg("shape", "uuid"))
        config = step.arg("config")
        # A config created without an id has the task's (a2a-sdk's default): named by it.
        value = task if config == step.arg("task") else self.value(config)
        return {"taskId": task, "id": value}

    def _push_get(self, step: Step) -> Any:
        return self._call(step, "GetTaskPushNotificationConfig", self._config_ref(step))

    def _push_delete(self, step: Step) -> Any:
        return self._call(step, "DeleteTaskPushNotificationConfig", self._config_ref(step))

    def _push_list(self, step: Step) -> Any:
        task = self.value(step.arg("task"), step.arg("shape", "uuid"))
        return self._call(step, "ListTaskPushNotificationConfigs", {"taskId": task})

    def _unknown(self, step: Step) -> Any:
        wire = self.wires[step.client]
        if step.binding == GRPC:
            return wire.raw_grpc(step.arg("rpc"), step.conn)
        if step.binding == JSONRPC:
            body = {"jsonrpc": "2.0", "id": 1, "method": step.arg("method"), "params": {}}
            return wire.raw_http("POST", "/a2a/jsonrpc", step.conn, body)
        path = step.arg("path").replace("{task}", self.value(step.arg("task")) or "")
        return wire.raw_http("GET", "/a2a/rest" + path, step.conn)

    def _card(self, step: Step) -> Any:
        return self.wires[step.client].raw_http("GET", "/.well-known/agent-card.json", step.conn)

    def _parallel(self, step: Step) -> Any:
        """Identical clients at once, each with ids of its own: their outcomes as a sorted
        list (which client the agent served first cannot matter)."""
        copies = int(step.arg("copies"))
        script = Program(f"{self.program.name}/parallel", tuple(step.arg("steps")), 1)
        runs = [
            Run(script, self.endpoints, random.Random(self.ids.getrandbits(64)), self.webhook)
            for _ in range(copies)
        ]
        with ThreadPoolExecutor(copies) as pool:
            done = list(pool.map(lambda run: run.execute(), runs))
        shown = sorted(
            json.dumps(normalise([s.outcome for s in result.steps], result.names), sort_keys=True)
            for result in done
        )
        for run in runs:  # the copies' ids are the program's own in later listings
            for value, name in run.names.items():
                if name[1:2] in "TCXm":
                    self.names.bind(value, f"<parallel {name[1:-1]}>")
        return {"copies": [json.loads(s) for s in shown]}


def _after(after_first: Callable[[Any], Outcome] | None) -> dict[str, Any]:
    return {} if after_first is None else {"after_first": after_first}


def _first_task(outcome: Any) -> dict[str, Any] | None:
    """The first task an answer carries (a send's, a get's, a stream's first event's)."""
    if not isinstance(outcome, dict):
        return None
    for document in _documents(outcome):
        if isinstance(document, dict):
            if "result" in document:
                document = document["result"]
            if isinstance(document, dict) and "task" in document:
                document = document["task"]
            if isinstance(document, dict) and "id" in document and "status" in document:
                return document
    return None


def _documents(outcome: Outcome) -> list[Any]:
    if "body" in outcome:
        return [outcome["body"]]
    if "reply" in outcome:
        return [outcome["reply"]]
    if "events" in outcome:
        return [e.get("data") for e in outcome["events"][:1]]
    return list(outcome.get("messages", ())[:1])


def _racy(outcome: Outcome) -> Outcome:
    """A send that returned at once while its task goes on: the task's ids are what the
    client can rely on, its state and artifacts so far are the agent's timing."""
    task = _first_task(outcome)
    if task is None:
        return outcome
    kept = {k: v for k, v in outcome.items() if k not in ("body", "reply")}
    kept["task"] = {"id": task.get("id"), "contextId": task.get("contextId")}
    return kept


def _next_page_token(outcome: Outcome) -> str | None:
    for document in _documents(outcome):
        if isinstance(document, dict):
            document = document.get("result", document)
            if isinstance(document, dict) and document.get("nextPageToken"):
                return str(document["nextPageToken"])
    return None
