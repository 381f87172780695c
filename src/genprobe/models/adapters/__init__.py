"""Adapters that put any kind of model behind `genprobe.models.base.Model`."""
