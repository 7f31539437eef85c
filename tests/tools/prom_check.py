#!/usr/bin/python3
"""prom_check.py - checks what `gpuprio metrics` writes (metrics.sh runs it with Debian's
/usr/bin/python3 and python3-prometheus-client).

Every exposition is parsed twice: by prometheus_client.parser.text_string_to_metric_families
(the reference parser the issue names; it is lax, so parsing alone proves little), and by a
strict line parser here that follows the text format 0.0.4 as Prometheus' own parser does:
UTF-8 only; HELP then TYPE before a family's samples, each family's samples together, one
family per name; names and label names by their grammars; label values with exactly the
escapes \\\\, \\" and \\n; no duplicate series. The two parsers must agree on every sample's
labels and value. Then the conventions: counters are typed counter and end in _total and the
other way round, a family in seconds ends in _seconds (or _seconds_total), and gpuprio's own
contract: the families and types of docs/cli.md, the labels of each queue and process series,
the priority label equal to the priority value, exactly one decision of four set per queue.

    prom_check.py FILE [--queue PID:PRIORITY]... [--command PID:NAME]... [--user NAME]
                       [--unused PID:N]... [--min-queues N]
                       [--gemm PID:SLICED,SLICES,SMALL,CAPTURING,UNSUPPORTED,CHECK_FAILED]...
    prom_check.py --watch FILE SECONDS [the same options]

--watch reads FILE over and over for SECONDS while `gpuprio metrics --interval` replaces it,
checks every read whole (a partial file fails the strict parser: it must hold every family and
end in a newline), that the file was replaced (several versions seen), and that no counter of a
series went down from one read to the next. Prints "ok: ..." and "FAIL: ..." lines; exit 1 on
any failure.
"""
import os
import re
import sys
import time

from prometheus_client.parser import text_string_to_metric_families

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
INTEGER = re.compile(r"-?[0-9]+")
SECONDS = re.compile(r"[0-9]+\.[0-9]{9}")
MICROSECONDS = re.compile(r"[0-9]+\.[0-9]{6}")  # a gauge in seconds from microseconds

# docs/cli.md: every family, its type, and the labels of its series.
PROCESS_LABELS = {"device", "device_index", "pid", "command", "user"}
QUEUE_LABELS = PROCESS_LABELS | {"stream", "priority"}
FAMILIES = {
    "gpuprio_boards": ("gauge", set()),
    "gpuprio_queue_priority": ("gauge", QUEUE_LABELS),
    "gpuprio_queue_active": ("gauge", QUEUE_LABELS),
    "gpuprio_queue_decision": ("gauge", QUEUE_LABELS | {"decision"}),
    "gpuprio_queue_gated_on_device": ("gauge", QUEUE_LABELS),
    "gpuprio_queue_in_flight_commands": ("gauge", QUEUE_LABELS),
    "gpuprio_queue_submitted_commands_total": ("counter", QUEUE_LABELS),
    "gpuprio_queue_completed_commands_total": ("counter", QUEUE_LABELS),
    "gpuprio_queue_suspensions_total": ("counter", QUEUE_LABELS),
    "gpuprio_queue_held_seconds_total": ("counter", QUEUE_LABELS),
    "gpuprio_queue_longest_command_seconds": ("gauge", QUEUE_LABELS),
    "gpuprio_process_unused_queues": ("gauge", PROCESS_LABELS),
    "gpuprio_process_unslotted_queues": ("gauge", PROCESS_LABELS),
    "gpuprio_process_gemm_sliced_total": ("counter", PROCESS_LABELS),
    "gpuprio_process_gemm_slices_total": ("counter", PROCESS_LABELS),
    "gpuprio_process_gemm_whole_total": ("counter", PROCESS_LABELS | {"reason"}),
}
GEMM_REASONS = ["small", "capturing", "unsupported", "check_failed"]
DECISIONS = {"suspended", "throttled", "tracked", "none"}


class Bad(Exception):
    pass


