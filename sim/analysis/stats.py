"""The statistics behind the metrics: thin, edge-safe wrappers around statsmodels
and scipy, so every formula comes from a well-kept library and only the edges
(no data, no discordant pair, zero variance) are decided here.

* `wilson`: Wilson score interval of a binomial proportion
  (statsmodels `proportion_confint(method="wilson")`); `wilson_bounds`: the same
  for whole arrays of counts in one call.
* `multinomial_intervals`: Goodman's simultaneous intervals for the shares of a
  mix of categories (`multinomial_proportions_confint(method="goodman")`), which
  are the Wilson intervals at confidence ``1 - (1 - confidence) / K``.
* `mean_interval`: a normal-approximation interval of a mean, treating every
  value as independent (statsmodels `DescrStatsW.zconfint_mean`).
* `median_interval`: the order-statistic interval of a median
  (scipy `quantile_test(...).confidence_interval()`).
* `clustered_mean`: the mean of values that come in correlated groups (the seats
  of one match) with a cluster-robust interval (statsmodels OLS,
  `cov_type="cluster"`).
* `clustered_difference`: the difference of two arms' means observed on the same
  clusters (a variant and its baseline on the same seeded matches), with a
  cluster-robust interval and a t-test p-value; with one value per match and arm
  it is exactly the paired t-test.
* `paired_t`: the paired t-test and interval of per-match differences
  (statsmodels `DescrStatsW`), clustered_difference's numbers for one value per
  match and arm, cheap enough for a family of hundreds of tests.
* `mcnemar_exact`: exact McNemar test (statsmodels `mcnemar(exact=True)`).
* `paired_share_interval`: interval of a difference of paired shares
  (Newcombe's square-and-add of two Wilson intervals, written here: the
  statsmodels we use has no paired version).
* `stuart_maxwell`: the joint test of a whole paired mix of categories
  (statsmodels `SquareTable.homogeneity()`).
* `holm`, `benjamini_hochberg`: adjusted p-values (statsmodels `multipletests`).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import math
import sys
import threading
from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np

_LOAD = threading.Lock()
_LIBS: SimpleNamespace | None = None


def _lib(without_pyarrow: bool = False) -> SimpleNamespace:
    """scipy.stats and the statsmodels routines wrapped here, imported on first use:
    they take 1.5-2 s to import (scipy.stats, pandas under statsmodels), which the
    report spends on its first Parquet scans instead (preload). One lock around the
    imports, so a preload thread and a first call never import them at the same time.

    `without_pyarrow` (the report's preload): pandas, which statsmodels imports, also
    imports pyarrow when it can (pandas.compat.pyarrow, to know its version), 35 MB of
    the report's memory for a library nothing in the report calls (polars reads the
    Parquet itself). When neither pandas nor pyarrow is loaded yet, pandas is then
    imported with pyarrow held out of reach, so it takes pyarrow as absent: the
    statistics do not change (statsmodels computes with numpy), and pyarrow stays
    importable afterwards. A process that already holds either is left as it is."""
    global _LIBS
    if _LIBS is None:
        with _LOAD:
            if _LIBS is None:
                hold_out = without_pyarrow and not {"pandas", "pyarrow"} & set(sys.modules)
                if hold_out:
                    sys.modules["pyarrow"] = None  # `import pyarrow` raises ImportError
                try:
                    _LIBS = _import_libs()
                finally:
                    if hold_out and sys.modules.get("pyarrow", ...) is None:
                        del sys.modules["pyarrow"]
    return _LIBS


def _import_libs() -> SimpleNamespace:
    from scipy import stats as sps
    from statsmodels.regression.linear_model import OLS
    from statsmodels.stats.contingency_tables import SquareTable, mcnemar
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.proportion import (
        multinomial_proportions_confint,
        proportion_confint,
    )
    from statsmodels.stats.weightstats import DescrStatsW

    return SimpleNamespace(
        sps=sps, OLS=OLS, SquareTable=SquareTable, mcnemar=mcnemar,
        multipletests=multipletests,
        multinomial_proportions_confint=multinomial_proportions_confint,
        proportion_confint=proportion_confint, DescrStatsW=DescrStatsW)


def preload(without_pyarrow: bool = False, then: tuple[str, ...] = ()) -> threading.Thread:
    """Import the libraries (_lib, `without_pyarrow` as there), and after them the
    modules named in `then` (what the caller needs later than statistics), in a thread
    of their own, started here, and return it. The imports hold the interpreter lock,
    but polars releases it while it scans, so a caller that scans first gets them on
    the other core. One thread for all: two importing at once could each wait for a
    module the other is importing. Not a daemon thread: an interpreter that exits
    early waits for the imports instead of stopping them halfway."""
    def load() -> None:
        _lib(without_pyarrow)
        for name in then:  # a failing import fails again, and is reported, where it is used
            with contextlib.suppress(Exception):
                importlib.import_module(name)

    thread = threading.Thread(target=load, name="stats-preload")
    thread.start()
    return thread

# A cluster-robust standard error below this fraction of the naive one (sd/√n) is the
# rounding residue of the fit (about 1e-9 of it when the two arms are identical), not
# spread: no real pairing is that tight.
_ZERO_SPREAD = 1e-7


def _no_spread(se: float, y: np.ndarray) -> bool:
    """Values all equal (up to rounding), or clusters that all moved by the same amount."""
    naive = float(y.std()) / math.sqrt(y.size)
    return naive <= 1e-12 * float(np.abs(y).max()) or se <= _ZERO_SPREAD * naive


def _alpha(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    return 1.0 - confidence


def two_sided_z(confidence: float) -> float:
    """The two-sided normal quantile for `confidence` (1.95996… at 0.95)."""
    return float(_lib().sps.norm.ppf(1.0 - _alpha(confidence) / 2.0))


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for k successes out of n trials.

    ``(0.0, 1.0)`` when n is 0; the bounds are exactly 0 (k = 0) and 1 (k = n) at
    the edges. Example: k=8, n=10 at 95% gives (0.4902, 0.9433).
    """
    _alpha(confidence)
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    lo, hi = wilson_bounds([k], [n], confidence)
    return float(lo[0]), float(hi[0])


