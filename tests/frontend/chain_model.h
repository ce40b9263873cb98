// A long chain as an ONNX model, for the import-scaling test and bench: n
// nodes alternating Relu and Add of a constant (so folding and the passes see
// constants too), x [2, 3] in, y out, opset 13.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace tessel::testing {

// GCC 12 warns falsely (-Wrestrict) on the string assignments below once
// protobuf's setters are inlined (a known GCC 12 bug, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

inline onnx::ModelProto chainModel(int n) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("chain");
  for (const char* name : {"x", "y"}) {
    auto* v = name[0] == 'x' ? g->add_input() : g->add_output();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(2);
    tt->mutable_shape()->add_dim()->set_dim_value(3);
  }
  auto* c = g->add_initializer();
  c->set_name("c");
  c->set_data_type(onnx::TensorProto_DataType_FLOAT);
  c->add_float_data(0.5f);
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    auto* node = g->add_node();
    node->set_op_type(i % 2 ? "Add" : "Relu");
    node->set_name("n" + std::to_string(i));
    node->add_input(prev);
    if (i % 2) node->add_input("c");
    prev = i + 1 == n ? "y" : "v" + std::to_string(i);
    node->add_output(prev);
  }
  return m;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace tessel::testing
