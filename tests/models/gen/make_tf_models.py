"""TensorFlow test models for the TensorFlow frontend, built with tensorflow-cpu.

Each model NAME is a Keras model with seeded random weights (batch-norm
statistics randomized too, so they matter) at a small input size, written as

    OUT/NAME/saved_model/     a TF2 SavedModel (tf.saved_model.save; signature serving_default)
    OUT/NAME/frozen.pb        a frozen GraphDef (convert_variables_to_constants_v2; input "input")
    OUT/NAME/inputs.npz       seeded inputs (see common.make_inputs)
    OUT/NAME/expected.npz     TensorFlow's outputs on them
    OUT/NAME.json             sidecar: inputs, outputs of both forms, generator hash

OUT defaults to tests/models/generated/tf. Usage:

    python make_tf_models.py [NAME ...] [--out DIR]     (no NAME: all)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # TensorFlow's plain kernels: the reference

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import GEN_DIR, generator_hash, input_spec, make_inputs, temp_path, write_sidecar  # noqa: E402

SOURCES = [GEN_DIR / "make_tf_models.py", GEN_DIR / "common.py"]


def _app(cls_name, size, **kw):
    def build():
        import tensorflow as tf

        cls = getattr(tf.keras.applications, cls_name)
        return cls(weights=None, input_shape=(size, size, 3), classes=10, classifier_activation=None, **kw)

    return build, [1, size, size, 3]


def _transformer_encoder(seq=16):
    """A Keras encoder block on MultiHeadAttention; seq=None leaves the sequence axis dynamic."""
    import tensorflow as tf

    layers = tf.keras.layers
    x = tf.keras.Input((seq, 32), name="tokens")
    a = layers.MultiHeadAttention(num_heads=4, key_dim=8)(x, x)
    h = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, a]))
    f = layers.Dense(64, activation="gelu")(h)
    f = layers.Dense(32)(f)
    y = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([h, f]))
    return tf.keras.Model(x, y)


def _mixed_ops():
    """Small convnet over the ops keras.applications rarely reach: resize, explicit pads, slicing."""
    import tensorflow as tf

    layers = tf.keras.layers
    x = tf.keras.Input((12, 12, 4), name="image")
    h = layers.Conv2D(8, 3, strides=2, padding="same", activation="elu")(x)
    h = layers.DepthwiseConv2D(3, padding="valid", depth_multiplier=2)(h)
    h = layers.UpSampling2D(2, interpolation="bilinear")(h)
    h = layers.UpSampling2D(2, interpolation="nearest")(h)
    h = layers.ZeroPadding2D(((1, 0), (2, 1)))(h)
    h = layers.Cropping2D(((1, 2), (0, 1)))(h)
    h = layers.AveragePooling2D(3, strides=2, padding="same")(h)
    h = layers.Conv2D(6, 1, activation="selu")(h)
    h = layers.Reshape((-1, 6))(h)
    h = layers.Dense(5, activation="tanh")(h)
    y = layers.Softmax()(h)
    return tf.keras.Model(x, y)


def _grouped_conv():
    """Grouped convolutions (RegNet's building block; keras 3 ships no RegNet) and a Conv2D with dilation."""
    import tensorflow as tf

    layers = tf.keras.layers
    x = tf.keras.Input((16, 16, 8), name="image")
    h = layers.Conv2D(16, 3, padding="same", groups=4, use_bias=False)(x)
    h = layers.BatchNormalization()(h)
    h = layers.ReLU()(h)
    h = layers.Conv2D(16, 3, strides=2, groups=8)(h)
    h = layers.Conv2D(8, 3, dilation_rate=2, padding="same", activation="swish")(h)
    h = layers.GlobalAveragePooling2D()(h)
    y = layers.Dense(10)(h)
    return tf.keras.Model(x, y)


def _raw_ops():
    """TensorFlow ops Keras layers rarely emit, called directly: resize modes, mirror pads, slicing, gathers."""
    import tensorflow as tf

    class RawOps(tf.keras.layers.Layer):
        def call(self, x):
            v1 = tf.compat.v1.image
            size = [11, 13]
            r = (v1.resize_bilinear(x, size, align_corners=True) + v1.resize_nearest_neighbor(x, size, align_corners=True)
                 + v1.resize_bilinear(x, size) + v1.resize_nearest_neighbor(x, size)
                 + tf.image.resize(x, size, method="nearest") + tf.image.resize(x, size, method="bilinear"))
            m = tf.pad(r, [[0, 0], [2, 1], [1, 2], [0, 0]], mode="REFLECT")
            m = tf.pad(m, [[0, 0], [1, 1], [1, 0], [0, 0]], mode="SYMMETRIC")
            s = m[:, ::2, 1:-1:3, :] * tf.nn.leaky_relu(m[:, -1::-2, 2::3, ::-1], alpha=0.3)
            a, b = tf.split(s, 2, axis=-1)
            rows = tf.unstack(tf.concat([a, b], axis=1), axis=2)
            g = tf.gather(tf.stack(rows, axis=0), [2, 0, 1], axis=0)
            t = tf.tile(tf.reduce_max(g, axis=[1, 2]), [1, 2]) + tf.reduce_sum(g, axis=2)[:, :, 0:1]
            e = tf.einsum("abc,abd->acd", g[:, 0], g[:, 0, :, ::-1])
            w = tf.where(t > 0, tf.nn.softplus(t), tf.math.square(t) - tf.fill(tf.shape(t), 0.5))
            return [w, tf.reduce_min(e, axis=-1) + tf.cast(tf.range(2), tf.float32)]

    x = tf.keras.Input((6, 8, 4), batch_size=1, name="image")
    return tf.keras.Model(x, RawOps()(x))


def _math_ops():
    """Elementwise math and comparisons with no one-to-one IR op, on floats and int32 (tf.raw_ops where
    the Python API would rewrite the op)."""
    import tensorflow as tf

    class MathOps(tf.keras.layers.Layer):
        def call(self, x):
            raw = tf.raw_ops
            t = tf.tanh(x) * 0.9
            trig = (tf.sin(x) + tf.cos(x) + tf.tan(x * 0.3) + tf.asin(t) + tf.acos(t) + tf.atan(x) + tf.sinh(t)
                    + tf.cosh(t) + tf.asinh(x) + tf.acosh(1 + x * x) + tf.atanh(t))
            rounding = (tf.math.ceil(x * 3) + tf.round(x * 2.5) + raw.Rint(x=x * 2.5) + tf.sign(x)
                        + tf.nn.softsign(x) + raw.Inv(x=x + 4) + tf.math.log1p(tf.abs(x)) + tf.math.expm1(t))
            y = x * 0.7 - 0.35
            floats = (tf.math.floordiv(x, y) + tf.math.floormod(x, y) + tf.truncatemod(x, y)
                      + tf.math.divide_no_nan(x, tf.nn.relu(y)) + tf.clip_by_value(x, -0.5 + y * 0.1, 0.8))
            i = tf.cast(tf.round(x * 7), tf.int32)
            j = tf.cast(tf.round(y * 5), tf.int32) + tf.cast(tf.equal(tf.round(y * 5), 0), tf.int32)  # no zeros
            ints = tf.math.floordiv(i, j) * 100 + tf.math.floormod(i, j) * 10 + tf.truncatemod(i, j)
            logic = tf.logical_or(tf.logical_and(x >= y, x <= 0.5), tf.logical_not(tf.not_equal(i, j)))
            special = tf.cast(tf.math.is_nan(x / tf.nn.relu(y)), tf.float32) + tf.cast(tf.math.is_inf(x / tf.nn.relu(y)), tf.float32)
            cums = (tf.cumsum(x, axis=2, exclusive=True) + tf.cumsum(x, axis=1, reverse=True)
                    + tf.math.cumprod(t, axis=3, exclusive=True, reverse=True))
            clip = raw.ClipByValue(t=x, clip_value_min=-0.5 + y * 0.1, clip_value_max=tf.constant(0.8))
            counts = tf.cast(raw.Size(input=x) * 10 + raw.Rank(input=x), tf.float32) + tf.cast(raw.Size(input=x, out_type=tf.int64), tf.float32)
            u = tf.cast(tf.abs(i), tf.uint8)
            shifts = tf.cast(tf.bitwise.left_shift(u, tf.constant(2, tf.uint8)) + tf.bitwise.right_shift(u, tf.constant(1, tf.uint8)),
                             tf.int32)
            return [trig + rounding + floats + cums + special + clip + counts, ints + shifts, tf.cast(logic, tf.int32),
                    tf.bitwise.bitwise_and(i, j) + tf.bitwise.bitwise_or(i, 3) + tf.bitwise.bitwise_xor(i, j)
                    + tf.bitwise.invert(i)]

    x = tf.keras.Input((6, 8, 4), batch_size=1, name="image")
    return tf.keras.Model(x, MathOps()(x))


def _select_ops():
    """Indexing, selection and layout ops: top_k, one_hot, gather_nd, scatter_nd, where, reverse,
    broadcast_to, band parts, rank/size, all/any, euclidean_norm, depth/space moves, LRN, and
    Conv2DTranspose (SAME and VALID, strides 2 and 3)."""
    import tensorflow as tf

    class SelectOps(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.up_same = tf.keras.layers.Conv2DTranspose(3, 3, strides=2, padding="same")
            self.up_valid = tf.keras.layers.Conv2DTranspose(2, (2, 3), strides=(3, 2), padding="valid")

        def call(self, x):
            values, idx = tf.math.top_k(tf.reshape(x, [6, 32]), k=5)
            hot = tf.one_hot(tf.cast(tf.round(x[0, :, :, 0] * 2), tf.int32), depth=3, on_value=2.0, off_value=-1.0)
            g = tf.gather_nd(x[0], [[0, 1], [5, 7], [2, 3]]) + tf.gather_nd(x[0], [[1, 2, 3], [4, 4, 0], [0, 0, 1]])[:, None]
            s = tf.scatter_nd([[1], [3], [1]], tf.reshape(x[0, :3, :2, :], [3, 8]), [5, 8])
            coords = tf.where(x[0, :, :, 1] > 0.5)
            rev = tf.reverse(x, axis=[1, 3]) + tf.broadcast_to(x[:, :1, :, :1], [1, 6, 8, 4])
            sq = tf.reshape(x[0, :, :4, :], [6, 4, 4])
            band = tf.linalg.band_part(sq, 1, 0) + tf.linalg.band_part(sq, 0, 2) * 2 + tf.linalg.band_part(sq, -1, 1) * 3
            counts = tf.cast(tf.rank(x) * 10 + tf.size(x), tf.float32)
            bools = (tf.cast(tf.reduce_all(x > -3, axis=[1, 2]), tf.float32)
                     + tf.cast(tf.reduce_any(x > 1.5, axis=1), tf.float32)[:, 0, :])
            norm = tf.math.reduce_euclidean_norm(x, axis=[1, 2])
            moved = tf.nn.space_to_depth(tf.nn.depth_to_space(x, 2), 2) + tf.nn.local_response_normalization(x, 2, 0.5, 0.3, 0.75)
            up_same, up_valid = self.up_same(x), self.up_valid(x)
            mm = tf.linalg.matmul(sq, sq, transpose_b=True)
            return [values, idx, hot, g, s, coords, rev + moved, band + mm, counts + bools + norm, up_same, up_valid]

    x = tf.keras.Input((6, 8, 4), batch_size=1, name="image")
    return tf.keras.Model(x, SelectOps()(x))


MODELS = {
    "mobilenet_v2": _app("MobileNetV2", 64),
    "resnet50": _app("ResNet50", 64),
    "transformer_encoder": (_transformer_encoder, [1, 16, 32]),
    "transformer_encoder_dynamic": (lambda: _transformer_encoder(None), [2, 16, 32]),
    "mixed_ops": (_mixed_ops, [1, 12, 12, 4]),
    "raw_ops": (_raw_ops, [1, 6, 8, 4]),
    "math_ops": (_math_ops, [1, 6, 8, 4]),
    "select_ops": (_select_ops, [1, 6, 8, 4]),
    "efficientnet_b0": _app("EfficientNetB0", 64),
    "densenet121": _app("DenseNet121", 64),
    "inception_v3": _app("InceptionV3", 75),
    "xception": _app("Xception", 71),
    "convnext_tiny": _app("ConvNeXtTiny", 64),
    "grouped_conv": (_grouped_conv, [1, 16, 16, 8]),
    "nasnet_mobile": _app("NASNetMobile", 64),
    "mobilenet_v3_small": _app("MobileNetV3Small", 64),
    "mobilenet": _app("MobileNet", 64),
    "vgg16": _app("VGG16", 32),
    "resnet50_v2": _app("ResNet50V2", 64),
    "inception_resnet_v2": _app("InceptionResNetV2", 75),
    "efficientnet_v2_b0": _app("EfficientNetV2B0", 64),
}
MODEL_NAMES = list(MODELS)


def randomize_batchnorm(model, rng):
    """Random gamma/beta/mean/variance, so normalization is not the identity."""
    import tensorflow as tf

    for layer in model.submodules if hasattr(model, "submodules") else model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            for w in layer.weights:
                n = w.name.split("/")[-1].split(":")[0]
                shape = tuple(w.shape)
                if "variance" in n:
                    w.assign(rng.uniform(0.5, 1.5, shape).astype(np.float32))
                elif "gamma" in n:
                    w.assign(rng.uniform(0.5, 1.5, shape).astype(np.float32))
                else:
                    w.assign((0.1 * rng.standard_normal(shape)).astype(np.float32))


def build(name, out_root):
    """Writes the model NAME under out_root (see the module docstring); returns the sidecar dict."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    builder, shape = MODELS[name]
    tf.keras.utils.set_random_seed(0)
    model = builder()
    randomize_batchnorm(model, np.random.default_rng(1))
    out_root = Path(out_root)
    out_root.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(out_root / name)
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()

    spec = tf.TensorSpec(shape, tf.float32, name="input")
    fn = tf.function(lambda x: model(x, training=False)).get_concrete_function(spec)
    frozen = convert_variables_to_constants_v2(fn)
    graph_def = frozen.graph.as_graph_def()
    (tmp / "frozen.pb").write_bytes(graph_def.SerializeToString())
    frozen_outputs = [t.name.split(":")[0] if t.name.endswith(":0") else t.name for t in frozen.outputs]

    tf.saved_model.save(model, str(tmp / "saved_model"))
    loaded = tf.saved_model.load(str(tmp / "saved_model"))
    sig = loaded.signatures["serving_default"]
    sig_input = list(sig.structured_input_signature[1].keys())[0]

    inputs = [input_spec("input", shape)]
    x = make_inputs(inputs)["input"]
    ref = fn(tf.constant(x))
    ref = ref if isinstance(ref, (list, tuple)) else [ref]
    sig_out = sig(**{sig_input: tf.constant(x)})
    expected = {f"frozen:{n}": np.asarray(r) for n, r in zip(frozen_outputs, ref)}
    expected.update({f"saved_model:{k}": v.numpy() for k, v in sig_out.items()})
    np.savez(tmp / "inputs.npz", input=x)
    np.savez(tmp / "expected.npz", **expected)

    final = out_root / name
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    meta = {
        "name": name,
        "source": "tensorflow",
        "tensorflow": tf.__version__,
        "inputs": inputs,
        "frozen": {"file": f"{name}/frozen.pb", "inputs": ["input"], "outputs": frozen_outputs},
        "saved_model": {"file": f"{name}/saved_model", "inputs": [sig_input], "outputs": sorted(sig_out)},
        "generator": generator_hash(*SOURCES),
    }
    write_sidecar(out_root, meta)
    return meta


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="*", choices=[[]] + MODEL_NAMES, metavar="NAME")
    p.add_argument("--out", default=str(GEN_DIR.parent / "generated" / "tf"))
    args = p.parse_args()
    for name in args.names or MODEL_NAMES:
        meta = build(name, args.out)
        print(f"{name}: {meta['frozen']['file']}, {meta['saved_model']['file']}")


if __name__ == "__main__":
    main()
