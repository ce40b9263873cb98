// NumPy's .npy and .npz files, so a user can hand Tessel their own inputs
// and compare its outputs with their framework's in one line of Python
// (np.save, np.savez). Reads float32/float64 and integer/bool arrays in C
// order (either byte order); writes float32 arrays as np.savez does (an
// uncompressed zip of .npy members, through libzip).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "runtime/graph_executor.h"

namespace tessel::runtime {

// A bad or unsupported file: the message names the file and the problem.
class NumpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct NumpyArray {
  std::string name;  // the member's name in an .npz without ".npy"; "" for an .npy
  std::vector<int64_t> shape;
  graph::DType dtype = graph::DType::Float32;  // float64 is read as Float32
  std::vector<float> floats;                   // Float32
  std::vector<int64_t> ints;                   // Int64 / Int32 / Bool
};

// One .npy array from its bytes; `what` names it in errors.
NumpyArray parseNpy(const std::string& bytes, const std::string& what);
// The .npy bytes of a float32 array.
std::string formatNpy(const HostTensor& t);

// A .npy file (one array) or an .npz archive (its arrays in archive order).
std::vector<NumpyArray> readNumpyFile(const std::string& path);
// An .npz archive with one member per array (`name`.npy), replacing `path`.
void writeNpz(const std::string& path, const std::vector<std::pair<std::string, HostTensor>>& arrays);

// The array for each of `names` (a model's inputs or outputs): by name, else
// by position where the file's arrays are np.savez's positional arr_0,
// arr_1, ... (or the one array of a file for a lone name). NumpyError naming what
// is missing and what the file holds otherwise.
std::map<std::string, const NumpyArray*> matchArrays(const std::vector<NumpyArray>& arrays,
                                                     const std::vector<std::string>& names, const std::string& file);

}  // namespace tessel::runtime
