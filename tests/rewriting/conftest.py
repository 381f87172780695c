import pytest

from genprobe.studies.seed_sensitivity import SweepConfig
from genprobe.training.trainer import TrainConfig


@pytest.fixture(scope="session")
def tiny_sweep():
    """A factory of sweep configs that train for seconds: one epoch on 200 examples."""

    def make(seeds, **kwargs) -> SweepConfig:
        return SweepConfig(
            seeds=seeds,
            train_size=200,
            validation_size=20,
            suite_size=12,
            train=TrainConfig(max_epochs=1),
            **kwargs,
        )

    return make
