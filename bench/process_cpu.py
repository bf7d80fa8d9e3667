"""A process's CPU time, shared by the benches that print each process's
share (bench/cluster, bench/tunnel)."""
import os

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """A process's CPU seconds: the sum of its threads' run time in
    nanoseconds (/proc/<pid>/task/*/schedstat), else its clock ticks
    (/proc/<pid>/stat); 0 once it is gone."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        return 0.0
    if total > 0:
        return total / 1e9
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, ValueError, IndexError):
        return 0.0
