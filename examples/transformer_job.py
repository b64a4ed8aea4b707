"""A small transformer language model on synthetic token streams, under the dlsched job agent.

Runs on CPU in seconds: ``python examples/transformer_job.py``, or
``dlsched submit examples/transformer.yaml``.  ``args.step_time_s`` emulates
accelerator time as in cnn_job.py.
"""


import torch
import torch.nn as nn
import torch.nn.functional as F

from dlsched.live.agent import TrainingAgent

VOCAB, D_MODEL, HEADS, FFN, LAYERS, SEQ = 256, 64, 4, 128, 2, 32


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Parameter(torch.zeros(SEQ, D_MODEL))
        layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, batch_first=True)
        self.body = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.head = nn.Linear(D_MODEL, VOCAB)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(SEQ), persistent=False)

    def forward(self, tokens):
        h = self.emb(tokens) + self.pos
        return self.head(self.body(h, mask=self.mask, is_causal=True))


def batch(it: int, rank: int, n: int):
    g = torch.Generator().manual_seed(it * 7919 + rank)
    seq = torch.randint(0, VOCAB, (n, SEQ + 1), generator=g)
    return seq[:, :-1], seq[:, 1:]


def main():
    with TrainingAgent() as agent:
        torch.manual_seed(0)
        model = TinyLM()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        agent.track(model=model, optimizer=opt)
        model = agent.wrap(model)
        for it in agent.iterations(pace_s=agent.emulated_step_s()):
            x, y = batch(it, agent.rank, agent.local_batch)
            loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
