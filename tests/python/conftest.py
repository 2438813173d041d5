"""Shared by the Python tests: where the reference fixtures are, a radosgw
(the real S3 server of tests/support/radosgw.py) and a dask.distributed
cluster of two worker processes, each started once for a module that asks.

meson test runs these with STOWAGE_PLUGIN_PATH on this build's plugins and
PYTHONPATH on its stowage package (tests/python/meson.build)."""

import json
import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "support"))
import radosgw  # noqa: E402

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


BUILD = pathlib.Path(os.environ.get("STOWAGE_BUILD_ROOT", ""))


def tool(name):
    """The path of this build's tool `name` ("stowage-convert")."""
    return str(BUILD / "tools" / name.replace("stowage-", "") / name)


def expected_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture
def fixtures_dir():
    return FIXTURES


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """radosgw on a one-node Ceph cluster: {"endpoint", "access_key", "secret_key", "region", ...}.
    Stopped by PID at the end, and checked gone."""
    d = tmp_path_factory.mktemp("rgw")
    info = radosgw.start(str(d), owner=os.getpid())  # a watcher stops it if pytest is killed
    recorded = json.load(open(d / "pids.json"))
    yield info
    radosgw.stop(str(d))
    left = [p["name"] for p in recorded if radosgw.alive(p["pid"], p["started"])]
    assert not left, f"still running after stop: {left}"


def boto3_client(info, secret=None, region=None):
    """boto3, the peer, on the server (path-style, no retries)."""
    import boto3
    import botocore.config

    return boto3.client(
        "s3", endpoint_url=info["endpoint"], aws_access_key_id=info["access_key"],
        aws_secret_access_key=secret or info["secret_key"], region_name=region or info["region"],
        config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))


@pytest.fixture(scope="module")
def s3(server):
    """boto3 on the module's radosgw."""
    return boto3_client(server)


@pytest.fixture
def bucket(s3):
    """A new bucket for one test."""
    import secrets

    name = "test-" + secrets.token_hex(6)
    assert s3.create_bucket(Bucket=name)["ResponseMetadata"]["HTTPStatusCode"] == 200
    return name


@pytest.fixture(scope="module")
def cluster():
    """A dask.distributed client of a LocalCluster: 2 worker processes of one thread."""
    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as c, distributed.Client(c) as client:
        yield client
