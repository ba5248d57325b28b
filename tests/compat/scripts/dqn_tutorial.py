"""The tutorials' "Reinforcement Learning (DQN) Tutorial"
(intermediate_source/reinforcement_q_learning.py): a Transition namedtuple and
a ReplayMemory over a deque sampled with random.sample, policy and target DQN
networks, epsilon-greedy actions by policy_net(state).max(1).indices.view(1, 1),
optimize_model's boolean non_final_mask, torch.cat of the batch, gather of the
taken actions' values, the next states' max(1).values, SmoothL1Loss,
torch.nn.utils.clip_grad_value_ and AdamW(amsgrad=True), and the soft update of
the target network through its state_dict, key by key. gym's CartPole is the
same cart-pole equations in NumPy here, at a small size. Python's random module
(seeded) explores, as in the tutorial, so both libraries draw alike; weights
come from a fixed formula."""

import math
import random
from collections import deque, namedtuple
from itertools import count

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

device = torch.device(
    "cuda"
    if torch.cuda.is_available()
    else "mps"
    if torch.backends.mps.is_available()
    else "cpu"
)
seed = 42
random.seed(seed)
torch.manual_seed(seed)


class Discrete:
    def __init__(self, n, seed):
        self.n, self.rng = n, np.random.RandomState(seed)

    def sample(self):
        return int(self.rng.randint(self.n))


class CartPole:
    """gym's CartPole-v1 dynamics; terminated when the pole falls or the cart
    leaves the track, truncated after max_steps."""

    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    theta_threshold, x_threshold, max_steps = 12 * 2 * math.pi / 360, 2.4, 40

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.action_space = Discrete(2, seed)

    def reset(self, seed=None):
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

Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))


class ReplayMemory:
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        """Save a transition"""
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


class DQN(nn.Module):
    def __init__(self, n_observations, n_actions):
        super().__init__()
        self.layer1 = nn.Linear(n_observations, 32)
        self.layer2 = nn.Linear(32, 32)
        self.layer3 = nn.Linear(32, n_actions)

    # Called with either one element to determine next action, or a batch
    # during optimization. Returns tensor([[left0exp,right0exp]...]).
    def forward(self, x):
        x = F.relu(self.layer1(x))
        x = F.relu(self.layer2(x))
        return self.layer3(x)


# BATCH_SIZE is the number of transitions sampled from the replay buffer
# GAMMA is the discount factor as mentioned in the previous section
# EPS_START is the starting value of epsilon
# EPS_END is the final value of epsilon
# EPS_DECAY controls the rate of exponential decay of epsilon, higher means a
# slower decay
# TAU is the update rate of the target network
# LR is the learning rate of the ``AdamW`` optimizer
BATCH_SIZE = 16
GAMMA = 0.99
EPS_START = 0.9
EPS_END = 0.01
EPS_DECAY = 250
TAU = 0.005
LR = 3e-4

# Get number of actions from gym action space
n_actions = env.action_space.n
# Get the number of state observations
state, info = env.reset()
n_observations = len(state)

policy_net = DQN(n_observations, n_actions).to(device)
with torch.no_grad():
    for i, p in enumerate(policy_net.parameters()):
        p.copy_(torch.arange(p.numel(), dtype=torch.float32).mul(0.67 + 0.29 * i)
                .sin().mul(0.3).view(p.shape))  # fmt: skip
target_net = DQN(n_observations, n_actions).to(device)
print("target load", target_net.load_state_dict(policy_net.state_dict()))

optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
memory = ReplayMemory(1000)


steps_done = 0


def select_action(state):
    global steps_done
    sample = random.random()
    eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(
        -1.0 * steps_done / EPS_DECAY
    )
    steps_done += 1
    if sample > eps_threshold:
        with torch.no_grad():
            # t.max(1) will return the largest column value of each row.
            # second column on max result is index of where max element was
            # found, so we pick action with the larger expected reward.
            return policy_net(state).max(1).indices.view(1, 1)
    else:
        return torch.tensor(
            [[env.action_space.sample()]], device=device, dtype=torch.long
        )


episode_durations = []
losses = []


