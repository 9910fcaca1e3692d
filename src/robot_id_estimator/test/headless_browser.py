"""A page opened in a real headless Chromium over the Chrome DevTools protocol (websockets' synchronous client): its
console errors and uncaught exceptions, every URL it requested, its text, whether each image decoded, and a
screenshot. For the report pages' tests; nothing leaves the machine (the page is a file, the protocol on localhost)."""

from __future__ import annotations

import base64
import itertools
import json
import pathlib
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass

from websockets.sync.client import ClientConnection, connect

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--window-size=1280,1600")
TABLES = ("Object.fromEntries(Array.from(document.querySelectorAll('section[id]'), s => [s.id, "
          "Array.from(s.querySelectorAll('table'), t => Array.from(t.rows, r => Array.from(r.cells, "
          "c => c.textContent.trim())))]))")
"""The page's tables by section, read in the page."""
START_S = 20.0
"""How long Chromium may take to open its DevTools port, and a page to load."""


def chromium() -> str | None:
    """Debian's chromium (scripts/setup_workspace.sh installs it), else Ubuntu's name for it; None without one."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass(frozen=True)
class PageLoad:
    errors: tuple[str, ...]
    """Console errors, uncaught exceptions and error log entries (a resource that failed to load)."""
    requests: tuple[str, ...]
    """Every URL the page requested, itself first."""
    text: str
    """document.body.innerText."""
    images: tuple[tuple[int, int], ...]
    """(naturalWidth, naturalHeight) of each <img>: (0, 0) for one that did not decode."""
    tables: dict[str, list[list[list[str]]]]
    """Per <section id>: its tables, each a list of rows of cell texts."""


class _Session:
    """One DevTools page session: calls answered by id, the events between them kept."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket, self.ids, self.events = socket, itertools.count(1), []

    def call(self, method: str, **params: object) -> dict:
        call_id = next(self.ids)
        self.socket.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=START_S))
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self.events.append(message)

    def wait_for(self, method: str) -> None:
        deadline = time.monotonic() + START_S
        while not any(e.get("method") == method for e in self.events):
            self.events.append(json.loads(self.socket.recv(timeout=max(0.1, deadline - time.monotonic()))))

    def evaluate(self, expression: str) -> object:
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"]["value"]


def _errors(events: list[dict]) -> tuple[str, ...]:
    found = []
    for e in events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            found.append(" ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
        elif method == "Runtime.exceptionThrown":
            found.append(params["exceptionDetails"].get("text", "exception"))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            found.append(params["entry"]["text"])
    return tuple(found)


def _page_socket(user_data_dir: pathlib.Path, process: subprocess.Popen) -> str:
    """The DevTools websocket of Chromium's first page (its port from DevToolsActivePort)."""
    port_file, deadline = user_data_dir / "DevToolsActivePort", time.monotonic() + START_S
    while not port_file.is_file() or not port_file.read_text().strip():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"chromium did not open its DevTools port (exit {process.poll()})")
        time.sleep(0.05)
    port = int(port_file.read_text().split()[0])
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=START_S) as answer:
        pages = [t for t in json.load(answer) if t["type"] == "page"]
    return pages[0]["webSocketDebuggerUrl"]


def _load(session: _Session, page: pathlib.Path, screenshot: pathlib.Path) -> PageLoad:
    """open_page's work in the page's session."""
    for domain in ("Page", "Runtime", "Log", "Network"):
        session.call(f"{domain}.enable")
    session.call("Page.navigate", url=page.resolve().as_uri())
    session.wait_for("Page.loadEventFired")
    text = session.evaluate("document.body.innerText")
    images = session.evaluate("Array.from(document.images, i => [i.naturalWidth, i.naturalHeight])")
    tables = session.evaluate(TABLES)
    shot = session.call("Page.captureScreenshot", format="png")
    screenshot.write_bytes(base64.b64decode(shot["data"]))
    requests = tuple(e["params"]["request"]["url"] for e in session.events
                     if e.get("method") == "Network.requestWillBeSent")
    return PageLoad(_errors(session.events), requests, text, tuple(map(tuple, images)), tables)


def open_page(page: pathlib.Path, screenshot: pathlib.Path, work_dir: pathlib.Path) -> PageLoad:
    """Load `page` in a fresh headless Chromium (its profile in work_dir), save a screenshot of the top of the page
    and return what the page did; Chromium is ended before this returns."""
    user_data_dir = work_dir / "chromium_profile"
    user_data_dir.mkdir(parents=True, exist_ok=True)
    with (work_dir / "chromium.log").open("w") as log:
        process = subprocess.Popen([chromium(), *FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
                                   stdout=log, stderr=log)
    try:
        with connect(_page_socket(user_data_dir, process), max_size=None, open_timeout=START_S) as socket:
            return _load(_Session(socket), page, screenshot)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
