#include "model_inspector/diff.h"

namespace mi {

void DiffReport::Write(ResultWriter& w) const {
  w.BeginObject();
  w.EndObject();
}

}  // namespace mi
