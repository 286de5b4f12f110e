// ReadElfDynamicSymbols (declared in compiler.h). The file is a candidate's build output, so it
// is treated as hostile: every offset and size is checked against the file before use, and any
// inconsistency is INVALID_ARGUMENT, never a read out of bounds.
#include <elf.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "harness/common/files.h"
#include "harness/compile/compiler.h"

namespace kiln {

namespace {

class ElfImage {
 public:
  ElfImage(const std::string& path, std::string bytes) : path_(path), bytes_(std::move(bytes)) {}

  absl::Status Error(absl::string_view why) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": not a valid ELF64 file: ", why));
  }

  // True when [offset, offset + count * size) lies inside the file.
  bool Contains(uint64_t offset, uint64_t count, uint64_t size) const {
    if (size != 0 && count > (UINT64_MAX / size)) return false;
    uint64_t length = count * size;
    return offset <= bytes_.size() && length <= bytes_.size() - offset;
  }

  template <typename T>
  T Read(uint64_t offset) const {  // caller has checked Contains(offset, 1, sizeof(T))
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof value);
    return value;
  }

  size_t size() const { return bytes_.size(); }
  const char* data() const { return bytes_.data(); }

 private:
  std::string path_;
  std::string bytes_;
};

absl::StatusOr<Elf64_Ehdr> ReadHeader(const ElfImage& elf) {
  if (!elf.Contains(0, 1, sizeof(Elf64_Ehdr))) return elf.Error("too short for an ELF header");
  auto header = elf.Read<Elf64_Ehdr>(0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return elf.Error("bad magic");
  if (header.e_ident[EI_CLASS] != ELFCLASS64) return elf.Error("not a 64-bit object");
  if (header.e_ident[EI_DATA] != ELFDATA2LSB) return elf.Error("not little-endian");
  if (header.e_shoff == 0) return elf.Error("no section headers");
  if (header.e_shentsize < sizeof(Elf64_Shdr)) return elf.Error("section header size too small");
  return header;
}

// Section headers, honouring extended numbering (e_shnum == 0: the count is in section 0).
absl::StatusOr<std::vector<Elf64_Shdr>> ReadSections(const ElfImage& elf, const Elf64_Ehdr& h) {
  uint64_t count = h.e_shnum;
  if (count == 0) {
    if (!elf.Contains(h.e_shoff, 1, h.e_shentsize)) return elf.Error("section 0 out of bounds");
    count = elf.Read<Elf64_Shdr>(h.e_shoff).sh_size;
  }
  if (!elf.Contains(h.e_shoff, count, h.e_shentsize)) {
    return elf.Error("section headers out of bounds");
  }
  std::vector<Elf64_Shdr> sections;
  sections.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    sections.push_back(elf.Read<Elf64_Shdr>(h.e_shoff + i * h.e_shentsize));
  }
  return sections;
}

bool Exported(const Elf64_Sym& sym) {
  int bind = ELF64_ST_BIND(sym.st_info);
  int type = ELF64_ST_TYPE(sym.st_info);
  int visibility = ELF64_ST_VISIBILITY(sym.st_other);
  return (bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE) &&
         (visibility == STV_DEFAULT || visibility == STV_PROTECTED) && type != STT_SECTION &&
         type != STT_FILE;
}

absl::Status ReadSymbols(const ElfImage& elf, const std::vector<Elf64_Shdr>& sections,
                         const Elf64_Shdr& dynsym, ElfSymbols* out) {
  if (dynsym.sh_link >= sections.size()) return elf.Error(".dynsym links to no section");
  const Elf64_Shdr& strtab = sections[dynsym.sh_link];
  if (strtab.sh_type != SHT_STRTAB) return elf.Error(".dynsym links to a non-string table");
  if (!elf.Contains(strtab.sh_offset, 1, strtab.sh_size)) return elf.Error(".dynstr out of bounds");
  uint64_t entsize = dynsym.sh_entsize == 0 ? sizeof(Elf64_Sym) : dynsym.sh_entsize;
  if (entsize < sizeof(Elf64_Sym)) return elf.Error(".dynsym entry size too small");
  uint64_t count = dynsym.sh_size / entsize;
  if (!elf.Contains(dynsym.sh_offset, count, entsize)) return elf.Error(".dynsym out of bounds");
  for (uint64_t i = 1; i < count; ++i) {  // symbol 0 is the null symbol
    auto sym = elf.Read<Elf64_Sym>(dynsym.sh_offset + i * entsize);
    if (sym.st_name >= strtab.sh_size) return elf.Error("symbol name out of bounds");
    const char* name = elf.data() + strtab.sh_offset + sym.st_name;
    size_t room = strtab.sh_size - sym.st_name;
    size_t length = strnlen(name, room);
    if (length == room) return elf.Error("unterminated symbol name");
    if (length == 0) continue;
    if (sym.st_shndx == SHN_UNDEF) {
      out->undefined.emplace_back(name, length);
    } else if (Exported(sym)) {
      out->defined.emplace_back(name, length);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ElfSymbols> ReadElfDynamicSymbols(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  ElfImage elf(path, *std::move(bytes));
  absl::StatusOr<Elf64_Ehdr> header = ReadHeader(elf);
  if (!header.ok()) return header.status();
  absl::StatusOr<std::vector<Elf64_Shdr>> sections = ReadSections(elf, *header);
  if (!sections.ok()) return sections.status();
  ElfSymbols symbols;
  for (const Elf64_Shdr& section : *sections) {
    if (section.sh_type != SHT_DYNSYM) continue;
    if (absl::Status s = ReadSymbols(elf, *sections, section, &symbols); !s.ok()) return s;
    break;  // an object has at most one dynamic symbol table
  }
  return symbols;
}

}  // namespace kiln
