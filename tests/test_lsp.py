"""`daimyo lsp` driven the way an editor drives it: a subprocess speaking JSON-RPC over stdio
(initialize, didOpen, didChange, completion, hover, definition, shutdown), on a variant package
that extends the bundled Shogun, so names come from another package of the combo."""
from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls", reason="the language server needs pygls (pip install 'daimyo[lsp]')")

ROOT = Path(__file__).resolve().parent.parent

MANIFEST = """id: tax-rice
name: Taxes bring rice
version: 0.1.0
players: {min: 3, max: 5}
extends: shogun
files: [rules.yaml]
"""
RULES = """triggers:
  rice_with_taxes:
    "on": built
    when: province == Mikawa and options.side == "sun"
    do: |
      player.rice += 1
      say("{player} gets rice in {province}")
"""


class Client:
    """A minimal LSP client: Content-Length framed JSON-RPC over the server's stdin/stdout."""

    def __init__(self, cwd: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "lsp"], cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        self.next_id = 0
        self.notifications: list[dict] = []
        self.inbox: queue.Queue = queue.Queue()
        threading.Thread(target=self._reader, daemon=True).start()

    def send(self, msg: dict) -> None:
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _reader(self) -> None:
        while True:
            length = 0
            while True:
                line = self.proc.stdout.readline()
                if not line:
                    self.inbox.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self.inbox.put(json.loads(self.proc.stdout.read(length)))

    def read(self, timeout: float = 60) -> dict:
        try:
            msg = self.inbox.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the server said nothing for {timeout}s") from None
        assert msg is not None, f"the server closed its output; stderr:\n{self.proc.stderr.read().decode()}"
        return msg

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            msg = self.read()
            if msg.get("id") == self.next_id and "method" not in msg:
                assert "error" not in msg, msg
                return msg.get("result")
            if "method" in msg and "id" in msg:  # a request from the server (e.g. register capability)
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            else:
                self.notifications.append(msg)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def diagnostics_for(self, uri: str) -> list[dict]:
        """The next diagnostics the server publishes for `uri`."""
        while True:
            for i, msg in enumerate(self.notifications):
                if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
                    del self.notifications[i]
                    return msg["params"]["diagnostics"]
            msg = self.read()
            if "method" in msg and "id" in msg:
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            else:
                self.notifications.append(msg)

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def session(tmp_path: Path):
    pkg = tmp_path / "tax-rice"
    pkg.mkdir()
    (pkg / "ruleset.yaml").write_text(MANIFEST, encoding="utf-8")
    (pkg / "rules.yaml").write_text(RULES, encoding="utf-8")
    client = Client(tmp_path)
    init = client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    uri = (pkg / "rules.yaml").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1,
                                                            "text": RULES}})
    yield client, uri, init
    client.close()


def position(text: str, needle: str, offset: int = 0) -> dict:
    for n, line in enumerate(text.splitlines()):
        if needle in line:
            return {"line": n, "character": line.index(needle) + offset}
    raise AssertionError(needle)


def test_server_announces_its_features(session) -> None:
    _, _, init = session
    caps = init["capabilities"]
    assert caps["hoverProvider"] and caps["definitionProvider"] and "completionProvider" in caps
    assert init["serverInfo"]["name"] == "daimyo"


def test_a_clean_file_has_no_diagnostics_and_a_typo_is_located_as_you_type(session) -> None:
    client, uri, _ = session
    assert client.diagnostics_for(uri) == []
    broken = RULES.replace("province == Mikawa", "province == Mikawaa")
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": broken}]})
    found = client.diagnostics_for(uri)
    assert found, "an unknown province in the unsaved text is reported"
    d = found[0]
    assert d["source"] == "daimyo" and d["severity"] == 1
    assert d["range"]["start"] == position(broken, "Mikawaa")
    assert "Mikawa`" in d["message"]  # the "did you mean"
    rules = Path(uri[len("file://"):])
    assert "Mikawaa" not in rules.read_text(encoding="utf-8"), "the server validated the buffer, not the file"
    # The same code and place as `daimyo validate` gives once the text is saved.
    rules.write_text(broken, encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "engine.cli", "validate", "--format", "json", str(rules.parent)],
                       capture_output=True, text=True, cwd=rules.parent.parent, timeout=120,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    cli = json.loads(r.stdout)
    assert [(x["code"], x["line"] - 1, x["col"] - 1) for x in cli] == \
        [(x["code"], x["range"]["start"]["line"], x["range"]["start"]["character"]) for x in found]


def test_completion_offers_names_from_the_base_package(session) -> None:
    client, uri, _ = session
    client.diagnostics_for(uri)
    text = RULES.replace("province == Mikawa", "province == Mik")
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": text}]})
    got = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                     "position": position(text, "Mik ", 3)})
    labels = {i["label"]: i for i in got["items"]}
    assert "Mikawa" in labels and labels["Mikawa"]["detail"] == "space"
    assert all(label.startswith("Mik") for label in labels)
    # After a dot: fields and attributes; in `options.side == "`: the option's values.
    line = '      player.ri'
    text2 = RULES.replace("      player.rice += 1", line)
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                             "contentChanges": [{"text": text2}]})
    got = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                     "position": position(text2, "player.ri", 9)})
    assert "rice" in {i["label"] for i in got["items"]}
    got = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                     "position": position(RULES, '"sun"', 1)})
    assert {i["label"] for i in got["items"]} == {"sun", "moon"}


def test_hover_explains_primitives_and_where_names_come_from(session) -> None:
    client, uri, _ = session
    client.diagnostics_for(uri)
    got = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position(RULES, "say(", 1)})
    assert "say(" in got["contents"]["value"] and "primitive" in got["contents"]["value"]
    got = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                "position": position(RULES, "Mikawa", 2)})
    text = got["contents"]["value"]
    assert "space" in text and "`shogun`" in text and "provinces.yaml" in text


def test_definition_jumps_into_the_base_package(session) -> None:
    client, uri, _ = session
    client.diagnostics_for(uri)
    got = client.request("textDocument/definition", {"textDocument": {"uri": uri},
                                                     "position": position(RULES, "built", 1)})
    assert got and got[0]["uri"].endswith("/rulesets/shogun/actions.yaml")
    lines = (ROOT / "rulesets/shogun/actions.yaml").read_text(encoding="utf-8").splitlines()
    assert lines[got[0]["range"]["start"]["line"]].strip().startswith("built:")
