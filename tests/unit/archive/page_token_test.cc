#include "harness/archive/page_token.h"

#include <catch2/catch.hpp>

namespace kiln::archive {
namespace {

TEST_CASE("a page token round-trips run ids that contain colons") {
  RunCursor cursor{1700000000123, "run:with:colons"};
  auto decoded = DecodePageToken(EncodePageToken(cursor));
  REQUIRE(decoded.ok());
  CHECK(decoded->created_ms == cursor.created_ms);
  CHECK(decoded->run_id == cursor.run_id);
}

TEST_CASE("a page token that was not issued by the archive names page_token") {
  for (const char* token : {"not base64!", "aGVsbG8", "cjE6YWJjOmlk" /* r1:abc:id */}) {
    INFO(token);
    auto decoded = DecodePageToken(token);
    REQUIRE(!decoded.ok());
    CHECK(decoded.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(decoded.status().message()), Catch::Contains("page_token"));
  }
}

}  // namespace
}  // namespace kiln::archive
