"""LTI 1.3 against a real platform library on loopback: lti1p3platform acting as the LMS
launches a real ``quizgym serve``, deep-links its quiz, gives its roster, and receives the
scores of a class that answers through the real pages; every id_token check refused with a
reason; an LMS that is down receives every score exactly once when it comes back."""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn")
for _library in ("pylti1p3", "lti1p3platform"):
    try:
        __import__(_library)
    except ImportError:
        if os.environ.get("CI") == "true":  # make test installs them: a missing one is a failure
            raise
        pytest.skip(f"{_library} is not installed (make test installs it)", allow_module_level=True)

import jwt  # noqa: E402
from lti_platform import INSTRUCTOR, LEARNER, Member, Platform, query_of, rsa_pem  # noqa: E402
from serve_helpers import ROOT, Client, Reply, Server, forms_of, write_class  # noqa: E402

STUDENTS = [f"s{k}" for k in range(1, 7)]
QUIZ_POINTS = 5.0  # mc-pick, mc-several, num-loss, num-parts.selected, num-parts.masked


def quizgym(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "quizgym", *args], capture_output=True, text=True, env=env,
        timeout=300,
    )  # fmt: skip


class Lms:
    """The platform, the tool's server and its data folder."""

    def __init__(self, platform: Platform, server: Server, data: Path, bank: Path) -> None:
        self.platform, self.server, self.data, self.bank = platform, server, data, bank

    def platform_get(self, url: str) -> Reply:
        return Client(_At(url)).get(url)

    def login(self, client: Client, sub: str, **how: Any) -> dict[str, str]:
        """A member opens the tool: the login initiation, the tool's redirect to the LMS's
        authorization endpoint, and the LMS's answer (the query it got)."""
        url = self.platform.login_url(sub, **how)
        start = client.get(url[len(self.server.url) :])
        assert start.status == 302, start.text
        assert "set-cookie" not in start.headers  # the state is the tool's row, not a cookie
        location = start.headers["location"]
        assert location.startswith(f"{self.platform.url}/auth?")
        return query_of(location)

    def launch(self, client: Client, sub: str, **how: Any) -> Reply:
        query = self.login(client, sub, **how)
        page = self.platform_get(f"{self.platform.url}/auth?" + _encode(query))
        assert page.status == 200, page.text
        form = forms_of(page.text)[0]
        assert form.action == f"{self.server.url}/lti/launch"
        return client.post("/lti/launch", list(form.hidden.items()))


class _At:
    def __init__(self, url: str) -> None:
        import urllib.parse

        parts = urllib.parse.urlsplit(url)
        self.host, self.port = parts.hostname or "", parts.port or 0


def _encode(query: dict[str, str]) -> str:
    import urllib.parse

    return urllib.parse.urlencode(query)


def _start(
    folder: Path, *options: str, roster: bool = True, db: str | None = None,
    bank_text: str | None = None,
) -> Lms:  # fmt: skip
    bank, roster_csv = write_class(folder, students=("zed",))
    if bank_text is not None:
        bank.write_text(bank_text, encoding="utf-8")
    data = folder / "data"
    members = [Member("teach-1", "Tess Teacher", [INSTRUCTOR])]
    members += [Member(s, f"Student {s.upper()}", [LEARNER]) for s in STUDENTS]
    platform = Platform(members)
    platform.start()
    store = ["--db", db] if db else []
    made = quizgym("serve", "lti", "register", "--data", str(data), "--url",
                   "https://quiz.example.edu", *store, *platform.register_args())  # fmt: skip
    assert made.returncode == 0, made.stderr
    options = (*options, *store)
    csv = ["--roster", str(roster_csv)] if roster else []  # without: the class is the LMS's
    server = Server(
        str(bank), *csv, "--data", str(data), "--quiz-tag", "quiz", "--rate", "1000", *options,
        env={"QUIZGYM_LTI_RETRY": "0.2"},
    )  # fmt: skip
    platform.tool_url = server.url
    return Lms(platform, server, data, bank)


@pytest.fixture(scope="module")
def lms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lms]:
    made = _start(tmp_path_factory.mktemp("lti"), "--attempts", "3")
    try:
        yield made
    finally:
        made.server.stop()
        made.platform.stop()


def test_serving_without_a_roster_needs_a_registered_lms(tmp_path: Path) -> None:
    bank, _ = write_class(tmp_path)
    made = quizgym("serve", str(bank), "--data", str(tmp_path / "data"), "--port", "0")
    assert made.returncode != 0
    assert "give the class's --roster, or register an LMS first" in made.stderr


