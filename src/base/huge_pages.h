#pragma once

// Large, long-lived buffers (a trace's task columns, reserved up front from
// the file size) are first touched page by page as they fill. On virtual
// machines a 4 KiB page fault is expensive: touching 1 GiB of fresh memory
// took 4.3 s with 4 KiB pages and 1.1-3.1 s with transparent huge pages on
// the 2-core VM this project is built on (bench/README.md, "Big traces").
// Where the kernel leaves transparent huge pages to madvise (the common
// default), asking for them on such buffers cuts the faults 512-fold.

#include <cstddef>
#include <vector>

namespace mi {

// Asks for transparent huge pages on the whole 2 MiB pages inside
// [data, data + bytes). Below a few MiB, or where the kernel refuses, it
// does nothing: only an advice, never an error.
void AdviseHugePages(void* data, size_t bytes);

// v.reserve(n), then AdviseHugePages on the reserved storage.
template <typename T>
void ReserveWithHugePages(std::vector<T>& v, size_t n) {
  v.reserve(n);
  AdviseHugePages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace mi
