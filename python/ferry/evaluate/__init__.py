"""`ferry evaluate`: the operator and model-migration challenge harness (docs/evaluate.md).

    task.py        task.toml (format 1): baseline, model, inputs, trials, timing, tolerance, peers, score rule
    submission.py  submission.toml: plugin / python / model; building a plugin
    inputs.py      seeded inputs per trial
    workers.py     the harness side of the worker protocol (timeouts, crashes)
    worker.py      Python candidates (python -m ferry.evaluate.worker)
    metrics.py     MAE, max-AE, cosine, failures (shape, NaN)
    score.py       the score rule
    quality.py     tests, README, lint, reviewer
    harness.py     one evaluation, start to end
    report.py      the text table;  plot.py  the matplotlib figure
    template.py    --init
    cli.py         the command line

Only the standard library and numpy are needed to import this package; the
frameworks load inside the workers that use them.
"""