def test_register_prints_the_tool_settings_and_stores_the_platform(tmp_path: Path) -> None:
    made = quizgym("serve", "lti", "register", "--data", str(tmp_path), "--url",
                   "https://quiz.example.edu/", "--issuer", "https://canvas.instructure.com",
                   "--client-id", "1000000000042", "--auth-login-url",
                   "https://sso.canvaslms.com/api/lti/authorize_redirect", "--auth-token-url",
                   "https://sso.canvaslms.com/login/oauth2/token", "--jwks-url",
                   "https://sso.canvaslms.com/api/lti/security/jwks", "--deployment",
                   "7:abc", "--deployment", "8:def")  # fmt: skip
    assert made.returncode == 0, made.stderr
    out = made.stdout
    assert "login (OIDC initiation) URL: https://quiz.example.edu/lti/login" in out
    assert "JWKS URL:                    https://quiz.example.edu/lti/jwks.json" in out
    start = out.index("{")
    canvas = json.loads(out[start : out.index("\n}\n", start) + 2])
    assert canvas["oidc_initiation_url"] == "https://quiz.example.edu/lti/login"
    assert canvas["target_link_uri"] == "https://quiz.example.edu/lti/launch"
    assert canvas["public_jwk_url"] == "https://quiz.example.edu/lti/jwks.json"
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in canvas["scopes"]
    placements = canvas["extensions"][0]["settings"]["placements"]
    assert {p["message_type"] for p in placements} == {"LtiDeepLinkingRequest"}
    assert "  Initiate login URL: https://quiz.example.edu/lti/login" in out
    assert "  Redirection URI(s): https://quiz.example.edu/lti/launch" in out
    assert "registered platform 1: https://canvas.instructure.com" in out
    assert "deployments 7:abc, 8:def" in out
    key = next((tmp_path / "lti-keys").glob("*.pem"))
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    again = quizgym("serve", "lti", "register", "--data", str(tmp_path), "--url",
                    "https://quiz.example.edu", "--issuer", "https://canvas.instructure.com",
                    "--client-id", "1000000000042", "--auth-login-url", "http://lms.example/a",
                    "--auth-token-url", "https://x/t", "--jwks-url", "https://x/j",
                    "--deployment", "9")  # fmt: skip
    assert again.returncode != 0
    assert "--auth-login-url 'http://lms.example/a' is not an https URL" in again.stderr


