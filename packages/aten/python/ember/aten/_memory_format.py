"""Memory formats: contiguous_format, preserve_format, channels_last, channels_last_3d."""

from ._C import memory_format

contiguous_format = memory_format.contiguous_format
preserve_format = memory_format.preserve_format
channels_last = memory_format.channels_last
channels_last_3d = memory_format.channels_last_3d
