"""REINFORCE in the shape of pytorch/examples reinforcement_learning/reinforce.py:
a Policy network (Linear, Dropout, ReLU, softmax) whose select_action builds a
torch.distributions.Categorical, keeps each step's log_prob in
policy.saved_log_probs, and finish_episode's discounted returns normalised by
their mean and std (plus eps = np.finfo(np.float32).eps.item()), the policy
loss summed with torch.cat(...).sum(), and the running reward printed every
log_interval episodes. The environment is a corridor written in NumPy in place
of gym's CartPole. Where the example samples with m.sample(), the episodes here
draw each action with NumPy's generator from the policy's probabilities (the
same distribution), so PyTorch and compat, whose random streams differ, play
the same episodes; Categorical's own sample() is checked on its own below."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

torch.manual_seed(543)
gamma, log_interval = 0.99, 10


class Corridor:
    """Walk from cell 0 to cell SIZE - 1 within MAX_STEPS: +1 a step until the
    goal (as CartPole's reward for staying up), -0.1 for bumping a wall."""

    SIZE, MAX_STEPS = 6, 20

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.pos, self.t = int(self.rng.randint(0, 2)), 0
        return self.obs(), {}

    def obs(self):
        state = np.zeros(self.SIZE + 1, dtype=np.float32)
        state[self.pos] = 1.0
        state[-1] = self.t / self.MAX_STEPS
        return state

    def step(self, action):
        self.t += 1
        move = 1 if action == 1 else -1
        reward = np.float64(0.0)  # a NumPy environment's rewards are NumPy's
        if 0 <= self.pos + move < self.SIZE:
            self.pos += move
        else:
            reward = -0.1
        done = self.pos == self.SIZE - 1
        reward += 10.0 if done else -0.2
        truncated = self.t >= self.MAX_STEPS
        return self.obs(), reward, done, truncated, {}


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(Corridor.SIZE + 1, 16)
        self.dropout = nn.Dropout(p=0.0)
        self.affine2 = nn.Linear(16, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
with torch.no_grad():
    for i, p in enumerate(policy.parameters()):
        p.copy_(torch.arange(p.numel(), dtype=torch.float32).mul(0.83 + 0.41 * i)
                .cos().mul(0.3).view(p.shape))  # fmt: skip
optimizer = optim.Adam(policy.parameters(), lr=2e-2)
eps = np.finfo(np.float32).eps.item()
pick = np.random.RandomState(7)


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    # the example: action = m.sample()
    p = probs.detach().numpy()[0].astype(np.float64)
    action = torch.tensor([pick.choice(2, p=p / p.sum())])
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R = 0
    policy_loss = []
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)  # float64: the rewards are np.float64
    dtypes.add(str(returns.dtype))
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns, strict=True):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss.item()


env = Corridor(seed=543)
running_reward = -4
dtypes = set()
for i_episode in range(1, 61):
    state, _ = env.reset()
    ep_reward = 0
    for _t in range(1, 10000):
        action = select_action(state)
        state, reward, done, truncated, _ = env.step(action)
        policy.rewards.append(reward)
        ep_reward += reward
        if done or truncated:
            break
    running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
    loss = finish_episode()
    if i_episode % log_interval == 0:
        print(f"Episode {i_episode}\tLast reward: {ep_reward:.2f}\t"
              f"Average reward: {running_reward:.2f}\tsteps {_t}")  # fmt: skip
print("learned to walk right", running_reward > 0, "returns", sorted(dtypes))
print(f"last loss {loss:.4f}", type(running_reward).__name__)

with torch.no_grad():
    probs = policy(torch.from_numpy(np.eye(7, dtype=np.float32)[:6]))
print("p(right) per cell", [round(v, 2) for v in probs[:, 1].tolist()])

# Categorical itself: sample, log_prob, entropy, batch shapes, logits.
m = Categorical(torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]))
print("batch_shape", m.batch_shape, "event_shape", m.event_shape)
print("entropy", [round(v, 4) for v in m.entropy().tolist()])
a = m.sample()
print("sample", a.shape, a.dtype, bool(((a >= 0) & (a < 3)).all()))
print("log_prob matches", torch.allclose(m.log_prob(a), m.probs.log().gather(
    1, a.unsqueeze(1)).squeeze(1)))  # fmt: skip
many = m.sample((4000,))
print("samples", tuple(many.shape), "frequencies close",
      bool((torch.stack([(many[:, 0] == k).float().mean() for k in range(3)])
            - m.probs[0]).abs().max() < 0.05))  # fmt: skip
logits = torch.tensor([1.0, 2.0, 0.5], requires_grad=True)
d = Categorical(logits=logits)
print("logits normalised", [round(v, 4) for v in d.logits.tolist()],
      [round(v, 4) for v in d.probs.tolist()])  # fmt: skip
(-d.log_prob(torch.tensor(1)) - 0.01 * d.entropy()).backward()
print("logits grad", [round(v, 4) for v in logits.grad.tolist()])
torch.manual_seed(0)
s1 = Categorical(logits=logits.detach()).sample((5,))
torch.manual_seed(0)
s2 = Categorical(logits=logits.detach()).sample((5,))
print("reseeded sample repeats", torch.equal(s1, s2))