def label_value(line, i):
    """The label value that starts after the opening quote at line[i]: (value, index after the
    closing quote). Only \\\\, \\" and \\n are escapes, as in Prometheus' parser."""
    out = []
    while True:
        if i >= len(line):
            raise Bad("unterminated label value")
        c = line[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\":
            nxt = line[i + 1 : i + 2]
            if nxt not in ("\\", '"', "n"):
                raise Bad("bad escape \\%s" % nxt)
            out.append("\n" if nxt == "n" else nxt)
            i += 2
            continue
        out.append(c)
        i += 1


def sample_line(line):
    """(name, labels, value text) of a sample line."""
    m = NAME.match(line)
    if not m:
        raise Bad("no metric name")
    name, i, labels = m.group(0), m.end(), {}
    if line[i : i + 1] == "{":
        i += 1
        while line[i : i + 1] != "}":
            m = LABEL_NAME.match(line, i)
            if not m or line[m.end() : m.end() + 2] != '="':
                raise Bad("bad label at column %d" % i)
            if m.group(0) in labels:
                raise Bad("label %s twice" % m.group(0))
            labels[m.group(0)], i = label_value(line, m.end() + 2)
            if line[i : i + 1] == ",":
                i += 1
            elif line[i : i + 1] != "}":
                raise Bad("expected , or } at column %d" % i)
        i += 1
    if line[i : i + 1] != " ":
        raise Bad("no space before the value")
    value = line[i + 1 :]
    if " " in value:
        raise Bad("a timestamp (the textfile collector refuses them) or trailing text")
    return name, labels, value


def strict_parse(text):
    """{family: {"type", "help", "samples": [(labels, value text)]}} in order; raises Bad."""
    if not text.endswith("\n"):
        raise Bad("does not end in a newline (cut short?)")
    families, current = {}, None
    for number, line in enumerate(text[:-1].split("\n"), 1):
        try:
            if line.startswith("# HELP ") or line.startswith("# TYPE "):
                kind, rest = line[2:6], line[7:]
                name, _, arg = rest.partition(" ")
                if not NAME.fullmatch(name):
                    raise Bad("bad family name %r" % name)
                if kind == "HELP":
                    if name in families:
                        raise Bad("family %s again (its samples must be together)" % name)
                    if re.search(r"\\[^\\n]|\\$", arg):
                        raise Bad("bad escape in HELP")
                    current = families[name] = {"help": arg, "type": None, "samples": []}
                else:
                    if current is not families.get(name) or current["type"] or current["samples"]:
                        raise Bad("TYPE of %s not right after its HELP" % name)
                    if arg not in ("counter", "gauge", "summary", "histogram", "untyped"):
                        raise Bad("bad type %r" % arg)
                    current["type"] = arg
            elif line.startswith("#") or not line:
                raise Bad("a comment or blank line gpuprio does not write")
            else:
                name, labels, value = sample_line(line)
                if current is None or families.get(name) is not current or not current["type"]:
                    raise Bad("sample of %s outside its family's block" % name)
                current["samples"].append((labels, value))
        except Bad as e:
            raise Bad("line %d: %s: %r" % (number, e, line))
    return families


class Checker:
    def __init__(self, quiet=False):
        self.fails = 0
        self.quiet = quiet  # ok lines are not printed

    def check(self, what, ok, detail=""):
        if ok:
            if not self.quiet:
                print("ok: %s" % what)
        else:
            print("FAIL: %s%s" % (what, ": " + detail if detail else ""))
            self.fails += 1
        return ok


def series_key(name, labels):
    return (name, tuple(sorted(labels.items())))


def check_exposition(c, raw, opts, quiet=False):
    """Checks one exposition (bytes). Returns {series key: value} or None. With quiet, prints
    only failures."""
    out = Checker(quiet=True) if quiet else c
    try:
        text = raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        c.check("valid UTF-8", False, str(e))
        return None
    try:
        ref = list(text_string_to_metric_families(text))
    except Exception as e:  # the reference parser raises ValueError and others
        c.check("prometheus_client parses it", False, repr(e))
        return None
    try:
        families = strict_parse(text)
    except Bad as e:
        c.check("strict parse", False, str(e))
        return None
    out.check("prometheus_client and the strict parser: %d families" % len(families), True)

    def expect(what, ok, detail=""):
        (out if ok else c).check(what, ok, detail)

    # The two parsers agree, sample by sample (prometheus_client keeps a counter's family name
    # without _total and its samples with it).
    ref_samples = sorted(
        (s.name, sorted(s.labels.items()), s.value) for f in ref for s in f.samples
    )
    strict_samples = sorted(
        (name, sorted(labels.items()), float(value))
        for name, f in families.items()
        for labels, value in f["samples"]
    )
    differ = [(r, s) for r, s in zip(ref_samples, strict_samples) if r != s]
    expect("both parsers read the same samples", ref_samples == strict_samples,
           "%d against %d samples, first difference %s" % (
               len(ref_samples), len(strict_samples), differ[:1]))

    # Conventions.
    fails = c.fails
    for f in ref:
        if f.type == "counter" and any(s.name != f.name + "_total" for s in f.samples):
            c.check("%s: counter samples end in _total" % f.name, False)
    for name, f in families.items():
        if (f["type"] == "counter") != name.endswith("_total"):
            c.check("%s: counter if and only if _total" % name, False, f["type"])
        if "seconds" in name and not re.search(r"_seconds(_total)?$", name):
            c.check("%s: _seconds as the unit suffix" % name, False)
        if not f["help"]:
            c.check("%s: HELP text" % name, False)
        series = [series_key(name, labels) for labels, _ in f["samples"]]
        if len(set(series)) != len(series):
            c.check("%s: no duplicate series" % name, False)
        for labels, value in f["samples"]:
            pattern = (SECONDS if name.endswith("_seconds_total")
                       else MICROSECONDS if name.endswith("_seconds") else INTEGER)
            if not pattern.fullmatch(value):
                c.check("%s: value %r printed exactly" % (name, value), False)
                break
    out.check("counters are typed counter and end in _total; units in _seconds",
              c.fails == fails)

    # gpuprio's families, types and labels.
    fails = c.fails
    if set(families) != set(FAMILIES):
        c.check("the families of docs/cli.md", False, "got %s" % sorted(families))
    for name, (typ, labels) in FAMILIES.items():
        f = families.get(name)
        if not f:
            continue
        if f["type"] != typ:
            c.check("%s: type %s" % (name, typ), False, f["type"])
        for got, value in f["samples"]:
            extra = set(got) - labels - {"thread"}
            if not labels <= set(got) or extra:
                c.check("%s: labels" % name, False, "got %s" % sorted(got))
                break
            if "stream" in got and not re.fullmatch(r"0x[0-9a-f]+", got["stream"]):
                c.check("%s: stream label %r" % (name, got["stream"]), False)
            if "thread" in got and not re.fullmatch(r"[1-9][0-9]*", got["thread"]):
                c.check("%s: thread label %r" % (name, got["thread"]), False)
            if "pid" in got and not re.fullmatch(r"[1-9][0-9]*", got["pid"]):
                c.check("%s: pid label %r" % (name, got["pid"]), False)
            if "reason" in got and got["reason"] not in GEMM_REASONS:
                c.check("%s: reason label %r" % (name, got["reason"]), False)
            binary = name in ("gpuprio_queue_active", "gpuprio_queue_gated_on_device")
            if binary and value not in ("0", "1"):
                c.check("%s: 0 or 1" % name, False, value)
    for labels, value in families.get("gpuprio_queue_priority", {"samples": []})["samples"]:
        if labels["priority"] != value:
            c.check("priority label equals the value", False,
                    "%s, %s" % (labels["priority"], value))
    decisions = {}
    for labels, value in families.get("gpuprio_queue_decision", {"samples": []})["samples"]:
        queue = tuple(sorted((k, v) for k, v in labels.items() if k != "decision"))
        decisions.setdefault(queue, []).append((labels["decision"], value))
    queues = {
        tuple(sorted(labels.items()))
        for labels, _ in families.get("gpuprio_queue_priority", {"samples": []})["samples"]
    }
    for queue, ds in decisions.items():
        values = sorted(v for _, v in ds)
        if sorted(d for d, _ in ds) != sorted(DECISIONS) or values != ["0", "0", "0", "1"]:
            c.check("one decision of four set per queue", False, str(ds))
    if set(decisions) != queues:
        c.check("a decision state set for every queue", False)
    out.check("families, types, labels, priority label, decisions: as docs/cli.md says",
              c.fails == fails)

    # What the caller expects to find.
    def queue_series(pid):
        return [
            labels
            for labels, _ in families.get("gpuprio_queue_priority", {"samples": []})["samples"]
            if labels["pid"] == pid
        ]

    for pid, priority in opts["queue"]:
        expect("a queue of pid %s with priority %s" % (pid, priority),
                any(l["priority"] == priority for l in queue_series(pid)),
                "got %s" % queue_series(pid))
    for pid, command in opts["command"]:
        got = {
            labels["command"]
            for f in families.values()
            for labels, _ in f["samples"]
            if labels.get("pid") == pid
        }
        expect("command of pid %s is %r exactly" % (pid, command), got == {command},
                "got %r" % got)
    if opts["user"] is not None:
        got = {labels["user"] for f in families.values() for labels, _ in f["samples"]
               if "user" in labels}
        expect("user label %s" % opts["user"], got == {opts["user"]}, "got %r" % got)
    for pid, n in opts["unused"]:
        got = [value for labels, value in
               families.get("gpuprio_process_unused_queues", {"samples": []})["samples"]
               if labels["pid"] == pid]
        expect("unused queues of pid %s: %s" % (pid, n), got == [n], "got %r" % got)
    for pid, counts in opts["gemm"]:
        def one(name, reason=None):
            return [value for labels, value in families.get(name, {"samples": []})["samples"]
                    if labels["pid"] == pid and labels.get("reason") == reason]
        got = [one("gpuprio_process_gemm_sliced_total"), one("gpuprio_process_gemm_slices_total")]
        got += [one("gpuprio_process_gemm_whole_total", r) for r in GEMM_REASONS]
        want = [[n] for n in counts.split(",")]
        expect("GEMM counts of pid %s: %s" % (pid, counts), got == want, "got %r" % got)
    if opts["min_queues"]:
        expect("at least %d queues" % opts["min_queues"], len(queues) >= opts["min_queues"],
                "got %d" % len(queues))
    return {
        series_key(name, labels): value
        for name, f in families.items()
        for labels, value in f["samples"]
    }


def watch(c, path, seconds, opts):
    # At least `seconds`, and on until 20 reads saw 3 versions: a loaded machine (sanitizers,
    # parallel tests) slows the writer, which is no failure; only a writer that does not
    # replace the file within the hard limit is.
    end = time.monotonic() + seconds
    hard_end = end + 30
    reads, versions, last, previous, went_down = 0, 0, None, None, []
    while time.monotonic() < end or (
        (reads < 20 or versions < 3) and time.monotonic() < hard_end
    ):
        if reads:
            time.sleep(0.002)  # leave the writer a core
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            raw = f.read()
        reads += 1
        # A new file each time; tmpfs reuses inode numbers, so the change time tells them apart.
        version = (st.st_ino, st.st_ctime_ns, st.st_mtime_ns)
        versions += version != last
        last = version
        values = check_exposition(c, raw, opts, quiet=True)
        if values is None:
            c.check("read %d of %s parses" % (reads, path), False)
            return
        if previous:
            for key, value in values.items():
                if key[0].endswith("_total") and key in previous:
                    if float(value) < float(previous[key]):
                        went_down.append((key, previous[key], value))
        previous = values
    c.check("%d reads, each a whole exposition" % reads, reads >= 20 and c.fails == 0)
    c.check("the file was replaced (%d versions seen)" % versions, versions >= 3)
    c.check("no counter went down between reads", not went_down, str(went_down[:3]))


def main(argv):
    opts = {"queue": [], "command": [], "user": None, "unused": [], "min_queues": 0, "gemm": []}
    args, watch_seconds, i = [], None, 0
    while i < len(argv):
        a = argv[i]
        if a in ("--queue", "--command", "--unused", "--gemm"):
            pid, _, value = argv[i + 1].partition(":")
            opts[a[2:]].append((pid, value))
            i += 2
        elif a == "--user":
            opts["user"] = argv[i + 1]
            i += 2
        elif a == "--min-queues":
            opts["min_queues"] = int(argv[i + 1])
            i += 2
        elif a == "--watch":
            watch_seconds = float(argv[i + 2])
            args.append(argv[i + 1])
            i += 3
        else:
            args.append(a)
            i += 1
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    c = Checker()
    if watch_seconds is not None:
        watch(c, args[0], watch_seconds, opts)
    else:
        with open(args[0], "rb") as f:
            check_exposition(c, f.read(), opts)
    return 1 if c.fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