def test_rotate_key_publishes_old_and_new_kid(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    from quizgym.serve.lti.keys import RETIRE_DAYS, ToolKeys

    keys = ToolKeys(tmp_path)
    now = datetime(2026, 3, 1, tzinfo=UTC)
    first = keys.current(now)
    rotated = quizgym("serve", "lti", "rotate-key", "--data", str(tmp_path))
    assert rotated.returncode == 0, rotated.stderr
    new = rotated.stdout.split()[3]
    assert new != first.kid
    assert f"still published until replaced + {RETIRE_DAYS} days: {first.kid}" in rotated.stdout
    later = datetime.now(UTC)
    published = [k["kid"] for k in keys.jwks(later)["keys"]]
    assert published == [new, first.kid]
    assert keys.current(later).kid == new
    gone = [k["kid"] for k in keys.jwks(later + timedelta(days=RETIRE_DAYS + 1))["keys"]]
    assert gone == [new]


def test_the_tool_publishes_its_jwks(lms: Lms) -> None:
    reply = Client(lms.server).get("/lti/jwks.json")
    assert reply.status == 200
    keys = json.loads(reply.text)["keys"]
    assert len(keys) == 1 and keys[0]["alg"] == "RS256" and keys[0]["kty"] == "RSA"
    assert "d" not in keys[0]  # the public half only


# --- deep linking, roster, scores ---------------------------------------------------------------


def test_a_teacher_deep_links_the_quiz_with_its_line_item(lms: Lms) -> None:
    teacher = Client(lms.server)
    page = lms.launch(teacher, "teach-1", deep_link=True)
    assert page.status == 200, page.text
    assert f"form-action 'self' {lms.platform.url}" in page.headers["content-security-policy"]
    assert "<script" not in page.text
    forms = forms_of(page.text)
    assert [f.action for f in forms] == [f"{lms.platform.url}/deep-link"] * 2
    assert page.text.index("Add Web drill: quiz") < page.text.index("Add Web drill: practice")
    quiz = forms[0]
    back = Client(_At(lms.platform.url)).post("/deep-link", list(quiz.hidden.items()))
    assert back.status == 200, back.text
    item = lms.platform.lineitems[1]
    assert item.score_maximum == QUIZ_POINTS
    assert item.label == "Web drill: quiz"
    assert item.grades_released is True  # --feedback now
    link = lms.platform.links[item.resource_link]
    assert link["type"] == "ltiResourceLink" and link["custom"] == {"quizgym": "quiz"}
    assert link["url"] == f"{lms.server.url}/lti/launch"


def test_a_student_cannot_deep_link(lms: Lms) -> None:
    reply = lms.launch(Client(lms.server), "s6", deep_link=True)
    assert reply.status == 403
    assert "only a course's teachers may add quizgym activities" in reply.text


def test_the_teacher_launch_reads_the_roster_with_roles(lms: Lms) -> None:
    teacher = Client(lms.server)
    reply = lms.launch(teacher, "teach-1", link="link-1")
    assert reply.status == 303 and reply.headers["location"] == "/teacher"
    assert lms.platform.nrps_reads >= 1
    page = teacher.get("/lti/roster")
    assert page.status == 200
    for sub in STUDENTS:
        assert f"<td>lti1-{sub}</td><td>Student {sub.upper()}</td><td>Learner</td>" in page.text
    assert "<td>lti1-teach-1</td><td>Tess Teacher</td><td>Teacher</td>" in page.text
    # the LMS's learners are the class now: on the teacher's page and in issued.json
    progress = teacher.get("/teacher").text
    assert all(f"lti1-{s}" in progress for s in STUDENTS)
    issued = json.loads((lms.data / "issued.json").read_text())
    assert {f"lti1-{s}" for s in STUDENTS} <= {s["id"] for s in issued["students"]}
    assert Client(lms.server).get("/lti/roster").status == 403


def answer(client: Client, rng: random.Random) -> Reply:
    page = client.get("/quiz")
    assert page.status == 200, page.text
    form = page.form()
    answers: dict[str, str | list[str]] = {}
    for kind, name, value in form.fields:
        if name.startswith("_"):
            continue
        if kind == "radio":
            if name not in answers or rng.random() < 0.4:
                answers[name] = value
        elif kind == "checkbox":
            picked = answers.setdefault(name, [])
            assert isinstance(picked, list)
            if rng.random() < 0.6:
                picked.append(value)
        else:
            answers[name] = rng.choice(["0.693", "2.3", "1.386", "6", "12", "9.6", "18"])
    answers = {k: v for k, v in answers.items() if v}
    return client.submit(page, answers)


def wait_for(check: Any, what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def graded_scores(lms: Lms, tmp: Path, db: str | None = None) -> dict[str, float]:
    out = tmp / "attempts.jsonl"
    store = ["--db", db] if db else []
    made = quizgym("serve", "export", "--data", str(lms.data), *store, "-o", str(out))
    assert made.returncode == 0, made.stderr
    graded = quizgym("grade", str(lms.bank), str(out), "--issued", str(lms.data / "issued.json"),
                     "-o", str(tmp / "graded"))  # fmt: skip
    assert graded.returncode in (0, 1), graded.stderr
    with (tmp / "graded" / "grades.csv").open(encoding="utf-8") as stream:
        return {row["student"]: float(row["score"]) for row in csv.DictReader(stream)}


def last_scores(lms: Lms) -> dict[str, dict[str, Any]]:
    last: dict[str, dict[str, Any]] = {}
    for score in sorted(lms.platform.scores_of(1), key=lambda s: s["timestamp"]):
        last[score["userId"]] = score
    return last


def test_a_class_answers_and_the_lms_receives_every_score_once(lms: Lms, tmp_path: Path) -> None:
    rng = random.Random(30)
    submissions = 0
    for sub in STUDENTS[:4]:
        client = Client(lms.server)
        reply = lms.launch(client, sub, link="link-1")
        assert reply.status == 303 and reply.headers["location"] == "/quiz", reply.text
        for _ in range(rng.choice([1, 2])):
            assert answer(client, rng).status == 303
            submissions += 1
    wait_for(lambda: len(lms.platform.scores_of(1)) >= submissions, "the scores")
    received = lms.platform.scores_of(1)
    assert len(received) == submissions
    assert len({(s["userId"], s["timestamp"]) for s in received}) == submissions
    last = last_scores(lms)
    assert set(last) == set(STUDENTS[:4])
    graded = graded_scores(lms, tmp_path)
    for sub, score in last.items():
        assert score["scoreGiven"] == pytest.approx(graded[f"lti1-{sub}"]), sub
        assert score["scoreMaximum"] == QUIZ_POINTS
        assert score["gradingProgress"] == "FullyGraded"
        assert score["activityProgress"] in ("Submitted", "Completed")
    assert len({s["scoreGiven"] for s in last.values()}) > 1  # not everyone scored alike


def test_an_lms_that_is_down_gets_every_score_when_it_is_back(lms: Lms, tmp_path: Path) -> None:
    rng = random.Random(31)
    clients = {}
    for sub in STUDENTS[4:]:
        client = Client(lms.server)
        assert lms.launch(client, sub, link="link-1").status == 303
        clients[sub] = client
    before = len(lms.platform.scores_of(1))
    lms.platform.stop()
    for client in clients.values():
        assert answer(client, rng).status == 303  # the student's answer is saved regardless
    wait_for(lambda: all(t >= 2 for _, t, _ in _waiting_rows(lms)), "the failed tries")
    waiting = _waiting_rows(lms)
    assert {s for s, _, _ in waiting} == {f"lti1-{s}" for s in STUDENTS[4:]}, waiting
    assert all("cannot be reached" in error for _, _, error in waiting), waiting
    lms.platform.start()
    wait_for(lambda: len(lms.platform.scores_of(1)) >= before + 2, "the queued scores")
    time.sleep(1.0)  # nothing more arrives: each score once
    received = lms.platform.scores_of(1)
    assert len(received) == before + 2
    assert len({(s["userId"], s["timestamp"]) for s in received}) == len(received)
    graded = graded_scores(lms, tmp_path)
    for sub, score in last_scores(lms).items():
        assert score["scoreGiven"] == pytest.approx(graded[f"lti1-{sub}"]), sub
    assert not _waiting_rows(lms)


def _waiting_rows(lms: Lms) -> list[tuple[str, int, str]]:
    import sqlite3

    with sqlite3.connect(f"file:{lms.data / 'serve.sqlite3'}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT student, tries, error FROM lti_score WHERE posted_ts IS NULL ORDER BY id"
        ).fetchall()
    return [(s, int(t), e) for s, t, e in rows]


def test_a_regrade_posts_the_changed_scores_and_lists_them(lms: Lms, tmp_path: Path) -> None:
    graded = graded_scores(lms, tmp_path)
    changed_student = "lti1-s1"
    new = graded[changed_student] + 1 if graded[changed_student] < QUIZ_POINTS else 0.0
    grades = tmp_path / "regraded.csv"
    rows = ["student,score"] + [
        f"{s},{new if s == changed_student else v:g}" for s, v in graded.items()
    ]
    grades.write_text("\n".join(rows) + "\n", encoding="utf-8")
    before = len(lms.platform.scores_of(1))
    made = quizgym("serve", "lti", "regrade", str(grades), "--data", str(lms.data))
    assert made.returncode == 0, made.stderr
    assert f"{changed_student}: {graded[changed_student]:g} -> {new:g}" in made.stdout
    assert "1 changed scores queued for the LMS" in made.stdout
    wait_for(lambda: len(lms.platform.scores_of(1)) >= before + 1, "the regraded score", 120)
    assert last_scores(lms)["s1"]["scoreGiven"] == new
    again = quizgym("serve", "lti", "regrade", str(grades), "--data", str(lms.data))
    assert "0 changed scores queued" in again.stdout  # queued once


REVIEW_BANK = """\
bank: optics
title: Lenses
questions:
  - id: pick
    type: multiple_choice
    tags: [quiz]
    prompt: Which lens converges light?
    choices:
      - {text: convex, correct: true}
      - {text: concave}
  - id: why
    type: free_text
    tags: [quiz]
    prompt: Why does a magnifying glass enlarge?
    model_answer: The object sits inside the focal length, so the image is virtual and larger.
    rubric:
      - {criterion: focal, any_of: [focal length, focus], points: 1}
      - {criterion: virtual, any_of: [virtual], points: 1}
"""


def _review_forms(teacher: Client) -> dict[str, tuple[str, dict[str, str]]]:
    import re

    page = teacher.get("/teacher/review")
    assert page.status == 200, page.text
    heads = re.findall(r"<h2 id=\"r\d+\">[^<]*“([^”]*)”</h2>", page.text)
    forms = [f for f in forms_of(page.text) if "fingerprint" in f.hidden]
    assert len(heads) == len(forms)
    return {answer: (f.action, f.hidden) for answer, f in zip(heads, forms, strict=True)}


def _changed(page: str) -> list[str]:
    import re

    assert 'class="changed">' in page, page
    return re.findall(r"<li>([^<]*)</li>", page.split('class="changed">')[1].split("</ul>")[0])


def _score_rows(lms: Lms) -> int:
    import sqlite3

    with sqlite3.connect(f"file:{lms.data / 'serve.sqlite3'}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM lti_score").fetchone()[0])


def test_a_review_decision_on_the_page_sends_the_changed_scores_once(tmp_path: Path) -> None:
    lms = _start(tmp_path, "--attempts", "2", bank_text=REVIEW_BANK)
    try:
        teacher = Client(lms.server)
        page = lms.launch(teacher, "teach-1", deep_link=True)
        back = Client(_At(lms.platform.url)).post("/deep-link", list(page.form().hidden.items()))
        assert back.status == 200
        said = {"s1": "it bends light", "s2": "it bends light", "s3": "a virtual image, inside"}
        for sub, why in said.items():
            client = Client(lms.server)
            assert lms.launch(client, sub, link="link-1").status == 303
            quiz = client.get("/quiz")
            pick = next(v for kind, name, v in quiz.form().fields if name == "pick")
            assert client.submit(quiz, {"pick": pick, "why": why}).status == 303
        wait_for(lambda: len(lms.platform.scores_of(1)) == 3, "the answers' scores")
        first = {s["userId"]: s for s in lms.platform.scores_of(1)}
        assert first["s1"]["gradingProgress"] == "PendingManual"  # awaiting the teacher
        old = first["s1"]["scoreGiven"]
        assert first["s2"]["scoreGiven"] == old
        # The teacher, launched from the LMS, has the LMS page in the navigation.
        assert lms.launch(teacher, "teach-1", link="link-1").status == 303
        assert '<a href="/lti/roster">LMS</a>' in teacher.get("/teacher").text
        action, hidden = _review_forms(teacher)["it bends light"]
        lms.platform.stop()  # the LMS is away: the changed scores wait for it
        decision = [*hidden.items(), ("score", "1"), ("comment", "Say where the object is.")]
        assert teacher.post(action, decision).status == 303
        listed = _changed(teacher.get("/teacher/review").text)
        assert listed == [
            f"lti1-{s}: {old:g} → {old + 1:g} of 3, waiting for the LMS" for s in ("s1", "s2")
        ]
        lms.platform.start()
        wait_for(lambda: len(lms.platform.scores_of(1)) == 5, "the decided scores", 120)
        wait_for(
            lambda: "sent to the LMS" in teacher.get("/teacher/review").text, "the page's news"
        )
        listed = _changed(teacher.get("/teacher/review").text)
        assert listed == [
            f"lti1-{s}: {old:g} → {old + 1:g} of 3, sent to the LMS" for s in ("s1", "s2")
        ]
        last = last_scores(lms)
        assert (last["s1"]["scoreGiven"], last["s2"]["scoreGiven"]) == (old + 1, old + 1)
        assert last["s3"] == first["s3"]  # not changed, not sent again
        # The LMS's scores are the ones quizgym grade --review gives with the decisions.
        decisions = tmp_path / "decisions.csv"
        decisions.write_bytes(teacher.get("/teacher/decisions.csv").body)
        graded = graded_scores(lms, tmp_path)
        out = tmp_path / "attempts.jsonl"
        made = quizgym("grade", str(lms.bank), str(out), "--issued", str(lms.data / "issued.json"),
                       "--review", str(decisions), "-o", str(tmp_path / "decided"))  # fmt: skip
        assert made.returncode in (0, 1), made.stderr
        with (tmp_path / "decided" / "grades.csv").open(encoding="utf-8") as stream:
            decided = {row["student"]: float(row["score"]) for row in csv.DictReader(stream)}
        assert decided["lti1-s1"] == graded["lti1-s1"] + 1 == last["s1"]["scoreGiven"]
        # The same decision again changes no score: nothing is queued, nothing is posted.
        rows = _score_rows(lms)
        assert teacher.post(action, decision).status == 303
        assert 'class="changed">' not in teacher.get("/teacher/review").text
        assert _score_rows(lms) == rows
        assert len(lms.platform.scores_of(1)) == 5
    finally:
        lms.server.stop()
        lms.platform.stop()


def test_a_decided_score_waits_for_the_release_and_is_the_one_released(tmp_path: Path) -> None:
    lms = _start(tmp_path, "--attempts", "2", "--feedback", "submitted", bank_text=REVIEW_BANK)
    try:
        teacher = Client(lms.server)
        page = lms.launch(teacher, "teach-1", deep_link=True)
        back = Client(_At(lms.platform.url)).post("/deep-link", list(page.form().hidden.items()))
        assert back.status == 200
        client = Client(lms.server)
        assert lms.launch(client, "s1", link="link-1").status == 303
        quiz = client.get("/quiz")
        pick = next(v for kind, name, v in quiz.form().fields if name == "pick")
        assert client.submit(quiz, {"pick": pick, "why": "it bends light"}).status == 303
        wait_for(lambda: len(lms.platform.scores_of(1)) == 1, "the first score")
        assert "scoreGiven" not in lms.platform.scores_of(1)[0]  # not finished: not shown yet
        assert lms.launch(teacher, "teach-1", link="link-1").status == 303
        action, hidden = _review_forms(teacher)["it bends light"]
        assert teacher.post(action, [*hidden.items(), ("score", "2")]).status == 303
        listed = _changed(teacher.get("/teacher/review").text)
        assert len(listed) == 1 and listed[0].startswith("lti1-s1: ")
        assert listed[0].endswith(" of 3 (not sent to the LMS: not released yet: the LMS gets it"
                                  " when the quiz's policy releases it)")  # fmt: skip
        new = float(listed[0].split(" → ")[1].split()[0])
        assert len(lms.platform.scores_of(1)) == 1  # the policy holds it back
        # The student finishes: the score is released, and the LMS ends with the decided one.
        page = client.get("/quiz")
        assert client.post("/quiz", [*page.form().hidden.items(), ("_finish", "1")]).status == 303
        wait_for(lambda: last_scores(lms)["s1"].get("scoreGiven") == new, "the decided score")
        wait_for(lambda: not _waiting_rows(lms), "the queue to empty")
        assert [s.get("scoreGiven") for s in lms.platform.scores_of(1)].count(new) == 1
        assert last_scores(lms)["s1"]["gradingProgress"] == "FullyGraded"
    finally:
        lms.server.stop()
        lms.platform.stop()


def test_scores_wait_for_the_feedback_policy(tmp_path: Path) -> None:
    lms = _start(tmp_path, "--attempts", "2", "--feedback", "submitted", roster=False)
    try:
        teacher = Client(lms.server)
        page = lms.launch(teacher, "teach-1", deep_link=True)
        back = Client(_At(lms.platform.url)).post("/deep-link", list(page.form().hidden.items()))
        assert back.status == 200
        assert lms.platform.lineitems[1].grades_released is False  # not shown at once
        # no roster CSV: the teacher's launch read the class from the LMS, and issued its quiz
        issued = json.loads((lms.data / "issued.json").read_text())
        assert [s["id"] for s in issued["students"]] == [f"lti1-{s}" for s in STUDENTS]
        client = Client(lms.server)
        assert lms.launch(client, "s1", link="link-1").status == 303
        assert answer(client, random.Random(5)).status == 303
        wait_for(lambda: len(lms.platform.scores_of(1)) == 1, "the first score")
        first = lms.platform.scores_of(1)[0]
        assert "scoreGiven" not in first  # the student has not finished: no grade shown yet
        assert (first["activityProgress"], first["gradingProgress"]) == ("Submitted", "Pending")
        page = client.get("/quiz")
        form = page.form()
        assert client.post("/quiz", [*form.hidden.items(), ("_finish", "1")]).status == 303
        wait_for(lambda: len(lms.platform.scores_of(1)) == 2, "the released score")
        last = lms.platform.scores_of(1)[1]
        assert (last["activityProgress"], last["gradingProgress"]) == ("Completed", "FullyGraded")
        assert last["scoreGiven"] == pytest.approx(graded_scores(lms, tmp_path)["lti1-s1"])
        sent, body = _good(lms, client)
        body["exp"] = int(time.time()) - 3600
        bad = [("state", sent["state"]), ("id_token", _signed(lms, body))]
        _refused(client.post("/lti/launch", bad), "the id_token has expired")
        lms.server.proc.terminate()
        _, err = lms.server.proc.communicate(timeout=30)
        assert "LTI launch refused (token " in err and "the id_token has expired" in err
    finally:
        lms.server.stop()
        lms.platform.stop()


def test_lti_on_postgresql(tmp_path: Path) -> None:
    from serve_helpers import Postgres

    try:
        postgres = Postgres()
    except FileNotFoundError:
        if os.environ.get("CI") == "true":
            pytest.fail("PostgreSQL is not installed (scripts/setup.d/60-postgresql.sh)")
        pytest.skip("PostgreSQL is not installed (make test installs it)")
    try:
        lms = _start(tmp_path, "--attempts", "2", db=postgres.url)
        try:
            page = lms.launch(Client(lms.server), "teach-1", deep_link=True)
            Client(_At(lms.platform.url)).post("/deep-link", list(page.form().hidden.items()))
            client = Client(lms.server)
            sent, _ = _good(lms, client, "s2")
            assert client.post("/lti/launch", list(sent.items())).status == 303
            _refused(Client(lms.server).post("/lti/launch", list(sent.items())),
                     "state is unknown or was used already")  # fmt: skip
            assert answer(client, random.Random(7)).status == 303
            wait_for(lambda: len(lms.platform.scores_of(1)) == 1, "the score")
            score = lms.platform.scores_of(1)[0]
            graded = graded_scores(lms, tmp_path, db=postgres.url)
            assert score["userId"] == "s2"
            assert score["scoreGiven"] == pytest.approx(graded["lti1-s2"])
        finally:
            lms.server.stop()
            lms.platform.stop()
    finally:
        postgres.stop()


# --- every id_token check, refused with its reason ----------------------------------------------


def _signed(lms: Lms, body: dict[str, Any], key: str | None = None) -> str:
    reg = lms.platform.registration()
    return jwt.encode(body, key or lms.platform.private, algorithm="RS256",
                      headers={"kid": reg.get_kid()})  # fmt: skip


def _good(lms: Lms, client: Client, sub: str = "s1") -> tuple[dict[str, str], dict[str, Any]]:
    """A login's state and a valid id_token body for it."""
    query = lms.login(client, sub, link="link-1")
    form = lms.platform.launch_form(query)
    body = jwt.decode(form["id_token"], options={"verify_signature": False})
    return {"state": form["state"], "id_token": form["id_token"]}, body


def _refused(reply: Reply, reason: str) -> None:
    assert 400 <= reply.status < 500, reply.status
    assert reason in reply.text.replace("&#x27;", "'").replace("&quot;", '"'), reply.text
    assert "quizgym_session" not in reply.headers.get("set-cookie", "")


def test_a_replayed_launch_is_refused(lms: Lms) -> None:
    client = Client(lms.server)
    sent, _ = _good(lms, client)
    assert client.post("/lti/launch", list(sent.items())).status == 303
    _refused(Client(lms.server).post("/lti/launch", list(sent.items())),
             "state is unknown or was used already")  # fmt: skip
    # the same token under a new login's state: its nonce is not that login's
    fresh, _ = _good(lms, client)
    replay = {"state": fresh["state"], "id_token": sent["id_token"]}
    _refused(client.post("/lti/launch", list(replay.items())),
             "nonce is not the one its login issued")  # fmt: skip


def test_a_forged_token_is_refused(lms: Lms) -> None:
    client = Client(lms.server)
    sent, body = _good(lms, client)
    other, _ = rsa_pem()
    body["sub"] = "teach-1"
    forged = {"state": sent["state"], "id_token": _signed(lms, body, other)}
    _refused(client.post("/lti/launch", list(forged.items())),
             "signature does not match the platform's key")  # fmt: skip


def test_an_expired_token_is_refused(lms: Lms) -> None:
    client = Client(lms.server)
    sent, body = _good(lms, client)
    body["iat"], body["exp"] = int(time.time()) - 7200, int(time.time()) - 3600
    _refused(client.post("/lti/launch", [("state", sent["state"]),
             ("id_token", _signed(lms, body))]), "the id_token has expired")  # fmt: skip


def test_a_token_for_another_deployment_is_refused(lms: Lms) -> None:
    client = Client(lms.server)
    sent, body = _good(lms, client)
    body["https://purl.imsglobal.org/spec/lti/claim/deployment_id"] = "deployment-2"
    _refused(client.post("/lti/launch", [("state", sent["state"]),
             ("id_token", _signed(lms, body))]),
             'The deployment ID "deployment-2" is not recognised')  # fmt: skip


def test_a_token_for_another_audience_or_issuer_is_refused(lms: Lms) -> None:
    client = Client(lms.server)
    for claim, value in (("aud", "another-tool"), ("iss", "https://elsewhere.example")):
        sent, body = _good(lms, client)
        body[claim] = value
        _refused(client.post("/lti/launch", [("state", sent["state"]),
                 ("id_token", _signed(lms, body))]),
                 "issuer and audience (client id) are no registered platform")  # fmt: skip
    sent, body = _good(lms, client)
    body["aud"] = ["quizgym-tool-1", "another-tool"]
    body["azp"] = "another-tool"
    _refused(client.post("/lti/launch", [("state", sent["state"]),
             ("id_token", _signed(lms, body))]), "several audiences and no azp")  # fmt: skip


def test_a_launch_without_a_login_or_with_a_stray_nonce_is_refused(lms: Lms) -> None:
    client = Client(lms.server)
    sent, body = _good(lms, client)
    _refused(client.post("/lti/launch", [("state", "made-up"), ("id_token", sent["id_token"])]),
             "state is unknown or was used already")  # fmt: skip
    body["nonce"] = "another-nonce"
    stray = [("state", sent["state"]), ("id_token", _signed(lms, body))]
    _refused(client.post("/lti/launch", stray), "nonce is not the one its login issued")
    _refused(client.post("/lti/launch", [("id_token", "x.y")]), "has no state")
    _refused(client.get("/lti/login?login_hint=x"), "names no issuer")
    _refused(client.get("/lti/login?iss=https%3A%2F%2Fnobody.example&login_hint=x"),
             "is not registered")  # fmt: skip
    other = f"/lti/login?iss={lms.platform.issuer}&login_hint=x&lti_deployment_id=nope"
    _refused(client.get(other), "the deployment 'nope' is not registered")


# --- the score queue, in process, on a clock of its own -------------------------------------------


def test_the_queue_backs_off_keeps_order_and_posts_each_score_once(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    from quizgym.serve import prepare
    from quizgym.serve.lti.service import LtiClassroom
    from quizgym.serve.lti.store import save_platform
    from quizgym.serve.lti.tool import Launched

    bank, roster = write_class(tmp_path, students=("zed",))
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    ready = prepare([str(bank)], roster=roster, data=tmp_path / "data", quiz_tags=["quiz"],
                    feedback="closed", closes=start + timedelta(hours=1), rate=1000,
                    now=start)  # fmt: skip
    room = ready.room
    wall = [1000.0]
    lti = LtiClassroom(room, tmp_path / "data", retry_base=10.0, wall=lambda: wall[0])
    platform, _ = save_platform(
        room.db, issuer="https://lms.example", client_id="c1",
        auth_login_url="https://lms.example/auth", auth_token_url="https://lms.example/token",
        key_set_url="https://lms.example/jwks", deployments=["d1"],
    )  # fmt: skip
    ags = {"scope": ["https://purl.imsglobal.org/spec/lti-ags/scope/score"],
           "lineitem": "https://lms.example/lineitems/1"}  # fmt: skip
    for sub in ("u1", "u2"):
        body = {
            "sub": sub, "name": sub.upper(),
            "https://purl.imsglobal.org/spec/lti/claim/roles": [LEARNER],
            "https://purl.imsglobal.org/spec/lti/claim/resource_link": {"id": "rl"},
            "https://purl.imsglobal.org/spec/lti/claim/custom": {"quizgym": "quiz"},
            "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": ags,
        }  # fmt: skip
        assert lti.arrived(Launched("x", platform, "d1", body)) == (f"lti1-{sub}", False, "quiz")

    def submit(student: str, answers: dict[str, str], finish: bool = False) -> None:
        view = room.quiz_view(student)
        assert view.form is not None
        room.quiz_answer(student, view.form.token, list(answers.items()), finish=finish)

    submit("lti1-u1", {"num-loss": "0.693"})
    submit("lti1-u1", {"mc-pick": "A"})
    submit("lti1-u2", {"num-loss": "5"})
    rows = lti.queued()
    assert [(k.split(":")[0], s, g, gr) for k, s, g, gr, *_ in rows] == [
        ("attempt", "lti1-u1", None, "Pending"),
        ("attempt", "lti1-u1", None, "Pending"),
        ("attempt", "lti1-u2", None, "Pending"),
    ]  # fmt: skip  (feedback closed: no score before the quiz closes)

    posted: list[tuple[str, float | None, str]] = []
    down = [True]

    def post(platform: object, row: Any, now: float) -> str | None:
        if down[0]:
            return "the platform cannot be reached: ConnectionError"
        posted.append((row.sub, row.score_given, row.stamp))
        return None

    lti.queue._post = post  # type: ignore[method-assign,assignment]  (the LMS, simulated)
    assert lti.queue.flush() == 10.0  # the first row of each student failed: retry in 10 s
    assert [t for *_, t, _, _ in lti.queued()] == [1, 0, 1]  # u1's second waits behind its first
    down[0] = False
    wall[0] += 9.0
    lti.queue.flush()
    assert posted == []  # not due yet: the back-off holds
    down[0] = True
    wall[0] += 1.0
    assert lti.queue.flush() == 20.0  # failed again: twice as long
    down[0] = False
    wall[0] += 20.0
    lti.queue.flush()
    assert [(s, g) for s, g, _ in posted] == [("u1", None), ("u1", None), ("u2", None)]
    assert posted[0][2] < posted[1][2]  # in order, strictly later
    lti.queue.flush(force=True)
    assert len(posted) == 3  # each once
    room.clock = lambda: start + timedelta(hours=2)  # the quiz has closed: scores are released
    assert lti.release_due() == 2
    assert lti.release_due() == 0  # released once
    lti.queue.flush()
    released = {s: g for s, g, _ in posted[3:]}
    u1 = sum(a.score for a in room.quiz_view("lti1-u1").results.values())
    assert released == {"u1": u1, "u2": 0.0}
    room.db.close()
