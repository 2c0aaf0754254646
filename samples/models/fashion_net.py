"""FashionNet: the small residual CNN of the camera samples (1x28x28 grey -> 10 logits).

Conv-BN-ReLU blocks and one residual block; ~30k parameters, ~4 MFLOP per image. Kept in
its own file so that tools/aotc-export-torch --module samples/models/fashion_net.py:FashionNet
can import it without the training code.
"""

import torch.nn as nn


def conv_bn_relu(in_channels, out_channels, stride):
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(inplace=True),
    )


class ResidualBlock(nn.Module):
    """conv-bn-relu, conv-bn, plus the input, then relu (ResNet's basic block)."""

    def __init__(self, channels):
        super().__init__()
        self.conv1 = conv_bn_relu(channels, channels, 1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn2(self.conv2(self.conv1(x))) + x)


class FashionNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn_relu(1, 16, 1),    # 28x28
            conv_bn_relu(16, 32, 2),   # 14x14
            ResidualBlock(32),
            conv_bn_relu(32, 64, 2),   # 7x7
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.classifier = nn.Linear(64, 10)

    def forward(self, x):
        return self.classifier(self.flatten(self.pool(self.features(x))))
