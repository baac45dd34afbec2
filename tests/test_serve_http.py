"""``quizgym serve`` over plain HTTP against a real uvicorn on a loopback port: signing in,
practice and the quiz, and every hostile request refused with a 4xx page and a reason."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from serve_helpers import Client, Server, gzipped, links, verdicts, write_class

from quizgym.issued import read_issued
from quizgym.serve.app import SIGN_IN_FAILURES, SignInLimit
from quizgym.serve.keys import Identity, Secret

pytest.importorskip("uvicorn")


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    folder = tmp_path_factory.mktemp("serve")
    bank, roster = write_class(folder)
    data = folder / "data"
    with Server(
        str(bank), "--roster", str(roster), "--data", str(data), "--quiz-tag", "quiz",
        "--attempts", "2", "--rate", "1000",
    ) as server:  # fmt: skip
        yield server, data


def signed_in(room: tuple[Server, Path], student: str) -> Client:
    server, data = room
    client = Client(server)
    client.sign_in(links(data)[student])
    return client


def test_the_data_folder_holds_the_secret_links_and_manifest(room: tuple[Server, Path]) -> None:
    server, data = room
    assert server.url.startswith("http://127.0.0.1:")
    assert stat.S_IMODE((data / "secret").stat().st_mode) == 0o600
    assert stat.S_IMODE((data / "links.csv").stat().st_mode) == 0o600
    assert set(links(data)) == {"ann", "bob", "cy"}
    issued = read_issued(data / "issued.json")
    assert issued.mode == "per-student"
    assert issued.questions == ["mc-pick", "mc-several", "num-loss", "num-parts"]
    assert [s.id for s in issued.students] == ["ann", "bob", "cy"]
    assert (data / "serve.sqlite3").is_file()


def test_a_page_without_a_session_asks_to_sign_in(room: tuple[Server, Path]) -> None:
    reply = Client(room[0]).get("/practice")
    assert reply.status == 401
    assert "Sign in with the link your teacher sent you." in reply.text


def test_every_page_carries_the_security_headers(room: tuple[Server, Path]) -> None:
    client = signed_in(room, "ann")
    for path in ("/", "/practice", "/quiz", "/nowhere"):
        reply = client.get(path)
        assert reply.headers["content-security-policy"].startswith("default-src 'self'"), path
        assert reply.headers["referrer-policy"] == "no-referrer"
        assert "<script" not in reply.text and "style=" not in reply.text
    cookie = Client(room[0]).sign_in(links(room[1])["ann"]).headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie


def test_a_forged_or_damaged_link_is_refused(room: tuple[Server, Path]) -> None:
    server, data = room
    good = links(data)["ann"]
    token = good.rsplit("/", 1)[1]
    body, _, sig = token.rpartition(".")
    for bad in (
        f"{body}.{'A' * len(sig)}",  # forged signature
        token.replace(".YW5u.", ".Ym9i."),  # another student's name under ann's signature
        "s.%FF%FE.1.x",  # not base64, not UTF-8
        "x" * 5000,
    ):
        reply = Client(server).get(f"/in/{bad}")
        assert reply.status == 403, bad
        assert "This sign-in link cannot be used" in reply.text
        assert "set-cookie" not in reply.headers


def test_an_expired_link_is_refused_with_its_reason(room: tuple[Server, Path]) -> None:
    server, data = room
    secret = Secret.load(data / "secret")
    old = secret.link_token(Identity("ann"), expires=datetime.now(UTC) - timedelta(minutes=1))
    reply = Client(server).get(f"/in/{old}")
    assert reply.status == 403
    assert "has expired: ask your teacher for a new link" in reply.text


def test_a_forged_session_cookie_is_refused(room: tuple[Server, Path]) -> None:
    client = signed_in(room, "ann")
    name, value = next(iter(client.cookies.items()))
    client.cookies[name] = value.replace(".YW5u.", ".Ym9i.")
    reply = client.get("/practice")
    assert reply.status == 401
    assert "not signed by this server" in reply.text


def test_practice_grades_at_once_and_marks_each_slot(room: tuple[Server, Path]) -> None:
    client = signed_in(room, "bob")
    page = client.get("/practice")
    assert page.status == 200
    form = page.form()
    assert form.action == "/practice"
    assert set(form.hidden) == {"_token", "_csrf"}
    assert form.names() == ["mc-pick"]  # the first new item, one field named by its slot id
    assert '<label for="f-mc-pick-0">' in page.text
    choice = next(v for _, n, v in form.fields if n == "mc-pick")
    sent = client.submit(page, {"mc-pick": choice})
    assert sent.status == 303
    done = client.get(sent.headers["location"])
    assert done.status == 200
    assert set(verdicts(done.text)) == {"mc-pick"}
    assert verdicts(done.text)["mc-pick"] in {"correct", "incorrect"}
    # The next page is another question (a wrong answer comes back after others).
    assert client.get("/practice").form().names() == ["mc-several"]


def test_a_repeated_submit_is_recorded_once(room: tuple[Server, Path]) -> None:
    server, data = room
    client = signed_in(room, "cy")
    page = client.get("/practice")
    first = client.submit(page, {"mc-pick": "A"})
    again = client.submit(page, {"mc-pick": "B"})  # a reload, a double click: the same form
    assert first.status == again.status == 303
    assert first.headers["location"] == again.headers["location"]
    done = client.get(first.headers["location"]).text
    assert 'value="A" checked' in done
    teacher = Client(server)
    teacher.sign_in(server.teacher)
    row = re.search(r"<td>cy</td><td>Cy</td><td>(\d+)</td>", teacher.get("/teacher").text)
    assert row is not None and row[1] == "1"


def test_a_form_without_its_csrf_token_is_refused(room: tuple[Server, Path]) -> None:
    client = signed_in(room, "ann")
    page = client.get("/practice")
    form = page.form()
    for csrf in ([], [("_csrf", "forged")], [("_csrf", form.hidden["_csrf"])] * 2):
        reply = client.post("/practice", [("_token", form.hidden["_token"]), *csrf, ("x", "1")])
        assert reply.status == 403
        assert "did not come from this site" in reply.text
    other = signed_in(room, "bob")  # another session's token is not this one's
    reply = other.post("/practice", list(form.hidden.items()))
    assert reply.status == 403


@pytest.mark.parametrize(
    ("body", "headers", "status", "reason"),
    [
        (b"a=" + b"x" * 300_000, {}, 413, "The form is larger than 256 KB."),
        (b"mc-pick=%FF%FE", {}, 400, "The form is not valid UTF-8 text."),
        ("mc-pick=é".encode(), {}, 400, "The form is not valid UTF-8 text."),
        (b"&".join(b"f%d=1" % k for k in range(500)), {}, 400, "more than 400 fields"),
        (b"{}", {"Content-Type": "application/json"}, 415, "Send the answers as a form"),
    ],
)
def test_malformed_bodies_get_a_4xx_page_with_a_reason(
    room: tuple[Server, Path], body: bytes, headers: dict[str, str], status: int, reason: str
) -> None:
    client = signed_in(room, "ann")
    client.get("/practice")
    reply = client.post("/practice", body, **headers)
    assert reply.status == status
    assert reason in reply.text
    assert "Traceback" not in reply.text


def test_unknown_slots_and_oversize_answers_are_refused(room: tuple[Server, Path]) -> None:
    client = signed_in(room, "ann")
    page = client.get("/practice")
    slot = page.form().names()[0]
    hidden = list(page.form().hidden.items())
    reply = client.post("/practice", [*hidden, ("nope.part", "1")])
    assert reply.status == 400
    assert f"the form has no answer field 'nope.part' (its fields: {slot})" in reply.text
    reply = client.post("/practice", [*hidden, (slot, "1" * 2001)])
    assert reply.status == 400
    assert "is 2001 characters long; at most 2000" in reply.text
    reply = client.post("/practice", [*hidden, (slot, "a\x00b")])
    assert reply.status == 400
    reply = client.post("/practice", [("_csrf", page.form().hidden["_csrf"]), ("_token", "zz")])
    assert reply.status == 404
    assert "was not handed to you" in reply.text


def test_a_blank_or_unreadable_answer_is_asked_again_and_not_recorded(
    room: tuple[Server, Path],
) -> None:
    client = signed_in(room, "ann")
    page = client.get("/practice")
    slot = page.form().names()[0]
    blank = client.submit(page, {})
    assert blank.status == 422
    assert "Type an answer first." in blank.text
    assert blank.form().hidden["_token"] == page.form().hidden["_token"]
    unreadable = client.submit(page, {slot: "Z"})
    assert unreadable.status == 422
    assert 'role="alert"' in unreadable.text


def keys_in(data: Path, student: str) -> list[str]:
    """The numeric keys of a student's versions, as the page would spell them (4 figures)."""
    issued = read_issued(data / "issued.json")
    record = issued.student(student)
    assert record is not None
    out = []
    for qid, index in record.versions.items():
        for key in issued.versions[qid][index].keys:
            if re.fullmatch(r"-?[0-9.]+(e-?[0-9]+)?", key) and "." in key:
                out.append(key[: key.index(".") + 4])
    return out


