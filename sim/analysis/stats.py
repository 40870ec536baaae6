"""Small statistics for comparing variants, written out so that no SciPy is needed.

* `wilson`: the Wilson score interval of a binomial proportion.
* `multinomial_intervals`: simultaneous intervals for the shares of a mix of
  categories (victory types): Bonferroni-adjusted Wilson intervals, each category
  at confidence ``1 - (1 - confidence) / K`` for K categories, so that all K
  intervals hold together with probability at least ``confidence``.
* `mean_interval`: a normal-approximation interval of a mean (z, not t).
* `mcnemar_exact`: the exact McNemar test, a two-sided exact binomial test of the
  discordant pairs b against c with success probability 1/2.
* `paired_bootstrap`: the mean of paired differences, its percentile bootstrap
  interval and a two-sided sign-flip permutation p-value.
* `holm`, `benjamini_hochberg`: adjusted p-values for many tests at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

# bootstrap work is done in blocks of at most this many drawn values
_BLOCK = 2_000_000


def two_sided_z(confidence: float) -> float:
    """The two-sided normal quantile for `confidence` (1.95996… at 0.95)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for k successes out of n trials.

    ``(0.0, 1.0)`` when n is 0; the bounds are exactly 0 (k = 0) and 1 (k = n) at
    the edges. Example: k=8, n=10 at 95% gives (0.4902, 0.9433).
    """
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    z = two_sided_z(confidence)
    if n == 0:
        return 0.0, 1.0
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return lo, hi


def multinomial_intervals(counts: Sequence[int],
                          confidence: float = 0.95) -> list[tuple[float, float]]:
    """Simultaneous intervals for the category shares of one multinomial sample.

    Bonferroni-adjusted Wilson: with K categories and n = sum(counts), category i
    gets ``wilson(counts[i], n, 1 - (1 - confidence) / K)``. By the Bonferroni
    inequality all K intervals cover their true shares together with probability
    at least `confidence` (approximately, as each Wilson interval is); the method
    is conservative, more so as K grows.
    """
    n = int(sum(counts))
    k_cat = len(counts)
    if k_cat == 0:
        return []
    level = 1.0 - (1.0 - confidence) / k_cat
    return [wilson(int(c), n, level) for c in counts]


def mean_interval(values: Sequence[float] | np.ndarray,
                  confidence: float = 0.95) -> tuple[float, float, float, int]:
    """(mean, lo, hi, n) with the normal approximation mean ± z·sd/√n.

    sd is the sample standard deviation (n - 1). NaN values are dropped. The
    bounds are NaN when n < 2, everything is NaN when n is 0.
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan, math.nan, n
    half = two_sided_z(confidence) * float(x.std(ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half, n


def _binom_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n <= 2000:  # exact integer arithmetic
        return sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    # log space for large n: log pmf(i) = lgamma(n+1) - lgamma(i+1) - lgamma(n-i+1) - n log 2
    base = math.lgamma(n + 1) - n * math.log(2.0)
    logs = [base - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(k + 1)]
    top = max(logs)
    return math.exp(top) * math.fsum(math.exp(v - top) for v in logs)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact McNemar p-value: two-sided binomial test of b against b + c at 1/2.

    b and c are the discordant pairs (the indicator holds in one member of the
    pair only, one direction each). p = min(1, 2·P(X <= min(b, c))) with
    X ~ Binomial(b + c, 1/2), which for p = 1/2 equals the sum of the
    probabilities of all outcomes no likelier than the observed one. p = 1 when
    b + c = 0.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got {b}, {c}")
    n = b + c
    if n == 0:
        return 1.0
    return min(1.0, 2.0 * _binom_half_cdf(min(b, c), n))


def paired_bootstrap(differences: Sequence[float] | np.ndarray, n_boot: int = 2000,
                     seed: int = 0,
                     confidence: float = 0.95) -> tuple[float, float, float, float]:
    """(mean, lo, hi, p) for paired differences (variant minus baseline, per pair).

    * mean: the mean difference.
    * lo, hi: percentile bootstrap interval of the mean (n_boot resamples of the
      pairs with replacement; the (1-confidence)/2 and (1+confidence)/2 quantiles,
      linear interpolation).
    * p: two-sided sign-flip permutation test of "the mean difference is 0".
      Under the null the two members of a pair are exchangeable, so each
      difference is as likely positive as negative; n_boot random sign vectors
      give the permutation distribution of the mean and
      p = (1 + #{|permuted mean| >= |observed mean|}) / (n_boot + 1), which is a
      valid p-value (never below its level under the null). All differences 0
      (identical variants) give p = 1.

    Reproducible: everything is drawn from numpy.random.default_rng(seed),
    bootstrap first, then the sign flips. NaN differences are dropped; with no
    difference left every output is NaN.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    two_sided_z(confidence)  # validates confidence
    level = confidence
    d = np.asarray(differences, dtype=float)
    d = d[~np.isnan(d)]
    n = int(d.size)
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan
    mean = float(d.mean())
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK // n)

    boot = np.empty(n_boot)
    for start in range(0, n_boot, block):
        stop = min(n_boot, start + block)
        idx = rng.integers(0, n, size=(stop - start, n))
        boot[start:stop] = d[idx].mean(axis=1)
    lo, hi = np.quantile(boot, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])

    observed = abs(mean)
    tol = 1e-9 * max(observed, float(np.abs(d).mean()), 1e-300)
    extreme = 0
    for start in range(0, n_boot, block):
        stop = min(n_boot, start + block)
        signs = rng.integers(0, 2, size=(stop - start, n)).astype(float) * 2.0 - 1.0
        perm = np.abs(signs @ d) / n
        extreme += int(np.count_nonzero(perm >= observed - tol))
    p = (1.0 + extreme) / (n_boot + 1.0)
    return mean, float(lo), float(hi), min(1.0, p)


def _clean(pvalues: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray([math.nan if v is None else v for v in pvalues], dtype=float)
    if np.any((p < 0) | (p > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    return p, np.flatnonzero(~np.isnan(p))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error), in the input order.

    With the m p-values sorted, p_(1) <= … <= p_(m):
    adjusted_(i) = max_{j <= i} min(1, (m - j + 1)·p_(j)). NaN or None entries stay
    NaN and do not count in m.
    """
    p, ok = _clean(pvalues)
    out = np.full(p.shape, math.nan)
    m = ok.size
    if m:
        order = ok[np.argsort(p[ok], kind="stable")]
        scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
        out[order] = np.maximum.accumulate(scaled)
    return out.tolist()


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (false discovery rate), in the input order.

    With p_(1) <= … <= p_(m): adjusted_(i) = min_{j >= i} min(1, m·p_(j) / j).
    NaN or None entries stay NaN and do not count in m.
    """
    p, ok = _clean(pvalues)
    out = np.full(p.shape, math.nan)
    m = ok.size
    if m:
        order = ok[np.argsort(p[ok], kind="stable")]
        scaled = np.minimum(1.0, p[order] * m / np.arange(1, m + 1))
        out[order] = np.minimum.accumulate(scaled[::-1])[::-1]
    return out.tolist()


__all__ = ["benjamini_hochberg", "holm", "mcnemar_exact", "mean_interval",
           "multinomial_intervals", "paired_bootstrap", "two_sided_z", "wilson"]
