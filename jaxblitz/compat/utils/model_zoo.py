"""``torch.utils.model_zoo``: torch's old name for loading weights by URL,
``torch.hub.load_state_dict_from_url``."""

from jaxblitz.compat.hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
