"""Models shared by the tests."""

import torch


class TestNet(torch.nn.Module):
    """The seed program from the forum thread."""

    __test__ = False  # a model, not a pytest class

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)

    def forward(self, x):
        x = x * 2
        if x.sum() > 0:
            x = torch.sin(x)
        if x.mean() > 0:
            x = torch.cos(x)
        x = self.linear(x)
        return x
