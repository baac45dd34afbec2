"""A real ``quizgym serve`` on a loopback port, and a plain HTTP client for it (standard
library only: what any client can do, a browser's JavaScript not needed)."""

from __future__ import annotations

import gzip
import http.client
import os
import re
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WEB_BANK = """\
bank: web
title: Web drill
questions:
  - id: mc-pick
    type: multiple_choice
    tags: [quiz]
    shuffle: true
    prompt: In $\\mathcal{L} = -\\sum_{i \\in M} \\ln p_i$, what is *M*?
    choices:
      - {text: "The set of masked positions", correct: true}
      - {text: "The vocabulary", feedback: "No: the vocabulary is V."}
      - {text: "The model"}
  - id: mc-several
    type: multiple_choice
    tags: [quiz]
    multiple: true
    prompt: Which are prime?
    choices:
      - {text: two, correct: true}
      - {text: three, correct: true}
      - {text: four}
  - id: num-loss
    type: numeric
    tags: [quiz]
    prompt: The model gives the true token probability {p}. What is the loss?
    params: {p: {choices: [0.5, 0.25, 0.2, 0.125, 0.1]}}
    answer: -ln(p)
    units: nats
    mistakes:
      - {answer: -log10(p), feedback: That is log base 10., tag: log-base}
  - id: num-parts
    type: numeric
    tags: [quiz]
    prompt: A sequence has {n} tokens and 15% of them are selected.
    params: {n: {choices: [40, 80, 120]}}
    parts:
      - {id: selected, prompt: "Tokens selected", answer: "0.15 * n", units: tokens}
      - {id: masked, prompt: Of those masked (80%), answer: "0.8 * selected", units: tokens}
  - id: tf-plain
    type: true_false
    prompt: BERT reads the whole sequence at once.
    answer: true
  - id: ste-claim
    type: spot_the_error
    statement: Dropout is always on at test time.
    correction: Dropout is on in training only.
    prompt: What is wrong with the statement?
    choices:
      - {text: "Nothing: it is right."}
      - {text: "Dropout is switched off at test time.", correct: true}
  - id: ft-why
    type: free_text
    prompt: Why mask only 15%?
    model_answer: Enough context must remain.
    rubric:
      - {criterion: context, any_of: [context], points: 1}
"""


def write_class(
    folder: Path, students: tuple[str, ...] = ("ann", "bob", "cy")
) -> tuple[Path, Path]:
    """A bank and a roster in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    bank = folder / "web.yaml"
    bank.write_text(WEB_BANK, encoding="utf-8")
    roster = folder / "roster.csv"
    roster.write_text("student,name\n" + "".join(f"{s},{s.title()}\n" for s in students))
    return bank, roster


class Server:
    """``quizgym serve`` in a subprocess on a free loopback port."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.args = args
        full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "quizgym", "serve", *args, "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full,
        )  # fmt: skip
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if not first.startswith("serving on "):
            self.proc.kill()
            _, err = self.proc.communicate()
            raise RuntimeError(f"quizgym serve did not start: {first!r} {err}")
        self.url = first.split()[-1]
        self.teacher = self.proc.stdout.readline().split()[-1]
        self.proc.stdout.readline()
        parsed = urllib.parse.urlsplit(self.url)
        self.host, self.port = parsed.hostname or "", parsed.port or 0

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")

    def form(self, index: int = 0) -> FormSeen:
        return forms_of(self.text)[index]


@dataclass
class FormSeen:
    action: str
    hidden: dict[str, str] = field(default_factory=dict)
    fields: list[tuple[str, str, str]] = field(default_factory=list)
    """(type, name, value) of every visible field."""

    def names(self) -> list[str]:
        return list(dict.fromkeys(name for _, name, _ in self.fields))


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[FormSeen] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(FormSeen(a.get("action", "")))
        elif tag in ("input", "textarea", "button") and self.forms and "name" in a:
            kind = a.get("type", tag)
            if kind == "hidden":
                self.forms[-1].hidden[a["name"]] = a.get("value", "")
            else:
                self.forms[-1].fields.append((kind, a["name"], a.get("value", "")))


