"""``torch.backends.mha``: whether multi-head attention and the Transformer
encoder may take torch's fused inference path (on by default, as in torch).
compat computes what that path computes; its one visible difference is a query
whose keys are all masked (NaN there, and zeros at an encoder's padded
positions), so turning it off gives the unfused values."""

_fastpath = [True]


def get_fastpath_enabled() -> bool:
    return _fastpath[0]


def set_fastpath_enabled(value: bool) -> None:
    _fastpath[0] = bool(value)


__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]