def test_no_page_holds_a_key_or_a_seed_before_the_verdict(room: tuple[Server, Path]) -> None:
    server, data = room
    issued = read_issued(data / "issued.json")
    for student in ("ann", "bob", "cy"):
        client = signed_in(room, student)
        page = client.get("/quiz")
        assert page.status == 200
        text = page.text
        hidden = keys_in(data, student)
        assert hidden, "the quiz has numeric keys"
        for key in hidden:
            assert key not in text, (student, key)
        record = issued.student(student)
        assert record is not None and record.seed is not None
        assert str(record.seed) not in text
        for word in ("correct", "tolerance", "mistake", "log base", "explanation", "seed"):
            assert word not in text.lower().replace("incorrect", ""), word


def test_pages_stay_small(room: tuple[Server, Path]) -> None:
    client = signed_in(room, "ann")
    for path in ("/", "/practice", "/quiz", "/static/quizgym.css"):
        reply = client.get(path)
        assert reply.status == 200
        assert gzipped(reply.body) <= 15 * 1024, path


def test_a_quiz_counts_attempts_and_the_last_answer(room: tuple[Server, Path]) -> None:
    client = signed_in(room, "bob")
    page = client.get("/quiz")
    assert "Attempts: 0 used, 2 left." in page.text
    assert page.form().names() == [
        "mc-pick", "mc-several", "num-loss", "num-parts.selected", "num-parts.masked", "_finish",
    ]  # fmt: skip
    sent = client.submit(page, {"num-loss": "1000", "mc-several": ["A", "B"]})
    assert sent.status == 303 and sent.headers["location"] == "/quiz"
    page = client.get("/quiz")
    assert "Attempts: 1 used, 1 left." in page.text
    marks = verdicts(page.text)
    assert marks == {"num-loss": "incorrect", "mc-several": "correct"}
    assert "Answer:" not in page.text  # attempts remain: no key yet
    again = client.submit(page, {"num-loss": "-1"})
    assert again.status == 303
    page = client.get("/quiz")
    assert "Attempts: 2 used, 0 left." in page.text
    assert page.text.count("<form") == 0  # nothing left to submit
    assert verdicts(page.text)["num-loss"] == "incorrect"
    assert "Answer:" in page.text  # no attempts left: the keys are shown
    late = client.submit(client.get("/practice"), {})  # a quiz post on a stale quiz form
    assert late.status in (303, 422)