def wilson_bounds(k: Sequence[int] | np.ndarray, n: Sequence[int] | np.ndarray,
                  confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """`wilson` of every pair (k[i], n[i]) at once, as two float arrays: one
    `proportion_confint` call on the whole arrays (the same formula, element by
    element) instead of one call per row, which a table of a few hundred rows paid
    for in call overhead. NaN bounds where n is 0 (callers turn them into nulls);
    the same exact edges as `wilson`."""
    alpha = _alpha(confidence)
    k, n = np.asarray(k, dtype=np.int64), np.asarray(n, dtype=np.int64)
    if k.shape != n.shape or np.any((n < 0) | (k < 0) | (k > n)):
        raise ValueError("need 0 <= k <= n for every pair, and as many k as n")
    lo, hi = np.full(k.shape, math.nan), np.full(k.shape, math.nan)
    some = n > 0
    if some.any():
        lo[some], hi[some] = _lib().proportion_confint(k[some], n[some], alpha=alpha,
                                                        method="wilson")
        # exact edges: the library's arithmetic leaves 1e-17 residues there
        lo[some & (k == 0)] = 0.0
        hi[some & (k == n)] = 1.0
    return lo, hi


def multinomial_intervals(counts: Sequence[int],
                          confidence: float = 0.95) -> list[tuple[float, float]]:
    """Goodman's simultaneous intervals for the category shares of one sample.

    With K categories all K intervals cover their true shares together with
    probability at least `confidence` (asymptotically). Goodman's interval of
    category i is the Wilson interval of counts[i] out of sum(counts) at
    confidence ``1 - (1 - confidence) / K`` (Bonferroni), conservative as K grows.
    No category gives []; no observation gives (0, 1) for every category.
    """
    alpha = _alpha(confidence)
    if len(counts) == 0:
        return []
    if sum(counts) == 0:
        return [(0.0, 1.0)] * len(counts)
    bounds = _lib().multinomial_proportions_confint(np.asarray(counts, dtype=float),
                                                   alpha=alpha, method="goodman")
    return [(0.0 if c == 0 else float(lo), float(hi))
            for c, (lo, hi) in zip(counts, bounds, strict=True)]


def mean_interval(values: Sequence[float] | np.ndarray,
                  confidence: float = 0.95) -> tuple[float, float, float, int]:
    """(mean, lo, hi, n) with the normal approximation mean ± z·sd/√n.

    sd is the sample standard deviation (n - 1); every value counts as an
    independent observation (for values that come in groups, see
    `clustered_mean`). NaN values are dropped. The bounds are NaN when n < 2,
    everything is NaN when n is 0.
    """
    alpha = _alpha(confidence)
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan, math.nan, n
    lo, hi = _lib().DescrStatsW(x).zconfint_mean(alpha=alpha)
    return mean, float(lo), float(hi), n


def median_interval(values: Sequence[float] | np.ndarray,
                    confidence: float = 0.95) -> tuple[float, float, float, int]:
    """(median, lo, hi, n): the sample median (the mean of the two middle values
    when n is even) with the distribution-free order-statistic interval of the
    population median (scipy `quantile_test(p=0.5).confidence_interval()`: the
    bounds are sample values whose ranks a Binomial(n, 1/2) places around the
    middle, so the interval holds for any distribution and suits integer end
    turns). NaN values are dropped. Everything is NaN with no value; a bound is
    NaN when n is too small for the level (below 6 values at 95 %: no pair of
    order statistics covers the median that often), as scipy gives it.
    """
    alpha = _alpha(confidence)
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    median = float(np.median(x))
    ci = _lib().sps.quantile_test(x, q=median, p=0.5).confidence_interval(1.0 - alpha)
    return median, float(ci.low), float(ci.high), n


def _groups(clusters: Sequence | np.ndarray) -> np.ndarray:
    """Cluster labels as consecutive integers (statsmodels wants integer groups)."""
    return np.unique(np.asarray(clusters), return_inverse=True)[1].ravel()


def clustered_mean(values: Sequence[float] | np.ndarray, clusters: Sequence | np.ndarray,
                   confidence: float = 0.95) -> tuple[float, float, float, int, int]:
    """(mean, lo, hi, n, clusters) of values that are correlated within clusters.

    The mean of all n values (each value weighs the same) with a cluster-robust
    interval: the intercept of an OLS fit with statsmodels' `cov_type="cluster"`
    (CR1: small-sample factor G/(G − 1) for G clusters) and Student t with G − 1
    degrees of freedom. Values of one cluster may be as correlated as they like;
    clusters must be independent (matches of a sweep are). NaN values are
    dropped. lo, hi are NaN with fewer than 2 clusters; everything is NaN with
    no value. Zero spread gives lo = hi = mean.
    """
    alpha = _alpha(confidence)
    y = np.asarray(values, dtype=float)
    keep = ~np.isnan(y)
    if not keep.any():
        return math.nan, math.nan, math.nan, 0, 0
    y, g = y[keep], _groups(np.asarray(clusters)[keep])
    n, n_groups = int(y.size), int(np.unique(g).size)
    mean = float(y.mean())
    if n_groups < 2:
        return mean, math.nan, math.nan, n, n_groups
    fit = _lib().OLS(y, np.ones((n, 1))).fit(cov_type="cluster", cov_kwds={"groups": g},
                                                use_t=True)
    se = float(fit.bse[0])
    if _no_spread(se, y):
        return mean, mean, mean, n, n_groups
    half = float(_lib().sps.t.ppf(1.0 - alpha / 2.0, n_groups - 1)) * se
    return mean, mean - half, mean + half, n, n_groups


def clustered_difference(values: Sequence[float] | np.ndarray,
                         treated: Sequence[bool] | np.ndarray,
                         clusters: Sequence | np.ndarray,
                         confidence: float = 0.95) -> tuple[float, float, float, float, int]:
    """(difference, lo, hi, p, clusters): treated mean minus untreated mean, both
    arms observed on the same clusters (a variant and its baseline on the same
    seeded matches), each value weighing the same within its arm.

    The coefficient of `treated` in an OLS fit of values on [1, treated] with a
    cluster-robust covariance (statsmodels `cov_type="cluster"`, the sandwich
    without statsmodels' extra (N − 1)/(N − K) factor, times G/(G − 1) for G
    clusters) and Student t with G − 1 degrees of freedom. So the pairing of the
    arms and any correlation among the values of one cluster are accounted for;
    with one value per cluster and arm this is exactly the paired t-test
    (scipy.stats.ttest_rel). The p-value is continuous (no resampling floor), so
    it keeps its resolution however many tests are corrected together.
    Edges: NaN values are dropped; fewer than 2 clusters give NaN bounds and p;
    zero spread gives lo = hi = difference and p = 1 if the difference is 0, else 0.
    """
    alpha = _alpha(confidence)
    y = np.asarray(values, dtype=float)
    x = np.asarray(treated, dtype=float)
    keep = ~np.isnan(y)
    if not keep.any():
        return math.nan, math.nan, math.nan, math.nan, 0
    y, x, g = y[keep], x[keep], _groups(np.asarray(clusters)[keep])
    n_groups = int(np.unique(g).size)
    if not (x == 1).any() or not (x == 0).any():
        return math.nan, math.nan, math.nan, math.nan, n_groups
    diff = float(y[x == 1].mean() - y[x == 0].mean())
    if n_groups < 2:
        return diff, math.nan, math.nan, math.nan, n_groups
    fit = _lib().OLS(y, np.column_stack([np.ones_like(x), x])).fit(
        cov_type="cluster", cov_kwds={"groups": g, "use_correction": False})
    # rounding can leave a zero variance a hair below 0
    se = math.sqrt(max(0.0, float(fit.cov_params()[1, 1])) * n_groups / (n_groups - 1))
    if _no_spread(se, y):
        # every cluster shifted by the same amount: none (p 1) or a sure one (p 0); the
        # tolerance absorbs summation order
        if abs(diff) <= 1e-12 * float(np.abs(y).max()):
            return 0.0, 0.0, 0.0, 1.0, n_groups
        return diff, diff, diff, 0.0, n_groups
    df = n_groups - 1
    student = _lib().sps.t
    half = float(student.ppf(1.0 - alpha / 2.0, df)) * se
    p = float(2.0 * student.sf(abs(diff) / se, df))
    return diff, diff - half, diff + half, min(1.0, p), n_groups


def paired_t(differences: Sequence[float] | np.ndarray,
             confidence: float = 0.95) -> tuple[float, float, float, float, int]:
    """(mean, lo, hi, p, n) of paired differences (one per match: variant minus
    baseline): the paired t-test of mean 0 and its t interval (statsmodels
    `DescrStatsW.ttest_mean`, `tconfint_mean`); the same numbers as
    `clustered_difference` with one value per match and arm, without a regression
    per test, for families of hundreds of tests. NaN values are dropped. Edges as
    clustered_difference's: fewer than 2 differences give NaN bounds and p; zero
    spread gives lo = hi = mean and p = 1 if the mean is 0, else 0."""
    alpha = _alpha(confidence)
    d = np.asarray(differences, dtype=float)
    d = d[~np.isnan(d)]
    n = int(d.size)
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan, 0
    mean = float(d.mean())
    if n < 2:
        return mean, math.nan, math.nan, math.nan, n
    if float(d.std()) <= 1e-12 * max(1.0, float(np.abs(d).max())):
        return mean, mean, mean, 1.0 if mean == 0 else 0.0, n
    described = _lib().DescrStatsW(d)
    lo, hi = described.tconfint_mean(alpha=alpha)
    p = float(described.ttest_mean(0.0)[1])
    return mean, float(lo), float(hi), p, n


def mcnemar_exact(b: int, c: int) -> float:
    """Exact McNemar p-value: two-sided binomial test of b against b + c at 1/2.

    b and c are the discordant pairs (the indicator holds in one member of the
    pair only, one direction each): p = min(1, 2·P(X <= min(b, c))) with
    X ~ Binomial(b + c, 1/2) (statsmodels `mcnemar(exact=True)`); p = 1 when
    b + c = 0. The smallest p it can give with m discordant pairs is
    ``mcnemar_exact(m, 0)`` = 2·0.5^m.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got {b}, {c}")
    if b + c == 0:
        return 1.0
    return min(1.0, float(_lib().mcnemar([[0, b], [c, 0]], exact=True).pvalue))


def paired_share_interval(both: int, gain: int, loss: int, neither: int,
                          confidence: float = 0.95) -> tuple[float, float, float]:
    """(difference, lo, hi) of two paired shares: the variant's share minus the
    baseline's, (gain − loss) / n over the n = both + gain + loss + neither pairs.

    both: pairs where the indicator holds in both members; gain: in the variant's
    member only; loss: in the baseline's only; neither: in none. Newcombe's
    square-and-add interval (Newcombe 1998, method 10): the Wilson intervals of
    the two shares (statsmodels `proportion_confint(method="wilson")`) combined
    with the estimated correlation of the pair, continuity-corrected as in the
    paper (no library we have implements it). Unlike the Wald interval it stays
    honest at the edges: no discordant pair still gives an interval around 0, and
    all discordant pairs in one direction do not pin a bound to the estimate.
    n = 0 gives NaN.
    """
    _alpha(confidence)  # validated even when n is 0
    if min(both, gain, loss, neither) < 0:
        raise ValueError(f"counts must be >= 0, got {both}, {gain}, {loss}, {neither}")
    n = both + gain + loss + neither
    if n == 0:
        return math.nan, math.nan, math.nan
    p1, p2 = (both + gain) / n, (both + loss) / n
    l1, u1 = wilson(both + gain, n, confidence)
    l2, u2 = wilson(both + loss, n, confidence)
    margins = (both + gain) * (loss + neither) * (both + loss) * (gain + neither)
    cross = both * neither - gain * loss
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    else:
        phi = (cross - n / 2 if cross > 0 else cross) / math.sqrt(margins)
    diff = p1 - p2
    lo = diff - math.sqrt(max(0.0, (p1 - l1) ** 2 + (u2 - p2) ** 2
                              - 2 * phi * (p1 - l1) * (u2 - p2)))
    hi = diff + math.sqrt(max(0.0, (p2 - l2) ** 2 + (u1 - p1) ** 2
                              - 2 * phi * (p2 - l2) * (u1 - p1)))
    return diff, lo, hi


def stuart_maxwell(table: np.ndarray | Sequence[Sequence[int]]) -> tuple[float, int, float]:
    """(statistic, df, p): the Stuart–Maxwell test that a paired K×K table (rows:
    baseline category, columns: variant category) has equal row and column
    margins, i.e. the whole mix of categories did not move
    (statsmodels `SquareTable(...).homogeneity()`).

    A category without discordant pairs (nothing off the diagonal in its row and
    column) carries no information and would make the covariance singular, so
    it is left out, and df = (categories kept) − 1. Fewer than 2 categories kept
    (no pair changed category) gives (0, 0, 1).
    """
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] != t.shape[1]:
        raise ValueError(f"need a square table, got shape {t.shape}")
    off = t - np.diag(np.diag(t))
    keep = (off.sum(axis=0) + off.sum(axis=1)) > 0
    if keep.sum() < 2:
        return 0.0, 0, 1.0
    res = _lib().SquareTable(t[np.ix_(keep, keep)], shift_zeros=False).homogeneity()
    return float(res.statistic), int(res.df), float(res.pvalue)


def _adjust(pvalues: Sequence[float | None], method: str) -> list[float]:
    p = np.asarray([math.nan if v is None else v for v in pvalues], dtype=float)
    if np.any((p < 0) | (p > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    out = np.full(p.shape, math.nan)
    ok = ~np.isnan(p)
    if ok.any():
        # multipletests("holm") runs gc.collect(), 0.1 s in a process holding numba and
        # altair; frozen objects are skipped by it, and unfreezing puts them back as they were
        gc.freeze()
        try:
            out[ok] = _lib().multipletests(p[ok], method=method)[1]
        finally:
            gc.unfreeze()
    return out.tolist()


def holm(pvalues: Sequence[float | None]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error), in the input order
    (statsmodels `multipletests(method="holm")`).

    With the m p-values sorted, p_(1) <= … <= p_(m):
    adjusted_(i) = max_{j <= i} min(1, (m - j + 1)·p_(j)). NaN or None entries stay
    NaN and do not count in m.
    """
    return _adjust(pvalues, "holm")


def benjamini_hochberg(pvalues: Sequence[float | None]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (false discovery rate), in the input
    order (statsmodels `multipletests(method="fdr_bh")`).

    With p_(1) <= … <= p_(m): adjusted_(i) = min_{j >= i} min(1, m·p_(j) / j).
    NaN or None entries stay NaN and do not count in m.
    """
    return _adjust(pvalues, "fdr_bh")


__all__ = ["benjamini_hochberg", "clustered_difference", "clustered_mean", "holm",
           "mcnemar_exact", "mean_interval", "median_interval", "multinomial_intervals",
           "paired_share_interval", "paired_t", "stuart_maxwell", "two_sided_z", "wilson",
           "wilson_bounds"]
