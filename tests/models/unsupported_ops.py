"""Modules that aotc-export-torch must refuse with exit code 3 and a message naming the fx
node; tests/models/model_test.py --case unsupported holds the expected messages."""

import torch
import torch.nn as nn


class SortsChannels(nn.Module):  # an op outside the schema
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return torch.sort(self.conv(x), dim=1)[0]


class GeluActivation(nn.Module):  # a torch.nn module outside the schema
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.conv(x))


class ReflectPadConv(nn.Module):  # a supported module with an unsupported setting
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect")

    def forward(self, x):
        return self.conv(x)


class ShapeIntoArithmetic(nn.Module):  # a shape value used as data, not for view
    def forward(self, x):
        return x * x.shape[1]


class ReadAfterInPlace(nn.Module):  # the export has values, not storage: refused
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        y = x * 2.0
        self.relu(y)
        return y + x


class DataDependentBranch(nn.Module):  # not traceable by torch.fx
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x
