#!/usr/bin/env python3
"""A small client of pyward's HTTP API for tests/cli/api.sh (standard library only).

    api_client.py (--unix PATH | --tcp PORT --token TOKEN) follow JOB [--last-event-id N]
        Read GET /api/jobs/JOB/events as Server-Sent Events until the result
        event; print one line per event ("ID TYPE JSON"), then the job's final
        state on the last line. Exit 0 when the stream ended with a result.
    api_client.py ... wait-progress JOB
        Read the stream until the first progress event with bytes done > 0;
        print its id. Exit 0 when one came.
    api_client.py ... wait-stage JOB [--stage NAME]
        Read the stream until the first progress event of stage NAME (default
        probe); print its id. Exit 0 when one came.
    api_client.py ... raw HEAD [--body-bytes N]
        Send HEAD (a request line and headers, "\\r\\n" written as such;
        with --tcp the token's Authorization header is added) and then N bytes
        of "x", and print the answer's status and its JSON error code, or
        "no answer" when none came within 8 s.
"""
import argparse
import http.client
import json
import socket
import sys


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def connect(args):
    if args.unix:
        return UnixConnection(args.unix, 120), {}
    c = http.client.HTTPConnection("127.0.0.1", args.tcp, timeout=120)
    return c, {"Authorization": "Bearer " + args.token, "Host": "127.0.0.1:%d" % args.tcp}


def events(args, job, last_id):
    """Yield (id, type, data) from the job's event stream."""
    conn, headers = connect(args)
    headers["Accept"] = "text/event-stream"
    if last_id:
        headers["Last-Event-ID"] = str(last_id)
    conn.request("GET", "/api/jobs/%s/events" % job, headers=headers)
    resp = conn.getresponse()
    if resp.status != 200:
        print("status %d: %s" % (resp.status, resp.read().decode()), file=sys.stderr)
        sys.exit(2)
    if not resp.getheader("Content-Type", "").startswith("text/event-stream"):
        print("not an event stream: %s" % resp.getheader("Content-Type"), file=sys.stderr)
        sys.exit(2)
    ev = {"id": None, "event": "message", "data": []}
    for raw in resp:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if ev["data"]:
                yield int(ev["id"]), ev["event"], json.loads("\n".join(ev["data"]))
            ev = {"id": None, "event": "message", "data": []}
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            ev["data"].append(value)
        elif field in ("id", "event"):
            ev[field] = value
    conn.close()


def follow(args):
    for eid, etype, data in events(args, args.job, args.last_event_id):
        print("%d %s %s" % (eid, etype, json.dumps(data, sort_keys=True)))
        if etype == "result":
            print("final", data.get("state"))
            return 0
    print("the stream ended without a result", file=sys.stderr)
    return 1


def wait_progress(args):
    for eid, etype, data in events(args, args.job, 0):
        if etype == "progress" and data.get("done", 0) > 0:
            print(eid)
            return 0
        if etype == "result":
            break
    return 1


def wait_stage(args):
    for eid, etype, data in events(args, args.job, 0):
        if etype == "progress" and data.get("stage") == args.stage:
            print(eid)
            return 0
        if etype == "result":
            break
    return 1


def raw(args):
    head = args.job.replace("\\r\\n", "\r\n")
    if args.tcp:
        s = socket.create_connection(("127.0.0.1", args.tcp))
        head = head.replace("\r\n\r\n", "\r\nAuthorization: Bearer %s\r\n\r\n" % args.token, 1)
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(args.unix)
    s.settimeout(8)
    answer = b""
    try:
        s.sendall(head.encode("latin-1") + b"x" * args.body_bytes)
        while True:
            part = s.recv(65536)
            if not part:
                break
            answer += part
    except OSError:
        pass
    if not answer:
        print("no answer")
        return 1
    top, _, body = answer.partition(b"\r\n\r\n")
    status = top.split(b" ")[1].decode()
    try:
        code = json.loads(body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = "not-json"
    print(status, code)
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--unix")
    p.add_argument("--tcp", type=int)
    p.add_argument("--token")
    p.add_argument("command", choices=["follow", "wait-progress", "wait-stage", "raw"])
    p.add_argument("job")
    p.add_argument("--last-event-id", type=int, default=0)
    p.add_argument("--stage", default="probe")
    p.add_argument("--body-bytes", type=int, default=0)
    args = p.parse_args()
    return {"follow": follow, "wait-progress": wait_progress, "wait-stage": wait_stage, "raw": raw}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
