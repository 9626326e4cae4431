"""The text form of an evaluation result (the JSON form is the result itself)."""

from __future__ import annotations


def _g(v, fmt=".3g"):
    return "-" if v is None else format(v, fmt)


def _ms(ns):
    return "-" if ns is None else f"{ns / 1e6:.3f}"


def format_result(r):
    out = []
    t, s = r["task"], r["submission"]
    out.append(f"ferry evaluate: {t['name']} ({t['track']} track): {t.get('title', '')}")
    out.append(f"submission: {s['description']}")
    if s.get("runtime"):
        out.append(f"  runs as: {s['runtime']}")
    out.append("")

    acc = r["accuracy"]
    metric = "MAE" if acc["metric"] == "mae" else "max-AE"
    out.append(f"accuracy vs the baseline ({len(acc['trials'])} trial{'s' if len(acc['trials']) != 1 else ''}, "
               f"scored on the worst {metric})")
    out.append(f"  {'trial':<18}{'MAE':>11}{'max-AE':>11}{'cosine':>12}  {'allclose':<9}")
    for tr in acc["trials"]:
        name = f"{tr['trial']} (seed {tr['seed']})"
        if tr.get("failure"):
            out.append(f"  {name:<18}FAILED: {tr['failure'].splitlines()[0]}")
            for line in tr["failure"].splitlines()[1:6]:
                out.append(f"  {'':<18}  {line}")
            continue
        out.append(f"  {name:<18}{_g(tr.get('mae')):>11}{_g(tr.get('max_ae')):>11}{_g(tr.get('cosine'), '.6f'):>12}  "
                   f"{'yes' if tr.get('allclose') else 'no':<9}")
    tol = acc["tolerance"]
    out.append(f"  correct (allclose atol {tol['atol']:g}, rtol {tol['rtol']:g} on every trial): "
               f"{'yes' if acc['correct'] else 'no'}")
    out.append("")

    tm = r["timing"]
    out.append(f"latency ({tm['rounds']} alternating rounds x {tm['iters']} iterations, {tm['warmup']} warm-up, "
               f"{tm['threads']} thread{'s' if tm['threads'] != 1 else ''})")
    w = min(64, max([44] + [len(c["label"]) + 1 for c in tm["candidates"].values()]))  # the label column
    out.append(f"  {'candidate':<{w}}{'p50 ms':>10}{'p90 ms':>10}{'runs/s':>10}{'items/s':>11}{'vs baseline':>13}")
    base = tm["candidates"]["baseline"]["latency"]
    key = "mean_ns" if tm["statistic"] == "mean" else f"{tm['statistic']}_ns"
    for c in tm["candidates"].values():
        lat = c["latency"]
        label = c["label"][:w - 1]
        if lat is None:
            why = (c.get("failure") or "not timed").splitlines()[0]
            out.append(f"  {label:<{w}}{why[:70]}")
            continue
        rel = f"{base[key] / lat[key]:.2f}x" if base and lat[key] else "-"
        out.append(f"  {label:<{w}}{_ms(lat['p50_ns']):>10}{_ms(lat['p90_ns']):>10}{lat['throughput_per_s']:>10.1f}"
                   f"{lat['items_per_s']:>11.1f}{rel:>13}")
    out.append("")

    sc = r["score"]
    out.append("score")
    for part in ("performance", "accuracy", "quality"):
        p = sc[part]
        out.append(f"  {part:<13}{p['points']:>7.2f} / {p['max']:<6g}{p['detail']}")
        for c in p.get("checks", []):
            out.append(f"  {'':<13}{'':>7}   {'':<6}  {c['name']:<9}{c['points']:>5.2f} / {c['max']:<4g}"
                       f"{c['status']:<8} {c['detail'][:110]}")
    out.append(f"  {'total':<13}{sc['total']:>7.2f} / {sc['max']:g}")
    if r.get("failure"):
        out.append("")
        out.append(f"the submission FAILED: {r['failure'].splitlines()[0]}")
    return "\n".join(out)
