"""A small PyTorch module for the installed exporter's test (package_test.py --case exporter)."""
import torch.nn as nn


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 5 * 5, 3)

    def forward(self, x):
        x = self.pool(self.bn(self.conv(x)).relu())
        return self.fc(x.flatten(1))
