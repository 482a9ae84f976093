"""Run an ACP agent, passing its stdio through, and record what it says with the time.

``python -m tests.lab.acp_tee LOG -- COMMAND...``: each JSON-RPC line the agent writes is
appended to LOG as ``{"t": seconds since start, "message": ...}``, so a real agent's
session can be replayed later at its own pace (``announcer.runtime.pace_replay``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time


def main(argv: list[str]) -> int:
    log_path, rest = argv[0], argv[1:]
    if rest and rest[0] == "--":
        rest = rest[1:]
    started = time.monotonic()
    child = subprocess.Popen(rest, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None

    def forward_input() -> None:
        assert child.stdin is not None
        for line in sys.stdin.buffer:
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    threading.Thread(target=forward_input, daemon=True).start()
    with open(log_path, "a", encoding="utf-8") as log:
        for line in child.stdout:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
            try:
                message = json.loads(line)
            except ValueError:
                continue
            log.write(json.dumps({"t": round(time.monotonic() - started, 3), "message": message}))
            log.write("\n")
            log.flush()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
