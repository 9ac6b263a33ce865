import base64
import hashlib
import hmac
import json
import time
import unittest
from datetime import datetime, timezone

from concierge_server import HookVerificationError, is_turn_hook, sign_body, verify_hook

# The Standard Webhooks specification's published test vector.
VECTOR_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VECTOR_TIMESTAMP = 1614265330
VECTOR_PAYLOAD = b'{"test": 2432232314}'
VECTOR_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

SECRET = "whsec_" + base64.b64encode(bytes([1]) * 30).decode()
OLD = "whsec_" + base64.b64encode(bytes([2]) * 30).decode()
NOW = 1_800_000_000.0


def turn(sent_at=NOW):
    return json.dumps({
        "type": "turn.created", "delivery_id": "8959dcf0-dd60-4df2-a813-2a870d15bf6b",
        "sent_at": datetime.fromtimestamp(sent_at, timezone.utc).isoformat().replace("+00:00", "Z"),
        "deployment_id": "d", "agent_id": "a", "conversation_id": "c", "turn_id": "t",
        "user": {"sub": "s", "name": None, "ctx": None}, "text": "Hi", "mode": "text", "language": "en-US", "reply_url": "http://x/replies",
    }).encode()


EVENT = json.dumps({"id": "evt_1", "type": "turn.rated", "created_at": "2026-11-26T12:00:00Z", "deployment_id": "d", "conversation_id": "c", "data": {"turn_id": "t", "rating": "up", "comment": None}}).encode()


def standard(secrets, body, msg_id="msg_1", at=NOW):
    signed = f"{msg_id}.{int(at)}.".encode() + body
    signatures = " ".join("v1," + base64.b64encode(hmac.new(base64.b64decode(s[6:]), signed, hashlib.sha256).digest()).decode() for s in secrets)
    return {"webhook-id": msg_id, "webhook-timestamp": str(int(at)), "webhook-signature": signatures}


