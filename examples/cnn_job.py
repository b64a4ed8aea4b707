"""A small CNN on synthetic 32x32 images, trained under the dlsched job agent.

Runs on CPU in seconds: ``python examples/cnn_job.py`` (single process), or
submitted with ``dlsched submit examples/cnn.yaml``.  ``args.step_time_s``
emulates the accelerator: each worker's step takes its share of that many
seconds per global batch, its real forward/backward included (it sleeps for
the rest), standing in for GPU kernel time on the emulated cluster's fake
GPUs (0 turns it off).  Padding up to a fixed time, rather than adding a fixed
sleep, keeps a job's speed independent of how many workers share the CPU, as
long as the real compute fits in the step.
"""


import torch
import torch.nn as nn
import torch.nn.functional as F

from dlsched.live.agent import TrainingAgent


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def batch(it: int, rank: int, n: int):
    # deterministic synthetic data: the same iteration gives the same samples after a restart
    g = torch.Generator().manual_seed(it * 1009 + rank)
    x = torch.randn(n, 3, 32, 32, generator=g)
    y = torch.randint(0, 10, (n,), generator=g)
    return x, y


def main():
    with TrainingAgent() as agent:
        torch.manual_seed(0)
        model = TinyCNN()
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        agent.track(model=model, optimizer=opt)
        model = agent.wrap(model)
        for it in agent.iterations(pace_s=agent.emulated_step_s()):
            x, y = batch(it, agent.rank, agent.local_batch)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
