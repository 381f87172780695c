import json
import re
import warnings

import numpy as np
import pytest
from scipy import stats

from genprobe.analysis import variance
from genprobe.analysis.variance import decompose_variance
from genprobe.errors import ConfigError

TRUE = np.array([4.0, 1.0, 0.25])  # σ²_init, σ²_order, σ²_resid


def _grid(rng, n_init=40, n_order=40):
    a = rng.normal(0, np.sqrt(TRUE[0]), n_init)
    b = rng.normal(0, np.sqrt(TRUE[1]), n_order)
    e = rng.normal(0, np.sqrt(TRUE[2]), (n_init, n_order))
    return a[:, None] + b[None, :] + e, a, b, e


def _components(d):
    return d.init, d.order, d.residual


def _least_squares_sums_of_squares(y):
    """The ANOVA sums of squares as drops in the residual sum of squares of nested least-squares
    fits on dummy-coded factors (intercept; + init; + order), independently of the module."""
    n_init, n_order = y.shape
    rows = np.repeat(np.eye(n_init), n_order, axis=0)[:, 1:]  # (I·O, I-1), row-major cells
    cols = np.tile(np.eye(n_order), (n_init, 1))[:, 1:]  # (I·O, O-1)
    ones = np.ones((y.size, 1))

    def rss(x):
        coef = np.linalg.lstsq(x, y.ravel(), rcond=None)[0]
        return float(np.sum((y.ravel() - x @ coef) ** 2))

    rss_mean, rss_init = rss(ones), rss(np.hstack([ones, rows]))
    rss_full = rss(np.hstack([ones, rows, cols]))
    return rss_mean - rss_init, rss_init - rss_full, rss_full, rss_mean


def test_point_estimates_match_least_squares_on_dummy_coded_factors():
    y = np.random.default_rng(3).random((6, 9))  # not square: a swapped I and O would show
    ss_init, ss_order, ss_resid, _ = _least_squares_sums_of_squares(y)
    d = decompose_variance(y, resamples=200)
    df_resid = 5 * 8
    ms_init, ms_order, ms_resid = ss_init / 5, ss_order / 8, ss_resid / df_resid
    assert (d.init.df, d.order.df, d.residual.df) == (5, 8, df_resid)
    expected = [ss_init, ss_order, ss_resid]
    assert [c.sum_of_squares for c in _components(d)] == pytest.approx(expected)
    assert [c.mean_square for c in _components(d)] == pytest.approx([ms_init, ms_order, ms_resid])
    raw = [(ms_init - ms_resid) / 9, (ms_order - ms_resid) / 6, ms_resid]
    assert [c.raw for c in _components(d)] == pytest.approx(raw)
    assert [c.variance for c in _components(d)] == pytest.approx([max(r, 0) for r in raw])
    assert d.total == pytest.approx(sum(max(r, 0) for r in raw))
    assert d.init.f == pytest.approx(ms_init / ms_resid)
    assert d.order.p == pytest.approx(stats.f.sf(ms_order / ms_resid, 8, df_resid))
    assert d.residual.f is None and d.residual.p is None
    assert d.mean == pytest.approx(y.mean()) and d.reason is None


@pytest.mark.parametrize("shape", [(2, 2), (3, 7), (7, 3), (1, 5), (5, 1), (12, 12)])
def test_the_sums_of_squares_add_up_to_the_total(shape):
    y = np.random.default_rng(sum(shape)).random(shape)
    d = decompose_variance(y, resamples=50)
    total = sum(c.sum_of_squares for c in _components(d))
    assert total == pytest.approx(np.sum((y - y.mean()) ** 2))
    if 1 not in shape:
        assert _least_squares_sums_of_squares(y)[:3] == pytest.approx(
            [c.sum_of_squares for c in _components(d)]
        )


