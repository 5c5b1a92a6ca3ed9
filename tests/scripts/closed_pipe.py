#!/usr/bin/env python3
"""Runs a command whose standard output is a pipe nobody reads (its read end closed before the command starts,
as after `| head` has exited), with the default SIGPIPE action, and prints how it ended: "exit N" or "signal N".
Its standard error passes through. Usage: closed_pipe.py COMMAND [ARG...]"""
import os
import subprocess
import sys

read_end, write_end = os.pipe()
os.close(read_end)
done = subprocess.run(sys.argv[1:], stdout=write_end, restore_signals=True)
os.close(write_end)
print(f"signal {-done.returncode}" if done.returncode < 0 else f"exit {done.returncode}")
