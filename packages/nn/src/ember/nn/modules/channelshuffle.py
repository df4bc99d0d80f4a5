"""``ChannelShuffle``."""

from __future__ import annotations

from ember.aten import Tensor

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """ChannelShuffle(groups): (N, g * k, *) -> the channels regrouped, channel j*g + i <- i*k + j."""

    __constants__ = ("groups",)

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
