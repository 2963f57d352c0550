#include "elf_dynsym.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace conformance {
namespace {

// A read-only view of the whole file with bounds-checked access: a damaged
// plugin must produce an error message, not crash the runner.
class FileView {
 public:
  explicit FileView(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      size_ = static_cast<size_t>(st.st_size);
      void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      data_ = p == MAP_FAILED ? nullptr : static_cast<const unsigned char*>(p);
    }
    ::close(fd);
  }
  ~FileView() {
    if (data_) munmap(const_cast<unsigned char*>(data_), size_);
  }
  bool ok() const { return data_ != nullptr; }
  bool fits(uint64_t off, uint64_t len) const { return off <= size_ && len <= size_ - off; }
  template <class T>
  const T* at(uint64_t off) const {
    return fits(off, sizeof(T)) ? reinterpret_cast<const T*>(data_ + off) : nullptr;
  }
  // NUL-terminated string at `off` inside [base, base+len).
  std::string str(uint64_t base, uint64_t len, uint64_t off) const {
    if (!fits(base, len) || off >= len) return {};
    const char* s = reinterpret_cast<const char*>(data_ + base + off);
    return std::string(s, strnlen(s, len - off));
  }

 private:
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

template <class Ehdr, class Shdr, class Phdr, class Sym, class Dyn>
struct Elf {
  const FileView& f;
  const Ehdr* eh;
  ElfInfo& out;

  const Shdr* section(size_t i) const {
    if (i >= eh->e_shnum || eh->e_shentsize < sizeof(Shdr)) return nullptr;
    return f.at<Shdr>(eh->e_shoff + i * eh->e_shentsize);
  }

  void read_program_headers() {
    for (size_t i = 0; i < eh->e_phnum && eh->e_phentsize >= sizeof(Phdr); ++i) {
      const Phdr* ph = f.at<Phdr>(eh->e_phoff + i * eh->e_phentsize);
      if (ph && ph->p_type == PT_GNU_STACK) {
        out.has_gnu_stack = true;
        out.exec_stack = (ph->p_flags & PF_X) != 0;
      }
    }
  }

  void read_dynamic(const Shdr& sh) {
    for (uint64_t off = 0; off + sizeof(Dyn) <= sh.sh_size; off += sizeof(Dyn)) {
      const Dyn* d = f.at<Dyn>(sh.sh_offset + off);
      if (!d || d->d_tag == DT_NULL) break;
      if (d->d_tag == DT_TEXTREL) out.textrel = true;
      if (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL)) out.textrel = true;
    }
  }

  // Version definitions (e.g. FLAGOS_1 from the version script) appear in
  // .dynsym as absolute symbols; they are not exports of code or data.
  void read_verdefs(const Shdr& sh) {
    const Shdr* strs = section(sh.sh_link);
    if (!strs) return;
    uint64_t off = sh.sh_offset;
    for (uint64_t n = 0; n < sh.sh_info && n < 4096; ++n) {
      const Elf64_Verdef* vd = f.at<Elf64_Verdef>(off);  // same layout in ELF32
      if (!vd) return;
      const Elf64_Verdaux* aux = f.at<Elf64_Verdaux>(off + vd->vd_aux);
      // The base definition names the file itself, not a symbol version.
      if (aux && !(vd->vd_flags & VER_FLG_BASE))
        out.version_defs.push_back(f.str(strs->sh_offset, strs->sh_size, aux->vda_name));
      if (vd->vd_next == 0) return;
      off += vd->vd_next;
    }
  }

  bool is_version_def(const Sym& s, const std::string& name) const {
    return s.st_shndx == SHN_ABS &&
           std::find(out.version_defs.begin(), out.version_defs.end(), name) !=
               out.version_defs.end();
  }

  static bool exported_kind(const Sym& s) {
    int bind = ELF64_ST_BIND(s.st_info), type = ELF64_ST_TYPE(s.st_info);
    bool global = bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE;
    bool code_or_data = type == STT_FUNC || type == STT_OBJECT || type == STT_GNU_IFUNC ||
                        type == STT_TLS || type == STT_COMMON;
    return global && code_or_data && s.st_shndx != SHN_UNDEF;
  }

  void read_dynsym(const Shdr& sh) {
    const Shdr* strs = section(sh.sh_link);
    if (!strs || sh.sh_entsize < sizeof(Sym)) {
      out.error = ".dynsym has no string table";
      return;
    }
    for (uint64_t i = 1; i < sh.sh_size / sh.sh_entsize; ++i) {
      const Sym* s = f.at<Sym>(sh.sh_offset + i * sh.sh_entsize);
      if (!s) break;
      if (!exported_kind(*s)) continue;
      std::string name = f.str(strs->sh_offset, strs->sh_size, s->st_name);
      if (is_version_def(*s, name)) continue;
      out.exported.push_back({name, ELF64_ST_BIND(s->st_info), ELF64_ST_TYPE(s->st_info)});
    }
  }

  void run() {
    read_program_headers();
    const Shdr* dynsym = nullptr;
    for (size_t i = 0; i < eh->e_shnum; ++i) {
      const Shdr* sh = section(i);
      if (!sh) break;
      if (sh->sh_type == SHT_DYNSYM) dynsym = sh;
      if (sh->sh_type == SHT_GNU_verdef) read_verdefs(*sh);
      if (sh->sh_type == SHT_DYNAMIC) read_dynamic(*sh);
    }
    if (!dynsym) {
      out.error = "no .dynsym section (section headers stripped?)";
      return;
    }
    read_dynsym(*dynsym);
  }
};

}  // namespace

ElfInfo read_elf_exports(const std::string& path) {
  ElfInfo out;
  FileView f(path);
  const unsigned char* ident =
      f.ok() && f.fits(0, EI_NIDENT) ? f.at<unsigned char>(0) : nullptr;
  if (!ident) {
    out.error = "cannot read " + path;
  } else if (std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    out.error = "not an ELF file";
  } else if (ident[EI_CLASS] == ELFCLASS64 && f.at<Elf64_Ehdr>(0)) {
    Elf<Elf64_Ehdr, Elf64_Shdr, Elf64_Phdr, Elf64_Sym, Elf64_Dyn>{f, f.at<Elf64_Ehdr>(0), out}
        .run();
  } else if (ident[EI_CLASS] == ELFCLASS32 && f.at<Elf32_Ehdr>(0)) {
    Elf<Elf32_Ehdr, Elf32_Shdr, Elf32_Phdr, Elf32_Sym, Elf32_Dyn>{f, f.at<Elf32_Ehdr>(0), out}
        .run();
  } else {
    out.error = "unknown ELF class";
  }
  return out;
}

const char* elf_type_name(int stt) {
  switch (stt) {
    case STT_FUNC: return "FUNC";
    case STT_OBJECT: return "OBJECT";
    case STT_GNU_IFUNC: return "IFUNC";
    case STT_TLS: return "TLS";
    case STT_COMMON: return "COMMON";
    default: return "OTHER";
  }
}

}  // namespace conformance