class VerifyHook(unittest.TestCase):
    def refusal(self, *args, **kwargs):
        with self.assertRaises(HookVerificationError) as caught:
            verify_hook(*args, **kwargs)
        return caught.exception.code

    def test_standard_webhooks_test_vector(self):
        headers = {"webhook-id": VECTOR_ID, "webhook-timestamp": str(VECTOR_TIMESTAMP), "webhook-signature": VECTOR_SIGNATURE}
        # The vector's payload is no Concierge call: its signature passes, then the body is refused for what it is.
        self.assertEqual(self.refusal(VECTOR_PAYLOAD, headers, VECTOR_SECRET, now=VECTOR_TIMESTAMP), "invalid_body")
        self.assertEqual(self.refusal(VECTOR_PAYLOAD.replace(b"2", b"3", 1), headers, VECTOR_SECRET, now=VECTOR_TIMESTAMP), "invalid_signature")
        self.assertEqual(self.refusal(VECTOR_PAYLOAD, headers, VECTOR_SECRET, now=VECTOR_TIMESTAMP + 301), "stale_timestamp")

    def test_returns_the_call(self):
        event = verify_hook(turn(), standard([SECRET], turn()), SECRET, now=NOW)
        self.assertEqual((event["type"], event["text"]), ("turn.created", "Hi"))
        self.assertTrue(is_turn_hook(event))
        rated = verify_hook(EVENT, standard([SECRET], EVENT), [SECRET], now=NOW)
        self.assertEqual(rated["data"]["rating"], "up")
        self.assertFalse(is_turn_hook(rated))

    def test_requires_the_standard_webhooks_headers_by_default(self):
        # X-Service-Signature alone signs no time: a recorded call could be replayed for ever.
        self.assertEqual(self.refusal(turn(), {"x-service-signature": sign_body(SECRET, turn())}, SECRET, now=NOW), "missing_signature")
        self.assertEqual(self.refusal(EVENT, {"x-service-signature": sign_body(SECRET, EVENT)}, SECRET, now=NOW), "missing_signature")
        # Opted into: a turn hook dated by its signed sent_at; a transcript event, which has no send time, still not.
        self.assertEqual(verify_hook(turn().decode(), {"X-Service-Signature": sign_body(SECRET, turn())}, SECRET, now=NOW, allow_service_signature_alone=True), json.loads(turn()))
        self.assertEqual(self.refusal(EVENT, {"x-service-signature": sign_body(SECRET, EVENT)}, SECRET, now=NOW, allow_service_signature_alone=True), "missing_signature")
        old = turn(sent_at=NOW - 301)
        self.assertEqual(self.refusal(old, {"x-service-signature": sign_body(SECRET, old)}, SECRET, now=NOW, allow_service_signature_alone=True), "stale_timestamp")

    def test_refuses_a_secret_shorter_than_24_bytes(self):
        for weak in ["whsec_", "whsec_c2hvcnQ=", "whsec_" + base64.b64encode(bytes([7]) * 23).decode(), "whsec_!!!"]:
            self.assertEqual(self.refusal(turn(), standard([SECRET], turn()), weak, now=NOW), "invalid_secret", weak)
            self.assertEqual(self.refusal(turn(), standard([SECRET], turn()), [SECRET, weak], now=NOW), "invalid_secret", weak)

    def test_reads_wsgi_environ_headers(self):
        environ = {("HTTP_" + k.upper().replace("-", "_")): v for k, v in standard([SECRET], EVENT).items()}
        environ["CONTENT_TYPE"] = "application/json"
        self.assertEqual(verify_hook(EVENT, environ, SECRET, now=NOW)["type"], "turn.rated")

    def test_reads_an_asgi_scopes_header_pairs(self):
        pairs = [(b"content-type", b"application/json")] + [(k.encode(), v.encode()) for k, v in standard([SECRET], EVENT).items()]
        self.assertEqual(verify_hook(EVENT, pairs, SECRET, now=NOW)["type"], "turn.rated")

    def test_knows_every_transcript_event_of_the_service(self):
        interrupted = json.dumps({"id": "evt_2", "type": "turn.interrupted", "created_at": "2026-11-27T12:00:00Z", "deployment_id": "d", "conversation_id": "c", "data": {"turn_id": "t", "heard_text": "We have a room."}}).encode()
        self.assertEqual(verify_hook(interrupted, standard([SECRET], interrupted), SECRET, now=NOW)["data"]["heard_text"], "We have a room.")

    def test_any_secret_of_a_rotation(self):
        self.assertEqual(verify_hook(turn(), standard([SECRET, OLD], turn()), OLD, now=NOW)["type"], "turn.created")
        self.assertEqual(verify_hook(turn(), standard([OLD], turn()), [SECRET, OLD], now=NOW)["type"], "turn.created")
        self.assertEqual(verify_hook(turn(), {"x-service-signature": sign_body(OLD, turn())}, [SECRET, OLD], now=NOW, allow_service_signature_alone=True)["type"], "turn.created")

    def test_refusals(self):
        tampered = turn().replace(b"Hi", b"Ho")
        self.assertEqual(self.refusal(tampered, standard([SECRET], turn()), SECRET, now=NOW), "invalid_signature")
        self.assertEqual(self.refusal(tampered, {"x-service-signature": sign_body(SECRET, turn())}, SECRET, now=NOW, allow_service_signature_alone=True), "invalid_signature")
        self.assertEqual(self.refusal(turn(), standard([OLD], turn()), SECRET, now=NOW), "invalid_signature")
        self.assertEqual(self.refusal(turn(), standard([SECRET], turn(), at=NOW - 301), SECRET, now=NOW), "stale_timestamp")
        self.assertEqual(self.refusal(turn(), standard([SECRET], turn(), at=NOW + 301), SECRET, now=NOW), "stale_timestamp")
        self.assertEqual(verify_hook(turn(), standard([SECRET], turn(), at=NOW - 301), SECRET, tolerance=600, now=NOW)["type"], "turn.created")
        self.assertEqual(self.refusal(turn(), {}, SECRET, now=NOW), "missing_signature")
        self.assertEqual(self.refusal(turn(), {"webhook-signature": "v1,abc"}, SECRET, now=NOW), "missing_signature")
        self.assertEqual(self.refusal(turn(), {"x-service-signature": sign_body(SECRET, turn()).upper()}, SECRET, now=NOW, allow_service_signature_alone=True), "invalid_signature")
        self.assertEqual(self.refusal(turn(), standard([SECRET], turn()), [], now=NOW), "no_secret")
        self.assertEqual(self.refusal(b"not json", standard([SECRET], b"not json"), SECRET, now=NOW), "invalid_body")
        self.assertEqual(self.refusal(b"\xff", standard([SECRET], b"\xff"), SECRET, now=NOW), "invalid_body")

    def test_defaults_to_the_clock(self):
        at = time.time()
        body = turn(sent_at=at)
        self.assertEqual(verify_hook(body, standard([SECRET], body, at=at), SECRET)["type"], "turn.created")


if __name__ == "__main__":
    unittest.main()
