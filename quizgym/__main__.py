"""``python -m quizgym``: the command line's arguments in, the ``quizgym`` command run out."""

from quizgym.cli import main

if __name__ == "__main__":
    main()
