"""radosgw (tests/support/radosgw.py) is a real S3 server: boto3 against it.

What the s3 backend's tests will rely on, checked with a client that is not
ours: buckets, large and multipart objects, listings, ranges, deletes, a
signature check that refuses a wrong key, and what Pacific's radosgw does with
conditional puts (tests/support/README.md). The cluster is started once for the
module and stopped by PID; the last check is that none of its daemons is left.
"""
import concurrent.futures
import hashlib
import json
import os
import pathlib
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

import botocore.exceptions
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "support"))
import radosgw  # noqa: E402
from conftest import boto3_client as client, tool  # noqa: E402

MIB = 1 << 20


def error_of(call, *args, **kwargs):
    """(S3 error code, HTTP status) of a call that must fail."""
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call(*args, **kwargs)
    return e.value.response["Error"]["Code"], e.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_start_printed_what_clients_need(server):
    assert server["endpoint"].startswith("http://127.0.0.1:")
    assert len(server["access_key"]) == 20 and len(server["secret_key"]) == 40
    assert len(server["pids"]) == 3 and server["seconds"] < radosgw.START_TIMEOUT


def test_bucket_put_get_head(s3, bucket):
    assert bucket in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    s3.put_object(Bucket=bucket, Key="dir/small.bin", Body=b"hello radosgw")
    assert s3.get_object(Bucket=bucket, Key="dir/small.bin")["Body"].read() == b"hello radosgw"
    head = s3.head_object(Bucket=bucket, Key="dir/small.bin")
    assert head["ContentLength"] == 13
    assert head["ETag"] == '"%s"' % hashlib.md5(b"hello radosgw").hexdigest()
    assert error_of(s3.get_object, Bucket=bucket, Key="missing") == ("NoSuchKey", 404)


def test_20_mib_object(s3, bucket):
    data = os.urandom(20 * MIB)
    s3.put_object(Bucket=bucket, Key="big", Body=data)
    got = s3.get_object(Bucket=bucket, Key="big")
    assert got["ContentLength"] == len(data)
    assert got["Body"].read() == data


def test_multipart_upload_of_two_5_mib_parts(s3, bucket):
    parts = [os.urandom(5 * MIB), os.urandom(5 * MIB)]
    upload = s3.create_multipart_upload(Bucket=bucket, Key="multi")["UploadId"]
    done = [{"PartNumber": n, "ETag": s3.upload_part(Bucket=bucket, Key="multi", UploadId=upload,
                                                     PartNumber=n, Body=p)["ETag"]}
            for n, p in enumerate(parts, 1)]
    etag = s3.complete_multipart_upload(Bucket=bucket, Key="multi", UploadId=upload,
                                        MultipartUpload={"Parts": done})["ETag"]
    # Pacific answers CompleteMultipartUpload with an empty <ETag/>: a client must HEAD for it
    assert etag == ""
    # S3's multipart ETag: the MD5 of the parts' MD5s, dash, the number of parts
    md5s = b"".join(hashlib.md5(p).digest() for p in parts)
    assert s3.head_object(Bucket=bucket, Key="multi")["ETag"] == '"%s-2"' % hashlib.md5(md5s).hexdigest()
    assert s3.get_object(Bucket=bucket, Key="multi")["Body"].read() == b"".join(parts)


def test_list_with_prefix_delimiter_and_continuation(s3, bucket):
    for key in ["a/1", "a/2", "a/b/3", "a/b/4", "c"]:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    page = s3.list_objects_v2(Bucket=bucket, Prefix="a/", Delimiter="/")
    assert [o["Key"] for o in page["Contents"]] == ["a/1", "a/2"]
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == ["a/b/"]
    keys, token = [], {}
    for _ in range(5):
        page = s3.list_objects_v2(Bucket=bucket, MaxKeys=2, **token)
        keys += [o["Key"] for o in page["Contents"]]
        if not page["IsTruncated"]:
            break
        token = {"ContinuationToken": page["NextContinuationToken"]}
    assert keys == ["a/1", "a/2", "a/b/3", "a/b/4", "c"]


