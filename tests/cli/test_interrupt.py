"""Ctrl-C ends a command with status 130 and one line (fastir.cli.interrupt): no traceback."""

import os
import signal
import subprocess
import threading
import time

import pytest
from cli_calls import PROGRAM
from conftest import sigint_default

pytestmark = pytest.mark.one_engine


@pytest.mark.parametrize("command", ["eval", "trec_eval"])
def test_ctrl_c_ends_a_command_with_130_and_one_line(command, data_dir, tmp_path):
    """SIGINT while the command is reading its run (a pipe kept open: it is surely running):
    status 130, one line, no traceback."""
    qrels = str(data_dir / "inputs" / "qrels.test")
    fifo = tmp_path / "run"
    os.mkfifo(fifo)
    args = [qrels, str(fifo)] if command == "eval" else ["-q", qrels, str(fifo)]
    env = {**os.environ, "FASTIR_WORKER": "off"}
    proc = subprocess.Popen([*PROGRAM, command, *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=sigint_default)
    writer = []
    opener = threading.Thread(target=lambda: writer.append(open(fifo, "w")), daemon=True)
    try:
        opener.start()
        opener.join(120)  # the open returns when the command opens the run to read it
        assert writer, "the command never opened its run"
        writer[0].write("301 Q0 FBIS3-10082 1 0.5 t\n" * 1000)
        writer[0].flush()
        time.sleep(0.5)  # (it waits in read() for more)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        try:  # (a SIGINT that came just before read() began is raised once read() returns)
            writer.pop().close()
        except BrokenPipeError:
            pass
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        if writer:
            try:
                writer[0].close()
            except BrokenPipeError:
                pass
    said = [line for line in err.splitlines() if not line.startswith("fastir: compiling")]
    assert proc.returncode == 130, err
    assert said == [f"fastir {command}: interrupted (Ctrl-C)"], err
