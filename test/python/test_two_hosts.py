"""`mpirun -n 4` across two hosts: two network namespaces that this test
makes (each with its own hostname, `lo` up, joined by a veth pair and
nothing else), OpenMPI started in the first and reaching the second
through a `plm_rsh_agent` that runs `ip netns exec`, TCP only, on the veth
subnet only. The ranks compute the simulator's bits (a data x tensor
parallel gradient, and a pipeline whose stages are on different hosts),
at least the ledger's bytes cross the veth, and a rank killed on one host
ends the job on both.
Skipped, with the reason, where namespaces cannot be made (not root, no
`ip`, a container without CAP_NET_ADMIN)."""

import json
import re
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import kina

TIMEOUT = 180  # seconds; a run takes a few
# Ranks 0, 1 (dp = 0) on the first host, 2, 3 (dp = 1) on the second: the
# dp all-reduce's two members are always on different hosts, the tp
# partners on one.
PROGRAM = """
@mesh([2, 2], axes=[dp, tp])
fn gradient(x: Tensor[F32, [4096, 256], @sharded(axis=0, over=dp)], w: Tensor[F32, [256, 512], @sharded(axis=1, over=tp)]) -> Tensor[F32, [256, 512], @sharded(axis=1, over=tp)] {
  h = x @ w
  return transpose(x, [1, 0]) @ h
}
"""

pytestmark = pytest.mark.skipif(
    os.environ.get("KINA_SKIP_MPI") == "1" or not shutil.which("mpirun"),
    reason="OpenMPI's mpirun (KINA_SKIP_MPI=1: the sanitizer build)")


def ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True,
                          check=check, timeout=30)


AGENT = """#!/bin/sh
# OpenMPI's plm_rsh_agent: "agent HOST COMMAND..." runs COMMAND on HOST,
# here in HOST's network namespace under its own hostname.
host=$1; shift
case "$host" in
{cases}
  *) echo "agent: unknown host $host" >&2; exit 1 ;;
esac
exec ip netns exec "$ns" unshare --uts sh -c \\
  'hostname "$1"; shift; exec sh -c "$*"' sh "$name" "$@"
"""


