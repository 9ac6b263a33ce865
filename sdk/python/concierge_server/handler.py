"""A hook endpoint in a few lines, for any framework: verify, deduplicate, call your function."""
from __future__ import annotations

import json
import sys
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Iterable as IterableABC
from concurrent.futures import Future
from typing import Any, Callable, Dict, Iterable, Mapping, NamedTuple, Optional, Tuple

from .client import Client
from .errors import HookVerificationError
from .signatures import DEFAULT_TOLERANCE_S, Body, HookEvent, Secrets, check_secrets, is_tool_call, is_turn_hook, verify_hook


class HookResponse(NamedTuple):
    """What to answer a call: give it to your framework as status, headers and body."""

    status: int
    headers: Dict[str, str]
    body: bytes


def _respond(status: int, body: Any) -> HookResponse:
    return HookResponse(status, {"Content-Type": "application/json"}, json.dumps(body).encode("utf-8"))


_ACCEPTED = _respond(202, {"received": True})
_DELIVERED = _respond(200, {"received": True})


class MemoryDeliveryStore:
    """Where answered calls are remembered by delivery id (default: this process's memory, a day each,
    at most ``limit``). Keep them in Redis or your database when several processes share the hook:
    any object with ``get(id) -> HookResponse | None`` and ``set(id, response)`` will do."""

    def __init__(self, limit: int = 10_000, keep_seconds: float = 86_400) -> None:
        self._answers: "OrderedDict[str, Tuple[HookResponse, float]]" = OrderedDict()
        self._limit = limit
        self._keep = keep_seconds
        self._lock = threading.Lock()

    def get(self, delivery_id: str) -> Optional[HookResponse]:
        with self._lock:
            kept = self._answers.get(delivery_id)
            if kept and kept[1] > time.monotonic():
                return kept[0]
            self._answers.pop(delivery_id, None)
            return None

    def set(self, delivery_id: str, response: HookResponse) -> None:
        with self._lock:
            self._answers.pop(delivery_id, None)
            self._answers[delivery_id] = (response, time.monotonic() + self._keep)
            while len(self._answers) > self._limit:
                self._answers.popitem(last=False)


def _log_error(error: BaseException) -> None:
    print("concierge hook:", "".join(traceback.format_exception(type(error), error, error.__traceback__)), file=sys.stderr)


class HookHandler:
    """The framework-free core of a hook endpoint.

    ``on_turn(turn, client)`` returns a string or ``{"reply_text", "actions"?}`` (answered at once),
    ``{"handoff": {"reason"}, "reply_text"?}`` (a person is asked for), an iterator of strings (a
    model's stream: ``202`` at once, then the reply streamed in parts from a thread), or ``None``
    (``202``; reply later with ``client.reply``). ``on_tool(call)`` answers a model agent's tool
    call: its arguments already match the tool's JSON Schema, and what it returns (any JSON value)
    is given to the model; raise to tell the model the tool failed. ``on_event(event)`` gets each transcript event;
    raise to have it sent again later. A retried call gets the answer the first one got, and your
    function runs once per delivery.
    """

    def __init__(
        self,
        secrets: Secrets,
        on_turn: Optional[Callable[[HookEvent, Client], Any]] = None,
        on_event: Optional[Callable[[HookEvent], None]] = None,
        on_tool: Optional[Callable[[HookEvent], Any]] = None,
        client: Optional[Client] = None,
        store: Any = None,
        tolerance: float = DEFAULT_TOLERANCE_S,
        on_error: Callable[[BaseException], None] = _log_error,
        allow_service_signature_alone: bool = False,
    ) -> None:
        # A secret missing or too short to be one is refused when the handler is made, not at the first call.
        try:
            self.secrets = check_secrets(secrets)
        except HookVerificationError as error:
            raise ValueError("HookHandler: secrets must hold the deployment's signing secret" if error.code == "no_secret" else f"HookHandler: {error}") from None
        self.allow_service_signature_alone = allow_service_signature_alone
        self.on_turn = on_turn
        self.on_event = on_event
        self.on_tool = on_tool
        self.client = client or Client(secret=self.secrets[0])
        self.store = store if store is not None else MemoryDeliveryStore()
        self.tolerance = tolerance
        self.on_error = on_error
        self._in_flight: Dict[str, "Future[HookResponse]"] = {}
        self._lock = threading.Lock()

    def handle(self, raw_body: Body, headers: Mapping[str, Any]) -> HookResponse:
        try:
            event = verify_hook(raw_body, headers, self.secrets, tolerance=self.tolerance, allow_service_signature_alone=self.allow_service_signature_alone)
        except HookVerificationError as err:
            return _respond(400 if err.code == "invalid_body" else 401, {"error": err.code, "message": str(err)})
        # A sample from test-hook: its ids match no turn, so it is verified and acknowledged, nothing more.
        if event.get("test"):
            return _ACCEPTED if is_turn_hook(event) else _DELIVERED
        delivery_id = event["delivery_id"] if is_turn_hook(event) else event["call_id"] if is_tool_call(event) else event["id"]
        with self._lock:
            running = self._in_flight.get(delivery_id)
            if running is None:
                kept = self.store.get(delivery_id)
                if kept is not None:
                    return kept
                mine: "Future[HookResponse]" = Future()
                self._in_flight[delivery_id] = mine
        if running is not None:
            return running.result()
        try:
            response = self._answer(event)
            self.store.set(delivery_id, response)
        except Exception as err:  # noqa: BLE001 - your function's failure becomes a 500 the service retries
            self.on_error(err)
            response = _respond(500, {"error": "handler_failed"})
        finally:
            with self._lock:
                self._in_flight.pop(delivery_id, None)
        mine.set_result(response)
        return response

    def _answer(self, event: HookEvent) -> HookResponse:
        if is_tool_call(event):
            if self.on_tool is None:
                raise RuntimeError(f"a tool call ({event.get('tool')}) arrived, and no on_tool was given")
            return _respond(200, self.on_tool(event))
        if not is_turn_hook(event):
            if self.on_event is not None:
                self.on_event(event)
            return _DELIVERED
        if self.on_turn is None:
            raise RuntimeError("a turn hook arrived, and no on_turn was given")
        answer = self.on_turn(event, self.client)
        if answer is None:
            return _ACCEPTED
        if isinstance(answer, str):
            return _respond(200, {"reply_text": answer})
        if isinstance(answer, Mapping):
            return _respond(200, dict(answer))
        if isinstance(answer, IterableABC):
            threading.Thread(target=self._stream, args=(event, answer), daemon=True).start()
            return _ACCEPTED
        raise TypeError("on_turn must return a string, a dict, an iterator of strings or None")

    def _stream(self, turn: HookEvent, chunks: Iterable[str]) -> None:
        try:
            self.client.stream(turn, chunks)
        except Exception as err:  # noqa: BLE001 - reported, the thread has no caller
            self.on_error(err)

    def wsgi(self, environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        """This handler as a WSGI application (Flask, Django, gunicorn, wsgiref): mount it at your hook's path."""
        if environ.get("REQUEST_METHOD") != "POST":
            response = _respond(405, {"error": "method_not_allowed"})
        else:
            length = int(environ.get("CONTENT_LENGTH") or 0)
            response = _respond(413, {"error": "payload_too_large"}) if length > 1024 * 1024 else self.handle(environ["wsgi.input"].read(length), environ)
        reasons = {200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized", 405: "Method Not Allowed", 413: "Payload Too Large", 500: "Internal Server Error"}
        start_response(f"{response.status} {reasons.get(response.status, '')}".strip(), list(response.headers.items()))
        return [response.body]