def test_listing_encodes_keys_when_asked(server, s3, bucket):
    """encoding-type=url: radosgw percent-encodes the keys in the XML (boto3 decodes them)."""
    key = "space and+plus/ü"
    s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == [key]
    status, body = radosgw.s3_request(server, path=f"/{bucket}",
                                      query={"list-type": "2", "encoding-type": "url"})
    assert status == 200, body
    # a key's "/" too, in UTF-8
    assert b"<Key>space%20and%2Bplus%2F%C3%BC</Key>" in body, body
    assert urllib.parse.unquote("space%20and%2Bplus%2F%C3%BC") == key
    status, body = radosgw.s3_request(server, path=f"/{bucket}",
                                      query={"list-type": "2", "encoding-type": "url", "delimiter": "/"})
    # but not a common prefix's
    assert b"<CommonPrefixes><Prefix>space%20and%2Bplus/</Prefix></CommonPrefixes>" in body, body


def test_ranged_get(s3, bucket):
    data = bytes(range(256)) * 4
    s3.put_object(Bucket=bucket, Key="r", Body=data)
    got = s3.get_object(Bucket=bucket, Key="r", Range="bytes=10-19")
    assert got["Body"].read() == data[10:20]
    assert got["ContentRange"] == "bytes 10-19/1024"
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert s3.get_object(Bucket=bucket, Key="r", Range="bytes=-5")["Body"].read() == data[-5:]
    assert error_of(s3.get_object, Bucket=bucket, Key="r", Range="bytes=2000-") == ("InvalidRange", 416)


def test_delete_one_and_many(s3, bucket):
    for key in ["d1", "d2", "d3"]:
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    s3.delete_object(Bucket=bucket, Key="d1")
    assert error_of(s3.head_object, Bucket=bucket, Key="d1") == ("404", 404)
    deleted = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "d2"}, {"Key": "d3"}]})
    assert sorted(d["Key"] for d in deleted["Deleted"]) == ["d2", "d3"]
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0
    s3.delete_bucket(Bucket=bucket)
    assert error_of(s3.head_bucket, Bucket=bucket) == ("404", 404)


def test_wrong_keys_are_refused(server, bucket):
    wrong = client(server, secret="W" * 40)
    assert error_of(wrong.list_objects_v2, Bucket=bucket) == ("SignatureDoesNotMatch", 403)
    unknown = client(dict(server, access_key="NOSUCHKEY0000000000X"))
    assert error_of(unknown.list_objects_v2, Bucket=bucket) == ("InvalidAccessKeyId", 403)


def test_any_region_name_is_accepted_in_signatures(server, bucket):
    for region in ["us-east-1", "default", "eu-stowage-9"]:
        assert client(server, region=region).list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_the_zone_group_is_named_default(s3, bucket):
    """A LocationConstraint must be absent or the zone group's name, "default"."""
    assert s3.get_bucket_location(Bucket=bucket)["LocationConstraint"] == "default"
    named = "test-" + secrets.token_hex(6)
    s3.create_bucket(Bucket=named, CreateBucketConfiguration={"LocationConstraint": "default"})
    assert error_of(s3.create_bucket, Bucket="test-" + secrets.token_hex(6),
                    CreateBucketConfiguration={"LocationConstraint": "us-east-1"}) == \
        ("InvalidLocationConstraint", 400)


def test_a_bucket_head_names_no_region(s3, bucket):
    """AWS answers a HEAD of a bucket with x-amz-bucket-region; radosgw Pacific does not, so the
    s3 backend's region discovery finds none here and signs for us-east-1."""
    headers = s3.head_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPHeaders"]
    assert "x-amz-bucket-region" not in headers and headers["x-rgw-object-count"] == "0"


def test_virtual_host_style_for_bucket_localhost(server, s3, bucket):
    """rgw_dns_name is localhost: Host BUCKET.localhost:PORT names the bucket (curl resolves
    *.localhost to the loopback; Python's resolver does not, so the Host is set by hand)."""
    s3.put_object(Bucket=bucket, Key="v", Body=b"virtual")
    port = server["endpoint"].rsplit(":", 1)[1]
    assert radosgw.s3_request(server, path="/v", headers={"host": f"{bucket}.localhost:{port}"}) == \
        (200, b"virtual")


