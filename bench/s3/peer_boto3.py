#!/usr/bin/python3
"""boto3 beside bench/s3's s3_bench: the same GETs and PUTs of the same objects, from a thread
pool of the size stowage's has. Run by s3_bench once per round, a JSON job on stdin:

    {"endpoint", "access_key", "secret_key", "region", "bucket", "threads",
     "keys": [...],          object keys under the bucket
     "files": DIR,           put: each key's body is the file DIR/<key minus "prefix_from">
     "prefix_from", "prefix_to"}

    peer_boto3.py get       GETs every key whole (bodies read into memory, then dropped)
    peer_boto3.py put       PUTs every key's file under prefix_to (bodies in memory first)
    peer_boto3.py presign   presigned GET URLs of keys, PUT URLs of them under prefix_to
                            (valid an hour), for s3_bench's raw-socket client
    peer_boto3.py bucket    creates the bucket

get and put print one JSON line: {"seconds", "cpu", "bytes"}: the wall time of the timed pass
and this process's CPU time (user + system, every thread) over it. Before it, one request per
thread at once opens the pool's connections, as stowage's are open when it is timed.
"""
import concurrent.futures
import json
import os
import resource
import sys
import time

import boto3
import botocore.config


def client(job):
    config = botocore.config.Config(max_pool_connections=job["threads"], retries={"max_attempts": 1},
                                    s3={"addressing_style": "path"})
    return boto3.client("s3", endpoint_url=job["endpoint"], aws_access_key_id=job["access_key"],
                        aws_secret_access_key=job["secret_key"], region_name=job["region"], config=config)


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(job, work, items):
    """Runs work(item) for every item on the pool after a warm-up; the figures."""
    with concurrent.futures.ThreadPoolExecutor(job["threads"]) as pool:
        list(pool.map(work, items[: job["threads"]]))  # warm-up: connections opened
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        sizes = list(pool.map(work, items))
        seconds, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
    return {"seconds": seconds, "cpu": cpu, "bytes": sum(sizes)}


def get(job):
    s3 = client(job)

    def one(key):
        return len(s3.get_object(Bucket=job["bucket"], Key=key)["Body"].read())

    return timed(job, one, job["keys"])


def put(job):
    s3 = client(job)
    cut = len(job["prefix_from"])
    bodies = []
    for key in job["keys"]:
        with open(os.path.join(job["files"], key[cut:]), "rb") as f:
            bodies.append((job["prefix_to"] + key[cut:], f.read()))

    def one(item):
        s3.put_object(Bucket=job["bucket"], Key=item[0], Body=item[1])
        return len(item[1])

    return timed(job, one, bodies)


def presign(job):
    s3 = client(job)
    cut = len(job["prefix_from"])

    def url(method, key):
        return s3.generate_presigned_url(method, Params={"Bucket": job["bucket"], "Key": key}, ExpiresIn=3600)

    return {"get": [url("get_object", k) for k in job["keys"]],
            "put": [url("put_object", job["prefix_to"] + k[cut:]) for k in job["keys"]]}


def bucket(job):
    client(job).create_bucket(Bucket=job["bucket"])
    return {}


def main():
    modes = {"get": get, "put": put, "presign": presign, "bucket": bucket}
    if len(sys.argv) != 2 or sys.argv[1] not in modes:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(modes[sys.argv[1]](json.load(sys.stdin))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
