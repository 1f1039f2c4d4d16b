"""Models: the protocol, and ScriptedModel for offline use."""

from ._base import Model, ModelError, model_name
from ._scripted import Chunks, ScriptedModel, call

__all__ = ["Chunks", "Model", "ModelError", "ScriptedModel", "call", "model_name"]
