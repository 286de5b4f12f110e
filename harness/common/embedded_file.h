// Files compiled into a binary by cmake/embed.cmake (migrations, built-in definitions).
#ifndef KILN_HARNESS_COMMON_EMBEDDED_FILE_H_
#define KILN_HARNESS_COMMON_EMBEDDED_FILE_H_

#include <cstddef>

namespace kiln {

struct EmbeddedFile {
  const char* name;  // base name, e.g. "0001_init.sql"
  const char* data;
  size_t size;
};

}  // namespace kiln

#endif  // KILN_HARNESS_COMMON_EMBEDDED_FILE_H_
