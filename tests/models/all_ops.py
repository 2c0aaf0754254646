"""A small module that exercises every op of the aotc schema (and the ways PyTorch spells them),
for tests/models/model_test.py --case module. Input: 1x3x20x20. Comments give output shapes."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class AllOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.grouped = nn.Conv2d(16, 16, 3, padding=1, groups=4, bias=False)
        self.grouped_bn = nn.BatchNorm2d(16)  # conv without bias -> BN: folds into the conv
        self.relu6 = nn.ReLU6(inplace=True)
        self.gain = nn.Parameter(torch.rand(1, 16, 1, 1) + 0.5)
        self.shift = nn.Parameter(torch.randn(16, 1, 1) * 0.1)
        self.depthwise = nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16)
        self.hardswish = nn.Hardswish()
        self.dilated = nn.Conv2d(16, 8, 3, padding=2, dilation=2)
        self.hardtanh = nn.Hardtanh(-0.5, 0.75)
        self.same = nn.Conv2d(16, 8, (2, 3), padding="same")  # even kernel: asymmetric padding
        self.plain_bn = nn.BatchNorm2d(16, affine=False)  # after a concat: stays an affine op
        self.max_pool = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.avg_pool = nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)
        self.adaptive = nn.AdaptiveAvgPool2d((3, 5))  # from 6x7: uneven, overlapping windows
        self.flatten = nn.Flatten()
        self.features_bn = nn.BatchNorm1d(256)
        self.dropout = nn.Dropout(0.3)
        self.fc = nn.Linear(256, 10)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):                                   # [1,3,20,20]
        x = F.relu(self.stem(x), inplace=True)              # [1,16,20,20]
        y = self.relu6(self.grouped_bn(self.grouped(x)))
        x = x + y * self.gain + self.shift                  # broadcasting mul and add
        d = self.hardswish(self.depthwise(x))               # [1,16,10,10]
        a = self.hardtanh(self.dilated(d))                  # [1,8,10,10]
        b = torch.sigmoid(self.same(d)).mul(a) + 0.25       # Tensor.mul, scalar add
        c = self.plain_bn(torch.cat([a, b], dim=1))         # [1,16,10,10]
        c = F.pad(c, (1, 2, 0, 2), value=0.5)               # [1,16,12,13]
        m = self.max_pool(c)                                # [1,16,6,6]: 6 rows only with ceil_mode
        v = self.avg_pool(c)                                # [1,16,6,7]
        p = self.flatten(self.adaptive(v))                  # [1,240]
        g = torch.add(m, self.shift).mean((2, 3))           # [1,16]: global pool + reshape
        h = self.dropout(self.features_bn(torch.cat([p, g], 1)))       # [1,256]
        probs = self.softmax(self.fc(h))                    # [1,10]
        features = v.view(v.size(0), -1)                    # [1,672]
        return probs, F.dropout(features, 0.1, training=self.training) * 0.5
