"""REINFORCE with a Categorical policy on a contextual bandit (the best arm is the context).

Plain PyTorch. main() also checks one log_prob gradient against its closed form
(d log pi(a) / d logits = onehot(a) - pi), computed in NumPy.
"""

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.affine1 = nn.Linear(n, 32)
        self.affine2 = nn.Linear(32, n)

    def forward(self, x):
        return torch.softmax(self.affine2(torch.relu(self.affine1(x))), dim=-1)


def main(episodes=300, n=4, batch=32):
    torch.manual_seed(543)
    policy = Policy(n)
    optimizer = optim.Adam(policy.parameters(), lr=1e-2)
    eps = np.finfo(np.float32).eps.item()
    rewards_seen = []
    for _ in range(episodes):
        ctx = torch.randint(0, n, (batch,))
        state = torch.nn.functional.one_hot(ctx, n).float()
        m = Categorical(policy(state))
        action = m.sample()
        reward = (action == ctx).float()
        rewards_seen.append(reward.mean().item())
        advantage = (reward - reward.mean()) / (reward.std() + eps)
        loss = (-m.log_prob(action) * advantage).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # the score function against NumPy
    logits = torch.tensor([[0.3, -1.0, 2.0, 0.5]], requires_grad=True)
    d = Categorical(logits=logits)
    d.log_prob(torch.tensor([2])).sum().backward()
    p = np.exp(logits.detach().numpy()[0]) / np.exp(logits.detach().numpy()[0]).sum()
    ref = np.eye(4)[2] - p
    return {
        "first_reward": float(np.mean(rewards_seen[:10])),
        "last_reward": float(np.mean(rewards_seen[-10:])),
        "score_max_err": float(np.abs(logits.grad.numpy()[0] - ref).max()),
        "entropy_last": float(m.entropy().mean()),
    }


if __name__ == "__main__":
    print(main())