class TwoHosts:
    """Two namespaces joined by a veth pair, torn down by `close`."""

    def __init__(self, directory):
        tag = "%d" % (os.getpid() % 100000)
        self.subnet = "10.231.%d" % (os.getpid() % 250)
        self.hosts = [("kina%sa" % tag, "kv%sa" % tag, self.subnet + ".1",
                       "kina-host-a"),
                      ("kina%sb" % tag, "kv%sb" % tag, self.subnet + ".2",
                       "kina-host-b")]
        self.made = []
        self.directory = directory

    def make(self):
        """The namespaces, the veth pair, the agent and the hostfile."""
        (_, a_dev, _, _), (_, b_dev, _, _) = self.hosts
        directory = self.directory
        for ns, _, _, _ in self.hosts:
            ip("netns", "add", ns)
            self.made.append(ns)
        ip("link", "add", a_dev, "type", "veth", "peer", "name", b_dev)
        for ns, dev, address, _ in self.hosts:
            ip("link", "set", dev, "netns", ns)
            ip("-n", ns, "addr", "add", address + "/24", "dev", dev)
            ip("-n", ns, "link", "set", dev, "up")
            ip("-n", ns, "link", "set", "lo", "up")
        cases = "\n".join('  %s) ns=%s name=%s ;;' % (address, ns, name)
                          for ns, _, address, name in self.hosts)
        self.agent = directory / "agent.sh"
        self.agent.write_text(AGENT.format(cases=cases))
        self.agent.chmod(0o755)
        self.hostfile = directory / "hosts"
        self.hostfile.write_text("".join("%s slots=2\n" % address
                                         for _, _, address, _ in self.hosts))

    def veth_bytes(self):
        """Bytes through the first host's end of the veth, both ways."""
        ns, dev, _, _ = self.hosts[0]
        stats = json.loads(ip("-n", ns, "-j", "-s", "link", "show",
                              dev).stdout)[0]["stats64"]
        return stats["rx"]["bytes"] + stats["tx"]["bytes"]

    def pids(self, host):
        listed = ip("netns", "pids", self.hosts[host][0], check=False)
        return [int(p) for p in listed.stdout.split()]

    def mpirun(self, *command, ranks=4, cache=None):
        """Starts `mpirun -n ranks command...` on the first host (the
        ranks sharing compile cache `cache`, if given)."""
        ns, _, _, name = self.hosts[0]
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   PYTHONPATH=os.pathsep.join(sys.path),
                   KINA_CACHE_DIR=str(cache or ""))
        launch = ["mpirun", "-n", str(ranks), "--hostfile",
                  str(self.hostfile), "-x", "PYTHONPATH",
                  "-x", "KINA_CACHE_DIR",
                  "--mca", "plm_rsh_agent", str(self.agent),
                  "--mca", "btl", "tcp,self",
                  "--mca", "btl_tcp_if_include", self.subnet + ".0/24",
                  "--mca", "oob_tcp_if_include", self.subnet + ".0/24",
                  *command]
        return subprocess.Popen(
            ["ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c",
             'hostname "$1"; shift; exec "$@"', "sh", name, *launch],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)

    def close(self):
        for host in range(len(self.made)):
            for pid in self.pids(host):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for ns in self.made:  # the veth goes with its namespace
            ip("netns", "del", ns, check=False)
        # A pair made but never moved into them stays here: delete it too.
        if ip("link", "show", self.hosts[0][1], check=False).returncode == 0:
            ip("link", "del", self.hosts[0][1], check=False)


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    if os.geteuid() != 0 or not shutil.which("ip") or \
            not shutil.which("unshare"):
        pytest.skip("making network namespaces needs root, ip and unshare")
    probe = "kinaprobe%d" % os.getpid()
    made = ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        pytest.skip("cannot make a network namespace here: %s" %
                    made.stderr.strip())
    ip("netns", "del", probe, check=False)
    two = TwoHosts(tmp_path_factory.mktemp("hosts"))
    try:
        two.make()
        # Each host's own hostname needs a UTS namespace too.
        subprocess.run(["ip", "netns", "exec", two.hosts[1][0], "unshare",
                        "--uts", "hostname", "kina-probe"], check=True,
                       capture_output=True, text=True, timeout=30)
    except subprocess.CalledProcessError as error:
        two.close()
        pytest.skip("cannot make two hosts here: `%s` failed: %s" % (
            " ".join(error.cmd), (error.stderr or "").strip()))
    yield two
    two.close()
    assert not any(h[0] in ip("netns", "list").stdout for h in two.hosts)


@pytest.fixture(scope="module")
def gradient(tmp_path_factory):
    directory = tmp_path_factory.mktemp("gradient")
    module = kina.compile(PROGRAM, "gradient.kina")
    module.save(directory / "gradient.so")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4096, 256)).astype(np.float32)
    w = rng.standard_normal((256, 512)).astype(np.float32)
    np.savez(directory / "in.npz", x=x, w=w)
    return module, directory, (x, w)


def test_the_ranks_run_two_on_each_host(hosts):
    job = hosts.mpirun("hostname")
    stdout, stderr = job.communicate(timeout=TIMEOUT)
    assert job.returncode == 0, stderr
    assert sorted(stdout.split()) == ["kina-host-a"] * 2 + ["kina-host-b"] * 2


def test_ranks_on_two_hosts_compute_the_simulators_bits(hosts, gradient):
    module, directory, args = gradient
    out = directory / "out.npz"
    before = hosts.veth_bytes()
    job = hosts.mpirun(sys.executable, "-m", "kina.mpi",
                       str(directory / "gradient.so"), "gradient",
                       str(directory / "in.npz"), str(out))
    _, stderr = job.communicate(timeout=TIMEOUT)
    assert job.returncode == 0, stderr
    crossed = hosts.veth_bytes() - before
    simulated = module.simulate("gradient", *args, report=False)
    with np.load(out) as result:
        np.testing.assert_array_equal(result["result"], simulated.value)
        for rank in range(4):
            np.testing.assert_array_equal(result["local_%d" % rank],
                                          simulated.per_device[rank])
        assert int(result["bytes_moved"]) == simulated.bytes_moved
    # The ledger's one collective: the gradient's all-reduce over dp (an
    # all-reduce of 2 sends its block of 256 x 256 floats), whose every
    # byte goes to the dp partner on the other host: all of them cross the
    # veth (beside MPI's own traffic).
    ledger = module.cost("gradient").bytes_sent
    moved = [t for t in module.communication["gradient"] if t.bytes]
    assert [(t.collective, t.over) for t in moved] == [("all_reduce", "dp")]
    assert ledger == 256 * 256 * 4
    assert crossed >= 4 * ledger, (crossed, ledger)


