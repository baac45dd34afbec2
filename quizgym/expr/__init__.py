"""The expression language, moved into a package (this step only renames the module)."""

from quizgym.expr.vocabulary import *  # noqa: F403
from quizgym.expr.vocabulary import __all__  # noqa: F401
