"""Fixtures every suite shares: `ferry_api`, the installed ferry package with its compiled
extension (a failure under CI=true when it is missing, else a skip)."""

import os

import pytest


def _unavailable(what):
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{what} (CI=true: missing prerequisites are failures)", pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="session")
def ferry_api():
    """The installed `ferry` package, with ferry._ferry importable."""
    try:
        import ferry
        import ferry._ferry  # noqa: F401
    except ImportError as e:
        _unavailable(f"the ferry Python package is not installed with its extension ({e}); run scripts/setup.sh")
    return ferry
