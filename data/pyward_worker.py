"""pyward scratchpad worker: one persistent namespace per session.

Started by the pyward host as `python -u pyward_worker.py IN_FD OUT_FD`.
Requests arrive as JSON lines on IN_FD and replies leave on OUT_FD, so the
user's print() and os.write(1, ...) (fd 1 and 2 are pipes the host reads)
can never corrupt the protocol. State lives only in this process.

A fresh worker's start is part of every cold start, so this file imports
only builtin modules up front (_json, _signal); asyncio, traceback and the
AST classes are imported when a cell first needs them.
"""
import _json
import _signal
import _thread
import os
import sys

CO_COROUTINE = 0x80
PyCF_ONLY_AST = 0x400
PyCF_ALLOW_TOP_LEVEL_AWAIT = 0x2000


class _JSONContext:
    """What the C scanner of the json package reads from its decoder."""
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = None
    memo = {}


_scan = _json.make_scanner(_JSONContext())


def _clean(text):
    # lone surrogates (from reprs of odd strings) are not valid JSON text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _encode(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _json.encode_basestring_ascii(_clean(value))
    return "{" + ", ".join(_json.encode_basestring_ascii(k) + ": " + _encode(v)
                           for k, v in value.items()) + "}"


class _AsyncioWatch:
    """First on sys.meta_path while asyncio is not loaded: when a cell
    imports it (a library the cell calls may, without the cell's text
    saying so), the rest of that cell runs with the session's loop as the
    running loop, so get_running_loop() and create_task() work there as in
    any later cell. Finding the module is left to the other finders."""

    def __init__(self, worker):
        self.worker = worker

    def find_spec(self, name, path=None, target=None):
        if name != "asyncio" or not self.worker.in_cell:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _ThenEnterLoop(spec.loader, self.worker)
                return spec
        return None


class _ThenEnterLoop:
    """asyncio's own loader, and the session's loop once it has run."""

    def __init__(self, loader, worker):
        self.loader = loader
        self.worker = worker

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        # the module keeps its real loader, as if we had not been there
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        self.worker.enter_loop_mid_cell(module)


