"""The SDK's errors: each carries a ``code`` to branch on."""
from __future__ import annotations

from typing import Optional


class HookVerificationError(Exception):
    """A call was refused by ``verify_hook``: answer it with 401 (400 for ``invalid_body``).

    ``code`` is one of ``no_secret``, ``invalid_secret``, ``missing_signature``,
    ``invalid_signature``, ``stale_timestamp``, ``invalid_body``.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class ConciergeRequestError(Exception):
    """The service refused a request for good (a 4xx, or a 409 that retrying cannot change), or kept
    failing until the retries ran out. ``code`` is the service's error code (``turn_not_pending``,
    ``turn_already_resolved``, ...) or ``network`` when no answer came."""

    def __init__(self, status: Optional[int], code: str, message: str, retry_after: Optional[float] = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.retry_after = retry_after
