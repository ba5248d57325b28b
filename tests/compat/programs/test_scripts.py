"""PyTorch scripts run on compat with only their imports changed.

The scripts in ``tests/compat/scripts/`` make the calls of the public targets (the
five Blitz tutorials, pytorch/examples ``mnist/main.py``; see the README there).
Each is ported by :mod:`jaxblitz.compat.port` and run in a fresh Python, beside
the in-process tests, on small data written here in torchvision's layouts:
``data/cifar-10-batches-py/``, ``../data/MNIST/raw/`` and resnet18's file in
torchvision's weight cache under ``$TORCH_HOME``. The scripts that need no
torchvision also run on real PyTorch, and both print the same lines.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import background, tiers
from tests.compat import torchvision_files

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
HAVE_TORCH = importlib.util.find_spec("torch") is not None


_TORCH_HOME: list[Path] = []
_TORCH_HOME_LOCK = threading.Lock()


def _torch_home() -> Path:
    """``$TORCH_HOME`` with resnet18's weight file, written once for every run
    (the scripts only read it)."""
    with _TORCH_HOME_LOCK:
        if not _TORCH_HOME:
            home = background.scratch("torch_home")
            torchvision_files.write_resnet18_weights(home)
            _TORCH_HOME.append(home)
        return _TORCH_HOME[0]


def _prepare(name: str, extra_env: dict | None = None) -> Callable[[], dict]:
    """What a script's run does first: a folder for it to run in (``./data`` and
    ``../data`` filled) and its environment, as ``Popen`` arguments."""

    def setup() -> dict:
        top = background.scratch(name)
        work = top / "work"
        work.mkdir()
        torchvision_files.write_cifar10(work / "data", per_batch=8, n_test=20)
        torchvision_files.write_mnist(work / "data", 48, 30, folder="FashionMNIST")
        torchvision_files.write_mnist(top / "data", n_train=48, n_test=30)
        env = dict(
            os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg", TORCH_HOME=_torch_home()
        )
        env.update(extra_env or {})
        return {"cwd": work, "env": env}

    return setup


def _compat_run(
    script: Path, args: tuple[str, ...] = (), lazy: bool = False
) -> background.BackgroundRun:
    mode = "lazy" if lazy else "script"
    extra = {
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
        )
    }
    if lazy:
        extra["JAXBLITZ_COMPAT_LAZY"] = "1"
    argv = [sys.executable, "-m", "jaxblitz.compat.port", script, "--run", "--", *args]
    setup = _prepare(f"{mode}-{script.stem}", extra)
    return background.BackgroundRun(argv, timeout=600, setup=setup)


def _torch_run(script: Path) -> background.BackgroundRun:
    setup = _prepare(f"torch-{script.stem}")
    return background.BackgroundRun([sys.executable, script], setup=setup)


# What each script must print on compat (beyond finishing without an error).
LANDMARKS = {
    "blitz_tensors.py": ["matmul agree: True True", "mul agree: True True",
                         "numpy sees the add: [4. 4. 4. 4.]",
                         "tensor sees numpy: tensor([2., 2., 2., 2.]"],
    "blitz_autograd.py": ["fc grad shape: torch.Size([1000, 512])",
                          "tensor([True, True]) tensor([True, True])",
                          "p + w requires grad: True",
                          "trainable: ['fc.weight', 'fc.bias']",
                          "frozen conv has no grad: True"],
    "blitz_nn.py": ["MseLossBackward0", "AddmmBackward0",
                    "torch::autograd::AccumulateGrad", "bias grad before: None",
                    "loss went down: True"],
    "blitz_cifar10.py": ["[2,    10] loss:", "Predicted:",
                         "Accuracy on 20 test images:",
                         "Accuracy for class: truck", "cpu"],
    "blitz_data_parallel.py": ["outside: torch.Size([20, 6]) torch.Size([20, 3])"],
    "mnist_example.py": ["Train Epoch: 2 [32/48]", "Test: loss",
                         "lr now [0.48999"],
    "basics_quickstart.py": ["Shape of X [N, C, H, W]: torch.Size([16, 1, 28, 28])",
                             "Shape of y: torch.Size([16]) torch.int64",
                             "(flatten): Flatten(start_dim=1, end_dim=-1)",
                             "Epoch 2", "Accuracy:", "Done!",
                             "Saved PyTorch Model State to model.pth",
                             'Predicted: "'],
    "basics_tensors.py": ["matmul agree: True True", "mul agree: True True",
                          "12.0 <class 'float'>", "n: [2. 2. 2. 2. 2.]",
                          "From numpy: torch.int64 [[1, 2], [3, 4]]"],
    "basics_autograd_model.py": [
        "Gradient function for loss = BinaryCrossEntropyWithLogitsBackward0",
        "b grad is sigmoid(z)/3: True", "Call after zeroing gradients",
        "Layer: linear_relu_stack.4.bias | Size: torch.Size([10])"],
    "basics_data_transforms.py": [
        "one-hot target: tensor([0., 0., 0., 1., 0., 0., 0., 0., 0., 0.])",
        "Feature batch shape: torch.Size([16, 1, 28, 28])",
        "custom batch: [(4, 1, 28, 28), (4,)]",
        "sample image: torch.Size([1, 28, 28]) torch.float32 int"],
    "basics_optimization_saveload.py": [
        "reloaded agrees: True", "Epoch 2",
        "whole-module save refused: NotImplementedError: torch.save of a whole "
        "nn.Module (__main__.NeuralNetwork at obj)",
        "vgg16 refused: torchvision.models.vgg16 is not supported"],
    "dcgan_example.py": [
        "(0): ConvTranspose2d(8, 32, kernel_size=(4, 4), stride=(1, 1), bias=False)",
        "(1): LeakyReLU(negative_slope=0.2, inplace=True)", "[0/1][2/3] Loss_D:",
        "fake samples: ['fake_samples_epoch_000.png', 'netD_epoch_0.pth', "
        "'netG_epoch_0.pth', 'real_samples.png']",
        "fake batch: torch.Size([8, 3, 16, 16]) in [-1, 1]: True"],
    "vae_example.py": ["Train Epoch: 2 [32/48]", "====> Test set loss:",
                       "results: ['reconstruction_1.png', 'reconstruction_2.png', "
                       "'sample_1.png', 'sample_2.png']"],
    "regression_example.py": [
        "features: [[1.0, 1.0, 1.0, 1.0], [2.0, 4.0, 8.0, 16.0]]",
        "fc.weight.grad shape: (1, 4)", "descriptions: [True, True]",
        "close: True"],
    "examples_polynomial.py": [
        "Result: y = 0.0000 + -1.3993 * P3(0.0000 + 0.2481 x)",
        "(1): Flatten(start_dim=0, end_dim=1)", "rmsprop weight",
        "named params ['a', 'b', 'c', 'd', 'e']"],
    "nn_tutorial.py": ["first loss 2.4552", "256 4 tensor(8)",
                       "(7): Lambda()", "cnn acc"],
    "recipes_saveload.py": [
        "momentum buffers 10 ['momentum_buffer']", "inference agrees True",
        "resume matches", "adam state keys ['exp_avg', 'exp_avg_sq', 'step']",
        "missing ['fc4.weight', 'fc4.bias'] unexpected []",
        "strict refused: Error(s) in loading state_dict for NetB:",
        "accumulates True"],
    "recipes_modules.py": [
        "buffers ['scale', 'norms.bn.running_mean', 'norms.bn.running_var', "
        "'norms.bn.num_batches_tracked']", "frozen grad None",
        "forward hook saw [(10, 6)]", "dy 6.75 d2y 9.0"],
    "text_classification.py": ["batch [1, 2, 3, 0] torch.Size([20]) [0, 5, 10, 15]",
                               "epoch 3 acc", "max bag"],
    "char_rnn.py": ["lstm packed batch_sizes [8, 8, 8, 7, 6, 4, 1]",
                    "gru state (4, 8, 12)", "lstm loss went down True",
                    "gru unpacked (8, 7, 24) [6, 5, 6, 3, 7, 4, 6, 5]",
                    "lstm keys ['rnn.weight_ih_l0', 'rnn.weight_hh_l0', "
                    "'rnn.bias_ih_l0', 'rnn.bias_hh_l0', 'rnn.weight_ih_l0_reverse'",
                    "backward start matches hn True"],
    "transformer_lm.py": ["mask rows [[0.0, -inf, -inf, -inf], "
                          "[0.0, 0.0, -inf, -inf]", "params 4811",
                          "causal prefix unchanged True", "loss went down True",
                          "sdpa head (2, 5, 16) True",
                          "padded keys get no weight True", "padding ignored True"],
    "samplers_data.py": ["weighted 30 [2, 4, 9]", "batch_sampler sizes [3, 3, 3, 1]",
                         "iterable workers 2 [3, 4, 5, 6, 7, 8, 9] 42",
                         "chain [0, 1, 2, 10, 11]", "stack 3 [[2, 3], 1] 10",
                         "split is a partition True", "fraction split [5, 3, 2]"],
    "word_embeddings.py": ["hello embed (1, 5) True", "vocab 57",
                           "ngram loss went down True",
                           "cbow batch (58, 4) torch.int64",
                           "cbow loss went down True"],
    "lstm_tagger.py": ["lstm out (5, 1, 3) [(1, 1, 3), (1, 1, 3)]",
                       "stepped equals whole True", "tagger loss went down True",
                       "tagged ['DET', 'NN', 'V', 'DET', 'NN'] True",
                       "char tagger loss went down True", "char lstm grad True"],
    "fgsm_attack.py": ["train mode: dropout varies True",
                       "eval mode: repeatable True",
                       "Epsilon: 0\tTest Accuracy = 24 / 24",
                       "accuracy falls with epsilon True",
                       "grad shape (1, 1, 12, 12) sign values [-1, 0, 1]"],
    "spatial_transformer.py": ["identity warp reproduces input True",
                               "localization gets gradients True",
                               "grid True (2, 5, 6, 2) [-0.5, -0.1, 0.3]",
                               "warp rot True bicubic reflection",
                               "volume (1, 4, 4, 4, 3) (1, 2, 4, 4, 4)"],
    "seq2seq_attention.py": ["ids [5, 4, 3, 1, 0, 0] [3, 4, 5, 1, 0, 0]",
                             "teacher forced batches 8 of 24",
                             "seq2seq loss went down True",
                             "attention (4, 6, 6) rows sum to 1 True"],
    "double_backward.py": ["square gradgradcheck True", "sinh gradgradcheck True",
                           "sinh bad gradgradcheck False",
                           "cube first [0.75, 12.0, 27.0] second [3.0, -12.0, 18.0]",
                           "second backward refused: element 0 of tensors does not "
                           "require grad and does not have a grad_fn"],
    "resnet_cifar.py": ["(shortcut): Sequential(", "load result <All keys matched",
                        "best epoch", "reloaded predicts alike True",
                        "train mode: dropout varies True", "eval mode: repeatable True",
                        "steplr [0.1, 0.05, 0.05, 0.025, 0.025, 0.0125]",
                        "input size torch.Size([3, 12, 12]) torch.Size([12, 12])"],
    "rnn_sentiment.py": ["lstm output (4, 7, 20) [3, 5, 7, 6] padding zero True",
                         "lstm pad row and grad 0.0 0.0", "gru epoch 4",
                         "gru adam step 16 steps per epoch 4"],
    "reinforce_policy.py": ["Episode 60\tLast reward:",
                            "learned to walk right True returns ['torch.float64']",
                            "log_prob matches True", "frequencies close True",
                            "reseeded sample repeats True"],
    "conv_autoencoder.py": ["output torch.Size([1, 12, 12]) torch.Size([12, 12]) True",
                            "epoch [5/5], train BCE",
                            "grad while evaluating False None",
                            "mse formats as a number True", "bce pair agree True",
                            "seeded init repeats True"],
    "time_sequence_prediction.py": [
        "input torch.float64 (5, 29) test (3, 29)",
        "step returned its first loss True Tensor True",
        "prediction (3, 39) float64 future head",
        "lbfgs state ['H_diag', 'al', 'd', 'func_evals', 'n_iter', 'old_dirs'] "
        "n_iter 40 func_evals 40", "closure calls 40 loss went down True"],
    "word_language_model.py": [
        "batchified (16, 4) True", "LSTM tied True params 10 4590",
        "| LSTM lr annealed to 5.0", "| GRU end of training | test loss",
        "refused: When using the tied flag, nhid must be equal to emsize",
        "transformer decoder Linear mask [[0.0, -inf, -inf], [0.0, 0.0, -inf], "
        "[0.0, 0.0, 0.0]]", "| Transformer end of epoch   2 | valid loss",
        "generated ['saw', 'on', 'on', 'on', 'on', 'on'] sample in vocab True",
        "transformer generated [8, 3, 3, 3, 3] torch.int64"],
    "siamese_network.py": [
        "pair (1, 12, 12) torch.float32 1.0 torch.float32 groups [4, 4, 4]",
        "Conv2d(1, 8, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), "
        "bias=False) 6 AdaptiveAvgPool2d", "Test set: Average loss:",
        "lr 0.343", "pred torch.int64 (10,)", "bn tracked 30",
        "with logits agrees True pos_weight raises it True"],
    "super_resolution.py": [
        "(pixel_shuffle): PixelShuffle(upscale_factor=3)",
        "conv1 orthogonal, scale 2.0 True", "conv4 orthogonal, scale 1.0 True",
        "===> Avg. PSNR:", "psnr rose True",
        "super-resolved (12, 12) uint8 True out scaled with its array True"],
    "gcn.py": ["classes ['Neural_Networks', 'Rule_Learning', 'Theory'] edges 38",
               "adjacency symmetric-normalised, diagonal [0.3333, 0.5, 0.5]",
               "Epoch 0040 loss_train:", "Test set results: loss",
               "mask agrees with indices True 8"],
    "char_rnn_generation.py": [
        "# categories: 3 ['English', 'Italian', 'Russian'] letters 59",
        "(o2o): Linear(in_features=91, out_features=59, bias=True)",
        "tensors (1, 3) (6, 1, 59) [1, 1, 14, 19] torch.int64",
        "output (1, 59) loss went down True", "sample Russian R"],
    "pruning_tutorial.py": [
        "params ['bias', 'weight_orig']", "pre hooks ['RandomUnstructured']",
        "mask zeros 45 torch.float32", "history ['RandomUnstructured', 'LnStructured']",
        "after remove ['bias_orig', 'weight'] ['bias_mask']",
        "Global sparsity: 20.00%", "is pruned True False",
        "grad zero where masked True",
        "tensor([0., 1., 0., 1., 0., 1., 0., 1., 0., 1.])"],
    "parametrizations_tutorial.py": [
        "class ParametrizedLinear Linear",
        "state_dict ['bias', 'parametrizations.weight.original']",
        "Here, it is computed just the first time layer.weight is called",
        "cayley orthogonal True", "expm spd True True", "still orthogonal True",
        "assigned True", "RuntimeError parametrization NotKnownToBeInvertible "
        "does not implement right_inverse."],
    "hooks_checkpoint.py": [
        "output: Tensor torch.Size([2, 8, 2, 2])", "pre hook on Linear (2, 16)",
        "grad_input:  <class 'tuple'> 1 [(2, 4, 4, 4)]", "halved upstream True",
        "hooks removed 0 0", "tensor hook grad [20.0, 40.0, 60.0]",
        "checkpoint same output True same grads True", "no_grad checkpoint False"],
    "bilstm_crf.py": [
        "transitions row START [-10000.0, -10000.0] column STOP",
        "path [0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0]", "before: nll",
        "epoch 15 nll", "transitions grad (5, 5)"],
    "amp_recipe_cpu.py": [
        "autocast output torch.bfloat16", "autocast loss torch.float32",
        "amp loss", "scale 65536.0", "scaler state ['_growth_tracker', "
        "'backoff_factor', 'growth_factor', 'growth_interval', 'scale']"],
    "func_ensembling.py": [
        "stacked leaves require grad True", "base on meta torch.Size([32, 144])",
        "option 1 (4, 16, 10) True", "option 2 (4, 16, 10) True",
        "ensemble loss 2.2955"],
    "func_per_sample_grads.py": [
        "loop torch.Size([8, 8]) 8", "vmap agrees with the loop True",
        "shapes [(8, 8, 1, 3, 3), (8, 8), (8, 16, 8, 3, 3)",
        "mean is the batch grad True", "params untouched True True"],
    "func_jacobians_hessians.py": [
        "vmap of vjp torch.Size([8, 8]) True", "jacrev agrees True",
        "argnums torch.Size([8, 8, 8]) torch.Size([8, 8]) True",
        "hessian torch.Size([8, 8, 8]) True True",
        "batch hessian torch.Size([6, 7, 5, 5])", "hvp agrees True True",
        "non-scalar refused: grad_and_value(f)(*args): Expected f(*args) to "
        "return a scalar Tensor, got tensor with 1 dims."],
    "optimizer_in_backward.py": [
        "fused step 2 loss", "hook calls 18 first [(10,), (10, 32)]",
        "grads freed in the hook {None}",
        "same parameters as the typical loop True", "adam steps [3.0, 3.0, 3.0]",
        "hook calls after remove 18"],
    "mnist_forward_forward.py": [
        "layers 2 ['Layer', 'Layer'] registered 0", "training layer:  1",
        "negatives differ True torch.int64", "test error:", "layer modes True True"],
    "mnist_rnn.py": [
        "(rnn): LSTM(14, 24, batch_first=True)", "Train Epoch: 3 [64/96 (67%)]",
        "Test set: Average loss:", "lr [0.343] dropout2d warned True",
        "adadelta state ['acc_delta', 'square_avg', 'step']",
        "dropout2d 2-D rows mixed True (64, 6) values [0.0, 2.0]",
        "dropout2d 4-D channels whole True"],
    "actor_critic.py": [
        "Episode 40\tLast reward:", "Solved! Running reward is now",
        "episode shapes [((), (), 'torch.float32', 'torch.float32')]",
        "heads (2,) (1,) value grad_fn ViewBackward0",
        "smooth_l1 beta 0.5 1.3467 [0.1333, -0.3333, 0.3333]"],
    "vision_transformer.py": [
        "patches (2, 4, 48) [4.0, 5.0, 6.0, 7.0, 12.0] [381.0, 382.0, 383.0]",
        "AssertionError Input height (8) and width (8) must be divisible",
        "EPOCH [4/4]", "reloaded <All keys matched successfully>",
        "ConvViT params 32 7523", "class token is a parameter True in state_dict True",
        "per-head weights (8, 4, 9, 9) True"],
    "dqn_tutorial.py": [
        "target load <All keys matched successfully>", "episode 12 durations",
        "amsgrad state ['exp_avg', 'exp_avg_sq', 'max_exp_avg_sq', 'step']",
        "masked put [7.0, 0.0, 9.0] gather [1.5, 2.0, 0.0]",
        "clipped [100.0, -100.0, 0.5]"],
    "warmstart_and_zero_grad.py": [
        "(dropout1): Dropout2d(p=0.25, inplace=False)",
        "<All keys matched successfully>", "_IncompatibleKeys(missing_keys=["
        "'head.weight', 'head.bias'], unexpected_keys=['fc3.weight', 'fc3.bias'])",
        "size mismatch for fc3.weight: copying a param with shape "
        "torch.Size([10, 84]) from checkpoint", "renamed <All keys matched",
        "[2,     4] loss:", "zero_grad() None", "two backwards accumulate True"],
    "forward_ad.py": [
        "jvp is 2 x t True", "tangent gone after the level None",
        "module jvp (16, 5)", "functional_call jvp agrees True", "custom jvp True",
        "gradcheck True", "func jvp True", "module func jvp agrees True"],
    "gat.py": [
        "graph (24, 10) torch.float32 84 [8, 8, 8]", "masks agree True",
        "attention (4, 24, 24) rows sum to 1 True zero off the graph True",
        "Epoch 0030 loss_train:", "Test set results:",
        "adam state ['exp_avg', 'exp_avg_sq', 'step'] 30.0", "head mean agrees True"],
    "swa_recipe.py": [
        "averaged Net 0 torch.int64 ['n_averaged', 'module.bn.running_mean']",
        "lr 0.03841 n_averaged 1", "swa bn after", "mean of two True 2",
        "ema agrees True", "ema buffers follow True 46"],
    "lr_schedulers.py": [
        "onecycle start 0.004 0.1 4e-07", "stepped too far: Tried to step 11 times",
        "sequential [0.04, 0.07, 0.1, 0.08, 0.064, 0.0512, 0.04096]",
        "chained [0.45, 0.81, 0.729, 0.6561, 0.59049]",
        "resumed [0.001, 0.001, 0.001] True", "plateau max [0.0002]"],
    "fuse_conv_bn.py": [
        "conv gradcheck True", "nn.grad agrees True True", "bn gradcheck True",
        "fused gradcheck True", "fused ['convbn1.conv_weight'"],
    "func_autograd_function.py": [
        "grad of sort is ones True", "index outputs torch.int64 False False True "
        "NumpySortBackward", "cube grads 1.47 4.2 True",
        "vmap of grad (4, 3) [3.0, 2.0, 1.0]", "generated vmap rule True",
        "no vmap rule: You tried to vmap over MyCube"],
    "reproducibility_recipe.py": [
        "meta block True (1000, 1000) cpu", "rng state torch.uint8 1 True",
        "generator cpu True 2147483647", "randperm torch.int64 [0, 1, 2, 3, 4, 5] True",
        "loader 3 True same order True", "compare Compare 4 True"],
    "profiler_recipe.py": [
        "schedule ['NONE', 'NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE'",
        "named spans ['LINEAR PASS', 'MASK INDICES', 'model_inference', "
        "'postprocess']", "columns ['Name', 'Self CPU %', 'Self CPU', "
        "'CPU total %', 'CPU total', 'CPU time avg', 'CPU Mem', 'Self CPU Mem', "
        "'# of Calls']", "by shape has Input Shapes True", "chrome trace True True",
        "handler called at [5]"],
    "fast_neural_style.py": [
        "(in1): InstanceNorm2d(16, eps=1e-05, momentum=0.1, affine=True",
        "vgg trainable 0 of 20", "features VggOutputs ('relu1_2', 'relu2_2'",
        "symmetric True", "style was scaled in place True", "Epoch 2:\t[8/8]",
        "vgg grads {None}", "old checkpoint refused: Unexpected running stats "
        "buffer(s) \"in1.running_mean\" for InstanceNorm2d",
        "load <All keys matched successfully>", "same as trained True"],
    "neural_style_tutorial.py": [
        "model ['0', 'conv_1', 'style_loss_1', 'relu_1', 'conv_2'",
        "trimmed Sequential 18 StyleLoss", "run [20]:",
        "losses kept ['Tensor', 'Tensor'] targets need no grad False False",
        "model grads {None} input grad (1, 3, 24, 24)",
        "lbfgs 20 state n_iter 20 func_evals 20",
        "output (1, 3, 24, 24) True True in [0, 1] True",
        "content picture untouched True"],
    "imagenet_example.py": [
        "meter Acc@1  75.00 ( 62.50) | Acc@1 62.500 | Tensor",
        "accuracy [[50.0], [100.0]]", "Epoch: [2][3/3]\tLoss", " *  Acc@1",
        "files ['checkpoint.pth.tar', 'model_best.pth.tar']",
        "best 3 resnet_tiny ['param_groups', 'state'] 3",
        "=> loaded checkpoint 'checkpoint.pth.tar' (epoch 3)",
        "resumed Tensor lr [0.010000000000000002] momentum buffers 26",
        "epoch 3 is_best True lr [0.0010000000000000002]",
        "=> no checkpoint found at 'missing.pth.tar'"],
    "translation_transformer.py": [
        "xavier bound True buffers ['positional_encoding.pos_embedding']",
        "batch (7, 3) (7, 3) torch.int64 [2, 7, 4, 9, 3, 1, 1]",
        "masks [((7, 7), 'torch.bool'), ((6, 6), 'torch.float32'), ((3, 7), "
        "'torch.bool'), ((3, 6), 'torch.bool')]",
        "tgt mask rows [[0.0, -inf, -inf], [0.0, 0.0, -inf], [0.0, 0.0, 0.0]]",
        "Epoch: 6, Train loss:", "translated:", "decoded (",
        "decode agrees with forward True"],
    "snli_classifier.py": [
        "batch (6, 8) (3, 8) [0, 1, 2, 0, 1, 2, 0, 1]",
        "last epoch 3 iteration 24 loss", "max snapshots 1 best dev acc",
        "last clip norms Tensor 0 clipped some True", "max pad row 0.0 grad 0.0",
        "bottle (2, 3, 3) True", "encoding (2, 16) True",
        "train mode: dropout varies True"],
}  # fmt: skip
ON_TORCH = ["blitz_tensors.py", "blitz_nn.py", "blitz_data_parallel.py",
            "basics_tensors.py", "basics_autograd_model.py",
            "regression_example.py", "examples_polynomial.py", "nn_tutorial.py",
            "recipes_saveload.py", "recipes_modules.py",
            "text_classification.py", "char_rnn.py", "transformer_lm.py",
            "samplers_data.py", "word_embeddings.py", "lstm_tagger.py",
            "fgsm_attack.py", "spatial_transformer.py", "seq2seq_attention.py",
            "double_backward.py", "resnet_cifar.py", "rnn_sentiment.py",
            "reinforce_policy.py", "conv_autoencoder.py",
            "time_sequence_prediction.py", "word_language_model.py",
            "siamese_network.py", "super_resolution.py", "gcn.py",
            "char_rnn_generation.py",
            "pruning_tutorial.py", "parametrizations_tutorial.py",
            "hooks_checkpoint.py", "bilstm_crf.py", "amp_recipe_cpu.py",
            "func_per_sample_grads.py", "func_jacobians_hessians.py",
            "optimizer_in_backward.py", "func_ensembling.py"]  # fmt: skip
ON_TORCH += ["mnist_forward_forward.py", "mnist_rnn.py", "actor_critic.py",
             "vision_transformer.py", "dqn_tutorial.py",
             "warmstart_and_zero_grad.py", "forward_ad.py"]  # fmt: skip
ON_TORCH += ["gat.py", "swa_recipe.py", "lr_schedulers.py", "fuse_conv_bn.py",
             "func_autograd_function.py", "reproducibility_recipe.py"]  # fmt: skip
ON_TORCH += ["profiler_recipe.py"]
ON_TORCH += ["fast_neural_style.py", "neural_style_tutorial.py",
             "imagenet_example.py", "translation_transformer.py",
             "snli_classifier.py"]  # fmt: skip

# Run again in lazy mode (one program per sync point), which must print what
# eager mode prints: a Blitz training loop, recurrent and attention models, a
# custom autograd Function, samplers and workers, input gradients, sampling
# grids, a decoder fed its own greedy choices, double backward, a residual
# network with BatchNorm and checkpoints, a policy gradient over a NumPy
# environment, a denoising autoencoder, pytorch/examples' LSTM cells under
# LBFGS, word language models, a siamese pair network, a sub-pixel
# super-resolution network and a graph convolution network, pruning and
# parametrizations (tensors recomputed by hooks), module hooks with
# activation checkpointing and a CRF decoded with .item() at each step.
# And torch.func's transforms (vmap of grad of functional_call, Jacobians,
# Hessians, hvp) and optimizer steps fused into backward by post-accumulate
# gradient hooks.
LAZY = ["blitz_cifar10.py", "blitz_nn.py", "char_rnn.py", "examples_polynomial.py",
        "text_classification.py", "transformer_lm.py", "samplers_data.py",
        "lstm_tagger.py", "fgsm_attack.py", "spatial_transformer.py",
        "seq2seq_attention.py", "double_backward.py", "resnet_cifar.py",
        "rnn_sentiment.py", "reinforce_policy.py", "conv_autoencoder.py",
        "time_sequence_prediction.py", "word_language_model.py",
        "siamese_network.py", "super_resolution.py", "gcn.py",
        "char_rnn_generation.py", "pruning_tutorial.py", "parametrizations_tutorial.py",
        "hooks_checkpoint.py", "bilstm_crf.py", "amp_recipe_cpu.py",
        "func_per_sample_grads.py", "func_jacobians_hessians.py",
        "optimizer_in_backward.py", "func_ensembling.py"]  # fmt: skip
# And: layers trained locally each with its own optimizer, an LSTM over image
# rows, two vision transformers and warmstarted, partly loaded state_dicts.
LAZY += ["mnist_forward_forward.py", "mnist_rnn.py", "vision_transformer.py",
         "warmstart_and_zero_grad.py"]  # fmt: skip
# And forward-mode AD: tangents are more recorded values.
LAZY += ["forward_ad.py"]
# And: graph attention, weight averaging with BatchNorm, schedulers stepped
# per batch and resumed, custom Functions with hand-written backward under
# gradcheck and under torch.func, and seeded generators with DataLoader workers.
LAZY += ["gat.py", "swa_recipe.py", "lr_schedulers.py", "fuse_conv_bn.py",
         "func_autograd_function.py", "reproducibility_recipe.py"]  # fmt: skip
# And the profiler: ops recorded when called, the pending work timed at its sync.
LAZY += ["profiler_recipe.py"]
# And a fast style-transfer network: instance norms, reflection padding,
# nearest upsampling and Gram matrices through a frozen feature net; the
# style-transfer tutorial optimising its input by LBFGS; and imagenet's
# training loop with meters, checkpoints and a resume; nn.Transformer
# translating with padding masks and greedy decoding; a bidirectional LSTM
# entailment classifier with BatchNorm1d and clipped gradients.
LAZY += ["fast_neural_style.py", "neural_style_tutorial.py",
         "imagenet_example.py", "translation_transformer.py",
         "snli_classifier.py"]  # fmt: skip

# Scripts that use what compat refuses by name: on compat each prints what
# comes before that use, then stops with the reason; PyTorch runs it through.
REFUSED = {
    "saved_tensor_hooks.py": (
        "grad_fn hooks [('pre', 1), (2, 1)] [8.1548, 22.1672, 60.2566",
        "torch.autograd.graph.saved_tensors_hooks is not supported by "
        "jaxblitz.compat: compat's tape keeps the inputs of each op",
    ),
    "mnist_hogwild.py": (
        "params 21840 shared False",
        "Tensor.share_memory_ is not supported by jaxblitz.compat: its tensors "
        "live in one process's memory",
    ),
}

RUNS = {name: _compat_run(SCRIPTS / name) for name in sorted(LANDMARKS)}
LAZY_RUNS = {name: _compat_run(SCRIPTS / name, lazy=True) for name in LAZY}
REFUSED_RUNS = {name: _compat_run(SCRIPTS / name) for name in REFUSED}
TORCH_RUNS = (
    {name: _torch_run(SCRIPTS / name) for name in [*ON_TORCH, *REFUSED]}
    if HAVE_TORCH
    else {}
)


# The runs the default run keeps (tests/tiers.py): the Blitz's network and its
# classifier, on compat in both modes and (the network) on PyTorch.
SMOKE = {"blitz_nn.py", "blitz_cifar10.py"}


def _printed(stdout: str) -> str:
    """A script's output with each printed zero's sign dropped: a sum of
    thousands of terms that cancels to a hair from 0 (the polynomial fit's
    constant) takes its sign from the order the terms are added in, which
    differs between PyTorch, XLA and XLA fusing a step into one program."""
    return re.sub(r"-(0\.0+)(?![0-9])", r"\1", stdout)


def _landmarks_printed(name: str, stdout: str) -> None:
    for landmark in LANDMARKS[name]:
        assert landmark in _printed(stdout), f"{name} did not print {landmark!r}"


@pytest.mark.parametrize("name", tiers.smoke(sorted(LANDMARKS), SMOKE))
def test_the_script_runs_on_compat_and_prints_its_landmarks(name):
    proc = RUNS[name].result()
    assert proc.returncode == 0, proc.stderr[-4000:]
    _landmarks_printed(name, proc.stdout)


def _undrawn(stdout: str) -> list[str]:
    """The lines of a script's output that no random draw decides: random
    draws differ between the two generators, and lines with numbers drawn at
    random are the scripts' few value prints."""
    drawn = ("tensor(", "loss")
    lines = _printed(stdout).splitlines()
    return [line for line in lines if not line.startswith(drawn)]


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")
@pytest.mark.parametrize("name", tiers.smoke(ON_TORCH, SMOKE))
def test_the_script_prints_the_same_lines_on_pytorch(name):
    ours, theirs = RUNS[name].result(), TORCH_RUNS[name].result()
    assert theirs.returncode == 0, theirs.stderr[-3000:]
    assert ours.returncode == 0, ours.stderr[-3000:]
    assert _undrawn(ours.stdout) == _undrawn(theirs.stdout)


