"""Replies to turns (whole or streamed) and the management calls a person's tools make."""
from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.request
import uuid
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional
from urllib.parse import quote

from .errors import ConciergeRequestError
from .signatures import sign_body

#: The most characters a part may hold: a longer chunk becomes several parts.
MAX_PART = 2000
# A 409 that only says "not yet": the service waits 2 s for the hook's acknowledgement first.
_NOT_YET = "turn_not_acknowledged"


class Client:
    """Talks to Concierge for your server.

    ``secret`` (the deployment's signing secret) signs replies; ``api_key`` and ``base_url`` are for
    the management calls. Every call is retried with backoff on a 5xx, a 429 and a network error,
    which is safe: a reply or part the service already has answers ``200 duplicate``, and management
    calls carry one ``Idempotency-Key`` across their retries. A 409 other than "not acknowledged yet"
    is final and raises :class:`ConciergeRequestError`.
    """

    def __init__(
        self,
        secret: Optional[str] = None,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        attempts: int = 8,
        base_delay: float = 0.25,
        max_delay: float = 5.0,
        timeout: float = 30.0,
        on_retry: Optional[Callable[[ConciergeRequestError, int], None]] = None,
    ) -> None:
        self.secret = secret
        self.api_key = api_key
        self.base_url = base_url.rstrip("/") if base_url else None
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.timeout = timeout
        #: Called before each retry with what failed (to log it) and the attempt about to be made.
        self.on_retry = on_retry

    def reply(self, turn: Mapping[str, Any], text: str, actions: Optional[List[Mapping[str, Any]]] = None) -> Dict[str, Any]:
        """The final reply to a turn (the turn hook's body): resolves it with ``text`` and ``actions``."""
        fields: Dict[str, Any] = {"reply_text": text}
        if actions is not None:
            fields["actions"] = list(actions)
        return self._post_reply(turn, fields)

    def stream(self, turn: Mapping[str, Any], chunks: Iterable[str], actions: Optional[List[Mapping[str, Any]]] = None) -> Dict[str, Any]:
        """Streams a reply as it is written: each chunk as the next part, in order, then the whole.

        Stops at the first final refusal (the turn ended, expired, or was answered elsewhere), closing
        ``chunks``, and raises.
        """
        text = ""
        part = 0
        iterator = iter(chunks)
        try:
            for chunk in iterator:
                if not isinstance(chunk, str):
                    raise TypeError("stream: each chunk must be a string")
                for start in range(0, len(chunk), MAX_PART):
                    piece = chunk[start:start + MAX_PART]
                    self._post_reply(turn, {"part": part, "text": piece})
                    part += 1
                    text += piece
        finally:
            # A writer stopped halfway (a model's stream) is closed, as a for-loop alone would not.
            close = getattr(iterator, "close", None)
            if close is not None:
                close()
        if not text:
            raise ValueError("stream: the reply is empty")
        return self.reply(turn, text, actions)

    def takeover(self, conversation_id: str, name: str) -> Any:
        """A person takes the conversation over, under the name visitors see (1 to 60 characters)."""
        return self._manage(f"/api/v1/conversations/{quote(conversation_id, safe='')}/takeover", {"name": name})

    def release(self, conversation_id: str) -> Any:
        """Back to the agent: turns go to your hook again."""
        return self._manage(f"/api/v1/conversations/{quote(conversation_id, safe='')}/release", {})

    def person_reply(self, conversation_id: str, turn_id: str, text: str, actions: Optional[List[Mapping[str, Any]]] = None) -> Dict[str, Any]:
        """A person's answer to a waiting turn of a conversation they took over."""
        body: Dict[str, Any] = {"reply_text": text}
        if actions is not None:
            body["actions"] = list(actions)
        return self._manage(f"/api/v1/conversations/{quote(conversation_id, safe='')}/turns/{quote(turn_id, safe='')}/reply", body)

    def message(self, conversation_id: str, text: str, name: str, actions: Optional[List[Mapping[str, Any]]] = None) -> Any:
        """A person writes to the visitor without a turn to answer."""
        body: Dict[str, Any] = {"text": text, "name": name}
        if actions is not None:
            body["actions"] = list(actions)
        return self._manage(f"/api/v1/conversations/{quote(conversation_id, safe='')}/messages", body)

    def _post_reply(self, turn: Mapping[str, Any], fields: Mapping[str, Any]) -> Dict[str, Any]:
        if not self.secret:
            raise ValueError("Client: a reply needs secret, the deployment's signing secret")
        body = json.dumps({"conversation_id": turn["conversation_id"], "turn_id": turn["turn_id"], **fields}, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "X-Service-Signature": sign_body(self.secret, body)}
        return self._send(turn["reply_url"], body, headers)

    def _manage(self, path: str, body: Mapping[str, Any]) -> Any:
        if not self.api_key or not self.base_url:
            raise ValueError("Client: management calls need api_key and base_url")
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}", "Idempotency-Key": str(uuid.uuid4())}
        return self._send(self.base_url + path, json.dumps(body, ensure_ascii=False).encode("utf-8"), headers)

    def _send(self, url: str, body: bytes, headers: Mapping[str, str]) -> Any:
        failure: Optional[ConciergeRequestError] = None
        for attempt in range(1, self.attempts + 1):
            if attempt > 1:
                if self.on_retry is not None and failure is not None:
                    self.on_retry(failure, attempt)
                time.sleep(self._delay(attempt - 1, failure))
            request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read() or b"{}").get("data")
            except urllib.error.HTTPError as err:
                try:
                    envelope = json.loads(err.read() or b"{}")
                except ValueError:
                    envelope = {}
                error = envelope.get("error") or {}
                code = error.get("code") or f"http_{err.code}"
                retry_after = err.headers.get("Retry-After") if err.headers else None
                failure = ConciergeRequestError(err.code, code, error.get("message") or f"POST {url} answered {err.code}", float(retry_after) if retry_after and retry_after.isdigit() else None)
                if not (err.code >= 500 or err.code in (408, 429) or code == _NOT_YET):
                    raise failure from None
            except (urllib.error.URLError, OSError) as err:
                failure = ConciergeRequestError(None, "network", f"POST {url}: {err}")
        assert failure is not None
        raise failure

    def _delay(self, retry: int, failure: Optional[ConciergeRequestError]) -> float:
        if failure is not None and failure.retry_after:
            return min(failure.retry_after, self.max_delay)
        ceiling = min(self.base_delay * 2 ** (retry - 1), self.max_delay)
        # Full jitter keeps a crowd of servers from retrying in step after an outage.
        return ceiling / 2 + random.random() * ceiling / 2
