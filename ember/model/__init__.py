"""A decoder model's pieces on top of the kernels: its weights and hyperparameters read
from a GGUF file (gguf_weights.py)."""
