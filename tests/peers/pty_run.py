#!/usr/bin/env python3
"""Runs a command on a pseudo-terminal, as a person at a terminal would, for mcptape's
tests of what it draws only on a terminal (progress bars).

Usage: pty_run.py CMD [ARG]...

The command's stdin, stdout and stderr are the pty's one side (200 columns, 30 rows);
every byte it draws is copied to this script's stdout. Exits with the command's status.
"""

import fcntl
import os
import struct
import sys
import termios


def main() -> int:
    argv = sys.argv[1:]
    if not argv:
        sys.exit("usage: pty_run.py CMD [ARG]...")
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 200, 0, 0))
    pid = os.fork()
    if pid == 0:
        os.close(leader)
        os.setsid()
        fcntl.ioctl(follower, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(follower, fd)
        if follower > 2:
            os.close(follower)
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            os.write(2, f"pty_run.py: cannot run {argv[0]}: {e}\n".encode())
            os._exit(127)
    os.close(follower)
    out = sys.stdout.buffer
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            # EIO: every holder of the follower side closed it.
            break
        if not chunk:
            break
        out.write(chunk)
        out.flush()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
