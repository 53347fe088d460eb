"""A scripted OpenAI-compatible chat server (stdlib only) for the CPU benchmarks.

Every `POST …/chat/completions` is answered at once with the same extraction, in the form the
request asks for: a call of the `submit` tool when one is offered (Quarry), else of the first
offered tool (instructor names the tool after its response model), else the JSON as the
message content (`response_format`). Usage counts are fixed, so clients see a complete reply.
"""

import http.server
import json
import threading


class ScriptedModel(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; without this, Nagle's algorithm holds the body
    # back for the client's delayed ACK (40 ms a request on Linux loopback).
    disable_nagle_algorithm = True

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length) or b"{}")
        arguments = json.dumps(self.server.answer)
        tools = [t.get("function", {}).get("name") for t in request.get("tools") or []]
        if tools:
            name = "submit" if "submit" in tools else tools[0]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }],
            }
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": arguments}, "stop"
        body = json.dumps({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": request.get("model", "scripted"),
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def start(answer):
    """Serves `answer` on a free loopback port in a daemon thread; returns (server, base_url)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    server.answer = answer
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"
