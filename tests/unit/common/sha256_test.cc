// SHA-256 content addresses (sha256.h).
#include "harness/common/sha256.h"

#include <catch2/catch.hpp>
#include <string>

namespace kiln {
namespace {

TEST_CASE("Sha256Hex matches the FIPS 180-2 test vectors") {
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("Sha256Hex hashes bytes, embedded NULs included") {
  const std::string with_nul("a\0b", 3);
  CHECK(Sha256Hex(with_nul) != Sha256Hex("ab"));
  CHECK(Sha256Hex(with_nul).size() == 64);
}

TEST_CASE("incremental parts are length-prefixed so their boundaries matter") {
  Sha256 a;
  a.AddPart("ab");
  a.AddPart("c");
  Sha256 b;
  b.AddPart("a");
  b.AddPart("bc");
  const std::string da = a.HexDigest();
  CHECK(da != b.HexDigest());
  CHECK(da.size() == 64);
  Sha256 again;
  again.AddPart("ab");
  again.AddPart("c");
  CHECK(again.HexDigest() == da);
}

TEST_CASE("a part is framed by its 8-byte little-endian length") {
  Sha256 h;
  h.AddPart("abc");
  const std::string framed = std::string("\x03\0\0\0\0\0\0\0", 8) + "abc";
  CHECK(h.HexDigest() == Sha256Hex(framed));
}

TEST_CASE("an empty part still changes the digest") {
  Sha256 none;
  Sha256 one_empty;
  one_empty.AddPart("");
  CHECK(none.HexDigest() != one_empty.HexDigest());
}

TEST_CASE("Update feeds raw bytes: pieces digest like the whole") {
  Sha256 pieces;
  pieces.Update("a");
  pieces.Update("");
  pieces.Update("bc");
  CHECK(pieces.HexDigest() ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // SHA-256("abc")
  Sha256 framed;
  framed.AddPart("abc");
  Sha256 raw;
  raw.Update("abc");
  CHECK(framed.HexDigest() != raw.HexDigest());
}

}  // namespace
}  // namespace kiln
