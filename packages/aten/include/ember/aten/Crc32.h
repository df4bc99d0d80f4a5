#pragma once
// CRC-32 as zlib's crc32 (the zip format's checksum; polynomial 0x04C11DB7, reflected,
// initial value and final xor 0xFFFFFFFF): crc32(data, n, crc32(prev...)) continues a
// running checksum. On x86-64 CPUs with PCLMULQDQ it folds 64 bytes per step with
// carry-less multiplies (~10x zlib's table-driven loop), with VPCLMULQDQ on AVX2
// registers 128 bytes per step (twice that again); elsewhere slice-by-8 tables.
// ember.aten.load checks every record with it.

#include <cstddef>
#include <cstdint>

namespace ember::at {

uint32_t crc32(const void* data, size_t n, uint32_t crc = 0);
// Copies src[0, n) to dst (not overlapping) and returns crc32 of those bytes, in one pass.
uint32_t copy_crc32(void* dst, const void* src, size_t n, uint32_t crc = 0);

}  // namespace ember::at
