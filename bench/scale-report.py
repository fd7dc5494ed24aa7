#!/usr/bin/env python3
"""bench/scale.sh's report: reads its results (lines of "section system size measure value"),
prints the table (Kafka, Sluice, Sluice/Kafka), writes it to DIR/scale.md and into README
between its bench/scale.sh markers, and draws log-log plots of each measure against its size,
Kafka and Sluice on one chart, to DIR/scale-SECTION.png (when matplotlib is there).
Usage: scale-report.py RESULTS DIR README"""
import datetime
import math
import os
import subprocess
import sys

results, out_dir, readme = sys.argv[1:4]
SECTIONS = ["partitions", "connections", "groups", "fan-out", "cluster"]
SIZE_NAMES = {"partitions": "partitions", "connections": "connections",
              "groups": "members", "fan-out": "consumers",
              "cluster": "partitions, 3 nodes"}

# The commit the measured binaries were built from, as bench/scale.sh took it before building;
# else the tree's now.
commit = os.environ.get("SCALE_COMMIT", "")
if not commit:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    if subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                      capture_output=True, text=True).stdout.strip():
        commit += "-dirty"
today = datetime.date.today().isoformat()
# The results are kept in DIR/scale-results.txt: a run of some sections (SECTIONS=groups)
# replaces those sections' rows and keeps the others' from the run that measured them.
saved_path = f"{out_dir}/scale-results.txt"
fresh = [line.split(maxsplit=4) for line in open(results)]
fresh = [parts for parts in fresh if len(parts) == 5]
ran = {parts[0] for parts in fresh}
when, lines = {}, []
try:
    for line in open(saved_path):
        if line.startswith("# measured "):
            _, _, section, date, at = line.split()
            if section not in ran:
                when[section] = (date, at)
        elif line.strip() and line.split(maxsplit=1)[0] not in ran:
            lines.append(line.split(maxsplit=4))
except FileNotFoundError:
    pass
for section in ran:
    when[section] = (today, commit)
lines += fresh
with open(saved_path, "w") as f:
    for section, (date, at) in sorted(when.items()):
        f.write(f"# measured {section} {date} {at}\n")
    for parts in lines:
        f.write(" ".join(p.strip() for p in parts) + "\n")

rows = {}
for section, system, size, measure, value in lines:
    rows.setdefault((section, measure), {}).setdefault(int(size), {})[system] = value.strip()


def number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def order(key):
    section, measure = key
    return (SECTIONS.index(section) if section in SECTIONS else len(SECTIONS), measure)


measured = "; ".join(f"{section} {date} at {at}" for section, (date, at) in
                     sorted(when.items(), key=lambda kv: order((kv[0], ""))))
table = [f"Measured by `bench/scale.sh` ({measured}).", "",
         "| size | measure | Apache Kafka 4.4.0 | Sluice | Sluice / Kafka |",
         "|---|---|---|---|---|"]
for key in sorted(rows, key=order):
    section, measure = key
    for size, values in sorted(rows[key].items()):
        kafka, sluice = values.get("kafka", "-"), values.get("sluice", "-")
        k, s = number(kafka), number(sluice)
        ratio = f"{s / k:.2f}" if k and k > 0 and s is not None else "-"
        table.append(f"| {size:,} {SIZE_NAMES.get(section, section)} | {measure} | {kafka} | "
                     f"{sluice} | {ratio} |")
text = "\n".join(table)
print(text)

plots = []
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
if plt is not None:
    for section in SECTIONS:
        measures = [m for (s, m) in sorted(rows) if s == section
                    and sum(1 for v in rows[(s, m)].values()
                            if any(number(x) for x in v.values())) >= 2]
        if not measures:
            continue
        columns = min(3, len(measures))
        lines = math.ceil(len(measures) / columns)
        figure, axes = plt.subplots(lines, columns, figsize=(4.2 * columns, 3.4 * lines),
                                    squeeze=False)
        for axis, measure in zip(axes.flat, measures):
            for system, label, style in (("kafka", "Apache Kafka 4.4.0", "o-"),
                                         ("sluice", "Sluice", "s-")):
                points = [(size, number(v.get(system)))
                          for size, v in sorted(rows[(section, measure)].items())]
                kept = [(x, y) for x, y in points if y is not None and y > 0]
                if kept:
                    axis.plot(*zip(*kept), style, label=label)
                failed = [x for x, y in points if y is None and system in
                          rows[(section, measure)].get(x, {})]
                for x in failed:
                    axis.axvline(x, linestyle=":", color="grey")
                    axis.annotate(f"{system.capitalize()} failed", (x, 0.5), rotation=90,
                                  xycoords=("data", "axes fraction"), fontsize=7)
            axis.set_xscale("log")
            axis.set_yscale("log")
            axis.set_title(measure, fontsize=9)
            axis.set_xlabel(SIZE_NAMES.get(section, section), fontsize=8)
            axis.grid(True, which="both", alpha=0.3)
            axis.legend(fontsize=7)
        for axis in list(axes.flat)[len(measures):]:
            axis.set_visible(False)
        figure.tight_layout()
        path = f"{out_dir}/scale-{section}.png"
        figure.savefig(path, dpi=80)
        plots.append(path)

with open(f"{out_dir}/scale.md", "w") as f:
    f.write(text + "\n")
images = "\n".join(f"![{p}]({p})" for p in plots)
begin, end = "<!-- bench/scale.sh: begin -->", "<!-- bench/scale.sh: end -->"
with open(readme) as f:
    document = f.read()
if begin in document and end in document:
    before, rest = document.split(begin, 1)
    _, after = rest.split(end, 1)
    with open(readme, "w") as f:
        f.write(before + begin + "\n" + text + "\n\n" + images + "\n" + end + after)
    print(f"\nwritten to {out_dir}/scale.md, {readme} and {', '.join(plots) or 'no plots'}")
else:
    print(f"\nwritten to {out_dir}/scale.md; {readme} has no bench/scale.sh markers")
