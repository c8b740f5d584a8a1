#!/usr/bin/env python3
"""Pseudo-terminal harness for bench/tui.sh (Python 3 standard library only).

It starts a program on a pty of COLSxROWS, reads everything the program
writes (timestamped per read, fed to a small VT100/xterm screen model so
the screen can be checked), sends keys, and reports figures as "name value"
lines on stdout.

    tui_pty.py frame [options] -- ARGV...     start-up, peak RSS, idle CPU
    tui_pty.py once [options] -- ARGV...      a program that exits by itself
    tui_pty.py drive [options] -- ARGV...     keys, then bytes/s in a window

"Full frame" (frame): the screen model shows MARKER (and, with --last-row,
the bottom row holds it), and then the program writes nothing for QUIET ms.
The time is that of the last byte read before the quiet period, so a first
frame that a pane replaces at once (a "loading..." row filled in by a job)
counts only when the replacement is on the screen. "First paint" is the
first read after which the marker is on the screen.

Every process it starts is stopped by its pid: the quit keys, then SIGTERM,
then SIGKILL, each with a bounded wait.
"""

import argparse
import codecs
import fcntl
import glob
import os
import select
import signal
import struct
import sys
import tempfile
import termios
import time
import unicodedata

ACS = {"q": "─", "x": "│", "l": "┌", "k": "┐", "m": "└", "j": "┘", "t": "├", "u": "┤",
       "v": "┴", "w": "┬", "n": "┼", "a": "▒", "~": "·", "`": "◆", "0": "█"}


