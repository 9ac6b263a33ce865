import base64
import io
import json
import threading
import time
import unittest
from datetime import datetime, timezone

from concierge_server import HookHandler, sign_body

from .test_client import Service
from .test_signatures import standard

SECRET = "whsec_" + base64.b64encode(bytes([4]) * 30).decode()


def turn_body(delivery, **extra):
    body = {
        "type": "turn.created", "delivery_id": delivery, "sent_at": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
        "deployment_id": "d", "agent_id": "a", "conversation_id": "c", "turn_id": "t", "user": {"sub": "s", "name": None, "ctx": None},
        "text": "Hi", "mode": "text", "language": "en-US", "reply_url": "http://127.0.0.1:9/replies",
    }
    body.update(extra)
    return json.dumps(body).encode()


def event_body(event_id):
    return json.dumps({"id": event_id, "type": "conversation.ended", "created_at": "2026-11-26T12:00:00Z", "deployment_id": "d", "conversation_id": "c", "data": {"reason": "user_ended"}}).encode()


def call(hook, body, signed=True):
    response = hook.handle(body, standard([SECRET], body, at=time.time()) if signed else {})
    return response.status, json.loads(response.body)


def tool_body(call_id, **arguments):
    return json.dumps({
        "type": "tool.call", "call_id": call_id, "sent_at": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
        "deployment_id": "d", "conversation_id": "c", "turn_id": "t", "tool": "check_room", "arguments": arguments,
    }).encode()


class HookHandlerTest(unittest.TestCase):
    def test_answers_a_tool_call_with_what_on_tool_returns_once_and_500_when_it_raises(self):
        runs = []

        def on_tool(tool_call):
            runs.append(tool_call["call_id"])
            if tool_call["arguments"].get("night") == "never":
                raise ValueError("no such night")
            return {"tool": tool_call["tool"], "free": tool_call["arguments"]["night"] == "Friday"}

        hook = HookHandler(SECRET, on_tool=on_tool, on_error=lambda error: None)
        body = tool_body("11111111-1111-4111-8111-111111111111", night="Friday")
        self.assertEqual(call(hook, body), (200, {"tool": "check_room", "free": True}))
        self.assertEqual(call(hook, body), (200, {"tool": "check_room", "free": True}))
        self.assertEqual(len(runs), 1)
        self.assertEqual(call(hook, tool_body("22222222-2222-4222-8222-222222222222", night="never")), (500, {"error": "handler_failed"}))
        self.assertEqual(call(HookHandler(SECRET, on_error=lambda error: None), body)[0], 500)
        self.assertEqual(call(hook, body, signed=False)[0], 401)

    def test_answers_with_what_on_turn_gives(self):
        answers = ["Breakfast is at 7.", {"reply_text": "See", "actions": [{"type": "link", "label": "Menu", "url": "https://x.test/"}]}, {"handoff": {"reason": "asked"}}, None]
        hook = HookHandler(SECRET, on_turn=lambda turn, client: answers.pop(0))
        self.assertEqual(call(hook, turn_body("1")), (200, {"reply_text": "Breakfast is at 7."}))
        self.assertEqual(call(hook, turn_body("2")), (200, {"reply_text": "See", "actions": [{"type": "link", "label": "Menu", "url": "https://x.test/"}]}))
        self.assertEqual(call(hook, turn_body("3")), (200, {"handoff": {"reason": "asked"}}))
        self.assertEqual(call(hook, turn_body("4")), (202, {"received": True}))

    def test_streams_an_iterator_after_its_202(self):
        service = Service()
        self.addCleanup(service.close)

        def written(turn, client):
            yield "One "
            yield "two."

        hook = HookHandler(SECRET, on_turn=written)
        self.assertEqual(call(hook, turn_body("s1", reply_url=service.url + "/replies")), (202, {"received": True}))
        for _ in range(200):
            if len(service.seen) == 3:
                break
            time.sleep(0.01)
        self.assertEqual([s["body"] for s in service.seen], [
            {"conversation_id": "c", "turn_id": "t", "part": 0, "text": "One "},
            {"conversation_id": "c", "turn_id": "t", "part": 1, "text": "two."},
            {"conversation_id": "c", "turn_id": "t", "reply_text": "One two."},
        ])
        self.assertTrue(all(s["headers"]["X-Service-Signature"] == sign_body(SECRET, json.dumps(s["body"], ensure_ascii=False)) for s in service.seen))

    def test_runs_your_function_once_per_delivery(self):
        calls = []
        gate = threading.Event()

        def slow(turn, client):
            gate.wait(5)
            calls.append(turn["delivery_id"])
            return f"answer {len(calls)}"

        hook = HookHandler(SECRET, on_turn=slow)
        body = turn_body("dup")
        results = []
        threads = [threading.Thread(target=lambda: results.append(call(hook, body))) for _ in range(3)]
        for thread in threads:
            thread.start()
        time.sleep(0.05)
        gate.set()
        for thread in threads:
            thread.join(5)
        self.assertEqual(results, [(200, {"reply_text": "answer 1"})] * 3)
        self.assertEqual(call(hook, body), (200, {"reply_text": "answer 1"}))
        self.assertEqual(calls, ["dup"])

    def test_forgets_a_delivery_your_function_failed(self):
        seen, errors = [], []
        failing = [True]

        def on_event(event):
            if failing[0]:
                raise RuntimeError("database down")
            seen.append(event["id"])

        hook = HookHandler(SECRET, on_event=on_event, on_error=errors.append)
        self.assertEqual(call(hook, event_body("evt_1")), (500, {"error": "handler_failed"}))
        failing[0] = False
        self.assertEqual(call(hook, event_body("evt_1")), (200, {"received": True}))
        self.assertEqual(call(hook, event_body("evt_1")), (200, {"received": True}))
        self.assertEqual(seen, ["evt_1"])
        self.assertIn("database down", str(errors[0]))

    def test_samples_and_refusals(self):
        def never(turn, client):
            raise AssertionError("not for samples")

        hook = HookHandler(SECRET, on_turn=never)
        self.assertEqual(call(hook, turn_body("t1", test=True)), (202, {"received": True}))
        status, body = call(hook, turn_body("t2"), signed=False)
        self.assertEqual((status, body["error"]), (401, "missing_signature"))
        status, body = call(hook, b"[]")
        self.assertEqual((status, body["error"]), (400, "invalid_body"))
        with self.assertRaisesRegex(ValueError, "signing secret"):
            HookHandler([""], on_turn=never)
        with self.assertRaisesRegex(ValueError, "at least 24 bytes"):
            HookHandler("whsec_", on_turn=never)

    def test_as_a_wsgi_application(self):
        hook = HookHandler(SECRET, on_turn=lambda turn, client: f"Hello {turn['user']['sub']}")
        body = turn_body("w1")
        started = []
        environ = {"REQUEST_METHOD": "POST", "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body)}
        environ.update({"HTTP_" + k.upper().replace("-", "_"): v for k, v in standard([SECRET], body, at=time.time()).items()})
        out = b"".join(hook.wsgi(environ, lambda status, headers: started.append((status, headers))))
        self.assertEqual(started, [("200 OK", [("Content-Type", "application/json")])])
        self.assertEqual(json.loads(out), {"reply_text": "Hello s"})
        hook.wsgi({"REQUEST_METHOD": "GET"}, lambda status, headers: started.append((status, headers)))
        self.assertEqual(started[-1][0], "405 Method Not Allowed")


if __name__ == "__main__":
    unittest.main()
