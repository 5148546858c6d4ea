"""The pytest plugin's recording through a `RecordingProxy`, anew (`--a2a-record=once|all`) or
appending what replay cannot answer (`new_episodes`), under `recorder.pytest_plugin`'s
invariants.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Self

import pytest

from recorder._background import Service
from recorder._unanswered import Unanswered, episode_message, episode_problems, forwarded_summary
from recorder.options import RECORD
from recorder.pytest_replay import (
    UNANSWERED,
    A2AEndpoint,
    Settings,
    endpoint,
    load,
    passed_test,
    replayer_for,
)

if TYPE_CHECKING:
    from recorder.capture import Capture, Exchange
    from recorder.replay import JournalRequest, Replayer


def rejected_beside(path: Path) -> Path:
    """Where a recording that did not replace the capture is kept: `echo.rejected.http`."""
    return path.with_name(f"{path.stem}.rejected{path.suffix}")


def _keep_rejected(temporary: Path, path: Path) -> Path | None:
    """Keep a recording that will not replace the capture; None when there is none."""
    from recorder.capture import set_aside

    kept = rejected_beside(path)
    return kept if set_aside(temporary, kept) else None


@contextmanager
def _claimed(path: Path) -> Iterator[Path]:
    """Claim the capture a test records to (the test fails when another process writes it), and
    a draft beside it, removed at the end."""
    from recorder.capture import CaptureBusyError, claim, draft_beside, release, remove_capture

    try:
        claim(path)
    except CaptureBusyError as exc:
        pytest.fail(str(exc), pytrace=False)
    temporary = draft_beside(path)
    try:
        yield temporary
    finally:
        remove_capture(temporary)
        release(path)


def record(settings: Settings, passed: Callable[[], bool]) -> Iterator[A2AEndpoint]:
    from recorder.capture import promote, remove_capture

    with _claimed(settings.path) as temporary:
        remove_capture(rejected_beside(settings.path))  # an earlier run's, now stale
        with _recording(settings, temporary) as proxy:
            yield endpoint(settings, proxy)
        if not passed():
            _keep_rejected(temporary, settings.path)  # the old capture stays as it was
            return
        recorded = _complete_recording(temporary, settings.path)
        if recorded is None:
            warnings.warn(
                f"{settings.path}: the test made no A2A request, nothing recorded", stacklevel=1
            )
        else:
            promote(temporary, settings.path)


def new_episodes(settings: Settings, node: pytest.Item) -> Iterator[A2AEndpoint]:
    capture = load(settings.path)
    answers: list[Exchange] = []  # what the live agent answered, as the recorder wrote it
    with _claimed(settings.path) as temporary:
        with (
            _recording(settings, temporary) as proxy,
            replayer_for(settings, capture, on_miss=proxy.url) as replayer,
        ):
            proxy.addons.save.listeners.append(lambda _path, x, _size: answers.append(x))
            handed_out = replayer.service.sessions.families_of  # ids the replay gave out
            unanswered = node.stash[UNANSWERED] = Unanswered(
                lambda: episode_problems(_forwarded(replayer), answers, handed_out),
                episode_message,
            )
            yield endpoint(settings, replayer, replayer)
        message = unanswered.unsaid()  # what came after the test's body (its own was said)
        if message is not None:
            pytest.fail(message, pytrace=False)
        new = _complete_recording(temporary, settings.path) if passed_test(node) else None
        if new is not None and new.exchanges:
            added = _write_appended(settings.path, capture, new)
            warnings.warn(forwarded_summary(settings.path, added), stacklevel=1)


def _forwarded(replayer: Replayer) -> list[JournalRequest]:
    """The requests the capture could not answer, forwarded to the live agent or not."""
    return [r for r in replayer.journal.requests if r.outcome in ("forwarded", "miss")]


@contextmanager
def _recording(settings: Settings, temporary: Path) -> Iterator[Any]:
    """A RecordingProxy to `temporary`, with gRPC towards the upstream or a refuser; once it
    stops, the test fails when the recording refused gRPC calls, lost exchanges or met an
    error (it replaces no capture)."""
    from recorder.record import RecordingProxy
    from recorder.redaction import RecorderConfig

    if not settings.upstream:
        pytest.fail(
            f"recording needs --a2a-upstream URL ({settings.path} is to be recorded)", pytrace=False
        )
    with contextlib.ExitStack() as stack:
        refuser = None
        grpc_upstream = settings.grpc_upstream
        if grpc_upstream is None:
            refuser = stack.enter_context(GrpcRefuser())
            grpc_upstream = refuser.target
        redaction = settings.recorder or RecorderConfig()
        proxy = stack.enter_context(
            _started(
                lambda: RecordingProxy(
                    upstream=settings.upstream,
                    out=temporary,
                    grpc_upstream=grpc_upstream,
                    keep_secrets=bool(redaction.keep_secrets),
                    redact_headers=redaction.redact_headers,
                    redact_params=redaction.redact_params,
                    card=redaction.card,
                    before_record=redaction.before_record,
                )
            )
        )
        yield proxy
    if refuser is not None and refuser.calls:
        _reject(
            temporary,
            settings.path,
            "this test called gRPC (" + ", ".join(sorted(set(refuser.calls))) + ") while "
            "recording without a gRPC upstream: the calls were refused and are not in the "
            "capture, which was left as it was; pass --a2a-grpc-upstream HOST:PORT (or "
            "a2a_capture(..., grpc_upstream='HOST:PORT'))",
        )
    if not proxy.ledger.clean:
        summary = "; ".join(proxy.ledger.summary())
        _reject(
            temporary,
            settings.path,
            f"recording {settings.path} went wrong, the capture was left as it was: {summary}",
        )


BIND_ATTEMPTS = 3


@contextmanager
def _started(make: Callable[[], Any]) -> Iterator[Any]:
    """Start a RecordingProxy, again when another process took a free port it picked before
    mitmproxy bound it ("address already in use")."""
    from recorder._errors import OptionError
    from recorder.record import ProxyStartError

    for attempt in range(1, BIND_ATTEMPTS + 1):
        try:
            proxy = make()
        except OptionError as exc:  # named as this test run gives it, not as a keyword
            pytest.fail(f"a2a-recorder: {exc.spelt(RECORD.spell('pytest'))}", pytrace=False)
        try:
            proxy.start()
        except ProxyStartError as exc:
            if attempt == BIND_ATTEMPTS or "already in use" not in str(exc):
                raise
            continue
        try:
            yield proxy
        finally:
            proxy.stop()
        return


def _reject(temporary: Path, path: Path, message: str) -> NoReturn:
    """Fail the test with `message`, the recording kept beside the capture (`_keep_rejected`)."""
    kept = _keep_rejected(temporary, path)
    said = f"; what was recorded is kept in {kept}" if kept is not None else ""
    pytest.fail(message + said, pytrace=False)


def _complete_recording(temporary: Path, path: Path) -> Capture | None:
    """The recording when it holds every exchange whole (None: nothing recorded); else the test
    fails and the recording is kept beside the capture."""
    from recorder.capture import CaptureParseError, read_capture

    if not temporary.exists():
        return None
    try:
        capture = read_capture(temporary)
    except CaptureParseError as exc:
        _reject(temporary, path, f"the recording is damaged, capture left as it was: {exc}")
    unanswered = [
        f"#{e.number} {e.classification.operation} ({e.error or 'no response'})"
        for e in capture.exchanges
        if e.response is None
    ]
    if unanswered:
        missing = ", ".join(unanswered)
        _reject(
            temporary,
            path,
            f"the recording is incomplete, capture left as it was; no response for {missing}",
        )
    return capture


def _write_appended(path: Path, old: Capture, new: Capture) -> tuple[Exchange, ...]:
    """`old` with `new`'s exchanges after its own, renumbered and retimed; the exchanges added."""
    from recorder.capture import write_capture

    end = max((e.started_us + e.duration_us for e in old.exchanges), default=0)
    added = tuple(
        dataclasses.replace(e, number=len(old.exchanges) + i, started_us=end + e.started_us)
        for i, e in enumerate(new.exchanges, start=1)
    )
    merged = dataclasses.replace(
        old,
        exchanges=old.exchanges + added,
        upstreams=tuple(dict.fromkeys(old.upstreams + new.upstreams)),
        redacted=tuple(dict.fromkeys(old.redacted + new.redacted)),
    )
    write_capture(path, merged)
    return added


