#include <ember/c10/SharedMemory.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace ember::c10 {

namespace {

// file_system segments start with this header; the data follows at kHeader.
struct alignas(64) SharedHeader {
  std::atomic<int64_t> refcount;
  uint64_t nbytes;
};
constexpr size_t kHeader = 64;
static_assert(sizeof(SharedHeader) == kHeader, "header must keep the data 64-byte aligned");
static_assert(std::atomic<int64_t>::is_always_lock_free, "refcount must be usable across processes");

struct SharedContext {
  void* base = nullptr;  // start of the mapping
  size_t map_size = 0;
  int fd = -1;           // file_descriptor strategy: the memfd (owned)
  std::string name;      // file_system strategy: the shm name
  pid_t pid = getpid();  // the process that took this mapping's reference
};

void shared_deleter(void* p) {
  auto* ctx = static_cast<SharedContext*>(p);
  // A forked child inherits the mapping (and this context) without taking a reference
  // of its own: only the process that counted the mapping may uncount it, else a
  // worker dropping an inherited storage would unlink the parent's segment.
  if (!ctx->name.empty() && ctx->pid == getpid()) {
    auto* h = static_cast<SharedHeader*>(ctx->base);
    if (h->refcount.fetch_sub(1) == 1) shm_unlink(ctx->name.c_str());
  }
  if (ctx->base && ctx->map_size) munmap(ctx->base, ctx->map_size);
  if (ctx->fd >= 0) close(ctx->fd);
  delete ctx;
}

[[noreturn]] void fail_reserve(size_t nbytes, int err, const char* where) {
  throw OutOfMemoryError(
      str("unable to allocate ", nbytes, " bytes of shared memory (", where, ": ", std::strerror(err),
          "). The shared-memory filesystem is full: free space in /dev/shm, give the container more "
          "(docker run --shm-size=...), or load data without worker processes (DataLoader num_workers=0)."));
}

// Reserves the bytes now so that running out is an error here, not a SIGBUS on first write.
void reserve(int fd, size_t total, size_t nbytes) {
  if (ftruncate(fd, static_cast<off_t>(total)) != 0) fail_reserve(nbytes, errno, "ftruncate");
  const int err = posix_fallocate(fd, 0, static_cast<off_t>(total));
  if (err != 0 && err != EOPNOTSUPP && err != EINVAL) fail_reserve(nbytes, err, "posix_fallocate");
}

void* map_fd(int fd, size_t size) {
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    throw OutOfMemoryError(str("unable to map ", size, " bytes of shared memory: ", std::strerror(err)));
  }
  return base;
}

DataPtr make_data_ptr(SharedContext* ctx, size_t data_offset) {
  return DataPtr(static_cast<char*>(ctx->base) + data_offset, ctx, &shared_deleter, Device(DeviceType::CPU));
}

std::atomic<uint64_t> segment_counter{0};

}  // namespace

DataPtr allocate_shared_fd(size_t nbytes) {
  const size_t size = nbytes ? nbytes : 1;  // mmap rejects length 0
  int fd = memfd_create("ember_shared", MFD_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw Error(str("memfd_create failed: ", std::strerror(err)));
  }
  auto* ctx = new SharedContext();
  ctx->fd = fd;
  try {
    reserve(fd, size, nbytes);
    ctx->base = map_fd(fd, size);
    ctx->map_size = size;
  } catch (...) {
    shared_deleter(ctx);
    throw;
  }
  return make_data_ptr(ctx, 0);
}

DataPtr map_shared_fd(int fd, size_t nbytes) {
  struct stat st;
  EMBER_CHECK(fstat(fd, &st) == 0, "map_shared_fd: invalid file descriptor ", fd);
  EMBER_CHECK(static_cast<size_t>(st.st_size) >= nbytes, "map_shared_fd: the shared segment holds ", st.st_size,
              " bytes but ", nbytes, " were expected");
  auto* ctx = new SharedContext();
  ctx->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (ctx->fd < 0) {
    const int err = errno;
    delete ctx;
    throw Error(str("map_shared_fd: dup failed: ", std::strerror(err)));
  }
  const size_t size = nbytes ? nbytes : 1;
  try {
    ctx->base = map_fd(ctx->fd, size);
    ctx->map_size = size;
  } catch (...) {
    shared_deleter(ctx);
    throw;
  }
  return make_data_ptr(ctx, 0);
}

DataPtr allocate_shared_filename(size_t nbytes) {
  const size_t total = kHeader + nbytes;
  std::string name;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    name = str("/ember_", getpid(), "_", segment_counter.fetch_add(1));
    fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno != EEXIST) {
      const int err = errno;
      throw Error(str("shm_open(", name, ") failed: ", std::strerror(err)));
    }
  }
  EMBER_CHECK(fd >= 0, "could not create a unique shared-memory name");
  auto* ctx = new SharedContext();
  ctx->name = name;
  try {
    reserve(fd, total, nbytes);
    ctx->base = map_fd(fd, total);
    ctx->map_size = total;
  } catch (...) {
    close(fd);
    shm_unlink(name.c_str());
    ctx->name.clear();
    shared_deleter(ctx);
    throw;
  }
  close(fd);
  auto* h = new (ctx->base) SharedHeader();
  h->refcount.store(1);
  h->nbytes = nbytes;
  return make_data_ptr(ctx, kHeader);
}

DataPtr map_shared_filename(const std::string& name, size_t nbytes) {
  int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) {
    const int err = errno;
    throw Error(str("map_shared_filename: cannot open shared memory '", name, "': ", std::strerror(err),
                    " (it is unlinked when its last user lets go of it)"));
  }
  struct stat st;
  fstat(fd, &st);
  if (static_cast<size_t>(st.st_size) < kHeader + nbytes) {
    close(fd);
    throw Error(str("map_shared_filename: '", name, "' holds ", st.st_size, " bytes, too few for ", nbytes));
  }
  auto* ctx = new SharedContext();
  try {
    ctx->base = map_fd(fd, kHeader + nbytes);
    ctx->map_size = kHeader + nbytes;
  } catch (...) {
    close(fd);
    delete ctx;
    throw;
  }
  close(fd);
  static_cast<SharedHeader*>(ctx->base)->refcount.fetch_add(1);
  ctx->name = name;
  return make_data_ptr(ctx, kHeader);
}

bool is_shared(const DataPtr& p) { return p.get_deleter() == &shared_deleter; }

int shared_fd(const DataPtr& p) {
  EMBER_CHECK(is_shared(p), "storage is not in shared memory");
  return static_cast<SharedContext*>(p.get_context())->fd;
}

std::string shared_filename(const DataPtr& p) {
  EMBER_CHECK(is_shared(p), "storage is not in shared memory");
  return static_cast<SharedContext*>(p.get_context())->name;
}

}  // namespace ember::c10
