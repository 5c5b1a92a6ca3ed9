"""experiments/comm/run.sh's rounds: `misses ROUND.json...` prints each case (backend
partitioner sync model W) with a phase whose median fraction of its raw
collective is below 0.90; `table FILE...` prints the record's tables from the
rounds (roundN.json) and the cases' retest rounds (retestN.json); `bucket
ROUND.json...` prints experiments/bucket_sync/run.sh's table: each case's bucket /
per-param sync ratio, the median over the rounds with a 95 % distribution-free
interval, whether the bucket is slower, faster or tied, and the same ratio of
the raw replays; then each case's ratios round by round, in the order of the
files given. Each file is one round's `zero_analyze --format json`; its runs
are named <backend>_<partitioner>_<sync>."""
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

TARGET = 0.9
med = statistics.median


def phases_of(paths):
    """(backend, partitioner, sync, model, W, phase) -> that phase's comm_roofline entry, one a round."""
    phases = defaultdict(list)
    for path in paths:
        for r in json.load(open(path))["runs"]:
            backend, partitioner, sync = r["run"].split("_")
            for c in r["cases"]:
                for x in c["comm_roofline"]:
                    coll = next((t["collective"] for t in c["traffic"] if t["phase"] == x["phase"]), "-")
                    key = (backend, partitioner, sync, c["model"], c["world_size"], x["phase"])
                    phases[key].append(dict(x, collective=coll))
    return phases


def fraction_of(xs):
    return med(x["fraction"] for x in xs)


def below_target(phases):
    """The phases, in order, whose median fraction is below the target: (key, that fraction)."""
    return [(key, f) for key, f in ((key, fraction_of(xs)) for key, xs in phases.items()) if f < TARGET]


def missed_cases(phases):
    """The cases, in order, with a phase below the target."""
    return list(dict.fromkeys(key[:5] for key, _ in below_target(phases)))


def print_phase_table(phases, first_rounds):
    print("| backend | plan | sync | model | W | phase | collective | phase (s) | raw (s) | fraction | rounds | "
          "rounds' range | fastest | raw busbw GB/s |")
    print("|---|---|---|---|---:|---|---|---:|---:|---:|---:|---|---:|---:|")
    for key, xs in phases.items():
        backend, partitioner, sync, model, w, phase = key
        fractions = [x["fraction"] for x in xs]
        bus = [x["raw_busbw_bytes_per_s"] for x in xs if x["raw_busbw_bytes_per_s"]]
        rounds = f"{len(xs)}" if len(xs) == first_rounds else f"**{len(xs)}**"
        print(f"| {backend} | {partitioner} | {sync} | {model} | {w} | {phase} | {xs[0]['collective']} | "
              f"{med(x['phase_median_seconds'] for x in xs):.4f} | {med(x['raw_median_seconds'] for x in xs):.4f} | "
              f"{fraction_of(xs):.2f} | {rounds} | {min(fractions):.2f}-{max(fractions):.2f} | "
              f"{med(x['fastest_fraction'] for x in xs):.2f} | {med(bus) / 1e9 if bus else float('nan'):.3f} |")


def below(phases):
    return [f"{' '.join(map(str, key))} {f:.3f}" for key, f in below_target(phases)]


def print_verdicts(first, first_rounds, phases):
    total = len(phases)
    stage_one = below(first)
    print(f"after the first {first_rounds} rounds: {total - len(stage_one)} of {total} phases at "
          f">= 0.90 of their raw collective; below (to three places): {', '.join(stage_one) or 'none'}")
    final = below(phases)
    print(f"**verdict** (every phase's median over all its rounds, the retested cases' included): "
          f"{total - len(final)} of {total} at >= 0.90; below: {', '.join(final) or 'none'}")
    fastest_met = sum(med(x["fastest_fraction"] for x in xs) >= TARGET for xs in phases.values())
    print(f"at their fastest iterations (the median of the rounds): {fastest_met} of {total}")
    for plan in ("flat", "buckets"):
        xs = [fraction_of(v) for k, v in phases.items() if k[1] == plan]
        if xs:
            print(f"{plan}: {sum(f >= TARGET for f in xs)} of {len(xs)}, lowest {min(xs):.2f}")


def bucket_pairs(phases):
    """(backend, model, W, per-param syncs, bucket syncs, each round's bucket / per-param ratio): lpt's two sync
    runs of every case that has both, paired by round (both runs of a round come from one file)."""
    for (backend, partitioner, sync, model, w, phase), xs in sorted(phases.items()):
        if partitioner != "lpt" or sync != "bucket" or phase != "sync":
            continue
        base = phases.get((backend, partitioner, "per-param", model, w, phase))
        if base:
            yield backend, model, w, base, xs, round_ratios(xs, base, "phase_median_seconds")


def round_ratios(xs, base, field):
    """Each round's xs[field] / base[field] (the bucket's over the per-param's)."""
    return [b[field] / p[field] for b, p in zip(xs, base)]


