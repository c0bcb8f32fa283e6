#include "io/chunk_reader.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace mi::io {

namespace {
constexpr size_t kGzipInputBuffer = size_t{1} << 20;
}  // namespace

struct ChunkReader::ZState {
  z_stream stream{};
  bool initialised = false;
  ~ZState() {
    if (initialised) inflateEnd(&stream);
  }
};

// Read-ahead: a thread fills the slots in turn while the caller parses the
// chunk it was handed; the slot handed out last stays the caller's until
// its next call. Counters the caller sees are those of the chunks handed
// out, not of the ones read ahead.
struct ChunkReader::ReadAhead {
  struct Slot {
    std::vector<char> bytes;
    size_t size = 0;
    uint64_t file_bytes_read = 0;
    uint64_t bytes_produced = 0;
  };
  std::vector<Slot> slots;
  std::mutex mutex;
  std::condition_variable changed;
  size_t filled = 0;    // slots filled so far (the producer's next: % size)
  size_t consumed = 0;  // slots handed out so far
  bool done = false;    // end of file, or `error`
  bool stop = false;
  Status error;
  std::thread thread;
};

StatusOr<std::unique_ptr<ChunkReader>> ChunkReader::OpenReadAhead(
    const std::string& path, size_t chunk_size, MemoryBudget* budget,
    size_t depth) {
  MI_ASSIGN_OR_RETURN(std::unique_ptr<ChunkReader> r,
                      Open(path, chunk_size, budget));
  // Without room in the budget for more buffers, it reads in Next(): the
  // same bytes, only not ahead.
  if (depth > 0) (void)r->StartReadAhead(depth);
  return r;
}

StatusOr<std::unique_ptr<ChunkReader>> ChunkReader::Open(
    const std::string& path, size_t chunk_size, MemoryBudget* budget) {
  std::unique_ptr<ChunkReader> r(new ChunkReader(budget));
  r->path_ = path;
  r->chunk_size_ = chunk_size;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFoundError(path + ": no such file");
    return IoError(path + ": cannot stat: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    return InvalidArgumentError(path + ": is a directory, expected a file");
  }
  r->file_size_ = static_cast<uint64_t>(st.st_size);
  r->file_ = std::fopen(path.c_str(), "rb");
  if (r->file_ == nullptr) {
    return IoError(path + ": cannot open: " + std::strerror(errno));
  }
  char magic[2];
  MI_ASSIGN_OR_RETURN(size_t got, r->ReadRaw(magic, 2));
  r->pending_head_.assign(magic, got);
  if (got == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
      static_cast<unsigned char>(magic[1]) == 0x8b) {
    r->is_gzip_ = true;
    if (!r->buffers_charge_.Set(chunk_size + kGzipInputBuffer)) {
      return r->buffers_charge_.LimitError(
          path, "the read buffers (" +
                    FormatMemorySize(chunk_size + kGzipInputBuffer) + ")");
    }
    r->z_ = std::make_unique<ZState>();
    // 15 + 32: zlib or gzip header, detected automatically.
    if (inflateInit2(&r->z_->stream, 15 + 32) != Z_OK) {
      return InternalError("zlib inflateInit2 failed");
    }
    r->z_->initialised = true;
    r->in_buffer_.resize(kGzipInputBuffer);
  } else if (!r->buffers_charge_.Set(chunk_size)) {
    return r->buffers_charge_.LimitError(
        path, "the read buffer (" + FormatMemorySize(chunk_size) + ")");
  }
  r->out_buffer_.resize(chunk_size);
  return r;
}

ChunkReader::ChunkReader(MemoryBudget* budget) : buffers_charge_(budget) {}

ChunkReader::~ChunkReader() {
  if (read_ahead_ != nullptr) {
    {
      std::lock_guard<std::mutex> lock(read_ahead_->mutex);
      read_ahead_->stop = true;
    }
    read_ahead_->changed.notify_all();
    read_ahead_->thread.join();
  }
  if (file_ != nullptr) std::fclose(file_);
}

StatusOr<size_t> ChunkReader::ReadRaw(char* dst, size_t n) {
  size_t got = std::fread(dst, 1, n, file_);
  if (got < n && std::ferror(file_)) {
    return IoError(path_ + ": read failed: " + std::strerror(errno));
  }
  file_bytes_read_ += got;
  return got;
}

StatusOr<std::string_view> ChunkReader::Next() {
  if (read_ahead_ != nullptr) return NextReadAhead();
  MI_ASSIGN_OR_RETURN(size_t size, Fill(out_buffer_.data()));
  return std::string_view(out_buffer_.data(), size);
}

