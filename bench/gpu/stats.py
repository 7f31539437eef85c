"""stats.py - the one percentile definition the GPU benchmark's scripts share."""


def percentile(sorted_values, pct):
    """The nearest-rank percentile of an ascending list (nan when it is empty)."""
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, int(round(pct / 100.0 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]