def test_a_quiz_refuses_a_submission_past_its_cap(room: tuple[Server, Path]) -> None:
    client = signed_in(room, "cy")
    tokens = []
    for _ in range(2):
        page = client.get("/quiz")
        tokens.append(page.form())
        assert client.submit(page, {"num-loss": "1"}).status == 303
    stale = tokens[-1]
    fresh = [("_token", "not-a-token"), ("_csrf", stale.hidden["_csrf"]), ("num-loss", "2")]
    assert client.post("/quiz", fresh).status == 404
    replay = client.post("/quiz", [*stale.hidden.items(), ("num-loss", "3")])
    assert replay.status == 303  # the same form again: its stored result, nothing new


def test_the_teacher_page_and_gradebook(room: tuple[Server, Path]) -> None:
    server, _ = room
    teacher = Client(server)
    assert teacher.sign_in(server.teacher).headers["location"] == "/teacher"
    page = teacher.get("/teacher")
    assert page.status == 200 and "<caption>Progress</caption>" in page.text
    book = teacher.get("/teacher/gradebook.csv")
    assert book.status == 200
    lines = book.text.splitlines()
    assert lines[0] == "student,name,score,max_score,percent,practice_answers"
    assert {line.split(",")[0] for line in lines[1:]} == {"ann", "bob", "cy"}
    student = signed_in(room, "ann")
    assert student.get("/teacher").status == 403


