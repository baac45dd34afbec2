"""``python -m quizgym.render.precompiled``: compile the bundled templates ahead (run it after
editing one of :data:`~quizgym.render.precompiled.PRECOMPILED`)."""

import sys

from quizgym.render.precompiled import write
from quizgym.render.report import report_environment

for path in write(report_environment()):
    sys.stdout.write(f"wrote {path}\n")
