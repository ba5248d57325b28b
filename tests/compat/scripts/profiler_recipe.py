"""The "Profiling your PyTorch Module" and torch.profiler recipes: a model
whose forward names its parts with record_function (as a context manager and
a decorator), a schedule(wait, warmup, active, repeat) and its actions,
profile(activities=[ProfilerActivity.CPU], record_shapes=True,
profile_memory=True) around inference, key_averages() (grouped by input
shape too) and its table sorted by cpu_time_total, export_chrome_trace, and
a scheduled profile stepped with prof.step() calling on_trace_ready.

Only what does not depend on timing is printed: the table's column headers,
whether the named spans are among the events, and how often the handler was
called."""

import json
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule


class MyModule(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias)

    def forward(self, input, mask):
        with record_function("LINEAR PASS"):
            out = self.linear(input)
        with record_function("MASK INDICES"):
            threshold = out.sum(axis=1).mean().item()
            hi_idx = np.argwhere(mask.cpu().numpy() > threshold)
            hi_idx = torch.from_numpy(hi_idx)
        return out, hi_idx


@record_function("postprocess")
def postprocess(out):
    return out.relu().sum()


model = MyModule(50, 10)
with torch.no_grad():  # weights from a formula: the random streams differ
    w = model.linear.weight
    w.copy_(torch.arange(w.numel(), dtype=torch.float32).mul(0.37).sin().view(w.shape))
    model.linear.bias.fill_(0.1)
input = torch.linspace(-1, 1, 200 * 50).view(200, 50)
mask = torch.linspace(-2, 2, 200 * 10).view(200, 10)

# record_function outside a profiler only names the span
out, idx = model(input, mask)
print(
    "outside a profiler",
    tuple(out.shape),
    idx.dtype,
    idx.numel(),
    round(postprocess(out).item(), 2),
)
print("activities", ProfilerActivity.CPU in torch.profiler.supported_activities())
my_schedule = schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=1)
print("schedule", [my_schedule(step).name for step in range(7)])

with profile(  # noqa: SIM117 -- the recipe's nesting
    activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True
) as prof:
    with record_function("model_inference"):
        out, idx = model(input, mask)
        postprocess(out)

averages = prof.key_averages()
keys = {e.key for e in averages}
print(
    "named spans",
    sorted(k for k in keys if k.isupper() or k in ("model_inference", "postprocess")),
)
table = averages.table(sort_by="cpu_time_total", row_limit=5)
header = [h for h in table.splitlines()[1].split("  ") if h.strip()]
print("columns", [h.strip() for h in header])
shapes = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_memory_usage")
print("by shape has Input Shapes", "Input Shapes" in shapes)

with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    print(
        "chrome trace",
        "traceEvents" in trace,
        any(e.get("name") == "model_inference" for e in trace["traceEvents"]),
    )

calls = []


def trace_handler(p):
    calls.append(p.step_num)


with profile(
    activities=[ProfilerActivity.CPU],
    schedule=my_schedule,
    on_trace_ready=trace_handler,
) as p:
    for _ in range(7):
        model(input, mask)
        p.step()
print("handler called at", calls)
