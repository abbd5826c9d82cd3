"""fe-torch: the PyTorch backend of fe (TorchBackend, TorchNetwork, torch architectures)."""
from fe_torch.__about__ import __version__
from fe_torch.architecture import LeNet, ResNet9
from fe_torch.framework import TorchBackend
from fe_torch.checkpoint import load_model, load_weights, save_model
from fe_torch.network import TorchNetwork

__all__ = ["__version__", "TorchBackend", "TorchNetwork", "LeNet", "ResNet9", "save_model", "load_model",
           "load_weights"]
