"""pytorch/examples reinforcement_learning/actor_critic.py: a Policy with an
action head (softmax) and a value head over one shared Linear layer, each
step's (log_prob, value) kept as a SavedAction namedtuple, returns normalised
with eps = np.finfo(np.float32).eps.item(), the advantage R - value.item(),
F.smooth_l1_loss(value, torch.tensor([R])) and the loss
torch.stack(policy_losses).sum() + torch.stack(value_losses).sum(). gym's
CartPole is replaced by the same cart-pole equations written in NumPy here;
the state is a 1-D float array, so probs are 1-D and the action a 0-d tensor,
as in the example. Actions are drawn with NumPy's generator from the policy's
probabilities (the example calls m.sample()), so both libraries play the same
episodes; weights come from a fixed formula."""

import math
from collections import namedtuple
from itertools import count

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

gamma, log_interval, seed = 0.99, 5, 543
torch.manual_seed(seed)


class CartPole:
    """gym's CartPole-v1 dynamics (Euler steps), reward 1.0 per step,
    terminated when the pole falls or the cart leaves the track."""

    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    theta_threshold, x_threshold, max_steps = 12 * 2 * math.pi / 360, 2.4, 60
    reward_threshold = 55.0

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.state = self.rng.uniform(low=-0.05, high=0.05, size=(4,))
        self.t = 0
        return np.array(self.state, dtype=np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        costheta, sintheta = math.cos(theta), math.sin(theta)
        total_mass = self.masspole + self.masscart
        polemass_length = self.masspole * self.length
        temp = (force + polemass_length * theta_dot**2 * sintheta) / total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta**2 / total_mass)
        )
        xacc = temp - polemass_length * thetaacc * costheta / total_mass
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * xacc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * thetaacc
        self.state = (x, x_dot, theta, theta_dot)
        self.t += 1
        terminated = bool(
            abs(x) > self.x_threshold or abs(theta) > self.theta_threshold
        )
        truncated = self.t >= self.max_steps
        return np.array(self.state, dtype=np.float32), 1.0, terminated, truncated, {}


env = CartPole(seed)
SavedAction = namedtuple("SavedAction", ["log_prob", "value"])


class Policy(nn.Module):
    """implements both actor and critic in one model"""

    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 32)
        # actor's layer
        self.action_head = nn.Linear(32, 2)
        # critic's layer
        self.value_head = nn.Linear(32, 1)
        # action & reward buffer
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        # actor: choses action to take from state s_t
        # by returning probability of each action
        action_prob = F.softmax(self.action_head(x), dim=-1)
        # critic: evaluates being in the state s_t
        state_values = self.value_head(x)
        # return values for both actor and critic as a tuple of 2 values:
        # 1. a list with the probability of each action over the action space
        # 2. the value from state s_t
        return action_prob, state_values


model = Policy()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.arange(p.numel(), dtype=torch.float32).mul(0.77 + 0.53 * i)
                .cos().mul(0.25).view(p.shape))  # fmt: skip
optimizer = optim.Adam(model.parameters(), lr=3e-2)
eps = np.finfo(np.float32).eps.item()
pick = np.random.RandomState(7)


def select_action(state):
    state = torch.from_numpy(state).float()
    probs, state_value = model(state)
    # create a categorical distribution over the list of probabilities of actions
    m = Categorical(probs)
    # the example: action = m.sample()
    p = probs.detach().numpy().astype(np.float64)
    action = torch.tensor(pick.choice(2, p=p / p.sum()))
    # save to action buffer
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
    # the action to take (left or right)
    return action.item()


def finish_episode():
    """Training code. Calculates actor and critic loss and performs backprop."""
    R = 0
    saved_actions = model.saved_actions
    policy_losses = []  # list to save actor (policy) loss
    value_losses = []  # list to save critic (value) loss
    returns = []  # list to save the true values
    # calculate the true value using rewards returned from the environment
    for r in model.rewards[::-1]:
        # calculate the discounted value
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(saved_actions, returns, strict=True):
        advantage = R - value.item()
        # calculate actor (policy) loss
        policy_losses.append(-log_prob * advantage)
        # calculate critic (value) loss using L1 smooth loss
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    # reset gradients
    optimizer.zero_grad()
    # sum up all the losses
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    shapes.add((tuple(policy_losses[0].shape), tuple(value_losses[0].shape),
                str(returns.dtype), str(advantage.dtype)))  # fmt: skip
    # perform backprop
    loss.backward()
    optimizer.step()
    # reset rewards and action buffer
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item()


shapes = set()
running_reward = 10
# run infinitely many episodes (here: until solved or 40 episodes)
for i_episode in count(1):
    # reset environment and episode reward
    state, _ = env.reset()
    ep_reward = 0
    # for each episode, only run 9999 steps so that we don't
    # infinite loop while learning
    for t in range(1, 10000):  # noqa: B007 -- printed once solved
        # select action from policy
        action = select_action(state)
        # take the action
        state, reward, done, truncated, _ = env.step(action)
        model.rewards.append(reward)
        ep_reward += reward
        if done or truncated:
            break
    # update cumulative reward
    running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
    # perform backprop
    last_loss = finish_episode()
    # log results
    if i_episode % log_interval == 0:
        print(
            f"Episode {i_episode}\tLast reward: {ep_reward:.2f}"
            f"\tAverage reward: {running_reward:.2f}"
        )
    # check if we have "solved" the cart pole problem
    if running_reward > env.reward_threshold or i_episode == 40:
        print(
            f"Solved! Running reward is now {running_reward:.2f} and "
            f"the last episode runs to {t} time steps!"
        )
        break
print("episode shapes", sorted(shapes))
print(f"last loss {last_loss:.4f}", "buffers empty", model.saved_actions == [])
action_prob, value = model(torch.zeros(4))
print("heads", tuple(action_prob.shape), tuple(value.shape),
      "value grad_fn", type(value.grad_fn).__name__)  # fmt: skip
sa = SavedAction(Categorical(action_prob).log_prob(torch.tensor(1)), value)
print("saved action", sa._fields, tuple(sa.log_prob.shape), sa.value.requires_grad)
for beta in (1.0, 0.5):
    a = torch.tensor([0.2, -1.5, 3.0], requires_grad=True)
    loss = F.smooth_l1_loss(a, torch.tensor([0.0, 0.0, 0.0]), beta=beta)
    loss.backward()
    print(f"smooth_l1 beta {beta}", round(loss.item(), 4),
          [round(v, 4) for v in a.grad.tolist()])  # fmt: skip