def print_bucket_table(first):
    print("| backend | model | W | per-param (s) | bucket (s) | bucket / per-param | rounds' range |")
    print("|---|---|---:|---:|---:|---:|---|")
    for backend, model, w, base, xs, ratios in bucket_pairs(first):
        print(f"| {backend} | {model} | {w} | {med(p['phase_median_seconds'] for p in base):.4f} | "
              f"{med(b['phase_median_seconds'] for b in xs):.4f} | {med(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} |")


def median_interval(xs, level=0.95):
    """A distribution-free interval for the median of xs: the order statistics x(k) and x(n+1-k), with the largest
    k whose coverage 1 - 2 P(Binomial(n, 1/2) < k) is at least `level`; None where n is too small for one."""
    n, s = len(xs), sorted(xs)
    def tail(k):
        return sum(math.comb(n, i) for i in range(k)) / 2 ** n
    k = max((k for k in range(1, n // 2 + 1) if 1 - 2 * tail(k) >= level), default=None)
    return (s[k - 1], s[n - k]) if k else None


def bucket_verdict(interval):
    """slower / faster where the median's interval lies wholly above / below 1, else tie."""
    if interval is None:
        return "too few rounds"
    low, high = interval
    return "slower" if low > 1 else "faster" if high < 1 else "tie"


def shown_interval(interval):
    return f"{interval[0]:.2f}-{interval[1]:.2f}" if interval else "-"


def bucket(paths):
    print("| backend | model | W | per-param (s) | bucket (s) | bucket / per-param | 95 % interval | rounds | "
          "rounds' range | bucket is | raw: bucket / per-param | raw's 95 % interval |")
    print("|---|---|---:|---:|---:|---:|---|---:|---|---|---:|---|")
    verdicts = []
    pairs = [(backend, model, w, base, xs, ratios, round_ratios(xs, base, "raw_median_seconds"))
             for backend, model, w, base, xs, ratios in bucket_pairs(phases_of(paths))]
    for backend, model, w, base, xs, ratios, raw_ratios in pairs:
        interval = median_interval(ratios)
        verdicts.append(bucket_verdict(interval))
        print(f"| {backend} | {model} | {w} | {med(p['phase_median_seconds'] for p in base):.4f} | "
              f"{med(b['phase_median_seconds'] for b in xs):.4f} | {med(ratios):.2f} | {shown_interval(interval)} | "
              f"{len(ratios)} | {min(ratios):.2f}-{max(ratios):.2f} | {verdicts[-1]} | {med(raw_ratios):.2f} | "
              f"{shown_interval(median_interval(raw_ratios))} |")
    print()
    counts = ", ".join(f"{v} {verdicts.count(v)}" for v in ("faster", "tie", "slower", "too few rounds") if v in verdicts)
    met = "met" if verdicts and all(v in ("faster", "tie") for v in verdicts) else "NOT met"
    print(f"**verdict**: of {len(verdicts)} cases, {counts}; bucket sync no slower than per-param: {met}")
    print()
    print("Each round's ratio, in round order (so that records can be pooled):")
    print()
    for backend, model, w, base, xs, ratios, raw_ratios in pairs:
        print(f"- {backend} {model} W = {w}: sync {' '.join(f'{r:.3f}' for r in ratios)}; "
              f"raw {' '.join(f'{r:.3f}' for r in raw_ratios)}")


def table(paths):
    first = phases_of(p for p in paths if Path(p).name.startswith("round"))
    phases = phases_of(paths)
    print("fraction = the raw replay's median / the phase's median, both over each iteration's slowest rank (every")
    print("window opens after a barrier: the ranks step in turn), the median of the rounds' fractions, their range; times:")
    print("medians over the rounds; fastest: the raw's fastest iteration / the phase's fastest, over the same windows")
    print("(the fraction without the iterations' spread), the median of the rounds'; raw busbw: the phase's bytes over")
    print("the raw median, nccl-tests' factors.")
    print("The probe (placement in_place): every timed iteration is followed by a probe iteration, whose windows hold")
    print("the raw replays in the phases' own places (the gradient replay after the gradients are restored, the sync")
    print("replay right after the step), the phases themselves running untimed after each window.")
    print()
    first_rounds = len(next(iter(first.values())))
    print_phase_table(phases, first_rounds)
    print()
    print_verdicts(first, first_rounds, phases)
    print()
    print("bucket sync against per-param sync (lpt; each round's ratio of the sync's medians over each iteration's")
    print("slowest rank, both runs from that round, the first rounds only; the median over the rounds):")
    print()
    print_bucket_table(first)


def main(command, *paths):
    if command == "misses":
        for case in missed_cases(phases_of(paths)):
            print(*case)
    elif command == "table":
        table(paths)
    elif command == "bucket":
        bucket(paths)
    else:
        sys.exit(f"comm_rounds.py: unknown command {command!r}; valid: misses, table, bucket")


if __name__ == "__main__":
    main(*sys.argv[1:])
