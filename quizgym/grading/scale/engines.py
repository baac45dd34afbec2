"""A chunked run's plan in, its pieces' results out: graded one after the other in this
process, or on Dask workers, each piece's rows written to part files.

An engine only maps :func:`~quizgym.grading.pieces.grade_piece` (then
:func:`~quizgym.grading.scale.parts.write_parts`) over a plan's pieces; what a piece does (the
:class:`~quizgym.grading.pieces.Job`) and how the outputs are put together do not depend on it.

The Dask engine turns the plan's pieces into a Dask DataFrame with one piece per partition;
``map_partitions`` runs ``grade_piece`` on each, on the workers of a ``distributed.LocalCluster``
started for the run (``processes=True``, one thread per worker: the grader holds the GIL) or of a
running scheduler. Each task receives the plain bank and compiles it itself; it reads its own piece
from the input file and writes its part files next to the output folder, so neither the answers
nor the per-response rows travel through the client: only the small
:class:`~quizgym.analysis.Sums` and rejections come back. With a remote scheduler, the workers
must see the same paths (a shared filesystem) and have quizgym installed.
"""

from __future__ import annotations

import logging
import pickle
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from quizgym.errors import QuizgymError
from quizgym.grading.pieces import Job, PieceResult, Plan, Progress, grade_piece, ticks
from quizgym.grading.scale.parts import write_parts
from quizgym.model import Bank
from quizgym.solver import CompiledBank

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ENGINES", "INSTALL_DASK", "DaskEngine", "Engine", "SerialEngine", "engine_named"]

ENGINES = ("numpy", "dask")
"""The engines ``quizgym grade --engine`` knows: this process (NumPy), or Dask."""
INSTALL_DASK = '--engine dask needs Dask: pip install "quizgym[dask]"'


class Engine(Protocol):
    """Grades every piece of a plan and returns the results in piece order."""

    def map(
        self, bank: CompiledBank, plan: Plan, job: Job, progress: Progress | None
    ) -> list[PieceResult]:
        """Run :func:`~quizgym.grading.pieces.grade_piece` on every piece of ``plan``."""


@dataclass(frozen=True)
class SerialEngine:
    """The pieces one after the other, in this process, with the run's compiled bank."""

    def map(
        self, bank: CompiledBank, plan: Plan, job: Job, progress: Progress | None
    ) -> list[PieceResult]:
        """Grade each piece in turn, writing its part files; ``progress`` is told after every
        slot."""
        tick = ticks(progress, len(plan.pieces) * len(job.present))
        return [
            write_parts(grade_piece(bank, piece, job, progress=tick), bank.bank, job)
            for piece in plan.pieces
        ]


def require_dask() -> None:
    """Raise a one-line error saying how to install the ``dask`` extra when it is missing."""
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise QuizgymError(INSTALL_DASK) from exc


def _grade_frame(frame: pd.DataFrame, *, bank: Bank, job: Job) -> pd.DataFrame:
    """One partition: its pieces (pickled) in, their pickled results out."""
    import pandas as pd

    results = []
    for index, blob in zip(frame["piece"], frame["blob"], strict=True):
        piece = pickle.loads(blob)  # noqa: S301 - written by this run's client
        result = write_parts(grade_piece(bank, piece, job), bank, job)
        results.append((int(index), pickle.dumps(result)))
    return pd.DataFrame(
        {"piece": [r[0] for r in results], "blob": [r[1] for r in results]},
        columns=["piece", "blob"],
    ).astype({"piece": "int64", "blob": object})


@dataclass(frozen=True)
class DaskEngine:
    """The pieces as Dask tasks, on a local cluster started for the run or a running scheduler."""

    scheduler: str | None = None
    """A running scheduler's address; None starts a local cluster of ``workers``."""
    workers: int = 2

    def map(
        self, bank: CompiledBank, plan: Plan, job: Job, progress: Progress | None
    ) -> list[PieceResult]:
        """Grade every piece on the cluster; ``progress`` is told once all are done."""
        require_dask()
        import dask
        import dask.dataframe as dd
        import pandas as pd
        from distributed import Client, LocalCluster

        pieces = pd.DataFrame(
            {
                "piece": [p.index for p in plan.pieces],
                "blob": [pickle.dumps(p) for p in plan.pieces],
            },
            columns=["piece", "blob"],
        ).astype({"piece": "int64", "blob": object})
        cluster = None
        try:
            if self.scheduler is None:
                cluster = LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=self.workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",
                    silence_logs=logging.ERROR,
                )
                client = Client(cluster)  # type: ignore[no-untyped-call]
            else:
                client = Client(self.scheduler)  # type: ignore[no-untyped-call]
            with client, dask.config.set({"dataframe.convert-string": False}):
                frame = dd.from_pandas(  # type: ignore[no-untyped-call]
                    pieces, npartitions=max(1, len(plan.pieces)), sort=False
                )
                graded = frame.map_partitions(
                    _grade_frame, bank=bank.bank, job=job, meta=pieces.iloc[:0]
                )
                out = graded.compute()
        except OSError as exc:
            raise QuizgymError(f"cannot reach the Dask scheduler {self.scheduler}: {exc}") from exc
        finally:
            if cluster is not None:
                cluster.close()
        results = [pickle.loads(b) for b in out["blob"]]  # noqa: S301 - our workers' results
        if progress is not None:
            total = len(plan.pieces) * len(job.present)
            progress(total, total)
        return sorted(results, key=lambda r: r.index)


def engine_named(name: str, *, scheduler: str | None = None, workers: int = 2) -> Engine:
    """The engine ``--engine NAME`` stands for.

    Raises:
        QuizgymError: an unknown engine, or Dask is not installed.
    """
    if name == "numpy":
        return SerialEngine()
    if name == "dask":
        require_dask()
        return DaskEngine(scheduler=scheduler, workers=workers)
    raise QuizgymError(f"unknown engine {name!r}; choose from {', '.join(ENGINES)}")
