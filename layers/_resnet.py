"""ResNet-18 with torchvision's structure and parameter shapes (so torch weights load one to one)."""

from dataclasses import dataclass

from autodiff.nn import functional as F

from ._chain import Chain, forward
from ._conv import Conv2d
from ._dense import Dense
from ._norm import BatchNorm
from ._pool import MaxPool2d, global_avg_pool


@dataclass
class BasicBlock:
    """Two 3×3 conv-BN pairs with a ReLU between, added to the (optionally downsampled) input."""

    conv1: Conv2d
    bn1: BatchNorm
    conv2: Conv2d
    bn2: BatchNorm
    downsample: object = None

    @classmethod
    def init(cls, c_in, c_out, stride, seed):
        down = None
        if stride != 1 or c_in != c_out:
            down = Chain([Conv2d.init(c_in, c_out, 1, stride, 0, bias=False, seed=seed + 2), BatchNorm.init(c_out)])
        return cls(Conv2d.init(c_in, c_out, 3, stride, 1, bias=False, seed=seed), BatchNorm.init(c_out),
                   Conv2d.init(c_out, c_out, 3, 1, 1, bias=False, seed=seed + 1), BatchNorm.init(c_out), down)

    def forward(self, x, train=False):
        y, bn1 = self.bn1.forward_relu(self.conv1(x), train)
        skip, down = (x, None) if self.downsample is None else forward(self.downsample, x, train)
        y, bn2 = self.bn2.forward_relu(self.conv2(y), train, skip)  # relu(bn2(·) + skip) in one pass
        return y, BasicBlock(self.conv1, bn1, self.conv2, bn2, down)

    def __call__(self, x):
        return self.forward(x)[0]


@dataclass
class ResNet:
    """conv1 → bn1 → ReLU → max pool → four stages of BasicBlocks → global average pool → fc."""

    conv1: Conv2d
    bn1: BatchNorm
    layer1: list
    layer2: list
    layer3: list
    layer4: list
    fc: Dense

    def forward(self, x, train=False):
        y, bn1 = self.bn1.forward(self.conv1(x), train)
        # relu(max pool) is max pool(relu), value and gradient alike (a max commutes with a rising function), and
        # keeps less: the max pool keeps one byte per output, the ReLU a quarter of the image it would have kept
        y = F.relu(MaxPool2d(3, 2, 1)(y))
        stages = []
        for stage in (self.layer1, self.layer2, self.layer3, self.layer4):
            blocks = []
            for block in stage:
                y, block = block.forward(y, train)
                blocks.append(block)
            stages.append(blocks)
        return self.fc(global_avg_pool(y)), ResNet(self.conv1, bn1, *stages, self.fc)

    def __call__(self, x):
        return self.forward(x)[0]


def resnet18(num_classes=1000, seed=0):
    """ResNet-18; parameter names and shapes match ``torchvision.models.resnet18`` exactly.

    >>> import traversal
    >>> model = resnet18(10)
    >>> len(traversal.trainables(model)), sum(p.size for p in traversal.trainables(model))
    (62, 11181642)
    """
    stages, c_in, seed_k = [], 64, seed + 10
    for c_out, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        stages.append([BasicBlock.init(c_in, c_out, stride, seed_k), BasicBlock.init(c_out, c_out, 1, seed_k + 3)])
        c_in, seed_k = c_out, seed_k + 6
    conv1 = Conv2d.init(3, 64, 7, 2, 3, bias=False, seed=seed)
    return ResNet(conv1, BatchNorm.init(64), *stages, Dense.init(512, num_classes, seed=seed + 1))


