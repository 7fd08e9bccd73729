"""podsim from Python: simulate collectives and network traffic on modeled accelerator clusters
and get the results as Python dicts and lists.

    import podsim
    pod = podsim.System("hls2-pod128", set={"network.link_speed": "200Gbps"})
    rows = pod.collective(op="all_reduce", sizes=["1MiB", "64MiB"], timing_only=True, ranks=16)
    print(rows[0]["busbw_gbps"])

Every call runs the same code as the `podsim` command, in a process of its own (a SystemC kernel
elaborates once per process), and takes the command's options as keyword arguments: a name with
underscores for the option with dashes (timing_only=True is --timing-only), True for a flag,
a list for a comma-separated value. Errors raise podsim.Error with the command's message.
"""

import json
import os
import tempfile

from . import _podsim

__all__ = ["Error", "CheckFailed", "System", "run", "collective", "net", "sweep", "info"]


class Error(Exception):
    """A podsim command refused its input or failed; the message is the command's own."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class CheckFailed(Error):
    """The run completed but its check failed (exit status 1); `result` holds what it gave."""

    def __init__(self, message, status, result):
        super().__init__(message, status)
        self.result = result


def _options(options):
    args = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, str(value)]
    return args


def run(*args):
    """Runs `podsim ARGS...` and returns its --json result as a dict."""
    out = _podsim.run([str(a) for a in args])
    status, text = out["status"], out["json"]
    if status not in (0, 1) or not text:
        lines = [l for l in out["stderr"].splitlines() if l.strip()]
        message = "\n".join(l for l in lines if "error" in l) or (lines[-1] if lines else "")
        raise Error(message or f"podsim exited with status {status}", status)
    result = json.loads(text)
    if status == 1:
        raise CheckFailed("podsim: the run completed but its check failed", status, result)
    return result


class System:
    """A modeled system: a preset name ("hls2"), a YAML file, or a dict of configuration (which
    may `extends` a preset), with `set` overrides ({"chip.nic.ports": 20})."""

    def __init__(self, system="hls2", set=None):
        self._file = None
        if isinstance(system, dict):
            # JSON is YAML: the dict becomes a system file for the command's loader.
            self._file = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
            json.dump(system, self._file)
            self._file.close()
            system = self._file.name
        self.system = str(system)
        self.overrides = dict(set or {})

    def __del__(self):
        if self._file is not None and os.path.exists(self._file.name):
            os.unlink(self._file.name)

    def override(self, key, value):
        """A copy of this system with one more --set KEY=VALUE."""
        other = System.__new__(System)
        other._file = None
        other.system = self.system
        other.overrides = dict(self.overrides, **{key: value})
        other._keep = self  # a dict system's file lives as long as its copies
        return other

    def args(self):
        out = ["--system", self.system]
        for key, value in self.overrides.items():
            out += ["--set", f"{key}={value}"]
        return out

    def info(self):
        """`podsim info`: the chip, the topology and the ceilings its wiring implies."""
        return run("info", *self.args())

    def collective(self, op="all_reduce", **options):
        """`podsim collective`: one row (a dict) per size and place."""
        return run("collective", *self.args(), "--op", op, *_options(options))["rows"]

    def net(self, **options):
        """`podsim net`: the run's figures and flows as a dict."""
        return run("net", *self.args(), *_options(options))


def info(system="hls2", set=None):
    return System(system, set).info()


def collective(system="hls2", set=None, op="all_reduce", **options):
    return System(system, set).collective(op, **options)


def net(system="hls2", set=None, **options):
    return System(system, set).net(**options)


def sweep(file, jobs=None):
    """`podsim sweep FILE`: every point's rows. A failing point raises CheckFailed whose
    result has the rows of the points that ran and the failures."""
    result = _sweep_result(file, jobs)
    return result["rows"]


def _sweep_result(file, jobs):
    args = ["sweep", str(file)] + (["--jobs", str(jobs)] if jobs else [])
    try:
        return run(*args)
    except CheckFailed as failed:
        errors = [f"point {p['point']} ({p['values']}): {p.get('error', '')}"
                  for p in failed.result["points"] if p["exit_status"] != 0]
        raise CheckFailed("podsim sweep: " + "; ".join(errors), 1, failed.result) from None