def readable(names: list[str]) -> dict[str, str | list[str]]:
    """An answer the engine can read for each field (a letter for choices, else a number)."""
    return {n: "A" if n.startswith("mc-") else "1" for n in names}


def run_server(folder: Path, *extra: str) -> Server:
    bank, roster = folder / "web.yaml", folder / "roster.csv"
    return Server(str(bank), "--roster", str(roster), "--data", str(folder / "data"), *extra)


def test_answers_past_the_rate_limit_are_refused(tmp_path: Path) -> None:
    write_class(tmp_path)
    with run_server(tmp_path, "--rate", "2") as server:
        client = Client(server)
        client.sign_in(links(tmp_path / "data")["ann"])
        statuses = []
        for _ in range(3):
            page = client.get("/practice")
            statuses.append(client.submit(page, readable(page.form().names())).status)
        assert statuses == [303, 303, 429]
        page = client.get("/practice")
        reply = client.submit(page, readable(page.form().names()))
        assert "at most 2 a minute" in reply.text


def test_a_restart_keeps_every_answer_and_version(tmp_path: Path) -> None:
    write_class(tmp_path)
    data = tmp_path / "data"
    with run_server(tmp_path, "--quiz-ids", "num-loss,mc-pick") as server:
        client = Client(server)
        client.sign_in(links(data)["ann"])
        page = client.get("/quiz")
        assert client.submit(page, {"num-loss": "0.5"}).status == 303
        before = client.get("/quiz").text
        practice = client.get("/practice")
        done = client.submit(practice, {"mc-pick": "A"}).headers["location"]
        shown = client.get(done).text
    manifest = (data / "issued.json").read_text()
    with run_server(tmp_path, "--quiz-ids", "num-loss,mc-pick") as server:
        client = Client(server)
        client.sign_in(links(data)["ann"])  # the links still work: the secret is kept
        after = client.get("/quiz").text
        assert verdicts(after) == verdicts(before) == {"num-loss": "incorrect"}
        assert "Attempts: 1 used, no limit." in after
        again = client.get(done).text
        assert verdicts(again) == verdicts(shown) and verdicts(shown)
        assert again.split("<form", 1)[0] == shown.split("<form", 1)[0]
    assert (data / "issued.json").read_text() == manifest
    with pytest.raises(RuntimeError, match="issued for another quiz"):
        run_server(tmp_path, "--quiz-ids", "mc-pick")


def test_a_quiz_window_and_feedback_after_closing(tmp_path: Path) -> None:
    write_class(tmp_path)
    now = datetime.now(UTC)
    soon = (now + timedelta(days=1)).isoformat()
    with run_server(tmp_path, "--quiz-ids", "num-loss", "--closes", soon,
                    "--feedback", "closed") as server:  # fmt: skip
        client = Client(server)
        client.sign_in(links(tmp_path / "data")["ann"])
        page = client.get("/quiz")
        assert client.submit(page, {"num-loss": "1"}).status == 303
        page = client.get("/quiz")
        assert verdicts(page.text) == {}
        assert "The verdicts are shown once the quiz closes." in page.text
    env = {"QUIZGYM_NOW": (now + timedelta(days=2)).isoformat()}
    with Server(str(tmp_path / "web.yaml"), "--roster", str(tmp_path / "roster.csv"), "--data",
                str(tmp_path / "data"), "--quiz-ids", "num-loss", "--closes", soon,
                "--feedback", "closed", env=env) as server:  # fmt: skip
        client = Client(server)
        client.sign_in(links(tmp_path / "data")["ann"])
        page = client.get("/quiz")
        assert "The quiz is closed." in page.text
        assert verdicts(page.text) == {"num-loss": "incorrect"}
        assert "Answer:" in page.text
        sent = client.post("/quiz", [("_csrf", "x"), ("_token", "y")])
        assert sent.status == 403


