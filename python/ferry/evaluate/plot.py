"""`ferry evaluate --plot FILE.png|svg`: latency and accuracy of the submission
and the peers against the baseline, drawn with matplotlib (Agg, no display)."""

from __future__ import annotations

from pathlib import Path


def draw(result, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cands = result["timing"]["candidates"]
    labels, p50, p90, colors = [], [], [], []
    palette = {"baseline": "#7f7f7f", "submission": "#1f77b4"}
    for key, c in cands.items():
        if not c["latency"]:
            continue
        labels.append(c["label"].replace(" (", "\n("))
        p50.append(c["latency"]["p50_ns"] / 1e6)
        p90.append(c["latency"]["p90_ns"] / 1e6)
        colors.append(palette.get(key, "#ff7f0e"))

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    t = result["task"]
    fig.suptitle(f"{t['name']}: score {result['score']['total']:.1f} / {result['score'].get('max', 100):g}", fontsize=12)

    y = range(len(labels))
    ax1.barh(list(y), p50, color=colors,
             xerr=[[0] * len(p50), [max(0.0, b - a) for a, b in zip(p50, p90)]], capsize=3)
    ax1.set_yticks(list(y), labels, fontsize=8)
    ax1.invert_yaxis()
    ax1.set_xlabel("latency per run, ms (bar p50, whisker p90)")
    tm = result["timing"]
    ax1.set_title(f"latency ({tm['rounds']} rounds x {tm['iters']} iters, {tm['threads']} threads)", fontsize=10)
    if p50:
        base = cands["baseline"]["latency"]["p50_ns"] / 1e6 if cands["baseline"]["latency"] else None
        if base:
            ax1.axvline(base, color="#7f7f7f", linestyle="--", linewidth=1)
        if max(p90) / min(p50) > 20:  # a slow peer would squash the rest
            ax1.set_xscale("log")
        for i, (v, w) in enumerate(zip(p50, p90)):
            text = f"  {v:.4g} ms" + (f", {base / v:.2f}x" if base else "")
            ax1.text(w, i, text, va="center", fontsize=8)
        ax1.set_xlim(right=max(p90) * (4 if ax1.get_xscale() == "log" else 1.35))

    # Accuracy: worst MAE over the trials for the submission, trial 0 for the peers.
    names, maes = [], []
    acc = result["accuracy"]
    if acc.get("mae") is not None and not result.get("failure"):
        names.append("submission")
        maes.append(acc["mae"])
    for key, c in cands.items():
        if key.startswith("peer:") and c.get("accuracy_trial0"):
            vals = [o["mae"] for o in c["accuracy_trial0"] if o.get("mae") is not None]
            if vals:
                names.append(c["label"])
                maes.append(max(vals))
    floor = 1e-12
    ax2.bar(names, [max(m, floor) for m in maes], color=["#1f77b4"] + ["#ff7f0e"] * (len(names) - 1))
    ax2.set_yscale("log")
    ax2.set_ylabel("MAE vs the baseline (log; lines: score bands)")
    ax2.set_title("accuracy" + (" (submission FAILED)" if result.get("failure") else ""), fontsize=10)
    bands = [b["below"] for b in result["score"].get("rule", {}).get("accuracy", {}).get("bands", [])]
    for band, style in zip(bands, (":", "--", "-.", "-")):
        ax2.axhline(band, color="#d62728", linestyle=style, linewidth=1)
        ax2.text(-0.4, band, f"{band:g}", color="#d62728", fontsize=8, va="bottom")
    ax2.set_xticks(range(len(names)), [n.replace(" (", "\n(") for n in names])
    ax2.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
