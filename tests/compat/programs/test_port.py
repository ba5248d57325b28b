"""jaxblitz.compat.port: a PyTorch script's imports, and only those, rewritten."""

import subprocess
import sys

import pytest

from jaxblitz.compat.port import main, port_source

SCRIPT = """\
import argparse
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR
from torchvision import datasets, transforms
import torchvision, numpy as np
import torch.nn
from torch.utils.data import (Dataset,
    DataLoader)
x = "import torch"  # import torch
if x:
    import torch.backends.cudnn as cudnn
from . import torch_helpers
"""


def test_every_torch_import_form_is_pointed_at_compat_and_nothing_else():
    ported = port_source(SCRIPT).splitlines()
    assert ported == [
        "import argparse",
        "import jaxblitz.compat as torch",
        "import jaxblitz.compat.nn as nn",
        "import jaxblitz.compat.nn.functional as F",
        "from jaxblitz.compat.optim.lr_scheduler import StepLR",
        "from jaxblitz.compat.vision import datasets, transforms",
        "import jaxblitz.compat.vision as torchvision; import numpy as np",
        "import jaxblitz.compat as torch; import jaxblitz.compat.nn",
        "from jaxblitz.compat.utils.data import Dataset, DataLoader",
        "",  # the import's second line: line numbers stay the same
        'x = "import torch"  # import torch',
        "if x:",
        "    import jaxblitz.compat.backends.cudnn as cudnn",
        "from . import torch_helpers",
    ]


def test_the_command_line_runs_the_port_with_the_scripts_arguments(tmp_path):
    script = tmp_path / "show.py"
    script.write_text("import sys\nimport torch\nprint(torch.__name__, sys.argv[1:])\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxblitz.compat.port",
            script,
            "--run",
            "--",
            "-v",
            "2",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == "jaxblitz.compat ['-v', '2']"
    printed = subprocess.run(
        [sys.executable, "-m", "jaxblitz.compat.port", script],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "import jaxblitz.compat as torch\n" in printed.stdout


def test_a_script_in_its_coding_cookies_encoding_is_ported_and_run_in_it(
    tmp_path, monkeypatch, capsys
):
    script = tmp_path / "latin.py"
    source = '# -*- coding: latin-1 -*-\nimport torch\nprint("café", torch.__name__)\n'
    script.write_bytes(source.encode("latin-1"))
    main([str(script)])
    assert 'print("café", torch.__name__)' in capsys.readouterr().out
    monkeypatch.setattr(sys, "argv", sys.argv[:])  # --run sets the script's own
    monkeypatch.setattr(sys, "path", sys.path[:])
    main([str(script), "--run"])
    assert capsys.readouterr().out == "café jaxblitz.compat\n"


def test_a_file_that_is_not_python_source_is_a_usage_error(tmp_path, capsys):
    script = tmp_path / "binary.py"
    script.write_bytes(b"\x95\xff\x00 not text")
    with pytest.raises(SystemExit) as info:
        main([str(script)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"error: cannot read {script} as Python source: " in err
    assert "Traceback" not in err
