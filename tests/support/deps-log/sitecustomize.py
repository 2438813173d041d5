"""Records which modules a peer script imported, for scripts/check-deps.

meson's test environment puts this folder first on PYTHONPATH, so every
Python the tests start imports this file (Python imports `sitecustomize`
at start-up). When STOWAGE_DEPS_LOG names a folder, the process writes the
top-level modules it imported, with their files, to a file of its own there
at exit. scripts/check-deps then asks dpkg which package owns each file and
fails if install-deps does not install it: a module that only a by-hand
install provided (zarr's N5 store needs fsspec, which nothing listed) fails
the check on the machine that has it, not only on a fresh one.

This shadows Debian's own sitecustomize, which only installs apport's crash
hook (not part of a Debian 12 base system); that hook is loaded here too.
"""
import atexit
import os
import sys

# Imported by start-up itself (the standard library's site machinery and any
# .pth hooks of installed packages), not by the script: left out.
_at_start = {name.partition(".")[0] for name in sys.modules}

try:
    import apport_python_hook
except ImportError:
    pass
else:
    apport_python_hook.install()


def _write_log(folder):
    files = {}
    for name in list(sys.modules):
        top = name.partition(".")[0]
        path = getattr(sys.modules.get(top), "__file__", None)
        if path and top not in _at_start:
            files[top] = os.path.realpath(path)
    try:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"python-{os.getpid()}.txt"), "a") as out:
            out.write("".join(f"{top}\t{path}\n" for top, path in sorted(files.items())))
    except OSError:
        pass  # the log is a check's input; never break the peer for it


_folder = os.environ.get("STOWAGE_DEPS_LOG")
if _folder:
    atexit.register(_write_log, _folder)
