"""check.py - the one check of the python.* test scripts, as tests/expect.h is the C tests':
expect() prints each failure and counts it; finish() prints the verdict and returns the exit
status. The scripts run isolated (python3 -I), so each puts its own directory on sys.path."""

failures = 0


def expect(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL", what, flush=True)


def finish():
    print("FAILED" if failures else "OK")
    return 1 if failures else 0
