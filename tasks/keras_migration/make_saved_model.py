"""Writes saved_model/: the migration task's source model, a small Keras convnet
with seeded weights (batch-norm statistics randomized too, so they matter),
saved with tf.saved_model.save (signature serving_default: input named as the
task's [[inputs]] entry, output "logits"). Needs tensorflow-cpu (requirements.txt).

    python make_saved_model.py [--task task.toml] [--out saved_model]
"""

import argparse
import os
import shutil
import sys
import tomllib
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent


def build(image_shape, name):
    import tensorflow as tf

    layers = tf.keras.layers
    x = tf.keras.Input(image_shape, name=name)
    h = layers.Conv2D(16, 3, padding="same", use_bias=False)(x)
    h = layers.BatchNormalization()(h)
    h = layers.ReLU()(h)
    h = layers.MaxPooling2D(2)(h)
    h = layers.DepthwiseConv2D(3, padding="same")(h)
    h = layers.Conv2D(32, 1, activation="relu")(h)
    h = layers.GlobalAveragePooling2D()(h)
    y = layers.Dense(10)(h)
    return tf.keras.Model(x, y)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default=str(HERE / "task.toml"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    task_file = Path(args.task)
    task = tomllib.loads(task_file.read_text(encoding="utf-8"))
    out = Path(args.out) if args.out else task_file.parent / task["baseline"]["path"]
    spec = task["inputs"][0]
    import tensorflow as tf

    tf.keras.utils.set_random_seed(int(task["baseline"].get("seed", 0)))
    model = build(tuple(spec["shape"][1:]), spec["name"])
    rng = np.random.default_rng(1)
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            n = layer.moving_mean.shape[0]
            layer.moving_mean.assign(rng.normal(0, 0.5, n).astype(np.float32))
            layer.moving_variance.assign(rng.uniform(0.5, 1.5, n).astype(np.float32))
            layer.gamma.assign(rng.uniform(0.5, 1.5, n).astype(np.float32))
            layer.beta.assign(rng.normal(0, 0.2, n).astype(np.float32))
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    # The signature names its input like the task's input and its output "logits".
    spec = tf.TensorSpec([None, *spec["shape"][1:]], tf.float32, name=spec["name"])
    serve = tf.function(lambda x: {"logits": model(x, training=False)}).get_concrete_function(spec)
    tf.saved_model.save(model, str(tmp), signatures={"serving_default": serve})
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    print(f"wrote {out} (input {spec.name} {spec.shape})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