# --- the gRPC refuser ---------------------------------------------------------------------------

REFUSAL = (
    "a2a-recorder is recording without a gRPC upstream: pass --a2a-grpc-upstream "
    "HOST:PORT to record gRPC"
)


class GrpcRefuser(Service):
    """A gRPC server that fails every call (FAILED_PRECONDITION), remembering its path: a recording
    without a gRPC upstream points the card's GRPC interface here, so no client reaches the live
    agent unseen."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.target = ""
        self._server: Any = None

    def start(self) -> Self:
        from concurrent.futures import ThreadPoolExecutor

        import grpc

        refuser = self

        class Handler(grpc.GenericRpcHandler):  # type: ignore[misc]
            def service(self, details: grpc.HandlerCallDetails) -> Any:
                refuser.calls.append(str(details.method))
                return grpc.unary_unary_rpc_method_handler(refuser.refuse)

        from recorder._background import GRPC_SERVER_OPTIONS

        self._server = grpc.server(ThreadPoolExecutor(max_workers=2), options=GRPC_SERVER_OPTIONS)
        self._server.add_generic_rpc_handlers((Handler(),))
        port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        self.target = f"127.0.0.1:{port}"
        return self

    @staticmethod
    def refuse(_request: bytes, context: Any) -> bytes:
        import grpc

        context.abort(grpc.StatusCode.FAILED_PRECONDITION, REFUSAL)
        return b""

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(grace=None)
