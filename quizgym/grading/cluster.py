"""The Dask engine: :func:`~quizgym.grading.scale.grade_piece` under ``map_partitions``.

The plan's pieces become a Dask DataFrame with one piece per partition; ``map_partitions`` runs
:func:`~quizgym.grading.scale.grade_piece` on each, on the workers of a
``distributed.LocalCluster`` started for the run (``processes=True``, one thread per worker: the
grader holds the GIL) or of a running scheduler. Each worker reads its own piece from the input
file and writes its part files next to the output folder, so neither the answers nor the
per-response rows travel through the client: only the small :class:`~quizgym.analysis.Sums` and
rejections come back. With a remote scheduler, the workers must see the same paths (a shared
filesystem) and have quizgym installed.
"""

from __future__ import annotations

import logging
import pickle
from pathlib import Path
from typing import Any

from quizgym.errors import QuizgymError
from quizgym.grading.scale import INSTALL_DASK, PieceResult, Plan, grade_piece
from quizgym.model import Bank

__all__ = ["grade_on_dask", "require_dask"]


def require_dask() -> None:
    """Raise a one-line error saying how to install the ``dask`` extra when it is missing."""
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise QuizgymError(INSTALL_DASK) from exc


def _grade_frame(
    frame: Any,
    *,
    bank: Bank,
    present: list[str],
    parts_dir: str,
    gradebook: str | None,
    feedback: bool,
) -> Any:
    """One partition: its pieces (pickled) in, their pickled results out."""
    import pandas as pd

    results = []
    for index, blob in zip(frame["piece"], frame["blob"], strict=True):
        piece = pickle.loads(blob)  # noqa: S301 - written by this run's client
        result = grade_piece(
            bank,
            piece,
            present=present,
            parts_dir=Path(parts_dir),
            gradebook=gradebook,
            feedback=feedback,
        )
        results.append((int(index), pickle.dumps(result)))
    return pd.DataFrame(
        {"piece": [r[0] for r in results], "blob": [r[1] for r in results]},
        columns=["piece", "blob"],
    ).astype({"piece": "int64", "blob": object})


def grade_on_dask(
    bank: Bank,
    plan: Plan,
    *,
    parts_dir: Path,
    gradebook: str | None,
    feedback: bool,
    scheduler: str | None,
    workers: int,
) -> list[PieceResult]:
    """Grade every piece of a plan on a Dask cluster; the results in piece order.

    Args:
        bank: the bank.
        plan: the run's plan.
        parts_dir: where the workers write their part files.
        gradebook: also write gradebook rows.
        feedback: also write feedback files.
        scheduler: a running scheduler's address; None starts a local cluster of ``workers``.
        workers: worker processes of the local cluster.

    Returns:
        One result per piece.
    """
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
    meta = pieces.iloc[:0]
    cluster = None
    try:
        if scheduler is None:
            cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=logging.ERROR,
            )
            client = Client(cluster)  # type: ignore[no-untyped-call]
        else:
            client = Client(scheduler)  # type: ignore[no-untyped-call]
        with client, dask.config.set({"dataframe.convert-string": False}):
            frame = dd.from_pandas(  # type: ignore[no-untyped-call]
                pieces, npartitions=max(1, len(plan.pieces)), sort=False
            )
            graded = frame.map_partitions(
                _grade_frame,
                bank=bank,
                present=plan.present,
                parts_dir=str(parts_dir),
                gradebook=gradebook,
                feedback=feedback,
                meta=meta,
            )
            out = graded.compute()
    except OSError as exc:
        raise QuizgymError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from exc
    finally:
        if cluster is not None:
            cluster.close()
    results = [pickle.loads(b) for b in out["blob"]]  # noqa: S301 - our workers' results
    return sorted(results, key=lambda r: r.index)