class Screen:
    """Enough of an xterm to know what ncurses (and htop, tig) put where."""

    def __init__(self, cols, rows):
        self.cols, self.rows = cols, rows
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.clear()
        self.state, self.seq = "ground", ""
        self.autowrap, self.acs = True, False
        self.saved = (0, 0)
        self.last = " "

    def clear(self):
        self.cells = [[" "] * self.cols for _ in range(self.rows)]
        self.x = self.y = 0
        self.pending = False
        self.top, self.bottom = 0, self.rows - 1

    def row(self, i):
        return "".join(self.cells[i]).rstrip()

    def text(self):
        return "\n".join(self.row(i) for i in range(self.rows))

    def feed(self, data):
        for ch in self.decoder.decode(data):
            getattr(self, "_" + self.state)(ch)

    # ------------------------------------------------------------ states

    def _ground(self, ch):
        o = ord(ch)
        if ch == "\x1b":
            self.state = "esc"
        elif ch == "\r":
            self.x, self.pending = 0, False
        elif ch in "\n\x0b\x0c":
            self.linefeed()
        elif ch == "\b":
            self.x, self.pending = max(0, self.x - 1), False
        elif ch == "\t":
            self.x = min(self.cols - 1, (self.x // 8 + 1) * 8)
        elif o >= 0x20 and o != 0x7f:
            self.put(ch)

    def _esc(self, ch):
        self.state = "ground"
        if ch == "[":
            self.state, self.seq = "csi", ""
        elif ch == "]":
            self.state = "osc"
        elif ch == "(":
            self.state = "g0"
        elif ch in ")*+":
            self.state = "gx"
        elif ch == "7":
            self.saved = (self.x, self.y)
        elif ch == "8":
            self.x, self.y = self.saved
        elif ch == "M":
            if self.y == self.top:
                self.scroll(-1)
            else:
                self.y = max(0, self.y - 1)
        elif ch == "D":
            self.linefeed()
        elif ch == "E":
            self.x = 0
            self.linefeed()
        elif ch == "c":
            self.clear()

    def _g0(self, ch):
        self.acs = ch == "0"
        self.state = "ground"

    def _gx(self, ch):
        self.state = "ground"

    def _osc(self, ch):
        if ch == "\x07":
            self.state = "ground"
        elif ch == "\x1b":
            self.state = "osc_esc"

    def _osc_esc(self, ch):
        self.state = "ground" if ch == "\\" else "osc"

    def _csi(self, ch):
        o = ord(ch)
        if 0x20 <= o <= 0x3f:
            self.seq += ch
            return
        self.state = "ground"
        if 0x40 <= o <= 0x7e:
            self.csi(self.seq, ch)

    # ------------------------------------------------------------ actions

    def linefeed(self):
        self.pending = False
        if self.y == self.bottom:
            self.scroll(1)
        elif self.y < self.rows - 1:
            self.y += 1

    def scroll(self, n, top=None):
        """Scroll the region from top (default the region's) by n lines: up if n > 0."""
        top = self.top if top is None else top
        region = self.cells[top:self.bottom + 1]
        blank = [[" "] * self.cols for _ in range(min(abs(n), len(region)))]
        region = region[len(blank):] + blank if n > 0 else blank + region[:len(region) - len(blank)]
        self.cells[top:self.bottom + 1] = region

    def put(self, ch):
        if self.acs:
            ch = ACS.get(ch, ch)
        if unicodedata.combining(ch):
            return
        wide = unicodedata.east_asian_width(ch) in "WF"
        if self.pending and self.autowrap:
            self.x = 0
            self.linefeed()
        self.pending = False
        self.cells[self.y][self.x] = ch
        if wide and self.x + 1 < self.cols:
            self.cells[self.y][self.x + 1] = ""
        self.x += 2 if wide else 1
        if self.x >= self.cols:
            self.x = self.cols - 1
            self.pending = self.autowrap
        self.last = ch

    def erase(self, y, x0, x1):
        for x in range(max(0, x0), min(self.cols, x1)):
            self.cells[y][x] = " "

    def csi(self, seq, final):
        private = seq[:1] in ("?", ">", "<", "=")
        raw = seq.lstrip("?><=").split(";")
        p = [int(v) if v.isdigit() else 0 for v in raw]
        n = max(p[0], 1) if p else 1
        if private:
            if final in "hl" and seq[1:] in ("7",):
                self.autowrap = final == "h"
            elif final in "hl" and seq[1:] in ("1049", "47", "1047"):
                self.clear()
            return
        if final not in "b":
            self.pending = False
        if final in "Hf":
            self.y = min(max(p[0] if p else 1, 1), self.rows) - 1
            self.x = min(max(p[1] if len(p) > 1 else 1, 1), self.cols) - 1
        elif final == "d":
            self.y = min(n, self.rows) - 1
        elif final in "G`":
            self.x = min(n, self.cols) - 1
        elif final == "A":
            self.y = max(0, self.y - n)
        elif final == "B":
            self.y = min(self.rows - 1, self.y + n)
        elif final == "C":
            self.x = min(self.cols - 1, self.x + n)
        elif final == "D":
            self.x = max(0, self.x - n)
        elif final == "J":
            self.erase_display(p[0] if p else 0)
        elif final == "K":
            mode = p[0] if p else 0
            self.erase(self.y, 0 if mode else self.x, self.x + 1 if mode == 1 else self.cols)
        elif final == "X":
            self.erase(self.y, self.x, self.x + n)
        elif final == "b":
            for _ in range(n):
                self.put(self.last)
        elif final == "@":
            line = self.cells[self.y]
            line[self.x:] = ([" "] * n + line[self.x:])[:self.cols - self.x]
        elif final == "P":
            line = self.cells[self.y]
            line[self.x:] = (line[self.x + n:] + [" "] * n)[:self.cols - self.x]
        elif final in "LM" and self.top <= self.y <= self.bottom:
            self.scroll(-n if final == "L" else n, top=self.y)
        elif final in "ST":
            self.scroll(n if final == "S" else -n)
        elif final == "r":
            top = (p[0] if p and p[0] else 1) - 1
            bottom = (p[1] if len(p) > 1 and p[1] else self.rows) - 1
            self.top, self.bottom = max(0, top), min(self.rows - 1, bottom)
            self.x = self.y = 0
        elif final == "s":
            self.saved = (self.x, self.y)
        elif final == "u":
            self.x, self.y = self.saved

    def erase_display(self, mode):
        if mode == 0:
            self.erase(self.y, self.x, self.cols)
            rows = range(self.y + 1, self.rows)
        elif mode == 1:
            self.erase(self.y, 0, self.x + 1)
            rows = range(0, self.y)
        else:
            rows = range(self.rows)
        for r in rows:
            self.erase(r, 0, self.cols)


def now_ms():
    return time.monotonic_ns() / 1e6


class Session:
    """One program on one pty, stopped by its pid."""

    def __init__(self, argv, cols, rows, env):
        self.screen = Screen(cols, rows)
        self.reads = []          # (ms, bytes) per read
        self.total = 0
        self.eof = False
        self.rusage = None
        self.status = None
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.t0 = now_ms()
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
                for fd in (0, 1, 2):
                    os.dup2(slave, fd)
                os.close(master)
                os.close(slave)
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        os.close(slave)
        self.pid, self.master = pid, master

    def ms(self):
        return now_ms() - self.t0

    def pump(self, timeout_ms):
        """Read what is there (waiting at most timeout_ms for the first byte)."""
        if self.eof:
            time.sleep(max(timeout_ms, 0) / 1000)
            return 0
        r, _, _ = select.select([self.master], [], [], max(timeout_ms, 0) / 1000)
        if not r:
            return 0
        try:
            data = os.read(self.master, 65536)
        except OSError:
            data = b""
        if not data:
            self.eof = True
            return 0
        self.reads.append((self.ms(), len(data)))
        self.total += len(data)
        self.screen.feed(data)
        return len(data)

    def last_read_ms(self):
        return self.reads[-1][0] if self.reads else None

    def send(self, keys):
        os.write(self.master, keys)

    def wait_screen(self, marker, last_row, timeout_ms):
        """Until marker is on the screen (on the bottom row with last_row): the read's time, or None."""
        end = self.ms() + timeout_ms
        while True:
            if self.shows(marker, last_row):
                return self.last_read_ms()
            if self.eof or self.ms() >= end:
                return None
            self.pump(min(50, end - self.ms()))

    def shows(self, marker, last_row):
        if last_row:
            return marker in self.screen.row(self.screen.rows - 1)
        return marker in self.screen.text()

    def wait_quiet(self, quiet_ms, timeout_ms):
        """Until nothing was written for quiet_ms: the last read's time, or None."""
        end = self.ms() + timeout_ms
        while self.ms() < end:
            last = self.last_read_ms() or 0
            left = last + quiet_ms - self.ms()
            if left <= 0 or self.eof:
                return self.last_read_ms()
            self.pump(left)
        return None

    def drain(self, ms):
        end = self.ms() + ms
        while self.ms() < end and not self.eof:
            self.pump(end - self.ms())

    def alive(self):
        if self.status is not None:
            return False
        pid, status, ru = os.wait4(self.pid, os.WNOHANG)
        if pid == 0:
            return True
        self.status, self.rusage = status, ru
        return False

    def wait_exit(self, timeout_ms):
        end = self.ms() + timeout_ms
        while self.alive():
            if self.ms() >= end:
                return False
            self.pump(20)
        return True

    def stop(self, quit_keys):
        """Quit keys, then SIGTERM, then SIGKILL, each with a bounded wait."""
        if self.alive() and quit_keys:
            try:
                self.send(quit_keys)
            except OSError:
                pass
        for sig, wait in ((None, 3000), (signal.SIGTERM, 3000), (signal.SIGKILL, 3000)):
            if sig is not None and self.alive():
                os.kill(self.pid, sig)
            if self.wait_exit(wait):
                break
        os.close(self.master)


# ---------------------------------------------------------------- /proc figures

def proc_field(pid, name, key):
    """The number after KEY: in /proc/PID/NAME (kB or a count), or -1."""
    try:
        with open("/proc/%d/%s" % (pid, name)) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def proc_status(pid, key):
    return proc_field(pid, "status", key)


def pss_kb(pid):
    """Proportional set size: shared library pages divided among their users."""
    return proc_field(pid, "smaps_rollup", "Pss")


def proc_io(pid, key):
    """A counter of /proc/PID/io (syscw: write calls so far), or -1."""
    return proc_field(pid, "io", key)


def cpu_ticks(pid):
    """utime + stime of the whole process, in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def threads(pid):
    return glob.glob("/proc/%d/task/*" % pid)


def cpu_ns(pid):
    """Time on a CPU, summed over the live threads (schedstat, nanoseconds)."""
    total = 0
    for t in threads(pid):
        try:
            with open(t + "/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def switches(pid):
    """Context switches (wake-ups) summed over the live threads."""
    total = 0
    for t in threads(pid):
        try:
            with open(t + "/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


# ---------------------------------------------------------------- commands

def out(name, value):
    if isinstance(value, float):
        value = "%.1f" % value
    print(name, "-" if value is None else value, flush=True)


def child_env(args):
    env = dict(os.environ)
    env.update(TERM=args.term, COLUMNS=str(args.cols), LINES=str(args.rows))
    for kv in args.env:
        k, _, v = kv.partition("=")
        env[k] = v
    return env


def keys(text):
    return codecs.decode(text, "unicode_escape").encode("utf-8")


def settled(s, absent, quiet, timeout_ms):
    """The last read before quiet ms of silence with no text of absent on the screen, or None."""
    end = s.ms() + timeout_ms
    while s.ms() < end:
        done = s.wait_quiet(quiet, end - s.ms())
        if done is None:
            return None
        text = s.screen.text()
        if not any(a in text for a in absent or ()) or s.eof:
            return done
        s.pump(50)
    return None


def first_frame(s, args):
    """(first paint, full frame) in ms from the start, or None."""
    paint = s.wait_screen(args.marker, args.last_row, args.timeout * 1000)
    if paint is None:
        return None, None
    return paint, settled(s, args.absent, args.quiet, args.timeout * 1000)


def cmd_frame(args):
    env = child_env(args)
    paints, frames = [], []
    for i in range(args.runs):
        s = Session(args.argv, args.cols, args.rows, env)
        last = i == args.runs - 1
        try:
            paint, frame = first_frame(s, args)
            if paint is None or frame is None:
                out("error", "no full frame within %d s (marker %r); screen:" % (args.timeout, args.marker))
                sys.stderr.write(s.screen.text() + "\n")
                return 1
            paints.append(paint)
            frames.append(frame)
            if last:
                report_session(s, args)
        finally:
            s.stop(keys(args.quit))
        if last and s.rusage:
            out("maxrss_kb", s.rusage.ru_maxrss)
    out("paint_ms_median", sorted(paints)[len(paints) // 2])
    out("frame_ms_median", sorted(frames)[len(frames) // 2])
    out("frame_ms_min", min(frames))
    out("frame_ms_all", ",".join("%.1f" % f for f in frames))
    return 0


def report_session(s, args):
    """On the last run: frame bytes, peak RSS, a key's frame, then the idle figures."""
    out("frame_bytes", s.total)
    out("frame_writes", proc_io(s.pid, "syscw"))
    out("hwm_kb_frame", proc_status(s.pid, "VmHWM"))
    for key in ("RssAnon", "RssFile", "RssShmem"):
        out(key.lower() + "_kb", proc_status(s.pid, key))
    out("pss_kb", pss_kb(s.pid))
    if args.screen:
        with open(args.screen, "w") as f:
            f.write(s.screen.text() + "\n")
    if args.key:
        for k in args.key[:-1]:
            s.send(keys(k))
            s.drain(200)
            settled(s, args.absent, args.quiet, args.timeout * 1000)
        s.drain(200)
        before = s.total
        sent = s.ms()
        s.send(keys(args.key[-1]))
        while s.total == before and not s.eof and s.ms() < sent + args.timeout * 1000:
            s.pump(50)
        shown = s.wait_screen(args.key_marker, False, args.timeout * 1000) if args.key_marker else sent
        done = settled(s, args.absent, args.quiet, args.timeout * 1000) if s.total > before else None
        ok = shown is not None and done is not None
        out("key_frame_ms", done - sent if ok and done > sent else None)
        out("key_frame_bytes", s.total - before)
        out("hwm_kb_key", proc_status(s.pid, "VmHWM"))
        if args.key_screen:
            with open(args.key_screen, "w") as f:
                f.write(s.screen.text() + "\n")
    if args.idle > 0:
        s.drain(args.settle * 1000)
        t0, ns0, sw0, b0 = cpu_ticks(s.pid), cpu_ns(s.pid), switches(s.pid), s.total
        s.drain(args.idle * 1000)
        t1, ns1, sw1, b1 = cpu_ticks(s.pid), cpu_ns(s.pid), switches(s.pid), s.total
        out("idle_seconds", args.idle)
        out("idle_ticks", t1 - t0)
        out("idle_cpu_ms", (ns1 - ns0) / 1e6)
        out("idle_cpu_pct", (ns1 - ns0) / 1e7 / args.idle)
        out("idle_wakeups", sw1 - sw0)
        out("idle_bytes", b1 - b0)
    out("hwm_kb", proc_status(s.pid, "VmHWM"))
    out("threads", len(threads(s.pid)))


# A child's ru_maxrss keeps the high-water mark of the process it was
# before exec, here a fork of this Python (about 12 MB): a program that
# exits too soon for /proc is measured by GNU time, whose fork is small,
# in one more run (so that time's own exec is not in the timed runs).
GNU_TIME = "/usr/bin/time"


def cmd_once(args):
    env = child_env(args)
    times, rss = [], []
    for _ in range(args.runs):
        s = Session(args.argv, args.cols, args.rows, env)
        try:
            if not s.wait_exit(args.timeout * 1000):
                out("error", "did not exit within %d s" % args.timeout)
                return 1
            s.drain(50)
            times.append(s.last_read_ms() if s.last_read_ms() is not None else s.ms())
            rss.append(s.rusage.ru_maxrss)
        finally:
            s.stop(b"")
        if args.screen:
            with open(args.screen, "w") as f:
                f.write(s.screen.text() + "\n")
    out("frame_ms_median", sorted(times)[len(times) // 2])
    out("frame_ms_min", min(times))
    if os.access(GNU_TIME, os.X_OK):
        fd, rss_file = tempfile.mkstemp(prefix="tui_pty-rss-")
        os.close(fd)
        s = Session([GNU_TIME, "-f", "%M", "-o", rss_file] + args.argv, args.cols, args.rows, env)
        try:
            s.wait_exit(args.timeout * 1000)
        finally:
            s.stop(b"")
        with open(rss_file) as f:
            words = f.read().split()
        os.unlink(rss_file)
        if words and words[-1].isdigit():
            out("maxrss_kb", int(words[-1]))
            out("maxrss_by", "gnu-time")
            return 0
    out("maxrss_kb", max(rss))
    out("maxrss_by", "ru_maxrss-with-the-harness-fork")
    return 0


def run_steps(s, steps, timeout_ms):
    for step in steps:
        what, _, arg = step.partition("=")
        if what == "wait":
            if s.wait_screen(arg, False, timeout_ms) is None:
                return "step %r: not on the screen within %d ms" % (step, timeout_ms)
        elif what == "send":
            s.send(keys(arg))
        elif what == "quiet":
            s.wait_quiet(int(arg), timeout_ms)
        elif what == "time":
            # time=KEYS|TEXT: how long until TEXT is on the screen after KEYS
            key, _, text = arg.partition("|")
            sent = s.ms()
            s.send(keys(key))
            shown = s.wait_screen(text, False, timeout_ms)
            if shown is None:
                return "step %r: not on the screen within %d ms" % (step, timeout_ms)
            out("key_latency_ms", shown - sent)
        else:
            return "unknown step %r" % step
    return None


def window_of(s, pattern, done_marker, timeout_ms):
    """Watch until done: (first, last) ms at which a file matching pattern existed."""
    first = last = None
    end = s.ms() + timeout_ms
    while s.ms() < end:
        s.pump(20)
        if glob.glob(pattern):
            first = s.ms() if first is None else first
            last = s.ms()
        elif first is not None and not done_marker:
            break
        if done_marker and s.shows(done_marker, False):
            break
        if not s.alive():
            break
    return first, last


def bytes_between(s, a, b):
    return sum(n for t, n in s.reads if a <= t <= b)


def busiest_second(s, a, b):
    best, i = 0, 0
    reads = [(t, n) for t, n in s.reads if a <= t <= b]
    for j, (t, _) in enumerate(reads):
        while reads[i][0] < t - 1000:
            i += 1
        best = max(best, sum(n for _, n in reads[i:j + 1]))
    return best


def cmd_drive(args):
    env = child_env(args)
    s = Session(args.argv, args.cols, args.rows, env)
    try:
        err = run_steps(s, args.step, args.timeout * 1000)
        if err:
            out("error", err)
            sys.stderr.write(s.screen.text() + "\n")
            return 1
        first, last = window_of(s, args.window_file, args.done, args.timeout * 1000)
        if args.done and not s.shows(args.done, False):
            out("error", "%r not on the screen within %d s" % (args.done, args.timeout))
            sys.stderr.write(s.screen.text() + "\n")
            return 1
        hwm = proc_status(s.pid, "VmHWM")
        s.drain(300)
        if args.screen:
            with open(args.screen, "w") as f:
                f.write(s.screen.text() + "\n")
        if first is None or last is None or last - first < 500:
            out("error", "the window (%s) was too short to measure" % args.window_file)
            return 1
        n = bytes_between(s, first, last)
        out("window_s", (last - first) / 1000)
        out("window_bytes", n)
        out("bytes_per_s", n * 1000 / (last - first))
        out("busiest_second_bytes", busiest_second(s, first, last))
        out("session_bytes", s.total)
        out("hwm_kb", hwm)
    finally:
        s.stop(keys(args.quit))
    if s.rusage:
        out("maxrss_kb", s.rusage.ru_maxrss)
    return 0


def main():
    # A SIGTERM unwinds like Ctrl-C, so every started program is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("frame", "once", "drive"):
        p = sub.add_parser(name)
        p.add_argument("--cols", type=int, default=80)
        p.add_argument("--rows", type=int, default=24)
        p.add_argument("--term", default="xterm-256color")
        p.add_argument("--env", action="append", default=[], help="NAME=VALUE for the child")
        p.add_argument("--timeout", type=int, default=20, help="seconds for any one wait")
        p.add_argument("--quit", default="q", help="keys that quit (Python escapes)")
        p.add_argument("--screen", help="write the screen as text to this file")
        p.add_argument("--runs", type=int, default=1)
        p.add_argument("--quiet", type=int, default=300, help="ms of silence that ends a frame")
        p.add_argument("argv", nargs="+")
    f = sub.choices["frame"]
    f.add_argument("--marker", required=True, help="text the full frame shows")
    f.add_argument("--last-row", action="store_true", help="the marker is on the bottom row")
    f.add_argument("--absent", action="append", help="the frame is not full while this text is on the "
                   "screen (repeatable)")
    f.add_argument("--idle", type=int, default=0, help="seconds of idle to measure (last run)")
    f.add_argument("--settle", type=float, default=1.0, help="seconds before idle is measured")
    f.add_argument("--key", action="append", help="keys to send after the frame, each given time to "
                   "settle; the last one is timed (last run)")
    f.add_argument("--key-marker", help="text the key's frame shows")
    f.add_argument("--key-screen", help="write the key's screen to this file")
    d = sub.choices["drive"]
    d.add_argument("--step", action="append", default=[], help="wait=TEXT, send=KEYS, quiet=MS or time=KEYS|TEXT")
    d.add_argument("--window-file", required=True, help="glob: measure while it exists")
    d.add_argument("--done", help="text on the screen when the work is done")
    args = ap.parse_args()
    return {"frame": cmd_frame, "once": cmd_once, "drive": cmd_drive}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
