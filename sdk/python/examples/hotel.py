"""A customer's server on the Python SDK, as the SDK's tests run it (sdk/sdk.test.ts): the hook,
visitors' tokens, and the tools a person at the front desk uses. Standard library only. Settings
from the environment: CONCIERGE_SECRETS (comma-separated, the current one first), DEPLOYMENT_ID,
CONCIERGE_URL, CONCIERGE_API_KEY, PORT (0: any), STREAM_EVERY_MS."""
import json
import os
import re
import sys
import time
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from concierge_server import Client, HookHandler, mint_user_token  # noqa: E402

env = os.environ
secrets = env.get("CONCIERGE_SECRETS", "").split(",")
client = Client(secret=secrets[0], api_key=env.get("CONCIERGE_API_KEY"), base_url=env.get("CONCIERGE_URL"), attempts=40, max_delay=0.5,
                on_retry=lambda failure, attempt: print(f"retry {attempt} after {failure.status or failure.code}", flush=True))
events = []


def written(text):
    for word in re.findall(r"\S+\s*", text):
        yield word
        time.sleep(int(env.get("STREAM_EVERY_MS", "0")) / 1000)


def on_turn(turn, _client):
    if re.search("person", turn["text"], re.I):
        return {"reply_text": "I am asking the front desk to join.", "handoff": {"reason": "The guest asked for a person"}}
    if re.search("stream", turn["text"], re.I):
        return written(f'One two three four five six seven eight, for "{turn["text"]}".')
    return f"You said: {turn['text']}"


def on_tool(call):
    # A model agent's tool (README, An agent without a server): its arguments match the tool's schema.
    if call["tool"] == "check_room":
        return {"night": call["arguments"]["night"], "free": call["arguments"]["night"] != "Saturday"}
    return None


hook = HookHandler(secrets, on_turn=on_turn, on_event=events.append, on_tool=on_tool, client=client)

# The front desk's own tools, which a person's screen would call.
tools = {
    "/token": lambda body: {"token": mint_user_token(env["DEPLOYMENT_ID"], secrets[0], body["sub"], name="Guest", ctx={"room": "214"})},
    "/takeover": lambda body: client.takeover(body["conversation_id"], body["name"]),
    "/release": lambda body: client.release(body["conversation_id"]),
    "/answer": lambda body: client.person_reply(body["conversation_id"], body["turn_id"], body["text"]),
    "/events": lambda _body: events,
}


def app(environ, start_response):
    path = environ.get("PATH_INFO", "")
    if path in ("/hook", "/transcript", "/tool"):
        return hook.wsgi(environ, start_response)
    tool = tools.get(path)
    if tool is None:
        start_response("404 Not Found", [])
        return [b""]
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0)) or b"{}"
    try:
        result, status = tool(json.loads(body)), "200 OK"
    except Exception as err:  # noqa: BLE001 - the caller reads what went wrong
        result, status = {"error": str(err), "code": getattr(err, "code", None)}, "502 Bad Gateway"
    start_response(status, [("Content-Type", "application/json")])
    return [json.dumps(result).encode("utf-8")]


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class Threaded(ThreadingMixIn, WSGIServer):
    daemon_threads = True


server = make_server("127.0.0.1", int(env.get("PORT", "0")), app, server_class=Threaded, handler_class=Quiet)
print(f"Hotel at http://127.0.0.1:{server.server_port}", flush=True)
server.serve_forever()