def test_estimates_are_near_the_truth_and_intervals_cover_it():
    rng = np.random.default_rng(0)
    y, a, b, e = _grid(rng)
    d = decompose_variance(y, resamples=2000)
    # Against this grid's own effects: what the 40 levels drawn actually spread by.
    realized = [np.var(a, ddof=1), np.var(b, ddof=1), np.var(e, ddof=1)]
    assert [c.variance for c in _components(d)] == pytest.approx(realized, rel=0.06)
    assert d.init.p < 1e-12 and d.order.p < 1e-12

    # Against the population values, over independent grids: the estimates are unbiased and
    # the 95 % intervals cover the truth nearly as often as they claim (about 91 % in a
    # 300-grid simulation; see the module's docstring).
    share = TRUE / TRUE.sum()
    estimates, covered, shares_covered = [], [], []
    for _ in range(40):
        y = _grid(rng)[0]
        d = decompose_variance(y, resamples=500, seed=int(rng.integers(2**31)))
        estimates.append([c.variance for c in _components(d)])
        covered.append([lo <= t <= hi for (lo, hi), t in zip(_cis(d), TRUE, strict=True)])
        shares_covered.append(
            [
                c.share_ci[0] <= s <= c.share_ci[1]
                for c, s in zip(_components(d), share, strict=True)
            ]
        )
    assert np.mean(estimates, axis=0) == pytest.approx(TRUE, rel=0.12)
    assert np.all(np.mean(covered, axis=0) >= 0.8)
    assert np.all(np.mean(shares_covered, axis=0) >= 0.85)


def _cis(d):
    return [c.variance_ci for c in _components(d)]


def test_a_pure_row_effect_leaves_nothing_to_the_order_seed():
    rng = np.random.default_rng(1)
    a = rng.normal(0.7, 0.1, 8)[:, None]
    exact = decompose_variance(np.repeat(a, 6, axis=1), resamples=500)
    assert exact.init.share == pytest.approx(1.0)
    assert exact.order.share == pytest.approx(0.0, abs=1e-9)
    # Every resample splits the same way: no zero-width interval claims that certainty.
    assert exact.init.share_ci is exact.order.share_ci is exact.residual.share_ci is None
    assert exact.init.variance_ci[0] < exact.init.variance < exact.init.variance_ci[1]
    flat = "init share, order variance, order share, residual variance, residual share"
    assert f"no interval for the {flat}: every resample gives the same" in exact.reason
    noisy = decompose_variance(a + rng.normal(0, 0.005, (8, 6)), resamples=500)
    assert noisy.init.share > 0.95 and noisy.order.share < 0.02
    assert noisy.order.share_ci[1] < 0.05 and noisy.order.p > 0.01


@pytest.mark.parametrize("transpose", [False, True])
def test_one_seed_of_a_kind_is_a_one_factor_study(transpose):
    x = np.random.default_rng(2).random((1, 7))
    y = x.T if transpose else x
    varying, fixed = ("init", "order") if transpose else ("order", "init")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = decompose_variance(y, resamples=500)
    moving, still = getattr(d, varying), getattr(d, fixed)
    assert moving.variance == pytest.approx(np.var(x, ddof=1)) and moving.share == 1.0
    assert moving.share_ci is None and f"no interval for the {varying} share" in d.reason
    assert moving.variance_ci[0] < moving.variance < moving.variance_ci[1]
    assert moving.f is None and moving.p is None and moving.df == 6
    for c in (still, d.residual):
        assert c.variance is c.share is c.variance_ci is c.mean_square is c.f is None
        assert c.sum_of_squares == 0.0 and c.df == 0
    assert d.total == pytest.approx(moving.variance)
    assert f"one {fixed} seed" in d.reason and f"{fixed} is not estimable" in d.reason
    assert f"{fixed} n/a" in d.summary() and f"{varying} 100 %" in d.summary()


def test_one_member_estimates_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = decompose_variance(np.array([[0.42]]))
    assert d.mean == 0.42 and d.total is None
    for c in _components(d):
        assert c.variance is c.raw is c.share is c.variance_ci is c.share_ci is None
    assert "one member" in d.reason
    assert d.summary().startswith("init n/a, order n/a, residual n/a (1×1 members")


