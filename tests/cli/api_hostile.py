"""Hostile clients for `pyward serve` over a UNIX socket (tests/cli/api-hostile.sh).

garbage SOCK ROUNDS PER_ROUND SEED WAIT
    Each round opens PER_ROUND connections at once and writes seeded random
    bytes on each (some after a request line, some half-closed, some not),
    then waits up to WAIT seconds for every connection to be answered or
    closed. Prints "answered=N closed=N open=N 5xx=N 2xx=N".

slowloris SOCK PID N WAIT
    Opens N connections at once, each sending the start of a request and
    then one header byte every 0.5 s, never the end. Prints the most threads
    the server (PID) had while they were held, how many the server closed
    at once, and after how many seconds the last one was cut (or "open" for
    those still open after WAIT seconds).

slowbody SOCK length|chunked WAIT
    Sends a whole request head for POST /api/venvs, then its body one byte
    (or one one-byte chunk) every 0.5 s, never the end. Prints "closed S",
    "answered S" or "open S" with the seconds until the server acted.

Every loop is bounded in count and time; nothing is sent but to SOCK.
"""
import random
import select
import socket
import sys
import time


def threads(pid):
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return -1


def payload(rng):
    kind = rng.randrange(5)
    junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 1500)))
    if kind == 0:
        return junk
    if kind == 1:
        return b"GET /api/runtime/python HTTP/1.1\r\n" + junk + b"\r\n\r\n"
    if kind == 2:
        return b"POST /api/venvs HTTP/1.1\r\nHost: localhost\r\nContent-Length: 7\r\n\r\n" + junk
    if kind == 3:
        return junk.replace(b"\n", b"") + b"\r\n\r\n"
    return b"GET /" + junk.replace(b" ", b"").replace(b"\r", b"").replace(b"\n", b"") + b" HTTP/1.1\r\nHost: localhost\r\n\r\n"


def garbage(sock, rounds, per_round, seed, wait):
    rng = random.Random(seed)
    totals = {"answered": 0, "closed": 0, "open": 0, "5xx": 0, "2xx": 0}
    for _ in range(rounds):
        conns = {}
        for _ in range(per_round):
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(5)
            s.connect(sock)
            try:
                s.sendall(payload(rng))
                if rng.randrange(2):
                    s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            s.setblocking(False)
            conns[s] = b""
        end = time.time() + wait
        live = set(conns)
        while live and time.time() < end:
            ready, _, _ = select.select(list(live), [], [], max(0.0, end - time.time()))
            for s in ready:
                try:
                    data = s.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if data:
                    conns[s] += data
                else:
                    live.discard(s)
        for s, got in conns.items():
            if s in live:
                totals["open"] += 1
            elif got.startswith(b"HTTP/1."):
                totals["answered"] += 1
                code = got[9:12]
                if code.startswith(b"5"):
                    totals["5xx"] += 1
                if code.startswith(b"2"):
                    totals["2xx"] += 1
            else:
                totals["closed"] += 1
            s.close()
    print(" ".join("%s=%d" % (k, v) for k, v in totals.items()))


def server_cut(s):
    """One more header byte, then a look for the end: True once the server closed s."""
    try:
        s.send(b"a")
    except (BlockingIOError, InterruptedError):
        pass
    except OSError:
        return True
    try:
        return s.recv(4096) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True


def slowloris(sock, pid, n, wait):
    conns = []
    refused = 0
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(2)
        try:
            s.connect(sock)
            s.sendall(b"GET /api/runtime/python HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        except OSError:
            refused += 1
            s.close()
            continue
        s.setblocking(False)
        conns.append(s)
    start = time.time()
    most = threads(pid)
    live = set(conns)
    last_cut = 0.0
    closed_at_once = 0
    while live and time.time() - start < wait:
        for s in list(live):
            if server_cut(s):
                live.discard(s)
                last_cut = time.time() - start
                closed_at_once += last_cut < 0.5
        most = max(most, threads(pid))
        time.sleep(0.5)
    for s in conns:
        s.close()
    print("threads=%d refused=%d closed_at_once=%d last_cut=%.1f open=%d" %
          (most, refused, closed_at_once, last_cut, len(live)))


def slowbody(sock, how, wait):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.settimeout(0.5)
    head = b"POST /api/venvs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    head += b"Transfer-Encoding: chunked\r\n\r\n" if how == "chunked" else b"Content-Length: 1000\r\n\r\n"
    s.sendall(head)
    start = time.time()
    state = "open"
    while time.time() - start < wait:
        try:
            s.sendall(b"1\r\na\r\n" if how == "chunked" else b"a")
            state = "answered" if s.recv(1000) else "closed"
            break
        except socket.timeout:
            continue
        except OSError:
            state = "closed"
            break
    print("%s %.1f" % (state, time.time() - start))
    s.close()


def main():
    mode = sys.argv[1]
    if mode == "garbage":
        garbage(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]))
    elif mode == "slowloris":
        slowloris(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
    elif mode == "slowbody":
        slowbody(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
