"""A small torch.nn.Module for the export_param_shapes.py test."""
import torch


def tiny_mlp():
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3), torch.nn.Linear(3, 2, bias=False))
