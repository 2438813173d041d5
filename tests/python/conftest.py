"""Shared by the Python tests: where the reference fixtures are.

meson test runs these with STOWAGE_PLUGIN_PATH on this build's plugins and
PYTHONPATH on its stowage package (tests/python/meson.build)."""

import json
import os
import pathlib

import pytest

# The plugins this build left out (meson -D<id>=disabled, or a library not
# found); a build with every plugin (scripts/setup, CI) skips nothing.
PLUGINS_OFF = set(filter(None, os.environ.get("STOWAGE_PLUGINS_OFF", "").split(",")))


def needs(*ids):
    """A mark skipping a test that needs a plugin this build left out."""
    off = sorted(set(ids) & PLUGINS_OFF)
    return pytest.mark.skipif(bool(off), reason="plugins left out of this build: " + ", ".join(off))


FIXTURES = pathlib.Path(os.environ.get("STOWAGE_FIXTURES", pathlib.Path(__file__).parents[1] / "fixtures"))


def fixture(*parts):
    return FIXTURES.joinpath(*parts)


def expected_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture
def fixtures_dir():
    return FIXTURES