@pytest.mark.parametrize("shape", [(4, 5), (1, 5)])
def test_a_constant_matrix_has_zero_variance_and_no_shares(shape):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = decompose_variance(np.full(shape, 0.1), resamples=500)
    assert d.total == 0.0
    for c in _components(d):
        assert c.share is None and c.share_ci is None and c.f is None and c.p is None
    estimable = [c for c in _components(d) if c.variance is not None]
    assert len(estimable) == (3 if shape[0] > 1 else 1)
    for c in estimable:
        assert c.variance == 0.0 and c.variance_ci is None
    assert "zero variance" in d.reason and "no interval for the" in d.reason


@pytest.mark.parametrize(
    ("y", "match"),
    [
        (np.array([[0.5, np.nan], [0.4, 0.3]]), r"y must be finite.*\(0, 1\)"),
        (np.array([[0.5, np.inf], [0.4, 0.3]]), r"y must be finite"),
        (np.array([0.5, 0.4]), r"2-D matrix.*\(2,\)"),
        (np.zeros((0, 3)), r"non-empty"),
    ],
)
def test_bad_matrices_are_refused(y, match):
    with pytest.raises(ConfigError, match=match):
        decompose_variance(y)


def test_bad_settings_are_refused():
    y = np.random.default_rng(0).random((3, 3))
    with pytest.raises(ConfigError, match="confidence"):
        decompose_variance(y, confidence=1.0)
    with pytest.raises(ConfigError, match="resamples"):
        decompose_variance(y, resamples=0)


def test_the_bootstrap_is_reproducible_and_independent_of_chunking(monkeypatch):
    y = _grid(np.random.default_rng(4), 7, 5)[0]
    d = decompose_variance(y, resamples=1000, seed=11)
    assert decompose_variance(y, resamples=1000, seed=11) == d
    monkeypatch.setattr(variance, "_CHUNK_CELLS", 3 * y.size)  # 3 resamples per chunk
    assert decompose_variance(y, resamples=1000, seed=11) == d
    other = decompose_variance(y, resamples=1000, seed=12)
    assert other.init.variance == d.init.variance and other.init.variance_ci != d.init.variance_ci


def test_the_bootstrap_resamples_rows_and_columns_independently():
    # A plain loop over resamples, drawing the same indices, with the least-squares estimates.
    y = np.random.default_rng(5).random((5, 4))
    d = decompose_variance(y, resamples=300, seed=7, confidence=0.9)
    rng = np.random.default_rng(7)
    rows, cols = rng.integers(5, size=(300, 5)), rng.integers(4, size=(300, 4))
    boot = []
    for r, c in zip(rows, cols, strict=True):
        ss_init, ss_order, ss_resid, _ = _least_squares_sums_of_squares(y[np.ix_(r, c)])
        ms_resid = ss_resid / 12
        boot.append(
            np.maximum([(ss_init / 4 - ms_resid) / 4, (ss_order / 3 - ms_resid) / 5, ms_resid], 0)
        )
    expected = np.percentile(np.array(boot), [5, 95], axis=0).T
    assert np.array(_cis(d)) == pytest.approx(expected, abs=1e-10)


def test_the_result_is_json_and_summarizes_in_one_line():
    d = decompose_variance(_grid(np.random.default_rng(6), 5, 5)[0], resamples=500)
    record = json.loads(json.dumps(d.to_dict(), allow_nan=False))
    assert record["n_init"] == 5 and record["init"]["share_ci"] == list(d.init.share_ci)
    assert re.fullmatch(
        r"init \d+ % \[\d+, \d+\], order \d+ % \[\d+, \d+\], residual \d+ % \[\d+, \d+\] "
        r"\(5×5 members\)",
        d.summary(),
    )
    for degenerate in (np.ones((1, 1)), np.ones((3, 3)), np.ones((1, 3))):
        json.dumps(decompose_variance(degenerate, resamples=50).to_dict(), allow_nan=False)
