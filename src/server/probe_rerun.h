#pragma once

// Re-running a run's model with other probes, from the UI
// (docs/reference/http-api.md "Re-run with probes"):
// POST /api/runs/{run}/probes/run starts `python3 -m model_inspector.runner`
// as a subprocess (argv, no shell) on the run's ONNX model and one of the
// model inputs the server offers, writing a new run into the run
// directory's probe store; GET /api/runs/{run}/probes/run says whether the
// run can re-run (and why not), the inputs offered, and the job's state
// with the runner's last output lines. One job per run at a time.
//
// The request names no file: the model and the run directory are the
// run's own, the input is an index into the server's list, probe patterns
// and triggers are passed as arguments and refused when they could read
// as options.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/api.h"

namespace mi::server {

// What a run re-runs: its ONNX model and the run directory whose probe
// store receives the new run; or why it cannot.
struct RerunTarget {
  std::string model;
  std::string run_dir;
  std::string reason;  // set when it cannot re-run
};

// The run's framework model, when it is an ONNX file, and the run
// directory it was opened from (the first path that is a folder).
RerunTarget RerunTargetOf(const ServedRun& run);

struct RerunOptions {
  // The Python interpreter ($MI_PYTHON, else "python3").
  std::string python = "python3";
  // Appended to the child's PYTHONPATH (the build's package folder, when
  // the binary runs from its build tree).
  std::string extra_pythonpath;
  // Model inputs (.npy) offered besides those found in the run directory
  // (`open --inputs`, a saved session's probe inputs).
  std::vector<std::string> inputs;
  // Lines of runner output kept per job (the last ones).
  size_t log_lines = 200;
};

// Options from the environment ($MI_PYTHON) and the build.
RerunOptions DefaultRerunOptions();

// GET /api/runs/{run}/probes/compare?level=L&base=ID&run=ID
// (probe_compare_api.cc): two runs of the run directory's probe store
// compared per node of level L (the colour by compare metric, the first
// divergent node).
HttpResponse ProbeCompareEndpoint(const ServedRun& run,
                                  const HttpRequest& request);

class ProbeRerunner {
 public:
  explicit ProbeRerunner(RerunOptions options);
  // Waits for running jobs (their processes are asked to stop first).
  ~ProbeRerunner();
  ProbeRerunner(const ProbeRerunner&) = delete;
  ProbeRerunner& operator=(const ProbeRerunner&) = delete;

  // The inputs a run can use: the server's, then the .npy files in the run
  // directory and its inputs/ folder, sorted, without repeats.
  std::vector<std::string> InputsFor(const RerunTarget& target) const;
  const std::vector<std::string>& server_inputs() const {
    return options_.inputs;
  }

  // GET and POST /api/runs/{run}/probes/run.
  HttpResponse Handle(size_t run_id, const RerunTarget& target,
                      const HttpRequest& request);

 private:
  struct Job;
  HttpResponse State(size_t run_id, const RerunTarget& target);
  HttpResponse Start(size_t run_id, const RerunTarget& target,
                     const HttpRequest& request);

  RerunOptions options_;
  std::mutex mutex_;
  std::map<size_t, std::shared_ptr<Job>> jobs_;  // by run, the latest
  uint64_t next_job_ = 1;
};

}  // namespace mi::server
