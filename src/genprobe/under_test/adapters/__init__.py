"""Adapters that put any kind of model behind `genprobe.tasks.integration.under_test.Model`."""
