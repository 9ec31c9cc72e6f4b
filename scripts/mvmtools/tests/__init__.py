"""Unit tests of mvmtools (unittest): python3 -m mvmtools.tests (PYTHONPATH=scripts)."""
import os

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FIXTURES = os.path.join(REPO, "tests", "fixtures")


def fixture(*parts):
    return os.path.join(FIXTURES, *parts)
