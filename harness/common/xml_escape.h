// Text for XML and HTML: character data and attribute values.
#ifndef KILN_HARNESS_COMMON_XML_ESCAPE_H_
#define KILN_HARNESS_COMMON_XML_ESCAPE_H_

#include <string>
#include <string_view>

namespace kiln {

// `text` with &, <, >, " and ' escaped, and control characters other than tab and newline
// (not allowed in XML 1.0 documents) turned into spaces.
std::string XmlEscape(std::string_view text);

}  // namespace kiln

#endif  // KILN_HARNESS_COMMON_XML_ESCAPE_H_
