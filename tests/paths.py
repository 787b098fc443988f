"""Where tests find the project and their own data files, from whichever folder they sit in."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