class Worker:
    def __init__(self, fd_in, fd_out):
        self.fd_in = fd_in
        self.fd_out = fd_out
        self.pending = b""
        self.ns = {"__name__": "__main__", "__builtins__": __builtins__}
        self.sources = {}  # cell name -> source, for tracebacks
        self.count = 0
        self.last_id = 0  # the newest request id: the host's count of cells
        self.loop = None
        self.cell_task = None
        self.in_cell = False
        self.main_thread = _thread.get_ident()
        self.lent_loop = None  # set while a plain cell holds the loop as running
        self.stray_sigint = False  # a SIGINT came while no cell ran
        self.watch = _AsyncioWatch(self)
        if "asyncio" not in sys.modules:
            sys.meta_path.insert(0, self.watch)

    # ---- protocol
    def send(self, obj):
        data = (_encode(obj) + "\n").encode()
        while data:
            n = os.write(self.fd_out, data)
            data = data[n:]

    def take_line(self):
        nl = self.pending.find(b"\n")
        if nl < 0:
            return None
        line, self.pending = self.pending[:nl], self.pending[nl + 1:]
        return _scan(line.decode("utf-8"), 0)[0]

    def read_blocking(self):
        while True:
            msg = self.take_line()
            if msg is not None:
                return msg
            chunk = os.read(self.fd_in, 65536)
            if not chunk:
                return None
            self.pending += chunk

    def read_on_loop(self):
        """Wait for the next request while the event loop runs, so that
        background tasks keep making progress between cells."""
        msg = self.take_line()
        if msg is not None:
            return msg
        loop = self.loop
        fut = loop.create_future()

        def readable():
            chunk = os.read(self.fd_in, 65536)
            if not chunk:
                loop.remove_reader(self.fd_in)
                if not fut.done():
                    fut.set_result(None)
                return
            self.pending += chunk
            got = self.take_line()
            if got is not None:
                loop.remove_reader(self.fd_in)
                if not fut.done():
                    fut.set_result(got)

        loop.add_reader(self.fd_in, readable)
        return loop.run_until_complete(fut)

    def next_request(self):
        # Once user code imported asyncio, wait on its loop; until then a
        # plain blocking read is enough (and needs no asyncio import).
        if self.loop is None and "asyncio" in sys.modules:
            self.make_loop()
        if self.loop is None:
            return self.read_blocking()
        return self.read_on_loop()

    def make_loop(self):
        if self.watch in sys.meta_path:  # the worker's own import: no watching
            sys.meta_path.remove(self.watch)
        import asyncio
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)

    def enter_loop_mid_cell(self, asyncio):
        """A plain cell just imported asyncio: from here on the session's
        loop is the running one, as in a cell that runs on it (tasks it
        makes run after the cell, while the worker waits on the loop)."""
        if (not self.in_cell or self.loop is not None or self.cell_task is not None
                or _thread.get_ident() != self.main_thread):
            return
        self.make_loop()
        asyncio.events._set_running_loop(self.loop)
        self.lent_loop = asyncio.events

    # ---- interrupts
    def on_sigint(self, signum, frame):
        if not self.in_cell:
            # Between cells: late for the cell just answered, or early for
            # the next one, not read yet; the next cell's start tells which.
            self.stray_sigint = True
            return
        task = self.cell_task
        if task is not None:
            import asyncio  # imported already: the cell runs on the loop
            if asyncio.current_task(self.loop) is task:
                raise KeyboardInterrupt  # the cell's own code runs: stop it here
            # the loop waits (an await): cancel, and wake its selector
            self.loop.call_soon_threadsafe(task.cancel)
            return
        raise KeyboardInterrupt

    # ---- cells
    @staticmethod
    def compile_cell(src, name):
        """(body, tail): the statements, and the last expression whose value
        is shown; either may be None."""
        flags = PyCF_ALLOW_TOP_LEVEL_AWAIT
        try:  # the common short cell, one expression: one compile, no AST
            return None, compile(src, name, "eval", flags)
        except SyntaxError:
            pass
        import _ast
        tree = compile(src, name, "exec", PyCF_ONLY_AST | flags)
        last = None
        if tree.body and isinstance(tree.body[-1], _ast.Expr):
            last = _ast.Expression(tree.body.pop().value)
        body = compile(tree, name, "exec", flags)
        tail = compile(last, name, "eval", flags) if last is not None else None
        return body, tail

    def needs_loop(self, src, body, tail):
        """A cell runs inside the session's running event loop when it
        awaits, when asyncio is loaded, or when it may load it and use it
        at once; other cells need no asyncio import (a fresh worker's
        first cells stay fast)."""
        if self.loop is not None or "asyncio" in sys.modules or "async" in src:
            return True
        return any(c is not None and c.co_flags & CO_COROUTINE for c in (body, tail))

    async def cell_coroutine(self, body, tail):
        # one task for the whole cell: statements and the last expression
        # share the running loop, awaited or not
        if body is not None:
            done = eval(body, self.ns)
            if body.co_flags & CO_COROUTINE:
                await done
        if tail is None:
            return None
        value = eval(tail, self.ns)
        if tail.co_flags & CO_COROUTINE:
            value = await value
        return value

    def evaluate(self, src, body, tail):
        if not self.needs_loop(src, body, tail):
            try:
                if body is not None:
                    eval(body, self.ns)
                return eval(tail, self.ns) if tail is not None else None
            finally:
                if self.lent_loop is not None:  # the loop runs for real again between cells
                    self.lent_loop._set_running_loop(None)
                    self.lent_loop = None
        if self.loop is None:
            self.make_loop()
        self.cell_task = self.loop.create_task(self.cell_coroutine(body, tail))
        try:
            return self.loop.run_until_complete(self.cell_task)
        except BaseException as exc:
            task = self.cell_task
            if task.cancelled():
                raise KeyboardInterrupt from None
            if task.done():
                task.exception()  # taken: no "never retrieved" warning later
            raise exc
        finally:
            self.cell_task = None

    def interrupt_waits_for(self, req_id):
        """After a SIGINT between cells: was it meant for this cell? The
        sender writes {"interrupt": ID} before its SIGINT, so that line is
        read or in the pipe by now; a late interrupt named an earlier cell
        (its line came before this cell's)."""
        self.stray_sigint = False
        os.set_blocking(self.fd_in, False)
        try:
            while True:
                try:
                    chunk = os.read(self.fd_in, 65536)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                self.pending += chunk
        finally:
            os.set_blocking(self.fd_in, True)
        for line in self.pending.split(b"\n")[:-1]:
            try:
                msg = _scan(line.decode("utf-8"), 0)[0]
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(msg, dict) and msg.get("interrupt") == req_id:
                return True
        return False

    def run(self, req):
        reply = {"id": req.get("id"), "status": "ok", "value": None, "traceback": None}
        try:
            self.in_cell = True  # from here a SIGINT interrupts this cell
            if self.stray_sigint and self.interrupt_waits_for(req.get("id")):
                reply.update(status="interrupted", traceback="KeyboardInterrupt\n", started=False)
                return reply  # nothing ran, nothing counted
            self.count += 1
            if isinstance(req.get("id"), int):
                self.last_id = max(self.last_id, req["id"])
            name = "<cell %d>" % self.count
            src = req.get("code", "")
            self.sources[name] = src
            body, tail = self.compile_cell(src, name)
            value = self.evaluate(src, body, tail)
            if value is not None:
                self.ns["_"] = value
                reply["value"] = self.safe_repr(value)
        except KeyboardInterrupt as exc:
            reply["status"] = "interrupted"
            reply["traceback"] = self.format_exc(exc)
        except BaseException as exc:  # SystemExit too: the scratchpad stays
            reply["status"] = "error"
            reply["traceback"] = self.format_exc(exc)
        finally:
            self.in_cell = False
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        return reply

    @staticmethod
    def safe_repr(value):
        try:
            return repr(value)
        except BaseException as exc:
            return "<repr failed: %s: %s>" % (type(exc).__name__, exc)

    def format_exc(self, exc):
        import linecache
        import traceback
        for name, src in self.sources.items():
            linecache.cache[name] = (len(src), None, src.splitlines(True), name)
        if isinstance(exc, SyntaxError) and exc.filename in self.sources:
            return "".join(traceback.format_exception_only(type(exc), exc))
        tb = exc.__traceback__
        # start at the user's cell: the worker's and asyncio's frames before
        # it say nothing to the user; nor does the SIGINT handler after it
        first = tb
        while first is not None and not first.tb_frame.f_code.co_filename.startswith("<cell "):
            first = first.tb_next
        te = traceback.TracebackException(type(exc), exc, first or tb)
        te.stack = traceback.StackSummary.from_list(
            [f for f in te.stack if f.filename != __file__] or list(te.stack))
        return "".join(te.format())

    def hello(self):
        version, _, build = sys.version.partition(" ")
        self.send({"hello": {
            "version": version,
            "implementation": sys.implementation.name.replace("cpython", "CPython"),
            "build": build.replace("\n", " "),
            "executable": sys.executable,
            "prefix": sys.prefix,
            "project_dir": os.getcwd(),
            "pid": os.getpid(),
        }})

    def serve(self):
        _signal.signal(_signal.SIGINT, self.on_sigint)
        self.hello()
        while True:
            try:
                req = self.next_request()
            except KeyboardInterrupt:
                continue
            if req is None:
                return
            if req.get("sync"):  # a client that held our pipes went away
                self.send({"sync": self.last_id})
                continue
            if "interrupt" in req:  # its cell was answered already (see run)
                continue
            self.send(self.run(req))


def main():
    fd_in, fd_out = int(sys.argv[1]), int(sys.argv[2])
    for fd in (fd_in, fd_out):
        os.set_inheritable(fd, False)  # user subprocesses must not hold them
    sys.argv = [""]
    sys.path[0] = ""  # like the interactive interpreter: the project dir
    Worker(fd_in, fd_out).serve()


if __name__ == "__main__":
    main()