@pytest.mark.parametrize("name", tiers.smoke(LAZY, SMOKE))
def test_the_script_prints_the_same_lines_in_lazy_mode(name):
    lazy, eager = LAZY_RUNS[name].result(), RUNS[name].result()
    assert lazy.returncode == 0, lazy.stderr[-4000:]
    _landmarks_printed(name, lazy.stdout)
    assert _undrawn(lazy.stdout) == _undrawn(eager.stdout)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_script_stops_where_it_uses_what_compat_refuses_saying_why(name):
    printed, reason = REFUSED[name]
    proc = REFUSED_RUNS[name].result()
    assert proc.returncode == 1, proc.stderr[-4000:]
    assert printed in proc.stdout
    assert reason in proc.stderr.splitlines()[-1]
    if HAVE_TORCH:
        theirs = TORCH_RUNS[name].result()
        assert theirs.returncode == 0, theirs.stderr[-3000:]


UPSTREAM = os.environ.get("JAXBLITZ_PYTORCH_SCRIPTS")


@pytest.mark.skipif(not UPSTREAM, reason="JAXBLITZ_PYTORCH_SCRIPTS is not set")
@pytest.mark.parametrize(
    "path", sorted(Path(UPSTREAM).glob("*.py")) if UPSTREAM else [], ids=str
)
def test_an_upstream_pytorch_script_runs_with_its_imports_ported(path):
    """The real files (the Blitz tutorials, pytorch/examples mnist/main.py) from
    a folder named by ``JAXBLITZ_PYTORCH_SCRIPTS``, on the same small data."""
    args = ("--epochs", "1") if "mnist" in path.name else ()
    proc = _compat_run(path, args).result()
    assert proc.returncode == 0, proc.stderr[-4000:]
