"""Multi-process launching shared by every suite (imports neither torch nor tensorflow: tests/core uses it too).

The tests/ folder is on sys.path in every suite (pytest puts the folder of tests/conftest.py there), so
`from process_helpers import ...` works from tests/core, tests/torch, tests/tf and tests/fe.

Ports: a free port is picked by binding port 0 and closing the socket; the launched processes bind it later, and
under pytest-xdist (CI runs 2 test files at once) another test can take it in between. `launch` therefore starts a
job once more, on fresh ports, when its output says a bind failed.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import pytest

#: What torchrun's rendezvous, gloo and TensorFlow's gRPC server print when the port was taken meanwhile.
PORT_TAKEN = ("EADDRINUSE", "ddress already in use", "Failed to bind", "failed to bind", "Could not start gRPC server")


def free_ports(count: int = 1) -> List[int]:
    """`count` distinct ports of 127.0.0.1 that were free a moment ago."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def free_port() -> int:
    return free_ports(1)[0]


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def run_processes(commands: Sequence[Sequence[str]], envs: Sequence[Dict[str, str]], timeout: float,
                  cwd: Optional[str] = None, what: str = "the processes") -> Tuple[List[int], List[str]]:
    """Start one process per command (each in its own session, so its children go with it), wait for all of them at
    most `timeout` seconds, and kill every process group (then fail the test) if they overrun.

    Returns:
        The exit codes and the outputs (stdout and stderr together), one per command.
    """
    processes = [subprocess.Popen(list(command), env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, start_new_session=True) for command, env in zip(commands, envs)]
    outputs: List[str] = []
    try:
        for process in processes:
            outputs.append(process.communicate(timeout=timeout)[0])
    except subprocess.TimeoutExpired:
        for process in processes:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        tails = [process.communicate()[0][-3000:] for process in processes]
        pytest.fail(f"{what} did not finish in {timeout} s:\n" + "\n".join(tails))
    return [process.returncode for process in processes], outputs


def launch(start: Callable[[List[int]], Tuple[List[int], List[str]]], ports: int = 1
           ) -> Tuple[List[int], List[str]]:
    """Run `start(ports)` on fresh free ports; once more on new ports when it failed because a port was taken
    between picking it and binding it."""
    codes, outputs = start(free_ports(ports))
    if any(codes) and any(marker in output for output in outputs for marker in PORT_TAKEN):
        codes, outputs = start(free_ports(ports))
    return codes, outputs