def test_the_cli_refuses_bad_options_in_one_line(tmp_path: Path) -> None:
    write_class(tmp_path)
    (tmp_path / "data").mkdir()
    with pytest.raises(RuntimeError, match="has no question nope"):
        run_server(tmp_path, "--quiz-ids", "nope")
    os.chmod(tmp_path / "data", 0o755)
    secret = tmp_path / "data" / "secret"
    secret.write_text("00" * 32)
    secret.chmod(0o644)
    with pytest.raises(RuntimeError, match="others may read the server's secret"):
        run_server(tmp_path)
    assert json.loads('{"ok": 1}')  # the helper parses JSON; nothing else is needed here


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000154a24f5f0000000049454e44ae426082"
)


def test_a_banks_images_are_served_to_signed_in_students_only(tmp_path: Path) -> None:
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "dot.png").write_bytes(PNG)
    bank = tmp_path / "pics.yaml"
    bank.write_text(
        "bank: pics\ntitle: Pictures\nquestions:\n"
        "  - id: tf-dot\n    type: true_false\n    answer: true\n"
        "    prompt: 'The dot is black. ![a black dot](figures/dot.png)'\n",
        encoding="utf-8",
    )
    roster = tmp_path / "roster.csv"
    roster.write_text("student\nann\n")
    with Server(str(bank), "--roster", str(roster), "--data", str(tmp_path / "data")) as server:
        client = Client(server)
        assert client.get("/img/pics/figures/dot.png").status == 401
        client.sign_in(links(tmp_path / "data")["ann"])
        page = client.get("/practice").text
        assert '<img src="/img/pics/figures/dot.png" alt="a black dot"' in page
        image = client.get("/img/pics/figures/dot.png")
        assert image.status == 200 and image.body == PNG
        assert image.headers["content-type"] == "image/png"
        for bad in ("/img/pics/..%2Fpics.yaml", "/img/pics/pics.yaml", "/img/nope/x.png",
                    "/img/pics/figures/missing.png"):  # fmt: skip
            reply = client.get(bad)
            assert reply.status == 404, bad
            assert "pics:" not in reply.text


def test_sign_in_links_cannot_be_tried_by_the_thousand(tmp_path: Path) -> None:
    write_class(tmp_path)
    with run_server(tmp_path) as server:
        good = links(tmp_path / "data")["ann"]
        forged = good.rsplit(".", 1)[0] + ".AAAAAAAAAAAAAAAAAAAAAAAA"
        for _ in range(SIGN_IN_FAILURES):
            assert Client(server).get(forged).status == 403
        refused = Client(server).get(forged)
        assert refused.status == 429
        assert "Too many sign-in links that did not work came from your address" in refused.text
        assert "<title>Too many sign-in attempts" in refused.text
        assert int(refused.headers["retry-after"]) > 0
        assert "set-cookie" not in refused.headers
        # Even a good link waits, from that address; another client (through the proxy's
        # X-Forwarded-For) is not held up by it.
        assert Client(server).get(good).status == 429
        other = Client(server).request("GET", good, headers={"X-Forwarded-For": "192.0.2.7"})
        assert other.status == 303 and "set-cookie" in other.headers


def test_the_sign_in_limit_forgets_failures_once_they_leave_its_window() -> None:
    now = [1000.0]
    limit = SignInLimit(failures=3, window=60, clock=lambda: now[0], clients=2)
    for _ in range(3):
        assert limit.wait("a") == 0
        limit.failed("a")
    assert limit.wait("a") == 60
    now[0] += 30
    assert limit.wait("a") == 30 and limit.wait("b") == 0
    now[0] += 31
    assert limit.wait("a") == 0
    for _ in range(3):
        limit.failed("a")
    assert limit.wait("a") == 60
    limit.failed("b")
    limit.failed("c")  # it remembers two clients: a, the oldest, is forgotten
    assert limit.wait("a") == 0 and limit.wait("c") == 0
