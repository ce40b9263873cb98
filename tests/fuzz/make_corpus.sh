#!/usr/bin/env bash
# Makes the fuzz targets' seed corpora in tests/fuzz/corpus/ (committed; rerun
# only to refresh them): real inputs of each reader, small.
#   tests/fuzz/make_corpus.sh [BUILD_DIR]   (default build; needs bin/tessel)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
tessel=$build/bin/tessel
out=$here/corpus
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"/{onnx,torchscript,numpy,steps,worker_protocol,database}

# ONNX: single-operator models of the ONNX test data (Debian's libonnx-testdata).
node=/usr/share/libonnx-testdata/data/node
for t in test_add test_matmul_2d test_relu test_softmax_axis_1 test_gemm_default_no_bias \
         test_conv_with_strides_padding test_maxpool_2d_default test_averagepool_2d_default \
         test_concat_2d_axis_0 test_transpose_default test_reshape_extended_dims \
         test_batchnorm_example test_layer_normalization_2d_axis0; do
  [ -f "$node/$t/model.onnx" ] && cp "$node/$t/model.onnx" "$out/onnx/$t.onnx"
done

# TorchScript and NumPy: small archives saved by Debian's torch and numpy.
/usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np, torch
out = sys.argv[1]
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4, 2)
    def forward(self, x):
        y = torch.relu(self.conv(x)).mean(dim=(2, 3))
        return torch.softmax(self.fc(y), dim=1)
torch.jit.trace(Net().eval(), torch.randn(1, 3, 8, 8)).save(f"{out}/torchscript/conv_fc.pt")
torch.jit.script(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())).save(f"{out}/torchscript/mlp.pt")
np.save(f"{out}/numpy/matrix.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
np.save(f"{out}/numpy/scalar_f64.npy", np.float64(1.5))
np.savez(f"{out}/numpy/two.npz", x=np.ones((1, 3, 4, 4), np.float32), y=np.zeros(5, np.int64))
np.savez_compressed(f"{out}/numpy/compressed.npz", input=np.linspace(0, 1, 32, dtype=np.float32))
PY

# Steps and a database: real records of three tunings.
db=$work/seed.db
"$tessel" tune-op matmul --shape 16,16,16 --trials 6 --search random --db "$db" --quiet --json >/dev/null
"$tessel" tune-op conv2d --shape 1,4,8,8,8,3,3,1,1 --trials 6 --search random --db "$db" --quiet --json >/dev/null
"$tessel" tune-op softmax --shape 4,32 --trials 6 --search random --db "$db" --quiet --json >/dev/null
/usr/bin/python3 - "$db" "$out" <<'PY'
import sqlite3, sys, json, struct
db, out = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)
for i, (steps,) in enumerate(con.execute("SELECT steps FROM records ORDER BY id")):
    open(f"{out}/steps/record{i:02d}.json", "w").write(steps)
con.close()
# Worker protocol frames: a request and responses as the runner and worker send them.
def frame(obj):
    text = json.dumps(obj, separators=(",", ":")).encode()
    return struct.pack("<I", len(text)) + text
request = {"type": "measure", "device": "cpu", "library": "/tmp/k.so", "symbol": "k", "packSymbol": "k_pack",
           "packedSizes": [0, 64], "taskKey": "matmul_8_8_8", "bufferSizes": [64, 64, 64], "numInputs": 2,
           "referenceLibrary": "/tmp/r.so", "referenceSymbol": "r", "tolerance": 1e-4, "warmup": 1, "repeats": 3,
           "minRepeatSeconds": 0.02, "cacheFlush": "model", "constantInputs": [1], "seed": 1}
ok = {"error": 0, "message": "", "costs": [1e-5, 1.1e-5, 0.9e-5], "maxAbsError": 1e-7, "workerExits": False}
bad = {"error": 4, "message": "sandbox violation", "costs": [], "maxAbsError": "inf", "workerExits": True}
for name, obj in [("request", request), ("response_ok", ok), ("response_error", bad)]:
    open(f"{out}/worker_protocol/{name}.bin", "wb").write(frame(obj))
PY
# The database itself, checkpointed into one file.
/usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.execute('VACUUM'); c.close()" "$db"
cp "$db" "$out/database/three_tasks.db"
echo "corpora in $out:"
for d in "$out"/*; do echo "  $(basename "$d"): $(ls "$d" | wc -l) files, $(du -sh "$d" | cut -f1)"; done
