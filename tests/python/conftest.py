"""Shared by the Python tests: where the reference fixtures are.

meson test runs these with STOWAGE_PLUGIN_PATH on this build's plugins and
PYTHONPATH on its stowage package (tests/python/meson.build)."""

import json
import os
import pathlib

import pytest

FIXTURES = pathlib.Path(os.environ.get("STOWAGE_FIXTURES", pathlib.Path(__file__).parents[1] / "fixtures"))


def fixture(*parts):
    return FIXTURES.joinpath(*parts)


def expected_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture
def fixtures_dir():
    return FIXTURES
