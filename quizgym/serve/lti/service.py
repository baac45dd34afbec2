"""What a checked launch does to a classroom, and the scores it owes the LMS: a launch, an
LMS roster or a graded quiz attempt in; students admitted (each issued a quiz version), and
scores queued in the database and posted to the platform's line item out.

Every graded quiz attempt of an LMS student queues one score row in the same transaction
as the attempt (keyed by the attempt's form token: queued once, posted once); a worker thread
posts the rows in order, and one that fails (the LMS is down, refuses, times out) is tried
again later, each time waiting twice as long, up to an hour. What a row says follows the
quiz's feedback policy: scores the students may not see yet go as ``gradingProgress:
Pending`` without a score, and are released when they may (``release:`` rows). A teacher's
review decision that changes a score queues the new one (``decision:`` rows) once it may be
seen, and the worker follows any score sent without the decisions by the decided one.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from quizgym.serve.db import Database, Tx
from quizgym.serve.engine import Classroom
from quizgym.serve.lti.keys import ToolKeys
from quizgym.serve.lti.store import Link, Platform, QueuedScore, ensure_tables, platforms
from quizgym.serve.lti.tool import CLAIM, Launched, connector, is_teacher

__all__ = ["LtiClassroom", "ScoreQueue", "queue_regrade", "regrade_scores", "student_id"]

log = logging.getLogger("quizgym.serve.lti")

AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
RETRY_BASE = 30.0
"""Seconds before a failed post is tried again the first time (doubled each time after)."""
RETRY_CAP = 3600.0
IDLE_SECONDS = 5.0
"""How often an idle worker looks for scores queued by another process (a regrade)."""
CLAIM_SECONDS = 120.0
"""How long a worker holds a row it is posting before another may take it."""


def _retry_base() -> float:
    """The first retry's delay: ``QUIZGYM_LTI_RETRY`` seconds when set (tests), else 30."""
    import os

    text = os.environ.get("QUIZGYM_LTI_RETRY", "")
    try:
        return max(0.05, float(text)) if text else RETRY_BASE
    except ValueError:
        return RETRY_BASE


def student_id(platform: Platform | int, sub: str) -> str:
    """The quizgym student id of an LMS user: stable, and distinct across platforms."""
    pid = platform if isinstance(platform, int) else platform.id
    return f"lti{pid}-{sub}"


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def _names(member: Mapping[str, Any]) -> str:
    name = member.get("name") or " ".join(
        str(member.get(k, "")) for k in ("given_name", "family_name") if member.get(k)
    )
    return str(name or member.get("email") or member.get("user_id") or member.get("sub") or "")


