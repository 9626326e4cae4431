"""@TITLE@: a Python-module submission (docs/evaluate.md, "Submissions").

`ferry evaluate` imports this file, seeds torch (torch.manual_seed) and numpy
with the task's seed, builds Model(**init) with the baseline's keyword
arguments and calls it with the task's inputs, in task order. Outputs: a
tensor/array, or a tuple of them, shaped like the baseline's.
"""


class Model:
    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def __call__(self, *inputs):
        raise NotImplementedError("write the model: it must give the baseline's outputs")
