"""The forum question that started Dynamir: "does tracing run real kernels?"

The seed's TestNet (torch, CPU) and its numpy twin are compiled with Dynamir and explained for
inputs -1 and +1. The answer printed at the end comes from these real runs.
"""

import numpy as np
import torch

import dynamir


class TestNet(torch.nn.Module):
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


def numpy_twin(x, w, b):
    x = x * 2
    if x.sum() > 0:
        x = np.sin(x)
    if x.mean() > 0:
        x = np.cos(x)
    return x @ w.T + b


def report(title, explanation, eager):
    print(f"== {title}")
    print(explanation)
    result = np.asarray(explanation.result)
    print(f"result {result}  eager {np.asarray(eager)}  "
          f"max |diff| {np.max(np.abs(result - np.asarray(eager))):.2e}")
    print()


def main():
    torch.manual_seed(0)
    model = TestNet()
    compiled = dynamir.compile(model)
    runs = {}
    for value in (-1.0, 1.0):
        x = torch.ones(3) * value
        # Inference, as the forum's program runs it: graphs compute no gradients, so with
        # autograd on (the parameters require grad) the model would run eagerly.
        with torch.no_grad():
            eager = model(x)
            runs[value] = dynamir.explain(compiled, x)
        report(f"torch TestNet, x = {value:+.0f}", runs[value], eager)

    w = model.linear.weight.detach().numpy()
    b = model.linear.bias.detach().numpy()
    twin = dynamir.compile(numpy_twin)
    for value in (-1.0, 1.0):
        x = np.full(3, value, dtype=np.float32)
        report(f"numpy twin, x = {value:+.0f}", dynamir.explain(twin, x, w, b),
               numpy_twin(x, w, b))

    neg = runs[-1.0]
    skipped = [" ".join(op for op in neg.ops_per_graph[g] if op != "dyn.constant")
               for g in neg.never_compiled]
    print("== The answer")
    print(f"Tracing ran {neg.kernels_run_during_tracing} kernels. Dynamir traced both sides of "
          f"each `if` with fake tensors: {neg.graph_count} graphs, "
          f"{neg.graph_break_count} graph breaks.")
    print(f"On x = -1 the host read {neg.host_syncs} predicates (the only real values it "
          f"needed) and never compiled the graphs of the untaken branches: "
          f"{', '.join(skipped)}.")
    print("Dynamo gives the same picture for a different reason: it breaks the graph at each "
          "data-dependent `if`, runs the predicate for real, and traces a branch only when it "
          "first runs — which is why the forum post saw no sin or cos.")


if __name__ == "__main__":
    main()