class LtiClassroom:
    """A classroom's LTI side: its platforms, its LMS students and its score queue."""

    def __init__(
        self, room: Classroom, folder: Path, *, retry_base: float | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:  # fmt: skip
        self.room = room
        self.folder = folder
        self.db: Database = room.db
        self.keys = ToolKeys(folder)
        self.wall = wall
        self.decided: Callable[[], Mapping[str, float]] | None = None
        """The class's scores with the teacher's review decisions applied (set by the app),
        which a release sends instead of the answers' own."""
        self._admit = threading.Lock()
        self._sent_decided: tuple[int, tuple[tuple[str, float], ...]] | None = None
        ensure_tables(self.db)
        if retry_base is None:
            retry_base = _retry_base()
        self.queue = ScoreQueue(self, retry_base=retry_base)
        room.graded.append(self.attempt_graded)
        with self.db.transaction("read the LMS students", write=False) as tx:
            known = tx.rows("SELECT student, name FROM lti_user WHERE learner = 1 ORDER BY student")
        self.admit([(s, n) for s, n in known])

    def platforms(self) -> list[Platform]:
        return platforms(self.db)

    # --- students -----------------------------------------------------------------------------

    def admit(self, students: Sequence[tuple[str, str]]) -> None:
        """Add LMS students to the class, each issued a version of the quiz (the same one at
        every start: seeded by the secret)."""
        room = self.room
        with self._admit:
            for sid, name in students:
                if sid not in room.students or name:
                    room.students[sid] = name or room.students.get(sid, "")
            if room.quiz is None:
                return
            issued = room.issued
            missing = [sid for sid, _ in students if issued is None or issued.student(sid) is None]
            if not missing:
                return
            from quizgym.serve.folder import write_issued_for

            ids = [] if issued is None else [s.id for s in issued.students]
            ids += list(dict.fromkeys(missing))
            room.issued = write_issued_for(
                room.books[room.quiz.bank], room.quiz, ids, room.secret, self.folder
            )

    def arrived(self, launch: Launched) -> tuple[str, bool, str]:
        """Record a launch's user and resource link; (student id, teacher?, target)."""
        body = launch.body
        teacher = is_teacher(body)
        custom = body.get(CLAIM + "custom") or {}
        target = str(custom.get("quizgym", "")) if isinstance(custom, Mapping) else ""
        link = body.get(CLAIM + "resource_link") or {}
        link_id = str(link.get("id", "")) if isinstance(link, Mapping) else ""
        ags = body.get(AGS) or {}
        nrps = body.get(NRPS) or {}
        context = body.get(CLAIM + "context") or {}
        sid = student_id(launch.platform, launch.sub)
        with self.db.transaction("record the LTI launch") as tx:
            if link_id:
                tx.run(
                    "INSERT INTO lti_link (platform_id, resource_link, deployment_id, context_id,"
                    " target, lineitem, scopes, nrps_url) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (platform_id, resource_link) DO UPDATE SET"
                    " deployment_id = excluded.deployment_id, context_id = excluded.context_id,"
                    " target = excluded.target,"
                    " lineitem = COALESCE(excluded.lineitem, lti_link.lineitem),"
                    " scopes = excluded.scopes,"
                    " nrps_url = COALESCE(excluded.nrps_url, lti_link.nrps_url)",
                    (
                        launch.platform.id, link_id, launch.deployment_id,
                        str(context.get("id", "")), target or "home", ags.get("lineitem"),
                        " ".join(ags.get("scope", [])), nrps.get("context_memberships_url"),
                    ),
                )  # fmt: skip
            roles = " ".join(body.get(CLAIM + "roles", []))
            tx.run(
                "INSERT INTO lti_user (platform_id, sub, student, name, roles, learner, link)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (platform_id, sub) DO UPDATE SET"
                " name = excluded.name, roles = excluded.roles, learner = excluded.learner,"
                " link = COALESCE(excluded.link, lti_user.link)",
                (launch.platform.id, launch.sub, sid, _names(body), roles, int(not teacher),
                 link_id if target == "quiz" else None),
            )  # fmt: skip
            tx.run("UPDATE lti_launch SET student = ? WHERE id = ?", (sid, launch.id))
        if not teacher:
            self.admit([(sid, _names(body))])
        return sid, teacher, target

    def sync_roster(self, launch: Launched) -> int:
        """Read the course's members from the LMS (NRPS) and admit its learners; how many
        members it listed. A quiz link's learners are tied to its line item.

        Raises:
            LtiException, requests.RequestException: the LMS could not be read.
        """
        from pylti1p3.names_roles import NamesRolesProvisioningService

        nrps = launch.body.get(NRPS)
        if not isinstance(nrps, Mapping) or not nrps.get("context_memberships_url"):
            return 0
        service = NamesRolesProvisioningService(
            connector(launch.platform, self.keys, self.wall()), cast(Any, dict(nrps))
        )
        members = service.get_members()
        link = launch.body.get(CLAIM + "resource_link") or {}
        custom = launch.body.get(CLAIM + "custom") or {}
        quiz_link = str(link.get("id", "")) if custom.get("quizgym") == "quiz" else None
        admitted = []
        with self.db.transaction("record the LMS roster") as tx:
            for member in members:
                sub = str(member.get("user_id", ""))
                if not sub or member.get("status", "Active") != "Active":
                    continue
                teacher = is_teacher({CLAIM + "roles": list(member.get("roles", []))})
                sid = student_id(launch.platform, sub)
                tx.run(
                    "INSERT INTO lti_user (platform_id, sub, student, name, roles, learner,"
                    " link) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (platform_id, sub) DO UPDATE"
                    " SET name = excluded.name, roles = excluded.roles,"
                    " learner = excluded.learner, link = COALESCE(excluded.link, lti_user.link)",
                    (launch.platform.id, sub, sid, _names(member),
                     " ".join(member.get("roles", [])), int(not teacher), quiz_link),
                )  # fmt: skip
                if not teacher:
                    admitted.append((sid, _names(member)))
        self.admit(admitted)
        return len(members)

    def members(self) -> list[tuple[str, str, bool, str]]:
        """The LMS users known: (student id, name, learner?, roles)."""
        with self.db.transaction("read the LMS users", write=False) as tx:
            rows = tx.rows("SELECT student, name, learner, roles FROM lti_user ORDER BY student")
        return [(s, n, bool(learner), r) for s, n, learner, r in rows]

    # --- scores -------------------------------------------------------------------------------

    def _link_of(self, tx: Tx, student: str) -> tuple[int, str, Link] | None:
        found = tx.rows(
            "SELECT u.platform_id, u.sub, l.resource_link, l.target, l.lineitem, l.scopes,"
            " l.nrps_url FROM lti_user u JOIN lti_link l ON l.platform_id = u.platform_id"
            " AND l.resource_link = u.link WHERE u.student = ? AND u.learner = 1",
            (student,),
        )
        if not found:
            return None
        pid, sub, rl, target, lineitem, scopes, nrps = found[0]
        link = Link(int(pid), rl, target, lineitem, tuple(scopes.split()), nrps)
        if not lineitem or SCORE_SCOPE not in link.scopes:
            return None
        return int(pid), str(sub), link

    def _total(self, tx: Tx, student: str) -> tuple[float, float, bool, int, bool]:
        """The student's quiz score now (the last answer to each slot counts): (score,
        maximum, any answer awaiting review, submissions, finished)."""
        last: dict[str, tuple[float, int]] = {}
        for slot, score, review in tx.rows(
            "SELECT slot, score, needs_review FROM attempt WHERE student = ? AND mode = 'quiz'"
            " ORDER BY id",
            (student,),
        ):
            last[slot] = (float(score), int(review))
        used, finished = tx.rows(
            "SELECT COUNT(*), COALESCE(MAX(finish), 0) FROM submission"
            " WHERE student = ? AND mode = 'quiz'",
            (student,),
        )[0]
        total = sum(s for s, _ in last.values())
        review = any(r for _, r in last.values())
        quiz = self.room.quiz
        assert quiz is not None
        book = self.room.books[quiz.bank]
        top = sum(slot.points for q in quiz.questions for slot in book.slots_of(q))
        return total, top, review, int(used), bool(finished)

    def _queue(
        self, tx: Tx, key: str, student: str, now: datetime, *, released: bool,
        score: float | None = None,
    ) -> bool:  # fmt: skip
        """Queue the student's score now under ``key`` (once; ``score``: the decided one
        instead of the answers' own); whether a row was added."""
        found = self._link_of(tx, student)
        quiz = self.room.quiz
        if found is None or quiz is None:
            return False
        pid, sub, link = found
        total, top, review, used, finished = self._total(tx, student)
        done = finished or (quiz.attempts is not None and used >= quiz.attempts)
        activity = "Completed" if done else "Submitted"
        grading = "PendingManual" if review else "FullyGraded"
        given: float | None = total if score is None else score
        if not released:
            given, grading = None, "Pending"
        last = tx.rows(
            "SELECT MAX(stamp) FROM lti_score WHERE lineitem = ? AND sub = ?",
            (link.lineitem, sub),
        )[0][0]
        moment = now
        if last is not None and datetime.fromisoformat(last) >= moment:
            moment = datetime.fromisoformat(last) + timedelta(milliseconds=1)  # strictly later
        wall = self.wall()
        added = tx.run(
            "INSERT INTO lti_score (key, platform_id, lineitem, scopes, sub, student, score_given,"
            " score_maximum, activity, grading, stamp, made_ts, next_ts)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
            (key, pid, link.lineitem, " ".join(link.scopes), sub, student, given, top, activity,
             grading, _stamp(moment), wall, wall),
        )  # fmt: skip
        return added > 0

    def released(self, student: str, finished: bool, now: datetime) -> bool:
        """Whether the quiz's policy lets the student see their score now."""
        quiz = self.room.quiz
        assert quiz is not None
        closed = quiz.closes is not None and now >= quiz.closes
        if quiz.feedback == "now":
            return True
        if quiz.feedback == "submitted":
            return finished or closed
        return closed

    def attempt_graded(
        self, tx: Tx, student: str, token: str, now: datetime
    ) -> Callable[[], None] | None:
        """The engine's hook, in the attempt's own transaction: queue its score; the worker
        is woken once that has committed."""
        quiz = self.room.quiz
        if quiz is None:
            return None
        total = self._total(tx, student)
        done = total[4] or (quiz.attempts is not None and total[3] >= quiz.attempts)
        released = self.released(student, done, now)
        if self._queue(tx, f"attempt:{token}", student, now, released=released):
            return self.queue.wake
        return None

    def release_due(self) -> int:
        """Queue the scores that the policy releases by now (at closing time, once per
        student); how many were queued."""
        quiz = self.room.quiz
        if quiz is None or quiz.feedback == "now":
            return 0
        now = self.room.clock()
        count = 0
        waiting = (
            "SELECT DISTINCT u.student FROM lti_user u JOIN submission s"
            " ON s.student = u.student AND s.mode = 'quiz' WHERE u.learner = 1"
            " AND NOT EXISTS (SELECT 1 FROM lti_score r WHERE r.key = 'release:' || u.student)"
        )
        with self.db.transaction("read the LMS scores to release", write=False) as tx:
            if not tx.rows(waiting):
                return 0
        decided = self._decided()  # outside the write: it reads the store itself
        with self.db.transaction("release the LMS scores") as tx:
            rows = tx.rows(waiting)
            for (student,) in rows:
                total = self._total(tx, student)
                done = total[4] or (quiz.attempts is not None and total[3] >= quiz.attempts)
                if not self.released(student, done, now):
                    continue
                last = tx.rows(
                    "SELECT score_given FROM lti_score WHERE student = ? ORDER BY id DESC LIMIT 1",
                    (student,),
                )
                if last and last[0][0] is not None and quiz.feedback == "submitted" and done:
                    continue  # posted with its score already, when the student finished
                count += self._queue(
                    tx, f"release:{student}", student, now, released=True,
                    score=decided.get(student),
                )  # fmt: skip
        if count:
            self.queue.wake()
        return count

    def _decided(self) -> Mapping[str, float]:
        """The scores with the review decisions (empty: none, or the run refused)."""
        if self.decided is None:
            return {}
        try:
            return self.decided()
        except Exception as exc:  # the release goes on with the answers' own scores
            log.warning("the decided scores could not be read: %s", exc)
            return {}

    def queued(self) -> list[tuple[str, str, float | None, str, int, bool, str]]:
        """Every queued score: (key, student, score, grading, tries, posted?, last error)."""
        with self.db.transaction("read the score queue", write=False) as tx:
            rows = tx.rows(
                "SELECT key, student, score_given, grading, tries, posted_ts, error"
                " FROM lti_score ORDER BY id"
            )
        return [(k, s, g, gr, int(t), p is not None, e) for k, s, g, gr, t, p, e in rows]

    def send(self, scores: Mapping[str, float]) -> dict[str, tuple[str | None, str]]:
        """Queue the scores a review decision changed (the teacher page's
        :class:`~quizgym.serve.teacher.ScoreSink`): each against the last score sent, once
        (a row keyed by the row it follows and the new score); per student, (key, why not)."""
        if not self.platforms():
            return {}  # no LMS registered: nothing to send
        now, wall = self.room.clock(), self.wall()
        out: dict[str, tuple[str | None, str]] = {}
        with self.db.transaction("queue the decided scores") as tx:
            for student, new in sorted(scores.items()):
                out[student] = _requeue(tx, student, new, None, now=now, wall=wall)
        if any(key is not None for key, _ in out.values()):
            self.queue.wake()
        return out

    def send_decided(self) -> int:
        """Queue every decided score the LMS does not have (an answer's own score sent after
        the decision, at a finish or a new attempt, is followed by the decided one); how many
        were queued. Nothing is read again while the queue and the decisions stay as they were.
        """
        with self.db.transaction("read the score queue", write=False) as tx:
            last = tx.rows("SELECT COALESCE(MAX(id), 0) FROM lti_score")[0][0]
        decided = self._decided()
        seen = (int(last), tuple(sorted(decided.items())))
        if not decided or seen == self._sent_decided:
            return 0
        count = sum(key is not None for key, _ in self.send(decided).values())
        self._sent_decided = seen
        return count

    def posted(self, keys: Sequence[str]) -> set[str]:
        """Which of the score rows ``keys`` the LMS has taken."""
        found: set[str] = set()
        with self.db.transaction("read the score queue", write=False) as tx:
            for key in keys:
                if tx.rows("SELECT 1 FROM lti_score WHERE key = ? AND posted_ts IS NOT NULL",
                           (key,)):  # fmt: skip
                    found.add(key)
        return found


class ScoreQueue:
    """The worker that posts queued scores to the platforms, in order, with back-off."""

    def __init__(self, lti: LtiClassroom, *, retry_base: float) -> None:
        self.lti = lti
        self.retry_base = retry_base
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def wake(self) -> None:
        self._wake.set()

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="lti-scores", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.lti.release_due()
                self.lti.send_decided()
                wait = self.flush()
            except Exception:  # the worker goes on; the row stays queued
                log.exception("posting the LMS scores failed")
                wait = self.retry_base
            self._wake.wait(timeout=max(0.05, min(wait, IDLE_SECONDS)))
            self._wake.clear()

    def _due(self, now: float) -> list[QueuedScore]:
        with self.lti.db.transaction("read the score queue", write=False) as tx:
            rows = tx.rows(
                "SELECT id, key, platform_id, lineitem, scopes, sub, student, score_given,"
                " score_maximum, activity, grading, stamp, tries FROM lti_score"
                " WHERE posted_ts IS NULL ORDER BY id"
            )
        return [
            QueuedScore(int(r[0]), r[1], int(r[2]), r[3], tuple(r[4].split()), r[5], r[6],
                        None if r[7] is None else float(r[7]), float(r[8]), r[9], r[10], r[11],
                        int(r[12]))
            for r in rows
        ]  # fmt: skip

    def flush(self, *, force: bool = False) -> float:
        """Post every score that is due (``force``: every one not yet posted); the seconds
        until the next one is due (60 when none waits)."""
        now = self.lti.wall()
        with self.lti.db.transaction("read the score queue", write=False) as tx:
            waits = {
                int(i): float(n)
                for i, n in tx.rows("SELECT id, next_ts FROM lti_score WHERE posted_ts IS NULL")
            }
        found = {p.id: p for p in self.lti.platforms()}
        blocked: set[tuple[str, str]] = set()
        soonest = 60.0
        for row in self._due(now):
            pair = (row.lineitem, row.sub)
            if pair in blocked:
                continue  # an earlier score of this student waits: keep their order
            if not force and waits.get(row.id, 0.0) > now:
                blocked.add(pair)
                soonest = min(soonest, waits[row.id] - now)
                continue
            if not self._claim(row.id, now):
                blocked.add(pair)
                continue
            platform = found.get(row.platform_id)
            error = "the platform is no longer registered" if platform is None else None
            if platform is not None:
                error = self._post(platform, row, now)
            with self.lti.db.transaction("record a posted score") as tx:
                if error is None:
                    tx.run(
                        "UPDATE lti_score SET posted_ts = ?, claimed_ts = NULL, error = ''"
                        " WHERE id = ?",
                        (self.lti.wall(), row.id),
                    )
                    continue
                delay = min(self.retry_base * 2**row.tries, RETRY_CAP)
                tx.run(
                    "UPDATE lti_score SET tries = tries + 1, next_ts = ?, claimed_ts = NULL,"
                    " error = ? WHERE id = ?",
                    (self.lti.wall() + delay, error[:500], row.id),
                )
            log.warning("LTI score %s not posted (try %d, next in %.0f s): %s", row.key,
                        row.tries + 1, delay, error)  # fmt: skip
            blocked.add(pair)
            soonest = min(soonest, delay)
        return soonest

    def _claim(self, row_id: int, now: float) -> bool:
        with self.lti.db.transaction("claim a queued score") as tx:
            return (
                tx.run(
                    "UPDATE lti_score SET claimed_ts = ? WHERE id = ? AND posted_ts IS NULL"
                    " AND (claimed_ts IS NULL OR claimed_ts < ?)",
                    (now, row_id, now - CLAIM_SECONDS),
                )
                == 1
            )

    def _post(self, platform: Platform, row: QueuedScore, now: float) -> str | None:
        """Post one score; None when the platform took it, else why not."""
        import requests
        from pylti1p3.assignments_grades import AssignmentsGradesService
        from pylti1p3.exception import LtiException
        from pylti1p3.grade import Grade

        grade = Grade()
        if row.score_given is not None:
            grade.set_score_given(row.score_given)
        grade.set_score_maximum(row.score_maximum).set_activity_progress(row.activity)
        grade.set_grading_progress(row.grading).set_timestamp(row.stamp).set_user_id(row.sub)
        service = AssignmentsGradesService(
            connector(platform, self.lti.keys, now),
            cast(Any, {"scope": list(row.scopes), "lineitem": row.lineitem}),
        )
        try:
            service.put_grade(grade)
        except LtiException as exc:
            return f"{exc}"
        except requests.RequestException as exc:
            return f"the platform cannot be reached: {type(exc).__name__}"
        return None


def _requeue(
    tx: Tx, student: str, new: float, key: str | None, *, now: datetime, wall: float
) -> tuple[str | None, str]:
    """Queue a student's changed score under ``key`` against the last score sent: (the row's
    key, "") or (None, why nothing was queued). Without a ``key``, the row is keyed by the
    one it follows and the new score, so the same change is queued once."""
    last = tx.rows(
        "SELECT id, platform_id, lineitem, scopes, sub, score_maximum, activity, stamp"
        " FROM lti_score WHERE student = ? ORDER BY id DESC LIMIT 1",
        (student,),
    )
    if not last:
        return None, "not an LMS student, or no score of theirs sent yet"
    rid, pid, lineitem, scopes, sub, top, activity, stamp = last[0]
    given = tx.rows(
        "SELECT score_given FROM lti_score WHERE student = ? AND score_given IS NOT NULL"
        " ORDER BY id DESC LIMIT 1",
        (student,),
    )
    if not given:
        return None, "not released yet: the LMS gets it when the quiz's policy releases it"
    if abs(float(given[0][0]) - new) < 1e-9:
        return None, "the LMS has this score already"
    moment = max(now, datetime.fromisoformat(stamp) + timedelta(milliseconds=1))
    name = f"decision:{rid}:{new!r}" if key is None else key
    tx.run(
        "INSERT INTO lti_score (key, platform_id, lineitem, scopes, sub, student,"
        " score_given, score_maximum, activity, grading, stamp, made_ts, next_ts)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'FullyGraded', ?, ?, ?)"
        " ON CONFLICT (key) DO NOTHING",
        (name, pid, lineitem, scopes, sub, student, new, top, activity, _stamp(moment), wall,
         wall),
    )  # fmt: skip
    return name, ""


def regrade_scores(
    db: Database, scores: Mapping[str, float], *, label: str, now: datetime, wall: float
) -> list[tuple[str, float | None, float]]:
    """Queue the scores a regrade changed (after review decisions): each LMS student's new
    score against the last one sent; the changed ones (student, old score, new score). A
    regrade is queued once per ``label`` (its grades file's content) and student.
    """
    changed: list[tuple[str, float | None, float]] = []
    digest = hashlib.sha256(label.encode()).hexdigest()[:16]
    with db.transaction("queue the regraded scores") as tx:
        for student, new in sorted(scores.items()):
            given = tx.rows(
                "SELECT score_given FROM lti_score WHERE student = ? AND score_given IS NOT NULL"
                " ORDER BY id DESC LIMIT 1",
                (student,),
            )
            name = f"regrade:{digest}:{student}"
            had = tx.rows("SELECT 1 FROM lti_score WHERE key = ?", (name,))
            key, _ = _requeue(tx, student, new, name, now=now, wall=wall)
            if key is not None and not had:
                changed.append((student, float(given[0][0]), new))
    return changed


def queue_regrade(
    data: Path, grades: Path, *, db: str | None = None
) -> list[tuple[str, float | None, float]]:
    """Queue the changed scores of ``grades`` (a ``grades.csv`` of ``quizgym grade``, after
    ``--review``) for the LMS; the changed ones (student, old, new).

    Raises:
        QuizgymError: the file has no student and score columns, or the database fails.
    """
    import csv

    from quizgym.errors import QuizgymError
    from quizgym.serve.storage import open_database

    try:
        text = grades.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise QuizgymError(f"{grades}: cannot read") from exc
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames or not {"student", "score"} <= set(reader.fieldnames):
        raise QuizgymError(f"{grades}: no student and score columns (a grades.csv of grade)")
    scores: dict[str, float] = {}
    for line, row in enumerate(reader, start=2):
        try:
            scores[row["student"]] = float(row["score"])
        except (TypeError, ValueError) as exc:
            raise QuizgymError(f"{grades}:{line}: score {row['score']!r} is not a number") from exc
    database = open_database(db, folder=data)
    try:
        ensure_tables(database)
        return regrade_scores(database, scores, label=text, now=datetime.now(UTC), wall=time.time())
    finally:
        database.close()
