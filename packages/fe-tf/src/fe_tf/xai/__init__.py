"""TensorFlow halves of fe_core.xai (mirrored module names): input gradients for saliency maps."""
__all__: list = []