def test_a_pipeline_across_two_hosts_computes_the_simulators_bits(
        hosts, tmp_path):
    # Pipeline x tensor parallel: stage 0's group (ranks 0, 1) on the first
    # host, stage 1's (ranks 2, 3) on the second, so that every activation
    # and cotangent crosses the veth and the tp collectives stay on a host.
    from kina import pipelining
    from test_pipeline_tensor_parallel import (MICROBATCHES, ROWS, SOURCE,
                                               STAGES, TENSOR, WIDTH, data)
    program = tmp_path / "mlp_tp.kina"
    program.write_text(SOURCE + "fn step = pipeline(%s, batch=[x, y])\n"
                       % ", ".join(STAGES))
    pipe = pipelining.Pipeline(program.read_text(), "step", schedule="1f1b",
                               microbatches=MICROBATCHES,
                               filename=str(program),
                               cache_dir=str(tmp_path / "cache"))
    weights, batch = data(5)
    simulated = pipe.step(weights, batch)
    np.savez(tmp_path / "in.npz", **weights, **batch)
    before = hosts.veth_bytes()
    job = hosts.mpirun(sys.executable, "-m", "kina.mpi_pipeline",
                       str(program), str(tmp_path / "in.npz"),
                       str(tmp_path / "out.npz"), "--pipeline", "step",
                       "--microbatches", str(MICROBATCHES),
                       cache=tmp_path / "cache")
    _, stderr = job.communicate(timeout=TIMEOUT)
    assert job.returncode == 0, stderr
    crossed = hosts.veth_bytes() - before
    with np.load(tmp_path / "out.npz") as out:
        assert float(out["loss"]) == simulated.loss
        for name, value in simulated.gradients.items():
            np.testing.assert_array_equal(out["grad_" + name], value,
                                          err_msg=name)
        assert int(out["bytes_moved"]) == simulated.bytes_moved
    # Each microbatch's activation and cotangent, a block per device.
    between_hosts = MICROBATCHES * 2 * TENSOR * ROWS * WIDTH * 4
    assert crossed >= between_hosts, (crossed, between_hosts)


def test_a_rank_killed_on_one_host_ends_the_job_on_both(hosts, gradient):
    module, directory, _ = gradient
    job = hosts.mpirun(sys.executable, "-m", "kina.mpi",
                       str(directory / "gradient.so"), "gradient",
                       str(directory / "in.npz"), str(directory / "k.npz"),
                       "--repeat", "100000")
    try:
        # The second host's ranks: the Python processes in its namespace.
        deadline = time.monotonic() + TIMEOUT
        ranks = []
        while len(ranks) < 2 and time.monotonic() < deadline:
            ranks = [pid for pid in hosts.pids(1) if "kina.mpi" in
                     pathlib.Path("/proc/%d/cmdline" % pid).read_bytes()
                     .decode(errors="replace")]
            time.sleep(0.5)
        assert len(ranks) == 2, "the second host's ranks did not start"
        time.sleep(2)  # into the repeated runs
        os.kill(ranks[0], signal.SIGKILL)
        _, stderr = job.communicate(timeout=TIMEOUT)
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode != 0
    second = hosts.hosts[1][2]
    assert re.search(r"rank [23] with PID %d on node %s exited on signal 9"
                     % (ranks[0], re.escape(second)), stderr), stderr
    # Nothing of the job is left on either host.
    deadline = time.monotonic() + 30
    while (hosts.pids(0) or hosts.pids(1)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert hosts.pids(0) == [] and hosts.pids(1) == []
