"""A fake OpenAI-compatible /chat/completions provider for tests: a real HTTP server on
loopback that answers each POST as its script says and keeps every request it was sent."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# What the provider answers a request body with: (HTTP status, body, delay in seconds).
Script = Callable[[dict[str, Any]], tuple[int, str, float]]


def envelope(content: str, tokens: int = 300) -> str:
    """A chat-completions reply whose message content is `content`."""
    return json.dumps(
        {
            "choices": [{"message": {"role": "assistant", "content": content}}],
            "usage": {"total_tokens": tokens},
        }
    )


class FakeProvider:
    """Answers each POST with what the script says; `requests` holds the path, the
    Authorization header and the JSON body of every request, in arrival order."""

    def __init__(self) -> None:
        self.script: Script = lambda body: (200, envelope(json.dumps({"relevant": False})), 0.0)
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), **body}
                )
                status, reply, delay = fake.script(body)
                time.sleep(delay)
                payload = reply.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        """Stop serving and release the port."""
        self.server.shutdown()
        self.server.server_close()
