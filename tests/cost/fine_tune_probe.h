// LibTorch side of test_learned_models: fine-tunes a learned model with a
// chosen encoder rate (TrainOptions::fineTuneEncoderRate) and measures how
// far each part of its network moved. LibTorch's headers must not meet Qt's
// in one translation unit, so this is plain C++ in a library of its own.
#pragma once

#include <string>
#include <vector>

#include "cost/cost_model.h"

namespace tessel::testing {

struct FineTuneProbe {
  // ||after - before|| / ||before|| over the parameters under `encoder.`
  // (the store-row encoder), and over all the others.
  double encoderDrift = 0, restDrift = 0;
  std::vector<double> scores;  // the trained model's scores of the test programs
  // The same, over the first online update (updateFeatures) after that
  // training: `records` again until the model is past its warm-up.
  double onlineEncoderDrift = 0, onlineRestDrift = 0;
};

// Makes `model` ("mlp", "gat" or "atformer") as the registry does with seed
// 1, but with `encoderRate`, loads `saved` into it (none when empty:
// from scratch), trains it `epochs` passes over `records` with pretrain()
// and scores `test`; then updates it online once.
FineTuneProbe probeFineTune(const std::string& model, const std::string& saved, const cost::TaskRecords& records,
                            int epochs, double encoderRate, const std::vector<cost::ProgramFeatureSet>& test);

}  // namespace tessel::testing