def test_unsigned_payload_put(server, s3, bucket):
    status, body = radosgw.s3_request(server, "PUT", f"/{bucket}/unsigned", b"not hashed",
                                      payload_hash="UNSIGNED-PAYLOAD")
    assert status == 200, body
    assert s3.get_object(Bucket=bucket, Key="unsigned")["Body"].read() == b"not hashed"
    # a signed hash that does not match the body is refused
    status, body = radosgw.s3_request(server, "PUT", f"/{bucket}/bad", b"body",
                                      payload_hash=hashlib.sha256(b"other").hexdigest())
    assert status == 400 and b"XAmzContentSHA256Mismatch" in body, (status, body)


def conditional_put(s3, bucket, key, body, **headers):
    """PutObject with If-Match / If-None-Match (boto3 1.26 has no parameter for them): the HTTP
    status, 412 for a refusal."""
    def add(request, **_):
        for name, value in headers.items():
            request.headers[name.replace("_", "-")] = value
    event = "before-sign.s3.PutObject"
    s3.meta.events.register(event, add)
    try:
        return s3.put_object(Bucket=bucket, Key=key, Body=body)["ResponseMetadata"]["HTTPStatusCode"]
    except botocore.exceptions.ClientError as e:
        assert e.response["Error"]["Code"] == "PreconditionFailed", e.response["Error"]
        return e.response["ResponseMetadata"]["HTTPStatusCode"]
    finally:
        s3.meta.events.unregister(event, add)


def test_conditional_put_if_none_match_star(s3, bucket):
    assert conditional_put(s3, bucket, "k", b"first", If_None_Match="*") == 200
    assert conditional_put(s3, bucket, "k", b"second", If_None_Match="*") == 412
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"first"


def test_conditional_put_if_match_wants_the_etag_unquoted(s3, bucket):
    """Pacific compares If-Match with the stored ETag as is, without quotes: the quoted ETag that
    S3 (and radosgw itself) returns never matches."""
    s3.put_object(Bucket=bucket, Key="k", Body=b"v1")
    etag = s3.head_object(Bucket=bucket, Key="k")["ETag"]
    assert etag.startswith('"')
    assert conditional_put(s3, bucket, "k", b"v2", If_Match=etag) == 412
    assert conditional_put(s3, bucket, "k", b"v2", If_Match='"0000"') == 412
    assert conditional_put(s3, bucket, "k", b"v2", If_Match="0000") == 412
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v1"
    assert conditional_put(s3, bucket, "k", b"v2", If_Match=etag.strip('"')) == 200
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v2"
    assert conditional_put(s3, bucket, "k", b"v3", If_Match="*") == 200
    assert conditional_put(s3, bucket, "absent", b"v1", If_Match="*") == 412


def test_absent_only_puts_racing_have_one_winner(server, bucket):
    """Four writers released together with If-None-Match: *, ten rounds: exactly one 200."""
    clients = [client(server) for _ in range(4)]
    for round_ in range(10):
        key = f"race-{round_}"
        barrier = threading.Barrier(len(clients))

        def put(i):
            barrier.wait()
            return conditional_put(clients[i], bucket, key, b"writer %d" % i, If_None_Match="*")
        with concurrent.futures.ThreadPoolExecutor(len(clients)) as pool:
            statuses = list(pool.map(put, range(len(clients))))
        assert sorted(statuses) == [200, 412, 412, 412], (round_, statuses)
        winner = statuses.index(200)
        assert clients[0].get_object(Bucket=bucket, Key=key)["Body"].read() == b"writer %d" % winner


def test_a_second_cluster_runs_beside_and_stops(server, tmp_path):
    """Another cluster at the same time (its own fsid, ports and folder), and stop leaves none
    of its daemons."""
    other = radosgw.start(str(tmp_path / "second"), owner=os.getpid())
    try:
        assert other["endpoint"] != server["endpoint"]
        s3 = client(other)
        assert s3.list_buckets()["Buckets"] == []
    finally:
        recorded = json.load(open(tmp_path / "second" / "pids.json"))
        assert radosgw.stop(str(tmp_path / "second")) == []
    assert [p["pid"] for p in recorded] == other["pids"] + [other["watcher"]]
    assert not [p for p in recorded if radosgw.alive(p["pid"], p["started"])]


