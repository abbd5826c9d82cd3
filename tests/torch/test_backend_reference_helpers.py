"""FastEstimator's torch-only backend helpers and get_framework / get_scaled_data on torch."""
import numpy as np
import torch

from fe_core.backend import get_framework, get_scaled_data
from fe_torch.backend.reference_losses import preprocess_torch_weights, pytorch_focal_loss


def test_get_framework_and_scaled_data_on_torch():
    tensor = torch.zeros(2)
    assert get_framework(tensor) == ("torch", tensor.device)
    scaled = get_scaled_data((0.5,), 2.0, framework="torch", device=torch.device("cpu"))
    assert isinstance(scaled, torch.Tensor) and scaled.dtype == torch.float32 and scaled.tolist() == [1.0]


def test_pytorch_focal_loss_matches_its_formula_and_logits():
    y_true = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    y_pred = torch.tensor([[0.9, 0.2], [0.4, 0.3]])
    loss = pytorch_focal_loss(y_pred, y_true, alpha=0.25, gamma=2)
    p_t = np.where(y_true.numpy() == 1, y_pred.numpy(), 1 - y_pred.numpy())
    alpha_t = np.where(y_true.numpy() == 1, 0.25, 0.75)
    expected = -alpha_t * (1 - p_t) ** 2 * np.log(p_t)
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-5)
    logits = torch.logit(y_pred)
    np.testing.assert_allclose(pytorch_focal_loss(logits, y_true, from_logits=True).numpy(), expected, rtol=1e-4)
    assert torch.allclose(pytorch_focal_loss(y_pred, y_true, alpha=-1, gamma=0),
                          torch.nn.functional.binary_cross_entropy(y_pred, y_true, reduction="none"))


def test_preprocess_torch_weights_strips_data_parallel_prefixes(tmp_path):
    model = torch.nn.Linear(2, 1)
    torch.save(torch.nn.DataParallel(model).state_dict(), tmp_path / "w.pt")
    state = preprocess_torch_weights(str(tmp_path / "w.pt"))
    assert list(state) == ["weight", "bias"]
    torch.nn.Linear(2, 1).load_state_dict(state)
