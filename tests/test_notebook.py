"""jaxblitz.notebook: %%compat / %%nnx cells run in namespaces of their own."""

import subprocess
import sys

import pytest

pytest.importorskip("IPython")
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402


@pytest.fixture
def shell():
    shell = InteractiveShell.instance()
    shell.run_cell("%load_ext jaxblitz.notebook")
    shell.run_cell("%colors nocolor")
    yield shell
    InteractiveShell.clear_instance()


def test_a_column_cell_does_not_see_or_change_the_notebooks_names(shell, capsys):
    shell.run_cell("x = 1")
    result = shell.run_cell("%%compat\ny = 'compat'\nprint('x' in globals())")
    assert result.success
    assert capsys.readouterr().out == "False\n"
    assert shell.user_ns["x"] == 1
    assert "y" not in shell.user_ns


def test_a_columns_names_last_from_cell_to_cell_and_columns_are_apart(shell, capsys):
    shell.run_cell("%%compat\nnet = 'compat net'")
    shell.run_cell("%%nnx\nnet = 'nnx net'")
    shell.run_cell("%%compat\nprint(net)")
    shell.run_cell("%%nnx\nprint(net)")
    assert capsys.readouterr().out == "compat net\nnnx net\n"


def test_a_column_cell_runs_as_main_and_accepts_ipython_syntax(shell, capsys):
    cell = (
        "%%compat\nimport os\nprint(__name__)\nhere = %pwd\nprint(here == os.getcwd())"
    )
    assert shell.run_cell(cell).success
    assert capsys.readouterr().out == "__main__\nTrue\n"


def test_an_error_fails_the_cell_with_a_traceback_from_its_own_code(shell, capsys):
    shell.run_cell("%%compat\ndef f(x):\n    return x / 0")
    result = shell.run_cell("%%compat\nz = 1\ny = 2\nf(z)")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    shown = capsys.readouterr().out
    assert "----> 3 f(z)" in shown  # the cell's line and the function's, with source
    assert "----> 2     return x / 0" in shown
    assert "run_cell_magic" not in shown  # not IPython's frames that ran the magic


def test_importing_jaxblitz_and_the_extension_does_not_import_ipython():
    code = "import sys, jaxblitz, jaxblitz.notebook; print('IPython' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout == "False\n", out.stderr


def test_a_named_column_cell_runs_as_code_of_a_file_of_that_name(shell, capsys):
    cell = "import inspect\nprint(inspect.currentframe().f_code.co_filename)"
    assert shell.run_cell("%%nnx <page: nnx block 3>\n" + cell).success
    assert capsys.readouterr().out == "<page: nnx block 3>\n"