def optimize_model():
    if len(memory) < BATCH_SIZE:
        return
    transitions = memory.sample(BATCH_SIZE)
    # Transpose the batch (see https://stackoverflow.com/a/19343/3343043 for
    # detailed explanation). This converts batch-array of Transitions
    # to Transition of batch-arrays.
    batch = Transition(*zip(*transitions, strict=True))

    # Compute a mask of non-final states and concatenate the batch elements
    # (a final state would've been the one after which simulation ended)
    non_final_mask = torch.tensor(
        tuple(map(lambda s: s is not None, batch.next_state)),
        device=device,
        dtype=torch.bool,
    )
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)

    # Compute Q(s_t, a) - the model computes Q(s_t), then we select the
    # columns of actions taken. These are the actions which would've been taken
    # for each batch state according to policy_net
    state_action_values = policy_net(state_batch).gather(1, action_batch)

    # Compute V(s_{t+1}) for all next states.
    # Expected values of actions for non_final_next_states are computed based
    # on the "older" target_net; selecting their best reward with max(1).values
    # This is merged based on the mask, such that we'll have either the expected
    # state value or 0 in case the state was final.
    next_state_values = torch.zeros(BATCH_SIZE, device=device)
    with torch.no_grad():
        next_state_values[non_final_mask] = (
            target_net(non_final_next_states).max(1).values
        )
    # Compute the expected Q values
    expected_state_action_values = (next_state_values * GAMMA) + reward_batch

    # Compute Huber loss
    criterion = nn.SmoothL1Loss()
    loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))

    # Optimize the model
    optimizer.zero_grad()
    loss.backward()
    # In-place gradient clipping
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()
    losses.append(loss.item())


num_episodes = 12
for i_episode in range(num_episodes):
    # Initialize the environment and get its state
    state, info = env.reset()
    state = torch.tensor(state, dtype=torch.float32, device=device).unsqueeze(0)
    for t in count():
        action = select_action(state)
        observation, reward, terminated, truncated, _ = env.step(action.item())
        reward = torch.tensor([reward], device=device)
        done = terminated or truncated

        if terminated:
            next_state = None
        else:
            next_state = torch.tensor(
                observation, dtype=torch.float32, device=device
            ).unsqueeze(0)

        # Store the transition in memory
        memory.push(state, action, next_state, reward)

        # Move to the next state
        state = next_state

        # Perform one step of the optimization (on the policy network)
        optimize_model()

        # Soft update of the target network's weights
        # θ′ ← τ θ + (1 −τ )θ′
        target_net_state_dict = target_net.state_dict()
        policy_net_state_dict = policy_net.state_dict()
        for key in policy_net_state_dict:
            target_net_state_dict[key] = policy_net_state_dict[
                key
            ] * TAU + target_net_state_dict[key] * (1 - TAU)
        target_net.load_state_dict(target_net_state_dict)

        if done:
            episode_durations.append(t + 1)
            break
    if (i_episode + 1) % 3 == 0:
        print(f"episode {i_episode + 1} durations {episode_durations[-3:]} "
              f"memory {len(memory)} steps {steps_done} "
              f"mean loss {np.mean(losses[-20:]):.4f}")  # fmt: skip

print("Complete", len(episode_durations), "episodes", sum(episode_durations), "steps")
print("optimizer steps", len(losses),
      "amsgrad state", sorted(optimizer.state[policy_net.layer1.weight]))  # fmt: skip
gap = (target_net.layer1.weight - policy_net.layer1.weight).abs().max()
print("target moved toward policy", bool(gap < 0.05))
durations_t = torch.tensor(episode_durations, dtype=torch.float)
print("durations", durations_t.dtype, durations_t.mean().item())
if len(durations_t) >= 4:
    means = durations_t.unfold(0, 4, 1).mean(1).view(-1)
    means = torch.cat((torch.zeros(3), means))
    print("running means", [round(v, 2) for v in means.tolist()])

# The pieces alone.
q = torch.tensor([[0.5, 1.5], [2.0, -1.0], [0.0, 0.0]])
print("max(1)", q.max(1).values.tolist(), q.max(1).indices.tolist(),
      q.max(1).indices.view(-1, 1).shape)  # fmt: skip
mask = torch.tensor((True, False, True))
nsv = torch.zeros(3)
nsv[mask] = torch.tensor([7.0, 9.0])
print("masked put", nsv.tolist(), "gather",
      q.gather(1, torch.tensor([[1], [0], [1]])).view(-1).tolist())  # fmt: skip
p = nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
p.grad = torch.tensor([150.0, -250.0, 0.5])
torch.nn.utils.clip_grad_value_([p], 100)
print("clipped", p.grad.tolist())
crit = nn.SmoothL1Loss()
pair = torch.tensor([[0.2], [3.0]]), torch.tensor([[0.0], [0.0]])
print("smooth l1", round(crit(*pair).item(), 4))
