"""quizgym: one plain-text question bank, checked like code."""

__version__ = "0.1.0"
