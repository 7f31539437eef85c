"""findings.py - the tally of a checker script (tests/kubernetes/check_manifests.py,
tests/podman/cdi_check.py): each finding passes or prints one "FAIL: " line, and the summary
says "N passed, N failed" and gives the exit status."""

passed = 0
failed = 0


def finding(ok, what):
    """Counts one check; prints what failed."""
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what)


def summary():
    """Prints the tally; the exit status, 1 on any failure."""
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
