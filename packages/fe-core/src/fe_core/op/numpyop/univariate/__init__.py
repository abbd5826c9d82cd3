"""Univariate NumpyOps: each input key is transformed on its own into the matching output key.

The layout follows FastEstimator's `fe.op.numpyop.univariate`: one module per op (image augmentations built on
albumentations / OpenCV / Pillow, which come with the `image` extra and are imported only when an op is built;
label, text and array ops in plain numpy), plus the bases `UnivariateOp` and `ImageOnlyAlbumentation`.
"""
from fe_core.op.numpyop.univariate.autocontrast import AutoContrast
from fe_core.op.numpyop.univariate.binarize import Binarize
from fe_core.op.numpyop.univariate.blur import Blur
from fe_core.op.numpyop.univariate.brightness import Brightness
from fe_core.op.numpyop.univariate.calibate import Calibrate
from fe_core.op.numpyop.univariate.channel_dropout import ChannelDropout
from fe_core.op.numpyop.univariate.channel_shuffle import ChannelShuffle
from fe_core.op.numpyop.univariate.channel_transpose import ChannelTranspose
from fe_core.op.numpyop.univariate.clahe import CLAHE
from fe_core.op.numpyop.univariate.coarse_dropout import CoarseDropout
from fe_core.op.numpyop.univariate.color import Color
from fe_core.op.numpyop.univariate.color_jitter import ColorJitter
from fe_core.op.numpyop.univariate.contrast import Contrast
from fe_core.op.numpyop.univariate.defocus import Defocus
from fe_core.op.numpyop.univariate.downscale import Downscale
from fe_core.op.numpyop.univariate.equalize import Equalize
from fe_core.op.numpyop.univariate.expand_dims import ExpandDims
from fe_core.op.numpyop.univariate.fda import FDA
from fe_core.op.numpyop.univariate.from_float import FromFloat
from fe_core.op.numpyop.univariate.gaussian_blur import GaussianBlur
from fe_core.op.numpyop.univariate.gaussian_noise import GaussianNoise
from fe_core.op.numpyop.univariate.hadamard import Hadamard
from fe_core.op.numpyop.univariate.histogram_matching import HistogramMatching
from fe_core.op.numpyop.univariate.hue_saturation_value import HueSaturationValue
from fe_core.op.numpyop.univariate.image_compression import ImageCompression
from fe_core.op.numpyop.univariate.invert_img import InvertImg
from fe_core.op.numpyop.univariate.iso_noise import ISONoise
from fe_core.op.numpyop.univariate.median_blur import MedianBlur
from fe_core.op.numpyop.univariate.minmax import Minmax
from fe_core.op.numpyop.univariate.motion_blur import MotionBlur
from fe_core.op.numpyop.univariate.multiplicative_noise import MultiplicativeNoise
from fe_core.op.numpyop.univariate.normalize import Normalize
from fe_core.op.numpyop.univariate.onehot import Onehot
from fe_core.op.numpyop.univariate.pad_sequence import PadSequence
from fe_core.op.numpyop.univariate.pixel_distribution_adaptation import PixelDistributionAdaptation
from fe_core.op.numpyop.univariate.posterize import Posterize
from fe_core.op.numpyop.univariate.random_brightness_contrast import RandomBrightnessContrast
from fe_core.op.numpyop.univariate.random_fog import RandomFog
from fe_core.op.numpyop.univariate.random_gamma import RandomGamma
from fe_core.op.numpyop.univariate.random_rain import RandomRain
from fe_core.op.numpyop.univariate.random_shadow import RandomShadow
from fe_core.op.numpyop.univariate.random_shapes import RandomShapes
from fe_core.op.numpyop.univariate.random_snow import RandomSnow
from fe_core.op.numpyop.univariate.random_sun_flare import RandomSunFlare
from fe_core.op.numpyop.univariate.read_image import ReadImage
from fe_core.op.numpyop.univariate.reshape import Reshape
from fe_core.op.numpyop.univariate.rgb_shift import RGBShift
from fe_core.op.numpyop.univariate.rua import RUA
from fe_core.op.numpyop.univariate.sharpness import Sharpness
from fe_core.op.numpyop.univariate.shear_x import ShearX
from fe_core.op.numpyop.univariate.shear_y import ShearY
from fe_core.op.numpyop.univariate.solarize import Solarize
from fe_core.op.numpyop.univariate.to_array import ToArray
from fe_core.op.numpyop.univariate.to_float import ToFloat
from fe_core.op.numpyop.univariate.to_gray import ToGray
from fe_core.op.numpyop.univariate.to_sepia import ToSepia
from fe_core.op.numpyop.univariate.tokenize import Tokenize
from fe_core.op.numpyop.univariate.translate_x import TranslateX
from fe_core.op.numpyop.univariate.translate_y import TranslateY
from fe_core.op.numpyop.univariate.word_to_id import WordtoId
from fe_core.op.numpyop.univariate.zoom_blur import ZoomBlur
from fe_core.op.numpyop.univariate.univariate import ImageOnlyAlbumentation, UnivariateOp

__all__ = ["AutoContrast", "Binarize", "Blur", "Brightness", "Calibrate", "ChannelDropout", "ChannelShuffle",
           "ChannelTranspose", "CLAHE", "CoarseDropout", "Color", "ColorJitter", "Contrast", "Defocus", "Downscale",
           "Equalize", "ExpandDims", "FDA", "FromFloat", "GaussianBlur", "GaussianNoise", "Hadamard",
           "HistogramMatching", "HueSaturationValue", "ImageCompression", "InvertImg", "ISONoise", "MedianBlur",
           "Minmax", "MotionBlur", "MultiplicativeNoise", "Normalize", "Onehot", "PadSequence",
           "PixelDistributionAdaptation", "Posterize", "RandomBrightnessContrast", "RandomFog", "RandomGamma",
           "RandomRain", "RandomShadow", "RandomShapes", "RandomSnow", "RandomSunFlare", "ReadImage", "Reshape",
           "RGBShift", "RUA", "Sharpness", "ShearX", "ShearY", "Solarize", "ToArray", "ToFloat", "ToGray", "ToSepia",
           "Tokenize", "TranslateX", "TranslateY", "WordtoId", "ZoomBlur", "ImageOnlyAlbumentation", "UnivariateOp"]
