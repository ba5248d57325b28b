"""The fast tier's list of slow tests is read from pytest's own durations report."""

from tests import tiers

LOG = """\
============================= slowest durations ==============================
12.50s call     tests/test_cli.py::test_one@tests.test_cli
0.40s setup    tests/test_cli.py::test_one@tests.test_cli
0.30s call     tests/compat/nn/test_a.py::test_b[x-1]
0.30s setup    tests/compat/nn/test_a.py::test_b[x-1]
0.01s call     tests/test_c.py::test_d
0.90s call     tests/test_e.py::test_f[copy_ under no_grad]@tests.test_e
(1200 durations < 0.005s hidden.  Use -vv to show these durations.)
"""


def test_durations_sum_a_tests_phases_and_drop_the_xdist_group():
    timed = tiers.durations(LOG)
    assert timed == {
        "tests/test_cli.py::test_one": 12.9,
        "tests/compat/nn/test_a.py::test_b[x-1]": 0.6,
        "tests/test_c.py::test_d": 0.01,
        "tests/test_e.py::test_f[copy_ under no_grad]": 0.9,  # the whole id
    }


def test_the_list_is_remade_from_logs_with_the_tests_over_the_threshold(
    tmp_path, monkeypatch
):
    log = tmp_path / "run.log"
    log.write_text(LOG)
    monkeypatch.setattr(tiers, "LIST", tmp_path / "slow_tests.txt")
    assert tiers.main([str(log)]) == 0
    assert tiers.slow_ids() == {
        "tests/test_cli.py::test_one",
        "tests/compat/nn/test_a.py::test_b[x-1]",
        "tests/test_e.py::test_f[copy_ under no_grad]",
    }
    fast = tmp_path / "fast.log"  # the fast tier's own run adds what is slow there
    fast.write_text("0.70s call     tests/test_c.py::test_d\n")
    assert tiers.main([str(log), str(fast)]) == 0
    assert "tests/test_c.py::test_d" in tiers.slow_ids()
    assert len(tiers.slow_ids()) == 4
    log.write_text("no report here\n")
    assert tiers.main([str(log)]) == 1


def test_the_committed_list_names_tests_by_their_ids():
    listed = tiers.slow_ids()
    assert len(listed) > 100
    assert all(t.startswith("tests/") and "::" in t for t in listed)
    assert not any("@" in t.split("[")[0] for t in listed)
    assert all(t.endswith("]") for t in listed if "[" in t)  # whole ids, not cut
