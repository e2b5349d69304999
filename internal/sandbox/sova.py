# Sova's code sandbox, the part that runs inside bubblewrap. Go passes this
# file in read-only as /sova/sova.py and runs it in one of two roles:
#
#   python3 -I -S -B /sova/sova.py launch '<json>'
#       The launcher, PID 1 of the sandbox. It sets the limits (RLIMIT_CPU,
#       _AS, _NPROC, _FSIZE, _NOFILE, _CORE) on itself, starts the runner in
#       a child process, which inherits them, waits for it, stops whatever
#       the code left running, and sends back on fd 3 the regular files the
#       code left in /work (never following a symbolic link), then a status
#       line.
#
#   python3 -I -B -u /sova/sova.py run
#       The runner. It reads the code from stdin, runs it as __main__ in
#       /work, and saves matplotlib figures as chart_N.png when the code
#       calls plt.show() or leaves figures open.
#
# Only the standard library is used here; numpy, pandas and matplotlib are
# the code's business. Nothing in this file is a security boundary: the
# sandbox is (namespaces, read-only mounts, limits). Everything the launcher
# sends back is something the code could have printed itself, and Go reads
# it with bounds of its own.

import os
import sys

WORK = "/work"
RESULTS_FD = 3


def launch(cfg):
    import json
    import resource
    import signal
    import stat

    # Descriptors Sova's own parent may have left open (Go passes on those
    # it did not open itself) go now: only stdin, stdout, stderr and the
    # results pipe stay, and the runner gets no results pipe either.
    os.closerange(RESULTS_FD + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    for d in (".tmp", ".config/matplotlib"):
        os.makedirs(os.path.join(WORK, d), exist_ok=True)
    if cfg.get("font_list"):
        # matplotlib's list of the system's fonts, made once by Sova's
        # probe, saves each cell making it again.
        with open("/sova/fontlist.json", "rb") as src, open(os.path.join(WORK, ".config/matplotlib", cfg["font_list"]), "wb") as dst:
            dst.write(src.read())
    limits = [
        # SIGXCPU at the limit, SIGKILL a second later if it is ignored.
        (resource.RLIMIT_CPU, cfg["cpu"], cfg["cpu"] + 1),
        (resource.RLIMIT_AS, cfg["memory"], cfg["memory"]),
        (resource.RLIMIT_NPROC, cfg["processes"], cfg["processes"]),
        (resource.RLIMIT_FSIZE, cfg["file_bytes"], cfg["file_bytes"]),
        (resource.RLIMIT_NOFILE, 256, 256),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    # The limits hold for this process too, before it forks: it is PID 1
    # of the sandbox (bubblewrap --as-pid-1), and the code, running as the
    # same user, could take it over (ptrace) — it must have nothing more to
    # give than the code has.
    for res, soft, hard in limits:
        resource.setrlimit(res, (soft, hard))
    pid = os.fork()
    if pid == 0:
        try:
            os.close(RESULTS_FD)
            os.execv(cfg["python"], [cfg["python"], "-I", "-B", "-u", "/sova/sova.py", "run"])
        except BaseException as e:
            os.write(2, ("sandbox: cannot start Python: %s\n" % e).encode())
        finally:
            os._exit(127)
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
    # Whatever the code started and left behind stops now, before its files
    # are read. kill(-1) reaches every process of the sandbox's PID
    # namespace but this one, its init.
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass

    out = os.fdopen(RESULTS_FD, "wb")
    skipped = []
    count = 0
    total = 0
    for root, dirs, files, rootfd in os.fwalk(WORK, follow_symlinks=False):
        rel = os.path.relpath(root, WORK)
        depth = 0 if rel == "." else rel.count("/") + 1
        # Hidden entries are the sandbox's own (.config, .tmp); deeper
        # folders are not searched.
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if depth < 3 else []
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = name if rel == "." else rel + "/" + name
            try:
                path.encode("utf-8")
            except UnicodeEncodeError:
                continue
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=rootfd)
            except OSError:
                continue  # a symbolic link (ELOOP), or gone
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    continue
                if count >= cfg["max_files"] or st.st_size > cfg["file_bytes"] or total + st.st_size > cfg["work_bytes"]:
                    skipped.append(path)
                    continue
                data = b""
                while len(data) < st.st_size:
                    chunk = os.read(fd, st.st_size - len(data))
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                continue
            finally:
                os.close(fd)
            out.write(json.dumps({"file": path, "size": len(data)}).encode() + b"\n")
            out.write(data)
            count += 1
            total += len(data)
    st = {"cpu": usage.ru_utime + usage.ru_stime, "maxrss_kb": usage.ru_maxrss, "skipped": skipped}
    if os.WIFSIGNALED(status):
        st["signal"] = os.WTERMSIG(status)
    else:
        st["exit"] = os.WEXITSTATUS(status)
    out.write(json.dumps({"status": st}).encode() + b"\n")
    out.close()


def run():
    import linecache
    import traceback
    import types

    code = sys.stdin.buffer.read()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(0, closefd=False)
    os.chdir(WORK)
    sys.path.insert(0, WORK)
    sys.argv = ["cell.py"]
    sys.meta_path.insert(0, _PyplotFinder())

    # Tracebacks show the lines of the code.
    linecache.cache["cell.py"] = (len(code), None, code.decode("utf-8", "replace").splitlines(True), "cell.py")

    main = types.ModuleType("__main__")
    main.__file__ = os.path.join(WORK, "cell.py")
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    status = 0
    try:
        exec(compile(code, "cell.py", "exec"), main.__dict__)
    except SystemExit as e:
        if e.code is None:
            status = 0
        elif isinstance(e.code, int):
            status = e.code
        else:
            print(e.code, file=sys.stderr)
            status = 1
    except BaseException as e:
        # The runner's own frame is left out of the traceback.
        tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
        traceback.print_exception(type(e), e, tb)
        status = 1
    finally:
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None:
            try:
                _save_figures(plt)
            except Exception as e:
                print("sandbox: could not save the open figures: %s" % e, file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    return status


class _PyplotFinder:
    """Patches matplotlib.pyplot when the code imports it: show() saves the
    open figures as PNG files in the work folder."""

    def find_spec(self, name, path=None, target=None):
        if name != "matplotlib.pyplot":
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


def _patch(plt):
    import functools

    from matplotlib.figure import Figure

    savefig = Figure.savefig

    @functools.wraps(savefig)
    def tracked_savefig(self, *args, **kwargs):
        self._sova_saved = True
        return savefig(self, *args, **kwargs)

    Figure.savefig = tracked_savefig

    @functools.wraps(plt.show)
    def show(*args, **kwargs):
        _save_figures(plt)

    plt.show = show


_charts = [0]


def _save_figures(plt):
    """Saves every open figure not saved by the code yet as chart_N.png,
    then closes it, as a notebook shows a cell's figures."""
    for num in plt.get_fignums():
        fig = plt.figure(num)
        if not getattr(fig, "_sova_saved", False):
            while True:
                _charts[0] += 1
                name = "chart_%d.png" % _charts[0]
                if not os.path.lexists(os.path.join(WORK, name)):
                    break
            fig.savefig(os.path.join(WORK, name), format="png", bbox_inches="tight")
        plt.close(fig)


if __name__ == "__main__":
    if sys.argv[1:2] == ["launch"]:
        import json

        launch(json.loads(sys.argv[2]))
    elif sys.argv[1:2] == ["run"]:
        sys.exit(run())
    else:
        sys.exit("usage: sova.py launch CONFIG | run")
