"""The ONNX cases of the malformed-model corpus, one module per bug class.

Importing the package registers every case in registry.CASES, module by module
in the order of the import below (within a module, in the order of definition).
That order only sets the order of the manifest and of the test ids.
gen_bad_inputs.py imports this package, then tf_cases.py (the TensorFlow cases).
"""

# Not sorted on purpose: importing a module registers its cases.
from . import not_a_model, graph_structure, tensors  # noqa: F401
from . import external_data_traversal, external_data_offsets  # noqa: F401
from . import conv_attributes, attributes, opsets, run_inputs  # noqa: F401
from . import tensor_contents, dtype_confusion, indices, zero_strides, scale  # noqa: F401