StatusOr<size_t> ChunkReader::Fill(char* out) {
  if (!is_gzip_) {
    size_t used = 0;
    if (!pending_head_.empty()) {
      std::memcpy(out, pending_head_.data(), pending_head_.size());
      used = pending_head_.size();
      pending_head_.clear();
    }
    MI_ASSIGN_OR_RETURN(size_t got, ReadRaw(out + used, chunk_size_ - used));
    used += got;
    bytes_produced_ += used;
    return used;
  }
  if (gzip_done_) return size_t{0};
  z_stream& zs = z_->stream;
  zs.next_out = reinterpret_cast<Bytef*>(out);
  zs.avail_out = static_cast<uInt>(chunk_size_);
  while (zs.avail_out > 0) {
    if (zs.avail_in == 0) {
      size_t got;
      if (!pending_head_.empty()) {
        std::memcpy(in_buffer_.data(), pending_head_.data(),
                    pending_head_.size());
        got = pending_head_.size();
        pending_head_.clear();
      } else {
        MI_ASSIGN_OR_RETURN(got, ReadRaw(in_buffer_.data(), in_buffer_.size()));
      }
      if (got == 0) {
        // The stream ended before gzip's trailer: report, do not guess.
        return MalformedInputError(
            path_ + "@byte " + std::to_string(file_bytes_read_) +
            ": gzip stream is truncated; expected more compressed data");
      }
      zs.next_in = reinterpret_cast<Bytef*>(in_buffer_.data());
      zs.avail_in = static_cast<uInt>(got);
    }
    int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members are valid gzip; continue if more follows.
      if (zs.avail_in == 0) {
        char probe;
        MI_ASSIGN_OR_RETURN(size_t got, ReadRaw(&probe, 1));
        if (got == 0) {
          gzip_done_ = true;
          break;
        }
        pending_head_.assign(&probe, 1);
      }
      inflateReset(&zs);
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return MalformedInputError(
          path_ + "@byte " + std::to_string(file_bytes_read_) +
          ": corrupt gzip data (" + (zs.msg ? zs.msg : "inflate error") + ")");
    }
  }
  size_t produced = chunk_size_ - zs.avail_out;
  bytes_produced_ += produced;
  return produced;
}

Status ChunkReader::StartReadAhead(size_t depth) {
  auto ra = std::make_unique<ReadAhead>();
  // depth slots being read ahead, plus the one the caller holds.
  ra->slots.resize(depth + 1);
  for (ReadAhead::Slot& slot : ra->slots) slot.bytes.resize(chunk_size_);
  if (!buffers_charge_.Add(depth * chunk_size_)) {
    return buffers_charge_.LimitError(
        path_, "the read-ahead buffers (" +
                   FormatMemorySize(depth * chunk_size_) + ")");
  }
  out_buffer_ = std::vector<char>();  // the slots replace it
  read_ahead_ = std::move(ra);
  ReadAhead* r = read_ahead_.get();
  r->thread = std::thread([this, r] {
    for (;;) {
      size_t index;
      {
        std::unique_lock<std::mutex> lock(r->mutex);
        // Never overwrite the slot the caller holds (consumed - 1) or one
        // not yet handed out.
        r->changed.wait(lock, [r] {
          return r->stop || r->filled - r->consumed + 1 < r->slots.size();
        });
        if (r->stop) return;
        index = r->filled % r->slots.size();
      }
      ReadAhead::Slot& slot = r->slots[index];
      StatusOr<size_t> got = Fill(slot.bytes.data());
      std::lock_guard<std::mutex> lock(r->mutex);
      if (!got.ok()) {
        r->error = got.status();
        r->done = true;
      } else {
        slot.size = *got;
        slot.file_bytes_read = file_bytes_read_;
        slot.bytes_produced = bytes_produced_;
        ++r->filled;
        if (*got == 0) r->done = true;
      }
      r->changed.notify_all();
      if (r->done) return;
    }
  });
  return Status::Ok();
}

StatusOr<std::string_view> ChunkReader::NextReadAhead() {
  ReadAhead* r = read_ahead_.get();
  std::unique_lock<std::mutex> lock(r->mutex);
  if (r->consumed > 0 &&
      r->slots[(r->consumed - 1) % r->slots.size()].size == 0) {
    return std::string_view();  // past the end already
  }
  r->changed.wait(lock, [r] { return r->filled > r->consumed || r->done; });
  if (r->filled == r->consumed) {  // done with nothing more: an error
    return r->error.ok() ? Status(InternalError(path_ + ": read-ahead ended"))
                         : r->error;
  }
  ReadAhead::Slot& slot = r->slots[r->consumed % r->slots.size()];
  ++r->consumed;
  consumed_file_bytes_read_ = slot.file_bytes_read;
  consumed_bytes_produced_ = slot.bytes_produced;
  r->changed.notify_all();  // the slot handed out before is free again
  return std::string_view(slot.bytes.data(), slot.size);
}

StatusOr<std::string> ReadDecompressedHead(const std::string& path,
                                           size_t max_bytes) {
  MI_ASSIGN_OR_RETURN(auto reader, ChunkReader::Open(path, max_bytes));
  auto chunk = reader->Next();
  if (!chunk.ok()) {
    // A truncated gzip still has a readable head; only fail on no data.
    return std::move(chunk).status();
  }
  return std::string(*chunk);
}

StatusOr<std::string> ReadDecompressedFile(const std::string& path,
                                           MemoryCharge* held) {
  MemoryCharge local;
  MemoryCharge* charge = held != nullptr ? held : &local;
  MI_ASSIGN_OR_RETURN(auto reader,
                      ChunkReader::Open(path, ChunkReader::kDefaultChunkSize,
                                        &charge->budget()));
  std::string out;
  const uint64_t before = charge->bytes();
  while (true) {
    MI_ASSIGN_OR_RETURN(std::string_view chunk, reader->Next());
    if (chunk.empty()) break;
    // What the string will hold after the append: growth doubles it.
    size_t needed = out.size() + chunk.size();
    size_t capacity = needed <= out.capacity()
                          ? out.capacity()
                          : std::max(needed, 2 * out.capacity());
    if (!charge->Set(before + capacity)) {
      charge->Set(before);  // the text is dropped with the error
      return charge->LimitError(
          path + "@byte " + std::to_string(out.size()),
          "the decompressed text (" + FormatMemorySize(needed) +
              " so far, of " + FormatMemorySize(reader->file_size()) +
              (reader->is_gzip() ? " compressed)" : " on disk)"));
    }
    out.reserve(capacity);
    out.append(chunk);
  }
  return out;
}

}  // namespace mi::io