def test_the_watcher_stops_a_cluster_whose_owner_died(tmp_path):
    """A test process that dies without stopping its cluster: the watcher stops it."""
    owner = subprocess.Popen(["sleep", "60"])
    try:
        info = radosgw.start(str(tmp_path), owner=owner.pid)
        recorded = json.load(open(tmp_path / "pids.json"))
    finally:
        owner.kill()
        owner.wait()
    for _ in range(100):  # the watcher looks every 0.5 s; stopping takes about 1 s
        if not any(radosgw.alive(p["pid"], p["started"]) for p in recorded):
            break
        time.sleep(0.1)
    left = [p["name"] for p in recorded if radosgw.alive(p["pid"], p["started"])]
    assert not left, f"still running 10 s after the owner died: {left}"
    assert len(info["pids"]) == 3 and not (tmp_path / "pids.json").exists()


# ---- no secret in any of stowage's messages (the s3 backend's part of
# tests/http/secrets_sweep_test.cpp) ----------------------------------------------------------

PLANTED = {"secret": "planted-s3-secret-0d9e", "token": "planted-s3-token-51aa",
           "url": "planted-url-pa55-77c1"}
def sweep_cases(server, bucket, stalled_port, refused_port):
    """(name, URL, storage options) of opens that must fail, secrets planted in each."""
    base = {"endpoint": server["endpoint"], "access_key_id": server["access_key"],
            "retries": 0, "region": server["region"]}
    return [
        ("wrong secret", f"s3://{bucket}/x.zarr",
         dict(base, secret_access_key=PLANTED["secret"], session_token=PLANTED["token"])),
        ("no such bucket", "s3://no-such-bucket-0a1b/x.zarr",
         dict(base, secret_access_key=server["secret_key"], session_token=PLANTED["token"])),
        ("refused", f"s3://{bucket}/x.zarr",
         dict(base, endpoint=f"http://u:{PLANTED['url']}@127.0.0.1:{refused_port}",
              secret_access_key=PLANTED["secret"])),
        ("stalled", f"s3://{bucket}/x.zarr",
         dict(base, endpoint=f"http://u:{PLANTED['url']}@127.0.0.1:{stalled_port}",
              secret_access_key=PLANTED["secret"], session_token=PLANTED["token"], timeout_ms=200)),
        ("bad value", f"s3://{bucket}/x.zarr", dict(base, secret_access_key=[PLANTED["secret"]])),
        ("s3fs spellings", f"s3://{bucket}/x.zarr",
         {"endpoint": server["endpoint"], "key": server["access_key"], "secret": PLANTED["secret"],
          "token": PLANTED["token"], "retries": 0}),
    ]


def tool_options(flag, options):
    args = []
    for k, v in options.items():
        args += [flag, f"{k}={v if isinstance(v, str) else json.dumps(v)}"]
    return args


def test_no_planted_secret_in_any_stowage_message(server, bucket, tmp_path, monkeypatch, capfd):
    import stowage
    for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                 "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "STOWAGE_S3_OPTIONS"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    monkeypatch.setenv("STOWAGE_LOG", "debug")
    # A server that takes connections and never answers; a port nobody listens on.
    stalled = socket.socket()
    stalled.bind(("127.0.0.1", 0))
    stalled.listen(16)
    refused_port = radosgw.free_port()
    try:
        for name, url, options in sweep_cases(server, bucket, stalled.getsockname()[1],
                                              refused_port):
            with pytest.raises(Exception) as e:
                stowage.open(url, storage_options=options)
            shown = {"python": f"{type(e.value).__name__} {e.value} {e.value!r}"}
            assert "s3://" in shown["python"] or "option" in shown["python"], (name, shown)
            info = subprocess.run([tool("stowage-info"), "--json", *tool_options(
                "--storage-option", options), url], capture_output=True, text=True, timeout=60)
            assert info.returncode != 0, (name, info.stdout)
            shown["stowage-info"] = info.stdout + info.stderr
            convert = subprocess.run([tool("stowage-convert"), "--quiet", *tool_options(
                "--source-storage-option", options), url, str(tmp_path / "out.zarr")],
                capture_output=True, text=True, timeout=60)
            assert convert.returncode != 0, (name, convert.stderr)
            shown["stowage-convert"] = convert.stdout + convert.stderr
            out, err = capfd.readouterr()
            shown["this process's output"] = out + err
            for where, text in shown.items():
                for secret in PLANTED.values():
                    assert secret not in text, f"{name}: {where} shows {secret}: {text}"
    finally:
        stalled.close()
