#pragma once

// MI_CHECK guards programmer errors only (never input-derived conditions).

#include <cstdio>
#include <cstdlib>

#define MI_CHECK(cond)                                                      \
  do {                                                                      \
    if (!(cond)) {                                                          \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                  \
      std::abort();                                                         \
    }                                                                       \
  } while (false)

#ifdef NDEBUG
#define MI_DCHECK(cond) \
  do {                  \
  } while (false && (cond))
#else
#define MI_DCHECK(cond) MI_CHECK(cond)
#endif
