"""state_dict's ``_metadata``: each module's version, recorded as torch
records it, and read back by load_state_dict to accept older checkpoints
(batch norm's missing num_batches_tracked) or refuse them as torch does
(instance norm's running stats from before it stopped tracking them)."""

import io

import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")


def _net(t):
    return t.nn.Sequential(
        t.nn.Linear(3, 3), t.nn.BatchNorm1d(3), t.nn.InstanceNorm2d(3, affine=True)
    )


def _load_error(t, state_dict, strict=True) -> str:
    with pytest.raises(RuntimeError) as err:
        _net(t).load_state_dict(state_dict, strict=strict)
    return str(err.value)


def test_state_dict_records_each_modules_version_as_torchs():
    ours, theirs = _net(ct).state_dict()._metadata, _net(pt).state_dict()._metadata
    assert ours == theirs
    assert ours["1"] == {"version": 2}


def test_the_versions_survive_save_and_load():
    buf = io.BytesIO()
    ct.save(_net(ct).state_dict(), buf)
    buf.seek(0)
    assert ct.load(buf)._metadata == _net(pt).state_dict()._metadata


@pytest.mark.parametrize("strict", [True, False])
def test_an_unversioned_instance_norm_checkpoint_with_running_stats_fails_as_torchs(
    strict,
):
    def old(t):
        state = dict(_net(t).state_dict())  # a plain dict: no versions
        state["2.running_mean"] = t.zeros(3)
        state["2.running_var"] = t.ones(3)
        return state

    message = _load_error(ct, old(ct), strict)
    assert message == _load_error(pt, old(pt), strict)
    assert '"2.running_mean" and "2.running_var" for InstanceNorm2d' in message


def test_a_versioned_checkpoint_with_running_stats_has_unexpected_keys_as_torchs():
    def current(t):
        state = _net(t).state_dict()
        state["2.running_mean"] = t.zeros(3)
        return state

    assert _load_error(ct, current(ct)) == _load_error(pt, current(pt))
    result = _net(ct).load_state_dict(current(ct), strict=False)
    assert result.unexpected_keys == ["2.running_mean"]


def test_an_unversioned_batch_norm_checkpoint_loads_without_num_batches_tracked():
    def old(t):
        net = _net(t)
        with t.no_grad():
            net[1].running_mean.fill_(0.5)
        state = dict(net.state_dict())
        del state["1.num_batches_tracked"]
        return state

    net, state = _net(ct), old(ct)
    net[1].num_batches_tracked.fill_(4)
    assert str(net.load_state_dict(state)) == str(_net(pt).load_state_dict(old(pt)))
    assert net[1].running_mean.tolist() == [0.5, 0.5, 0.5]
    assert net[1].num_batches_tracked.item() == 4  # its own count is kept
    assert "1.num_batches_tracked" not in state  # the caller's dict is untouched


def test_a_versioned_batch_norm_checkpoint_without_num_batches_tracked_is_missing_it():
    def current(t):
        state = _net(t).state_dict()
        del state["1.num_batches_tracked"]
        return state

    message = _load_error(ct, current(ct))
    assert message == _load_error(pt, current(pt))
    assert 'Missing key(s) in state_dict: "1.num_batches_tracked"' in message
