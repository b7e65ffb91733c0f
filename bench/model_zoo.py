"""The small real models that bench/models.py times and the prepared GPU check runs: pure
torch, so that the GPU machine (which has torch but not Dynamir) reads the same definitions.

models() maps each name to (module, example inputs, Dynamir options); batch 4, sequence 64 and
width 256 unless the name says otherwise.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def set_torch_threads(threads):
    """torch eager's and torch.compile's threads. Inductor's C++ kernels take their thread count
    from its own setting when they are generated, not from torch.set_num_threads: in a "1
    thread" run on 2 cores its row softmax used both (CPU time twice the wall time)."""
    import torch._inductor.config

    torch.set_num_threads(threads)
    torch._inductor.config.cpp.threads = threads


class MLP(nn.Module):
    def __init__(self, d=256, h=1024):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, h), nn.Linear(h, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SwiGLU(nn.Module):
    """Llama-style RMSNorm + SwiGLU feed-forward with a residual."""

    def __init__(self, d=512, h=1376):
        super().__init__()
        self.norm = RMSNorm(d)
        self.w1, self.w3 = nn.Linear(d, h, bias=False), nn.Linear(d, h, bias=False)
        self.w2 = nn.Linear(h, d, bias=False)

    def forward(self, x):
        h = self.norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Block(nn.Module):
    """GPT-style block: LayerNorm, qkv, causal attention with a masked_fill, GELU MLP."""

    def __init__(self, d=256, heads=4, seq=64):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (C // self.heads) ** 0.5)
        att = att.masked_fill(~self.mask[:T, :T], float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
        self.f1, self.f2, self.f3 = nn.Linear(256, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.f3(F.relu(self.f2(F.relu(self.f1(torch.flatten(x, 1))))))


class ResBlock(nn.Module):
    def __init__(self, c=32):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        return F.relu(x + self.b2(self.c2(F.relu(self.b1(self.c1(x))))))


class LSTMCell(nn.Module):
    def __init__(self, i=256, h=256):
        super().__init__()
        self.ih, self.hh = nn.Linear(i, 4 * h), nn.Linear(h, 4 * h)

    def forward(self, x, h, c):
        i, f, g, o = (self.ih(x) + self.hh(h)).chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class MoE(nn.Module):
    """Mixture of experts with top-2 routing: tokens gathered per expert, weighted sum back."""

    def __init__(self, d=256, h=512, experts=4):
        super().__init__()
        self.gate = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList(MLP(d, h) for _ in range(experts))

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])
        weights, chosen = torch.topk(F.softmax(self.gate(tokens), dim=-1), 2, dim=-1)
        out = torch.zeros_like(tokens)
        for e, expert in enumerate(self.experts):
            rows, slot = torch.where(chosen == e)
            out[rows] += weights[rows, slot, None] * expert(tokens[rows])
        return out.reshape(x.shape)


class EarlyExit(nn.Module):
    """Two MLP stages with a data-dependent exit after the first."""

    def __init__(self, d=256, classes=10, threshold=0.5):
        super().__init__()
        self.stage1, self.stage2 = MLP(d), MLP(d)
        self.head1, self.head2 = nn.Linear(d, classes), nn.Linear(d, classes)
        self.threshold = threshold

    def forward(self, x):
        h = self.stage1(x)
        p = F.softmax(self.head1(h.mean(1)), dim=-1)
        if p.max() > self.threshold:
            return p
        return F.softmax(self.head2(self.stage2(h).mean(1)), dim=-1)


def models():
    """name -> (module, inputs, Dynamir options)."""
    seq = lambda d: (torch.randn(4, 64, d),)
    return {
        "mlp": (MLP(), seq(256), {}),
        "swiglu (width 512)": (SwiGLU(), seq(512), {}),
        "block": (Block(), seq(256), {}),
        "block (width 768, seq 512, batch 1)": (
            Block(768, 12, 512), (torch.randn(1, 512, 768),), {}),
        "lenet (batch 64)": (LeNet(), (torch.randn(64, 1, 28, 28),), {}),
        "resblock (32x32x32)": (ResBlock(), (torch.randn(4, 32, 32, 32),), {}),
        "lstm cell": (LSTMCell(), tuple(torch.randn(4, 256) for _ in range(3)), {}),
        "moe top-2": (MoE(), seq(256), {"capture_control_flow": True}),
        "early exit": (EarlyExit(), seq(256), {"capture_control_flow": True}),
    }
