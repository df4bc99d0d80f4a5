#pragma once
// StorageImpl: the bytes behind one or more tensors. It knows how many bytes it
// holds, which allocator made them (so it can grow) and which device they live
// on; it knows nothing of dtype or shape (that is TensorImpl's job).

#include <cstddef>
#include <string>

#include <ember/c10/Allocator.h>
#include <ember/c10/util/intrusive_ptr.h>

namespace ember::c10 {

class EMBER_C10_API StorageImpl : public intrusive_ptr_target {
 public:
  // Adopts memory: `allocator` may be null for memory ember did not allocate
  // (NumPy, DLPack); such a storage cannot be resized.
  StorageImpl(size_t nbytes, DataPtr data_ptr, Allocator* allocator, bool resizable);
  // Allocates nbytes from `allocator`.
  StorageImpl(size_t nbytes, Allocator* allocator, bool resizable = true);
  EMBER_DISABLE_COPY_AND_ASSIGN(StorageImpl);

  static intrusive_ptr<StorageImpl> make(size_t nbytes, Device device, bool resizable = true);

  void* data() const { return data_ptr_.get(); }
  const DataPtr& data_ptr() const { return data_ptr_; }
  DataPtr set_data_ptr(DataPtr&& p);  // returns the old one
  size_t nbytes() const { return nbytes_; }
  Device device() const { return data_ptr_.device(); }
  Allocator* allocator() const { return allocator_; }
  bool resizable() const { return resizable_; }
  void set_resizable(bool r) { resizable_ = r; }

  // Grows or shrinks to nbytes, keeping min(old, new) bytes. RuntimeError if not resizable.
  void resize(size_t nbytes);

  // Moves a CPU storage's bytes into shared memory in place (no-op if already shared).
  // strategy: "file_descriptor" or "file_system".
  void share_memory_(const std::string& strategy = "file_descriptor");
  bool is_shared() const;

 private:
  DataPtr data_ptr_;
  size_t nbytes_;
  Allocator* allocator_;
  bool resizable_;
};

}  // namespace ember::c10
