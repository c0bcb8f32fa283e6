#pragma once

// Prints an HTML report to PDF through headless Chromium (the browser the
// UI tests use): `chromium --headless --no-sandbox --disable-gpu
// --print-to-pdf`. The page needs no network (html_page.h), and Chromium
// is started without background networking, in a fresh temporary profile.

#include <string>

#include "model_inspector/status.h"

namespace mi::report {

struct PdfOptions {
  // The Chromium binary: MI_CHROMIUM when set, else /usr/bin/chromium.
  std::string chromium;
  // Chromium is killed past this (a hung browser must not hang CI).
  int timeout_s = 120;
};

// The Chromium PdfOptions would use: MI_CHROMIUM or /usr/bin/chromium.
std::string DefaultChromium();

// Writes `html` to a temporary file, prints it and writes the PDF to
// `pdf_path` atomically. Unsupported when Chromium is missing (the message
// says how to install it), Io when printing fails.
Status PrintHtmlToPdf(const std::string& html, const std::string& pdf_path,
                      const PdfOptions& options = {});

}  // namespace mi::report
