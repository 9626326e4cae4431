// frontends/tensorflow/dilated_conv.h — SpaceToBatchND -> conv -> BatchToSpaceND as one dilated conv.
//
// TensorFlow writes a convolution with dilation rate d > 1 (Keras Conv2D with
// dilation_rate, tf.nn.atrous_conv2d) as
//
//   BatchToSpaceND(Conv(SpaceToBatchND(x, [dh,dw], [[pt,pb],[pl,pr]]), w) {VALID, stride 1}, [dh,dw], [[ct,cb],[cl,cr]])
//     == Conv(x, w) {dilations [dh,dw], explicit pads [pt-ct, pb-cb, pl-cl, pr-cr]}
//
// (the d*d phases SpaceToBatchND splits x into are the taps of the dilated
// kernel; BatchToSpaceND interleaves them back and crops the padding that made
// H and W divisible by d). Imported op by op, the pair is a 6-D Transpose on
// each side of the conv that no layout pass can remove; as one conv it is an
// ordinary NCHW Conv. Conv is Conv2D or DepthwiseConv2dNative (NHWC).
// Preconditions: block shapes and paddings/crops are Const nodes, equal block
// shapes, every pad minus crop >= 0. The conv and SpaceToBatchND stay in the
// scope; they are imported only if something else reads them.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "frontends/tensorflow/proto/tf_graph.pb.h"

namespace ferry::tf_import {

/// The node a data input reference reads output 0 of, or nullopt (another output, a function argument).
using ResolveRef = std::function<std::optional<std::string>(const std::string& ref)>;

/// For BatchToSpaceND node `b2s` that closes the pattern above: the dilated conv that replaces it
/// (same name, so its readers and provenance stay); nullopt otherwise.
std::optional<tfproto::NodeDef> dilated_conv_for(const tfproto::NodeDef& b2s,
                                                 const std::map<std::string, const tfproto::NodeDef*>& nodes,
                                                 const ResolveRef& resolve);

}  // namespace ferry::tf_import