def forms_of(html: str) -> list[FormSeen]:
    parser = _Forms()
    parser.feed(html)
    return parser.forms


class Client:
    """One browser's worth of cookies, over plain HTTP; redirects are not followed."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.cookies: dict[str, str] = {}

    def request(
        self, method: str, path: str, body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:  # fmt: skip
        parsed = urllib.parse.urlsplit(path)
        target = parsed.path + (f"?{parsed.query}" if parsed.query else "")
        conn = http.client.HTTPConnection(self.server.host, self.server.port, timeout=60)
        sent = dict(headers or {})
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        try:
            conn.request(method, target, body=body, headers=sent)
            response = conn.getresponse()
            data = response.read()
            got = {k.lower(): v for k, v in response.getheaders()}
            for key, value in response.getheaders():
                if key.lower() == "set-cookie":
                    name, _, rest = value.partition("=")
                    self.cookies[name] = rest.split(";")[0]
            return Reply(response.status, got, data)
        finally:
            conn.close()

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post(self, path: str, pairs: list[tuple[str, str]] | bytes, **headers: str) -> Reply:
        body = pairs if isinstance(pairs, bytes) else urllib.parse.urlencode(pairs).encode()
        sent = {"Content-Type": "application/x-www-form-urlencoded", **headers}
        return self.request("POST", path, body, sent)

    def sign_in(self, link: str) -> Reply:
        reply = self.get(link)
        assert reply.status == 303, reply.text
        return reply

    def submit(self, reply: Reply, answers: dict[str, str | list[str]], index: int = 0) -> Reply:
        """Fill the page's form with ``answers`` (by slot id) and post it."""
        form = reply.form(index)
        pairs = list(form.hidden.items())
        for name, value in answers.items():
            for one in value if isinstance(value, list) else [value]:
                pairs.append((name, one))
        return self.post(form.action, pairs)


def links(data: Path) -> dict[str, str]:
    rows = (data / "links.csv").read_text(encoding="utf-8").splitlines()[1:]
    return dict(row.split(",", 1) for row in rows)


def verdicts(html: str) -> dict[str, str]:
    """The slot verdicts a page marks for machines."""
    return dict(re.findall(r'data-slot="([^"]+)" data-verdict="([^"]+)"', html))


def gzipped(body: bytes) -> int:
    return len(gzip.compress(body, 9))


def wait(seconds: float) -> None:
    time.sleep(seconds)


def _pg_tool(name: str) -> str | None:
    import glob
    import shutil

    found = shutil.which(name)
    if found:
        return found
    matches = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return matches[-1] if matches else None


class Postgres:
    """A throwaway PostgreSQL server (Debian's) in a temporary folder of its own (not under
    pytest's, which only root may enter), on a free port; as root it runs as the ``postgres``
    user, as initdb requires."""

    def __init__(self) -> None:
        import pwd
        import shutil
        import socket
        import tempfile

        initdb, pg_ctl = _pg_tool("initdb"), _pg_tool("pg_ctl")
        if initdb is None or pg_ctl is None:
            raise FileNotFoundError("initdb")
        self.folder = Path(tempfile.mkdtemp(prefix="quizgym-pg-"))
        prefix: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            prefix = [shutil.which("runuser") or "runuser", "-u", "postgres", "--"]
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.prefix, self.pg_ctl = prefix, pg_ctl
        data = self.folder / "data"
        subprocess.run(
            [*prefix, initdb, "-D", str(data), "-A", "trust", "-U", "quizgym", "-E", "UTF8",
             "--no-sync"],
            check=True, capture_output=True,
        )  # fmt: skip
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off"
            " -c max_connections=200"
        )
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(self.folder / "log"),
             "-w", "start"],
            check=True, capture_output=True,
        )  # fmt: skip
        self.data = data
        self.url = f"postgresql://quizgym@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        subprocess.run(
            [*self.prefix, self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"],
            check=False, capture_output=True,
        )  # fmt: skip
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)
