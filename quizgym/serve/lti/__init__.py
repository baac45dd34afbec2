"""LTI 1.3 for ``quizgym serve``: a platform's launches in, the student's or teacher's pages,
deep links, the LMS roster and every graded quiz attempt's score (through a queue in the
server's database) out.

The protocol checks and the services come from pylti1p3next (``pip install "quizgym[lti]"``);
this package holds the thin Starlette adapter, the tool's keys and the tables it keeps.
"""

from __future__ import annotations

__all__: list[str] = []
