"""ember.vision.models (torchvision.models): classification networks with torchvision's
module names, so that ``model.load_state_dict(torchvision_state_dict)`` works. No weights
are downloaded: ``weights`` must be None."""

from __future__ import annotations

from .alexnet import AlexNet, alexnet
from .mobilenetv2 import MobileNetV2, mobilenet_v2
from .resnet import ResNet, resnet18, resnet34, resnet50
from .squeezenet import SqueezeNet, squeezenet1_1
from .vgg import VGG, vgg11

__all__ = [
    "VGG",
    "AlexNet",
    "MobileNetV2",
    "ResNet",
    "SqueezeNet",
    "alexnet",
    "mobilenet_v2",
    "resnet18",
    "resnet34",
    "resnet50",
    "squeezenet1_1",
    "vgg11",
]
