// A graph as bytes, to hand it from one process to another: the TorchScript
// importer runs LibTorch's loader in a child process (frontend/
// torchscript_import.cpp) and sends the imported graph back this way.
// CBOR (nlohmann::json's binary form) with tensor data as raw bytes; the
// decoder checks what it reads, so a truncated message is a GraphError.
#pragma once

#include <cstdint>
#include <string>

#include "graph/graph.h"

namespace tessel::graph {

std::string encodeGraph(const Graph& g);
// Throws GraphError when the bytes are not an encoded graph.
Graph decodeGraph(const std::string& bytes);

}  // namespace tessel::graph
