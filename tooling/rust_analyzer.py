#!/usr/bin/env python3
"""Checks that rust-analyzer sees what #[grad] generates, as an editor would.

Starts `rust-analyzer` as a language server on this crate (src/lib.rs), waits until it
has loaded the workspace and expanded the proc macros, and then asks, at the calls in
`train_step`:

- go to definition of `energy_grad` and `loss_grad`: the `#[grad]` function's name;
- hover over them: their generated doc comments;
- completion after `energy_g` and `model.loss_g`: `energy_grad`, `energy_grad_into`,
  `loss_grad`.

Exits with a non-zero status, saying what differed, if any answer is not the expected
one. Needs `rust-analyzer` on the PATH (`rustup component add rust-analyzer`).
"""

import json
import os
import pathlib
import subprocess
import sys
import threading
import time
import queue

CRATE = pathlib.Path(__file__).resolve().parent
SOURCE = CRATE / "src" / "lib.rs"
TIMEOUT = float(os.environ.get("RA_TIMEOUT", "600"))


class Server:
    """A language server over stdio: JSON-RPC messages with Content-Length headers."""

    def __init__(self):
        self.process = subprocess.Popen(
            ["rust-analyzer"],
            cwd=CRATE,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.messages = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                line = line.decode().strip()
                if not line:
                    break
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":")[1])
            self.messages.put(json.loads(stream.read(length)))

    def send(self, message):
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params, deadline):
        self.next_id += 1
        ident = self.next_id
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            message = self.wait(deadline)
            if message.get("id") == ident and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result")

    def wait(self, deadline):
        """The next message; answers the server's own requests on the way."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("rust-analyzer did not answer in time")
        message = self.messages.get(timeout=remaining)
        if "method" in message and "id" in message:
            # A request of the server's (progress tokens, configuration): say yes.
            result = [{}] if message["method"] == "workspace/configuration" else None
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        return message

    def close(self):
        try:
            self.send({"jsonrpc": "2.0", "id": 0, "method": "shutdown"})
            self.notify("exit", None)
            self.process.wait(timeout=10)
        except Exception:
            self.process.kill()


def position(text, needle, offset=0):
    """The LSP position `offset` characters into the first occurrence of `needle`."""
    index = text.index(needle) + offset
    line = text.count("\n", 0, index)
    column = index - (text.rfind("\n", 0, index) + 1)
    return {"line": line, "character": column}


def main():
    text = SOURCE.read_text()
    uri = SOURCE.as_uri()
    deadline = time.monotonic() + TIMEOUT
    server = Server()
    failures = []
    try:
        server.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": CRATE.as_uri(),
                "capabilities": {
                    "textDocument": {
                        "hover": {"contentFormat": ["markdown", "plaintext"]},
                        "completion": {"completionItem": {"snippetSupport": False}},
                    },
                    "window": {"workDoneProgress": True},
                    "experimental": {"serverStatusNotification": True},
                },
                "initializationOptions": {"checkOnSave": False},
            },
            deadline,
        )
        server.notify("initialized", {})
        server.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "rust",
                    "version": 1,
                    "text": text,
                }
            },
        )
        # Ready when the server says it is quiescent (workspace loaded, build scripts
        # and proc macros built).
        started = time.monotonic()
        while True:
            message = server.wait(deadline)
            if message.get("method") == "experimental/serverStatus":
                status = message["params"]
                if status.get("quiescent"):
                    break
        print(f"rust-analyzer ready after {time.monotonic() - started:.1f} s")

        doc = {"uri": uri}
        energy_call = text.index("energy_grad(0.1")
        loss_call = text.index("loss_grad(x, y)")

        def at(index):
            line = text.count("\n", 0, index)
            return {"line": line, "character": index - (text.rfind("\n", 0, index) + 1)}

        definition_line = {
            "energy_grad": position(text, "pub fn energy(")["line"],
            "loss_grad": position(text, "pub fn loss(")["line"],
        }
        for name, call in [("energy_grad", energy_call), ("loss_grad", loss_call)]:
            params = {"textDocument": doc, "position": at(call + 2)}
            # The first answers may come before the proc macros are expanded: retry.
            for _ in range(30):
                found = server.request("textDocument/definition", params, deadline)
                if found:
                    break
                time.sleep(1)
            locations = found if isinstance(found, list) else [found] if found else []
            lines = [
                (loc.get("targetRange") or loc.get("range"))["start"]["line"]
                for loc in locations
                if (loc.get("targetUri") or loc.get("uri")) == uri
            ]
            if definition_line[name] in lines:
                print(f"go to definition of {name}: line {definition_line[name] + 1}, ok")
            else:
                failures.append(f"go to definition of {name}: got {found}")

            hover = server.request("textDocument/hover", params, deadline)
            contents = json.dumps(hover) if hover else ""
            if "Value and gradient of" in contents:
                print(f"hover over {name}: its generated doc comment, ok")
            else:
                failures.append(f"hover over {name}: got {hover}")

        for prefix, wanted in [
            ("energy_g", ["energy_grad", "energy_grad_into"]),
            ("loss_g", ["loss_grad"]),
        ]:
            # Complete at the end of `prefix` inside the existing call.
            index = text.index(prefix + "rad(") + len(prefix)
            params = {"textDocument": doc, "position": at(index)}
            result = server.request("textDocument/completion", params, deadline)
            items = result.get("items", []) if isinstance(result, dict) else result or []
            labels = {item["label"].split("(")[0] for item in items}
            missing = [name for name in wanted if name not in labels]
            if missing:
                failures.append(f"completion of {prefix}: {missing} not among {sorted(labels)}")
            else:
                print(f"completion of {prefix}…: {', '.join(wanted)}, ok")
    finally:
        server.close()
    for failure in failures:
        print("FAILED:", failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
