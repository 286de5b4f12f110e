#include "report/table.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

using namespace kiln::cli;

TEST_CASE("a table aligns its columns under a dashed rule") {
  Table t({{"#", Align::kRight}, {"status"}, {"latency ms", Align::kRight}});
  t.AddRow({"1", "PASSED", "0.153"});
  t.AddRow({"10", "INCORRECT_NUMERICAL", "-"});
  CHECK(t.Render() ==
        " #  status               latency ms\n"
        "--  -------------------  ----------\n"
        " 1  PASSED                    0.153\n"
        "10  INCORRECT_NUMERICAL           -\n");
}

TEST_CASE("a short row is padded and trailing spaces are trimmed") {
  Table t({{"a"}, {"b"}});
  t.AddRow({"x"});
  CHECK(t.Render() == "a  b\n-  -\nx\n");
  CHECK(t.row_count() == 1);
}

TEST_CASE("milliseconds keep three decimals, or three digits when tiny") {
  CHECK(FormatMs(0.153) == "0.153");
  CHECK(FormatMs(12.3456) == "12.346");
  CHECK(FormatMs(0.0071) == "0.00710");
  CHECK(FormatMs(0.00213) == "0.00213");
  CHECK(FormatMs(0.0000213) == "2.13e-05");
  CHECK(FormatMs(0) == "-");
  CHECK(FormatMs(std::nan("")) == "-");
}

TEST_CASE("speedups and errors are formatted") {
  CHECK(FormatSpeedup(2.678) == "2.68x");
  CHECK(FormatSpeedup(0) == "-");
  CHECK(FormatError(1.0) == "1.00e+00");
  CHECK(FormatError(0) == "0.00e+00");
  CHECK(FormatError(std::nan("")) == "nan");
  CHECK(FormatError(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(FormatSeconds(1.234) == "1.23");
}

TEST_CASE("ids are shortened and absent times shown as a dash") {
  CHECK(ShortId("3f2a1b2c-9999-0000") == "3f2a1b2c");
  CHECK(ShortId("abc") == "abc");
  CHECK(FormatUnixMs(0) == "-");
  CHECK(FormatUnixMs(1700000000000).size() == 19);
}

TEST_CASE("a long log keeps its tail and says what was cut") {
  CHECK(TailLines("a\nb\nc\n", 5) == "a\nb\nc");
  CHECK(TailLines("a\nb\nc\nd", 2) == "... (2 lines omitted)\nc\nd");
  CHECK(Indent("x\ny\n", "  ") == "  x\n  y\n");
  CHECK(Indent("", "  ").empty());
}

TEST_CASE("ids are shown as the shortest prefixes that tell them apart, 8 characters at least") {
  const std::vector<std::string> ids = {"6f1c2a10-aaaa-4000-8000-000000000001",
                                        "6f1c2a10-abcd-4000-8000-000000000002",
                                        "0123456789abcdef", "0123456789abcdef", "short"};
  const std::vector<std::string> shown = UniquePrefixes(ids);
  REQUIRE(shown.size() == ids.size());
  CHECK(shown[0] == "6f1c2a10-aa");
  CHECK(shown[1] == "6f1c2a10-ab");
  CHECK(shown[2] == "01234567");  // equal ids keep equal prefixes
  CHECK(shown[3] == "01234567");
  CHECK(shown[4] == "short");
  // Workloads that differ only at the end (00000000-0000-...-000000000001 and ...2).
  const std::vector<std::string> zeros = UniquePrefixes(
      {"00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"});
  CHECK(zeros[0] == "00000000-0000-0000-0000-000000000001");
  CHECK(zeros[1] == "00000000-0000-0000-0000-000000000002");
  CHECK(UniquePrefixes({}).empty());
}

TEST_CASE("a run id is shown by its random part, not by its creation time") {
  // Two runs of the same minute share their first 8 characters.
  CHECK(RunLabel("01a232b6cbb8a07d7582") == "a07d7582");
  CHECK(RunLabel("01a232b6cbb9ffee1234") == "ffee1234");
  CHECK(RunLabel("run-1") == "run-1");
  CHECK(RunLabel("b01a232b6cbb8a07d7582") == "b01a232b");  // a batch id: not a run id
}
