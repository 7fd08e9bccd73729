"""The Python module against the podsim command: the same rows for a collective and a sweep,
systems from a preset, a dict or overrides, and the command's errors as exceptions."""

import json
import os
import subprocess
import tempfile

import pytest

import podsim

PODSIM = os.environ["PODSIM_BINARY"]


def cli(*args):
    """The command's --json result, run as a user runs it."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        done = subprocess.run([PODSIM, *args, "--json", out, "-q"], capture_output=True, text=True)
        assert os.path.exists(out), done.stderr
        with open(out) as f:
            return done.returncode, json.load(f)


def test_a_collective_gives_the_clis_rows():
    rows = podsim.collective("hls2", op="all_reduce", sizes=["64K", "1M"], place="out", check=1)
    status, result = cli("collective", "--system", "hls2", "--op", "all_reduce", "--sizes",
                         "64K,1M", "--place", "out", "--check", "1")
    assert status == 0
    assert rows == result["rows"]
    assert [r["size_bytes"] for r in rows] == [65536, 1 << 20]
    assert all(r["wrong"] == 0 for r in rows)


def test_the_flow_network_follows_the_packets_inside_a_box():
    kwargs = dict(op="all_reduce", sizes=["1M"], place="out", timing_only=True)
    packets = podsim.collective("hls2", **kwargs)
    flows = podsim.collective("hls2", network="flow", **kwargs)
    assert flows[0]["time_us"] == pytest.approx(packets[0]["time_us"], rel=0.02)


def test_coarse_chips_follow_the_detailed_ones():
    kwargs = dict(op="all_reduce", sizes=["8M"], place="out", timing_only=True, network="flow")
    detailed = podsim.collective("hls2", **kwargs)
    coarse = podsim.collective("hls2", chips="coarse", **kwargs)
    assert coarse[0]["time_us"] == pytest.approx(detailed[0]["time_us"], rel=0.03)


def test_a_sweep_gives_the_clis_rows(tmp_path):
    file = tmp_path / "s.yaml"
    file.write_text("command: collective --timing-only --place out\n"
                    "axes:\n  algo: [ring, mesh]\n  sizes: [64K, 1M]\n")
    rows = podsim.sweep(file, jobs=2)
    status, result = cli("sweep", str(file), "--jobs", "2")
    assert status == 0
    assert rows == result["rows"]
    assert [(r["algo"], r["sizes"]) for r in rows] == [
        ("ring", "64K"), ("ring", "1M"), ("mesh", "64K"), ("mesh", "1M")]


def test_a_failing_sweep_point_raises_with_the_other_rows(tmp_path):
    file = tmp_path / "s.yaml"
    file.write_text("command: collective --timing-only --place out\naxes:\n"
                    "  sizes: [64K, lots]\n")
    with pytest.raises(podsim.CheckFailed) as failed:
        podsim.sweep(file)
    assert "point 1 (sizes=lots)" in str(failed.value)
    assert len(failed.value.result["rows"]) == 1


def test_systems_from_a_dict_and_overrides():
    two_boxes = podsim.System({"extends": "hls2-pod128", "boxes": 2,
                               "network": {"leaf_down_ports": 16}})
    assert two_boxes.info()["topology"]["chips"] == 16
    slower = podsim.System("hls2").override("chip.nic.port_speed", "50Gbps")
    fast = podsim.collective("hls2", sizes=["16M"], timing_only=True, place="out", algo="ring")
    slow = slower.collective(sizes=["16M"], timing_only=True, place="out", algo="ring")
    assert slow[0]["time_us"] > 1.5 * fast[0]["time_us"]


def test_errors_carry_the_commands_message():
    with pytest.raises(podsim.Error) as bad:
        podsim.collective("hls2", sizes=["lots"])
    assert "--sizes lots" in str(bad.value)
    assert bad.value.status == 2
    with pytest.raises(podsim.Error) as unknown:
        podsim.info("no-such-system")
    assert "no-such-system" in str(unknown.value)


def test_net_returns_the_runs_figures():
    result = podsim.net("hls2", pattern="pair", bytes="1MiB", timing_only=True)
    assert isinstance(result, dict) and result
