#include "report/pdf.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/atomic_file.h"

namespace mi::report {
namespace {

// A private temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "mi-pdf-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    if (!path_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs argv, killing it past the deadline. The exit status, or -1 when it
// could not be started or was killed.
int RunWithTimeout(const std::vector<std::string>& args, int timeout_s,
                   bool* timed_out) {
  *timed_out = false;
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    // Chromium's chatter (dbus, GPU) is not ours to show.
    std::FILE* null = std::freopen("/dev/null", "w", stderr);
    (void)null;
    null = std::freopen("/dev/null", "w", stdout);
    (void)null;
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  while (true) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      *timed_out = true;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::string DefaultChromium() {
  const char* env = std::getenv("MI_CHROMIUM");
  return env != nullptr && *env != '\0' ? env : "/usr/bin/chromium";
}

Status PrintHtmlToPdf(const std::string& html, const std::string& pdf_path,
                      const PdfOptions& options) {
  std::string chromium =
      options.chromium.empty() ? DefaultChromium() : options.chromium;
  if (::access(chromium.c_str(), X_OK) != 0) {
    return UnsupportedError(fmt::format(
        "--pdf prints through headless Chromium, and {} is not an "
        "executable; install it (Debian: apt-get install chromium) or set "
        "MI_CHROMIUM to its path",
        chromium));
  }
  TempDir tmp;
  if (tmp.path().empty()) {
    return IoError("--pdf: cannot create a temporary directory");
  }
  std::string page = tmp.path() + "/report.html";
  std::string printed = tmp.path() + "/report.pdf";
  MI_RETURN_IF_ERROR(WriteFileAtomically(page, html));
  std::vector<std::string> args = {
      chromium,
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-extensions",
      "--no-first-run",
      "--no-pdf-header-footer",
      "--user-data-dir=" + tmp.path() + "/profile",
      "--print-to-pdf=" + printed,
      "file://" + page,
  };
  bool timed_out = false;
  int rc = RunWithTimeout(args, options.timeout_s, &timed_out);
  if (timed_out) {
    return IoError(fmt::format("--pdf: {} did not finish printing within {} s",
                               chromium, options.timeout_s));
  }
  std::ifstream in(printed, std::ios::binary);
  std::string pdf((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  if (rc != 0 || pdf.rfind("%PDF", 0) != 0) {
    return IoError(
        fmt::format("--pdf: {} exited with status {} and wrote {}", chromium,
                    rc, pdf.empty() ? "no PDF" : "a file that is not a PDF"));
  }
  return WriteFileAtomically(pdf_path, pdf).WithContext(pdf_path);
}

}  // namespace mi::report
