"""Concierge for your server: verify the service's calls, mint visitors' tokens, reply (whole or
streamed), hand over to a person, and answer a hook in a few lines. Standard library only."""
from .client import Client
from .errors import ConciergeRequestError, HookVerificationError
from .handler import HookHandler, HookResponse, MemoryDeliveryStore
from .signatures import TRANSCRIPT_EVENT_TYPES, is_tool_call, is_turn_hook, sign_body, verify_hook
from .tokens import mint_user_token

__all__ = [
    "Client",
    "ConciergeRequestError",
    "HookHandler",
    "HookResponse",
    "HookVerificationError",
    "MemoryDeliveryStore",
    "TRANSCRIPT_EVENT_TYPES",
    "is_tool_call",
    "is_turn_hook",
    "mint_user_token",
    "sign_body",
    "verify_hook",
]
__version__ = "0.1.0"
