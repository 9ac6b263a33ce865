import base64
import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from concierge_server import Client, ConciergeRequestError, sign_body

SECRET = "whsec_" + base64.b64encode(bytes([5]) * 30).decode()


class Service:
    """A stand-in for the service on a real port: each request answered by the next scripted answer."""

    def __init__(self):
        self.seen = []
        self.script = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                service.seen.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(body)})
                status, payload, headers = service.script.pop(0) if service.script else (202, {"success": True, "data": {"turn_id": "t", "status": "acknowledged", "duplicate": False}}, {})
                if status is None:
                    self.connection.close()
                    return
                raw = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", "Content-Length": str(len(raw)), **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def fresh(self, *answers):
        self.seen = []
        self.script = list(answers)


def ok(status, data):
    return (status, {"success": True, "data": data, "meta": {}}, {})


def error(status, code, headers=None):
    return (status, {"success": False, "error": {"code": code, "message": f"{code} happened"}}, headers or {})


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.service = Service()

    @classmethod
    def tearDownClass(cls):
        cls.service.close()

    def client(self, retries=None):
        return Client(secret=SECRET, api_key="vak_test", base_url=self.service.url + "/", base_delay=0.005, max_delay=0.02,
                      on_retry=(lambda failure, attempt: retries.append(failure.code)) if retries is not None else None)

    def turn(self):
        return {"conversation_id": "c", "turn_id": "t", "reply_url": self.service.url + "/replies"}

    def test_signs_and_retries_until_taken(self):
        self.service.fresh(error(503, "unavailable"), (None, None, None), error(429, "rate_limited", {"Retry-After": "0"}), ok(202, {"turn_id": "t", "status": "resolved", "duplicate": False}))
        retries = []
        result = self.client(retries).reply(self.turn(), "Breakfast is at 7.", actions=[{"type": "quick_reply", "label": "Thanks", "text": "Thanks!"}])
        self.assertEqual(result, {"turn_id": "t", "status": "resolved", "duplicate": False})
        self.assertEqual(retries, ["unavailable", "network", "rate_limited"])
        body = {"conversation_id": "c", "turn_id": "t", "reply_text": "Breakfast is at 7.", "actions": [{"type": "quick_reply", "label": "Thanks", "text": "Thanks!"}]}
        for request in self.service.seen:
            self.assertEqual(request["body"], body)
            self.assertEqual(request["headers"]["X-Service-Signature"], sign_body(SECRET, json.dumps(body, ensure_ascii=False)))

    def test_duplicate_is_success_and_not_yet_is_retried(self):
        self.service.fresh(error(409, "turn_not_acknowledged"), ok(200, {"turn_id": "t", "status": "resolved", "duplicate": True}))
        self.assertEqual(self.client().reply(self.turn(), "Again")["duplicate"], True)
        self.assertEqual(len(self.service.seen), 2)

    def test_gives_up_on_a_final_refusal(self):
        self.service.fresh(error(409, "turn_not_pending"))
        with self.assertRaises(ConciergeRequestError) as caught:
            self.client().reply(self.turn(), "Late")
        self.assertEqual((caught.exception.status, caught.exception.code, str(caught.exception)), (409, "turn_not_pending", "turn_not_pending happened"))
        self.assertEqual(len(self.service.seen), 1)

    def test_stops_after_its_attempts(self):
        self.service.fresh(*[error(502, "bad_gateway")] * 8)
        with self.assertRaises(ConciergeRequestError) as caught:
            self.client().reply(self.turn(), "x")
        self.assertEqual(caught.exception.code, "bad_gateway")
        self.assertEqual(len(self.service.seen), 8)

    def test_streams_parts_in_order_then_the_whole(self):
        self.service.fresh()
        long = "€" * 2500
        self.client().stream(self.turn(), iter(["Hello ", "", long]))
        self.assertEqual([s["body"] for s in self.service.seen], [
            {"conversation_id": "c", "turn_id": "t", "part": 0, "text": "Hello "},
            {"conversation_id": "c", "turn_id": "t", "part": 1, "text": "€" * 2000},
            {"conversation_id": "c", "turn_id": "t", "part": 2, "text": "€" * 500},
            {"conversation_id": "c", "turn_id": "t", "reply_text": "Hello " + long},
        ])

    def test_abandons_a_stream_on_a_final_409(self):
        self.service.fresh(ok(202, {}), error(409, "turn_not_pending"))
        closed = []

        def written():
            try:
                i = 0
                while True:
                    yield f"word {i} "
                    i += 1
            finally:
                closed.append(True)

        with self.assertRaises(ConciergeRequestError):
            self.client().stream(self.turn(), written())
        self.assertEqual(closed, [True])
        self.assertEqual(len(self.service.seen), 2)

    def test_management_calls(self):
        self.service.fresh(error(500, "internal"), ok(200, {"id": "c", "handler": "person"}))
        self.assertEqual(self.client().takeover("c/1", "Ana"), {"id": "c", "handler": "person"})
        self.assertEqual([(s["path"], s["body"], s["headers"]["Authorization"]) for s in self.service.seen], [("/api/v1/conversations/c%2F1/takeover", {"name": "Ana"}, "Bearer vak_test")] * 2)
        self.assertEqual(self.service.seen[0]["headers"]["Idempotency-Key"], self.service.seen[1]["headers"]["Idempotency-Key"])
        self.service.fresh()
        self.client().release("c")
        self.client().person_reply("c", "t", "Yes")
        self.client().message("c", "Hello", "Ana")
        self.assertEqual([(s["path"], s["body"]) for s in self.service.seen], [
            ("/api/v1/conversations/c/release", {}),
            ("/api/v1/conversations/c/turns/t/reply", {"reply_text": "Yes"}),
            ("/api/v1/conversations/c/messages", {"text": "Hello", "name": "Ana"}),
        ])


if __name__ == "__main__":
    unittest.main()
